r"""Error analysis: a task's figures per bucket of items, for one or more systems, with paired tests (NumPy only).

Where does a system fail, and where does system B beat system A for real? An *analysis* splits the items a task
counts (entities, mentions, arcs, triples...) into *buckets* (by type, by length, by anything a function of the item
or of its example says) and reads each bucket out with the task's own read-out (the function its ``score``
computes its figures with), so a bucket holding every item is the task's score, bit for bit.

How a task plugs in (this module knows nothing of any task):

* **Item rows**: float64 ``(N, D)``, each item's additive contribution to the task's totals. For span F1 an item is
  an entity: a reference entity adds ``(0, 0, 1)`` (matched, predicted, reference), a predicted one ``(1, 1, 0)``
  or ``(0, 1, 0)``. Any per-example statistic that sums works the same way.
* **The unit of each item**: an integer id of the resampling unit that holds it (the document or sentence index), as
  the task's ``score --bootstrap`` and ``compare`` resample it. Every unit of the evaluation is given, those without
  items included (``unit_ids=``), since they count in every bootstrap replicate.
* **The bucket of each item**: a name. A user-defined bucketing is a function from an item (or its example) to a
  name, applied when the rows are built: :func:`bucket_rows`.
* **The system of each item**: the index of the system whose totals it adds to. An item both systems share (a
  reference entity) is given once per system.
* **The read-out** (:class:`Analysis`): the task's figures of a bucket's totals ``(D,)``, the figure tested, and
  what a bucket's size is.

A bucket's totals are the exactly rounded sums of its rows, so they do not depend on the order of the items.
:class:`~metametric_jax.analysis_state.BucketedState` holds, per system, the totals of the buckets and their Poisson
bootstrap replicates, a sum that merges over batches, processes and hosts (:mod:`metametric_jax.analysis_state`).
:func:`report` reads every bucket out, tests each system against the first (the *baseline*) per bucket by the paired
bootstrap, and corrects the p-values over every test it shows (:func:`~metametric_jax.corrections.correct`).

The paired test of bucket :math:`k`, system :math:`s` against the baseline: :math:`\delta = f_s - f_0` of the
tested figure, :math:`\delta_b` the same difference in replicate :math:`b` (the read-out of the weighted totals,
rescaled to the number of units as in :func:`metametric_jax.intervals.bootstrap`), and the two-sided p-value
:math:`p = (1 + \#\{b : |\delta_b - \delta| \ge |\delta|\}) / (B' + 1)` over the :math:`B'` replicates that weight
some unit (Koehn 2004; Berg-Kirkpatrick et al. 2012). With two systems and a bucket holding every item this is
``compare``'s p-value. A p-value is at least :math:`1 / (B + 1)` (its floor) and has a Monte Carlo error
:math:`\sqrt{p (1 - p) / B'}`. A bucket with items in fewer than ``min_units`` units is not tested (flagged
``too_small``): its replicates hardly vary, and the bootstrap is unreliable there.

Corrections over the family of the tests shown (:mod:`metametric_jax.corrections`): Holm's step-down (the
default), Benjamini and Hochberg's step-up, and the step-down max-T of Westfall and Young over the joint replicates.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax import intervals
from metametric_jax._ratios import undefined
from metametric_jax.analysis_state import BucketedState
from metametric_jax.corrections import CORRECTIONS, STATISTICS, correct, normalize_correction

__all__ = [
    "MIN_UNITS",
    "BINS",
    "CORRECTIONS",
    "STATISTICS",
    "BucketedState",
    "Analysis",
    "PairedTest",
    "bucket_rows",
    "equal_frequency_buckets",
    "paired_tests",
    "correct",
    "report",
    "normalize_correction",
]

#: a bucket with items in fewer units than this is not tested (flagged ``too_small``)
MIN_UNITS = 10
#: the default number of equal-frequency buckets (quartiles)
BINS = 4


# ---------------------------------------------------------------------------------------------------- bucketings
def bucket_rows(
    items: Iterable[Any],
    *,
    row: Callable[[Any], Sequence[float]],
    unit: Callable[[Any], int],
    bucket: Callable[[Any], Hashable],
    system: Callable[[Any], int] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """``(rows, units, buckets, systems)`` of items, for :meth:`BucketedState.from_rows`: a user-defined bucketing.

    Args:
        items: the items (entities, mentions, arcs...), any Python objects.
        row: an item's additive row (``(matched, predicted, reference)``...).
        unit: the id of the unit holding the item.
        bucket: the item's bucket (turned into a string); a function of the item or of its example.
        system: the item's system (default 0).

    >>> rows, units, buckets, systems = bucket_rows(
    ...     [("Ann", 0, (1, 1, 0)), ("Bo", 1, (0, 0, 1))], row=lambda e: e[2], unit=lambda e: e[1],
    ...     bucket=lambda e: "short" if len(e[0]) < 3 else "long")
    >>> rows.tolist(), units.tolist(), buckets
    ([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0, 1], ['long', 'short'])
    """
    listed = list(items)
    rows = np.array([list(row(x)) for x in listed], np.float64)
    if not listed:
        rows = np.zeros((0, 1))
    units = np.array([int(unit(x)) for x in listed], np.int64)
    names = [str(bucket(x)) for x in listed]
    systems = np.array([int(system(x)) if system else 0 for x in listed], np.int64)
    return rows, units, names, systems


def equal_frequency_buckets(values: Sequence[float], bins: int = BINS) -> tuple[list[str], list[str]]:
    """Each value's bucket of about ``len(values) / bins`` values, by size (ExplainaBoard's equal-frequency buckets).

    The cut points are the values at positions ``floor(j n / bins)`` of the sorted values (``j = 1..bins-1``); a value
    goes in the bucket of the cut points it reaches, so equal values share a bucket (and there may be fewer buckets).
    A bucket is named by its smallest and largest value, ``"12-40"``, or ``"12"``.

    Returns:
        ``(names, order)``: the bucket of each value, and the buckets' names from the smallest values up.

    >>> equal_frequency_buckets([5, 1, 3, 8, 2, 9, 9, 4], 4)
    (['5-8', '1-2', '3-4', '5-8', '1-2', '9', '9', '3-4'], ['1-2', '3-4', '5-8', '9'])
    """
    if int(bins) < 1:
        raise ValueError(f"bins must be a positive integer; found {bins}")
    x = np.asarray(values, np.float64).reshape(-1)
    if not x.size:
        return [], []
    ordered = np.sort(x)
    cuts = np.unique(ordered[(np.arange(1, int(bins)) * x.size) // int(bins)])
    code = np.searchsorted(cuts, x, side="right")
    used = np.unique(code)

    def show(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else f"{v:g}"

    names = {}
    for c in used.tolist():
        members = x[code == c]
        lo, hi = float(members.min()), float(members.max())
        names[c] = show(lo) if lo == hi else f"{show(lo)}-{show(hi)}"
    return [names[c] for c in code.tolist()], [names[c] for c in used.tolist()]


# ---------------------------------------------------------------------------------------------------------- tests
@dataclasses.dataclass(frozen=True)
class Analysis:
    """How a task reads one bucketing of its items.

    Attributes:
        name: the analysis's name in the JSON (``"type"``, ``"length"``).
        readout: the task's figures of a bucket's totals ``(D,)``: a dict (nested or not) of floats, ``None`` where
            a figure does not exist; the same function its ``score`` reads its figures with.
        figure: the figure tested (a path of the read-out, ``"f1"`` or ``"micro/f1"``).
        count: a bucket's size from its totals (of the baseline), e.g. its reference items; default: the baseline's
            number of items in the bucket.
        order: the buckets in the order to show them (buckets not listed follow in order of appearance; listed
            buckets without items are left out).
        title: a human title for tables and charts (default: the name).
        description: a sentence saying what the buckets are.
    """

    name: str
    readout: Callable[[np.ndarray], Any]
    figure: str = "f1"
    count: Callable[[np.ndarray], float] | None = None
    order: Sequence[str] | None = None
    title: str | None = None
    description: str = ""

    def ordered(self, state: BucketedState) -> list[str]:
        """The state's buckets in the order to show them."""
        listed = [b for b in (self.order or ()) if b in state.buckets]
        return listed + [b for b in state.buckets if b not in set(listed)]


