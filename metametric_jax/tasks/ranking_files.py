"""trec_eval's figures of a TREC run file against a qrels file: what ``metametric-jax score ranking`` imports.

:func:`score_files` scores the two files, :func:`file_rows` gives one additive row per query (what ``--bootstrap``
and ``compare`` resample), :func:`read_examples` the queries evaluated and :func:`_score_read` the figures and
warnings of a run and qrels already read (the printout of :mod:`~metametric_jax.tasks.trec_format`). Plain files are
coded straight from their bytes (:mod:`~metametric_jax.tasks.readers.trec_coded`: no Python string per document),
others read as dictionaries; the figures are the same. The conventions are those of
:mod:`metametric_jax.tasks.ranking`, which re-exports all of them (this module leaves out the accumulators, so scoring
files imports neither the similarities nor the machinery of portable metric classes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.inputs import check_lengths
from metametric_jax.intervals import exact_totals
from metametric_jax.tasks.ranking_queries import (
    _codes,
    check_options,
    coded_figures,
    evaluate_queries,
    hidden,
    measure_kind,
    query_rows,
    readout,
    with_map,
)
from metametric_jax.tasks.trec_measures import parse_measures

if TYPE_CHECKING:
    from metametric_jax.report import Report

__all__ = ["score_files", "file_scores", "file_rows", "read_examples", "QueryRows"]


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
    check_lengths(predictions, references, "ranking", "query")
    return list(range(len(predictions))), list(predictions), list(references), {"unjudged": [], "unranked": []}


class _Scored(NamedTuple):
    scores: dict[str, Any]
    figures: dict[str, np.ndarray]  # each query's figure of each measure (evaluate_queries)
    left: dict[str, list[Any]]
    rows: np.ndarray
    keys: tuple[str, ...]
    ids: list[Any]
    undefined: dict[str, list[Any]]

    @property
    def items(self) -> list[dict[str, Any]]:
        """One item per query: ``{"id": query, measure: figure, ...}`` (the measures trec_eval's ``-q`` shows).

        Built when asked for (per-query output, the API's report): the run's figures do not need them.
        """
        shown = [k for k in self.keys if not hidden(k)]
        columns = [
            list(map(int, v)) if measure_kind(k) == "sum" else v for k in shown for v in [self.figures[k].tolist()]
        ]
        names = ("id", *shown)
        return [dict(zip(names, row)) for row in zip(self.ids, *columns)]


def _score(
    predictions: Any,
    references: Any,
    measures: Sequence[str] | str | None,
    level: int,
    complete: bool,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
) -> _Scored:
    plan = with_map(parse_measures(measures))
    ids, preds, refs, left = _align(predictions, references, complete)
    figures = evaluate_queries(
        preds, refs, plan, level=level, max_retrieved=max_retrieved, progress=progress, jobs=jobs, ids=ids
    )
    positives = sum(_positives(r) for r in refs) if complete else None
    return _scored(figures, ids, left, positives)


def _positives(reference: Any) -> int:
    """A query's judgements with a positive grade (a collection of documents: each one)."""
    if isinstance(reference, Mapping):
        return sum(1 for grade in reference.values() if grade > 0)
    return len(set(reference))


def _scored(
    figures: dict[str, np.ndarray], ids: list[Any], left: dict[str, list[Any]], positives: int | None = None
) -> _Scored:
    """The run's figures from each query's (:func:`evaluate_queries`'s), read out as every path reads them.

    ``positives``: with ``complete`` (``-c``), the judgements with a positive grade over the queries: the run's
    ``num_rel``, as trec_eval counts it then (whatever the relevance level, where each query's ``num_rel`` counts
    the grades at the level or above).
    """
    rows = query_rows(figures)
    keys = tuple(figures)
    scores = readout(exact_totals(rows), keys, counts=True)  # each sum rounded once, in any order
    if positives is not None and "num_rel" in scores:
        scores["num_rel"] = positives
    undefined = {k: [ids[q] for q in np.flatnonzero(np.isnan(v))] for k, v in figures.items() if np.isnan(v).any()}
    return _Scored(scores, figures, left, rows, keys, ids, undefined)


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
    items: bool = True,
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
        jobs: worker processes that score the queries (0: every core; default 1: this process); the report is
            the same for every number.
        items: False to leave the per-query items out (the report's ``items`` empty): the run's figures alone,
            as the command prints them without ``-q``, without building a dictionary per query.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score` (plus nothing else), ``items`` one per
        query evaluated (``{"id": query, measure: value, ...}``, queries in trec_eval's order, without ``num_q``,
        ``gm_map`` and ``gm_bpref`` as trec_eval's ``-q``), ``warnings`` about queries left out and about NaN
        figures (``Rndcg`` at relevance level 0, as trec_eval's ``-nan``).

    Raises:
        InputFormatError: a malformed file, or no query of the run has judgements (trec_eval stops there too).
    """
    from metametric_jax.report import Report

    got, warnings, _, _ = _score_files(
        predictions, references, measures, level, complete, max_retrieved, progress, jobs
    )
    return Report(got.scores, got.items if items else [], warnings)


def file_scores(*, items: bool = True, **options: Any) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """:func:`score_files`'s ``scores``, ``items`` and ``warnings``, without a report around them.

    ``options``: the other arguments of :func:`score_files`, every one given (``progress`` and ``jobs`` included).
    What the command prints: its start imports no more than it needs (:class:`~metametric_jax.report.Report` is a
    dataclass).
    """
    got, warnings, _, _ = _score_files(**options)
    return got.scores, got.items if items else [], list(warnings)


class QueryRows(NamedTuple):
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
    jobs: int = 1,
) -> QueryRows:
    """Read and score a run and qrels, one row per query evaluated (arguments and errors as :func:`score_files`).

    ``readout(exact_totals(rows), keys, counts=True)`` (:func:`metametric_jax.intervals.exact_totals`) is
    :func:`score_files`'s figures. What ``metametric-jax score ranking --bootstrap`` and ``compare ranking``
    resample (a query is the unit).
    """
    got, warnings, _, _ = _score_files(
        predictions, references, measures, level, complete, max_retrieved, progress, jobs
    )
    return QueryRows(got.rows, got.keys, list(got.ids), tuple(warnings))


def _score_files(
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None,
    level: int,
    complete: bool,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None,
    jobs: int = 1,
    first: int = 0,
) -> tuple[_Scored, list[str], str, dict[str, list[int]]]:
    """The files' figures, their warnings, the run's id (trec_eval's ``runid``) and the first grades of each query.

    Plain files (``jobs=1``) are coded straight from their bytes, without a Python string per document
    (:mod:`metametric_jax.tasks.readers.trec_coded`); any others are read as dictionaries. The figures are the same.

    ``first``: the number of documents of each query ranked (after ``max_retrieved``) whose grades are given, coded
    as :func:`~metametric_jax.tasks.trec_batch.batch_values` codes them (the grade, -2 for a negative grade, -1 for
    no judgement), by query id, for the queries of the run that have judgements; default none (an empty dictionary).
    """
    from metametric_jax.tasks.readers.trec import read_qrels, read_run
    from metametric_jax.tasks.readers.trec_coded import coded_files

    check_options(level, max_retrieved)
    coded = coded_files(predictions, references, complete=complete, max_retrieved=max_retrieved) if jobs == 1 else None
    ranked: dict[str, list[int]] = {}
    if coded is None:
        qrels = read_qrels(references)
        run = read_run(predictions)
        got, warnings = _score_read(
            run.rankings, qrels, predictions, references, measures, level, complete, max_retrieved, progress, jobs
        )
        end = first if max_retrieved is None else min(first, max_retrieved)
        if end:  # batch_values' codes of the first documents (a repeat outside the pool, as the figures count it)
            queries = [q for q, ranking in run.rankings.items() if q in qrels and ranking]
            codes = _codes([run.rankings[q][:end] for q in queries], [qrels[q] for q in queries])
            ranked = {q: c.tolist() for q, c in zip(queries, codes)}
        return got, warnings, run.run_id, ranked
    if first:
        ranked = {q: c[:first].tolist() for q, c, e in zip(coded.ids, coded.codes, coded.empty) if not e}
    plan = with_map(parse_measures(measures))
    if progress is not None:
        progress(0, len(coded.ids))
    figures = coded_figures(coded.codes, coded.empty, coded.judged, plan, level)
    if progress is not None:
        progress(len(coded.ids), len(coded.ids))
    left = {"unjudged": coded.unjudged, "unranked": coded.unranked}
    positives = sum(int(np.count_nonzero(grades > 0)) for grades in coded.judged) if complete else None
    got, warnings = _checked(_scored(figures, coded.ids, left, positives), predictions, references, complete, level)
    return got, warnings, coded.run_id, ranked


def _score_read(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None,
    level: int,
    complete: bool,
    max_retrieved: int | None,
    progress: Callable[[int, int], None] | None,
    jobs: int = 1,
) -> tuple[_Scored, list[str]]:
    """:func:`_score_files` of a run and qrels already read (``predictions`` and ``references`` name their files)."""
    order = sorted(qrels, key=lambda q: q.encode("utf-8"))  # trec_eval's order of queries (strcmp)
    qrels = {q: qrels[q] for q in order}
    got = _score(rankings, qrels, measures, level, complete, max_retrieved, progress, jobs)
    return _checked(got, predictions, references, complete, level)


def _checked(
    got: _Scored,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    complete: bool,
    level: int,
) -> tuple[_Scored, list[str]]:
    """``got`` and its warnings (queries left out, NaN figures); an error where no query was evaluated."""
    from metametric_jax.errors import InputFormatError

    if not got.ids:
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
    for key, queries in got.undefined.items():
        shown = ", ".join(map(str, queries[:5])) + (", ..." if len(queries) > 5 else "")
        warnings.append(
            f"{key} is NaN, as trec_eval gives it, for {len(queries)} quer{'y' if len(queries) == 1 else 'ies'} "
            f"whose relevant documents have no positive grade (relevance level {level}), and so is its mean: "
            f"{shown}"
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
