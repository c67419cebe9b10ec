"""Poisson weights drawn in blocks of rows are the weights of one draw of all rows (any block size, any start)."""

from __future__ import annotations

import numpy as np
import pytest

from metametric_jax import intervals


@pytest.mark.parametrize("block", [1, 334 * 3, 334 * 7 + 5, 1 << 18])  # 1, 3, 7 and all 50 rows of 334 ids
def test_blocks_of_rows_give_the_same_weights(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    ids = np.arange(-40, 960, 3) * 104_729
    hashes = intervals.hashes(ids, 50, 5, intervals.POISSON_STREAM, 11)
    whole = np.searchsorted(intervals.THRESHOLDS, hashes, side="right").astype(np.float64)  # #{k : h >= T_k}
    monkeypatch.setattr(intervals, "_BLOCK_HASHES", block)
    weights = intervals.poisson_weights(ids, 50, seed=5, start=11)
    assert weights.dtype == np.float64 and weights.shape == (50, ids.size)
    np.testing.assert_array_equal(weights, whole)
    assert (weights >= 4).any()  # the searched tail is among them
    np.testing.assert_array_equal(intervals.poisson_weights(ids[:0], 3).shape, (3, 0))
