r"""TREC relevance judgements (qrels) and runs, as trec_eval reads them.

* A qrels line is ``query iteration document grade`` (four fields separated by white space; the iteration is
  ignored): the grade is an integer, relevant from the relevance level up, judged non-relevant from 0 below it,
  unjudged when negative.
* A run line is ``query Q0 document rank score run_id`` (six fields or more; ``Q0`` and ``rank`` are ignored, further
  fields too, as trec_eval does): documents are ranked by score, descending, ties broken by document id, descending
  (trec_eval's order; the file's rank column plays no part).

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


def parse_qrels(text: str, path: str = "<string>") -> dict[str, dict[str, int]]:
    """Relevance judgements ``{query: {document: grade}}`` from the text of a qrels file (queries in file order).

    Raises:
        InputFormatError: a line without exactly four fields, a grade that is not an integer, or a document judged
            twice for one query.
    """
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
    rankings = {
        q: [d for _, d in sorted(((s, d) for d, s in docs.items()), reverse=True)] for q, docs in scored.items()
    }
    return Run(rankings, run_id)


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Relevance judgements from a qrels file (see :func:`parse_qrels`)."""
    return parse_qrels(read_text(path), str(path))


def read_run(path: str | os.PathLike[str]) -> Run:
    """A run from a TREC run file (see :func:`parse_run`)."""
    return parse_run(read_text(path), str(path))
