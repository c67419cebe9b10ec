r"""Coreference metrics (MUC, B³, CEAF-m, CEAF-e, BLANC, LEA, CoNLL), equal to the CoNLL-2012 reference scorer v8.01.

A document's coreference annotation is a partition of its mentions into entities. Every metric is a function of the
key × response *contingency matrix* of a document,

.. math::

    n_{ij} = |K_i \cap R_j|, \qquad a_i = |K_i|, \qquad b_j = |R_j|,

computed once per document with NumPy (CEAF's optimal alignment exactly: see
:func:`~metametric_jax.tasks.coref_counts.best_alignment`). Mentions are compared by exact span, as in the reference
scorer (Pradhan et al., "Scoring Coreference Partitions of Predicted Mentions: A Reference Implementation", ACL 2014),
twinless mentions included:

* MUC (Vilain et al., 1995): :math:`R = \sum_{ij} (n_{ij} - 1)^+ / \sum_i (a_i - 1)`, precision over
  :math:`\sum_j (b_j - 1)`.
* B³ (Bagga and Baldwin, 1998): :math:`R = \sum_{ij} n_{ij}^2 / a_i \,/\, \sum_i a_i`,
  :math:`P = \sum_{ij} n_{ij}^2 / b_j \,/\, \sum_j b_j`.
* CEAF (Luo, 2005): the one-to-one alignment maximizing :math:`\sum \phi(K_i, R_{g(i)})`, with
  :math:`\phi_3 = n_{ij}` (CEAF-m, over :math:`\sum a_i`, :math:`\sum b_j`) or :math:`\phi_4 = 2 n_{ij} / (a_i + b_j)`
  (CEAF-e, over the numbers of key and response entities).
* BLANC (Recasens and Hovy, 2011; Luo et al., 2014): coreference links :math:`C` and non-coreference links
  :math:`N` of each side, :math:`|C_k \cap C_r| = \sum_{ij} \binom{n_{ij}}{2}`; the mean of the two kinds' recall,
  precision and F1, or one kind only when the key of the corpus has no link of the other kind (0 with neither).
* LEA (Moosavi and Strube, ACL 2016), not part of scorer v8.01:
  :math:`R = \sum_i a_i \sum_j \mathrm{link}(n_{ij}) / \mathrm{link}(a_i) \,/\, \sum_i a_i` with
  :math:`\mathrm{link}(n) = n (n - 1) / 2`; a singleton key entity is resolved when its mention is a singleton
  response entity; precision swaps key and response.
* CoNLL = (F1(MUC) + F1(B³) + F1(CEAF-e)) / 3 (Pradhan et al., 2012), the headline: ``score(...)["conll"]["f1"]``.

Corpus figures are micro averages, like the scorer's: numerators and denominators are summed over documents.

:data:`CorefMetric` accumulates those sums. :func:`state_report` reads a state in float64 through
:func:`~metametric_jax.tasks.coref_counts.readout`, the one read-out that :func:`score` and the command line use;
``compute()`` is its jittable float32 twin for training loops. The state keeps each sum as a compensated float32 pair
(about 48 bits): the integer counts (MUC, CEAF-m, BLANC, mentions) give :func:`score`'s figures bit for bit, the
fractional numerators of B³, CEAF-e and LEA (so CoNLL) agree to about 1e-14, not to the last bit.

Repeated mentions (``repeated_mentions="scorer"``, the default) are counted as scorer v8.01 counts them: a span
repeated in the response that is a key mention is kept once, at its first occurrence (entities in order, then mentions
in order), and entities left empty are dropped; a repeated response span that is not a key mention, and a span repeated
in the key, stay in their entities' sizes under one mention, so that figures can even exceed 1 (CEAF precision over a
key with a repeated span). LEA, not in the scorer, and mention identification count each span once.
``repeated_mentions="first"`` keeps every repeated span once, at its first occurrence, on both sides.

Files (:func:`score_files`) are read as the scorer reads them (see :mod:`metametric_jax.tasks.readers.conll2012`),
and a response that gives key mentions again more than 10 times is refused, as the scorer refuses it. Where the scorer
would print a number a careful user would not want, this module says so instead: key and response documents with
different tokens (the scorer shifts every later mention silently) and files cut short are errors; documents whose
begin lines differ only in spelling (``part 0``, ``part 000``; the scorer scores such a key document against an empty
response) are matched, with a warning; so are entity numbers outside any mention (ignored, as by the scorer). Columns
may be separated by spaces (the scorer splits lines on tabs only). ``scorer.pl all`` counts repeated mentions once per
metric, so refuses from three of them on; the limit here is the one a single metric's run applies.

>>> key = [[0, 1, 2], [3, 4, 5, 6]]
>>> response = [[0, 1], [2, 3], [5, 6, 7, 8]]
>>> s = score([response], [key])
>>> round(s["lea"]["recall"] * 21, 9), round(s["lea"]["precision"] * 3, 9), s["muc"]["recall_num"]
(5.0, 1.0, 2.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.inputs import check_lengths
from metametric_jax.normalizer import safe_divide
from metametric_jax.tasks.coref_counts import (
    COUNT_NAMES,
    METRICS,
    Contingency,
    batch_counts,
    batch_document_counts,
    contingency,
    document_counts,
    figures,
    readout,
    sum_counts,
    unpack_totals,
)
from metametric_jax.tasks.coref_documents import CorefDocument, Entity, Mention, check_repeated_mentions
from metametric_jax.tasks.coref_files import count_files, counts_per_document, read_files, score_files

if TYPE_CHECKING:
    from metametric_jax.suite import Suite

    CorefMetric: type[Suite]

__all__ = [
    "Mention",
    "Entity",
    "CorefDocument",
    "Contingency",
    "contingency",
    "document_counts",
    "coref_batch_stats",
    "CorefMetric",
    "state_scores",
    "state_report",
    "figures",
    "score",
    "score_files",
    "counts_per_document",
    "count_files",
    "read_files",
    "METRICS",
    "COUNT_NAMES",
]


# ------------------------------------------------------------------------------------------------------- accumulator
def coref_batch_stats(
    predictions: Sequence[CorefDocument | Iterable[Any]], references: Sequence[CorefDocument | Iterable[Any]]
) -> dict[str, np.ndarray]:
    """Every :data:`CorefMetric` member's ``(n, 3)`` statistics ``(overlap, predicted, reference)`` in one pass.

    Args:
        predictions: the response documents.
        references: the key documents, aligned with ``predictions``.

    Raises:
        ValueError: if the two sequences differ in length.
    """
    check_lengths(predictions, references, "coref", "document")
    rows = batch_counts([CorefDocument.of(d) for d in predictions], [CorefDocument.of(d) for d in references])
    zeros = np.zeros(len(rows))
    stats = {}
    for k, name in enumerate(COUNT_NAMES):
        nr, dr, np_, dp = rows[:, 4 * k : 4 * k + 4].T
        stats[f"{name}_recall"] = np.stack([nr, zeros, dr], axis=1)
        stats[f"{name}_precision"] = np.stack([np_, dp, zeros], axis=1)
    return stats


_SUITE_DOC = r"""The coreference metrics of the CoNLL-2012 reference scorer v8.01 as one JAX accumulator.

