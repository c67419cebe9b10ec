"""trec_eval's figures query by query and their one read-out, shared by the ranking scorer, files and accumulators.

:func:`evaluate` gives each query's figure of every measure of a plan (in ``jobs`` worker processes with
:func:`evaluate_queries`); :func:`query_rows` makes them additive rows (trec_eval's rounding of its running sums
included) and :func:`readout` turns any sum of rows (weighted, for a bootstrap replicate) into the run's figures.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.inputs import check_lengths
from metametric_jax.ranked_lists import judgements, rank, ranked_list
from metametric_jax.tasks.trec_batch import batch_values
from metametric_jax.tasks.trec_measures import MEASURES, Plan, family_of, plan_keys

_ABSENT = -(1 << 62)

__all__ = [
    "query_figures",
    "evaluate",
    "coded_figures",
    "evaluate_queries",
    "query_rows",
    "readout",
    "measure_kind",
    "check_options",
    "check_repeats",
    "hidden",
    "with_map",
    "ranking_of",
]


def hidden(key: str) -> bool:
    """trec_eval prints num_q and the geometric means for the whole run only."""
    return key == "num_q" or MEASURES[family_of(key)].kind == "geometric"


def with_map(plan: Plan) -> Plan:
    """``plan`` with ``map`` among its measures (in trec_eval's order)."""
    if ("map", None) in plan:
        return plan
    order = list(MEASURES)
    return tuple(sorted((*plan, ("map", None)), key=lambda fp: order.index(fp[0])))  # stable: parameters keep order


def ranking_of(prediction: Any, what: str, max_retrieved: int | None) -> list[Any]:
    """A query's ranked documents (a ``{doc: score}`` mapping ranked as trec_eval does), cut at ``max_retrieved``."""
    items = rank(prediction) if isinstance(prediction, Mapping) else ranked_list(prediction, what)
    return items if max_retrieved is None else items[:max_retrieved]


def check_options(level: int, max_retrieved: int | None) -> None:
    """Nothing, if ``level`` and ``max_retrieved`` are trec_eval's options (``-l``, ``-M``); else a ``ValueError``."""
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
    ids: Sequence[Any] | None = None,
) -> dict[str, np.ndarray]:
    """Each query's figure of every measure of ``plan``: ``{printed name: (queries,) float64 array}``.

    A query's figure is trec_eval's (:func:`query_figures`: its value, its count for ``num_*``, the logarithm for
    ``gm_map`` and ``gm_bpref``), computed for all queries at once by
    :func:`~metametric_jax.tasks.trec_batch.batch_values`.
    ``progress(done, total)`` is called first, every 100 queries and at the end. ``ids`` names the queries in the
    error on a ranking that lists a document twice (:func:`check_repeats`; default: their positions).

    Raises:
        ValueError: bad options, or a ranking that lists a document twice (trec_eval stops on such a run too).
        TypeError: a ranking that is not an ordered sequence, judgements that are not a collection or mapping.
    """
    check_options(level, max_retrieved)
    check_lengths(predictions, references, "ranking", "query")
    check_repeats(range(len(predictions)) if ids is None else ids, predictions)
    return _evaluate(predictions, references, plan, level, max_retrieved, progress)


