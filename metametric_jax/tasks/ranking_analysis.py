r"""Where retrieval systems fail and where one beats another: per-query wins and losses, measures by relevant documents.

The analyses of ``metametric-jax analyze ranking`` (:mod:`metametric_jax.analysis` is the engine), on the queries
trec_eval evaluates (:mod:`metametric_jax.tasks.ranking`: each query's figure of each measure, its rules for which
queries count):

* ``overall`` — one bucket, ``all``: the run's figures of ``score ranking`` (means over queries, ``gm_map`` and
  ``gm_bpref`` geometric), exactly (its per-query rows, :func:`~metametric_jax.tasks.ranking.query_rows`, read out by
  its :func:`~metametric_jax.tasks.ranking.readout`; the counts ``num_*`` are left out, as ``compare`` leaves them);
  its test is ``compare ranking``'s test of MAP.
* ``relevant`` — the same figures over the queries with ``0``, ``1``, ``2-5``, ``6-20`` or ``21+`` relevant
  documents (trec_eval's ``num_rel`` at the relevance level), the query-difficulty breakdown of TREC overviews.
* custom — ``buckets={"name": fn}``: ``fn(Query)`` names the bucket of a query.

A bucket's ``count`` is its queries; its MAP is tested. A bucket's figures are the exactly rounded means of its
queries' figures (trec_eval's rounding of its running sum over all queries, which ``score`` reproduces, belongs to
``overall``). The unit resampled is the query, as ``score ranking
--bootstrap`` and ``compare ranking`` resample; every system must be evaluated on the same queries (``-c`` scores a
judged query a run leaves out as trec_eval does).

Not tested (counts per system): ``wins`` — for each measure (``-m``; ``num_*`` left out) and each system after the
first, the queries where its figure is above the baseline's (wins), equal (ties: the same float, as trec_eval
computes it) and below (losses); a query whose figure is NaN for either system counts in none. The per-query
comparison of ``trec_eval -q`` outputs that TREC participants tabulate (and ranx's win/tie/loss reports).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.analysis_report import letters
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks import ranking
from metametric_jax.tasks.trec_measures import MEASURES, family_of

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["RELEVANT", "Query", "relevant_bucket", "analyze_files", "wins"]

RELEVANT = ("0", "1", "2-5", "6-20", "21+")


class Query(NamedTuple):
    """A query as a custom bucketing sees it.

    Attributes:
        id: its id.
        relevant: its number of relevant documents (trec_eval's ``num_rel``).
    """

    id: Any
    relevant: int


def relevant_bucket(n: int) -> str:
    """``0``, ``1``, ``2-5``, ``6-20`` or ``21+`` relevant documents."""
    return kit.range_bucket(n, RELEVANT)


def _kind(key: str) -> str:
    return MEASURES[family_of(key)].kind


def wins(figures: Sequence[np.ndarray], keys: Sequence[str], letters: Sequence[str]) -> dict[str, Any]:
    """The wins, ties and losses of each system after the first against it, per measure (a table section).

    Args:
        figures: per system, the queries' figures ``(queries, len(keys))``.
        keys: the measures of the columns (``num_*`` counts are left out).
        letters: the systems' short names.
    """
    rows = []
    base = figures[0]
    for k, key in enumerate(keys):
        if _kind(key) == "sum":
            continue
        for letter, other in zip(letters[1:], figures[1:]):
            a, b = base[:, k], other[:, k]
            both = ~(np.isnan(a) | np.isnan(b))
            rows.append(
                [
                    key,
                    letter,
                    int(np.sum(b[both] > a[both])),
                    int(np.sum(b[both] == a[both])),
                    int(np.sum(b[both] < a[both])),
                ]
            )
    return {
        "title": "Per-query wins, ties and losses against A",
        "description": "queries where the system's figure is above A's (wins), the same (ties), below (losses)",
        "columns": ["measure", "system", "wins", "ties", "losses"],
        "rows": rows,
    }


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    buckets: Mapping[str, Callable[[Query], Any]] | None = None,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of TREC runs against qrels, read and scored as ``score ranking`` scores them.

    Args:
        references: the qrels file.
        systems: the run files, the first the baseline.
        measures: trec_eval's measures (``-m``; default its ``official`` set); MAP is always given.
        level: the least grade of a relevant document (trec_eval's ``-l``).
        complete: score judged queries a run leaves out as empty rankings (``-c``).
        max_retrieved: only the first documents of each ranking count (``-M``).
        buckets: custom bucketings of queries, ``{name: fn(Query) -> bucket name}``.
        jobs: worker processes that score the queries (0: every core; default 1: this process); the report is
            the same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: a malformed file, or a run with no judged query.
        ValueError: unknown measures, or systems evaluated on different queries.
    """
    kit.need_systems(systems)
    kit.refuse_names(buckets, ("overall", "relevant", "wins"))
    asked = [measures] if isinstance(measures, str) else list(measures or ["official"])
    got = [
        ranking.file_rows(
            predictions=path,
            references=references,
            measures=[*asked, "num_rel"],
            level=level,
            complete=complete,
            max_retrieved=max_retrieved,
            jobs=jobs,
        )
        for path in systems
    ]
    first = got[0]
    for k, other in enumerate(got[1:], start=2):
        if other.ids != first.ids:
            only = [q for q in first.ids if q not in set(other.ids)] or [
                q for q in other.ids if q not in set(first.ids)
            ]
            raise ValueError(
                f"{os.fspath(systems[k - 1])} is evaluated on other queries than {os.fspath(systems[0])} (first "
                f"difference: query {only[0] if only else '?'}); every system must be scored on the same queries: "
                "give -c to score judged queries a run leaves out"
            )
    keys = first.keys
    relevant = first.rows[:, keys.index("num_rel")].astype(np.int64)
    n = len(first.ids)
    units = np.arange(n, dtype=np.int64)
    width = first.rows.shape[1]

    def readout(totals: Any) -> dict[str, Any]:
        return ranking.readout(totals, keys)

    def count(totals: Any) -> float:
        return float(totals[-1])

    k_sys = len(systems)
    found = kit.Analyses(k_sys, units, kit.Settings(**settings))
    overall = found.add(
        "overall", width, readout, "map", count=count, title="Overall", description="every query: score ranking"
    )
    by_relevant = found.add(
        "relevant",
        width,
        readout,
        "map",
        count=count,
        order=RELEVANT,
        title="Relevant documents",
        description="the query's number of relevant documents (num_rel)",
    )
    custom = found.custom(buckets, width, readout, "map", count=count)
    relevant_names = [relevant_bucket(x) for x in relevant.tolist()]
    queries = [Query(q, r) for q, r in zip(first.ids, relevant.tolist())]
    custom_names = {name: [str(fn(q)) for q in queries] for name, fn in (buckets or {}).items()}
    for s, rows in enumerate(g.rows for g in got):
        overall.add(rows, units, ["all"] * n, s)
        plain = rows.copy()
        plain[:, len(keys) : 2 * len(keys)] = 0.0  # trec_eval's rounding of the run's running sum: overall only
        by_relevant.add(plain, units, relevant_names, s)
        for name, listed in custom_names.items():
            custom[name].add(plain, units, listed, s)
    figures = [g.rows[:, : len(keys)] for g in got]
    table = wins(figures, keys, letters(k_sys)) if k_sys > 1 else None
    return found.report(
        "ranking",
        systems=[os.fspath(p) for p in systems],
        references=os.fspath(references),
        unit="queries",
        scale=1,
        extra={"wins": table} if table is not None else None,
        warnings=[w for g in got for w in g.warnings],
    )