MUC, B³, CEAF-m, CEAF-e and BLANC as scorer v8.01 computes them (Pradhan et al., ACL 2014), LEA (Moosavi and Strube,
ACL 2016), mention identification and the CoNLL average :math:`(F_1^{MUC} + F_1^{B^3} + F_1^{CEAF_e}) / 3`, as micro
averages over documents: each figure is :math:`R = \sum_d \mathrm{num}^R_d / \sum_d \mathrm{den}^R_d` and
:math:`P = \sum_d \mathrm{num}^P_d / \sum_d \mathrm{den}^P_d` (see :mod:`metametric_jax.tasks.coref`).

Attributes:
    states: one member per statistic and side, ``{name}_recall`` (overlap = recall numerator, reference total =
        recall denominator) and ``{name}_precision`` (overlap = precision numerator, predicted total = its
        denominator), for ``name`` in ``muc, bcub, ceafm, ceafe, lea, mentions, blanc_coref, blanc_noncoref``.

``compute()`` returns each member's figures and the derived ``{metric: {recall, precision, f1}}`` and
``conll: {f1}`` (float32, on the device), the jittable twin of :func:`~metametric_jax.tasks.coref.state_report`, which
reads the state's totals in float64 through the read-out of ``score`` (:func:`~metametric_jax.tasks.coref.state_scores`
adds the numerators and denominators).

