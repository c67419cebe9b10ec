r"""CoNLL column files for tagging tasks (NER, chunking): the two-file layout and ``conlleval``'s one-file layout.

The format (CoNLL-2000 / CoNLL-2003, Tjong Kim Sang & De Meulder 2003): one token per line, columns separated by
whitespace (or by ``delimiter``, a regular expression as ``conlleval -d`` takes it), a blank line ends a sentence.
Every non-blank line of a file has the same number of columns.

* **Two files** (:func:`read_conll`): the **last column** is the tag, the first the token (when there are two
  columns or more); a reference file and a prediction file hold the same sentences.
* **One file** (:func:`read_conlleval`), the layout ``conlleval.pl`` reads on standard input: the last two columns
  are the reference tag and the predicted tag, in that order. As in ``conlleval``, a line whose first field is
  ``-X-`` also ends a sentence.

In both layouts a ``-DOCSTART-`` line ends a sentence and starts a document, which the reader records
(:attr:`ConllSentences.doc_starts`, :meth:`ConllSentences.documents`). ``conlleval`` reads such a line as a token
with its tags (usually ``O``), so its "processed N tokens" and accuracy include these lines, and one carrying an entity
tag is a chunk; the reader keeps each line's place, line number and tag (:attr:`ConllSentences.docstart_tags`: its
last column, in the one-file layout the last two; ``O`` where the line has no field after the mark) so that the
scorer counts them as ``conlleval`` does. A UTF-8 byte-order mark at the start and CRLF line endings are accepted.

Tags are recoded as ``conlleval``'s options read them (:func:`metametric_jax.tasks.tagging.recode_tags`):
``outside`` is the outside tag, read as ``O``, and ``raw`` reads tags without prefixes, one token per chunk (``-r``).
The reader applies ``outside`` as given; ``conlleval`` applies ``-o`` with ``-r`` only, a rule the scorer
(:func:`metametric_jax.tasks.ner.score_files`) follows.

A file of one column in the two-file layout holds tags only; one with a value that is not written as a tag (a
prefix, a hyphen and a type) is refused as a file whose tag column is missing (it holds the tokens), and with
``raw`` a file of one column is refused outright, since every value would then be read as a chunk of its own. A file
of two columns in the one-file layout holds the two tags only, as ``conlleval`` reads it.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
>>> _ = open(path, "w").write("-DOCSTART- -X- O O\n\nKestrel B-ORG B-ORG\nopens O B-MISC\n")
>>> gold, pred = read_conlleval(path)
>>> gold.tags, pred.tags, gold.tokens, gold.lines
([['B-ORG', 'O']], [['B-ORG', 'B-MISC']], [['Kestrel', 'opens']], [range(3, 5)])
>>> gold.doc_starts, gold.documents(), gold.docstart_lines, gold.docstart_tags
((0,), [0], (1,), ('O',))
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import os
import re
import sys
from collections.abc import Callable
from typing import NamedTuple

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import decode_text, read_text
from metametric_jax.tasks.tagging import normalize_scheme, recode_tags, tag_problem

__all__ = ["DOCSTART", "BOUNDARY", "ConllSentences", "read_conll", "read_conlleval", "check_aligned", "split_fields"]

DOCSTART = "-DOCSTART-"
#: A first field that ends a sentence in ``conlleval``'s layout.
BOUNDARY = "-X-"


@dataclasses.dataclass(frozen=True)
class ConllSentences:
    """The sentences of a CoNLL column file (one side of it, for the one-file layout).

    Attributes:
        path: the file read.
        tags: the tags of each sentence (recoded as the reader's ``outside`` and ``raw`` say).
        tokens: the tokens of each sentence (first column), or None when the lines hold tags only.
        lines: the 1-based line numbers of each sentence's tokens (a ``range``: a sentence is a run of lines).
        n_columns: the number of columns of the file (0 if it has no token line).
        doc_starts: for each ``-DOCSTART-`` line, in order, the index of the first sentence after it (the number of
            sentences before it); empty when the file has none.
        docstart_lines: the 1-based line number of each ``-DOCSTART-`` line, in order.
        docstart_tags: the tag of each ``-DOCSTART-`` line (recoded as ``tags``): its tag column, ``O`` where the
            line has no field after the mark.
        docstart_glued: for each ``-DOCSTART-`` line, whether a token line or another ``-DOCSTART-`` line stands
            right before or after it (no blank line between them), where ``conlleval`` reads it inside a sentence.
    """

    path: str
    tags: list[list[str]]
    tokens: list[list[str]] | None
    lines: list[range]
    n_columns: int
    doc_starts: tuple[int, ...] = ()
    docstart_lines: tuple[int, ...] = ()
    docstart_tags: tuple[str, ...] = ()
    docstart_glued: tuple[bool, ...] = ()

    @property
    def docstart_tagged(self) -> int:
        """The number of ``-DOCSTART-`` lines whose tag is not ``O``."""
        return sum(tag != "O" for tag in self.docstart_tags)

    def documents(self) -> list[int] | None:
        """The document of each sentence, numbered 0, 1, ... in order; None when the file has no ``-DOCSTART-`` line.

        A document is the run of sentences after a mark (sentences before the first mark form one too); marks with no
        sentence between them make no document.
        """
        if not self.doc_starts:
            return None
        raw = [bisect.bisect_right(self.doc_starts, k) for k in range(len(self.tags))]
        out: list[int] = []
        for k, d in enumerate(raw):
            out.append(0 if k == 0 else out[-1] + (d != raw[k - 1]))
        return out

    def sentence_lines(self, k: int) -> str:
        """The line range of sentence ``k`` (0-based) as ``"a-b"``."""
        return f"{self.lines[k][0]}-{self.lines[k][-1]}" if self.lines[k] else "?"


def split_fields(delimiter: str | None) -> re.Pattern[str] | None:
    """The compiled field separator (None: any run of whitespace).

    Raises:
        ValueError: if ``delimiter`` is not a valid regular expression or matches the empty string.
    """
    if delimiter is None:
        return None
    try:
        pattern = re.compile(delimiter)
    except re.error as err:
        raise ValueError(f"the delimiter {delimiter!r} is not a valid regular expression: {err}") from None
    if pattern.match(""):
        raise ValueError(f"the delimiter {delimiter!r} matches the empty string; give the character between fields")
    return pattern


def _text(path: str) -> str:
    """The file's text (``-``: standard input), a byte-order mark removed; undecodable bytes raise with their line."""
    return decode_text(sys.stdin.buffer.read(), path) if path == "-" else read_text(path)


def _splitter(pattern: re.Pattern[str] | None) -> Callable[[str], list[str]]:
    if pattern is None:
        return str.split  # any whitespace, a trailing CR included

    def split(line: str) -> list[str]:
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip():
            return []
        fields = pattern.split(line)
        while fields and fields[-1] == "":
            fields.pop()
        return fields

    return split


class _Read(NamedTuple):
    """A file as read: per side the tags; tokens, lines, column count; the -DOCSTART- lines."""

    path: str
    sides: list[list[list[str]]]
    tokens: list[list[str]]
    lines: list[range]
    n_columns: int
    doc_starts: tuple[int, ...]
    docstart_lines: tuple[int, ...]
    docstart_tags: list[list[str]]  # per side, one tag per -DOCSTART- line
    docstart_glued: tuple[bool, ...]


def _read(path: str | os.PathLike[str], n_tags: int, delimiter: str | None, boundary: bool) -> _Read:
    """Sentences of a file: per side the tags; tokens, lines, column count; the -DOCSTART- lines and their tags."""
    path = os.fspath(path)
    pattern = split_fields(delimiter)
    split = _splitter(pattern)
    blocks: list[tuple[int, list[list[str]]]] = []
    cur: list[list[str]] = []
    start = 0
    marks: list[tuple[int, int, list[str]]] = []  # (line, sentences before it, fields)
    append = cur.append
    for number, line in enumerate(_text(path).split("\n"), start=1):
        fields = split(line)
        if fields:
            head = fields[0]
            if head != DOCSTART and (head != BOUNDARY or not boundary):
                if not cur:
                    start = number
                append(fields)
                continue
        if cur:
            blocks.append((start, cur))
            cur = []
            append = cur.append
        if fields and fields[0] == DOCSTART:
            marks.append((number, len(blocks), fields))
    if cur:
        blocks.append((start, cur))
    n_columns = len(blocks[0][1][0]) if blocks else 0
    if blocks and n_columns < n_tags:
        what = "the reference and the predicted tag" if n_tags > 1 else "the tag"
        found = f"found {n_columns}: {' '.join(blocks[0][1][0])!r}"
        raise InputFormatError(path, blocks[0][0], f"expected at least {n_tags} columns (the last: {what}), {found}")
    sides: list[list[list[str]]] = [[] for _ in range(n_tags)]
    tokens: list[list[str]] = []
    lines: list[range] = []
    same = {n_columns}
    for first, block in blocks:
        if set(map(len, block)) != same:
            j = next(j for j, fields in enumerate(block) if len(fields) != n_columns)
            separator = "whitespace-separated" if pattern is None else f"{delimiter!r}-separated"
            raise InputFormatError(
                path,
                first + j,
                f"expected {n_columns} {separator} columns (as on line {blocks[0][0]}), found {len(block[j])}: "
                f"{(chr(9) if pattern is not None else ' ').join(block[j])!r}",
            )
        columns = list(zip(*block))
        for k, side in enumerate(sides):
            side.append(list(columns[n_columns - n_tags + k]))
        tokens.append(list(columns[0]))
        lines.append(range(first, first + len(block)))
    mark_lines = {number for number, _, _ in marks}
    glued = []
    for number, before, _ in marks:
        after_token = before < len(lines) and lines[before][0] == number + 1
        before_token = before > 0 and lines[before - 1][-1] == number - 1
        glued.append(after_token or before_token or number - 1 in mark_lines or number + 1 in mark_lines)
    docstart_tags: list[list[str]] = [
        [fields[len(fields) - n_tags + k] if len(fields) > n_tags else "O" for _, _, fields in marks]
        for k in range(n_tags)
    ]
    return _Read(
        path,
        sides,
        tokens,
        lines,
        n_columns,
        tuple(before for _, before, _ in marks),
        tuple(number for number, _, _ in marks),
        docstart_tags,
        tuple(glued),
    )


def _finish(
    got: _Read, side: int, tokens: list[list[str]] | None, scheme: str | None, outside: str, raw: bool
) -> ConllSentences:
    tags, marks = got.sides[side], got.docstart_tags[side]
    if outside != "O" or raw:
        tags = recode_tags(tags, outside, raw)
        marks = recode_tags([marks], outside, raw)[0]
    out = ConllSentences(
        got.path,
        tags,
        tokens,
        got.lines,
        got.n_columns,
        got.doc_starts,
        got.docstart_lines,
        tuple(marks),
        got.docstart_glued,
    )
    if scheme is not None:
        hint = None
        if tokens is None and got.n_columns == 1:
            hint = (
                "and the file has one column: the tag column is missing (expected at least two columns: a token "
                "and its tag; a file of one column holds tags only)"
            )
        elif tokens is None and got.n_columns == 2 and side == 0:
            hint = (
                "and the file has two columns, read as the reference and the predicted tag: a column is missing "
                "(expected at least three: a token, its reference tag and its predicted tag; two columns hold the "
                "tags only)"
            )
        _check_tags(out, "IOB2" if raw else normalize_scheme(scheme), hint)
    return out


def read_conll(
    path: str | os.PathLike[str],
    scheme: str | None = None,
    *,
    delimiter: str | None = None,
    outside: str = "O",
    raw: bool = False,
) -> ConllSentences:
    """Read a CoNLL column file whose last column is the tag (the two-file layout).

    Args:
        path: the file (UTF-8).
        scheme: if given, every tag is checked against this tag scheme.
        delimiter: the field separator, a regular expression (default: any whitespace).
        outside: the outside tag, read as ``O``.
        raw: tags have no prefixes; each non-outside token is a chunk of its own.

    Raises:
        InputFormatError: on a line whose number of columns differs from the file's first token line, bytes that
            are not UTF-8, (with ``scheme``) a tag that is not valid in the scheme (in a file of one column: the tag
            column is missing), or (with ``raw``) a file of one column; the error names file and line.
        FileNotFoundError: if the file does not exist.
    """
    got = _read(path, 1, delimiter, boundary=False)
    if raw and got.n_columns == 1:
        raise InputFormatError(
            got.path,
            got.lines[0][0],
            f"found one column ({got.sides[0][0][0]!r}): with raw tags (-r) every value would be read as a chunk of "
            "its own, so a file of one column is refused; the tag column is missing or the tokens are (expected at "
            "least two columns: a token and its tag)",
        )
    return _finish(got, 0, got.tokens if got.n_columns >= 2 else None, scheme, outside, raw)


def read_conlleval(
    path: str | os.PathLike[str],
    scheme: str | None = None,
    *,
    delimiter: str | None = None,
    outside: str = "O",
    raw: bool = False,
) -> tuple[ConllSentences, ConllSentences]:
    """Read ``conlleval``'s one-file layout: the last two columns are the reference and the predicted tag.

    Args:
        path: the file (UTF-8); ``-`` reads standard input, as ``conlleval.pl`` does.
        scheme: if given, every tag is checked against this tag scheme.
        delimiter: the field separator, a regular expression as ``conlleval -d`` takes it (default: whitespace).
        outside: the outside tag (``-o``).
        raw: tags without prefixes (``-r``).

    Returns:
        ``(references, predictions)``, the same sentences, tokens and lines.

    Raises:
        InputFormatError: as :func:`read_conll` (a file of one column is refused: it has no room for two tags).
    """
    got = _read(path, 2, delimiter, boundary=True)
    tokens = got.tokens if got.n_columns >= 3 else None
    return (
        _finish(got, 0, tokens, scheme, outside, raw),
        _finish(got, 1, tokens, scheme, outside, raw),
    )


def _check_tags(doc: ConllSentences, scheme: str, hint: str | None = None) -> None:
    """Every tag valid in ``scheme``, the -DOCSTART- lines' too; the first invalid one raises at its line."""
    unique = set(itertools.chain.from_iterable(doc.tags)) | set(doc.docstart_tags)
    bad = {tag: problem for tag in unique if (problem := tag_problem(tag, scheme)) is not None}
    if not bad:
        return
    found = [(doc.lines[k][j], tag) for k, sent in enumerate(doc.tags) for j, tag in enumerate(sent) if tag in bad]
    found += [(line, tag) for line, tag in zip(doc.docstart_lines, doc.docstart_tags) if tag in bad]
    line, tag = min(found)
    if hint is not None and not _TAG_LIKE.fullmatch(tag):  # a word, not a tag of another scheme
        raise InputFormatError(doc.path, line, f"{tag!r} is not a tag of scheme {scheme}, {hint}")
    raise InputFormatError(doc.path, line, bad[tag])


#: A value written as a tag of some scheme (a prefix, a hyphen, a type): in a file of tags only, a wrong tag.
_TAG_LIKE = re.compile(r"[BIESLU]-.+")


def check_aligned(gold: ConllSentences, pred: ConllSentences) -> None:
    """Check that two files hold the same sentences: counts of sentences and tokens, and tokens when both have them.

    Raises:
        InputFormatError: at the first mismatch, on the prediction file's line, naming the sentence (1-based) and
            the lines in both files.
    """
    for k, (g, p) in enumerate(zip(gold.tags, pred.tags)):
        if len(g) != len(p):
            raise InputFormatError(
                pred.path,
                pred.lines[k][0],
                f"sentence {k + 1} has {len(p)} tokens (lines {pred.sentence_lines(k)}) but sentence {k + 1} of "
                f"{gold.path} has {len(g)} tokens (lines {gold.sentence_lines(k)}); the files must hold the same "
                "sentences with the same tokenization",
            )
        if gold.tokens is not None and pred.tokens is not None and gold.tokens[k] != pred.tokens[k]:
            j = next(j for j, (tg, tp) in enumerate(zip(gold.tokens[k], pred.tokens[k])) if tg != tp)
            raise InputFormatError(
                pred.path,
                pred.lines[k][j],
                f"token {pred.tokens[k][j]!r} (sentence {k + 1}, token {j + 1}) differs from token "
                f"{gold.tokens[k][j]!r} at {gold.path}:{gold.lines[k][j]}; the files must hold the same tokens",
            )
    ng, np_ = len(gold.tags), len(pred.tags)
    if ng != np_:
        k = min(ng, np_)
        longer = gold if ng > np_ else pred
        raise InputFormatError(
            pred.path,
            pred.lines[k][0] if np_ > ng else None,
            f"{np_} sentences but {gold.path} has {ng}; sentence {k + 1} (line {longer.lines[k][0]} of "
            f"{longer.path}) has no counterpart in the other file",
        )
