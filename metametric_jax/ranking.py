r"""Ranked retrieval: the similarities of a ranked list against judgements, and trec_eval's per-query statistics.

A *ranking* is an ordered sequence of items, best first; a set (or any other unordered collection) is refused with a
``TypeError``, since its iteration order is arbitrary. *Judgements* are either a collection of the relevant items
(each of grade 1) or a mapping ``item -> integer grade``. With a relevance level :math:`\ell` (trec_eval's ``-l``,
default 1) an item is relevant when its grade is at least :math:`\ell`, judged non-relevant when its grade is in
:math:`[0, \ell)`, and unjudged when it is absent or has a negative grade. An item repeated in a ranking counts at its
first rank only; the later copies take up their ranks as unjudged items.

With :math:`\mathrm{rel}_i = 1` when the item at rank :math:`i` is relevant, :math:`h_k = \sum_{i \le k}
\mathrm{rel}_i` and :math:`R` the number of relevant items,

* :class:`AtK` gives :math:`(h_k, k, R)`: normalized by ``precision`` it is precision@k, by ``recall`` recall@k;
* :class:`AveragePrecision` gives :math:`(\sum_i \mathrm{P@}i \cdot \mathrm{rel}_i, h_n, R)`: normalized by
  ``recall`` it is average precision, :math:`\mathrm{AP} = \frac{1}{R} \sum_i \mathrm{P@}i \cdot \mathrm{rel}_i`.

:func:`query_statistics` computes every measure of ``trec_eval`` that this package offers for one query, as the
statistics the accumulators of :mod:`metametric_jax.tasks.ranking` sum (see :data:`MEASURES` for each definition).

Example (metametric's documentation): ranking ``a, b, c, d`` against ``{c, d, e}`` has AP = (1/3 + 2/4) / 3 ≈ 0.2778.

>>> AveragePrecision().score(["a", "b", "c", "d"], {"c", "d", "e"})  # the unnormalized sum 1/3 + 2/4
0.8333333333333333
"""

from __future__ import annotations

import decimal
import functools
import itertools
import math
from collections.abc import Collection, Hashable, ItemsView, Iterable, KeysView, Mapping, Sequence, Set, ValuesView
from typing import Any, NamedTuple, TypeVar

import numpy as np

from metametric_jax.similarity import Mode, Similarity

__all__ = [
    "AtK",
    "AveragePrecision",
    "Measure",
    "MEASURES",
    "MIN_GEO_MEAN",
    "judgements",
    "query_statistics",
    "rank",
    "ranked_list",
]

T = TypeVar("T", bound=Hashable)

#: trec_eval's floor for average precision inside the geometric mean (``gm_map``).
MIN_GEO_MEAN = 1e-5
_GEO_SHIFT = -math.log(MIN_GEO_MEAN)

_UNORDERED = (Set, KeysView, ValuesView, ItemsView, Mapping)


def ranked_list(x: Any, what: str = "ranking") -> list[Any]:
    """A ranking (an ordered sequence, best first) as a list.

    Raises:
        TypeError: for a set, frozenset, mapping, dict view or other unordered or non-sequence value, and for strings.

    >>> ranked_list(("b", "a"))
    ['b', 'a']
    >>> ranked_list({"a", "b"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: ranking: expected an ordered sequence of items, best first (a list or tuple); found a set, ...
    """
    if isinstance(x, _UNORDERED):
        kind = "a set" if isinstance(x, Set) else f"a {type(x).__name__}"
        raise TypeError(
            f"{what}: expected an ordered sequence of items, best first (a list or tuple); found {kind}, whose order "
            "is arbitrary. Sort it first, e.g. with metametric_jax.tasks.ranking.rank."
        )
    if isinstance(x, np.ndarray) and x.ndim == 1:
        return x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(
            f"{what}: expected an ordered sequence of items, best first (a list or tuple); found {type(x).__name__}."
        )
    return list(x)


