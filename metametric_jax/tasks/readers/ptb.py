r"""Penn Treebank bracketed trees (``.mrg``, evalb's gold and test files).

A tree is ``(LABEL child ...)``; a part-of-speech node is ``(TAG word)``; the outer node may be unlabelled,
``( (S ...))``. The label is the text right after ``(`` (``( S`` is an unlabelled node with a bare word ``S``).
Labels and words are runs of anything but ASCII white space and parentheses, compared as bytes.

Two layouts are read, each file on its own:

* **one tree per line** (what evalb reads: no tree spans two lines): each line is a sentence (several trees on one
  line are one sentence, as evalb reads them), and a blank line is an empty sentence (a parser's failure; evalb counts
  it as skipped). Blank lines at the end of the file are ignored;
* **trees over several lines** (the Penn Treebank's ``.mrg`` files): each tree is a sentence; blank lines separate.

A UTF-8 byte-order mark and CRLF line endings are accepted. Unbalanced brackets, a word outside a part-of-speech
node (``(NP the cat)``), a node without children (``(NP)``, ``()``), a part-of-speech node of two words and text
outside any tree are an :class:`~metametric_jax.errors.InputFormatError` naming the file and the line.

:func:`scan_trees` reads a whole file into columns (no Python loop over nodes), which is what the scorer uses: a
compiled reader (``_ptb_scan``, built from C where the package is installed with a C compiler) reads well-formed text
in one pass over the bytes; NumPy reads what it leaves (a tree that is a part-of-speech node alone, malformed text,
whose error it words) and every text where it was not built. Both give the same columns (tested on generated and
corrupted texts). :func:`parse_trees` gives :class:`Tree` objects.

Example:
    >>> bank = scan_trees(b"(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))\n\n( (X (Y z)))\n", "t.mrg")
    >>> bank.sentences, bank.line.tolist(), bank.text(bank.tag_start, bank.tag_end)
    (3, [1, 2, 3], ['DT', 'NN', 'VBD', 'Y'])
    >>> bank.text(bank.label_start, bank.label_end), bank.first.tolist(), bank.last.tolist()
    (['TOP', 'S', 'NP', 'VP', '', 'X'], [0, 0, 0, 2, 0, 0], [3, 3, 2, 3, 1, 1])
"""

from __future__ import annotations

import os
import re
import types
from typing import Any, NamedTuple

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.evalb import parse_params
from metametric_jax.tasks.readers.text import BOM, check_utf8, decode_text

_ptb_scan: types.ModuleType | None
try:  # the compiled reader of well-formed text (built where the package was installed with a C compiler)
    from metametric_jax.tasks.readers import _ptb_scan
except ImportError:  # pragma: no cover - without it, NumPy reads every text
    _ptb_scan = None

#: what the compiled reader returns: its rows of int64 columns; the code of a tree over several lines
_ROWS, _SPANS_LINES = 10, 2

__all__ = ["Tree", "Treebank", "scan_trees", "read_bytes", "read_treebank", "parse_trees", "read_trees", "parse_params"]

_OPEN, _CLOSE = 40, 41
_TOKEN = r"[()]|[ \t\n\v\f\r]+|[^ \t\n\v\f\r()]+"  # compiled where Tree objects are built (the scorer reads columns)


class Tree(NamedTuple):
    """A constituency tree node: a label and children (subtrees or words); equal where both are.

    Attributes:
        label: the node label (``""`` for the unlabelled outer bracket of Penn Treebank files).
        children: subtrees and word strings.
    """

    label: str
    children: tuple[Tree | str, ...]

    @property
    def is_preterminal(self) -> bool:
        """Whether the node is a part-of-speech tag over one word."""
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def words(self) -> list[str]:
        """The words under this node, in order."""
        return [w for w, _ in self.tagged()]

    def tagged(self) -> list[tuple[str, str]]:
        """``(word, tag)`` pairs of the words under this node, in order."""
        if self.is_preterminal:
            return [(self.children[0], self.label)]  # type: ignore[list-item]
        out: list[tuple[str, str]] = []
        for c in self.children:
            out.extend(c.tagged() if isinstance(c, Tree) else [(c, "")])
        return out

    def __str__(self) -> str:
        inner = " ".join(str(c) for c in self.children)
        return f"({self.label} {inner})" if self.label else f"( {inner})"


