r"""TREC relevance judgements (qrels) and runs, as trec_eval reads them.

* A qrels line is ``query iteration document grade`` (four fields separated by white space; the iteration is
  ignored): the grade is an integer, relevant from the relevance level up, judged non-relevant from 0 below it,
  unjudged when negative.
* A run line is ``query Q0 document rank score run_id`` (six fields or more; ``Q0`` and ``rank`` are ignored, further
  fields too, as trec_eval does): documents are ranked by score, descending, ties broken by document id, descending
  (trec_eval's order; the file's rank column plays no part).

A plain file (ASCII, no comment, the same number of fields on every line: what systems write) is read in bulk,
in blocks of about 512 KB of whole lines, its scores parsed as ``float()`` parses them: its fields, padded ids and
scores by a compiled reader (``_trec_scan``, built from C where the package is installed with a C compiler; NumPy
where it was not, with the same values); any other file line by line, with the same result. A score is a decimal
number in ASCII and a grade ASCII digits, as trec_eval reads them whole (Python's ``1_5``, ``inf`` or other scripts'
digits are refused: trec_eval would read another number).
Lines starting with ``#`` are comments and blank lines are skipped; a UTF-8 byte-order mark and CRLF line endings
are accepted. A line of the wrong shape, a grade that is not an integer, a score that is not a decimal number, a
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

import math
import os
import re
import types
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text

_trec_scan: types.ModuleType | None
try:  # the compiled reader of plain fields (built where the package was installed with a C compiler)
    from metametric_jax.tasks.readers import _trec_scan
except ImportError:  # pragma: no cover - without it, NumPy reads the fields
    _trec_scan = None

__all__ = ["Run", "parse_qrels", "parse_run", "read_qrels", "read_run"]


class Run(NamedTuple):
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
_WIDEST = 64  # the longest field read in bulk (a longer one: line by line)
_BLOCK = 1 << 19  # characters of a file read in bulk at once (whole lines): a block's arrays stay a few MB


def _blocks(text: str) -> Iterator[str]:
    """``text`` in blocks of whole lines of about :data:`_BLOCK` characters (the last block: the rest).

    A large file's fields are found block by block: the byte-sized and offset arrays of the whole of a 100 MB run
    would take a gigabyte at once, every page of it faulted in afresh. Blocks of 512 KB rather than 2 MB reuse the
    same few megabytes block after block: the 100 MB run's command 3.3 -> 3.0 s (547 -> 522 MB at the peak), a
    300 x 1,000 run read 186 -> 167 ms.
    """
    start = 0
    while start < len(text):
        cut = text.find("\n", start + _BLOCK - 1)
        end = len(text) if cut < 0 else cut + 1
        yield text[start:end]
        start = end


class _Fields(NamedTuple):
    """The fields of a file whose every non-blank line has the same number of them: one row a line."""

    text: str  # the file's text (ASCII: a character's offset is its byte's)
    data: np.ndarray  # the file's bytes
    start: np.ndarray  # (lines, fields) offsets of each field's first byte
    end: np.ndarray  # (lines, fields) offsets past each field's last byte
    compiled: tuple[bytearray, int, int] | None = None  # the compiled reader's (buffer, count, capacity) of them

    def column(self, k: int) -> list[bytes]:
        """The ``k``-th field of every line."""
        return self.strings(k).tolist()  # type: ignore[no-any-return]

    def chars(self, k: int, multiple: int = 1, rows: np.ndarray | None = None) -> np.ndarray:
        """The bytes of the ``k``-th field of every line (or of ``rows``), NUL-padded.

        ``(lines, width)`` uint8, the width a multiple of ``multiple`` (rows copied by :func:`_window`).
        """
        if rows is None and self.compiled is not None:
            assert _trec_scan is not None
            chars, width = _trec_scan.chars(self.data, *self.compiled, self.start.shape[1], k, multiple)
            return np.frombuffer(chars, np.uint8).reshape(-1, width)
        start, end = (self.start[:, k], self.end[:, k]) if rows is None else (self.start[rows, k], self.end[rows, k])
        length = end - start
        width = -(-max(int(length.max()) if length.size else 1, 1) // multiple) * multiple
        columns = np.arange(width)
        out = _window(self.data, start, width)
        out *= columns < length[:, None]
        return out

    def cut(self, k: int, rows: np.ndarray | None = None) -> list[str]:
        """The ``k``-th field of every line (or of ``rows``) as Python strings.

        Short fields are gathered in bulk (their bytes joined with newlines, decoded once and split); longer ones,
        from :data:`_SLICED` characters on average, sliced from the text one by one, whose cost does not grow with
        the length: for 8-character ids gathering took 0.8 of slicing's time, for 45-character MS MARCO segment
        ids 2.5 times it.
        """
        start, end = (self.start[:, k], self.end[:, k]) if rows is None else (self.start[rows, k], self.end[rows, k])
        if not start.size:
            return []
        size = end - start + 1  # the field and the white space after it
        ends = np.cumsum(size)
        if int(ends[-1]) >= _SLICED * start.size:
            text = self.text
            return [text[a:b] for a, b in zip(start.tolist(), end.tolist())]
        at = np.arange(int(ends[-1])) + np.repeat(start - (ends - size), size)
        joined = self.data[np.minimum(at, self.data.size - 1)]
        joined[ends - 1] = 10
        return joined.tobytes().decode("ascii").split("\n")[:-1]

    def numbers(self, k: int) -> np.ndarray:
        """``float()`` of the ``k``-th field of every line, bit for bit; ``ValueError`` where one is no decimal number.

        Fields found by the compiled reader are checked and converted there, each by the conversion ``float()``
        itself calls. Otherwise plain decimals are parsed in bulk (:func:`_decimals`); any other field (an exponent,
        ``inf``, more digits than :func:`_decimals` reads, a double rounding it cannot rule out) goes to
        :func:`decimal`.
        """
        if self.compiled is not None:
            assert _trec_scan is not None
            parsed_all = _trec_scan.numbers(self.data, *self.compiled, self.start.shape[1], k)
            if parsed_all is None:
                raise ValueError(f"not a decimal number in field {k + 1}")
            return np.frombuffer(parsed_all, np.float64)
        values, parsed = _decimals(self.data, self.start[:, k], self.end[:, k])
        rest = np.flatnonzero(~parsed)
        if rest.size:
            values[rest] = list(map(decimal, self.cut(k, rest)))
        return values

    def strings(self, k: int) -> np.ndarray:
        """The ``k``-th field of every line as a NumPy byte-string array."""
        chars = self.chars(k)
        return chars.view(f"S{chars.shape[1]}").reshape(-1)


def _fields(text: str, width: int) -> _Fields | None:
    """The fields of ``text`` in bulk when it is plain, ``None`` otherwise (read it line by line).

    Plain: ASCII, no comment, no control character but white space, exactly ``width`` fields on each non-blank line
    and none longer than :data:`_WIDEST` bytes. The fields are those of ``line.split()`` for each line of
    the text split at newlines; reading line by line also names the first bad line.
    """
    if not text.isascii():
        return None
    data = np.frombuffer(text.encode("ascii"), np.uint8)
    if _trec_scan is not None:
        found = _trec_scan.fields(data, width)
        if found is None:
            return None
        bounds, count, capacity = found
        both = np.frombuffer(bounds, np.int64)
        start, end = both[:count].reshape(-1, width), both[capacity : capacity + count].reshape(-1, width)
        return _Fields(text, data, start, end, found)
    return _fields_numpy(text, data, width)


def _fields_numpy(text: str, data: np.ndarray, width: int) -> _Fields | None:
    """:func:`_fields` in NumPy (where the compiled reader was not built)."""
    newlines = np.flatnonzero(data == 10)
    if np.count_nonzero(data < 32) != newlines.size and ((data < 9) | ((data > 13) & (data < 28))).any():
        return None  # a control character that str.split() keeps (none when newlines are the only ones)
    space = data <= 32  # white space, as str.split() has it, once the other control characters are ruled out
    change = np.empty(data.size + 1, bool)  # where a field starts or ends
    np.not_equal(space[1:], space[:-1], out=change[1:-1])
    change[0], change[-1] = data.size and not space[0], data.size and not space[-1]
    edges = np.flatnonzero(change)  # alternately a field's start and its end
    start, end = edges[0::2], edges[1::2]
    if start.size % width or (start.size and int((end - start).max()) > _WIDEST):
        return None  # not `width` fields a line, or a field too long
    start, end = start.reshape(-1, width), end.reshape(-1, width)
    if (data[start[:, 0]] == 35).any():
        return None  # a line that starts with '#' (a comment; with white space before it, line by line all the same)
    first, last = np.searchsorted(newlines, start[:, 0]), np.searchsorted(newlines, start[:, -1])
    if not (first == last).all() or not (first[1:] > last[:-1]).all():  # a line's fields on it, one line a row
        return None
    return _Fields(text, data, start, end)


def _window(data: np.ndarray, begin: np.ndarray, width: int) -> np.ndarray:
    """``data[b : b + width]`` for each ``b`` of ``begin``, a row each (a writable copy); bytes outside ``data``: any.

    Each row is copied whole from a sliding window over the bytes, not byte by byte through an index matrix (0.5-0.9
    of the time for 44- to 11-byte rows); only a row that starts before the bytes or runs past their end is gathered
    byte by byte.
    """
    last = data.size - width  # the last start of a whole window
    if last < 0:
        return data.take(begin[:, None] + np.arange(width), mode="clip")
    windows = sliding_window_view(data, width)
    if not begin.size or (int(begin.min()) >= 0 and int(begin.max()) <= last):
        return windows[begin]
    out = windows[np.clip(begin, 0, last)]
    outside = np.flatnonzero((begin < 0) | (begin > last))
    out[outside] = data.take(begin[outside, None] + np.arange(width), mode="clip")
    return out


_SLICED = 13  # fields of this many characters on average (a white space after each included) or more: sliced
_U = np.uint64
_EXTENDED = np.finfo(np.longdouble).nmant in (63, 112)  # x87's 80-bit or IEEE's 128-bit long double (not double-double)
_TEN = np.array([10**k for k in range(23)], np.float64)  # exact
_TEN_LONG = np.array([10**k for k in range(28)], np.longdouble)  # exact: 5**27 < 2**64
_TEN_INT = np.array([10**k for k in range(20)], np.uint64)
_ZEROS = np.array([int.from_bytes(b"0" * k + bytes(8 - k), "little") for k in range(9)], np.uint64)  # k '0's first
_KEPT = np.array([int.from_bytes(bytes(k) + b"\xff" * (8 - k), "little") for k in range(9)], np.uint64)  # all but k
_ONES, _TOPS, _POINTS = _U(0x0101010101010101), _U(0x8080808080808080), _U(0x2E2E2E2E2E2E2E2E)
_NIBBLES, _SIXES, _THREES = _U(0xF0F0F0F0F0F0F0F0), _U(0x0606060606060606), _U(0x3030303030303030)


def _decimals(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``float()`` of the plain decimals ``data[start:end]``, bit for bit, and which fields were plain decimals.

    A plain decimal is ``[+-]digits[.digits]``, 32 bytes at most, its digits (leading zeros included) making an
    integer below 10**19 and at most 27 after the point. Each field is read right-aligned in 8-byte words (the bytes
    before it read as ``'0'``, its point found and read as ``'0'``), each word's 8 digits at once (SWAR: three
    multiplications), and its digits ``n`` and count ``f`` after the point give ``n / 10**f``:

    * ``n < 2**53`` and ``f <= 22``: both exact doubles, so their quotient is correctly rounded, as ``float()``'s
      result is (Clinger's fast path);
    * otherwise, where the long double is x87's 80-bit format or IEEE's binary128 (64 or 113 bits of significand,
      correctly rounded arithmetic): ``n`` and ``10**f`` are exact in it and their quotient is correctly rounded;
      rounding that to a double gives ``float()``'s result unless it lies exactly halfway between two doubles (a
      double rounding): a quotient whose 11 bits after a double's 53 read ``10000000000`` is left to ``float()``.
      Elsewhere (a long double that is a double, or IBM's double-double) such fields are left to ``float()``.

    Returns:
        ``(values, parsed)``: the values (garbage where not parsed) and a boolean mask of the fields parsed.
    """
    n = start.size
    lead = data[start]
    negative = lead == 45
    first = start + (negative | (lead == 43))  # the first digit or point
    length = end - first
    words = max(1, -(-int(length.max(initial=0)) // 8))
    if words > 4:
        return np.zeros(n), np.zeros(n, bool)
    grid = _window(data, end - 8 * words, 8 * words).view("<u8")  # the field right-aligned, its last word last
    before = np.clip(8 * words - length, 0, 8 * words)  # bytes before the field, read as '0'
    parsed = np.ones(n, bool)
    points = np.zeros(n, np.int64)
    after = np.zeros(n, np.int64)  # digits after the point
    number = np.zeros(n, np.uint64)  # the digits (the point read as '0')
    for j in range(words):
        skip = np.clip(before - 8 * j, 0, 8)
        word = (grid[:, j] & _KEPT[skip]) | _ZEROS[skip]
        marked = word ^ _POINTS  # a point's byte: zero
        point = (marked - _ONES) & ~marked & _TOPS  # the top bit of each zero byte (exact for the first one)
        point &= ~point + _U(1)  # the first point's alone
        word ^= (point >> _U(7)) * _U(0x1E)  # '.' read as '0'
        found = point != 0
        place = (np.frexp(point.astype(np.float64))[1] - 8) // 8  # its byte in the word, first byte 0
        after = np.where(found, 8 * (words - 1 - j) + 7 - place, after)
        points += found
        parsed &= ((word & _NIBBLES) == _THREES) & (((word + _SIXES) & _NIBBLES) == _THREES)  # all digits
        x = word - _THREES  # eight digits at once, the first byte the most significant
        x = (x * _U(10) + (x >> _U(8))) & _U(0x00FF00FF00FF00FF)
        x = (x * _U(100) + (x >> _U(16))) & _U(0x0000FFFF0000FFFF)
        x = (x * _U(10000) + (x >> _U(32))) & _U(0xFFFFFFFF)
        if j < words - 3:  # more than 19 digits
            parsed &= x == 0
        elif j == words - 3:
            parsed &= x < 1000
            number = x
        else:
            number = number * _U(100000000) + x
    parsed &= (points <= 1) & (length > points) & (after <= 27)
    fraction = number % _TEN_INT[np.minimum(after, 19)]
    number = np.where(points > 0, (number - fraction) // _U(10) + fraction, number)  # the point's '0' taken out
    value = number.astype(np.float64) / _TEN[np.minimum(after, 22)]
    wide = np.flatnonzero((number >= _U(1 << 53)) | (after > 22))
    if wide.size and _EXTENDED:
        exact = number[wide].astype(np.longdouble) / _TEN_LONG[np.minimum(after[wide], 27)]
        significand = np.ldexp(np.frexp(exact)[0], 64).astype(np.uint64)
        parsed[wide] &= (significand & _U(0x7FF)) != _U(0x400)  # not halfway between two doubles
        value[wide] = exact.astype(np.float64)
    elif wide.size:
        parsed[wide] = False
    return np.where(negative, -value, value), parsed


def _integers(chars: np.ndarray) -> np.ndarray | None:
    """``int()`` of each row of NUL-padded ASCII, when every row is a sign or none and 1 to 18 digits; else ``None``.

    What qrels hold (grades such as ``0``, ``2``, ``-1``); any other form (an underscore, which ``int()`` takes, a
    point, which it refuses) is left to ``int()`` itself.
    """
    body, digit = _unsigned(chars)
    digits = np.count_nonzero(digit, axis=1)
    if not ((digit | (body == 0)).all() and (digits >= 1).all() and (digits <= 18).all()):
        return None
    values = _digits(body, digit)
    return np.where(chars[:, 0] == 45, -values, values)


def _unsigned(chars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of NUL-padded ASCII with a leading ``+`` or ``-`` cleared to NUL, and which of their bytes are digits."""
    body = chars.copy()
    body[(chars[:, 0] == 45) | (chars[:, 0] == 43), 0] = 0
    return body, (body >= 48) & (body <= 57)


def _digits(body: np.ndarray, digit: np.ndarray) -> np.ndarray:
    """Each row's digits read as one integer, the other bytes skipped (at most 18 digits: exact in int64)."""
    value = np.zeros(body.shape[0], np.int64)
    for j in range(body.shape[1]):
        value = np.where(digit[:, j], value * 10 + (body[:, j].astype(np.int64) - 48), value)
    return value


def _unique(names: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(names, return_index=True, return_inverse=True)``, sorting one name per run of equal ones.

    Files hold each query's lines together: a few thousand runs of names to sort instead of millions of lines.
    """
    if not names.size:
        return np.unique(names, return_index=True, return_inverse=True)  # type: ignore[no-any-return]
    heads = np.flatnonzero(np.concatenate(([True], names[1:] != names[:-1])))
    unique, first, inverse = np.unique(names[heads], return_index=True, return_inverse=True)
    return unique, heads[first], np.repeat(inverse, np.diff(np.append(heads, names.size)))


def _bulk_qrels(text: str) -> dict[str, dict[str, int]] | None:
    grades: list[int] = []
    docs: list[str] = []
    names = []
    for block in _blocks(text):
        fields = _fields(block, 4)
        if fields is None:
            return None
        parsed = _integers(fields.chars(3))
        if parsed is None:  # another form (19 digits or more, or no integer): line by line
            return None
        grades.extend(parsed.tolist())
        docs.extend(fields.cut(2))
        names.append(fields.strings(0))
    out: dict[str, dict[str, int]] = {}
    if not grades:
        return out
    strings = np.concatenate(names)
    del names
    queries, first, query_of = _unique(strings)
    if (np.diff(query_of) != 0).sum() == queries.size - 1:  # each query's lines together: a dict per run of lines
        order = np.argsort(first)
        bounds = [*first[order].tolist(), len(docs)]
        for name, a, b in zip(queries[order].astype("U").tolist(), bounds, bounds[1:]):
            out[name] = dict(zip(docs[a:b], grades[a:b]))
        return out if sum(map(len, out.values())) == len(grades) else None  # or a document judged twice
    for query, doc, grade in zip(strings.astype("U").tolist(), docs, grades):
        judged = out.get(query)
        if judged is None:
            judged = out[query] = {}
        judged[doc] = grade
    if sum(map(len, out.values())) != len(grades):
        return None  # a document judged twice
    return out


def _in_order(query: np.ndarray, scores: np.ndarray) -> bool:
    """Whether each query's lines are together and its scores descending (``query``: codes in file order)."""
    if query.size < 2:
        return True
    same = query[1:] == query[:-1]
    return bool((query[1:] >= query[:-1]).all() and (~same | (scores[1:] <= scores[:-1])).all())


def _ties_descending(names: np.ndarray, scores: np.ndarray, fields: _Fields) -> bool:
    """Whether adjacent lines of one query and one score have their document ids strictly descending.

    ``names`` and ``scores``: the query and score of each line of ``fields``. The ids are compared as big-endian
    8-byte words, NUL-padded: their order is the ids' (NUL padding sorts first, as a prefix does).
    """
    tied = np.flatnonzero((names[1:] == names[:-1]) & (scores[1:] == scores[:-1]))
    if not tied.size:
        return True
    pairs = fields.chars(2, 8, np.concatenate([tied, tied + 1])).view(">u8")
    upper, lower = pairs[: tied.size], pairs[tied.size :]
    differ = upper != lower
    first = differ.argmax(axis=1)  # the first word where the two ids differ
    rows = np.arange(tied.size)
    return bool((differ.any(axis=1) & (upper[rows, first] > lower[rows, first])).all())


def _widened(blocks: list[np.ndarray], width: int) -> np.ndarray:
    """The rows of ``blocks`` (uint8, each as wide as its longest id) in one array ``width`` bytes wide, NUL-padded."""
    if not blocks:
        return np.zeros((0, width), np.uint8)
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[1]))) for b in blocks])


