r"""Each query's figures of trec_eval's measures written query by query: the reference the batch code is tested against.

:mod:`metametric_jax.tasks.trec_batch` computes the figures of all queries at once; this module computes one query's
figures with plain NumPy and Python floats, in trec_eval's order of operations (``tests/tasks/test_ranking.py`` checks
it against trec_eval's printouts, ``tests/tasks/test_trec_batch.py`` checks the batch code against it, bit for bit).
The definitions are in :mod:`metametric_jax.tasks.trec_batch`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.tasks.trec_batch import _log2
from metametric_jax.tasks.trec_measures import (
    _LEVELS,
    INFAP_EPSILON,
    MEASURES,
    MIN_GEO_MEAN,
    Plan,
    _grouped,
    _numbers,
    plan_keys,
)

__all__ = ["query_figures", "query_values"]

_ABSENT = -(1 << 62)


def _lround(x: float) -> int:
    """C's ``lround`` of a non-negative double: the nearest integer, halves up."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _sequential_sum(values: np.ndarray) -> float:
    """The sum added left to right, as a C loop adds (``np.sum`` adds pairwise)."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


class _Query:
    """The arrays of one query that the measures share, computed when first asked for (at least one rank)."""

    def __init__(self, ranking: Sequence[Any], grades: Mapping[Any, int], level: int) -> None:
        n = len(ranking)
        raw = np.fromiter(map(grades.get, ranking, itertools.repeat(_ABSENT, n)), np.int64, n)
        self.empty = not n
        if self.empty:  # trec_eval -c ranks one item outside the pool for a query absent from the run
            raw, n = np.array([_ABSENT]), 1
        g = raw.copy()
        g[raw < 0] = -2  # unjudged in the pool: a negative grade
        g[raw == _ABSENT] = -1  # not in the pool
        if n > 1 and len(set(ranking)) != n:  # a repeated item counts at its first rank only
            seen: set[Any] = set()
            for i, x in enumerate(ranking):
                if x in seen:
                    g[i] = -1
                seen.add(x)
        judged = np.fromiter(grades.values(), np.int64, len(grades))
        self.judged = judged[judged >= 0]
        self.level = level
        self.g = g
        self.n = n
        self.R = int(np.count_nonzero(self.judged >= level))
        self.rel = g >= level
        self.cum = np.cumsum(self.rel)
        self.h = int(self.cum[-1])
        self.pos = np.flatnonzero(self.rel)
        self._cache: dict[str, Any] = {}

    def h_at(self, ks: Sequence[int]) -> np.ndarray:
        """h_k for each k (k >= 1): relevant items in the top k."""
        return self.cum[np.minimum(np.asarray(ks, np.int64), self.n) - 1]

    def cached(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    @property
    def ap_sums(self) -> np.ndarray:
        """The running sum of P@i over the relevant ranks, in rank order."""
        return self.cached("ap_sums", lambda: np.cumsum(np.arange(1, self.h + 1) / (self.pos + 1.0)))

    @property
    def ap(self) -> float:
        return float(self.ap_sums[-1]) / self.R if self.h else 0.0

    @property
    def bpref(self) -> float:
        def make() -> float:
            if not self.h:
                return 0.0
            nonrel = (self.g >= 0) & ~self.rel
            above = np.cumsum(nonrel)[self.pos]
            n_nonrel = self.judged.size - self.R
            terms = np.ones(self.h)
            some = above > 0
            terms[some] = 1.0 - np.minimum(above[some], self.R) / min(n_nonrel, self.R)
            return _sequential_sum(terms) / self.R

        return float(self.cached("bpref", make))

    @property
    def interpolated(self) -> np.ndarray:
        """max_{j >= i} P@j at each rank i."""

        def make() -> np.ndarray:
            prec = self.cum / np.arange(1.0, self.n + 1)
            return np.maximum.accumulate(prec[::-1])[::-1]

        return self.cached("interpolated", make)

    def iprec(self, c: int) -> float:
        """Interpolated precision at the c-th relevant item (c = 0: the first), 0 if fewer are ranked."""
        if not self.h or c > self.h:
            return 0.0
        return float(self.interpolated[self.pos[max(c, 1) - 1]])

    @property
    def gains(self) -> np.ndarray:
        return self.cached("gains", lambda: np.where(self.g > 0, self.g, 0).astype(np.float64))

    @property
    def ideal(self) -> np.ndarray:
        return self.cached("ideal", lambda: np.sort(self.judged[self.judged > 0])[::-1].astype(np.float64))

    @property
    def dcg(self) -> np.ndarray:
        """DCG@i for i = 1..n."""
        return self.cached("dcg", lambda: np.cumsum(self.gains / _log2(self.n + 2)[2 : self.n + 2]))

    @property
    def idcg(self) -> np.ndarray:
        """IDCG@i for i = 1..m (m positive grades judged)."""
        m = self.ideal.size
        return self.cached("idcg", lambda: np.cumsum(self.ideal / _log2(m + 2)[2 : m + 2]))

    def power(self, p: float) -> np.ndarray:
        """p^i for i = 0..n, by repeated products."""

        def make() -> np.ndarray:
            factors = np.full(self.n + 1, p)
            factors[0] = 1.0
            return np.cumprod(factors)

        return self.cached(f"power{p!r}", make)


def _interpolated_mean(q: _Query, levels: Sequence[float]) -> float:
    """11pt_avg: trec_eval's walk down the ranking over the recall levels as given (the mean of iprec_at_recall)."""
    cuts = [_lround(p * q.R) for p in levels]
    final = float(q.interpolated[q.pos[0]]) if q.h else q.h / q.n  # the value of the cut-offs never reached
    total = 0.0
    k = len(cuts) - 1
    while k >= 0 and cuts[k] > q.h:
        k -= 1
    reached = q.h
    while k >= 0 and 1 <= cuts[k] <= reached:
        reached = cuts[k]
        total += q.iprec(reached)
        k -= 1
    while k >= 0:
        total += final
        k -= 1
    return total / len(cuts)


