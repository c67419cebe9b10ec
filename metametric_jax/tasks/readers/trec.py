r"""TREC relevance judgements (qrels) and runs, as trec_eval reads them.

* A qrels line is ``query iteration document grade`` (four fields separated by white space; the iteration is
  ignored): the grade is an integer, relevant from the relevance level up, judged non-relevant from 0 below it,
  unjudged when negative.
* A run line is ``query Q0 document rank score run_id`` (six fields or more; ``Q0`` and ``rank`` are ignored, further
  fields too, as trec_eval does): documents are ranked by score, descending, ties broken by document id, descending
  (trec_eval's order; the file's rank column plays no part).

A plain file (ASCII, no comment, the same number of fields on every line: what systems write) is read in bulk
(its shape checked with NumPy, its fields split at once), a run already in trec_eval's order left unsorted; any
other file line by line, with the same result. Scores are parsed as ``float()`` parses them.
Lines starting with ``#`` are comments and blank lines are skipped; a UTF-8 byte-order mark and CRLF line endings
are accepted. A line of the wrong shape, a grade that is not an integer, a score that is not a finite number, a
document judged or ranked twice for one query (trec_eval stops on both) are an
:class:`~metametric_jax.errors.InputFormatError` naming the file, the line, what was expected and what was found.

Example:
    >>> parse_qrels("q1 0 d1 1\nq1 0 d2 0\n", "qrels.txt")
    {'q1': {'d1': 1, 'd2': 0}}
    >>> run = parse_run("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d3 3 0.9 r\n", "run.txt")
    >>> run.rankings
    {'q1': ['d3', 'd2', 'd1']}
    >>> parse_run("q1 Q0 d1 1 high r\n", "run.txt")
    Traceback (most recent call last):
    ...
    metametric_jax.errors.InputFormatError: run.txt:1: expected a number in field 5 (score), found 'high'
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text

__all__ = ["Run", "parse_qrels", "parse_run", "read_qrels", "read_run"]


@dataclasses.dataclass(frozen=True)
class Run:
    """A run: for each query its documents in trec_eval's order, and the run's name.

    Attributes:
        rankings: ``{query: [document, ...]}``, best first, queries in file order.
        run_id: the last line's ``run_id`` field (trec_eval's ``runid``), ``""`` for an empty run.
    """

    rankings: dict[str, list[str]]
    run_id: str


def _lines(text: str) -> Iterator[tuple[int, list[str]]]:
    if text.startswith("\ufeff"):
        text = text[1:]
    for number, raw in enumerate(text.split("\n"), 1):
        fields = raw.split()
        if fields and not raw.startswith("#"):
            yield number, fields


# ---------------------------------------------------------------------------------------------- in bulk
def _columns(text: str, width: int) -> list[str] | None:
    """Every field of ``text`` in file order (``text.split()``) when it is plain, ``None`` otherwise.

    Plain: ASCII, no comment, no control character but white space, and exactly ``width`` fields on each non-blank
    line, so that field ``k`` of line ``i`` (counting non-blank lines) is item ``i * width + k``. Reading line by line
    names the first line that is not.
    """
    if not text.isascii() or text.startswith("#") or "\n#" in text:
        return None
    data = np.frombuffer(text.encode("ascii"), np.uint8)
    if ((data < 9) | ((data > 13) & (data < 28))).any():  # a control character that str.split() keeps
        return None
    word = data > 32  # not white space, as str.split() has it once the other control characters are ruled out
    starts = np.flatnonzero(word[1:] & ~word[:-1]) + 1  # each field's first byte
    if word[:1].any():
        starts = np.concatenate([[0], starts])
    if starts.size % width:
        return None
    newlines = np.flatnonzero(data == 10)
    first, last = np.searchsorted(newlines, starts[0::width]), np.searchsorted(newlines, starts[width - 1 :: width])
    if not (first == last).all() or not (first[1:] > last[:-1]).all():  # a line's fields on it, one line a row
        return None
    return text.split()


def _together(queries: list[str]) -> list[int] | None:
    """Where each query's lines begin and where the last ends, when each query's lines are together; else ``None``."""
    bounds = [0, *(i for i, (a, b) in enumerate(zip(queries, queries[1:]), 1) if a != b), len(queries)]
    return bounds if len(bounds) - 1 == len(set(queries)) else None


def _bulk_qrels(text: str) -> dict[str, dict[str, int]] | None:
    fields = _columns(text, 4)
    if fields is None:
        return None
    try:
        grades = list(map(int, fields[3::4]))
    except ValueError:
        return None
    queries, docs = fields[0::4], fields[2::4]
    out: dict[str, dict[str, int]] = {}
    bounds = _together(queries)
    if bounds is not None:  # a dict per query's lines
        for a, b in zip(bounds, bounds[1:]):
            out[queries[a]] = dict(zip(docs[a:b], grades[a:b]))
    else:
        for query, doc, grade in zip(queries, docs, grades):
            judged = out.get(query)
            if judged is None:
                judged = out[query] = {}
            judged[doc] = grade
    return out if sum(map(len, out.values())) == len(grades) else None  # or a document judged twice


def _in_order(scores: np.ndarray, docs: list[str], bounds: list[int]) -> bool:
    """Whether each query's lines (``bounds``) are in trec_eval's order: scores descending, ties by id descending."""
    inside = np.ones(max(scores.size - 1, 0), bool)  # pairs of neighbouring lines of one query
    inside[np.array(bounds[1:-1], np.int64) - 1] = False
    if (inside & (scores[1:] > scores[:-1])).any():
        return False
    return all(docs[i] > docs[i + 1] for i in np.flatnonzero(inside & (scores[1:] == scores[:-1])).tolist())


def _bulk_run(text: str) -> Run | None:
    fields = _columns(text, 6)
    if fields is None:
        return None
    if not fields:
        return Run({}, "")
    try:
        values = list(map(float, fields[4::6]))
    except ValueError:
        return None
    scores = np.array(values)
    if not np.isfinite(scores).all():
        return None
    queries, docs = fields[0::6], fields[2::6]
    bounds = _together(queries)
    if bounds is not None and _in_order(scores, docs, bounds):  # what systems write: no sort
        rankings = {queries[a]: docs[a:b] for a, b in zip(bounds, bounds[1:])}
        if any(len(set(ranked)) != len(ranked) for ranked in rankings.values()):
            return None  # a document ranked twice for one query
    else:
        scored: dict[str, dict[str, float]] = {}
        for query, doc, value in zip(queries, docs, values):
            ranked_scores = scored.get(query)
            if ranked_scores is None:
                ranked_scores = scored[query] = {}
            ranked_scores[doc] = value
        if sum(map(len, scored.values())) != len(values):
            return None  # a document ranked twice for one query
        rankings = _ranked(scored)
    return Run(rankings, fields[-1])


def _ranked(scored: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Each query's documents by score, descending, ties by document id, descending (trec_eval's order)."""
    return {q: [d for _, d in sorted(((s, d) for d, s in docs.items()), reverse=True)] for q, docs in scored.items()}


