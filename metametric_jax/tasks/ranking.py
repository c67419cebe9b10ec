r"""Ranked retrieval scored as trec_eval scores it: MAP, P@k, recall@k, nDCG, bpref, reciprocal rank and more.

A query's *prediction* is a ranking: an ordered sequence of document ids, best first, or a mapping ``document ->
score`` ranked as trec_eval ranks a run (:func:`rank`: score descending, ties by document id descending). A set is
refused (``TypeError``): its order is arbitrary. A query's *reference* is its judgements: a mapping ``document ->
integer grade`` (graded relevance) or a collection of the relevant documents. With the relevance level :math:`\ell`
(trec_eval's ``-l``, default 1) a document is relevant when its grade is at least :math:`\ell`, judged non-relevant
when its grade is in :math:`[0, \ell)`, unjudged otherwise. With :math:`\mathrm{rel}_i = 1` for a relevant document
at rank :math:`i`, :math:`h_k = \sum_{i \le k} \mathrm{rel}_i`, :math:`R` relevant documents, :math:`n` ranked ones
and :math:`g_i` the grade at rank :math:`i`,

.. math::

    \mathrm{P@}k = \frac{h_k}{k}, \quad \mathrm{recall@}k = \frac{h_k}{R}, \quad
    \mathrm{AP} = \frac{1}{R} \sum_{i} \mathrm{P@}i \cdot \mathrm{rel}_i, \quad
    \mathrm{nDCG@}k = \frac{\sum_{i \le k} g_i / \log_2(i + 1)}{\sum_{i \le k} g^*_i / \log_2(i + 1)},

:math:`g^*` the query's judged grades sorted in decreasing order (trec_eval's gain is the grade itself, whatever the
relevance level); ``map`` is the mean of AP over queries, and every other measure is averaged the same way except the
counts ``num_*`` (summed) and ``gm_map`` (a geometric mean). :data:`metametric_jax.ranking.MEASURES` defines each
measure; the names are trec_eval's (``map``, ``P_5``, ``ndcg_cut_10``, ``recip_rank``, ``Rprec``, ``bpref``,
``success_1``, ``iprec_at_recall_0.10``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ...). Equal to
trec_eval 10.0 on its own test files and on graded judgements with tied scores (``tests/data/ranking``).

Which queries count (trec_eval's rules): a query evaluated has judgements. A query with judgements but no relevant
document is kept and counts in every mean (with 0 for every measure that needs a relevant document, which lowers MAP
against leaving it out); a query ranked but never judged is left out; a judged query absent from the predictions is
left out unless ``complete=True`` (trec_eval's ``-c``), where it scores as an empty ranking. trec_eval 10.0 stops
with an error on a judged query absent from the run without ``-c``; this module keeps trec_eval 9's documented
behaviour (left out) and :func:`score_files` warns.

The run's figures are one read-out, :func:`readout`, of the exact sums of the queries' rows (:func:`query_rows`: each
query's figures, trec_eval's rounding of their running sum, a 1), which the command line's bootstrap and paired
tests also call on weighted sums.

Headline: ``score(...)["map"]`` (always reported). Accumulators for JAX loops: :func:`RankingMetric` (every measure
in one pass, a suite), :data:`AveragePrecisionMetric`, :func:`precision_at_k`, :func:`recall_at_k`; their mean over
queries is the ``macro_`` figure (``macro_recall`` of AP is MAP).

Sources: trec_eval (https://github.com/usnistgov/trec_eval); Buckley and Voorhees, "Retrieval System Evaluation",
in *TREC: Experiment and Evaluation in Information Retrieval*, MIT Press, 2005; Järvelin and Kekäläinen, "Cumulated
gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002 (nDCG).

Example:
    >>> out = score([["d1", "d2", "d3"]], [{"d2": 1, "d3": 2}], measures=["map", "P.2", "ndcg_cut.3"])
    >>> out["map"], out["P_2"], round(out["ndcg_cut_3"], 4)
    (0.5833333333333333, 0.5, 0.6199)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from metametric_jax.intervals import exact_totals
from metametric_jax.ranking import (
    MEASURES,
    MIN_GEO_MEAN,
    AtK,
    AveragePrecision,
    judgements,
    measure_key,
    query_statistics,
    rank,
    ranked_list,
)
from metametric_jax.report import Report

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
    "readout",
    "evaluate",
    "query_figures",
    "RankingMetric",
    "AveragePrecisionMetric",  # noqa: F822 - built on first use, see __getattr__
    "precision_at_k",
    "recall_at_k",
]

#: trec_eval's default measures (its ``official`` set, less ``runid``).
OFFICIAL = tuple("num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P".split())

_NICKNAMES = {"official": OFFICIAL, "all": tuple(MEASURES)}
_PER_QUERY_HIDDEN = ("num_q", "gm_map")  # trec_eval prints these for the whole run only
_GEO_SHIFT = -math.log(MIN_GEO_MEAN)

Plan = tuple[tuple[str, Any], ...]


def _param(family: str, text: str, spec: str) -> Any:
    kind = MEASURES[family].params
    try:
        value = int(text) if kind is int else float(text)
    except ValueError:
        value = None
    if kind is int and (value is None or value < 1):
        raise ValueError(f"measure {spec!r}: cut-offs are positive integers; found {text!r}.")
    if kind is float and (value is None or not 0.0 <= value <= 1.0):
        raise ValueError(f"measure {spec!r}: recall levels are numbers in [0, 1]; found {text!r}.")
    return value


def parse_measures(measures: Sequence[str] | str | None = None) -> Plan:
    """The ``(family, parameter)`` pairs of measure names, in trec_eval's order.

    Names as trec_eval's ``-m``: a family (``map``, ``P``: its default cut-offs), a family with parameters
    (``P.5,10``, ``ndcg_cut.10``, ``iprec_at_recall.0.5``), a printed name (``P_5``, ``ndcg_cut_10``) or a nickname
    (``official``: trec_eval's default set; ``all``: every measure offered). ``None`` means ``official``.

    Raises:
        ValueError: for an unknown name or a bad parameter (the message lists the valid names).

    >>> parse_measures(["P.10,5", "map"])
    (('map', None), ('P', 5), ('P', 10))
    >>> parse_measures("ndcg_cut_10")
    (('ndcg_cut', 10),)
    """
    if measures is None:
        measures = ["official"]
    elif isinstance(measures, str):
        measures = [measures]
    chosen: dict[str, set[Any]] = {}
    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names are strings; found {spec!r}.")
        if spec in _NICKNAMES:
            for family in _NICKNAMES[spec]:
                chosen.setdefault(family, set()).update(MEASURES[family].default or (None,))
            continue
        family, _, params = spec.partition(".")
        if family not in MEASURES:  # a printed name such as P_5 or iprec_at_recall_0.10
            head, _, tail = spec.rpartition("_")
            if head in MEASURES and MEASURES[head].params is not None and tail:
                family, params = head, tail
            else:
                valid = ", ".join([*MEASURES, *_NICKNAMES])
                raise ValueError(f"unknown measure {spec!r}; the measures are {valid} (parameters as in P.5,10).")
        m = MEASURES[family]
        if params and m.params is None:
            raise ValueError(f"measure {family!r} takes no parameters; found {spec!r}.")
        values = [_param(family, p, spec) for p in params.split(",")] if params else list(m.default or (None,))
        chosen.setdefault(family, set()).update(values)
    return tuple(
        (f, p) for f in MEASURES if f in chosen for p in sorted(chosen[f], key=lambda v: -1 if v is None else v)
    )


def _with_map(plan: Plan) -> Plan:
    if ("map", None) in plan:
        return plan
    order = list(MEASURES)
    return tuple(sorted((*plan, ("map", None)), key=lambda fp: order.index(fp[0])))  # stable: parameters keep order


def _ranking(prediction: Any, what: str, max_retrieved: int | None) -> list[Any]:
    items = rank(prediction) if isinstance(prediction, Mapping) else ranked_list(prediction, what)
    return items if max_retrieved is None else items[:max_retrieved]


def _check_options(level: int, max_retrieved: int | None) -> None:
    if isinstance(level, bool) or not isinstance(level, int) or level < 0:
        raise ValueError(f"level must be a non-negative integer; found {level!r}.")
    if max_retrieved is not None and (
        isinstance(max_retrieved, bool) or not isinstance(max_retrieved, int) or max_retrieved < 0
    ):
        raise ValueError(f"max_retrieved must be a non-negative integer or None; found {max_retrieved!r}.")


def evaluate(
    predictions: Sequence[Any],
    references: Sequence[Any],
    plan: Plan,
    *,
    level: int = 1,
    max_retrieved: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Per-query statistics of every measure of ``plan``: ``{printed name: (n, 3) float64 array}``.

    Each row is the query's :math:`(x_y, x_x, y_y)` as the accumulators sum them (see
    :func:`metametric_jax.ranking.query_statistics`); :func:`query_figures` turns them into per-query figures.
    ``progress(done, total)`` is called first, every 100 queries and at the end.
    """
    _check_options(level, max_retrieved)
    if len(predictions) != len(references):
        raise ValueError(f"ranking: {len(predictions)} predictions and {len(references)} references.")
    keys = [measure_key(f, p) for f, p in plan]
    out = {k: np.zeros((len(predictions), 3), np.float64) for k in keys}
    if progress is not None:
        progress(0, len(predictions))
    for q, (p, r) in enumerate(zip(predictions, references)):
        stats = query_statistics(
            _ranking(p, f"query {q}: prediction", max_retrieved), judgements(r, f"query {q}: reference"), plan, level
        )
        for k in keys:
            out[k][q] = stats[k]
        if progress is not None and (q + 1) % 100 == 0:
            progress(q + 1, len(predictions))
    if progress is not None:
        progress(len(predictions), len(predictions))
    return out


def _kind(key: str) -> str:
    return MEASURES[key if key in MEASURES else key.rsplit("_", 1)[0]].kind


def query_figures(key: str, stats: np.ndarray) -> np.ndarray:
    """Per-query figures of one measure from its statistics (a 0 denominator gives 0; ``gm_map``: log AP)."""
    kind = _kind(key)
    if kind == "count":
        return stats[:, 0].copy()
    if kind == "geometric":
        return stats[:, 0] - _GEO_SHIFT
    den = stats[:, 1] if kind == "precision" else stats[:, 2]
    return np.divide(stats[:, 0], den, out=np.zeros(len(stats)), where=den != 0)


def query_rows(stats: Mapping[str, np.ndarray]) -> np.ndarray:
    """Additive rows of :func:`evaluate`'s statistics: float64 ``(queries, 2 len(stats) + 1)``, read by :func:`readout`.

    Column ``k`` is the query's figure of the ``k``-th measure of ``stats`` (:func:`query_figures`: its value, its
    count for ``num_*``, log AP for ``gm_map``). Column ``len(stats) + k`` holds trec_eval's rounding: trec_eval
    adds the queries' figures one by one in its order of queries, and its total can differ from the exact sum of the
    column by a few units in the last place, which shows at the 4th decimal where the mean is a tie (0.04875); the
    first row holds that difference (exact, as the two sums are close) and the others 0, so the two columns sum to
    trec_eval's total exactly. The last column is 1 (the query count).
    """
    n = len(next(iter(stats.values()))) if stats else 0
    columns = [query_figures(key, s) for key, s in stats.items()]
    if not n:
        return np.zeros((0, 2 * len(columns) + 1))
    corrections = []
    for column in columns:
        running = 0.0
        for x in column.tolist():  # query by query, as trec_eval adds them
            running += x
        fix = np.zeros(n)
        fix[0] = running - math.fsum(column.tolist())
        corrections.append(fix)
    return np.stack([*columns, *corrections, np.ones(n)], axis=1)


def readout(totals: Any, keys: Sequence[str], counts: bool = False) -> dict[str, Any]:
    """trec_eval's figures of summed :func:`query_rows`: the one read-out of :func:`score` and :func:`score_files`.

    Args:
        totals: float64 ``(2 len(keys) + 1,)``: the sums of the queries' figures, of trec_eval's rounding of them,
            and the number of queries; or any non-negative real weights of them (a bootstrap replicate).
        keys: the printed names of the measures of the columns.
        counts: also give the ``num_*`` counts (sums, as integers); left out by default (they get no interval).

    Returns:
        ``{measure: value}`` in the order of ``keys``: the mean over queries, ``exp`` of the mean log AP for
        ``gm_map``; 0.0 without queries.
    """
    values = np.asarray(totals, np.float64).tolist()
    n = values[-1]
    out: dict[str, Any] = {}
    for k, key in enumerate(keys):
        total = values[k] + values[len(keys) + k]
        kind = _kind(key)
        if kind == "count":
            if counts:
                out[key] = int(round(total))
        elif kind == "geometric":
            out[key] = math.exp(total / n) if n else 0.0
        else:
            out[key] = total / n if n else 0.0
    return out


def _align(predictions: Any, references: Any, complete: bool) -> tuple[list[Any], list[Any], list[Any], dict]:
    """Queries to evaluate: ``(ids, predictions, references, {"unjudged": [...], "unranked": [...]})``."""
    if isinstance(predictions, Mapping) and isinstance(references, Mapping):
        ids = [q for q in references if q in predictions or complete]
        left = {
            "unjudged": [q for q in predictions if q not in references],
            "unranked": [q for q in references if q not in predictions],
        }
        return ids, [predictions.get(q, ()) for q in ids], [references[q] for q in ids], left
    if isinstance(predictions, Mapping) or isinstance(references, Mapping):
        raise TypeError(
            "ranking: give predictions and references both as mappings query -> ... or both as sequences (one "
            "entry per query, in the same order)."
        )
    if len(predictions) != len(references):
        raise ValueError(f"ranking: {len(predictions)} predictions and {len(references)} references.")
    return list(range(len(predictions))), list(predictions), list(references), {"unjudged": [], "unranked": []}


class _Scored(NamedTuple):
    scores: dict[str, Any]
    items: list[dict[str, Any]]
    left: dict[str, list[Any]]
    rows: np.ndarray
    keys: tuple[str, ...]
    ids: list[Any]


def _score(
    predictions: Any,
    references: Any,
    measures: Sequence[str] | str | None,
    level: int,
    complete: bool,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None = None,
) -> _Scored:
    plan = _with_map(parse_measures(measures))
    ids, preds, refs, left = _align(predictions, references, complete)
    stats = evaluate(preds, refs, plan, level=level, max_retrieved=max_retrieved, progress=progress)
    rows = query_rows(stats)
    keys = tuple(stats)
    per = {k: rows[:, j] for j, k in enumerate(keys) if k not in _PER_QUERY_HIDDEN}
    items = []
    for q, qid in enumerate(ids):
        row: dict[str, Any] = {"id": qid}
        for k, v in per.items():
            row[k] = int(round(float(v[q]))) if _kind(k) == "count" else float(v[q])
        items.append(row)
    scores = readout(exact_totals(rows), keys, counts=True)  # each sum rounded once, in any order
    return _Scored(scores, items, left, rows, keys, ids)


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
        ValueError: unknown measures or bad options.

    >>> score({"q1": ["a", "b"], "q2": ["c"]}, {"q1": {"b"}, "q2": {"x": 0}}, measures="recip_rank")
    {'map': 0.25, 'recip_rank': 0.25}
    """
    return _score(predictions, references, measures, level, complete, max_retrieved).scores


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Score a TREC run file (``predictions``) against a qrels file (``references``), as trec_eval does.

    Args:
        predictions: the run file.
        references: the qrels file.
        measures: as :func:`score`.
        level: as :func:`score`.
        complete: as :func:`score`.
        max_retrieved: as :func:`score`.
        progress: called as ``progress(done, total)`` while queries are scored (a progress bar).

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score` (plus nothing else), ``items`` one per
        query evaluated (``{"id": query, measure: value, ...}``, queries in trec_eval's order, without ``num_q``
        and ``gm_map`` as trec_eval's ``-q``), ``warnings`` about queries left out.

    Raises:
        InputFormatError: a malformed file, or no query of the run has judgements (trec_eval stops there too).
    """
    got, warnings = _score_files(predictions, references, measures, level, complete, max_retrieved, progress)
    return Report(got.scores, got.items, warnings)


@dataclasses.dataclass(frozen=True)
class QueryRows:
    """The queries of a run scored against qrels as additive rows: what :func:`score_files` sums and reads out.

    Attributes:
        rows: float64 ``(queries, 2 len(keys) + 1)`` (see :func:`query_rows`), queries in trec_eval's order.
        keys: the printed names of the measures of the columns.
        ids: the query ids, one per row.
        warnings: what :func:`score_files` warns about the files (queries left out).
    """

    rows: np.ndarray
    keys: tuple[str, ...]
    ids: list[Any]
    warnings: tuple[str, ...]

    def readout(self, totals: Any) -> dict[str, Any]:
        """The figures of totals of these rows, counts left out: ``{"all": {measure: value}}`` as the command's JSON."""
        return {"all": readout(totals, self.keys)}


def file_rows(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> QueryRows:
    """Read and score a run and qrels, one row per query evaluated (arguments and errors as :func:`score_files`).

    ``readout(exact_totals(rows), keys, counts=True)`` (:func:`metametric_jax.intervals.exact_totals`) is
    :func:`score_files`'s figures. What ``metametric-jax score ranking --bootstrap`` and ``compare ranking``
    resample (a query is the unit).
    """
    got, warnings = _score_files(predictions, references, measures, level, complete, max_retrieved, progress)
    return QueryRows(got.rows, got.keys, list(got.ids), tuple(warnings))


def _score_files(
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None,
    level: int,
    complete: bool,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None,
) -> tuple[_Scored, list[str]]:
    from metametric_jax.errors import InputFormatError
    from metametric_jax.tasks.readers.trec import read_qrels, read_run

    qrels = read_qrels(references)
    run = read_run(predictions)
    order = sorted(qrels, key=lambda q: q.encode("utf-8"))  # trec_eval's order of queries (strcmp)
    qrels = {q: qrels[q] for q in order}
    got = _score(run.rankings, qrels, measures, level, complete, max_retrieved, progress)
    if not got.items:
        raise InputFormatError(str(predictions), None, f"no query of the run has judgements in {references}")
    warnings = []
    if got.left["unjudged"]:
        warnings.append(_left_out(got.left["unjudged"], f"ranked in {predictions} but not judged in {references}"))
    if got.left["unranked"] and not complete:
        warnings.append(
            _left_out(
                got.left["unranked"],
                f"judged in {references} but absent from {predictions} (use complete/-c to count them as empty "
                "rankings)",
            )
        )
    return got, warnings


def read_examples(
    *, predictions: str | os.PathLike[str], references: str | os.PathLike[str], complete: bool = False
) -> tuple[list[Any], list[Any], list[Any]]:
    """The queries :func:`score_files` evaluates, in its order: ``(query ids, rankings, judgements)``."""
    from metametric_jax.tasks.readers.trec import read_qrels, read_run

    qrels = read_qrels(references)
    run = read_run(predictions)
    order = sorted(qrels, key=lambda q: q.encode("utf-8"))
    ids, preds, refs, _ = _align(run.rankings, {q: qrels[q] for q in order}, complete)
    return ids, preds, refs


def _left_out(queries: list[Any], why: str) -> str:
    shown = ", ".join(map(str, queries[:5])) + (", ..." if len(queries) > 5 else "")
    return f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'} left out, {why}: {shown}"


# ---------------------------------------------------------------------------------------------- accumulators
_KIND_NORMALIZER = {"precision": "precision", "recall": "recall", "count": "none", "geometric": "precision"}


@functools.cache
def _ranking_suite(plan: Plan, level: int, max_retrieved: int | None) -> Any:
    from metametric_jax import make_suite, stats_metric

    keys = [measure_key(f, p) for f, p in plan]
    members = {}
    for (family, _), key in zip(plan, keys):
        m = MEASURES[family]
        members[key] = stats_metric(
            None,
            _KIND_NORMALIZER[m.kind],
            name=key,
            empty_score=0.0,
            doc=f"trec_eval's ``{key}`` per query: {m.definition}.",
        )

    def all_figures(results: Mapping[str, Any]) -> dict[str, Any]:
        import jax.numpy as jnp

        out = {}
        for (family, _), key in zip(plan, keys):
            kind = MEASURES[family].kind
            r = results[key]
            if kind == "count":
                out[key] = r["overlap"]
            elif kind == "geometric":
                out[key] = jnp.exp(_GEO_SHIFT * (r["macro_precision"] - 1.0))
            else:
                out[key] = r[f"macro_{_KIND_NORMALIZER[kind]}"]
        return out

    def batch(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
        return evaluate(predictions, references, plan, level=level, max_retrieved=max_retrieved)

    return make_suite(
        "ranking",
        members,
        {"all": all_figures},
        batch_stats=batch,
        doc=(
            f"trec_eval's measures {keys} (relevance level {level}) as one accumulator; ``compute()['all']`` holds "
            "the run's figures (means over queries, sums for ``num_*``, the geometric mean for ``gm_map``)."
        ),
    )


def RankingMetric(  # noqa: N802 - a cached factory of accumulator classes, named as one
    measures: Sequence[str] | str | None = None, *, level: int = 1, max_retrieved: int | None = None
) -> Any:
    r"""The accumulator class (a suite) of trec_eval's measures, one member per printed measure name.

    Each member sums per-query statistics :math:`(x_y, x_x, y_y)` whose ratio is the query's figure (AP:
    :math:`(\sum_i \mathrm{P@}i\,\mathrm{rel}_i, h_n, R)` by ``recall``; P@k: :math:`(h_k, k, R)` by ``precision``;
    nDCG@k: (DCG@k, IDCG@k, IDCG@k) by ``recall``; counts :math:`(c, c, c)` unnormalized), so its ``macro_``
    figure is trec_eval's mean over queries. ``compute()["all"]`` gathers them under trec_eval's names. A batch is a
    sequence of rankings and a sequence of judgements, one per query. The class is cached per configuration, so
    states of one configuration always merge.

    State: one member state per measure (see :class:`metametric_jax.Metric`: the micro totals, the per-query sums of
    each normalizer, the query count).

    >>> M = RankingMetric(["map", "P.2"])
    >>> state = M.from_model_output([["a", "b", "c", "d"]], [{"c", "d", "e"}])
    >>> figures = state.compute()["all"]
    >>> round(float(figures["map"]), 4), float(figures["P_2"])
    (0.2778, 0.0)
    """
    _check_options(level, max_retrieved)
    return _ranking_suite(parse_measures(measures), level, max_retrieved)


@functools.cache
def precision_at_k(k: int) -> Any:
    r"""The precision@k accumulator class: :math:`h_k / k` per query (trec_eval's ``P_k``); mean: ``macro_precision``.

    >>> P2 = precision_at_k(2)
    >>> float(P2.from_model_output([["a", "c", "b"]], [{"c"}]).compute()["macro_precision"])
    0.5
    """
    from metametric_jax import make_metric

    return make_metric(
        AtK(k),
        "precision",
        name=f"precision_at_{k}",
        doc=f"Precision@{k}: statistics (h_{k}, {k}, R); ``macro_precision`` is the mean over queries (``P_{k}``).",
    )


@functools.cache
def recall_at_k(k: int) -> Any:
    r"""The recall@k accumulator class: :math:`h_k / R` per query (trec_eval's ``recall_k``); mean: ``macro_recall``.

    >>> float(recall_at_k(2).score(["a", "c", "b"], {"c", "d"}))
    0.5
    """
    from metametric_jax import make_metric

    return make_metric(
        AtK(k),
        "recall",
        name=f"recall_at_{k}",
        doc=f"Recall@{k}: statistics (h_{k}, {k}, R); ``macro_recall`` is the mean over queries (``recall_{k}``).",
    )


_AP_DOC = r"""Average precision of a ranking; the mean over queries (``macro_recall``) is MAP (trec_eval's ``map``).

.. math::

    \mathrm{AP} = \frac{1}{R} \sum_i \mathrm{P@}i \cdot \mathrm{rel}_i

State: the sums of :math:`(\sum_i \mathrm{P@}i\,\mathrm{rel}_i,\ h_n,\ R)` over queries (micro ``recall`` is
:math:`\sum_q \sum_i \mathrm{P@}i\,\mathrm{rel}_i / \sum_q R_q`), the per-query sums of each normalizer (``macro_``)
and the query count. A query with no relevant document has AP 0 and counts in the mean, as in trec_eval.
Buckley and Voorhees (2005); example of metametric's documentation:

>>> from metametric_jax.tasks.ranking import AveragePrecisionMetric
>>> round(AveragePrecisionMetric.score(["a", "b", "c", "d"], {"c", "d", "e"}), 4)  # (1/3 + 2/4) / 3
0.2778
"""


@functools.cache
def _average_precision_metric() -> Any:
    from metametric_jax import make_metric

    return make_metric(AveragePrecision(), "recall", name="average_precision", empty_score=0.0, doc=_AP_DOC)


__test__ = {"AveragePrecisionMetric": _AP_DOC}  # its example runs with the module's doctests


def __getattr__(name: str) -> Any:
    # The accumulator class is built on first use, so reading files and scoring them does not import JAX.
    if name == "AveragePrecisionMetric":
        return _average_precision_metric()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "AveragePrecisionMetric"])
