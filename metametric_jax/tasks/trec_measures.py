r"""trec_eval's measures (its ``all_trec`` set, trec_eval 10.0): their names, kinds and parameters.

:data:`MEASURES` names each measure family under trec_eval's name, with how the run's figure follows from the
queries' figures and the per-query figure as trec_eval computes it (computed in
:mod:`~metametric_jax.tasks.trec_batch`). Every measure is one figure per query; the run's figure is the mean over
queries (``kind == "mean"``), the sum (``"sum"``: the counts ``num_*``) or the geometric mean (``"geometric"``:
``gm_map``, ``gm_bpref``, whose per-query figure is the logarithm of AP or bpref floored at :data:`MIN_GEO_MEAN`).

Parameters as trec_eval's ``-m``: cut-offs (``P.5,10``; ``iprec_at_recall.0.5``; ``Rprec_mult.0.5,2``), and for
``utility`` (``utility.1,-1,0,0``: the weights of relevant retrieved, non-relevant retrieved, relevant not retrieved
and non-relevant not retrieved items; the collection size is taken as 0, as trec_eval does without ``-N``),
``11pt_avg`` (the recall levels averaged), ``set_F`` (:math:`\beta`) and ``rbp``, ``rbp_resid`` (``rbp.p=0.95``: the
persistence), whose printed name then carries the parameters as given (``utility_1,-1,0,0``, ``rbp_p=0.95``). The
gains of ``G``, ``ndcg``, ``ndcg_rel``, ``Rndcg`` and ``rbp`` are the grades (trec_eval's default; its
``level=gain`` parameters are not offered). :func:`parse_measures` turns names into a plan of ``(family, parameter)``
pairs, :func:`plan_keys` a plan into printed names.

Sources: trec_eval 10.0 (https://github.com/usnistgov/trec_eval), its measure descriptions (``trec_eval -h -m
all_trec``).

Example:
    >>> plan = parse_measures(["map", "P.2", "rbp.p=0.95", "ndcg_cut.10,5"])
    >>> plan_keys(plan)
    ['map', 'P_2', 'ndcg_cut_5', 'ndcg_cut_10', 'rbp_p=0.95']
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

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
    first parameters given, as trec_eval; cut-offs given again in another name are merged (``-m P.5 -m P.5,10``),
    while one name that repeats a cut-off (``P.5,5``) is refused, as trec_eval refuses it.

    Raises:
        ValueError: for an unknown name, a bad parameter (the message lists the valid names) or a cut-off repeated
            within one name.

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
            values = [_param(family, p, spec) for p in params.split(",")]
            if len(set(values)) != len(values):
                raise ValueError(
                    f"measure {spec!r}: a cut-off is given twice (trec_eval stops there: 'duplicate cutoffs detected')."
                )
            add(family, values)
    return tuple(
        (f, p) for f in MEASURES if f in chosen for p in sorted(chosen[f], key=lambda v: -1 if v is None else v)
    )


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