def judgements(y: Any, what: str = "judgements") -> dict[Any, int]:
    """Judgements as ``{item: grade}``: a mapping ``item -> integer grade``, or the relevant items (each of grade 1).

    Raises:
        TypeError: for strings, non-collections and non-integer grades.

    >>> judgements({"d1": 2, "d2": 0})
    {'d1': 2, 'd2': 0}
    >>> judgements(["d1"])
    {'d1': 1}
    """
    if isinstance(y, Mapping):
        out: dict[Any, int] = {}
        for item, grade in y.items():
            if not isinstance(grade, (int, np.integer)):
                raise TypeError(f"{what}: the grade of {item!r} must be an integer; found {grade!r}.")
            out[item] = int(grade)
        return out
    if isinstance(y, (str, bytes)) or not isinstance(y, Collection):
        raise TypeError(
            f"{what}: expected the relevant items (a collection) or a mapping item -> grade; found {type(y).__name__}."
        )
    return dict.fromkeys(y, 1)


def rank(scored: Mapping[T, float] | Iterable[tuple[T, float]]) -> list[T]:
    """Items in trec_eval's order: score descending, ties broken by item descending (trec_eval compares docnos).

    The order depends only on the scores and the items, never on the input order, so a set of pairs ranks the same
    in every process. Tied items must be comparable with each other.

    Raises:
        TypeError: if an entry is not an ``(item, score)`` pair, a score is not a real number, or tied items cannot
            be compared.
        ValueError: for a NaN score.

    >>> rank([("a", 0.1), ("b", 0.4), ("c", 0.2)])
    ['b', 'c', 'a']
    >>> rank({"d1": 1.0, "d3": 1.0, "d2": 1.0})  # a tie: document id descending
    ['d3', 'd2', 'd1']
    """
    if isinstance(scored, Mapping):
        items, scores = list(scored.keys()), list(scored.values())
    else:
        pairs = list(scored)
        for p in pairs:
            if not (isinstance(p, tuple) and len(p) == 2):
                raise TypeError(f"rank expects (item, score) pairs or a mapping item -> score; found {p!r}.")
        items, scores = [p[0] for p in pairs], [p[1] for p in pairs]
    values = np.asarray(scores) if scores else np.zeros(0)
    if values.ndim != 1 or values.dtype.kind not in "fiu":
        for item, s in zip(items, scores):
            if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)):
                raise TypeError(f"rank: the score of {item!r} must be a real number; found {s!r}.")
        values = np.asarray(scores, dtype=np.float64)
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(f"rank: the score of {items[int(np.flatnonzero(np.isnan(values))[0])]!r} is NaN.")
    keyed = list(zip(values.astype(np.float64).tolist(), items))
    try:
        keyed.sort(reverse=True)
    except TypeError:
        raise TypeError(
            "rank: items with equal scores must be comparable (ties are broken by item, descending)."
        ) from None
    return [item for _, item in keyed]


def _grades(ranking: list[Any], grades: Mapping[Any, int]) -> np.ndarray:
    """The grade at each rank; -1 for unjudged items and for later copies of a repeated item."""
    out = np.array(list(map(grades.get, ranking, itertools.repeat(-1, len(ranking)))), dtype=np.int64)
    if len(set(ranking)) != len(ranking):
        seen: set[Any] = set()
        for i, x in enumerate(ranking):
            if x in seen:
                out[i] = -1
            seen.add(x)
    return np.maximum(out, -1)


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
        stats = query_statistics(ranked_list(x, self.name), judgements(y, self.name), (("P", self.k),), self.level)
        return stats[f"P_{self.k}"]

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
        stats = query_statistics(ranked_list(x, self.name), judgements(y, self.name), (("map", None),), self.level)
        return stats["map"]

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self._stats(x, y)[0]

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return np.array([self._stats(p, r) for p, r in zip(predictions, references)], np.float64).reshape(-1, 3)