class _Lines(NamedTuple):
    """A run's lines read in bulk (:func:`_run_lines`)."""

    queries: np.ndarray  # the queries' names (byte strings), in file order
    query: np.ndarray  # each line's query: its number in file order
    ids: np.ndarray  # (lines, width) uint8: each line's document id, NUL-padded to a multiple of 8 bytes
    docs: list[str]  # each line's document id as a string, when asked for
    order: np.ndarray | None  # the lines in trec_eval's order (query, score descending, id descending); None: as read
    run_id: str  # the last line's run_id field, "" for an empty run


def _run_lines(text: str, strings: bool) -> _Lines | None:
    """The lines of a plain run (``None`` otherwise: read it line by line), their document ids as strings if asked."""
    names: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    docs: list[str] = []  # in file order
    ties = True  # whether the lines of each query and score so far have their ids descending
    run_id = ""
    for block in _blocks(text):
        fields = _fields(block, 6)
        if fields is None:
            return None
        if not fields.start.shape[0]:
            continue
        try:
            scored = fields.numbers(4)
        except ValueError:
            return None
        named, chars = fields.strings(0), fields.chars(2, 8)
        if ties and names and named[0] == names[-1][-1] and scored[0] == scores[-1][-1]:
            ties = bytes(ids[-1][-1]).rstrip(b"\0") > bytes(chars[0]).rstrip(b"\0")  # a tie across two blocks
        ties = ties and _ties_descending(named, scored, fields)
        names.append(named)
        scores.append(scored)
        ids.append(chars)
        if strings:
            docs.extend(fields.cut(2))
        end = fields.start.shape[0] - 1
        run_id = bytes(fields.data[fields.start[end, 5] : fields.end[end, 5]]).decode("ascii")
    score = np.concatenate(scores) if scores else np.zeros(0)
    if not np.isfinite(score).all():
        return None
    chars = _widened(ids, max((c.shape[1] for c in ids), default=8))
    queries, first, query_of = _unique(np.concatenate(names) if names else np.zeros(0, "S1"))
    in_file = np.argsort(first)  # the queries in file order
    place = np.empty_like(in_file)
    place[in_file] = np.arange(in_file.size)
    query = place[query_of]
    order = None  # in order already: what systems write
    if not (ties and _in_order(query, score)):
        words = chars.view(">u8")  # the ids' order: big-endian words, NUL padding first as a prefix sorts first
        order = np.lexsort((*[~words[:, j] for j in range(words.shape[1] - 1, -1, -1)], -score, query))
    return _Lines(queries[in_file], query, chars, docs, order, run_id)


