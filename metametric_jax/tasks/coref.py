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

import dataclasses
import functools
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.errors import InputFormatError
from metametric_jax.inputs import check_lengths
from metametric_jax.normalizer import safe_divide
from metametric_jax.report import Report
from metametric_jax.tasks.coref_counts import (
    COUNT_NAMES,
    METRICS,
    Contingency,
    contingency,
    document_counts,
    figures,
    readout,
    sum_counts,
    unpack_totals,
)

if TYPE_CHECKING:
    from metametric_jax.suite import Suite
    from metametric_jax.tasks.readers.conll2012 import ConllDocument, DocumentId

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

_REPEATED = ("scorer", "first")


# ---------------------------------------------------------------------------------------------------------- structures
@dataclasses.dataclass(frozen=True, order=True)
class Mention:
    """A mention: the token span ``start..end`` (both inclusive, 0-based) within its document.

    Attributes:
        start: index of the first token.
        end: index of the last token (``end >= start``).
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        for field in ("start", "end"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"Mention.{field} must be an int token index; found {type(v).__name__} {v!r}.")
        if self.start < 0 or self.end < self.start:
            raise ValueError(
                f"A mention is a span start..end with 0 <= start <= end; found ({self.start}, {self.end})."
            )

    @classmethod
    def of(cls, value: Mention | int | tuple[int, int] | Sequence[int]) -> Mention:
        """A mention from a ``Mention``, a token index ``i`` (the span ``(i, i)``) or a ``(start, end)`` pair."""
        if isinstance(value, Mention):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return cls(int(value), int(value))
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return cls(int(value[0]), int(value[1]))
        raise TypeError(
            f"Expected a mention: a Mention, a token index (int) or a (start, end) pair; found {type(value).__name__} "
            f"{value!r}."
        )


@dataclasses.dataclass(frozen=True)
class Entity:
    """An entity (a coreference cluster): its mentions, in document order.

    Attributes:
        mentions: one or more mentions.
    """

    mentions: tuple[Mention, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.mentions, tuple):
            object.__setattr__(self, "mentions", tuple(self.mentions))
        if not self.mentions:
            raise ValueError("An entity needs at least one mention; found an empty entity.")
        for m in self.mentions:
            if not isinstance(m, Mention):
                raise TypeError(f"Entity.mentions must be Mention objects; found {type(m).__name__} {m!r}.")

    @classmethod
    def of(cls, mentions: Entity | Iterable[Mention | int | tuple[int, int]]) -> Entity:
        """An entity from mentions given as ``Mention`` objects, token indices or ``(start, end)`` pairs."""
        return mentions if isinstance(mentions, Entity) else cls(tuple(Mention.of(m) for m in mentions))

    def __len__(self) -> int:
        return len(self.mentions)


@dataclasses.dataclass(frozen=True)
class CorefDocument:
    """A document's coreference partition: its entities (name and part identify it; they are not scored).

    Attributes:
        entities: the entities, each a non-empty tuple of mentions.
        name: the document's name (CoNLL-2012 ``#begin document (name); part NNN``).
        part: the document's part number, or ``None``.
    """

    entities: tuple[Entity, ...]
    name: str = ""
    part: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.entities, tuple):
            object.__setattr__(self, "entities", tuple(self.entities))
        for e in self.entities:
            if not isinstance(e, Entity):
                raise TypeError(
                    f"CorefDocument.entities must be Entity objects; found {type(e).__name__} {e!r} "
                    "(use CorefDocument.from_clusters for lists of mentions)."
                )

    @classmethod
    def from_clusters(
        cls, clusters: Iterable[Iterable[Mention | int | tuple[int, int]]], name: str = "", part: int | None = None
    ) -> CorefDocument:
        """A document from clusters of mentions (``Mention`` objects, token indices or ``(start, end)`` pairs).

        >>> doc = CorefDocument.from_clusters([[(0, 1), (5, 5)], [3]])
        >>> [len(e) for e in doc.entities], doc.entities[1].mentions[0]
        ([2, 1], Mention(start=3, end=3))
        """
        return cls(tuple(Entity.of(c) for c in clusters), name=name, part=part)

    @classmethod
    def of(cls, value: CorefDocument | Iterable[Iterable[Any]]) -> CorefDocument:
        """A ``CorefDocument`` passed through, or one built by :meth:`from_clusters`."""
        if isinstance(value, CorefDocument):
            return value
        try:
            return cls.from_clusters(value)
        except TypeError as err:
            raise TypeError(
                f"Expected a CorefDocument or a list of clusters (lists of mentions); found {type(value).__name__} "
                f"({err})."
            ) from None

    @property
    def key(self) -> tuple[str, int | None]:
        """The identifier ``(name, part)``."""
        return (self.name, self.part)

    def mentions(self) -> list[Mention]:
        """All mentions, entity by entity (repeated spans included)."""
        return [m for e in self.entities for m in e.mentions]

    def clusters(self) -> list[list[tuple[int, int]]]:
        """The entities as lists of ``(start, end)`` pairs."""
        return [[(m.start, m.end) for m in e.mentions] for e in self.entities]

    def repeated_mentions(self) -> list[Mention]:
        """Spans that occur more than once (each listed once per extra occurrence)."""
        seen: set[Mention] = set()
        out = []
        for m in self.mentions():
            if m in seen:
                out.append(m)
            seen.add(m)
        return out

    def first_occurrences(self) -> CorefDocument:
        """The document with every repeated span kept once, at its first occurrence; entities left empty dropped."""
        seen: set[Mention] = set()
        entities = []
        for e in self.entities:
            kept = [m for m in e.mentions if not (m in seen or seen.add(m))]  # type: ignore[func-returns-value]
            if kept:
                entities.append(Entity(tuple(kept)))
        return CorefDocument(tuple(entities), name=self.name, part=self.part)


# ------------------------------------------------------------------------------------------------------- accumulator
def coref_batch_stats(
    predictions: Sequence[CorefDocument | Iterable[Any]], references: Sequence[CorefDocument | Iterable[Any]]
) -> dict[str, np.ndarray]:
    """Every :data:`CorefMetric` member's ``(n, 3)`` statistics ``(overlap, predicted, reference)`` in one pass.

    Args:
        predictions: the response documents.
        references: the key documents, aligned with ``predictions``.
    """
    stats = {
        f"{name}_{side}": np.zeros((len(references), 3)) for name in COUNT_NAMES for side in ("recall", "precision")
    }
    for i, (resp, key) in enumerate(zip(predictions, references)):
        for name, (nr, dr, np_, dp) in document_counts(CorefDocument.of(resp), CorefDocument.of(key)).items():
            stats[f"{name}_recall"][i] = (nr, 0.0, dr)
            stats[f"{name}_precision"][i] = (np_, dp, 0.0)
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
    derived["conll"] = lambda r: {"f1": (r["muc"]["f1"] + r["bcub"]["f1"] + r["ceafe"]["f1"]) / 3}
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
    if repeated_mentions not in _REPEATED:
        raise ValueError(f"repeated_mentions must be one of {list(_REPEATED)}; found {repeated_mentions!r}.")
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
    return figures(sum_counts([document_counts(r, k) for r, k in zip(responses, keys)]))


def _repeat_warnings(doc: CorefDocument, doc_id: str, side: str, key_spans: set[Mention], first: bool) -> list[str]:
    repeats = Counter(doc.repeated_mentions())
    if not repeats:
        return []
    spans = ", ".join(f"({m.start}, {m.end}) x{n + 1}" for m, n in list(repeats.items())[:5])
    more = f" and {len(repeats) - 5} more" if len(repeats) > 5 else ""
    if first:
        how = "each kept once, at its first occurrence"
    elif side == "key":
        how = (
            "each counted in its entities' sizes under one mention, as the reference scorer does (figures may exceed 1)"
        )
    elif all(m in key_spans for m in repeats):
        how = "each kept once, at its first occurrence, as the reference scorer does"
    else:
        how = "key mentions kept once; the others counted in their entities' sizes, as the reference scorer does"
    return [f"{side} document {doc_id}: repeated spans {spans}{more}; {how}"]


def read_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    key_documents: Mapping[DocumentId, ConllDocument] | None = None,
) -> tuple[list[CorefDocument], list[CorefDocument], list[str], list[str]]:
    """The response and key documents of two CoNLL-2012 files, paired as :func:`score_files` pairs them.

    Args:
        predictions: the response (system) file.
        references: the key (gold) file.
        repeated_mentions: ``"scorer"`` or ``"first"`` (then each repeated span is already kept once).
        max_repeated_mentions: see :func:`score_files`.
        check_words: see :func:`score_files`.
        key_documents: the key file as ``read_conll2012(references)`` reads it, where the caller has read it already
            (``analyze coref`` pairs several responses with one key).

    Returns:
        ``(responses, keys, ids, warnings)``: one response (empty when the file lacks it) per key document, in key
        order, the documents' ids as the key file writes them, and warnings.

    Raises:
        InputFormatError: on a malformed file, documents that do not hold the same tokens, or too many repeated
            mentions in the response.
    """
    from metametric_jax.tasks.readers.conll2012 import pair_documents, read_conll2012

    if repeated_mentions not in _REPEATED:
        raise ValueError(f"repeated_mentions must be one of {list(_REPEATED)}; found {repeated_mentions!r}.")
    key_path, resp_path = str(references), str(predictions)
    pairs, warnings = pair_documents(
        predictions=read_conll2012(resp_path),
        references=read_conll2012(key_path) if key_documents is None else key_documents,
        prediction_path=resp_path,
        reference_path=key_path,
        check_words=check_words,
    )
    responses, keys, ids, repeats, given_again = _documents_of(pairs, repeated_mentions == "first")
    _check_repeats(given_again, max_repeated_mentions, resp_path)
    warnings += repeats
    if not pairs:
        warnings.append(f"{key_path} holds no documents; every figure is 0")
    return responses, keys, ids, warnings


def _documents_of(
    pairs: Sequence[tuple[Any, Any]], first: bool
) -> tuple[list[CorefDocument], list[CorefDocument], list[str], list[str], int]:
    """Paired file documents as ``(responses, keys, ids, warnings on repeated spans, key mentions given again)``."""
    from metametric_jax.tasks.readers.conll2012 import format_id

    responses, keys, ids, warnings, given_again = [], [], [], [], 0
    for r, k in pairs:
        key = CorefDocument.from_clusters(k.entities, name=k.doc_id[0], part=k.doc_id[1])
        response = CorefDocument.from_clusters(r.entities if r is not None else (), name=key.name, part=key.part)
        key_spans = set(key.mentions())
        given_again += sum(1 for m in response.repeated_mentions() if m in key_spans)
        doc_id = format_id(k.doc_id)
        warnings += _repeat_warnings(key, doc_id, "key", key_spans, first)
        warnings += _repeat_warnings(response, doc_id, "response", key_spans, first)
        if first:
            key, response = key.first_occurrences(), response.first_occurrences()
        responses.append(response)
        keys.append(key)
        ids.append(k.spec.strip())
    return responses, keys, ids, warnings, given_again


def _check_repeats(given_again: int, limit: int | None, resp_path: str) -> None:
    if limit is not None and given_again > limit:
        raise InputFormatError(
            resp_path,
            None,
            f"found too many repeated mentions ({given_again} > {limit}) in the response, so refusing to score, as "
            "the reference scorer does; expected each key mention once per document (please fix the output, or pass "
            "max_repeated_mentions=None)",
        )


def _chunk_of_files(
    options: dict[str, Any], key_part: list[tuple[str, int, int, int]], response_part: list[tuple[str, int, int, int]]
) -> dict[str, Any]:
    """Read, pair and count a chunk of whole documents of both files (``[(path, first line, start, end)]`` each)."""
    from metametric_jax.tasks.readers.conll2012 import pair_documents, read_conll2012_part

    (key,), (response,) = key_part, response_part
    key_docs, resp_docs = read_conll2012_part(*key), read_conll2012_part(*response)
    pairs, warnings = pair_documents(
        predictions=resp_docs,
        references=key_docs,
        prediction_path=response[0],
        reference_path=key[0],
        check_words=options["check_words"],
        bare_numbers=False,
    )
    responses, keys, ids, repeats, given_again = _documents_of(pairs, options["repeated_mentions"] == "first")
    return {
        "ids": ids,
        "counts": _counts_of(responses, keys),
        "pair_warnings": warnings,
        "repeat_warnings": repeats,
        "given_again": given_again,
        "key_bare": [ln for doc in key_docs.values() for ln in doc.bare_numbers],
        "response_bare": [ln for d in key_docs if d in resp_docs for ln in resp_docs[d].bare_numbers],
    }


def count_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[str], list[Any], list[str]]:
    """The key documents' ids, their :func:`document_counts` and the warnings, as :func:`score_files` reads them.

    With ``jobs`` other than 1 (0: every core), when both files hold the same documents in the same order, worker
    processes read, pair and count chunks of whole documents; the ids, counts and warnings are those of one process
    (which reads the files when they do not pair up so simply, or when a chunk raises an error, for its message).
    """
    options = {"repeated_mentions": repeated_mentions, "check_words": check_words}
    got = None if jobs == 1 else _count_in_chunks(str(references), str(predictions), options, jobs, progress)
    if got is None:
        responses, keys, ids, warnings = read_files(
            predictions=predictions,
            references=references,
            repeated_mentions=repeated_mentions,
            max_repeated_mentions=max_repeated_mentions,
            check_words=check_words,
        )
        return ids, counts_per_document(responses, keys, jobs=jobs, progress=progress), warnings
    _check_repeats(sum(c["given_again"] for c in got), max_repeated_mentions, str(predictions))
    from metametric_jax.tasks.readers.conll2012 import bare_number_warnings

    ids = [i for c in got for i in c["ids"]]
    warnings = [w for c in got for w in c["pair_warnings"]]
    warnings += bare_number_warnings(
        [
            (str(references), [ln for c in got for ln in c["key_bare"]]),
            (str(predictions), [ln for c in got for ln in c["response_bare"]]),
        ]
    )
    warnings += [w for c in got for w in c["repeat_warnings"]]
    return ids, [x for c in got for x in c["counts"]], warnings


def _count_in_chunks(
    key_path: str,
    resp_path: str,
    options: dict[str, Any],
    jobs: int,
    progress: Callable[[int, int], None] | None,
) -> list[dict[str, Any]] | None:
    """Chunks of whole documents counted by workers, or ``None`` where the files do not pair up document by document."""
    from metametric_jax import parallel
    from metametric_jax.errors import InputFormatError
    from metametric_jax.tasks.readers.conll2012 import document_offsets

    try:
        key_found, resp_found = (document_offsets(path) for path in (key_path, resp_path))
    except (OSError, InputFormatError):
        return None  # one process reads them, for its message
    if key_found is None or resp_found is None:
        return None
    n = len(key_found[2])
    if n < 2 or key_found[2] != resp_found[2] or len(set(key_found[2])) != n:
        return None
    size = max(1, -(-n // (parallel.CHUNKS_PER_WORKER * parallel.resolve_jobs(jobs))))
    cuts = list(range(0, n, size))
    ends = [*cuts[1:], n]
    chunks = [
        [(path, lines[c], offsets[c], offsets[e]) for c, e in zip(cuts, ends)]
        for path, (offsets, lines, _) in ((key_path, key_found), (resp_path, resp_found))
    ]
    done = [0]

    def report(finished: int, total: int) -> None:
        done[0] += 1
        if progress is not None:
            progress(min(n, done[0] * size), n)

    try:
        return parallel.map_chunks(
            functools.partial(_chunk_of_files, options),
            chunks[0],
            chunks[1],
            jobs=jobs,
            chunk_size=1,
            progress=report,
            preload=[__name__],
        )
    except InputFormatError:
        return None  # one process reads the files again and raises the error as it reads it


def _counts_of(responses: Sequence[CorefDocument], keys: Sequence[CorefDocument]) -> list[Any]:
    return [document_counts(r, k) for r, k in zip(responses, keys)]


def counts_per_document(
    responses: Sequence[CorefDocument],
    keys: Sequence[CorefDocument],
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """:func:`document_counts` of each (response, key) document pair, in order, in ``jobs`` worker processes.

    ``jobs`` 0 means every core, 1 (the default) this process (see :mod:`metametric_jax.parallel`); the counts are the
    same for every number. ``progress(done, total)`` is called as documents are counted.
    """
    from metametric_jax import parallel

    chunk = 1 if jobs == 1 and progress is not None else None  # in this process: progress after every document
    return parallel.map_items(
        _counts_of, list(responses), list(keys), jobs=jobs, chunk_size=chunk, progress=progress, preload=[__name__]
    )


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
) -> Report:
    """Score a CoNLL-2012 response file against a key file, as the reference scorer v8.01 does.

    Documents are matched by name and part number (see
    :func:`metametric_jax.tasks.readers.conll2012.pair_documents`); a key document the response lacks is scored
    against an empty response, a response document without a key is ignored.

    Args:
        predictions: the response (system) file.
        references: the key (gold) file.
        repeated_mentions: ``"scorer"`` or ``"first"`` (see :func:`score`).
        max_repeated_mentions: refuse a response that gives key mentions again more than this many times in all (the
            scorer's rule, 10); ``None`` for no limit.
        check_words: refuse documents with as many tokens but other words (where both files have a word column)
            instead of warning.
        progress: called with ``(documents done, documents)`` as scoring goes.
        jobs: worker processes that count the documents (0: every core; default 1: this process); the report is the
            same for every number.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score` returns them, ``items`` one per key
        document (``{"id": "(name); part 000", metric: figures, ...}``), and warnings.

    Raises:
        InputFormatError: on a malformed file, documents that do not hold the same tokens, or too many repeated
            mentions in the response.
    """
    ids, per_document, warnings = count_files(
        predictions=predictions,
        references=references,
        repeated_mentions=repeated_mentions,
        max_repeated_mentions=max_repeated_mentions,
        check_words=check_words,
        jobs=jobs,
        progress=progress,
    )
    items = [{"id": doc_id, **figures(counts)} for doc_id, counts in zip(ids, per_document)]
    return Report(figures(sum_counts(per_document)), items, warnings)
