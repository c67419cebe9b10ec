"""A run and its qrels read straight into trec_eval's codes, for scoring files: no Python string per document.

:func:`coded_files` reads two plain files (plain as :mod:`metametric_jax.tasks.readers.trec` reads files in bulk) into
what :func:`~metametric_jax.tasks.trec_batch.batch_values` takes for each query trec_eval evaluates: its ranked
documents in trec_eval's order coded by their judgement (the grade, -2 for a negative grade, -1 for none), and its
non-negative grades. A document's judgement is found by a 64-bit hash of its id joined on the query, and checked
byte for byte. The result is ``None`` wherever the dictionaries of :func:`~metametric_jax.tasks.readers.trec.read_run`
and :func:`~metametric_jax.tasks.readers.trec.read_qrels` must be read instead: a file that is not plain, a grade
that is not a plain integer, a document ranked or judged twice for one query (which that path reports), or two ids
of one query with one hash. The figures are the same either way (``tests/tasks/test_trec_coded.py``).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from metametric_jax.tasks.readers import trec
from metametric_jax.tasks.readers.text import read_text

__all__ = ["Coded", "coded_files"]

_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


class Coded(NamedTuple):
    """The queries trec_eval evaluates, coded for :func:`~metametric_jax.tasks.trec_batch.batch_values`.

    Attributes:
        ids: the queries evaluated, in trec_eval's order (by their bytes).
        codes: each one's ranked documents, coded (``[-1]`` for an empty ranking).
        empty: whether each one's ranking is empty (``complete`` and absent from the run, or ``max_retrieved=0``).
        judged: each one's non-negative grades.
        unjudged: the run's queries without judgements, in the run's order.
        unranked: the judged queries absent from the run, in trec_eval's order.
        run_id: the run's last line's ``run_id`` field (trec_eval's ``runid``), ``""`` for an empty run.
    """

    ids: list[str]
    codes: list[np.ndarray]
    empty: list[bool]
    judged: list[np.ndarray]
    unjudged: list[str]
    unranked: list[str]
    run_id: str


def _hash(ids: np.ndarray, salt: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of ``ids`` (NUL-padded bytes) and its ``salt`` (the query's number)."""
    words = ids.view("<u8")
    h = salt.astype(np.uint64) * _MIX[0]
    for j in range(words.shape[1]):
        h = (h ^ words[:, j]) * _MIX[1]
        h ^= h >> np.uint64(31)
    return (h * _MIX[2]) ^ (h >> np.uint64(29))


def _qrels(text: str) -> tuple[np.ndarray, list[np.ndarray], np.ndarray] | None:
    """A plain qrels file's lines: their queries' names, their document ids (each block's) and grades; else ``None``."""
    names: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    grades: list[np.ndarray] = []
    for block in trec._blocks(text):
        fields = trec._fields(block, 4)
        if fields is None:
            return None
        if not fields.start.shape[0]:
            continue
        grade = trec._integers(fields.chars(3))
        if grade is None:  # a grade int() reads otherwise (1_0, 19 digits): the dictionaries' reading
            return None
        names.append(fields.strings(0))
        ids.append(fields.chars(2, 8))
        grades.append(grade)
    if not names:
        return np.zeros(0, "S1"), [], np.zeros(0, np.int64)
    return np.concatenate(names), ids, np.concatenate(grades)


def coded_files(
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    *,
    complete: bool = False,
    max_retrieved: int | None = None,
) -> Coded | None:
    """The queries of a run file scored against a qrels file, coded as trec_eval sees them; ``None``: read them whole.

    Args:
        predictions: the run file.
        references: the qrels file.
        complete: evaluate the judged queries absent from the run too, as empty rankings (trec_eval ``-c``).
        max_retrieved: each ranking cut to its first ``max_retrieved`` documents (trec_eval ``-M``).
    """
    run = trec._run_lines(read_text(predictions), strings=False)
    qrels = _qrels(read_text(references)) if run is not None else None
    if run is None or qrels is None:
        return None
    q_names, q_blocks, grade = qrels
    width = max([run.ids.shape[1], *(b.shape[1] for b in q_blocks)])  # one width for both: ids compared as rows
    r_ids = run.ids if width == run.ids.shape[1] else trec._widened([run.ids], width)
    q_ids = trec._widened(q_blocks, width)
    query, in_file_size = run.query, run.queries.size
    order = np.arange(query.size) if run.order is None else run.order
    # the qrels' queries in trec_eval's order (by their bytes: np.unique's); a document judged twice: not coded
    q_queries, _, q_of = trec._unique(q_names)
    q_keys = _hash(q_ids, q_of)
    by_key = np.argsort(q_keys)
    sorted_keys = q_keys[by_key]
    if (sorted_keys[1:] == sorted_keys[:-1]).any():
        return None
    run_queries = run.queries
    judged_query = np.full(in_file_size, -1, np.int64)  # each run query's number among the qrels' queries, or -1
    if q_queries.size:
        at = np.minimum(np.searchsorted(q_queries, run_queries), q_queries.size - 1)
        judged_query = np.where(q_queries[at] == run_queries, at, -1)
    # the run's lines hashed with their query's number among the qrels' (an unjudged query: one past them), sorted:
    # a document ranked twice for one query is not coded; the judged lines found in one pass over both sorted keys
    salt = np.where(judged_query >= 0, judged_query, q_queries.size + np.arange(in_file_size))
    r_keys = _hash(r_ids, salt[query])
    r_order = np.argsort(r_keys)
    r_sorted = r_keys[r_order]
    if (r_sorted[1:] == r_sorted[:-1]).any():
        return None
    line_query = judged_query[query]
    code = np.full(query.size, -1, np.int64)
    if sorted_keys.size and query.size:
        found = np.minimum(np.searchsorted(sorted_keys, r_sorted), sorted_keys.size - 1)
        hit = np.flatnonzero(sorted_keys[found] == r_sorted)
        line, row = by_key[found[hit]], r_order[hit]
        same = (q_of[line] == line_query[row]) & (q_ids[line] == r_ids[row]).all(axis=1)  # byte for byte
        line, row = line[same], row[same]
        code[row] = np.where(grade[line] >= 0, grade[line], -2)
    # each query evaluated: its lines in trec_eval's order, cut at max_retrieved
    lines = np.bincount(query, minlength=in_file_size)  # each run query's lines
    ends = np.cumsum(lines)
    starts = ends - lines
    ranked_as = np.full(q_queries.size, -1, np.int64)  # each qrels query's number among the run's, -1 for none
    ranked_as[judged_query[judged_query >= 0]] = np.flatnonzero(judged_query >= 0)
    evaluated = np.arange(q_queries.size) if complete else np.flatnonzero(ranked_as >= 0)
    coded = code[order]
    by_query = np.argsort(q_of, kind="stable")
    grades_of = np.bincount(q_of, minlength=q_queries.size)  # each qrels query's lines
    grade_ends = np.cumsum(grades_of)
    sorted_grades = grade[by_query]
    codes, empty, judged = [], [], []
    for r, g_end, g_size in zip(
        ranked_as[evaluated].tolist(), grade_ends[evaluated].tolist(), grades_of[evaluated].tolist()
    ):
        items = coded[starts[r] : ends[r]] if r >= 0 else coded[:0]
        if max_retrieved is not None:
            items = items[:max_retrieved]
        empty.append(not items.size)
        codes.append(items if items.size else np.array([-1], np.int64))
        own = sorted_grades[g_end - g_size : g_end]
        judged.append(own[own >= 0])
    names = q_queries.astype("U").tolist()
    run_names = run_queries.astype("U").tolist()
    return Coded(
        ids=[names[e] for e in evaluated.tolist()],
        codes=codes,
        empty=empty,
        judged=judged,
        unjudged=[run_names[i] for i in np.flatnonzero(judged_query < 0).tolist()],
        unranked=[names[e] for e in np.flatnonzero(ranked_as < 0).tolist()],
        run_id=run.run_id,
    )
