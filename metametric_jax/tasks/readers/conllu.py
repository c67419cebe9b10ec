"""CoNLL-U files: sentences of syntactic words, multiword tokens and comments.

The reader follows the CoNLL-U format of Universal Dependencies (https://universaldependencies.org/format.html) as
the CoNLL 2018 shared task's evaluation reads it: a sentence is a run of lines of exactly 10 tab-separated fields,
``#`` comment lines come before the first word line of a sentence, and a blank line ends it. Word ids count from 1 in
order; a multiword-token range ``3-4`` precedes its words; empty nodes (``5.1``) are skipped (their fields are still
checked). HEAD is an integer between 0 and the number of words of the sentence. A UTF-8 byte-order mark at the start
and CRLF line endings are accepted; runs of blank lines count as one and the last blank line may be missing.
Comment lines followed by a blank line (a sentence without words) are an error, as are comment lines that follow the
first word line of a sentence; comment lines at the end of the file, after the last sentence, are ignored.
Anything else is an :class:`~metametric_jax.errors.InputFormatError` naming the file, the line, what was expected
and what was found.

Whether each sentence is a tree (one root, no cycle) is checked where the sentences are scored
(:func:`metametric_jax.tasks.dependency.check_tree`), not here.

Example:
    >>> rows = ["# sent_id = s1", "1 Hi hi INTJ UH _ 0 root _ _", "2 ! ! PUNCT . _ 1 punct _ _"]
    >>> [s] = parse_conllu("".join(row.replace(" ", chr(9)) + chr(10) for row in rows))
    >>> s.sent_id, [w.form for w in s.words], [w.head for w in s.words], s.line
    ('s1', ['Hi', '!'], [0, 1], 1)
"""

from __future__ import annotations

import dataclasses
import operator
import os
import re
import sys

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text

__all__ = ["DepToken", "MultiwordToken", "DepSentence", "parse_conllu", "read_conllu", "surface", "documents"]