# ---------------------------------------------------------------------------------------------- trec_eval measures
class Measure(NamedTuple):
    """One of trec_eval's measure families.

    Attributes:
        name: trec_eval's name (``P``, ``ndcg_cut``, ...); a family with cut-offs prints ``{name}_{cut-off}``.
        kind: how a query's statistics :math:`(x_{y}, x_{x}, y_{y})` give its value: ``precision`` (xy / xx),
            ``recall`` (xy / yy), ``count`` (xy, summed over queries rather than averaged) or ``geometric`` (the
            geometric mean of AP, see ``gm_map``); a 0 denominator gives 0.
        params: ``None`` (no parameters), ``int`` (positive integer cut-offs) or ``float`` (recall levels).
        default: trec_eval's default parameters.
        definition: the per-query value, as trec_eval computes it.
    """

    name: str
    kind: str
    params: type | None
    default: tuple[Any, ...]
    definition: str


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: The measures offered, in trec_eval's output order.
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("num_q", "count", None, (), "1 per query evaluated"),
        Measure("num_ret", "count", None, (), "n, the number of items ranked"),
        Measure("num_rel", "count", None, (), "R, the number of relevant items judged"),
        Measure("num_rel_ret", "count", None, (), "h_n, the relevant items ranked"),
        Measure("map", "recall", None, (), "AP = (1/R) sum_i P@i rel_i; 0 if R = 0"),
        Measure("gm_map", "geometric", None, (), "exp(mean_q log max(AP_q, 1e-5))"),
        Measure("Rprec", "recall", None, (), "h_R / R; 0 if R = 0"),
        Measure(
            "bpref",
            "recall",
            None,
            (),
            "(1/R) sum over ranked relevant r of 1 - min(n_r, R) / min(N, R), n_r the judged non-relevant items "
            "ranked above r, N the judged non-relevant items (unjudged items are skipped)",
        ),
        Measure("recip_rank", "precision", None, (), "1 / rank of the first relevant item; 0 if none is ranked"),
        Measure(
            "iprec_at_recall",
            "precision",
            float,
            (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
            "max_{i >= t} P@i, t the rank of the c-th relevant item, c = round(p R) (half away from zero; the "
            "first relevant item for c = 0); 0 if fewer than c relevant items are ranked",
        ),
        Measure("P", "precision", int, _CUTS, "h_k / k (ranks past the end count as non-relevant)"),
        Measure("recall", "recall", int, _CUTS, "h_k / R; 0 if R = 0"),
        Measure(
            "ndcg",
            "recall",
            None,
            (),
            "DCG / IDCG, DCG = sum_i g_i / log2(i + 1) with g_i the grade at rank i (gain = grade, whatever the "
            "relevance level), IDCG the DCG of all judged grades sorted descending; 0 if IDCG = 0",
        ),
        Measure("ndcg_cut", "recall", int, _CUTS, "DCG@k / IDCG@k (both over the top k ranks)"),
        Measure("map_cut", "recall", int, _CUTS, "(1/R) sum_{i <= k} P@i rel_i"),
        Measure("success", "precision", int, (1, 5, 10), "1 if a relevant item is in the top k, else 0"),
    )
}


@functools.lru_cache(maxsize=4096, typed=True)
def measure_key(family: str, param: Any = None) -> str:
    """trec_eval's printed name: ``map``, ``P_5``, ``iprec_at_recall_0.10``."""
    if param is None:
        return family
    return f"{family}_{param:3.2f}" if isinstance(param, float) else f"{family}_{param}"


