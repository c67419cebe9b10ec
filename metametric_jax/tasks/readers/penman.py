"""PENMAN files (AMR): blank-line separated graphs, ``#`` comment lines, alignment markers.

A file holds one graph per block of lines separated by blank lines; lines starting with ``#`` (``# ::snt``,
``# ::id``) are comments. A UTF-8 byte order mark and CRLF line endings are accepted. Parser output often carries
alignment markers (``boy~e.3``, ``:ARG0~e.2``, ``"Paris"~8``) that tie a concept, role or constant to sentence tokens;
:func:`strip_alignments` removes them.

A graph is read into a ``penman.Tree``, the tree ``penman.iterparse`` builds: a plain graph (every node with a
variable and a concept, every role with a target, no comment inside) by this module's own parser of penman's tokens,
about three times quicker; any other text by penman itself, with its errors. penman's warnings (a node without a
concept, a role without a value: it parses on) are not logged while :func:`parse_tree` reads; the tree keeps ``None``
where the concept or value is missing, and the scorers refuse it with an error naming the file and line.

>>> tree = parse_tree("(b / boy~e.2 :ARG0-of~e.1 (g / go-02~3))", "<string>", 1)
>>> strip_alignments(tree).node
('b', [('/', 'boy'), (':ARG0-of', ('g', [('/', 'go-02')]))])
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text, split_lines

__all__ = ["PenmanBlock", "PenmanText", "read_penman", "read_penman_texts", "parse_tree", "strip_alignments"]

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_ALIGNMENT = re.compile(r"~(?:[A-Za-z]+\.?)?\d+(?:,\d+)*$")
_ID = re.compile(r"::id\s+(\S+)")


@dataclasses.dataclass(frozen=True)
class PenmanBlock:
    """One graph of a PENMAN file.

    Attributes:
        line: the 1-based line of the graph's first non-comment line.
        id: the value of a ``# ::id`` comment before the graph, if any.
        tree: the graph as a ``penman.Tree`` (alignment markers kept).
    """

    line: int
    id: str | None
    tree: Any


@dataclasses.dataclass(frozen=True)
class PenmanText:
    """One graph of a PENMAN file, not yet parsed (:func:`parse_tree` parses it).

    Attributes:
        line: the 1-based line of the graph's first non-comment line.
        id: the value of a ``# ::id`` comment before the graph, if any.
        text: the graph's lines, comments left out.
    """

    line: int
    id: str | None
    text: str


# penman's tokens (penman._lexer.PATTERNS, in its order: string, parentheses and slash, role, symbol, alignment, any
# other character) for a graph body with no comment; a token never spans a line. Its first character tells its kind:
# a lone '"' or '~' is an unexpected character, not a string or an alignment.
_TOKENS = re.compile(
    r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|[()/]|:[^ \t\r\n\v\f"()/:~]*|[^ \t\r\n\v\f"()/:~]+'
    r"|~(?:[a-z]\.?)?[0-9]+(?:,[0-9]+)*|[^ \t\r\n\v\f]"
)
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029#]")  # lines penman splits at; comments
_NOT_SYMBOL = frozenset('()/:~"')


class _NotPlainError(Exception):
    """The graph needs penman's own parser (a warning, an error, or a token this reader does not take)."""


def _parse_plain(body: str) -> Any:
    r"""The node of one graph in the plain grammar, as ``penman.iterparse`` builds it; ``None`` for anything else.

    Plain: ``'(' SYMBOL '/' CONCEPT EDGE* ')'`` with ``EDGE := ROLE (CONSTANT | NODE)``, alignments after concepts,
    roles and constants, nothing after the graph, lines separated by ``\n`` only and no ``#``. Any other text (a
    missing concept or target, which penman parses with a warning, or an error) goes to penman, which says what it
    says of it.
    """
    if _OTHER_BREAKS.search(body):
        return None
    tokens = _TOKENS.findall(body)
    end = len(tokens)
    tokens += ["", "", "", ""]  # past the end: no token is empty
    at = 0

    def constant(token: str) -> bool:  # a symbol or a string
        return token != "" and (token[0] not in _NOT_SYMBOL or (token[0] == '"' and len(token) > 1))

    def aligned(text: str) -> str:  # an alignment right after a concept, role or constant joins it
        nonlocal at
        token = tokens[at]
        if token[:1] == "~" and len(token) > 1:
            at += 1
            return text + token
        return text

    def node() -> tuple[str, list[tuple[str, Any]]]:
        nonlocal at
        var, concept = tokens[at + 1], tokens[at + 3]
        if tokens[at] != "(" or not constant(var) or var[0] == '"' or tokens[at + 2] != "/" or not constant(concept):
            raise _NotPlainError
        at += 4
        edges: list[tuple[str, Any]] = [("/", aligned(concept))]
        while tokens[at][:1] == ":":
            at += 1
            role = aligned(tokens[at - 1])
            target = tokens[at]
            if target == "(":
                edges.append((role, node()))
            elif constant(target):
                at += 1
                edges.append((role, aligned(target)))
            else:
                raise _NotPlainError
        if tokens[at] != ")":
            raise _NotPlainError
        at += 1
        return (var, edges)

    try:
        tree = node()
    except (_NotPlainError, RecursionError):
        return None
    return tree if at == end else None