def _infap(q: _Query) -> float:
    if not q.h:
        return 0.0
    j = q.pos.astype(np.float64)
    r = np.arange(q.h)  # relevant items above
    m = np.cumsum((q.g >= 0) & ~q.rel)[q.pos]  # judged non-relevant items above
    u = np.cumsum(q.g == -2)[q.pos]  # unjudged items of the pool above
    smoothed = (r + INFAP_EPSILON) / ((r + m) + 2 * INFAP_EPSILON)
    with np.errstate(divide="ignore", invalid="ignore"):  # the first rank (j = 0) counts 1
        terms = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + m + u) / j) * smoothed
    if q.pos[0] == 0:
        terms[0] = 1.0
    return _sequential_sum(terms) / q.R


def _bin_g(q: _Query) -> float:
    if not q.h:
        return 0.0
    return _sequential_sum(1.0 / _log2(q.n + 3)[3 + q.pos - np.arange(1, q.h + 1)]) / q.R


def _g(q: _Query) -> float:
    ideal = q.ideal
    total_ideal = _sequential_sum(ideal)
    if total_ideal <= 0.0:
        return 0.0
    cost = np.ones(q.n)
    cost[: min(q.n, ideal.size)] = np.maximum(ideal[: q.n], 1.0)
    some = q.gains != 0
    if not some.any():
        return 0.0
    spent = ((2.0 + np.cumsum(cost)) - np.cumsum(q.gains))[some].astype(np.int64)  # whole numbers: integer gains
    return _sequential_sum(q.gains[some] / _log2(int(spent.max()) + 1)[spent]) / total_ideal


