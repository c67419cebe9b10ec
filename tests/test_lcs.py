"""One LCS for the whole package: its tie-breaks against the walks they name (rouge-score's ``lcs_ind``, the CoNLL 2018
script's forward walk, the weighted alignment of sequence matching), on equal items and on weights alike."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from metametric_jax.lcs import TIES, bit_masks, lcs_length, lcs_pairs, lcs_positions, weighted_lcs

SEQS = st.lists(st.integers(0, 3), max_size=9)


def _forward(a: list, b: list) -> list[tuple[int, int]]:
    """The CoNLL 2018 script's walk: a table of suffix LCS lengths, read from the start, skipping in ``a`` on ties."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for x in range(n - 1, -1, -1):
        for y in range(m - 1, -1, -1):
            table[x][y] = table[x + 1][y + 1] + 1 if a[x] == b[y] else max(table[x + 1][y], table[x][y + 1])
    pairs, x, y = [], 0, 0
    while x < n and y < m:
        if a[x] == b[y]:
            pairs.append((x, y))
            x, y = x + 1, y + 1
        elif table[x + 1][y] == table[x][y]:
            x += 1
        else:
            y += 1
    return pairs


def _skip(g: np.ndarray) -> tuple[float, list[tuple[int, int]]]:
    """Sequence matching's weighted alignment: drop an item of the first side, then of the second, while the value
    stays; pair otherwise."""
    n, m = g.shape
    dp = np.zeros((n + 1, m + 1))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            dp[i, j] = max(dp[i - 1, j], dp[i, j - 1], dp[i - 1, j - 1] + g[i - 1, j - 1])
    pairs, i, j = [], n, m
    while i > 0 and j > 0:
        if dp[i, j] == dp[i - 1, j]:
            i -= 1
        elif dp[i, j] == dp[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    return float(dp[n, m]), [(a, b) for a, b in reversed(pairs) if g[a, b] > 0]


def _equal(a: list, b: list) -> np.ndarray:
    return np.array([[x == y for y in b] for x in a], dtype=np.float64).reshape(len(a), len(b))


@settings(max_examples=300, deadline=None)
@given(SEQS, SEQS)
def test_each_tie_break_is_the_walk_it_names(a: list[int], b: list[int]) -> None:
    end = lcs_pairs(a, b, ties="end")
    assert [i for i, _ in end] == rouge_scorer.lcs_ind(a, b) == lcs_positions(a, b, bit_masks(b))
    assert end == lcs_pairs(a, b, b_masks=bit_masks(b))
    assert lcs_pairs(a, b, ties="start") == _forward(a, b)
    assert lcs_pairs(a, b, ties="skip") == _skip(_equal(a, b))[1]
    for ties in TIES:
        pairs = lcs_pairs(a, b, ties=ties)
        assert len(pairs) == lcs_length(a, b) == lcs_length(b, a)
        assert lcs_positions(a, b, ties=ties) == [i for i, _ in pairs]
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(i0 < i1 and j0 < j1 for (i0, j0), (i1, j1) in zip(pairs, pairs[1:]))
        # equal items are weights 0 or 1: the weighted walk takes the same pairs
        assert weighted_lcs(_equal(a, b), ties=ties) == (float(len(pairs)), pairs)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5), st.integers(0, 5), st.integers(0, 2**32 - 1))
def test_weighted_alignments(n: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    g = rng.choice([0.0, 0.5, 1.0, 2.0], size=(n, m))
    value, pairs = weighted_lcs(g)
    assert (value, pairs) == _skip(g)
    for ties in TIES:
        v, p = weighted_lcs(g, ties=ties)
        assert v == value and sum(g[i, j] for i, j in p) == value
        assert all(i0 < i1 and j0 < j1 for (i0, j0), (i1, j1) in zip(p, p[1:]))
    flipped = weighted_lcs(g[::-1, ::-1], ties="end")[1]
    assert weighted_lcs(g, ties="start")[1] == [(n - 1 - i, m - 1 - j) for i, j in reversed(flipped)]


def test_ties_are_checked() -> None:
    with pytest.raises(ValueError, match="ties must be one of 'end', 'start', 'skip'; found 'first'"):
        lcs_pairs("ab", "ab", ties="first")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ties must be one of"):
        weighted_lcs(np.ones((1, 1)), ties="last")  # type: ignore[arg-type]
