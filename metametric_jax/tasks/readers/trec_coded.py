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


class _Side(NamedTuple):
    names: np.ndarray  # each line's query (byte strings)
    ids: np.ndarray  # (lines, width) uint8: each line's document id, NUL-padded to a multiple of 8 bytes
    values: np.ndarray  # each line's score (a run) or grade (qrels)


def _hash(ids: np.ndarray, salt: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of ``ids`` (NUL-padded bytes) and its ``salt`` (the query's number)."""
    words = ids.view("<u8")
    h = salt.astype(np.uint64) * _MIX[0]
    for j in range(words.shape[1]):
        h = (h ^ words[:, j]) * _MIX[1]
        h ^= h >> np.uint64(31)
    return (h * _MIX[2]) ^ (h >> np.uint64(29))


def _widen(blocks: list[np.ndarray], width: int) -> np.ndarray:
    if not blocks:
        return np.zeros((0, width), np.uint8)
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[1]))) for b in blocks])


def _read(text: str, width: int) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], bool, str] | None:
    """Each block's query names, ids and values (scores or grades); whether ties descend; the last line's run id."""
    names: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    values: list[np.ndarray] = []
    ties = True
    last = ""
    for block in trec._blocks(text):
        fields = trec._fields(block, width)
        if fields is None:
            return None
        if not fields.start.shape[0]:
            continue
        if width == 6:
            try:
                value = fields.numbers(4)
            except ValueError:
                return None
        else:
            grades = trec._integers(fields.chars(3))
            if grades is None:
                return None
            value = grades
        named, chars = fields.strings(0), fields.chars(2, 8)
        if width == 6:
            if ties and names and named[0] == names[-1][-1] and value[0] == values[-1][-1]:
                ties = bytes(ids[-1][-1]).rstrip(b"\0") > bytes(chars[0]).rstrip(b"\0")  # a tie across two blocks
            ties = ties and trec._ties_descending(named, value, fields)
            end = fields.start.shape[0] - 1
            last = bytes(fields.data[fields.start[end, 5] : fields.end[end, 5]]).decode("ascii")
        names.append(named)
        ids.append(chars)
        values.append(value)
    return names, ids, values, ties, last


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
    run = _read(read_text(predictions), 6)
    qrels = _read(read_text(references), 4) if run is not None else None
    if run is None or qrels is None:
        return None
    width = max((b.shape[1] for b in (*run[1], *qrels[1])), default=8)
    r_ids, q_ids = _widen(run[1], width), _widen(qrels[1], width)
    score = np.concatenate(run[2]) if run[2] else np.zeros(0)
    grade = np.concatenate(qrels[2]) if qrels[2] else np.zeros(0, np.int64)
    if not np.isfinite(score).all():
        return None
    # the run's queries in file order, its lines in trec_eval's order
    r_queries, r_first, r_of = trec._unique(np.concatenate(run[0]) if run[0] else np.zeros(0, "S1"))
    in_file = np.argsort(r_first)
    place = np.empty_like(in_file)
    place[in_file] = np.arange(in_file.size)
    query = place[r_of]
    if run[3] and trec._in_order(query, score):
        order = np.arange(score.size)
    else:
        words = r_ids.view(">u8")
        order = np.lexsort((*[~words[:, j] for j in range(words.shape[1] - 1, -1, -1)], -score, query))
    # the qrels' queries in trec_eval's order (by their bytes: np.unique's); a document judged twice: not coded
    q_queries, _, q_of = trec._unique(np.concatenate(qrels[0]) if qrels[0] else np.zeros(0, "S1"))
    q_keys = _hash(q_ids, q_of)
    by_key = np.argsort(q_keys)
    sorted_keys = q_keys[by_key]
    if (sorted_keys[1:] == sorted_keys[:-1]).any():
        return None
    run_queries = r_queries[in_file]
    judged_query = np.full(in_file.size, -1, np.int64)  # each run query's number among the qrels' queries, or -1
    if q_queries.size:
        at = np.minimum(np.searchsorted(q_queries, run_queries), q_queries.size - 1)
        judged_query = np.where(q_queries[at] == run_queries, at, -1)
    # the run's lines hashed with their query's number among the qrels' (an unjudged query: one past them), sorted:
    # a document ranked twice for one query is not coded; the judged lines found in one pass over both sorted keys
    salt = np.where(judged_query >= 0, judged_query, q_queries.size + np.arange(in_file.size))
    r_keys = _hash(r_ids, salt[query])
    r_order = np.argsort(r_keys)
    r_sorted = r_keys[r_order]
    if (r_sorted[1:] == r_sorted[:-1]).any():
        return None
    line_query = judged_query[query]
    code = np.full(score.size, -1, np.int64)
    if sorted_keys.size and score.size:
        found = np.minimum(np.searchsorted(sorted_keys, r_sorted), sorted_keys.size - 1)
        hit = np.flatnonzero(sorted_keys[found] == r_sorted)
        line, row = by_key[found[hit]], r_order[hit]
        same = (q_of[line] == line_query[row]) & (q_ids[line] == r_ids[row]).all(axis=1)  # byte for byte
        line, row = line[same], row[same]
        code[row] = np.where(grade[line] >= 0, grade[line], -2)
    # each query evaluated: its lines in trec_eval's order, cut at max_retrieved
    ends = np.cumsum(np.bincount(query, minlength=in_file.size))
    starts = ends - np.bincount(query, minlength=in_file.size)
    ranked_as = np.full(q_queries.size, -1, np.int64)  # each qrels query's number among the run's, -1 for none
    ranked_as[judged_query[judged_query >= 0]] = np.flatnonzero(judged_query >= 0)
    evaluated = np.arange(q_queries.size) if complete else np.flatnonzero(ranked_as >= 0)
    coded = code[order]
    by_query = np.argsort(q_of, kind="stable")
    grade_ends = np.cumsum(np.bincount(q_of, minlength=q_queries.size))
    sorted_grades = grade[by_query]
    codes, empty, judged = [], [], []
    for r, g_end, g_size in zip(
        ranked_as[evaluated].tolist(),
        grade_ends[evaluated].tolist(),
        np.bincount(q_of, minlength=q_queries.size)[evaluated].tolist(),
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
        run_id=run[4],
    )