def _lround(x: float) -> int:
    """C's ``lround``: the nearest integer, halves away from zero, of the exact double."""
    return int(decimal.Decimal(x).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def _at(cum: np.ndarray, k: int) -> float:
    """h_k: relevant items in the top k (all of them when fewer than k are ranked)."""
    if cum.size == 0:
        return 0.0
    return float(cum[min(k, cum.size) - 1])


def query_statistics(
    ranking: Sequence[Any],
    grades: Mapping[Any, int],
    plan: Sequence[tuple[str, Any]],
    level: int = 1,
) -> dict[str, tuple[float, float, float]]:
    """The statistics ``(xy, xx, yy)`` of each measure of ``plan`` for one query (see :data:`MEASURES`).

    Args:
        ranking: the items ranked, best first (already ordered, already cut to any maximum length).
        grades: the query's judgements ``{item: grade}`` (negative grades are unjudged items).
        plan: ``(family, parameter)`` pairs, the parameter ``None`` for a family without parameters.
        level: the least grade of a relevant item.

    Returns:
        ``{printed name: (xy, xx, yy)}``; a measure's value for the query follows from its ``kind``.

    >>> s = query_statistics(["d1", "d2", "d3"], {"d2": 1, "d3": 2, "d9": 1}, [("map", None), ("P", 2)])
    >>> s["map"], s["P_2"]
    ((1.1666666666666665, 2.0, 3.0), (1.0, 2.0, 3.0))
    """
    g = _grades(list(ranking), grades)
    n = g.size
    rel = g >= level
    cum = np.cumsum(rel).astype(np.float64)
    pos = np.flatnonzero(rel)
    prec_at_rel = cum[pos] / (pos + 1.0)  # P@i at each relevant rank i
    judged = np.fromiter((v for v in grades.values() if v >= 0), np.int64)
    n_rel = float((judged >= level).sum())
    n_hit = float(cum[-1]) if n else 0.0
    ap_sum = float(np.cumsum(prec_at_rel)[-1]) if pos.size else 0.0  # summed in rank order, as trec_eval does
    ideal: np.ndarray | None = None
    dcg_at: np.ndarray | None = None
    out: dict[str, tuple[float, float, float]] = {}
    for family, param in plan:
        key = measure_key(family, param)
        if family == "num_q":
            out[key] = (1.0, 1.0, 1.0)
        elif family == "num_ret":
            out[key] = (float(n), float(n), float(n))
        elif family == "num_rel":
            out[key] = (n_rel, n_rel, n_rel)
        elif family == "num_rel_ret":
            out[key] = (n_hit, n_hit, n_hit)
        elif family == "map":
            out[key] = (ap_sum, n_hit, n_rel)
        elif family == "gm_map":
            ap = ap_sum / n_rel if n_hit else 0.0
            v = math.log(max(ap, MIN_GEO_MEAN)) + _GEO_SHIFT
            out[key] = (v, _GEO_SHIFT, _GEO_SHIFT)
        elif family == "Rprec":
            r = int(min(n, n_rel))
            out[key] = (_at(cum, r) if r else 0.0, float(r), n_rel)
        elif family == "bpref":
            out[key] = (_bpref(g, level, judged, n_rel), n_rel, n_rel)
        elif family == "recip_rank":
            out[key] = (1.0, float(pos[0] + 1), 1.0) if pos.size else (0.0, 0.0, 1.0)
        elif family == "iprec_at_recall":
            out[key] = (_iprec(cum, pos, n_rel, param), 1.0, 1.0)
        elif family == "P":
            out[key] = (_at(cum, param), float(param), n_rel)
        elif family == "recall":
            out[key] = (_at(cum, param), float(param), n_rel)
        elif family == "map_cut":
            out[key] = (float(prec_at_rel[pos < param].sum()), _at(cum, param), n_rel)
        elif family == "success":
            out[key] = (1.0 if _at(cum, param) > 0 else 0.0, 1.0, 1.0)
        elif family in ("ndcg", "ndcg_cut"):
            if ideal is None:  # cumulated gains, rank by rank (gain / log2(rank + 1), summed in rank order)
                log2 = np.log2(np.arange(2, max(n, judged.size) + 2, dtype=np.float64))
                ideal = np.cumsum(np.sort(judged[judged > 0])[::-1] / log2[: int((judged > 0).sum())])
                dcg_at = np.cumsum(np.where(g > 0, g, 0) / log2[:n])
            assert dcg_at is not None
            k = max(n, ideal.size) if param is None else param
            dcg = float(dcg_at[min(k, n) - 1]) if n else 0.0
            idcg = float(ideal[min(k, ideal.size) - 1]) if ideal.size else 0.0
            out[key] = (dcg, idcg, idcg)
        else:
            raise ValueError(f"unknown measure {family!r}; the measures are {list(MEASURES)}.")
    return out


def _bpref(g: np.ndarray, level: int, judged: np.ndarray, n_rel: float) -> float:
    """The sum over ranked relevant items of 1 - min(n_r, R) / min(N, R) (unjudged items skipped)."""
    rel = g >= level
    if not rel.any():
        return 0.0
    n_nonrel = float(((judged >= 0) & (judged < level)).sum())
    above = np.cumsum((g >= 0) & ~rel)[rel].astype(np.float64)  # judged non-relevant items ranked above each
    terms = np.ones(above.size)
    some = above > 0
    terms[some] = 1.0 - np.minimum(above[some], n_rel) / min(n_nonrel, n_rel)
    return float(np.cumsum(terms)[-1])


def _iprec(cum: np.ndarray, pos: np.ndarray, n_rel: float, p: float) -> float:
    c = _lround(p * n_rel)
    if pos.size == 0 or c > pos.size:
        return 0.0
    t = pos[max(c, 1) - 1]  # rank (0-based) of the c-th relevant item
    prec = cum[t:] / np.arange(t + 1, cum.size + 1, dtype=np.float64)
    return float(prec.max())