def _bulk_run(text: str) -> Run | None:
    lines = _run_lines(text, strings=True)
    if lines is None:
        return None
    docs = lines.docs
    ranked = docs if lines.order is None else [docs[i] for i in lines.order.tolist()]
    bounds = np.cumsum(np.bincount(lines.query, minlength=lines.queries.size)).tolist()
    ids = lines.queries.astype("U").tolist()
    rankings = {q: ranked[a:b] for q, a, b in zip(ids, [0, *bounds[:-1]], bounds)}
    if any(len(set(listed)) != len(listed) for listed in rankings.values()):
        return None  # a document ranked twice for one query
    return Run(rankings, lines.run_id)


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
        if _INTEGER.fullmatch(grade) is None:
            raise InputFormatError(path, number, f"expected an integer grade in field 4, found {grade!r}")
        value = int(grade)
        judged = out.setdefault(query, {})
        if doc in judged:
            raise InputFormatError(path, number, f"document {doc!r} is judged twice for query {query!r}")
        judged[doc] = value
    return out


#: A grade as trec_eval reads one whole: ASCII digits after an optional sign (``int()`` also takes ``1_0`` and other
#: scripts' digits, which trec_eval's ``atol`` reads as another number or none).
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: A score as trec_eval reads one whole: a decimal number in ASCII, with an optional exponent (``float()`` also takes
#: ``1_5``, ``inf`` and other scripts' digits, which trec_eval's ``atof`` reads as another number).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimal(field: str) -> float:
    """``float()`` of a score written as a decimal number in ASCII; ``ValueError`` for any other form."""
    if _NUMBER.fullmatch(field) is None:
        raise ValueError(f"not a decimal number: {field!r}")
    return float(field)


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
            value = decimal(score)
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