@dataclasses.dataclass(frozen=True)
class PairedTest:
    """One paired bootstrap test: a bucket of an analysis, a system against the baseline.

    Attributes:
        analysis: the analysis's name.
        bucket: the bucket.
        system: the system's index (``>= 1``; the baseline is 0).
        delta: the tested figure of the system minus the baseline's (``None`` if either does not exist).
        replicates: float64 ``(B,)``: the replicates' deltas (NaN where a replicate weights no unit, or a figure does
            not exist or is a ratio with a zero denominator there).
        p_value: the two-sided p-value (``None`` if not tested).
        p_error: its Monte Carlo error.
        too_small: whether the bucket has items in fewer than ``min_units`` units (then not tested).
    """

    analysis: str
    bucket: str
    system: int
    delta: float | None
    replicates: np.ndarray
    p_value: float | None
    p_error: float | None
    too_small: bool

    @property
    def tested(self) -> bool:
        """Whether the test has a p-value (it is then in the family corrected over)."""
        return self.p_value is not None


def _figure(tree: Any, path: str, replicate: bool = False) -> float | None:
    """The figure at ``path``; None where it does not exist, or (``replicate``) is a ratio with a zero denominator."""
    value = tree.get(path) if isinstance(tree, dict) else None
    if value is None or isinstance(value, Mapping):
        value = intervals.flatten(tree).get(path)
    if value is None or not math.isfinite(value) or (replicate and undefined(value)):
        return None
    return float(value)


