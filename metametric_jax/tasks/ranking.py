r"""Ranked retrieval scored as trec_eval scores it: every measure of its ``all_trec`` set, under its names.

A query's *prediction* is a ranking: an ordered sequence of document ids, best first, or a mapping ``document -> score``
ranked as trec_eval ranks a run (:func:`rank`: score descending, ties by document id descending). A set is refused
(``TypeError``): its order is arbitrary; so is a ranking that lists a document twice (``ValueError`` naming the query
and the document), as trec_eval and the TREC readers refuse such a run, on every path (:func:`score`, :func:`evaluate`,
:func:`query_figures` and the accumulators). A query's *reference* is its judgements: a mapping ``document -> integer
grade`` (graded relevance) or a collection of the relevant documents. With the relevance level :math:`\ell` (trec_eval's
``-l``, default 1) a document is relevant when its grade is at least :math:`\ell`, judged non-relevant when its grade is
in :math:`[0, \ell)`, unjudged otherwise. With :math:`\mathrm{rel}_i = 1` for a relevant document at rank :math:`i`,
:math:`h_k = \sum_{i \le k} \mathrm{rel}_i`, :math:`R` relevant documents, :math:`n` ranked ones and :math:`g_i` the
grade at rank :math:`i`,

.. math::

    \mathrm{P@}k = \frac{h_k}{k}, \quad \mathrm{recall@}k = \frac{h_k}{R}, \quad
    \mathrm{AP} = \frac{1}{R} \sum_{i} \mathrm{P@}i \cdot \mathrm{rel}_i, \quad
    \mathrm{nDCG@}k = \frac{\sum_{i \le k} g_i / \log_2(i + 1)}{\sum_{i \le k} g^*_i / \log_2(i + 1)},

:math:`g^*` the query's judged grades sorted in decreasing order (trec_eval's gain is the grade itself, whatever the
relevance level); ``map`` is the mean of AP over queries, and every other measure is averaged the same way except the
counts ``num_*`` (summed) and ``gm_map``, ``gm_bpref`` (geometric means). The 98 figures of ``trec_eval -m
all_trec`` are offered (``-m all_trec`` or ``all``), defined in :data:`~metametric_jax.tasks.trec_measures.MEASURES`
under trec_eval's name: ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``map``, ``gm_map``, ``Rprec``,
``bpref``, ``recip_rank``, ``iprec_at_recall_*``, ``P_*``, ``recall_*``, ``infAP``, ``gm_bpref``, ``Rprec_mult_*``,
``utility``, ``11pt_avg``, ``binG``, ``G``, ``ndcg``, ``ndcg_rel``, ``Rndcg``, ``ndcg_cut_*``, ``map_cut_*``,
``relative_P_*``, ``success_*``, ``set_P``, ``set_relative_P``, ``set_recall``, ``set_map``, ``set_F``,
``num_nonrel_judged_ret``, ``rbp``, ``rbp_resid``, ``unj_*``. Each query's figure equals trec_eval 10.0's to the last
bit on its own test files, TREC 2024 RAG judgements and generated runs with tied scores (``tests/data/ranking``).

Which queries count (trec_eval's rules): a query evaluated has judgements. A query with judgements but no relevant
document is kept and counts in every mean (with 0 for every measure that needs a relevant document, which lowers MAP
against leaving it out); a query ranked but never judged is left out; a judged query absent from the predictions is
left out unless ``complete=True`` (trec_eval's ``-c``), where it scores as trec_eval scores it (see
:mod:`~metametric_jax.tasks.trec_measures`). trec_eval 10.0 stops with an error on a judged query absent from the run
without ``-c``; this module keeps trec_eval 9's documented behaviour (left out) and :func:`score_files` warns.

The run's figures are one read-out, :func:`readout`, of the exact sums of the queries' rows (:func:`query_rows`: each
query's figures, trec_eval's rounding of their running sum, a 1), which the command line's bootstrap and paired
tests also call on weighted sums.

Headline: ``score(...)["map"]`` (always reported). Accumulators for JAX loops: :func:`RankingMetric` (every measure
in one pass, a suite whose ``compute()["all"]`` holds trec_eval's figures), :data:`AveragePrecisionMetric` (its
``macro_average_precision`` is MAP), :func:`precision_at_k`, :func:`recall_at_k`. :func:`state_report` reads a
:func:`RankingMetric` state in float64 through :func:`readout`, the read-out of :func:`score`; ``compute()["all"]`` is
its jittable float32 twin for training loops. The state does not carry enough to give :func:`score`'s figures to the
last bit: it keeps each sum of the queries' figures as a compensated float32 pair (about 48 bits; the counts ``num_*``
are exact) and not trec_eval's rounding of the running sum (:func:`query_rows`), so the means agree to about 1e-14,
which can show at trec_eval's 4th decimal only on a tie.

Sources: trec_eval (https://github.com/usnistgov/trec_eval); Buckley and Voorhees, "Retrieval System Evaluation",
in *TREC: Experiment and Evaluation in Information Retrieval*, MIT Press, 2005; Järvelin and Kekäläinen, "Cumulated
gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002 (nDCG).

Example:
    >>> out = score([["d1", "d2", "d3"]], [{"d2": 1, "d3": 2}], measures=["map", "P.2", "ndcg_cut.3", "rbp"])
    >>> out["map"], out["P_2"], round(out["ndcg_cut_3"], 4), round(out["rbp"], 4)
    (0.5833333333333333, 0.5, 0.6199, 0.126)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax import ranking as _similarities
from metametric_jax._portable import class_factory
from metametric_jax.ranking import rank
from metametric_jax.tasks.ranking_files import (  # the file scoring, re-exported (the command imports that module)
    QueryRows,
    _score,
    file_rows,
    read_examples,
    score_files,
)
from metametric_jax.tasks.ranking_queries import (
    check_options,
    check_repeats,
    evaluate,
    measure_kind,
    query_figures,
    query_rows,
    readout,
)
from metametric_jax.tasks.trec_measures import MEASURES, OFFICIAL, Plan, family_of, parse_measures, plan_keys

__all__ = [
    "rank",
    "parse_measures",
    "OFFICIAL",
    "score",
    "score_files",
    "read_examples",
    "file_rows",
    "QueryRows",
    "query_rows",
    "query_figures",
    "readout",
    "evaluate",
    "RankingMetric",
    "AveragePrecisionMetric",  # noqa: F822 - built on first use, see __getattr__
    "precision_at_k",
    "recall_at_k",
    "state_report",
]


def score(
    predictions: Sequence[Any] | Mapping[Any, Any],
    references: Sequence[Any] | Mapping[Any, Any],
    *,
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
) -> dict[str, Any]:
    """trec_eval's figures for the whole run: ``{"map": ..., "P_5": ..., "num_q": ..., ...}``.

    Args:
        predictions: one ranking per query (a sequence of document ids best first, or a mapping ``document ->
            score``); a sequence aligned with ``references``, or a mapping ``query -> ranking``.
        references: one set of judgements per query (a mapping ``document -> grade`` or the relevant documents);
            a sequence, or a mapping ``query -> judgements``.
        measures: trec_eval's measure names (see :func:`parse_measures`); default its ``official`` set. ``map`` (the
            headline) is always reported.
        level: the least grade of a relevant document (trec_eval's ``-l``).
        complete: with mappings, judged queries absent from ``predictions`` score as empty rankings (``-c``).
        max_retrieved: only the first ``max_retrieved`` documents of each ranking count (``-M``).

    Raises:
        TypeError: a ranking is unordered (a set) or not a sequence; judgements are not a collection or mapping.
        ValueError: unknown measures, bad options, or a ranking that lists a document twice (the message names the
            query: its key, or its position in a sequence, and the document).

    >>> score({"q1": ["a", "b"], "q2": ["c"]}, {"q1": {"b"}, "q2": {"x": 0}}, measures="recip_rank")
    {'map': 0.25, 'recip_rank': 0.25}
    """
    return _score(predictions, references, measures, level, complete, max_retrieved).scores


# ---------------------------------------------------------------------------------------------- accumulators
_MAYBE_NAN = ("Rndcg",)  # the families whose query figure can be NaN (trec_eval's)


class _Once:
    """Refuses a ranking that lists an item twice, as :func:`score` does, before the similarity it is mixed into.

    Raises:
        ValueError: a ranking lists an item twice (naming the query's position in a batch).
    """

    def _stats(self, x: Any, y: Any) -> tuple[float, float, float]:
        check_repeats(None, [x])
        return super()._stats(x, y)  # type: ignore[misc, no-any-return]

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        check_repeats(range(len(predictions)), predictions)
        return super().batch_stats(predictions, references)  # type: ignore[misc, no-any-return]


class AtK(_Once, _similarities.AtK):
    """:class:`metametric_jax.ranking.AtK` refusing a repeated item (named as it: the same signature)."""


class AveragePrecision(_Once, _similarities.AveragePrecision):
    """:class:`metametric_jax.ranking.AveragePrecision` refusing a repeated item (named as it: the same signature)."""


def _suite_stats(
    plan: Plan, level: int, max_retrieved: int | None, predictions: Sequence[Any], references: Sequence[Any]
) -> dict[str, np.ndarray]:
    """The members' statistics of queries: the batch function of the ranking suite.

    A module-level function, so that worker processes unpickle it without importing JAX.
    """
    out = {}
    for key, v in evaluate(predictions, references, plan, level=level, max_retrieved=max_retrieved).items():
        undefined = np.isnan(v)
        v = np.where(undefined, 0.0, v)
        out[key] = np.stack([np.maximum(v, 0.0), np.ones_like(v), np.maximum(-v, 0.0)], axis=1)
        if family_of(key) in _MAYBE_NAN:
            out[f"{key}_undefined"] = np.stack([undefined.astype(np.float64), np.ones_like(v), np.ones_like(v)], 1)
    return out


@class_factory
def _ranking_suite(plan: Plan, level: int, max_retrieved: int | None) -> Any:
    from metametric_jax.build import stats_metric
    from metametric_jax.normalizer import Normalizer, safe_divide
    from metametric_jax.suite import make_suite

    def mean(xy: Any, xx: Any, yy: Any, zero_division: float) -> Any:
        return safe_divide(xy - yy, xx, zero_division)

    query_mean = Normalizer("mean", mean)  # of statistics (v+, 1, v-): the mean of the queries' figures v
    keys = plan_keys(plan)
    members = {}
    for key in keys:
        m = MEASURES[family_of(key)]
        members[key] = stats_metric(
            None,
            query_mean,
            name=key,
            empty_score=0.0,
            doc=f"trec_eval's ``{key}``: statistics (max(v, 0), 1, max(-v, 0)) of the query's figure v: "
            f"{m.definition}.",
        )
        if family_of(key) in _MAYBE_NAN:
            members[f"{key}_undefined"] = stats_metric(
                None, "none", name=f"{key}_undefined", doc=f"The queries whose ``{key}`` is NaN (overlap: a count)."
            )

    def all_figures(results: Mapping[str, Any]) -> dict[str, Any]:
        import jax.numpy as jnp

        out = {}
        for key in keys:
            kind, r = measure_kind(key), results[key]
            out[key] = r["overlap"] if kind == "sum" else jnp.exp(r["mean"]) if kind == "geometric" else r["mean"]
            if f"{key}_undefined" in results:  # trec_eval's mean of a NaN
                out[key] = jnp.where(results[f"{key}_undefined"]["overlap"] > 0, jnp.nan, out[key])
        return out

    return make_suite(
        "ranking",
        members,
        {"all": all_figures},
        batch_stats=functools.partial(_suite_stats, plan, level, max_retrieved),
        doc=(
            f"trec_eval's measures {keys} (relevance level {level}) as one accumulator; ``compute()['all']`` holds "
            "the run's figures (means over queries, sums for ``num_*``, geometric means for ``gm_map`` and "
            "``gm_bpref``)."
        ),
    )


def RankingMetric(  # noqa: N802 - a cached factory of accumulator classes, named as one
    measures: Sequence[str] | str | None = None, *, level: int = 1, max_retrieved: int | None = None
) -> Any:
    r"""The accumulator class (a suite) of trec_eval's measures, one member per printed measure name.

    Each member sums each query's figure :math:`v_q` as statistics :math:`(\max(v_q, 0), 1, \max(-v_q, 0))`, so its
    ``mean`` (:math:`(x_y - y_y) / x_x`) is the mean of the queries' figures (MAP for ``map``, the mean P@k for
    ``P_k``) and its ``overlap`` their sum (the counts ``num_*``); for ``gm_map`` and ``gm_bpref`` the figure is the
    logarithm, and the run's figure the ``exp`` of the mean. ``Rndcg`` has a second member counting the queries
    where it is NaN (its figure is then NaN, as trec_eval's). ``compute()["all"]`` gathers trec_eval's figures under
    its names. A batch is a sequence of rankings
    and a sequence of judgements, one per query; a ranking that lists a document twice is refused (``ValueError``
    naming the query's position in the batch), as :func:`score` refuses it. The class is cached per configuration,
    so states of one configuration always merge.

    State: one member state per measure (see :class:`metametric_jax.Metric`: the totals, the per-query sums of each
    normalizer, the query count).

    >>> M = RankingMetric(["map", "P.2"])
    >>> state = M.from_model_output([["a", "b", "c", "d"]], [{"c", "d", "e"}])
    >>> figures = state.compute()["all"]
    >>> round(float(figures["map"]), 4), float(figures["P_2"])
    (0.2778, 0.0)
    """
    check_options(level, max_retrieved)
    return _ranking_suite(parse_measures(measures), level, max_retrieved)


def state_report(state: Any) -> dict[str, Any]:
    """trec_eval's figures of a (reduced) :func:`RankingMetric` state in float64: :func:`readout`, as :func:`score`.

    :func:`readout` (counts included) of the state's totals: each measure's sum of the queries' figures (``xy - yy``
    of its member; NaN where a query's ``Rndcg`` is NaN, as trec_eval's mean) and the number of queries. The keys are
    :func:`score`'s; ``compute()["all"]`` is the jittable float32 twin. Not bit for bit :func:`score`'s: the state
    keeps each sum to about 48 bits and not trec_eval's rounding of it, so the means agree to about 1e-14; the counts
    ``num_*`` are exact.

    Raises:
        TypeError: if ``state`` is not a state of a :func:`RankingMetric` class.
    """
    members = getattr(state, "states", None)
    if not isinstance(members, Mapping) or getattr(getattr(state, "config", None), "name", None) != "ranking":
        raise TypeError(f"state_report expects a RankingMetric state; found {type(state).__name__}.")
    keys = [k for k in members if not k.endswith("_undefined")]
    sums, count = [], 0.0
    for key in keys:
        t = members[key].totals()
        undefined = members.get(f"{key}_undefined")
        sums.append(math.nan if undefined is not None and undefined.totals()["xy"] > 0 else t["xy"] - t["yy"])
        count = t["count"]
    return readout(np.array([*sums, *[0.0] * len(keys), count], np.float64), keys, counts=True)


@class_factory
def precision_at_k(k: int) -> Any:
    r"""The precision@k accumulator class: :math:`h_k / k` per query (trec_eval's ``P_k``); mean: ``macro_precision``.

    A ranking that lists a document twice is refused (``ValueError``), as :func:`score` refuses it.

    >>> P2 = precision_at_k(2)
    >>> float(P2.from_model_output([["a", "c", "b"]], [{"c"}]).compute()["macro_precision"])
    0.5
    """
    from metametric_jax.build import make_metric

    return make_metric(
        AtK(k),
        "precision",
        name=f"precision_at_{k}",
        doc=f"Precision@{k}: statistics (h_{k}, {k}, R); ``macro_precision`` is the mean over queries (``P_{k}``).",
    )


@class_factory
def recall_at_k(k: int) -> Any:
    r"""The recall@k accumulator class: :math:`h_k / R` per query (trec_eval's ``recall_k``); mean: ``macro_recall``.

    A ranking that lists a document twice is refused (``ValueError``), as :func:`score` refuses it.

    >>> float(recall_at_k(2).score(["a", "c", "b"], {"c", "d"}))
    0.5
    """
    from metametric_jax.build import make_metric

    return make_metric(
        AtK(k),
        "recall",
        name=f"recall_at_{k}",
        doc=f"Recall@{k}: statistics (h_{k}, {k}, R); ``macro_recall`` is the mean over queries (``recall_{k}``).",
    )


_AP_DOC = r"""Average precision of a ranking; the mean over queries, ``macro_average_precision``, is MAP (``map``).

.. math::

    \mathrm{AP} = \frac{1}{R} \sum_i \mathrm{P@}i \cdot \mathrm{rel}_i

State: the sums of :math:`(\sum_i \mathrm{P@}i\,\mathrm{rel}_i,\ h_n,\ R)` over queries, the per-query sums of each
normalizer (``macro_``) and the query count. ``average_precision`` normalizes the statistics as AP does
(:math:`x_y / y_y`): per query it is the query's AP, so its mean over queries, ``macro_average_precision``, is MAP;
over the summed statistics it is :math:`\sum_q \sum_i \mathrm{P@}i\,\mathrm{rel}_i / \sum_q R_q`. A query with no
relevant document has AP 0 and counts in the mean, as in trec_eval; a ranking that lists a document twice is refused
(``ValueError``), as :func:`score` refuses it. Buckley and Voorhees (2005); example of metametric's documentation:

>>> from metametric_jax.tasks.ranking import AveragePrecisionMetric
>>> round(AveragePrecisionMetric.score(["a", "b", "c", "d"], {"c", "d", "e"}), 4)  # (1/3 + 2/4) / 3
0.2778
>>> state = AveragePrecisionMetric.from_model_output([["a", "b", "c", "d"], ["e"]], [{"c", "d", "e"}, {"e"}])
>>> round(float(state.compute()["macro_average_precision"]), 4)  # MAP: (0.2778 + 1) / 2
0.6389
"""


@class_factory
def _average_precision_metric() -> Any:
    from metametric_jax.build import make_metric
    from metametric_jax.normalizer import Normalizer, safe_divide

    def average_precision(xy: Any, xx: Any, yy: Any, zero_division: float) -> Any:
        return safe_divide(xy, yy, zero_division)

    return make_metric(
        AveragePrecision(),
        Normalizer("average_precision", average_precision),
        name="average_precision",
        empty_score=0.0,
        doc=_AP_DOC,
    )


__test__ = {"AveragePrecisionMetric": _AP_DOC}  # its example runs with the module's doctests


def __getattr__(name: str) -> Any:
    # The accumulator class is built on first use, so reading files and scoring them does not import JAX.
    if name == "AveragePrecisionMetric":
        return _average_precision_metric()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "AveragePrecisionMetric"])
