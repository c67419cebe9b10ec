"""The CoNLL 2018 script's tree checks of a dependency corpus, sentence by sentence and a whole side at once.

A sentence's words must have ids ``1..n`` in order, HEADs in ``0..n``, exactly one root and no cycle, and its
multiword tokens must cover words of the sentence (:func:`check_tree`, the reference, which names the offending word);
the predicted words must spell the reference's text (:func:`_check_text`).
:func:`_all_checked` checks a whole side's sentences in a few NumPy passes and says whether they all pass; any
failure is then found, for its message, by checking each sentence in turn in file order.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.conllu import DepSentence, DepToken, surface

__all__ = ["check_tree"]


def check_tree(sentence: DepSentence, index: int | None = None) -> None:
    """Raise unless ``sentence`` is a tree: heads in ``0..n``, no cycle, exactly one root (HEAD 0).

    Args:
        sentence: the sentence.
        index: its 1-based position in its file, for the message.

    Raises:
        InputFormatError: naming the sentence's file, the sentence and the line of an offending word.
    """
    _check_heads(sentence, index)
    words = sentence.words
    heads = [0, *(w.head for w in words)]
    state = [0] * (len(words) + 1)  # 0 unseen, 1 on the current path, 2 done
    for start in range(1, len(words) + 1):
        if state[start]:
            continue
        path, node = [], start
        while node and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if node and state[node] == 1:
            cycle = path[path.index(node) :]
            through = " -> ".join(str(w) for w in (*cycle, node))
            raise InputFormatError(
                sentence.source,
                words[cycle[0] - 1].line if words[cycle[0] - 1].line is not None else sentence.line,
                f"{sentence.describe(index)}: expected a tree; found a cycle through words {through} (pass "
                "check_trees=False, or --no-check-trees, to score it anyway)",
            )
        for w in path:
            state[w] = 2
    if heads.count(0) == 2:  # the padding and one root
        return
    roots = [w for w in words if w.head == 0]
    if len(roots) != 1:
        at = roots[1].line if len(roots) > 1 and roots[1].line is not None else sentence.line
        which = f": words {', '.join(str(w.id) for w in roots)}" if roots else ""
        raise InputFormatError(
            sentence.source,
            at,
            f"{sentence.describe(index)}: expected exactly one root (HEAD 0); found {len(roots)}{which} (pass "
            "check_trees=False, or --no-check-trees, to score it anyway)",
        )


def _check_heads(sentence: DepSentence, index: int | None) -> None:
    words = sentence.words
    n = len(words)
    heads = [w.head for w in words]
    if (
        all(type(h) is int for h in heads)
        and (not heads or (min(heads) >= 0 and max(heads) <= n))
        and [w.id for w in words] == list(range(1, n + 1))
    ):
        return  # every word in order with a head in 0..n: what the loop below checks, at once
    for k, w in enumerate(words, start=1):
        h = w.head
        if w.id != k or not (type(h) is int or (isinstance(h, int) and not isinstance(h, bool))) or not 0 <= h <= n:
            raise InputFormatError(
                sentence.source,
                w.line if w.line is not None else sentence.line,
                f"{sentence.describe(index)}: expected word {k} with HEAD between 0 and {n}; found word {w.id!r} "
                f"with HEAD {w.head!r}",
            )


#: A word's fields, as :func:`_columns` reads them.
_FIELDS = operator.attrgetter("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "line")


def _columns(words: Sequence[DepToken]) -> list[Sequence[Any]]:
    """The words' ids, forms, lemmas, UPOS, XPOS, features, heads, relations and lines: nine columns."""
    return list(zip(*map(_FIELDS, words))) if words else [()] * 9


def _all_checked(lengths: Sequence[int], ids: Sequence[Any], heads: Sequence[Any], check_trees: bool) -> bool:
    """Whether every sentence passes :func:`check_tree` (``check_trees``) or its head checks, all checked at once.

    ``lengths`` are the sentences' numbers of words; ``ids`` and ``heads`` those of their words, in order. True only
    when each sentence would pass: its word ids 1, 2, ..., n, every HEAD an ``int`` in ``0..n`` and, with
    ``check_trees``, one root and no cycle (every word reaches the root within ``n`` steps: the parent map squared
    until it takes that many). False otherwise, also for anything unusual such as a HEAD of another type; the
    sentences are then checked one by one, for the message.
    """
    if not (set(map(type, heads)) <= {int} and set(map(type, ids)) <= {int}):
        return False
    size = np.asarray(lengths, dtype=np.int64)
    first = np.repeat(np.cumsum(size) - size, size)  # each word's sentence: its first word
    n = np.repeat(size, size)
    head = np.asarray(heads, dtype=np.int64)
    if np.any(np.asarray(ids, dtype=np.int64) != np.arange(len(ids)) - first + 1) or np.any(head < 0):
        return False
    if np.any(head > n):
        return False
    if not check_trees:
        return True
    roots = np.bincount(np.repeat(np.arange(size.size), size)[head == 0], minlength=size.size)
    if np.any(roots != 1):
        return False
    total = len(ids)
    parent = np.append(np.where(head == 0, total, first + head - 1), total)  # the root's parent: the end, a fixed point
    steps = 1
    while steps < int(size.max(initial=0)):
        parent = parent[parent]
        steps *= 2
    return bool(np.all(parent == total))


def _check_multiword(sentence: DepSentence, index: int | None) -> None:
    """Raise unless the multiword tokens lie in order inside the sentence, each over two words or more."""
    n, after = len(sentence.words), 0
    for m in sentence.multiword:
        if not (isinstance(m.first, int) and isinstance(m.last, int) and after < m.first < m.last <= n) or not surface(
            m.form
        ):
            raise InputFormatError(
                sentence.source,
                m.line if m.line is not None else sentence.line,
                f"{sentence.describe(index)}: expected multiword tokens in order, each over words {after + 1}..{n} "
                f"of the sentence (at least two) with a non-empty FORM; found the range {m.first}-{m.last} "
                f"{m.form!r} (a multiword token cannot cross a sentence boundary)",
            )
        after = m.last


def _check_text(gold: Any, system: Any, prefix: str = "", advice: str = "") -> None:
    """Refuse two sides (``dependency_counts._Side``) whose words spell different texts, naming where they part."""
    if gold.text == system.text:
        return
    d = 0
    limit = min(len(gold.text), len(system.text))
    while d < limit and gold.text[d] == system.text[d]:
        d += 1
    g_file, g_line = gold.locate(d)
    s_file, s_line = system.locate(d)
    g_where = f"{g_file}:{g_line}" if g_line is not None else g_file
    raise InputFormatError(
        s_file,
        s_line,
        f"{prefix}the predicted words spell a different text than the reference ({g_where}) from character {d}: "
        f"expected {gold.text[d : d + 20]!r}, found {system.text[d : d + 20]!r} (forms are compared with spaces "
        f"removed){advice}",
    )


def _documents(x: Any, what: str) -> list[DepSentence]:
    if isinstance(x, DepSentence):
        return [x]
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{what}: expected DepSentence objects (or sequences of them); found {type(x).__name__}")
    out = list(x)
    for s in out:
        if not isinstance(s, DepSentence):
            raise TypeError(f"{what}: expected DepSentence objects; found {type(s).__name__}")
    return out
