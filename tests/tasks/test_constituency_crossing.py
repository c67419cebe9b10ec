"""EVALB's crossing brackets from range queries equal the definition, pair by pair, on random sentences.

A predicted bracket ``(a, b)`` crosses a reference ``(c, d)`` of its sentence where ``c < a < d < b`` or
``a < c < b < d``; each sentence counts its predicted brackets that cross at least one. Short and long sentences
(sparse tables of one row and of several), empty sentences, repeated and one-word brackets.
"""

from __future__ import annotations

import numpy as np
import pytest

from metametric_jax.tasks.constituency_counts import _crossing


def _brackets(rng: np.random.Generator, words: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sentence = rng.integers(0, words.size, k)
    sentence = sentence[words[sentence] > 0]
    start = np.array([rng.integers(0, words[s]) for s in sentence], dtype=np.int64)
    end = np.array([rng.integers(a + 1, words[s] + 1) for a, s in zip(start, sentence)], dtype=np.int64)
    return sentence.astype(np.int64), start, end


def _by_definition(n: int, gold: tuple[np.ndarray, ...], test: tuple[np.ndarray, ...]) -> list[int]:
    out = [0] * n
    for s, a, b in zip(*(x.tolist() for x in test)):
        if any(t == s and (c < a < d < b or a < c < b < d) for t, c, d in zip(*(x.tolist() for x in gold))):
            out[s] += 1
    return out


@pytest.mark.parametrize("longest", [3, 12, 90])
def test_crossing_is_the_definition(longest: int) -> None:
    rng = np.random.default_rng(longest)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        words = rng.integers(0, longest + 1, n)
        gold = _brackets(rng, words, int(rng.integers(0, 30)))
        test = _brackets(rng, words, int(rng.integers(0, 30)))
        assert _crossing(n, words, *gold, *test).tolist() == _by_definition(n, gold, test)
