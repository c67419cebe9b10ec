"""The PENMAN reader's own parser of plain graphs gives penman's trees, and hands every other text to penman."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import penman
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers import penman as reader

FIXTURES = Path(__file__).parents[1] / "data" / "amr"
SAMPLE = Path(reader.__file__).resolve().parents[2] / "data" / "amr"
FILES = sorted(FIXTURES.glob("*.txt")) + sorted(SAMPLE.glob("*.txt"))

# Pieces of PENMAN text, well-formed and not: every token kind of penman's lexer, alignments, comments, the line
# breaks penman splits at besides "\n", escapes, a missing concept or target, text after the graph.
PIECES = [
    "(",
    ")",
    "/",
    " / ",
    ":ARG0",
    ":ARG1-of",
    ":",
    " :mod ",
    "~e.3",
    "~2,4",
    "~x",
    "b",
    "boy",
    "go-02",
    "x~1",
    '"Paris"',
    '"a \\" b"',
    '"',
    '"open',
    "\\",
    "-",
    "+",
    "3.5",
    "#",
    "# c",
    " ",
    "\n",
    "\t",
    "\r",
    "\x85",
    "\u2028",
    "\x0c",
    "\u00a0",
    "é",
    "(b / boy)",
    "(g / go-02 :ARG0 (b / boy))",
    ":polarity -",
    "~",
    "::",
    "()",
    "(a)",
]


def _body(text: str) -> str:
    """The body that ``parse_tree`` parses: comment lines blanked."""
    return "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.splitlines())


def _penman(body: str) -> tuple[str, Any]:
    """What penman makes of a body: its trees' nodes and whether it warned, or its error."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    log = logging.getLogger("penman")
    log.addHandler(handler)
    try:
        trees = list(penman.iterparse(body))
    except penman.DecodeError as err:
        return "error", str(err)
    finally:
        log.removeHandler(handler)
    return "trees", ([t.node for t in trees], bool(records), [t.metadata for t in trees])


def _agrees(body: str) -> bool:
    """A graph the own parser takes is one penman parses alone, with no warning, to the same node."""
    node = reader._parse_plain(body)
    if node is None:
        return False
    kind, got = _penman(body)
    assert kind == "trees", (body, got)
    assert got == ([node], False, [{}]), (body, node, got)
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_stored_graph_parses_as_penman_parses_it(path: Path) -> None:
    blocks = reader.read_penman_texts(path)
    taken = [_agrees(_body(block.text)) for block in blocks]
    assert blocks
    for block in blocks:  # the trees parse_tree gives, whichever parser took them
        body = _body(block.text)
        kind, got = _penman(body)
        if kind == "trees" and len(got[0]) == 1:
            assert reader.parse_tree(block.text, str(path), block.line).node == got[0][0]
    if path.parent == SAMPLE or path.name.startswith("evaluation_"):
        assert all(taken), path  # what parsers write is plain: the fast parser takes it


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_generated_texts_parse_as_penman_parses_them_or_go_to_penman(pieces: list[str]) -> None:
    text = "".join(pieces)
    _agrees(text)
    body = _body(text)
    if body.strip().startswith("("):
        _agrees(body)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.sampled_from(["x", '"s t"', "-", "3", "b~e.1"]),
        lambda inner: st.tuples(
            st.sampled_from(["a", "b2"]),
            st.sampled_from(["c", "go-02", '"q"', "c~e.2"]),
            st.lists(st.tuples(st.sampled_from([":ARG0", ":mod~e.4", ":op1", ":"]), inner), max_size=3),
        ),
        max_leaves=12,
    ),
    st.sampled_from([" ", "\n  ", "\t", "\n\n"]),
)
def test_generated_graphs_take_the_own_parser(graph: Any, space: str) -> None:
    def write(node: Any) -> str:
        if isinstance(node, str):
            return node
        var, concept, edges = node
        return f"({var} / {concept}" + "".join(f"{space}{role} {write(t)}" for role, t in edges) + ")"

    if isinstance(graph, str):
        graph = ("r", "root", [(":ARG0", graph)])
    assert _agrees(write(graph))


@pytest.mark.parametrize(
    "text",
    [
        "(b / boy :ARG0)",
        "(b :ARG0 (c / d))",
        "(b / boy) (c / cat)",
        '(b / "open)',
        "(b / boy\n:ARG0 # x\n(c / d))",
        "(b / boy :mod #x)",
        '(b / "a\rb")',
        '(b / "a\x85b")',
        '(b / "a\u2028b" :mod c)',
        "(b / boy :ARG0 (",
        "(b / boy :ARG0 (c",
        "(b / boy :ARG0 (c /",
        "(b /",
        "(b / c :r",
        "(",
        "",
        '("v" / c)',
        "(b / c) )",
    ],
)
def test_what_the_own_parser_leaves_to_penman_is_parsed_by_penman(text: str) -> None:
    assert reader._parse_plain(text) is None and reader._parse_plain(_body(text)) is None
    assert not _agrees(text)
    kind, got = _penman(_body(text))
    try:
        tree = reader.parse_tree(text, "g.txt", 1)
    except InputFormatError as err:
        assert kind == "error" or len(got[0]) != 1 or "unbalanced parentheses" in str(err), got
        assert str(err).startswith("g.txt:1: ")
    else:
        assert kind == "trees" and got[0] == [tree.node], got
