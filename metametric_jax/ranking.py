r"""Ranked retrieval's similarities: a ranked list against judgements (hits at k, average precision).

A *ranking* is an ordered sequence of items, best first; a set (or any other unordered collection) is refused with a
``TypeError``, since its iteration order is arbitrary. *Judgements* are either a collection of the relevant items
(each of grade 1) or a mapping ``item -> integer grade``. With a relevance level :math:`\ell` (default 1) an item is
relevant when its grade is at least :math:`\ell`. An item repeated in a ranking counts at its first rank only.

With :math:`\mathrm{rel}_i = 1` when the item at rank :math:`i` is relevant, :math:`h_k = \sum_{i \le k}
\mathrm{rel}_i` and :math:`R` the number of relevant items,

* :class:`AtK` gives :math:`(h_k, k, R)`: normalized by ``precision`` it is precision@k, by ``recall`` recall@k;
* :class:`AveragePrecision` gives :math:`(\sum_i \mathrm{P@}i \cdot \mathrm{rel}_i, h_n, R)`: normalized by
  ``recall`` it is average precision, :math:`\mathrm{AP} = \frac{1}{R} \sum_i \mathrm{P@}i \cdot \mathrm{rel}_i`.

Both equal trec_eval's ``P_k``, ``recall_k`` and ``map`` of one query; trec_eval's measures, its names and its rules
live in :mod:`metametric_jax.tasks.trec_measures` and :mod:`metametric_jax.tasks.ranking`.

Example (metametric's documentation): ranking ``a, b, c, d`` against ``{c, d, e}`` has AP = (1/3 + 2/4) / 3 ≈ 0.2778.

>>> AveragePrecision().score(["a", "b", "c", "d"], {"c", "d", "e"})  # the unnormalized sum 1/3 + 2/4
0.8333333333333333
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.ranked_lists import judgements, rank, ranked_list
from metametric_jax.similarity import Mode, Similarity

__all__ = [
    "AtK",
    "AveragePrecision",
    "judgements",
    "rank",
    "ranked_list",
]


def _relevance(ranking: list[Any], grades: Mapping[Any, int], level: int) -> tuple[np.ndarray, int]:
    """Whether the item at each rank is relevant (a later copy of a repeated item is not), and R."""
    n = len(ranking)
    relevant = np.fromiter(map(grades.get, ranking, itertools.repeat(-1, n)), np.int64, n) >= level
    if n > 1 and len(set(ranking)) != n:
        seen: set[Any] = set()
        for i, x in enumerate(ranking):
            if x in seen:
                relevant[i] = False
            seen.add(x)
    return relevant, sum(1 for grade in grades.values() if grade >= level)


def _check_level(level: int) -> int:
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or level < 0:
        raise ValueError(f"the relevance level must be a non-negative integer; found {level!r}.")
    return int(level)


class AtK(Similarity):
    """Hits in the top ``k``: statistics ``(h_k, k, R)`` (precision@k and recall@k by normalizer).

    Args:
        k: the cut-off, a positive integer.
        level: the least grade of a relevant item (for graded judgements).
    """

    def __init__(self, k: int, level: int = 1) -> None:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive integer; found {k!r}.")
        self.k = int(k)
        self.level = _check_level(level)
        self.name = f"at_{k}"

    def _stats(self, x: Any, y: Any) -> tuple[float, float, float]:
        relevant, n_relevant = _relevance(ranked_list(x, self.name), judgements(y, self.name), self.level)
        return float(np.count_nonzero(relevant[: self.k])), float(self.k), float(n_relevant)

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self._stats(x, y)[0]

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return np.array([self._stats(p, r) for p, r in zip(predictions, references)], np.float64).reshape(-1, 3)


class AveragePrecision(Similarity):
    r"""Average precision of a ranking: statistics :math:`(\sum_i \mathrm{P@}i \cdot \mathrm{rel}_i, h_n, R)`.

    Normalized by ``recall`` it is AP (trec_eval's ``map`` for one query); a query with no relevant item has AP 0.

    Args:
        level: the least grade of a relevant item (for graded judgements).
    """

    name = "average_precision"

    def __init__(self, level: int = 1) -> None:
        self.level = _check_level(level)

    def _stats(self, x: Any, y: Any) -> tuple[float, float, float]:
        relevant, n_relevant = _relevance(ranked_list(x, self.name), judgements(y, self.name), self.level)
        at = np.flatnonzero(relevant)
        precisions = np.arange(1, at.size + 1) / (at + 1.0)  # P@i at each relevant rank i, summed in rank order
        return (float(np.cumsum(precisions)[-1]) if at.size else 0.0), float(at.size), float(n_relevant)

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self._stats(x, y)[0]

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return np.array([self._stats(p, r) for p, r in zip(predictions, references)], np.float64).reshape(-1, 3)
