"""Checks of what a batch brings: statistics, weights, and predictions beside references (one message each)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_batch", "validate_stats", "validate_weights", "OVERLAP_TOLERANCE"]

#: the relative (and absolute) slack of the check overlap <= min(self-overlaps), for float rounding
OVERLAP_TOLERANCE = 1e-9


def validate_stats(stats: Any, name: str, *, self_bounded: bool = False) -> np.ndarray:
    r"""Per-example statistics as float64 ``(n, 3)`` of (xy, xx, yy).

    Refuses other shapes and negative or non-finite values. With ``self_bounded`` (statistics of a similarity with
    :math:`\phi(x, y) \le \min(\phi(x, x), \phi(y, y))`, see
    :attr:`metametric_jax.similarity.Similarity.self_bounded`) it also refuses an overlap above either self-overlap,
    ``xy > min(xx, yy)``, up to :data:`OVERLAP_TOLERANCE` (relative and absolute) for float rounding: such a
    similarity cannot produce one, and its normalized figures would exceed 1. Other statistics need not be bounded:
    one-sided ones leave a side 0 (coreference's recall members hold ``(numerator, 0, denominator)``) and counts may
    exceed their denominator (EVALB's crossing brackets per sentence).
    """
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
    if self_bounded:
        xy, bound = arr[:, 0], np.minimum(arr[:, 1], arr[:, 2])
        over = xy > bound * (1.0 + OVERLAP_TOLERANCE) + OVERLAP_TOLERANCE
        if over.any():
            i = int(np.argmax(over))
            raise ValueError(
                f"{name}: an overlap cannot exceed either self-overlap (the similarity is bounded by its "
                f"self-similarities); example {i} has overlap {float(xy[i])!r} > min(predicted self-overlap "
                f"{float(arr[i, 1])!r}, reference self-overlap {float(arr[i, 2])!r})."
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
