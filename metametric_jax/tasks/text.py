r"""Text overlap metrics: ROUGE (equal to Google's rouge-score 0.1.2) and the multiset F-score, as JAX accumulators.

ROUGE (Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", Text Summarization Branches Out, ACL 2004)
compares a predicted summary :math:`P` with a reference :math:`R` through an overlap :math:`h` and the sizes
:math:`|P|, |R|` of one ROUGE type:

* ``rougeN``: :math:`h = \sum_g \min(c_P(g), c_R(g))` over the n-grams :math:`g` (any :math:`N \ge 1`);
* ``rougeL``: :math:`h = \mathrm{LCS}(P, R)`, the longest common subsequence of the tokens;
* ``rougeLsum``: the summary-level union LCS over newline-separated sentences (Lin 2004 §3.2);

.. math::

    \mathrm{P} = \frac{h}{|P|}, \qquad \mathrm{R} = \frac{h}{|R|}, \qquad F_1 = \frac{2\,\mathrm{P}\,\mathrm{R}}
    {\mathrm{P} + \mathrm{R}}.

In the unified view of Chen et al. (EMNLP 2023), :math:`h` of ROUGE-N is a one-to-one matching of n-grams under a
discrete similarity and :math:`h` of ROUGE-L the best monotone alignment of tokens (``dsl.sequence_matching``); the
statistics here are computed by a Counter intersection and a bit-parallel LCS, tested equal to those similarities.

Strings are tokenized as rouge-score does (lower-cased, runs of ``[a-z0-9]`` kept, everything else a separator;
``use_stemmer=True`` Porter-stems tokens longer than 3 characters); token lists are taken as given. See
:mod:`metametric_jax.tasks.rouge` for the details of each figure, which are re-exported here.

The task's surface:

* :func:`score` ``(predictions, references, types=..., use_stemmer=..., multi_reference=...)`` — the means over
  examples of precision, recall and F1 per type, ``{"rouge1": {"precision", "recall", "f1"}, ...}``, the figures
  rouge-score users report (the headline keys are ``["rouge1"]["f1"]``, ``["rouge2"]["f1"]``, ``["rougeL"]["f1"]``);
* :func:`score_files` ``(*, predictions=..., references=..., ...)`` — the same from ``.txt`` / ``.jsonl`` files, as a
  :class:`~metametric_jax.report.Report` with per-example figures;
* :func:`RougeMetric` ``(types, use_stemmer=..., multi_reference=...)`` — the accumulator (a suite with one member
  per type) for evaluation loops; ``compute()[type]["macro_f1"]`` equals ``score(...)[type]["f1"]``;
* :data:`Rouge1`, :data:`Rouge2`, :data:`RougeL`, :data:`RougeLsum`, :func:`rouge_metric`, :func:`rouge_n` — one
  accumulator per type; :data:`MultisetF1` — the multiset F-score of token bags.

A metric state keeps per type the micro totals :math:`\sum h, \sum |P|, \sum |R|` (``precision``, ``recall``, ``f1``
of ``compute()`` are micro: corpus totals) and the sums of per-example figures (``macro_precision``, ``macro_recall``,
``macro_f1``: the means over examples that rouge-score reports). :func:`state_report` reads a state in float64
through the read-out of :func:`score` (to about 1e-14: the state keeps its sums as compensated float32 pairs), and
``compute()`` is its jittable float32 twin for training loops.

>>> s = score(["The cat sat on the mat."], ["the cat was on the mat"])
>>> round(s["rouge1"]["f1"], 4), round(s["rouge2"]["f1"], 4)
(0.8333, 0.6)
>>> result = RougeMetric(("rouge1", "rougeL")).from_model_output(["The cat sat."], ["A cat sat."]).compute()
>>> round(float(result["rougeL"]["macro_f1"]), 4)
0.6667
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from metametric_jax._portable import class_factory
from metametric_jax.accumulate import Metric
from metametric_jax.build import make_metric, stats_metric
from metametric_jax.matching import SetMatching
from metametric_jax.similarity import Discrete
from metametric_jax.suite import Suite, make_suite
from metametric_jax.tasks.rouge import (
    DEFAULT_TYPES,
    figures,
    kind_stats,
    lcs_indices,
    lcs_length,
    ngrams,
    parse_types,
    read_texts,
    rouge_stats,
    score,
    score_files,
    sentences,
    state_report,
    summary_lcs_hits,
    tokenize,
)
from metametric_jax.tasks.stem import porter_stem

__all__ = [
    "DEFAULT_TYPES",
    "score",
    "score_files",
    "RougeMetric",
    "rouge_metric",
    "rouge_n",
    "Rouge1",
    "Rouge2",
    "RougeL",
    "RougeLsum",
    "MultisetF1",
    "tokenize",
    "sentences",
    "porter_stem",
    "parse_types",
    "ngrams",
    "lcs_length",
    "lcs_indices",
    "summary_lcs_hits",
    "rouge_stats",
    "figures",
    "read_texts",
    "state_report",
]

_FORMULAS = {
    "n": r"h = \sum_{g \in \text{%d-grams}} \min(c_P(g), c_R(g)), \quad |P|, |R| \text{ the numbers of %d-grams}",
    "rougeL": r"h = \mathrm{LCS}(P, R), \quad |P|, |R| \text{ the numbers of tokens}",
    "rougeLsum": r"h = \sum_i \big|\textstyle\bigcup_j \mathrm{LCS}(r_i, p_j)\big|_{\text{unused tokens}}, \quad "
    r"|P|, |R| \text{ the numbers of tokens}",
}


def _example(kind: str) -> str:
    """A worked example: ``"A b, c."`` against ``"a c"`` (tokens a b c and a c)."""
    if not kind[5:].isdigit():
        return "(2.0, 3.0, 2.0)"  # LCS a c
    n = int(kind[5:])
    return {1: "(2.0, 3.0, 2.0)", 2: "(0.0, 2.0, 1.0)"}.get(n, f"(0.0, {float(max(4 - n, 0))}, 0.0)")


def _doc(kind: str, use_stemmer: bool, multi_reference: bool) -> str:
    formula = _FORMULAS["n"] % (int(kind[5:]), int(kind[5:])) if kind[5:].isdigit() else _FORMULAS[kind]
    reference = '["a c"]' if multi_reference else '"a c"'
    options = []
    if use_stemmer:
        options.append("tokens longer than 3 characters Porter-stemmed")
    if multi_reference:
        options.append("several references per example, the one of highest F1 kept")
    extra = f" ({'; '.join(options)})" if options else ""
    return rf"""{kind} (Lin 2004) as rouge-score 0.1.2 computes it{extra}, as a JAX accumulator.

