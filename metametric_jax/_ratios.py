"""F1 as the official scorers compute it from their printed ratios (a module of its own: every scorer imports it)."""

from __future__ import annotations

__all__ = ["f_measure"]


def f_measure(precision: float, recall: float) -> float:
    """The harmonic mean :math:`2PR / (P + R)` of two ratios, 0.0 when both are 0.

    This is how scorer.pl, EVALB and rouge-score compute F1 from their precision and recall.

    >>> f_measure(0.5, 1.0)
    0.6666666666666666
    """
    p, r = float(precision), float(recall)
    return 2.0 * p * r / (p + r) if p + r else 0.0