class Treebank(NamedTuple):
    """The trees of one file in columns: byte offsets into ``data`` for every tag, word and phrase label.

    Attributes:
        path: the file name (for messages).
        data: the file's bytes (byte-order mark removed) as a ``uint8`` array.
        sentences: the number of sentences.
        line: ``(sentences,)`` the 1-based line where each sentence starts.
        leaf_offsets: ``(sentences + 1,)`` the part-of-speech nodes of sentence ``s`` are ``leaf_offsets[s]`` to
            ``leaf_offsets[s + 1]`` (exclusive), in order.
        tag_start, tag_end, word_start, word_end: ``(leaves,)`` byte ranges of each part-of-speech tag and word.
        node_sentence: ``(nodes,)`` the sentence of each phrase node (every node that is not a part of speech, root
            included), in the order their brackets open.
        label_start, label_end: ``(nodes,)`` byte ranges of the phrase labels (empty for an unlabelled node).
        first, last: ``(nodes,)`` the node covers the sentence's part-of-speech nodes ``first`` to ``last``
            (exclusive), counted within its sentence.
    """

    path: str
    data: np.ndarray
    sentences: int
    line: np.ndarray
    leaf_offsets: np.ndarray
    tag_start: np.ndarray
    tag_end: np.ndarray
    word_start: np.ndarray
    word_end: np.ndarray
    node_sentence: np.ndarray
    label_start: np.ndarray
    label_end: np.ndarray
    first: np.ndarray
    last: np.ndarray

    def text(self, start: np.ndarray, end: np.ndarray) -> list[str]:
        """The strings at the byte ranges ``start``-``end`` (UTF-8, checked when the text was scanned)."""
        raw = self.data.tobytes()
        return [raw[a:b].decode("utf-8") for a, b in zip(start.tolist(), end.tolist())]


def _depth(is_open: np.ndarray) -> np.ndarray:
    """The depth after each of a sequence of parentheses (``is_open``: True for ``(``), as int32."""
    step = is_open.view(np.int8) * np.int8(2)
    step -= np.int8(1)
    return np.cumsum(step, dtype=np.int32)


def _line_of(newlines: np.ndarray, offsets: np.ndarray | int) -> np.ndarray:
    return np.searchsorted(newlines, offsets, side="left") + 1