def paired_tests(state: BucketedState, analysis: Analysis, *, min_units: int = MIN_UNITS) -> list[PairedTest]:
    """Each system after the first against the first (the baseline), per bucket, in the analysis's bucket order."""
    reps, valid = state.replicate_totals()
    out: list[PairedTest] = []
    for bucket in analysis.ordered(state):
        k = state.index(bucket)
        small = int(state.holding[k]) < min_units
        base = _figure(analysis.readout(state.totals[0, k]), analysis.figure)
        series: list[np.ndarray] = []
        if not small and state.n_systems > 1:
            series = [_series(analysis, reps[s, :, k], valid) for s in range(state.n_systems)]
        for s in range(1, state.n_systems):
            other = _figure(analysis.readout(state.totals[s, k]), analysis.figure)
            delta = None if base is None or other is None else other - base
            if small or delta is None:
                nan = np.full(state.samples, np.nan)
                out.append(PairedTest(analysis.name, bucket, s, delta, nan, None, None, small))
                continue
            d = series[s] - series[0]
            finite = d[~np.isnan(d)]
            if not finite.size:
                out.append(PairedTest(analysis.name, bucket, s, delta, d, None, None, small))
                continue
            extreme = int(np.sum(np.abs(finite - delta) >= abs(delta)))
            p = (1 + extreme) / (finite.size + 1)
            out.append(PairedTest(analysis.name, bucket, s, delta, d, p, math.sqrt(p * (1 - p) / finite.size), small))
    return out


