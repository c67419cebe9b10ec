r"""trec_eval's measures (its ``all_trec`` set, trec_eval 10.0): names, parameters and each query's figures.

A query is a ranking (items best first, already cut to any maximum length) and its judgements ``{item: grade}``.
With the relevance level :math:`\ell` (``-l``, default 1) a ranked item is *relevant* when its grade is at least
:math:`\ell`, *judged non-relevant* when its grade is in :math:`[0, \ell)`, *unjudged in the pool* when its grade is
negative and *not in the pool* when it has no judgement (a later copy of a repeated item too). With
:math:`\mathrm{rel}_i = 1` for a relevant item at rank :math:`i`, :math:`h_k = \sum_{i \le k} \mathrm{rel}_i`
(:math:`h_k = h_n` past the end of the ranking), :math:`n` items ranked, :math:`R` relevant items judged,
:math:`g_i` the grade at rank :math:`i` (the *gain*: the grade of a judged item, 0 otherwise, whatever the relevance
level) and :math:`g^*` the positive judged grades sorted in decreasing order (the ideal ranking), :data:`MEASURES`
defines each measure as trec_eval computes it, in its order of operations, so that each query's figure is trec_eval's
to the last bit wherever the logarithms of the C library and of Python agree (they are the same function).

Every measure is one figure per query; the run's figure is the mean over queries (``kind == "mean"``), the sum
(``"sum"``: the counts ``num_*``) or the geometric mean (``"geometric"``: ``gm_map``, ``gm_bpref``, whose per-query
figure is the logarithm of AP or bpref floored at :data:`MIN_GEO_MEAN`).

An empty ranking (a judged query absent from the run with ``-c``, or ``-M 0``) scores as trec_eval scores a judged
query absent from the run under ``-c``: as a ranking of one item outside the pool, then ``num_ret``, ``unj_*``,
``utility`` and ``rbp_resid`` set to 0 (trec_eval sets the last two to 0 under their bare names only, so
``utility.1,-2,0,0`` and ``rbp_resid.p=0.8`` keep their figure of that one item). Every other figure is then 0 but the
counts and the geometric floor; trec_eval 10.0 itself would give ``11pt_avg`` NaN for ``-M 0``. ``Rndcg`` is NaN, as
in trec_eval, for a query with relevant items none of which has a positive grade (relevance level 0 and only grades
0 judged).

Parameters as trec_eval's ``-m``: cut-offs (``P.5,10``; ``iprec_at_recall.0.5``; ``Rprec_mult.0.5,2``), and for
``utility`` (``utility.1,-1,0,0``: the weights of relevant retrieved, non-relevant retrieved, relevant not retrieved
and non-relevant not retrieved items; the collection size is taken as 0, as trec_eval does without ``-N``),
``11pt_avg`` (the recall levels averaged), ``set_F`` (:math:`\beta`) and ``rbp``, ``rbp_resid`` (``rbp.p=0.95``: the
persistence), whose printed name then carries the parameters as given (``utility_1,-1,0,0``, ``rbp_p=0.95``). The
gains of ``G``, ``ndcg``, ``ndcg_rel``, ``Rndcg`` and ``rbp`` are the grades (trec_eval's default; its
``level=gain`` parameters are not offered).

Sources: trec_eval 10.0 (https://github.com/usnistgov/trec_eval), its measure descriptions (``trec_eval -h -m
all_trec``); Buckley and Voorhees (2005); Yilmaz and Aslam, CIKM 2006 (infAP); Moffat and Zobel, ACM TOIS 27(1),
2008 (RBP); Järvelin and Kekäläinen, ACM TOIS 20(4), 2002 (nDCG).

Example:
    >>> figures = query_figures(["d1", "d2", "d3"], {"d2": 1, "d3": 2, "d9": 1}, parse_measures(["map", "P.2", "rbp"]))
    >>> figures["map"], figures["P_2"], round(figures["rbp"], 4)
    (0.38888888888888884, 0.5, 0.126)
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "MEASURES",
    "MIN_GEO_MEAN",
    "NICKNAMES",
    "OFFICIAL",
    "Measure",
    "Plan",
    "family_of",
    "measure_key",
    "parse_measures",
    "plan_keys",
    "query_figures",
    "query_values",
]

#: trec_eval's floor of AP and bpref inside the geometric means (``gm_map``, ``gm_bpref``).
MIN_GEO_MEAN = 1e-5
#: trec_eval's smoothing constant of infAP.
INFAP_EPSILON = 1e-5

Plan = tuple[tuple[str, Any], ...]


class Measure(NamedTuple):
    """One of trec_eval's measure families.

    Attributes:
        name: trec_eval's name (``P``, ``ndcg_cut``, ...); a family with cut-offs prints ``{name}_{cut-off}``.
        kind: how the run's figure follows from the queries' figures: ``mean``, ``sum`` (the counts ``num_*``) or
            ``geometric`` (``exp`` of the mean of the queries' logarithms).
        params: ``None`` (no parameters), ``int`` (positive integer cut-offs, a figure each), ``float`` (fractions
            of R, a figure each, printed with two decimals) or ``str`` (parameters of the one figure, printed as
            given).
        default: trec_eval's default parameters.
        definition: the per-query figure, as trec_eval computes it.
    """

    name: str
    kind: str
    params: type | None
    default: tuple[Any, ...]
    definition: str


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: The measures of ``all_trec``, in trec_eval's output order (``runid`` and ``relstring``, which are not numbers,
#: left out).
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("num_q", "sum", None, (), "1 per query evaluated"),
        Measure("num_ret", "sum", None, (), "n, the number of items ranked"),
        Measure("num_rel", "sum", None, (), "R, the number of relevant items judged"),
        Measure("num_rel_ret", "sum", None, (), "h_n, the relevant items ranked"),
        Measure("map", "mean", None, (), "AP = (1/R) sum_i P@i rel_i (summed in rank order); 0 if h_n = 0"),
        Measure("gm_map", "geometric", None, (), "log max(AP, 1e-5); the run's figure is exp of the mean"),
        Measure("Rprec", "mean", None, (), "h_r / R with r = min(n, R); 0 if r = 0"),
        Measure(
            "bpref",
            "mean",
            None,
            (),
            "(1/R) sum over ranked relevant r of 1 - min(n_r, R) / min(N, R) (1 where n_r = 0), n_r the judged "
            "non-relevant items ranked above r, N the judged non-relevant items",
        ),
        Measure("recip_rank", "mean", None, (), "1 / rank of the first relevant item; 0 if none is ranked"),
        Measure(
            "iprec_at_recall",
            "mean",
            float,
            _LEVELS,
            "max_{i >= t} P@i, t the rank of the c-th relevant item, c = lround(p R) (the first relevant item for "
            "c = 0); 0 if c > h_n",
        ),
        Measure("P", "mean", int, _CUTS, "h_k / k"),
        Measure("recall", "mean", int, _CUTS, "h_k / R; 0 if R = 0"),
        Measure(
            "infAP",
            "mean",
            None,
            (),
            "(1/R) sum over ranked relevant items at 0-based rank j of 1 if j = 0, else 1/(j+1) + j/(j+1) * "
            "((r + m + u)/j) * ((r + 1e-5)/(r + m + 2e-5)), with r, m, u the relevant, judged non-relevant and "
            "unjudged-in-pool items above (items not in the pool skipped)",
        ),
        Measure("gm_bpref", "geometric", None, (), "log max(bpref, 1e-5); the run's figure is exp of the mean"),
        Measure(
            "Rprec_mult",
            "mean",
            float,
            (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
            "h_c / c with c = (long)(p R + 0.9) (trec_eval truncates); 0 if c = 0",
        ),
        Measure(
            "utility",
            "mean",
            str,
            (1.0, -1.0, 0.0, 0.0),
            "w1 h_n + w2 (n - h_n) + w3 (R - h_n) + w4 (h_n - n - R) (a collection of 0 items)",
        ),
        Measure(
            "11pt_avg",
            "mean",
            str,
            _LEVELS,
            "the mean of iprec_at_recall over the recall levels (default 0, 0.1, ..., 1)",
        ),
        Measure(
            "binG",
            "mean",
            None,
            (),
            "(1/R) sum over ranked relevant items of 1 / log2(2 + the non-relevant items above); 0 if h_n = 0",
        ),
        Measure(
            "G",
            "mean",
            None,
            (),
            "sum_i g_i / log2(2 + C_i - S_i) / sum_j g*_j, S_i = sum_{k <= i} g_k, C_i = sum_{k <= i} max(g*_k, 1) "
            "(g*_k = 0 past the ideal ranking); 0 if no grade is positive",
        ),
        Measure(
            "ndcg",
            "mean",
            None,
            (),
            "DCG / IDCG, DCG = sum_i g_i / log2(i + 1), IDCG the DCG of g*; 0 if IDCG = 0",
        ),
        Measure(
            "ndcg_rel",
            "mean",
            None,
            (),
            "(1/m) (sum over ranked items of positive gain at rank i of DCG@i / IDCG@min(i, m) + (m - those) "
            "DCG@n / IDCG@m), m the positive grades judged; 0 if m = 0",
        ),
        Measure(
            "Rndcg",
            "mean",
            None,
            (),
            "the mean of DCG@min(c, n) / IDCG@c over the ranks c where the ideal gain changes (after each positive "
            "grade of g*), and of DCG@n / IDCG@m if m + 1 < n; 0 if R = 0, NaN if m = 0 < R",
        ),
        Measure("ndcg_cut", "mean", int, _CUTS, "DCG@k / IDCG@k; DCG@k if IDCG@k = 0"),
        Measure("map_cut", "mean", int, _CUTS, "(1/R) sum_{i <= k} P@i rel_i; 0 if R = 0"),
        Measure("relative_P", "mean", int, _CUTS, "h_k / min(k, R); 0 if R = 0"),
        Measure("success", "mean", int, (1, 5, 10), "1 if a relevant item is in the top k, else 0"),
        Measure("set_P", "mean", None, (), "h_n / n; 0 if n = 0"),
        Measure("set_relative_P", "mean", None, (), "h_n / min(n, R); 0 if n = 0 or R = 0"),
        Measure("set_recall", "mean", None, (), "h_n / R; 0 if R = 0"),
        Measure("set_map", "mean", None, (), "h_n^2 / (n R); 0 if n = 0 or R = 0"),
        Measure(
            "set_F",
            "mean",
            str,
            (1.0,),
            "(b + 1) P R' / (b P + R') with P = h_n / n, R' = h_n / R, b = beta (default 1); 0 if h_n = 0",
        ),
        Measure("num_nonrel_judged_ret", "sum", None, (), "the judged non-relevant items ranked"),
        Measure(
            "rbp",
            "mean",
            str,
            (0.9,),
            "(1 - p) sum_i g'_i p^(i-1), g' the grade divided by the query's highest judged grade when that is "
            "above 1 (the grade otherwise), p = 0.9 by default (rbp.p=0.95)",
        ),
        Measure(
            "rbp_resid",
            "mean",
            str,
            (0.9,),
            "p^n + (1 - p) sum over unjudged ranked items (not in the pool or of negative grade) of p^(i-1); 0 if "
            "every ranked item is judged",
        ),
        Measure("unj", "mean", int, (5, 10, 20), "the unjudged items in the top k (as rbp_resid) / k"),
    )
}

#: trec_eval's default measures (its ``official`` set, less ``runid``).
OFFICIAL = tuple("num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P".split())

#: trec_eval's nicknames of measure sets (``runid`` and ``relstring`` left out); ``all`` is every measure offered.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "set": tuple("num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F".split()),
    "all_trec": tuple(MEASURES),
    "all": tuple(MEASURES),
}


@functools.lru_cache(maxsize=4096, typed=True)
def measure_key(family: str, param: Any = None) -> str:
    """trec_eval's printed name: ``map``, ``P_5``, ``iprec_at_recall_0.10``, ``rbp_p=0.95``."""
    if param is None:
        return family
    return f"{family}_{param:3.2f}" if isinstance(param, float) else f"{family}_{param}"


def family_of(key: str) -> str:
    """The family of a printed name: ``P`` for ``P_5``, ``rbp`` for ``rbp_p=0.95``."""
    return key if key in MEASURES else key.rsplit("_", 1)[0]


def _numbers(family: str, text: str, spec: str) -> tuple[float, ...]:
    """The parameters of a ``str`` family (checked): ``utility.1,-1,0,0`` -> (1.0, -1.0, 0.0, 0.0)."""
    values: list[float] = []
    if family in ("rbp", "rbp_resid"):
        name, eq, value = text.partition("=")
        if name != "p" or not eq:
            raise ValueError(f"measure {spec!r}: the parameter of {family} is the persistence, as in {family}.p=0.95.")
        text = value
    for part in text.split(","):
        try:
            number = float(part)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ValueError(f"measure {spec!r}: expected numbers separated by commas; found {part!r}.")
        values.append(number)
    if family == "utility" and len(values) != 4:
        raise ValueError(f"measure {spec!r}: utility takes 4 weights, as in utility.1,-1,0,0; found {len(values)}.")
    if family == "11pt_avg" and not all(0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"measure {spec!r}: recall levels are numbers in [0, 1].")
    if family == "set_F" and (len(values) != 1 or values[0] < 0):
        raise ValueError(f"measure {spec!r}: set_F takes one non-negative beta, as in set_F.0.5.")
    if family in ("rbp", "rbp_resid") and not (len(values) == 1 and 0.0 <= values[0] <= 1.0):
        raise ValueError(f"measure {spec!r}: the persistence p is a number in [0, 1].")
    return tuple(values)


def _param(family: str, text: str, spec: str) -> Any:
    kind = MEASURES[family].params
    if kind is str:
        _numbers(family, text, spec)
        return text
    try:
        value: Any = int(text) if kind is int else float(text)
    except ValueError:
        value = None
    if kind is int and (value is None or value < 1):
        raise ValueError(f"measure {spec!r}: cut-offs are positive integers; found {text!r}.")
    if family == "iprec_at_recall" and (value is None or not 0.0 <= value <= 1.0):
        raise ValueError(f"measure {spec!r}: recall levels are numbers in [0, 1]; found {text!r}.")
    if family == "Rprec_mult" and (value is None or not 0.0 <= value < 1e9):
        raise ValueError(f"measure {spec!r}: multiples of R are non-negative numbers; found {text!r}.")
    return value


def _defaults(m: Measure) -> list[Any]:
    return list(m.default) if m.params in (int, float) else [None]


def parse_measures(measures: Sequence[str] | str | None = None) -> Plan:
    """The ``(family, parameter)`` pairs of measure names, in trec_eval's order.

    Names as trec_eval's ``-m``: a family (``map``, ``P``: its default cut-offs), a family with parameters
    (``P.5,10``, ``ndcg_cut.10``, ``iprec_at_recall.0.5``, ``utility.1,-2,0,0``, ``rbp.p=0.95``), a printed name
    (``P_5``, ``ndcg_cut_10``) or a nickname (``official``: trec_eval's default set; ``all_trec``, or ``all``: every
    measure of trec_eval's ``all_trec``; ``set``: the set measures). ``None`` means ``official``. A family whose
    parameters belong to its one figure (``utility``, ``11pt_avg``, ``set_F``, ``rbp``, ``rbp_resid``) keeps the
    first parameters given, as trec_eval; cut-offs given several times are merged.

    Raises:
        ValueError: for an unknown name or a bad parameter (the message lists the valid names).

    >>> parse_measures(["P.10,5", "map"])
    (('map', None), ('P', 5), ('P', 10))
    >>> parse_measures("ndcg_cut_10")
    (('ndcg_cut', 10),)
    >>> parse_measures(["rbp.p=0.95", "Rprec_mult.0.5"])
    (('Rprec_mult', 0.5), ('rbp', 'p=0.95'))
    """
    if measures is None:
        measures = ["official"]
    elif isinstance(measures, str):
        measures = [measures]
    chosen: dict[str, list[Any]] = {}

    def add(family: str, values: list[Any]) -> None:
        if MEASURES[family].params is str:  # as trec_eval, the first parameters given
            if chosen.get(family, [None]) == [None]:
                chosen[family] = values
        else:
            chosen[family] = [*chosen.get(family, []), *(v for v in values if v not in chosen.get(family, []))]

    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names are strings; found {spec!r}.")
        if spec in NICKNAMES:
            for family in NICKNAMES[spec]:
                if family not in chosen:
                    add(family, _defaults(MEASURES[family]))
            continue
        family, _, params = spec.partition(".")
        if family not in MEASURES:  # a printed name such as P_5 or iprec_at_recall_0.10
            head, _, tail = spec.rpartition("_")
            if head in MEASURES and MEASURES[head].params is not None and tail:
                family, params = head, tail
            else:
                valid = ", ".join([*MEASURES, *NICKNAMES])
                raise ValueError(f"unknown measure {spec!r}; the measures are {valid} (parameters as in P.5,10).")
        m = MEASURES[family]
        if params and m.params is None:
            raise ValueError(f"measure {family!r} takes no parameters; found {spec!r}.")
        if not params:
            add(family, _defaults(m))
        elif m.params is str:
            add(family, [_param(family, params, spec)])
        else:
            add(family, [_param(family, p, spec) for p in params.split(",")])
    return tuple(
        (f, p) for f in MEASURES if f in chosen for p in sorted(chosen[f], key=lambda v: -1 if v is None else v)
    )


# ---------------------------------------------------------------------------------------------- one query
_ABSENT = -(1 << 62)
_LOG2 = np.zeros(2)


def _log2(size: int) -> np.ndarray:
    """``log2(k)`` for ``k < size`` (at least), each from the C library's ``log2`` as trec_eval calls it."""
    global _LOG2
    if _LOG2.size < size:
        grown = max(size, 2 * _LOG2.size, 1024)
        _LOG2 = np.array([-math.inf, *map(math.log2, range(1, grown))])
    return _LOG2


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


@functools.lru_cache(maxsize=256)
def _grouped(plan: Plan) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    groups: dict[str, list[Any]] = {}
    for family, param in plan:
        groups.setdefault(family, []).append(param)
    return tuple((f, tuple(ps)) for f, ps in groups.items())


def plan_keys(plan: Plan) -> list[str]:
    """The printed names of a plan's figures, in the order of :func:`query_values` (a family's figures together).

    >>> plan_keys((("P", 5), ("map", None), ("P", 10)))
    ['P_5', 'P_10', 'map']
    """
    return [measure_key(f, p) for f, ps in _grouped(plan) for p in ps]


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
