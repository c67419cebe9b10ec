r"""CoNLL column files for tagging tasks (NER, chunking): the two-file layout and ``conlleval``'s one-file layout.

The format (CoNLL-2000 / CoNLL-2003, Tjong Kim Sang & De Meulder 2003): one token per line, columns separated by
whitespace (or by ``delimiter``, a regular expression as ``conlleval -d`` takes it), a blank line ends a sentence.
Every non-blank line of a file has the same number of columns.

* **Two files** (:func:`read_conll`): the **last column** is the tag, the first the token (when there are two
  columns or more); a reference file and a prediction file hold the same sentences.
* **One file** (:func:`read_conlleval`), the layout ``conlleval.pl`` reads on standard input: the last two columns
  are the reference tag and the predicted tag, in that order. As in ``conlleval``, a line whose first field is
  ``-X-`` also ends a sentence.

In both layouts a ``-DOCSTART-`` line ends a sentence and is not a token, whatever its tags (``conlleval`` counts
it as a token with its tags, usually ``O``, so its "processed N tokens" and accuracy include those lines); it starts a
document, which the reader records (:attr:`ConllSentences.doc_starts`, :meth:`ConllSentences.documents`) without
changing any figure. A UTF-8
byte-order mark at the start and CRLF line endings are accepted. Tags are recoded as ``conlleval``'s options
read them (:func:`metametric_jax.tasks.tagging.recode_tags`): ``outside`` is the outside tag (``conlleval -o``;
``conlleval`` applies it with ``-r`` only, here it applies always) and ``raw`` reads tags without prefixes, one
token per chunk (``-r``).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
>>> _ = open(path, "w").write("-DOCSTART- -X- O O\n\nKestrel B-ORG B-ORG\nopens O B-MISC\n")
>>> gold, pred = read_conlleval(path)
>>> gold.tags, pred.tags, gold.tokens, gold.lines
([['B-ORG', 'O']], [['B-ORG', 'B-MISC']], [['Kestrel', 'opens']], [range(3, 5)])
>>> gold.doc_starts, gold.documents()
((0,), [0])
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import os
import re
import sys
from collections.abc import Callable

from metametric_jax.errors import InputFormatError
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
        docstart_tagged: the number of ``-DOCSTART-`` lines with a tag other than ``O`` (left out all the same).
        doc_starts: for each ``-DOCSTART-`` line, in order, the index of the first sentence after it (the number of
            sentences before it); empty when the file has none.
    """

    path: str
    tags: list[list[str]]
    tokens: list[list[str]] | None
    lines: list[range]
    n_columns: int
    docstart_tagged: int = 0
    doc_starts: tuple[int, ...] = ()

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
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as handle:
            data = handle.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputFormatError(
            path, line, f"expected UTF-8 text; found the byte 0x{data[err.start]:02x}, which is not valid UTF-8"
        ) from None


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


def _read(
    path: str | os.PathLike[str], n_tags: int, delimiter: str | None, boundary: bool
) -> tuple[str, list[list[list[str]]], list[list[str]], list[range], int, int, tuple[int, ...]]:
    """Sentences of a file: per side the tags; tokens, lines, column count, tagged and all DOCSTART lines' places."""
    path = os.fspath(path)
    pattern = split_fields(delimiter)
    split = _splitter(pattern)
    blocks: list[tuple[int, list[list[str]]]] = []
    cur: list[list[str]] = []
    start = 0
    docstart_tagged = 0
    doc_starts: list[int] = []
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
        if fields and fields[0] == DOCSTART and any(t != "O" for t in fields[max(1, len(fields) - n_tags) :]):
            docstart_tagged += 1
        if cur:
            blocks.append((start, cur))
            cur = []
            append = cur.append
        if fields and fields[0] == DOCSTART:
            doc_starts.append(len(blocks))
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
    return path, sides, tokens, lines, n_columns, docstart_tagged, tuple(doc_starts)


def _finish(
    path: str,
    tags: list[list[str]],
    tokens: list[list[str]] | None,
    lines: list[range],
    n_columns: int,
    docstart_tagged: int,
    doc_starts: tuple[int, ...],
    scheme: str | None,
    outside: str,
    raw: bool,
) -> ConllSentences:
    if outside != "O" or raw:
        tags = recode_tags(tags, outside, raw)
    out = ConllSentences(path, tags, tokens, lines, n_columns, docstart_tagged, doc_starts)
    if scheme is not None:
        _check_tags(out, "IOB2" if raw else normalize_scheme(scheme))
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
            are not UTF-8, or (with ``scheme``) a tag that is not valid in the scheme; the error names file and line.
        FileNotFoundError: if the file does not exist.
    """
    path, (tags,), tokens, lines, n_columns, tagged, starts = _read(path, 1, delimiter, boundary=False)
    toks = tokens if n_columns >= 2 else None
    return _finish(path, tags, toks, lines, n_columns, tagged, starts, scheme, outside, raw)


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
        InputFormatError: as :func:`read_conll`.
    """
    path, (gold, pred), tokens, lines, n_columns, tagged, starts = _read(path, 2, delimiter, boundary=True)
    toks = tokens if n_columns >= 3 else None
    return (
        _finish(path, gold, toks, lines, n_columns, tagged, starts, scheme, outside, raw),
        _finish(path, pred, toks, lines, n_columns, tagged, starts, scheme, outside, raw),
    )


def _check_tags(doc: ConllSentences, scheme: str) -> None:
    unique = set(itertools.chain.from_iterable(doc.tags))
    bad = {tag: problem for tag in unique if (problem := tag_problem(tag, scheme)) is not None}
    if bad:
        k, j = next((k, j) for k, sent in enumerate(doc.tags) for j, tag in enumerate(sent) if tag in bad)
        raise InputFormatError(doc.path, doc.lines[k][j], bad[doc.tags[k][j]])


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