# ---------------------------------------------------------------------------------------------- line by line
def parse_qrels(text: str, path: str = "<string>") -> dict[str, dict[str, int]]:
    """Relevance judgements ``{query: {document: grade}}`` from the text of a qrels file (queries in file order).

    Raises:
        InputFormatError: a line without exactly four fields, a grade that is not an integer, or a document judged
            twice for one query.
    """
    bulk = _bulk_qrels(text)
    if bulk is not None:
        return bulk
    out: dict[str, dict[str, int]] = {}
    for number, fields in _lines(text):
        if len(fields) != 4:
            raise InputFormatError(
                path, number, f"expected 4 fields (query iteration document grade), found {len(fields)}: {fields}"
            )
        query, _, doc, grade = fields
        try:
            value = int(grade)
        except ValueError:
            raise InputFormatError(path, number, f"expected an integer grade in field 4, found {grade!r}") from None
        judged = out.setdefault(query, {})
        if doc in judged:
            raise InputFormatError(path, number, f"document {doc!r} is judged twice for query {query!r}")
        judged[doc] = value
    return out


def parse_run(text: str, path: str = "<string>") -> Run:
    """A run from the text of a TREC run file, each query's documents in trec_eval's order.

    Raises:
        InputFormatError: a line with fewer than six fields, a score that is not a finite number, or a document
            ranked twice for one query.
    """
    bulk = _bulk_run(text)
    if bulk is not None:
        return bulk
    scored: dict[str, dict[str, float]] = {}
    run_id = ""
    for number, fields in _lines(text):
        if len(fields) < 6:
            raise InputFormatError(
                path,
                number,
                f"expected 6 fields (query Q0 document rank score run_id), found {len(fields)}: {fields}",
            )
        query, _, doc, _, score, run_id = fields[:6]
        try:
            value = float(score)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise InputFormatError(path, number, f"expected a number in field 5 (score), found {score!r}")
        docs = scored.setdefault(query, {})
        if doc in docs:
            raise InputFormatError(path, number, f"document {doc!r} is ranked twice for query {query!r}")
        docs[doc] = value
    return Run(_ranked(scored), run_id)


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Relevance judgements from a qrels file (see :func:`parse_qrels`)."""
    return parse_qrels(read_text(path), str(path))


def read_run(path: str | os.PathLike[str]) -> Run:
    """A run from a TREC run file (see :func:`parse_run`)."""
    return parse_run(read_text(path), str(path))