def _evaluate(
    predictions: Sequence[Any],
    references: Sequence[Any],
    plan: Plan,
    level: int,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """:func:`evaluate` of queries whose options, lengths and rankings are checked already."""
    total = len(predictions)
    if progress is not None:
        progress(0, total)
    rankings, grade_maps = [], []
    for q, (p, r) in enumerate(zip(predictions, references)):
        rankings.append(ranking_of(p, f"query {q}: prediction", max_retrieved))
        grade_maps.append(
            r if type(r) is dict and set(map(type, r.values())) <= {int} else judgements(r, f"query {q}: reference")
        )
        if progress is not None and (q + 1) % 100 == 0:
            progress(q + 1, total)
    figures = coded_figures(_codes(rankings, grade_maps), [not r for r in rankings], _judged(grade_maps), plan, level)
    if progress is not None:
        progress(total, total)
    return figures


def coded_figures(
    codes: Sequence[np.ndarray], empty: Sequence[bool], judged: Sequence[np.ndarray], plan: Plan, level: int
) -> dict[str, np.ndarray]:
    """:func:`evaluate`'s figures of queries already coded, as :func:`~metametric_jax.tasks.trec_batch.batch_values`.

    What coded files (:mod:`~metametric_jax.tasks.readers.trec_coded`) are scored with, and :func:`evaluate` too.
    """
    table = batch_values(codes, empty, judged, plan, level)
    return {k: table[:, j] for j, k in enumerate(plan_keys(plan))}


def query_figures(ranking: Sequence[Any], grades: Mapping[Any, int], plan: Plan, level: int = 1) -> dict[str, float]:
    """Each figure of ``plan`` for one query: ``{printed name: figure}`` (the measures of ``trec_measures``).

    Args:
        ranking: the items ranked, best first (already ordered, already cut to any maximum length).
        grades: the query's judgements ``{item: grade}`` (negative grades: unjudged items of the pool).
        plan: ``(family, parameter)`` pairs (:func:`~metametric_jax.tasks.trec_measures.parse_measures`).
        level: the least grade of a relevant item.

    Returns:
        The query's figure of each measure, under trec_eval's printed names (the logarithm for ``gm_*``): a row of
        :func:`~metametric_jax.tasks.trec_batch.batch_values`, as every query of a file is computed.

    >>> from metametric_jax.tasks.trec_measures import parse_measures
    >>> figures = query_figures(["d1", "d2", "d3"], {"d2": 1, "d3": 2, "d9": 1}, parse_measures(["map", "P.2", "rbp"]))
    >>> figures["map"], figures["P_2"], round(figures["rbp"], 4)
    (0.38888888888888884, 0.5, 0.126)

    Raises:
        ValueError: the ranking lists an item twice (trec_eval stops on such a run).
    """
    check_repeats(None, [ranking])
    ranking = list(ranking)
    row = batch_values(_codes([ranking], [grades]), [not ranking], _judged([grades]), plan, level)[0]
    return dict(zip(plan_keys(plan), map(float, row)))


def _codes(rankings: Sequence[Sequence[Any]], grades: Sequence[Mapping[Any, int]]) -> list[np.ndarray]:
    """Each query's ranked items as :func:`~metametric_jax.tasks.trec_batch.batch_values` takes them.

    An item's code is its grade (from 0), -2 for an item of the pool judged with a negative grade (unjudged), -1 for
    an item outside the pool; an empty ranking is ``[-1]`` (trec_eval ``-c`` ranks one item outside the pool for a
    query absent from the run). All queries' items are looked up in one pass and coded in one array, cut into one view
    per query. Each ranking lists an item once: every caller refuses a repeat first (:func:`check_repeats`, or the
    TREC readers).
    """
    if not rankings:
        return []
    lengths = np.fromiter(map(len, rankings), np.int64, len(rankings))
    absent = itertools.repeat(_ABSENT)
    looked_up = map(map, map(operator.attrgetter("get"), grades), rankings, itertools.repeat(absent))
    g = np.fromiter(itertools.chain.from_iterable(looked_up), np.int64, int(lengths.sum()))
    negative = np.flatnonzero(g < 0)
    g[negative] = np.where(g[negative] == _ABSENT, -1, -2)  # not in the pool; unjudged in the pool (a negative grade)
    codes = np.split(g, np.cumsum(lengths)[:-1])
    for q in np.flatnonzero(lengths == 0).tolist():
        codes[q] = np.array([-1], np.int64)
    return codes


def _judged(grades: Sequence[Mapping[Any, int]]) -> list[np.ndarray]:
    """Each query's grades of its judged items (negative grades: the pool's unjudged items left out)."""
    if not grades:
        return []
    sizes = np.fromiter(map(len, grades), np.int64, len(grades))
    values = np.fromiter(itertools.chain.from_iterable(map(operator.methodcaller("values"), grades)), np.int64)
    owner = np.repeat(np.arange(sizes.size), sizes)
    kept = values >= 0
    return np.split(values[kept], np.cumsum(np.bincount(owner[kept], minlength=sizes.size))[:-1])


def _evaluate_chunk(
    plan: Plan, level: int, max_retrieved: int | None, predictions: Sequence[Any], references: Sequence[Any]
) -> dict[str, np.ndarray]:
    return _evaluate(predictions, references, plan, level, max_retrieved)


def check_repeats(ids: Sequence[Any] | None, rankings: Sequence[Any]) -> None:
    """Nothing when no ranking lists a document twice; else a ``ValueError`` naming the first such document.

    trec_eval stops on such a run (``duplicate docs``), and the TREC readers refuse it. A ranking is read as the
    measures read it (:func:`~metametric_jax.ranked_lists.ranked_list`: a list, a tuple, a 1-d array or any other
    sequence), its whole length (``max_retrieved`` does not hide a repeat); a mapping ``document -> score`` holds each
    document once, and what the measures refuse (a set, a string, an unhashable item) is left to them and their message.

    Args:
        ids: the queries' names in the message, one per ranking; ``None`` names none (a single ranking).
        rankings: the rankings.
    """
    for query, ranking in zip(itertools.repeat(None) if ids is None else ids, rankings):
        if isinstance(ranking, Mapping):
            continue
        try:
            ranked = ranked_list(ranking)
            if len(set(ranked)) == len(ranked):
                continue
        except TypeError:
            continue
        seen: set[Any] = set()
        for doc in ranked:
            if doc in seen:
                where = "" if ids is None else f" for query {query!r}"
                raise ValueError(
                    f"ranking: document {doc!r} is ranked twice{where} (a ranking lists each document once; "
                    "trec_eval stops on a repeat too)"
                )
            seen.add(doc)


def evaluate_queries(
    predictions: Sequence[Any],
    references: Sequence[Any],
    plan: Plan,
    *,
    level: int = 1,
    max_retrieved: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
    ids: Sequence[Any] | None = None,
) -> dict[str, np.ndarray]:
    """:func:`evaluate` in ``jobs`` worker processes (0: every core), the queries in chunks: the same arrays.

    The options, the lengths and the rankings (:func:`check_repeats`, ``ids`` naming the queries) are checked here,
    before any worker starts.
    """
    if jobs == 1:
        return evaluate(
            predictions, references, plan, level=level, max_retrieved=max_retrieved, progress=progress, ids=ids
        )
    from metametric_jax import parallel

    check_options(level, max_retrieved)
    check_lengths(predictions, references, "ranking", "query")
    check_repeats(range(len(predictions)) if ids is None else ids, predictions)
    task = functools.partial(_evaluate_chunk, plan, level, max_retrieved)
    return parallel.map_rows(  # type: ignore[no-any-return]
        task, list(predictions), list(references), jobs=jobs, progress=progress, preload=[__name__]
    )


def measure_kind(key: str) -> str:
    """How the queries' figures of a measure make the run's: ``"mean"``, ``"sum"`` or ``"geometric"``."""
    return MEASURES[family_of(key)].kind


def query_rows(figures: Mapping[str, np.ndarray]) -> np.ndarray:
    """Additive rows of :func:`evaluate`'s figures: float64 ``(queries, 2 len(figures) + 1)``, read by :func:`readout`.

    Column ``k`` is the queries' figure of the ``k``-th measure of ``figures`` (its value, its count for ``num_*``,
    the logarithm for ``gm_map`` and ``gm_bpref``). Column ``len(figures) + k`` holds trec_eval's rounding: trec_eval
    adds the queries' figures one by one in its order of queries, and its total can differ from the exact sum of the
    column by a few units in the last place, which shows at the 4th decimal where the mean is a tie (0.04875); the
    first row holds that difference (exact, as the two sums are close) and the others 0, so the two columns sum to
    trec_eval's total exactly. The last column is 1 (the query count).
    """
    n = len(next(iter(figures.values()))) if figures else 0
    columns = [np.asarray(f, np.float64) for f in figures.values()]
    if not n:
        return np.zeros((0, 2 * len(columns) + 1))
    table = np.stack(columns, axis=1)
    running = np.cumsum(table, axis=0)[-1].tolist()  # query by query, as trec_eval adds them (in order)
    corrections = np.zeros((n, len(columns)))
    for k, column in enumerate(table.T):
        corrections[0, k] = running[k] - math.fsum(column.tolist()) if math.isfinite(running[k]) else 0.0
    return np.concatenate([table, corrections, np.ones((n, 1))], axis=1)


def readout(totals: Any, keys: Sequence[str], counts: bool = False) -> dict[str, Any]:
    """trec_eval's figures of summed :func:`query_rows`: the one read-out of :func:`score` and :func:`score_files`.

    Args:
        totals: float64 ``(2 len(keys) + 1,)``: the sums of the queries' figures, of trec_eval's rounding of them,
            and the number of queries; or any non-negative real weights of them (a bootstrap replicate).
        keys: the printed names of the measures of the columns.
        counts: also give the ``num_*`` counts (sums, as integers); left out by default (they get no interval).

    Returns:
        ``{measure: value}`` in the order of ``keys``: the mean over queries, ``exp`` of the mean logarithm for
        ``gm_map`` and ``gm_bpref``; 0.0 without queries (NaN where a query's figure is NaN, as trec_eval prints).
    """
    values = np.asarray(totals, np.float64).tolist()
    n = values[-1]
    out: dict[str, Any] = {}
    for k, key in enumerate(keys):
        total = values[k] + values[len(keys) + k]
        kind = measure_kind(key)
        if kind == "sum":
            if counts:
                out[key] = int(round(total))
        elif kind == "geometric":
            out[key] = math.exp(total / n) if n else 0.0
        else:
            out[key] = total / n if n else 0.0
    return out