def _ndcg_rel(q: _Query) -> float:
    m = q.ideal.size
    if not m:
        return 0.0
    dcg, idcg = q.dcg, q.idcg
    at = np.flatnonzero(q.gains > 0)
    terms = dcg[at] / idcg[np.minimum(at, m - 1)]
    total = _sequential_sum(terms)
    total += float(m - at.size) * float(dcg[-1]) / float(idcg[-1])
    return total / m if total > 0.0 else 0.0


def _rndcg(q: _Query) -> float:
    if not q.R:
        return 0.0
    m = q.ideal.size
    if not m:
        return math.nan
    dcg, idcg = q.dcg, q.idcg
    ideal = q.ideal
    changes = np.flatnonzero(ideal[1:] != ideal[:-1]) + 1  # ranks c after which the ideal gain changes
    bounds = np.append(changes, m)
    total = _sequential_sum(dcg[np.minimum(bounds, q.n) - 1] / idcg[bounds - 1])
    count = bounds.size
    if m + 1 < q.n:
        total += float(dcg[-1]) / float(idcg[-1])
        count += 1
    return total / count


def _rbp(q: _Query, p: float) -> float:
    top = int(q.judged.max()) if q.judged.size else 0
    gains = q.gains if top <= 1 else q.gains / top
    return (1.0 - p) * _sequential_sum(gains * q.power(p)[: q.n])


def _rbp_resid(q: _Query, p: float) -> float:
    unjudged = q.g < 0
    if not unjudged.any():
        return 0.0
    powers = q.power(p)
    return float(powers[q.n]) + (1 - p) * _sequential_sum(powers[: q.n][unjudged])


def _set_f(q: _Query, beta: float) -> float:
    if not q.h:
        return 0.0
    p, r = q.h / q.n, q.h / q.R
    return (beta + 1.0) * p * r / (beta * p + r)


def _per_cut(values: np.ndarray) -> list[float]:
    return [float(v) for v in values]


def _ratio(num: np.ndarray, den: Any) -> list[float]:
    num = np.asarray(num, np.float64)
    den = np.broadcast_to(np.asarray(den, np.float64), num.shape)
    return [float(a) / float(b) if b else 0.0 for a, b in zip(num.tolist(), den.tolist())]


def _figures(q: _Query, family: str, params: list[Any]) -> list[float]:
    if q.empty and (family in ("num_ret", "unj") or (family in ("utility", "rbp_resid") and params == [None])):
        return [0.0] * len(params)  # what trec_eval -c sets to 0 (utility and rbp_resid by their bare names only)
    return _family_figures(q, family, params)


