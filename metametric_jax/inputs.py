"""Checks of what a batch brings: statistics, weights, and predictions beside references (one message each)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_batch", "validate_stats", "validate_weights"]


def validate_stats(stats: Any, name: str) -> np.ndarray:
    """Per-example statistics as float64 ``(n, 3)``; refuses other shapes, negative and non-finite values."""
    arr = np.asarray(stats, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(
            f"{name}: per-example statistics must have shape (n, 3) (overlap, predicted self-overlap, reference "
            f"self-overlap); found shape {arr.shape}."
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name}: similarities must be finite and non-negative; example {i} has "
            f"{['overlap', 'predicted self-overlap', 'reference self-overlap'][j]} = {arr[i, j]!r}."
        )
    return arr


def validate_weights(weights: Any, n: int, name: str) -> np.ndarray | None:
    """Per-example weights as float64 ``(n,)`` (a scalar is broadcast); ``None`` stays ``None``."""
    if weights is None:
        return None
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: weights must be non-negative numbers, one per example; found {weights!r}.") from None
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"{name}: weights must have shape ({n},), one per example; found shape {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{name}: weights must be finite and non-negative; found {w[~np.isfinite(w) | (w < 0)][:5]}.")
    return w


def check_batch(predictions: Any, references: Any, name: str) -> None:
    """Predictions and references must be sequences of the same length (one structure per example)."""
    try:
        lp, lr = len(predictions), len(references)
    except TypeError:
        raise TypeError(
            f"{name}.from_model_output expects sequences of predictions and references (one per example); found "
            f"{type(predictions).__name__} and {type(references).__name__}."
        ) from None
    if lp != lr:
        raise ValueError(
            f"{name}.from_model_output: predictions and references must have the same length; found {lp} "
            f"predictions and {lr} references."
        )