Per example,

.. math::

    {formula}, \qquad \mathrm{{P}} = \frac{{h}}{{|P|}}, \quad \mathrm{{R}} = \frac{{h}}{{|R|}}, \quad
    F_1 = \frac{{2\,\mathrm{{P}}\,\mathrm{{R}}}}{{\mathrm{{P}} + \mathrm{{R}}}}.

``compute()``: ``macro_precision``, ``macro_recall``, ``macro_f1`` are the means over examples (rouge-score's
figures averaged, as :func:`metametric_jax.tasks.text.score` reports them); ``precision``, ``recall``, ``f1`` are
micro (from the corpus totals of :math:`h, |P|, |R|`).

Attributes:
    micro: ``{{"xy", "xx", "yy"}}``: the totals of :math:`h`, :math:`|P|`, :math:`|R|`.
    macro: the sums of the per-example figures.
    count: the number of examples.

Source: Chin-Yew Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", ACL 2004 workshop.

>>> from metametric_jax.tasks.text import rouge_metric
>>> rouge_metric("{kind}", use_stemmer={use_stemmer}, multi_reference={multi_reference}).stats("A b, c.", {reference})
{_example(kind)}
"""


@class_factory
def _metric(kind: str, use_stemmer: bool, multi_reference: bool) -> type[Metric]:
    # module-level functions of tasks.rouge (NumPy only): worker processes unpickle them without importing JAX
    batch_stats = functools.partial(kind_stats, kind, use_stemmer, multi_reference)

    name = "rouge_" + kind[5:].lower() + ("_stemmed" if use_stemmer else "") + ("_multi" if multi_reference else "")
    return stats_metric(
        batch_stats=batch_stats,
        normalizer="f1",
        name=name,
        empty_score=0.0,
        doc=_doc(kind, use_stemmer, multi_reference),
    )


def rouge_metric(kind: str = "rougeL", *, use_stemmer: bool = False, multi_reference: bool = False) -> type[Metric]:
    """The accumulator class of one ROUGE type (one class per configuration, so its states merge).

    Args:
        kind: ``rougeN`` (any N >= 1), ``rougeL`` or ``rougeLsum``.
        use_stemmer: Porter-stem tokens longer than 3 characters (rouge-score's ``use_stemmer=True``).
        multi_reference: each reference is a list of references; the one of highest F1 counts (``score_multi``).

    >>> state = rouge_metric("rouge2").from_model_output(["the cat sat"], ["the cat ran"])
    >>> float(state.compute()["macro_f1"])
    0.5

    Raises:
        ValueError: on an unknown type.
    """
    (kind,) = parse_types([kind])
    return _metric(kind, bool(use_stemmer), bool(multi_reference))


def rouge_n(n: int, *, use_stemmer: bool = False, multi_reference: bool = False) -> type[Metric]:
    """The ROUGE-N accumulator class, ``rouge_metric(f"rouge{n}", ...)``.

    >>> rouge_n(3) is rouge_metric("rouge3")
    True

    Raises:
        ValueError: unless ``n`` is a positive integer.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"ROUGE-N needs a positive integer n; found {n!r}.")
    return rouge_metric(f"rouge{n}", use_stemmer=use_stemmer, multi_reference=multi_reference)


