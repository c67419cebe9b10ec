r"""Ranking similarities over a ranked list of predictions and a reference collection.

With hits :math:`h_k = |\{\text{top-}k \text{ predictions}\} \cap R|`:

* :class:`AtK` gives :math:`(h_k, k, |R|)`: the ``precision`` normalizer is precision@k, ``recall`` is recall@k;
* :class:`AveragePrecision` gives :math:`(\sum_k P@k \cdot rel_k, h_n, |R|)`: the ``recall`` normalizer is average
  precision, :math:`AP = \frac{1}{|R|} \sum_k P@k \cdot rel_k`.

Example (metametric's documentation): ranking ``a, b, c, d`` against ``{c, d, e}`` has AP = (1/3 + 2/4) / 3 ≈ 0.2778.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metametric_jax.matching import as_list
from metametric_jax.similarity import Mode, Similarity

__all__ = ["AtK", "AveragePrecision"]


def _hits(ranked: list[Any], relevant: set[Any]) -> np.ndarray:
    seen: set[Any] = set()
    rel = np.zeros(len(ranked), dtype=np.float64)
    for i, x in enumerate(ranked):
        if x in relevant and x not in seen:  # a relevant item counts once, at its first rank
            rel[i] = 1.0
        seen.add(x)
    return rel


class AtK(Similarity):
    """Hits in the top ``k``: statistics ``(hits@k, k, |R|)`` (precision@k and recall@k by normalizer).

    Args:
        k: the cut-off, a positive integer.
    """

    def __init__(self, k: int) -> None:
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer; found {k!r}.")
        self.k = k
        self.name = f"at_{k}"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        ranked = as_list(x, self.name)[: self.k]
        return float(_hits(ranked, set(as_list(y, self.name))).sum())

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        out = np.empty((len(predictions), 3), dtype=np.float64)
        for i, (p, r) in enumerate(zip(predictions, references)):
            out[i] = (self.score(p, r), float(self.k), float(len(set(as_list(r, self.name)))))
        return out


class AveragePrecision(Similarity):
    """Average precision of a ranked list: statistics ``(Σ_k P@k·rel_k, hits, |R|)``; normalize by ``recall``."""

    name = "average_precision"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        rel = _hits(as_list(x, self.name), set(as_list(y, self.name)))
        if rel.size == 0:
            return 0.0
        prec = np.cumsum(rel) / np.arange(1, rel.size + 1)
        return float((prec * rel).sum())

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        out = np.empty((len(predictions), 3), dtype=np.float64)
        for i, (p, r) in enumerate(zip(predictions, references)):
            ref = set(as_list(r, self.name))
            rel = _hits(as_list(p, self.name), ref)
            out[i] = (self.score(p, r), float(rel.sum()), float(len(ref)))
        return out
