"""Ratios as the official scorers compute them (a module of its own: every scorer imports it).

Where a ratio's denominator is 0 the scorers print 0: :data:`UNDEFINED` is that 0.0, marked. It equals 0.0 and
prints as it in every report (``score``, the JSON); a resampled replicate in which a figure is undefined leaves the
figure out (:mod:`metametric_jax.intervals`, :mod:`metametric_jax.analysis`), as it leaves out a figure that is
``None``: a replicate that samples no span of a type has no precision for it, rather than a precision of 0.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Undefined", "UNDEFINED", "ratio", "f_measure", "undefined"]


class Undefined(float):
    """0.0 standing for a ratio whose denominator is 0 (see the module docstring); arithmetic on it gives floats."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        return (Undefined, (0.0,))


UNDEFINED = Undefined(0.0)


def undefined(value: Any) -> bool:
    """Whether ``value`` is :data:`UNDEFINED` (a ratio with a zero denominator, reported as 0.0)."""
    return isinstance(value, Undefined)


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, :data:`UNDEFINED` (0.0) when the denominator is 0."""
    return numerator / denominator if denominator else UNDEFINED


def f_measure(precision: float, recall: float) -> float:
    """The harmonic mean :math:`2PR / (P + R)` of two ratios, 0.0 when both are 0.

    This is how scorer.pl, EVALB and rouge-score compute F1 from their precision and recall. Both undefined
    (:data:`UNDEFINED`): undefined.

    >>> f_measure(0.5, 1.0)
    0.6666666666666666
    """
    p, r = float(precision), float(recall)
    if p + r:
        return 2.0 * p * r / (p + r)
    return UNDEFINED if undefined(precision) and undefined(recall) else 0.0