def _family_figures(q: _Query, family: str, params: list[Any]) -> list[float]:  # noqa: C901 - a branch per family
    n, h, R = q.n, q.h, q.R
    if family == "num_q":
        return [1.0]
    if family == "num_ret":
        return [float(n)]
    if family == "num_rel":
        return [float(R)]
    if family == "num_rel_ret":
        return [float(h)]
    if family == "map":
        return [q.ap]
    if family == "gm_map":
        return [math.log(max(q.ap, MIN_GEO_MEAN))]
    if family == "Rprec":
        r = min(n, R)
        return [float(q.h_at([r])[0]) / R if r else 0.0]
    if family == "bpref":
        return [q.bpref]
    if family == "recip_rank":
        return [1.0 / (int(q.pos[0]) + 1) if h else 0.0]
    if family == "iprec_at_recall":
        return [q.iprec(_lround(p * R)) for p in params]
    if family == "P":
        return _ratio(q.h_at(params), params)
    if family == "recall":
        return _ratio(q.h_at(params), R)
    if family == "infAP":
        return [_infap(q)]
    if family == "gm_bpref":
        return [math.log(max(q.bpref, MIN_GEO_MEAN))]
    if family == "Rprec_mult":
        cuts = [int(p * R + 0.9) for p in params]
        return _ratio(q.h_at([max(c, 1) for c in cuts]), cuts)
    if family == "utility":
        w = _numbers(family, params[0], family) if params[0] is not None else MEASURES[family].default
        return [w[0] * h + w[1] * (n - h) + w[2] * (R - h) + w[3] * (0 + h - n - R)]
    if family == "11pt_avg":
        levels = _numbers(family, params[0], family) if params[0] is not None else _LEVELS
        return [_interpolated_mean(q, levels)]
    if family == "binG":
        return [_bin_g(q)]
    if family == "G":
        return [_g(q)]
    if family == "ndcg":
        m = q.ideal.size
        return [float(q.dcg[-1]) / float(q.idcg[-1]) if m and n else 0.0]
    if family == "ndcg_rel":
        return [_ndcg_rel(q)]
    if family == "Rndcg":
        return [_rndcg(q)]
    if family == "ndcg_cut":
        m = q.ideal.size
        ks = np.asarray(params, np.int64)
        dcg = q.dcg[np.minimum(ks, n) - 1] if n else np.zeros(ks.size)
        if not m:
            return _per_cut(dcg)
        idcg = q.idcg[np.minimum(ks, m) - 1]
        return _ratio(dcg, idcg)
    if family == "map_cut":
        if not R:
            return [0.0] * len(params)
        found = q.h_at(params)
        return [float(q.ap_sums[c - 1]) / R if c else 0.0 for c in found.tolist()]
    if family == "relative_P":
        return _ratio(q.h_at(params), np.minimum(params, R)) if R else [0.0] * len(params)
    if family == "success":
        return [1.0 if c > 0 else 0.0 for c in q.h_at(params).tolist()]
    if family == "set_P":
        return [h / n if n else 0.0]
    if family == "set_relative_P":
        return [h / min(n, R) if n and R else 0.0]
    if family == "set_recall":
        return [h / R if R else 0.0]
    if family == "set_map":
        return [(float(h) * h) / (float(n) * R) if n and R else 0.0]
    if family == "set_F":
        beta = _numbers(family, params[0], family)[0] if params[0] is not None else 1.0
        return [_set_f(q, beta)]
    if family == "num_nonrel_judged_ret":
        return [float(np.count_nonzero((q.g >= 0) & ~q.rel))]
    if family in ("rbp", "rbp_resid"):
        p = _numbers(family, params[0], family)[0] if params[0] is not None else 0.9
        return [_rbp(q, p) if family == "rbp" else _rbp_resid(q, p)]
    if family == "unj":
        if not n:
            return [0.0] * len(params)
        unjudged = np.cumsum(q.g < 0)[np.minimum(np.asarray(params, np.int64), n) - 1]
        return _ratio(unjudged, params)
    raise ValueError(f"unknown measure {family!r}; the measures are {list(MEASURES)}.")


def query_values(ranking: Sequence[Any], grades: Mapping[Any, int], plan: Plan, level: int = 1) -> list[float]:
    """The figures of one query, in the order of :func:`plan_keys`."""
    q = _Query(ranking, grades, level)
    out: list[float] = []
    for family, params in _grouped(plan):
        out += _figures(q, family, list(params))
    return out


def query_figures(ranking: Sequence[Any], grades: Mapping[Any, int], plan: Plan, level: int = 1) -> dict[str, float]:
    """Each figure of ``plan`` for one query: ``{printed name: figure}`` (see :data:`MEASURES`).

    Args:
        ranking: the items ranked, best first (already ordered, already cut to any maximum length).
        grades: the query's judgements ``{item: grade}`` (negative grades: unjudged items of the pool).
        plan: ``(family, parameter)`` pairs (:func:`parse_measures`).
        level: the least grade of a relevant item.

    Returns:
        The query's figure of each measure, under trec_eval's printed names (the logarithm for ``gm_*``).
    """
    return dict(zip(plan_keys(plan), query_values(ranking, grades, plan, level)))