>>> from metametric_jax.tasks.coref import CorefMetric, state_scores
>>> state = CorefMetric.from_model_output([[[0, 1], [2, 3]]], [[[0, 1, 2]]])  # predictions, then references
>>> state = state.merge(CorefMetric.from_model_output([[[5, 6]]], [[[5, 6]]]))
>>> round(state_scores(state)["muc"]["recall"], 6), round(float(state.compute()["conll"]["f1"]), 4)
(0.666667, 0.7094)
"""


def _member_prf(name: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def derive(results: Mapping[str, Any]) -> dict[str, Any]:
        r, p = results[f"{name}_recall"]["recall"], results[f"{name}_precision"]["precision"]
        return {"recall": r, "precision": p, "f1": safe_divide(2 * r * p, r + p, 0.0)}

    return derive


def _derived_blanc(results: Mapping[str, Any]) -> dict[str, Any]:
    import jax.numpy as jnp

    c, n = _member_prf("blanc_coref")(results), _member_prf("blanc_noncoref")(results)
    has_c = results["blanc_coref_recall"]["reference_total"] > 0
    has_n = results["blanc_noncoref_recall"]["reference_total"] > 0

    def pick(k: str) -> Any:
        return jnp.where(has_c & has_n, (c[k] + n[k]) / 2, jnp.where(has_c, c[k], jnp.where(has_n, n[k], 0.0)))

    return {k: pick(k) for k in ("recall", "precision", "f1")}


def _reference_total(xy: Any, xx: Any, yy: Any, zero_division: float) -> Any:
    return yy


@class_factory
def _build_metric() -> type[Suite]:
    from metametric_jax.build import stats_metric
    from metametric_jax.normalizer import Normalizer
    from metametric_jax.suite import make_suite

    total = Normalizer("reference_total", _reference_total)
    members = {}
    for name in COUNT_NAMES:
        for side in ("recall", "precision"):
            members[f"{name}_{side}"] = stats_metric(
                normalizer=side,
                name=f"{name}_{side}",
                zero_division=0.0,
                empty_score=0.0,
                report=[total] if side == "recall" else [],
                doc=f"{side.capitalize()} statistics of {name} per document (see CorefMetric).",
            )
    derived: dict[str, Callable[[Mapping[str, Any]], Any]] = {m: _member_prf(m) for m in METRICS if m != "blanc"}
    derived["blanc"] = _derived_blanc
    derived["conll"] = lambda r: {"f1": safe_divide(r["muc"]["f1"] + r["bcub"]["f1"] + r["ceafe"]["f1"], 3.0)}
    return make_suite("coref", members, derived, batch_stats=coref_batch_stats, doc=_SUITE_DOC)


def __getattr__(name: str) -> Any:
    # CorefMetric is built on first use, so that reading and scoring files does not load JAX.
    if name == "CorefMetric":
        return _build_metric()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _state_totals(state: Suite, what: str) -> np.ndarray:
    """A (reduced) :data:`CorefMetric` state's totals in float64, laid out as ``coref_counts.count_rows``."""
    if not isinstance(state, _build_metric()):
        raise TypeError(f"{what} expects a CorefMetric state; found {type(state).__name__}.")
    values = []
    for name in COUNT_NAMES:
        r, p = state.states[f"{name}_recall"].totals(), state.states[f"{name}_precision"].totals()
        values += [r["xy"], r["yy"], p["xy"], p["xx"]]
    return np.array(values, np.float64)


def state_report(state: Suite) -> dict[str, dict[str, Any]]:
    """The figures of a (reduced) :data:`CorefMetric` state in float64: the read-out of :func:`score`.

    :func:`~metametric_jax.tasks.coref_counts.readout` of the state's totals, so the keys and formulas are those of
    ``score coref`` (recall, precision, F1 of each metric, BLANC's link kinds, CoNLL). ``compute()`` is the jittable
    float32 twin. Integer totals (MUC, CEAF-m, BLANC, mentions) are exact, so their figures equal :func:`score`'s bit
    for bit; B³, CEAF-e and LEA sum fractions, which the state keeps to about 48 bits (compensated float32 pairs), so
    theirs and CoNLL agree to about 1e-14.

    Raises:
        TypeError: if ``state`` is not a :data:`CorefMetric` state.
    """
    return readout(_state_totals(state, "state_report"))


def state_scores(state: Suite) -> dict[str, dict[str, Any]]:
    """:func:`state_report` with each metric's numerators and denominators (:func:`figures` of the state's totals)."""
    return figures(unpack_totals(_state_totals(state, "state_scores")))


# --------------------------------------------------------------------------------------------------------------- score
def _prepare(docs: Sequence[CorefDocument | Iterable[Any]], repeated_mentions: str) -> list[CorefDocument]:
    check_repeated_mentions(repeated_mentions)
    out = [CorefDocument.of(d) for d in docs]
    return [d.first_occurrences() for d in out] if repeated_mentions == "first" else out


def score(
    predictions: Sequence[CorefDocument | Iterable[Any]],
    references: Sequence[CorefDocument | Iterable[Any]],
    *,
    repeated_mentions: str = "scorer",
) -> dict[str, dict[str, Any]]:
    """Corpus (micro) coreference figures of response documents against key documents, in float64 on the host.

    Args:
        predictions: the response documents: :class:`CorefDocument` objects or lists of clusters of mentions.
        references: the key documents, ``references[i]`` scoring ``predictions[i]``.
        repeated_mentions: ``"scorer"`` (count repeated spans as scorer v8.01 does) or ``"first"`` (keep each once).

    Returns:
        :func:`figures`: ``{"muc", "bcub", "ceafm", "ceafe", "lea", "mentions": {"recall", "precision", "f1",
        "recall_num", "recall_den", "precision_num", "precision_den"}, "blanc": {...}, "conll": {"f1"}}``; the
        headline is ``["conll"]["f1"]``.

    Raises:
        ValueError: if the two sequences differ in length.

    The scorer's refusal of a response with more than 10 repeated key mentions applies to files (:func:`score_files`).
    """
    check_lengths(predictions, references, "coref", "document")
    keys, responses = _prepare(references, repeated_mentions), _prepare(predictions, repeated_mentions)
    return figures(sum_counts(batch_document_counts(responses, keys)))
