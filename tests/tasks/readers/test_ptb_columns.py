"""scan_trees' columns equal the trees they were written from: random trees in every layout the reader takes.

Trees whose root is a phrase or a part-of-speech node alone, unlabelled roots, deep and flat trees, one tree per line
or over several lines, blank lines between them: each sentence's tags and words in order, and each phrase's label
and the words it covers (counted within its sentence), against what the generator put there.
"""

from __future__ import annotations

import random
import re

import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.ptb import scan_trees

LABELS = ["S", "NP", "VP", "", "X-1", "PP=2", "é"]
TAGS = ["NN", "DT", "VBZ", ",", "``", "ñ"]
WORDS = ["a", "cat", "sat", "é", "''", "-LRB-", "x" * 20]


def _tree(rng: random.Random, depth: int, words: list[tuple[str, str]], nodes: list[tuple[str, int, int]]) -> str:
    """A random tree in bracketed text; its words appended to ``words``, its phrases (in opening order) to ``nodes``."""
    if depth <= 0 or len(words) > 60 or rng.random() < 0.3:
        tag, word = rng.choice(TAGS), rng.choice(WORDS)
        words.append((tag, word))
        return f"({tag} {word})"
    label = rng.choice(LABELS)
    at = len(nodes)
    nodes.append((label, len(words), -1))
    kids = [_tree(rng, depth - 1, words, nodes) for _ in range(rng.randint(1, 3 if depth < 8 else 1))]
    nodes[at] = (label, nodes[at][1], len(words))
    sep = rng.choice([" ", "\n  ", " \t"])
    return f"({label}{sep}{sep.join(kids)})" if label else f"({sep}{sep.join(kids)})"


@pytest.mark.parametrize("seed", range(6))
def test_columns_are_the_trees_written(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        sentences = []
        texts = []
        for _ in range(rng.randint(1, 6)):
            words: list[tuple[str, str]] = []
            nodes: list[tuple[str, int, int]] = []
            texts.append(_tree(rng, rng.choice([0, 1, 3, 6, 40]), words, nodes))
            sentences.append((words, nodes))
        one_line = all("\n" not in t for t in texts)
        text = ("\n" if one_line else rng.choice(["\n", "\n\n"])).join(texts) + rng.choice(["", "\n", "\n\n"])
        bank = scan_trees(text.encode(), "t.mrg")
        assert bank.sentences == len(sentences)
        tags, words_read = bank.text(bank.tag_start, bank.tag_end), bank.text(bank.word_start, bank.word_end)
        labels = bank.text(bank.label_start, bank.label_end)
        for s, (words, nodes) in enumerate(sentences):
            lo, hi = bank.leaf_offsets[s], bank.leaf_offsets[s + 1]
            assert list(zip(tags[lo:hi], words_read[lo:hi])) == words
            mine = [k for k, owner in enumerate(bank.node_sentence.tolist()) if owner == s]
            read = [(labels[k], int(bank.first[k]), int(bank.last[k])) for k in mine]
            assert read == nodes, (text, s)


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("(NN x)\n(S (NN y)))", 2, "unbalanced ')'"),  # a tree that is a part of speech alone, then too many ')'
        ("(S (NN y))\n(NN x", 2, "never closed"),
        ("(S (NN y))\n(NN x) (", 2, "never closed"),
        ("(S (NN y)) x (NN x)", 1, "outside any tree"),
        (")(S (NN y))", 1, "unbalanced ')'"),
    ],
)
def test_unbalanced_text_around_part_of_speech_trees(text: str, line: int, needle: str) -> None:
    with pytest.raises(InputFormatError, match=re.escape(needle)) as err:
        scan_trees(text.encode(), "t.mrg")
    assert err.value.line == line