Rouge1: type[Metric] = rouge_n(1)
Rouge2: type[Metric] = rouge_n(2)
RougeL: type[Metric] = rouge_metric("rougeL")
RougeLsum: type[Metric] = rouge_metric("rougeLsum")


@class_factory
def _suite(kinds: tuple[str, ...], use_stemmer: bool, multi_reference: bool) -> type[Suite]:
    batch_stats = functools.partial(rouge_stats, types=kinds, use_stemmer=use_stemmer, multi_reference=multi_reference)

    members = {k: _metric(k, use_stemmer, multi_reference) for k in kinds}
    doc = (
        f"ROUGE types {', '.join(kinds)} as one accumulator (Lin 2004; rouge-score 0.1.2): one tokenization per "
        f"text{', stemmed' if use_stemmer else ''}{', several references per example' if multi_reference else ''}. "
        "``compute()[type]`` holds each member's figures; ``macro_f1`` is the mean F1 over examples.\n\n"
        "Attributes:\n    states: one ROUGE accumulator per type (see :func:`metametric_jax.tasks.text.rouge_metric`)."
    )
    return make_suite("rouge", members, batch_stats=batch_stats, doc=doc)


def RougeMetric(  # noqa: N802 - the task's accumulator, named as every task's ``<Task>Metric``
    types: str | Iterable[str] = DEFAULT_TYPES, *, use_stemmer: bool = False, multi_reference: bool = False
) -> type[Suite]:
    r"""The ROUGE accumulator: a suite of one member per ROUGE type, fed by one pass over each batch.

    Each member keeps, per type, the totals of :math:`h, |P|, |R|` and the sums of the per-example precision, recall
    and :math:`F_1 = 2PR / (P + R)` (Lin 2004); ``compute()[type]["macro_f1"]`` is the mean F1 over examples that
    :func:`score` returns, ``compute()[type]["f1"]`` the micro F1 of the corpus totals. Classes are cached: the same
    configuration gives the same class, so states of it merge (and restore from checkpoints).

    Args:
        types: ROUGE types, a list or a comma-separated string (default rouge1, rouge2, rougeL, rougeLsum).
        use_stemmer: Porter-stem tokens longer than 3 characters.
        multi_reference: each reference is a list of references; per type the one of highest F1 counts.

    >>> Rouge = RougeMetric("rouge1,rouge2")
    >>> state = Rouge.from_model_output(["a b c", "a"], ["a b", "b"])
    >>> state = state.merge(Rouge.from_model_output(["c d"], ["c d"]))
    >>> round(float(state.compute()["rouge1"]["macro_f1"]), 4)
    0.6
    """
    return _suite(parse_types(types), bool(use_stemmer), bool(multi_reference))


MultisetF1: type[Metric] = make_metric(SetMatching(Discrete(), "<->"), "f1", name="multiset_f1")
MultisetF1.__doc__ = r"""Multiset F-score of token bags, micro-averaged over a corpus by default.

.. math::

    P = \frac{\sum_i |P_i \cap R_i|}{\sum_i |P_i|}, \quad R = \frac{\sum_i |P_i \cap R_i|}{\sum_i |R_i|}, \quad
    F_1 = \frac{2 \sum_i |P_i \cap R_i|}{\sum_i |P_i| + \sum_i |R_i|}

with :math:`\cap` the multiset intersection (a one-to-one matching of equal tokens, Chen et al., EMNLP 2023).
Inputs are collections of hashable tokens (not strings). ``macro_*`` are per-example means.

>>> P, R = "a mouse and a cat chase the mouse".split(), "the mouse and the cat chase a second mouse".split()
>>> MultisetF1.stats(P, R)
(7.0, 8.0, 9.0)
"""
