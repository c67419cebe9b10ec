"""Helpers shared by the tests."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def flat(state: Any) -> np.ndarray:
    """Every leaf of a metric or suite state (sums as compensated pairs, signature), flattened to float64 in order.

    Two states are bit-for-bit equal iff their ``flat`` arrays are equal (float32 values are exact in float64).
    """
    return np.concatenate([np.asarray(leaf, np.float64).reshape(-1) for leaf in jax.tree.leaves(state)])


def totals(state: Any) -> np.ndarray:
    """The (xy, xx, yy, count, macro sums...) values of a reduced metric state (hi + lo), float64."""
    t = state.totals()
    return np.array([t["xy"], t["xx"], t["yy"], t["count"], *t["macro"].values()], np.float64)