def _series(analysis: Analysis, totals: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The tested figure of each replicate's totals ``(B, D)`` (NaN where not valid or the figure is None)."""
    out = np.full(totals.shape[0], np.nan)
    for b in np.flatnonzero(valid):
        value = _figure(analysis.readout(totals[b]), analysis.figure, replicate=True)
        if value is not None:
            out[b] = value
    return out


# ---------------------------------------------------------------------------------------------------------- report
def report(
    analyses: Sequence[tuple[Analysis, BucketedState]],
    *,
    correction: str = "holm",
    statistic: str = "studentized",
    min_units: int = MIN_UNITS,
) -> dict[str, Any]:
    """Every bucket's figures per system and tests against the baseline, corrected over all the tests shown.

    The states must share their units, samples and seed (one evaluation: a replicate weights the same units in all).

    Returns:
        ``{"correction": {"method", "description", "statistic", "family", "tests", "floor", "min_units",
        "figures"}, "analyses": {ANALYSIS: {BUCKET: {"count", "units", "figures": [one read-out per
        system], "test"}}}, "notes": [...]}``. With two systems ``"test"`` is one ``{"delta", "p_value", "p_error",
        "p_adjusted", "too_small"}`` (delta = second system − first); with more, ``"tests"`` is a list of them, one
        per system after the first; with one system there is no test. Strict JSON values (``None``, never NaN).

    Raises:
        ValueError: on states of different units, samples, seeds or numbers of systems.
    """
    method = normalize_correction(correction)
    if not analyses:
        raise ValueError("report needs at least one analysis")
    first = analyses[0][1]
    for a, s in analyses[1:]:
        same = (s.samples, s.seed, s.n_systems) == (first.samples, first.seed, first.n_systems)
        if not same or not np.array_equal(s.units, first.units):
            raise ValueError(
                f"analysis {a.name!r} was built on other units, samples, seed or systems than {analyses[0][0].name!r};"
                " the analyses of one report share them"
            )
    tests: list[PairedTest] = []
    for analysis, state in analyses:
        tests.extend(paired_tests(state, analysis, min_units=min_units))
    adjusted = correct(tests, method, statistic)
    by_key = {(t.analysis, t.bucket, t.system): (t, adj) for t, adj in zip(tests, adjusted)}
    family = [t for t in tests if t.tested]
    out: dict[str, Any] = {}
    for analysis, state in analyses:
        table: dict[str, Any] = {}
        for bucket in analysis.ordered(state):
            k = state.index(bucket)
            count = analysis.count(state.totals[0, k]) if analysis.count else state.items[0, k]
            entry: dict[str, Any] = {
                "count": _number(count),
                "units": int(state.holding[k]),
                "figures": [intervals.strict(analysis.readout(state.totals[s, k])) for s in range(state.n_systems)],
            }
            results = [_test_entry(*by_key[(analysis.name, bucket, s)]) for s in range(1, state.n_systems)]
            if len(results) == 1:
                entry["test"] = results[0]
            elif results:
                entry["tests"] = results
            table[bucket] = entry
        out[analysis.name] = table
    names = [a.name for a, _ in analyses]
    systems = first.n_systems
    small = sum(1 for t in tests if t.too_small)
    notes = []
    if small:
        notes.append(f"{small} test(s) not run: their bucket has items in fewer than {min_units} units (too_small)")
    floor = 1.0 / (first.samples + 1)
    at_floor = sum(1 for t in family if t.p_value is not None and t.p_value <= floor * (1 + 1e-12))
    if at_floor:
        notes.append(
            f"{at_floor} p-value(s) at their floor 1/(N+1) = {floor:.2g} (N = {first.samples} replicates): the true "
            "p-value may be smaller; use more samples"
        )
    family_text = (
        f"the {len(family)} paired bootstrap test(s) shown: the tested figure of every bucket with items in at least "
        f"{min_units} units, of the analyses {', '.join(names)}, "
        + ("each system against the first" if systems > 2 else "the second system against the first")
    )
    return {
        "correction": {
            "method": method,
            "description": CORRECTIONS[method],
            "statistic": statistic if method == "maxt" else None,
            "family": family_text if systems > 1 else "no tests (one system)",
            "tests": len(family),
            "floor": floor,
            "min_units": int(min_units),
            "figures": {a.name: a.figure for a, _ in analyses},
        },
        "analyses": out,
        "notes": notes,
    }


def _number(value: Any) -> Any:
    x = float(value)
    return int(x) if x.is_integer() else x


def _test_entry(test: PairedTest, adjusted: float | None) -> dict[str, Any]:
    return intervals.strict(
        {
            "delta": test.delta,
            "p_value": test.p_value,
            "p_error": test.p_error,
            "p_adjusted": adjusted,
            "too_small": test.too_small,
        }
    )