def scan_trees(
    data: bytes, path: str = "<string>", *, one_per_line: bool | None = None, lines: int | None = None
) -> Treebank:
    """The trees of bracketed text (bytes) in columns (see the module docstring for the layouts).

    Args:
        data: the text.
        path: the file name for messages.
        one_per_line: True to require one tree per line (every line a sentence), False to read trees over several
            lines, None (default) to decide from the text.
        lines: with ``one_per_line=True``, the number of sentences: the text's first ``lines`` lines, blank lines
            after the last tree included (a piece of a file cut after a newline); default: up to the last tree.

    Raises:
        InputFormatError: on malformed brackets or bytes that are not UTF-8, naming ``path`` and the line.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.isascii():  # ASCII is UTF-8: no decoding to check it
        check_utf8(data, path)
    if _ptb_scan is not None:
        bank = _scanned(data, path, one_per_line, lines)
        if bank is not None:
            return bank
    return _scan_numpy(data, path, one_per_line, lines)


def _scanned(data: bytes, path: str, one_per_line: bool | None, lines: int | None) -> Treebank | None:
    """:func:`scan_trees` by the compiled reader (:mod:`._ptb_scan`), or None for text it leaves to NumPy."""
    assert _ptb_scan is not None
    per_tree = one_per_line is False
    if lines is not None and (per_tree or lines < 0):
        return None
    got = _ptb_scan.scan(data, -1 if lines is None else lines, per_tree)
    if got == _SPANS_LINES and one_per_line is None and lines is None:  # the layout of trees over several lines
        per_tree = True
        got = _ptb_scan.scan(data, -1, per_tree)
    if isinstance(got, int):
        return None
    buffer, offsets, leaves, nodes, sentences = got
    columns = np.frombuffer(buffer, dtype=np.int64).reshape(_ROWS, -1)
    tag_start, tag_end, word_start, word_end = columns[:4, :leaves]
    node_sentence, label_start, label_end, first, last = columns[4:9, :nodes]
    return Treebank(
        path=path,
        data=np.frombuffer(data, dtype=np.uint8),
        sentences=sentences,
        line=columns[9, :sentences] if per_tree else np.arange(1, sentences + 1),
        leaf_offsets=np.frombuffer(offsets, dtype=np.int64, count=sentences + 1),
        tag_start=tag_start,
        tag_end=tag_end,
        word_start=word_start,
        word_end=word_end,
        node_sentence=node_sentence,
        label_start=label_start,
        label_end=label_end,
        first=first,
        last=last,
    )


def _scan_numpy(data: bytes, path: str, one_per_line: bool | None, lines: int | None) -> Treebank:
    """:func:`scan_trees` of text without a byte-order mark, in NumPy (every layout, and the errors' words)."""
    b = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(b == 10)

    def fail(offset: int, message: str) -> InputFormatError:
        return InputFormatError(path, int(_line_of(newlines, offset)), message)

    opens = b == _OPEN
    paren = opens | (b == _CLOSE)
    # token bytes: neither a parenthesis nor C isspace() (9-13, 32); bytes below 32 other than newlines are rare
    tok = np.greater(b, 32)
    tok ^= paren
    if np.count_nonzero(b < 32) != newlines.size:
        tok |= (b < 9) | ((b > 13) & (b < 32))
    # tokens: runs of token bytes; edge is +1 where one starts, -1 right after one ends
    tok8 = tok.view(np.int8)
    edge = np.empty(b.size + 1, dtype=np.int8)
    if b.size:
        edge[0], edge[-1] = tok8[0], -tok8[-1]
        np.subtract(tok8[1:], tok8[:-1], out=edge[1:-1])
    else:
        edge[0] = 0
    # (the byte-sized temporaries are dropped as soon as they are used: the arrays of a large file take less memory
    # at once, fewer fresh pages to fault in)
    del tok, tok8
    bounds = np.flatnonzero(edge != 0)  # a start and the end after it, in turn
    t_start, t_end = bounds[0::2], bounds[1::2]
    del bounds
    # events: token starts and parentheses in file order; the tokens after parenthesis k (up to the next one) are
    # numbered from first_token[k] = (its event index) - k
    events = np.flatnonzero((edge[:-1] == 1) | paren)
    paren_event = np.flatnonzero(paren[events])
    pos = events[paren_event]
    del events
    is_open = opens[pos]
    del opens, paren
    first_token = paren_event
    first_token -= np.arange(paren_event.size)
    del paren_event
    count = np.diff(np.append(first_token, t_start.size))
    n_paren = pos.size
    attached = edge[pos + 1] == 1  # a token starts right after the parenthesis (a label, after '(')
    attached &= is_open
    del edge
    nxt_open = np.zeros_like(is_open)
    nxt_open[:-1] = is_open[1:]
    leaf = is_open & ~nxt_open  # '(' not followed by '(': a part-of-speech node (its ')' next)
    phrase = is_open & nxt_open
    close = ~is_open
    # the phrase brackets: a phrase's '(' and every ')' that does not close a part of speech; the other parentheses
    # come in pairs '(' ')' (a part of speech), but for a '(' that ends the text
    both = np.flatnonzero(phrase | (close & np.append(True, close[:-1])))
    level = _depth(is_open[both])  # the depth after each phrase bracket
    is_close = close[both]
    # the trees: a '(' at depth 0 opens one. Balanced text whose trees are phrases is read from the phrase brackets
    # alone (the part-of-speech pairs between them leave the depth as it is); other text (unbalanced, or a tree
    # that is a part-of-speech node alone) from the depth of every parenthesis
    at_top = both[is_close & (level == 0)]  # the ')' that close trees
    balanced = n_paren == 0 or not is_open[-1] and level.min(initial=0) >= 0 and int(level[-1:].sum()) == 0
    simple = balanced and not leaf[:1].any() and not leaf[at_top[at_top + 1 < n_paren] + 1].any()
    if simple:
        tree_open = both[~is_close & (level == 1)]
        tree_close = at_top
    else:
        depth = _depth(is_open)
        if depth.min() < 0:
            k = int(np.argmax(depth < 0))
            raise fail(int(pos[k]), "unbalanced ')': no bracket is open")
        if depth[-1] != 0:
            k = int(np.flatnonzero(is_open & (depth == 1))[-1])
            raise fail(int(pos[k]), f"unbalanced '(': {int(depth[-1])} bracket(s) of this tree never closed")
        tree_open = np.flatnonzero(is_open & (depth == 1))
        tree_close = np.flatnonzero(close & (depth == 0))
        del depth
    if t_start.size and (not n_paren or t_start[0] < pos[0]):
        raise fail(int(t_start[0]), f"text {_show(data, t_start[0], t_end[0])} outside any tree")
    # tokens expected after each parenthesis: none after ')', the label (if any) after a phrase's '(', tag and word
    # after a part of speech's '(' (which must have its tag)
    expected = attached.view(np.int8) + leaf.view(np.int8)
    if np.any(count != expected) or np.any(leaf & ~attached):
        depth = _depth(is_open)
        _explain(data, fail, pos, depth, count, attached, leaf, phrase, close, first_token, t_start, t_end)
    del count, expected

    # the layout: decided by the lines the trees open and close on
    open_line = _line_of(newlines, pos[tree_open])
    close_line = _line_of(newlines, pos[tree_close])
    per_line = bool(np.all(open_line == close_line))
    if one_per_line and not per_line:
        at = open_line[int(np.argmax(open_line != close_line))]
        raise InputFormatError(path, int(at), "expected one tree per line")
    one_per_line = per_line if one_per_line is None else one_per_line
    if lines is not None and not (one_per_line and lines >= (int(open_line[-1]) if open_line.size else 0)):
        raise ValueError(f"lines={lines} needs one_per_line=True and every tree within the first {lines} lines")
    if one_per_line and (tree_open.size or lines is not None):
        # every line is a sentence (blank lines are empty sentences), up to the last tree or the lines asked for
        sentence_of_tree = open_line - 1
        sentences = int(open_line[-1]) if lines is None else lines
        line = np.arange(1, sentences + 1)
    else:
        sentence_of_tree = np.arange(tree_open.size)
        sentences = int(tree_open.size)
        line = open_line
    # the sentence of each parenthesis: its tree's (the first parenthesis opens the first tree)
    sentence_of_paren = np.repeat(sentence_of_tree, np.diff(np.append(tree_open, n_paren)))

    leaf_idx = np.flatnonzero(leaf)
    leaf_sentence = sentence_of_paren[leaf_idx]
    leaf_offsets = np.searchsorted(leaf_sentence, np.arange(sentences + 1))
    tag_tok = first_token[leaf_idx]
    # a phrase's matching ')': among the phrase brackets, those of one level alternate open / close in file order
    # (the level of a ')' is that of its '(': the depth before it)
    opened = np.flatnonzero(~is_close)  # the phrases, in the order their brackets open
    node_idx = both[opened]
    label_tok = np.where(attached[node_idx], first_token[node_idx], 0)
    has_label = attached[node_idx]
    empty_at = pos[node_idx] + 1
    del first_token, pos
    level += is_close
    deepest = int(level.max(initial=0))  # the levels in the narrowest type: a stable sort of small ints is a radix sort
    narrow = level.astype(np.int8 if deepest < 126 else np.int16) if deepest < 32000 else level
    order = np.argsort(narrow, kind="stable")
    del level, narrow
    mate = np.empty(both.size, dtype=np.int64)
    mate[order[0::2]] = order[1::2]
    closed = mate[opened]  # the phrases' ')' among the phrase brackets
    del mate, order
    # part-of-speech nodes before the k-th phrase bracket (at parenthesis both[k]): the k phrase brackets and pairs
    # '(' ')' before it
    leaves_before = both - np.arange(both.size)
    leaves_before >>= 1
    node_sentence = sentence_of_paren[node_idx]
    del sentence_of_paren
    base = leaf_offsets[node_sentence]
    tag_start, tag_end = t_start[tag_tok], t_end[tag_tok]
    tag_tok += 1  # the word after each tag
    word_start, word_end = t_start[tag_tok], t_end[tag_tok]
    del tag_tok
    label_start = np.where(has_label, t_start[label_tok] if t_start.size else empty_at, empty_at)
    label_end = np.where(has_label, t_end[label_tok] if t_end.size else empty_at, empty_at)
    del t_start, t_end, label_tok, empty_at
    first = leaves_before[opened] - base
    last = leaves_before[closed] - base
    return Treebank(
        path=path,
        data=b,
        sentences=sentences,
        line=np.asarray(line, dtype=np.int64),
        leaf_offsets=leaf_offsets.astype(np.int64),
        tag_start=tag_start,
        tag_end=tag_end,
        word_start=word_start,
        word_end=word_end,
        node_sentence=node_sentence.astype(np.int64),
        label_start=label_start,
        label_end=label_end,
        first=first,
        last=last,
    )


def _explain(
    data: bytes,
    fail: Any,
    pos: np.ndarray,
    depth: np.ndarray,
    count: np.ndarray,
    attached: np.ndarray,
    leaf: np.ndarray,
    phrase: np.ndarray,
    close: np.ndarray,
    first_token: np.ndarray,
    t_start: np.ndarray,
    t_end: np.ndarray,
) -> None:
    """Raise the error of the first parenthesis followed by the wrong number of tokens."""
    bad = close & (count > 0)  # a token after ')'
    if bad.any():
        k = int(np.argmax(bad))
        j = first_token[k]
        raise fail(
            int(t_start[j]),
            f"text {_show(data, t_start[j], t_end[j])} outside any tree"
            if depth[k] == 0
            else f"bare word {_show(data, t_start[j], t_end[j])} inside a phrase: expected (TAG word) or ')'",
        )
    bad = phrase & (count != attached)
    if bad.any():
        k = int(np.argmax(bad))
        j = first_token[k] + int(attached[k])
        raise fail(
            int(t_start[j]),
            f"bare word {_show(data, t_start[j], t_end[j])} inside a phrase: expected (TAG word) or '('",
        )
    bad = leaf & ((count != 2) | ~attached)
    if bad.any():
        k = int(np.argmax(bad))
        seg = data[pos[k] : pos[k + 1] + 1].decode("utf-8")
        found = "no word" if count[k] < 2 and attached[k] else "no tag" if not attached[k] else "more than one word"
        raise fail(int(pos[k]), f"expected a part-of-speech node (TAG word); found {seg!r} ({found})")
    raise AssertionError("unreachable: a token count was wrong but no check failed")


def _show(data: bytes, start: int, end: int) -> str:
    text = data[int(start) : int(end)].decode("utf-8")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def read_bytes(source: str | os.PathLike[str]) -> bytes:
    """The bytes of a file (for :func:`scan_trees`); InputFormatError naming the file where it cannot be read."""
    path = os.fspath(source)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as err:
        raise InputFormatError(path, None, f"cannot read the file ({err.strerror or err})") from None


def read_treebank(source: str | os.PathLike[str]) -> Treebank:
    """The trees of a bracketed file in columns (:func:`scan_trees`)."""
    return scan_trees(read_bytes(source), os.fspath(source))


def parse_trees(text: str, source: str = "<string>") -> list[Tree]:
    """:class:`Tree` objects of bracketed text, one per tree, e.g. ``( (S (NP (DT the) (NN cat)) (VP (VBD sat))))``.

    Raises:
        InputFormatError: on malformed brackets (with the line).

    Example:
        >>> [t] = parse_trees("(S (NP (DT a) (NN b)) (VP (VBZ c)))")
        >>> t.label, t.words(), str(t.children[0])
        ('S', ['a', 'b', 'c'], '(NP (DT a) (NN b))')
    """
    scan_trees(text.encode("utf-8"), source)  # the checks and messages of the file reader
    trees: list[Tree] = []
    stack: list[tuple[str, list[Tree | str]]] = []
    label_next = False
    for tok in re.findall(_TOKEN, text):
        if tok == "(":
            stack.append(("", []))
            label_next = True
        elif tok == ")":
            label, children = stack.pop()
            node = Tree(label, tuple(children))
            (stack[-1][1] if stack else trees).append(node)
            label_next = False
        elif tok.isspace():
            label_next = False
        elif label_next:
            stack[-1] = (tok, stack[-1][1])
            label_next = False
        else:
            stack[-1][1].append(tok)
    return trees


def read_trees(source: str | os.PathLike[str]) -> list[Tree]:
    """:class:`Tree` objects of a bracketed file."""
    return parse_trees(decode_text(read_bytes(source), source), os.fspath(source))