_RANGE_ID = re.compile(r"([0-9]+)-([0-9]+)\Z")
_EMPTY_ID = re.compile(r"[0-9]+\.[0-9]+\Z")
_SENT_ID = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*\Z")
_NEWDOC = re.compile(r"#\s*newdoc(\s|=|\Z)")
#: The space separators, Unicode category Zs (all in the Basic Multilingual Plane; listed, not looked up at import:
#: the 65,536 look-ups took 20 ms of every start; a test checks the list against unicodedata).
SPACE_SEPARATORS = (
    "\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
_ZS = re.compile("[" + SPACE_SEPARATORS + "]")
#: Word ids and HEADs below this are looked up as strings by :func:`parse_conllu`'s common path (instead of checked
#: and converted; longer sentences take the general path).
_FAST_IDS = 1000
_NUMBER = {str(k): k for k in range(_FAST_IDS)}


@dataclasses.dataclass(frozen=True)
class DepToken:
    """A syntactic word of a CoNLL-U sentence (the ten columns).

    Attributes:
        id: the word index in its sentence (1-based).
        form: the word form.
        lemma: the lemma (``_`` when not given).
        upos: the universal part of speech.
        xpos: the language-specific part of speech.
        feats: the morphological features, ``Name=Value`` joined by ``|`` (``_`` for none).
        head: the index of the head word, 0 for the root.
        deprel: the dependency relation, possibly with a subtype (``nsubj:pass``).
        deps: the enhanced dependencies (not scored).
        misc: the MISC column (not scored).
        line: the 1-based line the word was read from, if read from a file.
    """

    id: int
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "_"
    deps: str = "_"
    misc: str = "_"
    line: int | None = dataclasses.field(default=None, compare=False)


@dataclasses.dataclass(frozen=True)
class MultiwordToken:
    """A multiword token: one surface token (``don't``) spanning the words ``first`` to ``last`` (``do``, ``n't``).

    Attributes:
        first: the id of its first word.
        last: the id of its last word.
        form: the surface form.
        misc: the MISC column.
        line: the 1-based line of the range line, if read from a file.
    """

    first: int
    last: int
    form: str
    misc: str = "_"
    line: int | None = dataclasses.field(default=None, compare=False)


@dataclasses.dataclass(frozen=True)
class DepSentence:
    """The words of a sentence, its multiword tokens, comments, and where it was read from (for messages).

    Attributes:
        words: the syntactic words in order (ids 1, 2, ...; no empty nodes).
        multiword: the multiword tokens, in order.
        comments: the ``#`` comment lines before the sentence, as read.
        source: the file name (or ``"<string>"``).
        line: the 1-based line of the sentence's first line (its first comment, else its first word) in ``source``.
    """

    words: tuple[DepToken, ...]
    multiword: tuple[MultiwordToken, ...] = ()
    comments: tuple[str, ...] = ()
    source: str = "<string>"
    line: int | None = None

    def __len__(self) -> int:
        return len(self.words)

    @property
    def sent_id(self) -> str | None:
        """The value of the ``# sent_id = ...`` comment, if there is one."""
        for comment in self.comments:
            m = _SENT_ID.match(comment)
            if m:
                return m.group(1)
        return None

    @property
    def newdoc(self) -> bool:
        """Whether a ``# newdoc`` (or ``# newdoc id = ...``) comment starts a document with this sentence."""
        return any(_NEWDOC.match(comment) for comment in self.comments)

    def describe(self, index: int | None = None) -> str:
        """``sentence 3 (sent_id s-3)``: how messages name this sentence (``index`` is its 1-based position)."""
        name = f"sentence {index}" if index is not None else "sentence"
        sid = self.sent_id
        return f"{name} (sent_id {sid})" if sid is not None else name


def _check_columns(columns: list[str], source: str, k: int, line: str) -> None:
    if len(columns) != 10:
        hint = " (the fields must be separated by tabs, not spaces)" if len(columns) < 10 and " " in line else ""
        raise InputFormatError(
            source, k, f"expected a CoNLL-U word line of 10 tab-separated fields; found {len(columns)}{hint}: {line!r}"
        )


def _token(ident: int, c: list[str], head: int, k: int) -> DepToken:
    """``DepToken(ident, c[1], ..., c[5], head, c[7], c[8], c[9], k)`` without its frozen ``__init__``.

    The same object (equal, hashed and pickled alike; its attributes in the same order), without the eleven
    ``object.__setattr__`` calls of the frozen ``__init__``: a file of 70,000 words spent a fifth of its reading there.
    """
    token: DepToken = object.__new__(DepToken)
    d = token.__dict__
    intern = sys.intern  # one string per distinct tag and lemma, as on parse_conllu's common path
    d["id"], d["form"], d["lemma"], d["upos"] = ident, c[1], intern(c[2]), intern(c[3])
    d["xpos"], d["feats"] = intern(c[4]), intern(c[5])
    d["head"], d["deprel"], d["deps"], d["misc"], d["line"] = head, intern(c[7]), c[8], c[9], k
    return token


_HEAD = operator.attrgetter("head")


def _sentence(
    words: tuple[DepToken, ...],
    multiword: tuple[MultiwordToken, ...],
    comments: tuple[str, ...],
    source: str,
    line: int | None,
) -> DepSentence:
    """``DepSentence(words, multiword, comments, source, line)`` without its frozen ``__init__`` (as :func:`_token`)."""
    sentence: DepSentence = object.__new__(DepSentence)
    d = sentence.__dict__
    d["words"], d["multiword"], d["comments"], d["source"], d["line"] = words, multiword, comments, source, line
    return sentence


class _Builder:
    """The sentence being read: words, multiword tokens, comments, the pending multiword range."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sentences: list[DepSentence] = []
        self.reset()

    def reset(self) -> None:
        self.words: list[DepToken] = []
        self.multiword: list[MultiwordToken] = []
        self.comments: list[str] = []
        self.first_line: int | None = None
        self.started = False
        self.range_end = 0  # the last word id of the multiword token being read (0: none)

    def comment(self, k: int, line: str) -> None:
        if self.started:
            raise InputFormatError(
                self.source,
                k,
                f"expected a word line or a blank line inside a sentence; found a comment line: {line!r} (comments "
                "come before the first word of a sentence)",
            )
        if self.first_line is None:
            self.first_line = k
        self.comments.append(line)

    def token_line(self, k: int, line: str) -> None:
        columns = line.split("\t")
        if len(columns) != 10:
            _check_columns(columns, self.source, k, line)
        if self.first_line is None:
            self.first_line = k
        self.started = True
        ident = columns[0]
        expected = len(self.words) + 1
        if ident.isdigit() and ident.isascii():  # a word: most lines
            number = int(ident)
            if number != expected:
                raise InputFormatError(self.source, k, f"expected word id {expected}; found {ident!r}")
            head = columns[6]
            if not (head.isdigit() and head.isascii()):
                raise InputFormatError(self.source, k, f"expected HEAD to be a word id or 0; found {head!r}")
            if not self.range_end and not surface(columns[1]):
                raise InputFormatError(self.source, k, f"expected a non-empty FORM; found {columns[1]!r}")
            self.words.append(_token(number, columns, int(head), k))
            if self.range_end == number:
                self.range_end = 0
        elif m := _RANGE_ID.match(ident):
            first, last = int(m.group(1)), int(m.group(2))
            if self.range_end:
                raise InputFormatError(
                    self.source,
                    k,
                    f"expected word {expected} of the multiword token before it; found the range {ident}",
                )
            if first != expected or last <= first:
                raise InputFormatError(
                    self.source, k, f"expected a multiword range {expected}-N with N > {expected}; found {ident!r}"
                )
            form = surface(columns[1])
            if not form:
                raise InputFormatError(self.source, k, f"expected a non-empty FORM; found {columns[1]!r}")
            self.multiword.append(MultiwordToken(first, last, columns[1], columns[9], k))
            self.range_end = last
        elif _EMPTY_ID.match(ident):
            return  # empty nodes are not scored
        else:
            raise InputFormatError(
                self.source,
                k,
                f"expected a word id ({expected}), a range ({expected}-N) or an empty node; found {ident!r}",
            )

    def end(self, k: int, last: bool = False) -> None:
        """Close the sentence (``k``: the line that ended it, for messages; ``last``: the end of the file ended it).

        Comment lines without a word line after them are an error when a blank line ends them and are ignored at the
        end of the file.
        """
        if not self.started:
            if self.comments and not last:
                first = self.first_line
                after = k - 1
                where = f"line {first}" if first == after else f"lines {first}-{after}"
                raise InputFormatError(
                    self.source,
                    k,
                    f"expected a word line after the comment {where}; found a blank line (a sentence of comments "
                    "only, without words)",
                )
            self.reset()
            return
        if self.range_end:
            raise InputFormatError(
                self.source,
                k,
                f"expected word {len(self.words) + 1} of the multiword token {self.multiword[-1].first}-"
                f"{self.multiword[-1].last}; found the end of the sentence",
            )
        if not self.words:
            raise InputFormatError(
                self.source, self.first_line, "expected at least one word in the sentence; found none"
            )
        n = len(self.words)
        if max(map(_HEAD, self.words)) > n:  # the loop below finds the first such word, for the message
            for w in self.words:
                if w.head > n:
                    raise InputFormatError(
                        self.source,
                        w.line,
                        f"expected HEAD between 0 and {n} (the sentence has {n} words); found {w.head}",
                    )
        self.sentences.append(
            _sentence(tuple(self.words), tuple(self.multiword), tuple(self.comments), self.source, self.first_line)
        )
        self.reset()


def documents(sentences: list[DepSentence]) -> list[int] | None:
    r"""The document of each sentence, numbered 0, 1, ... in order; None when no sentence has a ``# newdoc`` comment.

    A document runs from a sentence with ``# newdoc`` to the next one; sentences before the first form one too.

    >>> row = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"
    >>> documents(parse_conllu(f"{row}\n# newdoc id = d1\n{row}\n{row}\n# newdoc\n{row}"))
    [0, 1, 1, 2]
    """
    if not any(s.newdoc for s in sentences):
        return None
    out: list[int] = []
    for k, sentence in enumerate(sentences):
        out.append(0 if k == 0 else out[-1] + sentence.newdoc)
    return out


def surface(form: str) -> str:
    """The form without space characters (Unicode category Zs), as the text concatenation uses it."""
    return form if form.isprintable() and " " not in form else _ZS.sub("", form)


def parse_conllu(text: str, source: str = "<string>") -> list[DepSentence]:
    """The sentences of CoNLL-U text (see the module docstring for what is accepted).

    Args:
        text: the document.
        source: the file name used in messages and kept in each sentence.

    Raises:
        InputFormatError: a line that is not a CoNLL-U word line of 10 tab-separated fields, a word id out of order,
            a HEAD that is not an integer in ``0..n``, an empty FORM, a comment inside a sentence, comments followed by
            a blank line (a sentence without words), or a multiword range that does not match the words after it; the
            message names ``source`` and the line.
    """
    builder, lines = _Builder(source), _lines(text)
    # The common word line (10 fields, the next id, a HEAD written as a plain number, a FORM without space
    # separators) is read here; any other line goes through the builder's checks. ``inside`` and ``started`` mirror
    # the builder's ``range_end`` and ``started``, written back before it reads a line and read again after.
    number, new, intern = _NUMBER, object.__new__, sys.intern  # repeated tags and lemmas: one string each
    words, inside, started, n = builder.words, 0, False, 1  # n: the id the next word line should have
    for k, line in enumerate(lines, start=1):
        c = line.split("\t")
        if len(c) == 10 and number.get(c[0]) == n:
            head = number.get(c[6])
            form = c[1]
            if head is not None and (inside or (form and form.isprintable() and " " not in form)):
                if not started:
                    started = builder.started = True
                    if builder.first_line is None:
                        builder.first_line = k
                token: DepToken = new(DepToken)
                d = token.__dict__
                d["id"], d["form"], d["lemma"], d["upos"] = n, form, intern(c[2]), intern(c[3])
                d["xpos"], d["feats"] = intern(c[4]), intern(c[5])
                d["head"], d["deprel"], d["deps"], d["misc"], d["line"] = head, intern(c[7]), c[8], c[9], k
                words.append(token)
                if inside == n:
                    inside = 0
                n += 1
                continue
        builder.range_end = inside
        if not line or line.isspace():
            builder.end(k)
            words = builder.words
        elif line.startswith("#"):
            builder.comment(k, line)
        else:
            builder.token_line(k, line)
        inside, started, n = builder.range_end, builder.started, len(words) + 1
    builder.range_end = inside
    builder.end(len(lines) + 1, last=True)
    return builder.sentences


def _lines(text: str) -> list[str]:
    """The lines of ``text``: a byte-order mark removed, CRLF and CR as LF, no last empty line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _parse_general(text: str, source: str = "<string>") -> list[DepSentence]:
    """:func:`parse_conllu` with every line through the builder's checks (the reference of its common path)."""
    builder, lines = _Builder(source), _lines(text)
    for k, line in enumerate(lines, start=1):
        if not line or line.isspace():
            builder.end(k)
        elif line.startswith("#"):
            builder.comment(k, line)
        else:
            builder.token_line(k, line)
    builder.end(len(lines) + 1, last=True)
    return builder.sentences


def read_conllu(path: str | os.PathLike[str]) -> list[DepSentence]:
    """The sentences of a CoNLL-U file (UTF-8; see :func:`parse_conllu`).

    Raises:
        InputFormatError: as :func:`parse_conllu`, or bytes that are not UTF-8 (naming their line).
        OSError: the file cannot be read.
    """
    name = os.fspath(path)
    return parse_conllu(read_text(name), name)
