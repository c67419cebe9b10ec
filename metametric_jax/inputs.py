"""Checks of what a batch brings: statistics, weights, and predictions beside references (one message each)."""

from __future__ import annotations

from collections.abc import Sized
from typing import Any

import numpy as np

__all__ = ["check_batch", "check_lengths", "validate_stats", "validate_weights", "OVERLAP_TOLERANCE"]

#: the relative (and absolute) slack of the check overlap <= min(self-overlaps), for float rounding
OVERLAP_TOLERANCE = 1e-9


def validate_stats(stats: Any, name: str, *, self_bounded: bool = False, tallies: int = 0) -> np.ndarray:
    r"""Per-example statistics as float64 ``(n, 3)`` of (xy, xx, yy) (``(n, 3 + tallies)`` with tally columns).

    With ``tallies`` (a metric's per-example counts after the statistics, see
    :attr:`metametric_jax.MetricConfig.tallies`) ``(n, 3)`` statistics gain zero tally columns and ``(n, 3 + tallies)``
    ones keep theirs (finite, non-negative).

    Refuses other shapes and negative or non-finite values. With ``self_bounded`` (statistics of a similarity with
    :math:`\phi(x, y) \le \min(\phi(x, x), \phi(y, y))`, see
    :attr:`metametric_jax.similarity.Similarity.self_bounded`) it also refuses an overlap above either self-overlap,
    ``xy > min(xx, yy)``, up to :data:`OVERLAP_TOLERANCE` (relative and absolute) for float rounding: such a
    similarity cannot produce one, and its normalized figures would exceed 1. Other statistics need not be bounded:
    one-sided ones leave a side 0 (coreference's recall members hold ``(numerator, 0, denominator)``) and counts may
    exceed their denominator (EVALB's crossing brackets per sentence).
    """
    arr = np.asarray(stats, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] not in (3, 3 + tallies):
        extra = f" or (n, {3 + tallies}) with its tallies" if tallies else ""
        raise ValueError(
            f"{name}: per-example statistics must have shape (n, 3) (overlap, predicted self-overlap, reference "
            f"self-overlap){extra}; found shape {arr.shape}."
        )
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        what = ["overlap", "predicted self-overlap", "reference self-overlap"][j] if j < 3 else f"tally {j - 3}"
        raise ValueError(
            f"{name}: similarities must be finite and non-negative; example {i} has {what} = {arr[i, j]!r}."
        )
    if tallies and arr.shape[1] == 3:
        arr = np.concatenate([arr, np.zeros((arr.shape[0], tallies))], axis=1)
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


def check_lengths(predictions: Sized, references: Sized, what: str, unit: str = "example") -> None:
    """Predictions and references must pair up, one entry per ``unit``: the one wording of this check everywhere.

    Args:
        predictions: the predicted side (any sized collection: a list, an array of records, a batch).
        references: the reference side.
        what: who checks, first in the message (``"ner"``, ``"Smatch.from_model_output"``).
        unit: what one entry is (``"sentence"``, ``"document"``, ``"query"``).

    Raises:
        ValueError: when their lengths differ.

    >>> check_lengths([["B-PER"], ["O"]], [["O"]], "ner", "sentence")
    Traceback (most recent call last):
    ...
    ValueError: ner: predictions and references must have the same length, one entry per sentence; found 2 predictions and 1 reference.
    """  # noqa: E501
    lp, lr = len(predictions), len(references)
    if lp != lr:
        raise ValueError(
            f"{what}: predictions and references must have the same length, one entry per {unit}; found {lp} "
            f"prediction{'s' * (lp != 1)} and {lr} reference{'s' * (lr != 1)}."
        )


def check_batch(predictions: Any, references: Any, name: str) -> None:
    """Predictions and references must be sequences of the same length (one structure per example)."""
    try:
        len(predictions), len(references)
    except TypeError:
        raise TypeError(
            f"{name}.from_model_output expects sequences of predictions and references (one per example); found "
            f"{type(predictions).__name__} and {type(references).__name__}."
        ) from None
    check_lengths(predictions, references, f"{name}.from_model_output")