class _OtherThreads(logging.Filter):
    """Keeps the log records of every thread but the one that made the filter (all of them, if records carry none)."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread is not None and record.thread != self.thread


@contextlib.contextmanager
def _penman_quiet() -> Iterator[None]:
    """Drop the records this thread logs on penman's loggers inside the block (a filter on each, removed after it).

    penman logs a warning for a node without a concept (``Missing concept: (w /)``) or a role without a value
    (``Missing target: ...``) and parses on; the scorers refuse such a tree with an error naming the file and line.
    A filter acts on the records of its own logger only, so each of ``penman`` and its existing children gets one.
    """
    loggers = [logging.getLogger("penman")]
    for name, log in list(logging.Logger.manager.loggerDict.items()):
        if name.startswith("penman.") and isinstance(log, logging.Logger):
            loggers.append(log)
    quiet = _OtherThreads()
    for log in loggers:
        log.addFilter(quiet)
    try:
        yield
    finally:
        for log in loggers:
            log.removeFilter(quiet)


def parse_tree(text: str, path: str, line: int | None) -> Any:
    """One PENMAN graph (``#`` comment lines allowed) as a ``penman.Tree``.

    penman's warnings for this thread are dropped while it parses (a missing concept or value is ``None`` in the tree).

    Raises:
        InputFormatError: not exactly one well-formed graph (named by ``path`` and ``line``).
    """
    import penman  # here: a process that only splits files into graphs (for worker processes) does not need it

    body = "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.splitlines())
    stripped = body.strip()
    if not stripped.startswith("("):
        raise InputFormatError(path, line, f"expected a PENMAN graph starting with '(', found {stripped[:40]!r}")
    unquoted = _QUOTED.sub('""', stripped)
    opened, closed = unquoted.count("("), unquoted.count(")")
    if opened != closed:
        raise InputFormatError(path, line, f"unbalanced parentheses in the PENMAN graph: {opened} '(' but {closed} ')'")
    node = _parse_plain(body)
    if node is not None:
        return penman.Tree(node)
    try:
        with _penman_quiet():
            trees = list(penman.iterparse(body))
    except penman.DecodeError as err:
        where = f" (line {err.lineno} of the graph)" if err.lineno is not None else ""
        raise InputFormatError(path, line, f"invalid PENMAN graph{where}: {err.message}") from None
    if len(trees) != 1:
        raise InputFormatError(
            path, line, f"expected one PENMAN graph per blank-line separated block, found {len(trees)}"
        )
    return trees[0]


def read_penman(path: str | Path) -> list[PenmanBlock]:
    """The graphs of a PENMAN file, in file order.

    Raises:
        InputFormatError: a block is not exactly one well-formed PENMAN graph, or the file is not UTF-8.
    """
    return [PenmanBlock(g.line, g.id, parse_tree(g.text, str(path), g.line)) for g in read_penman_texts(path)]


def read_penman_texts(path: str | Path) -> list[PenmanText]:
    """The graphs of a PENMAN file, in file order, as text: the blocks :func:`read_penman` parses.

    Raises:
        InputFormatError: the file is not UTF-8.
    """
    path = str(path)
    blocks: list[tuple[int, str | None, list[str]]] = []
    start: int | None = None
    ident: str | None = None
    lines: list[str] = []
    whole = read_text(path).replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as text mode reads
    for number, text in enumerate(split_lines(whole), start=1):
        if not text.strip():
            if start is not None:
                blocks.append((start, ident, lines))
                ident = None
            start, lines = None, []
            continue
        if text.lstrip().startswith("#"):
            found = _ID.search(text)
            if found and start is None:
                ident = found.group(1)
            continue
        if start is None:
            start = number
        lines.append(text)
    if start is not None:
        blocks.append((start, ident, lines))
    return [PenmanText(start, ident, "\n".join(body)) for start, ident, body in blocks]


def _strip(atom: Any) -> Any:
    return _ALIGNMENT.sub("", atom) if isinstance(atom, str) and "~" in atom else atom  # a marker starts with ~


def strip_alignments(tree: Any) -> Any:
    """The tree without alignment markers (``~e.8``, ``~8``, ``~e.8,9``) on concepts, roles and constants."""
    import penman

    def node(n: Any) -> Any:
        var, branches = n
        out = []
        for role, target in branches:
            out.append((_strip(role), node(target) if isinstance(target, tuple) else _strip(target)))
        return (var, out)

    return penman.Tree(node(tree.node), metadata=tree.metadata)
