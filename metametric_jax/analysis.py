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

A bucket's totals are the exactly rounded sums of its rows (:func:`metametric_jax.intervals.exact_totals`, as the
tasks' scores sum them), so they do not depend on the order of the items.

:class:`BucketedState` holds, per system, the plain totals ``(S, K, D)`` of the ``K`` buckets and the Poisson
bootstrap's replicate totals ``(S, B, K, D)``. The weights are those of :mod:`metametric_jax.intervals`: a pure
function of ``(seed, unit id, replicate)``, so one replicate weights the same units in every bucket, every system,
every analysis and every batch. A state is a sum: states of batches, processes or hosts holding disjoint units merge
by addition (``merge``; merging two states that hold the same unit is refused, as the library refuses an example id
twice). :func:`report` then reads every bucket out, tests each system against the first (the *baseline*) per
bucket by the paired bootstrap, and corrects the p-values over every test it shows (:func:`correct`).

The paired test of bucket :math:`k`, system :math:`s` against the baseline: :math:`\delta = f_s - f_0` of the
tested figure, :math:`\delta_b` the same difference in replicate :math:`b` (the read-out of the weighted totals,
rescaled to the number of units as in :func:`metametric_jax.intervals.bootstrap`), and the two-sided p-value
:math:`p = (1 + \#\{b : |\delta_b - \delta| \ge |\delta|\}) / (B' + 1)` over the :math:`B'` replicates that weight
some unit (Koehn 2004; Berg-Kirkpatrick et al. 2012). With two systems and a bucket holding every item this is
``compare``'s p-value. A p-value is at least :math:`1 / (B + 1)` (its floor) and has a Monte Carlo error
:math:`\sqrt{p (1 - p) / B'}`. A bucket with items in fewer than ``min_units`` units is not tested (flagged
``too_small``): its replicates hardly vary, and the bootstrap is unreliable there.

Corrections over the family of the tests shown (:func:`correct`): Holm's step-down (Holm 1979; the default, it
controls the family-wise error rate under any dependence), Benjamini and Hochberg's step-up (1995; the false
discovery rate, under independence or positive dependence), and the step-down max-T of Westfall and Young (1993),
which reads the joint replicate distribution of all the tests' statistics (studentized deltas
:math:`|\delta_b - \delta| / \hat\sigma`, or raw ones) and so accounts for how the buckets' tests depend on each
other (the same replicates serve them all).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax import intervals

__all__ = [
    "MIN_UNITS",
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

#: the corrections for multiple testing, with their names in the JSON
CORRECTIONS = {
    "holm": "Holm's step-down (family-wise error rate)",
    "bh": "Benjamini-Hochberg step-up (false discovery rate)",
    "maxt": "Westfall-Young step-down max-T over the joint bootstrap replicates (family-wise error rate)",
    "none": "none (each test's own p-value)",
}
_CORRECTION_ALIASES = {
    "benjamini-hochberg": "bh",
    "fdr": "bh",
    "max-t": "maxt",
    "westfall-young": "maxt",
    "bonferroni-holm": "holm",
}

#: the statistics the max-T correction compares across tests
STATISTICS = ("studentized", "raw")


def normalize_correction(name: str) -> str:
    """The canonical name of a correction (``holm``, ``bh``, ``maxt``, ``none``; aliases accepted).

    Raises:
        ValueError: naming the valid names.
    """
    key = str(name).strip().lower()
    key = _CORRECTION_ALIASES.get(key, key)
    if key not in CORRECTIONS:
        valid = ", ".join([*CORRECTIONS, *_CORRECTION_ALIASES])
        raise ValueError(f"unknown correction {name!r}; expected one of {valid}")
    return key


# ---------------------------------------------------------------------------------------------------------- state
def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclasses.dataclass(frozen=True, eq=False)
class BucketedState:
    """Per-bucket totals of one or more systems and their bootstrap replicates: a mergeable sum (NumPy, picklable).

    Build with :meth:`from_rows` (one batch of item rows) or :meth:`empty`; combine with :meth:`merge`; read with
    :meth:`compute` and :func:`report`. Arrays are read-only.

    Attributes:
        buckets: the ``K`` bucket names, in order of first appearance.
        totals: float64 ``(S, K, D)``: each system's totals per bucket.
        replicates: float64 ``(S, B, K, D)``: the same, weighted by each replicate's Poisson weights of the units
            (not rescaled; :meth:`replicate_totals` rescales).
        mass: float64 ``(B,)``: each replicate's total weight of the units held.
        units: int64, sorted: the ids of every unit held (with items or not).
        holding: int64 ``(K,)``: the number of units holding items of each bucket (in any system).
        items: int64 ``(S, K)``: the number of items of each system in each bucket.
        samples: the number of replicates ``B``.
        seed: the seed of the weights.
    """

    buckets: tuple[str, ...]
    totals: np.ndarray
    replicates: np.ndarray
    mass: np.ndarray
    units: np.ndarray
    holding: np.ndarray
    items: np.ndarray
    samples: int
    seed: int

    # ---------------------------------------------------------------------------------------------- building
    @classmethod
    def empty(cls, systems: int, width: int, *, samples: int, seed: int = 0) -> BucketedState:
        """The state of no unit: the identity of :meth:`merge`."""
        _check_config(systems, width, samples)
        return cls(
            (),
            _frozen(np.zeros((systems, 0, width))),
            _frozen(np.zeros((systems, samples, 0, width))),
            _frozen(np.zeros(samples)),
            _frozen(np.zeros(0, np.int64)),
            _frozen(np.zeros(0, np.int64)),
            _frozen(np.zeros((systems, 0), np.int64)),
            int(samples),
            int(seed),
        )

    @classmethod
    def from_rows(
        cls,
        rows: Any,
        units: Any,
        buckets: Sequence[str],
        *,
        systems: Any = None,
        n_systems: int | None = None,
        unit_ids: Any = None,
        samples: int,
        seed: int = 0,
    ) -> BucketedState:
        """The state of one batch of items.

        Args:
            rows: float64 ``(N, D)``: each item's additive contribution to the task's totals.
            units: int ``(N,)``: the id of the unit holding each item (64-bit; the resampling unit).
            buckets: ``N`` bucket names.
            systems: int ``(N,)``: the system of each item (default: every item of system 0).
            n_systems: the number of systems (default: one more than the largest index in ``systems``).
            unit_ids: every unit of the batch, distinct (default: the units of the items); units without items
                count in the replicates' mass.
            samples: the number of bootstrap replicates ``B``.
            seed: the seed of the weights.

        Raises:
            ValueError: on shapes that disagree, a repeated unit id, an item in a unit not in ``unit_ids``, or an
                arrays' size above :data:`metametric_jax.intervals.MEMORY_LIMIT`.
        """
        arr = np.asarray(rows, np.float64)
        if arr.ndim != 2:
            raise ValueError(f"rows must have shape (N, D); found {arr.shape}")
        n, width = arr.shape
        unit = _ints(units, "units")
        if unit.shape != (n,):
            raise ValueError(f"units must give one unit per row, shape ({n},); found {unit.shape}")
        names = [str(b) for b in buckets]
        if len(names) != n:
            raise ValueError(f"buckets must give one name per row ({n}); found {len(names)}")
        system = np.zeros(n, np.int64) if systems is None else _ints(systems, "systems")
        if system.shape != (n,):
            raise ValueError(f"systems must give one index per row, shape ({n},); found {system.shape}")
        if system.size and system.min() < 0:
            raise ValueError("systems must be indices >= 0")
        s_count = int(system.max() + 1) if system.size else 1
        n_sys = s_count if n_systems is None else int(n_systems)
        if n_sys < s_count:
            raise ValueError(f"n_systems={n_sys} but an item belongs to system {s_count - 1}")
        _check_config(n_sys, width, samples)
        if unit_ids is None:
            held = np.unique(unit)
        else:
            held = _ints(unit_ids, "unit_ids")
            if held.ndim != 1:
                raise ValueError(f"unit_ids must be 1-d; found shape {held.shape}")
            held = np.sort(held)
            repeated = held[1:][held[1:] == held[:-1]]
            if repeated.size:
                raise ValueError(f"unit id {int(repeated[0])} is given twice in unit_ids; unit ids must be distinct")
        at = np.searchsorted(held, unit)
        stray = at >= held.size
        if held.size:
            stray |= held[np.minimum(at, held.size - 1)] != unit
        if stray.any():
            raise ValueError(f"an item is in unit {int(unit[np.argmax(stray)])}, which is not in unit_ids")
        order, code = _codes(names)
        k = len(order)
        totals = np.zeros((n_sys, k, width))
        np.add.at(totals, (system, code), arr)
        if n and not (np.all(arr == np.round(arr)) and np.abs(arr).sum() < 2**52):
            # sums of fractions (B-cubed's, CEAF's) rounded once, as the task's score sums them (exact_totals)
            group = system * k + code
            ranked = np.argsort(group, kind="stable")
            flat = totals.reshape(-1, width)
            for idx in np.split(ranked, np.flatnonzero(np.diff(group[ranked])) + 1):
                flat[group[idx[0]]] = intervals.exact_totals(arr[idx])
        items = np.zeros((n_sys, k), np.int64)
        np.add.at(items, (system, code), 1)
        pairs = np.unique(at * max(k, 1) + code) if n else np.zeros(0, np.int64)
        holding = np.bincount(pairs % max(k, 1), minlength=k).astype(np.int64)[:k]
        replicates, mass = _replicates(arr, at, system * k + code, n_sys * k, held, samples, seed)
        return cls(
            tuple(order),
            _frozen(totals),
            _frozen(replicates.reshape(samples, n_sys, k, width).transpose(1, 0, 2, 3).copy()),
            _frozen(mass),
            _frozen(held),
            _frozen(holding),
            _frozen(items),
            int(samples),
            int(seed),
        )

    # ---------------------------------------------------------------------------------------------- laws
    @property
    def n(self) -> int:
        """The number of units held."""
        return int(self.units.size)

    @property
    def n_systems(self) -> int:
        """The number of systems ``S``."""
        return int(self.totals.shape[0])

    @property
    def width(self) -> int:
        """The width ``D`` of the item rows."""
        return int(self.totals.shape[2])

    def merge(self, other: BucketedState) -> BucketedState:
        """The state of both batches: totals, replicates, masses and counts add; buckets are matched by name.

        Raises:
            ValueError: when the states differ in systems, row width, samples or seed, or hold a unit in common.
        """
        if not isinstance(other, BucketedState):
            raise TypeError(f"merge expects a BucketedState; found {type(other).__name__}")
        mine = (self.n_systems, self.width, self.samples, self.seed)
        theirs = (other.n_systems, other.width, other.samples, other.seed)
        if mine != theirs:
            raise ValueError(
                "merge: the states differ in (systems, row width, samples, seed): "
                f"{mine} vs {theirs}; only states of one configuration merge"
            )
        shared = np.intersect1d(self.units, other.units)
        if shared.size:
            raise ValueError(
                f"merge: unit {int(shared[0])} is in both merged states; a unit's items belong in one batch and "
                "unit ids must be unique across the whole evaluation (offset each batch's ids by its start)"
            )
        names = list(self.buckets) + [b for b in other.buckets if b not in set(self.buckets)]
        where = {b: j for j, b in enumerate(names)}
        idx_a = np.array([where[b] for b in self.buckets], np.int64)
        idx_b = np.array([where[b] for b in other.buckets], np.int64)
        k = len(names)

        def widen(a: np.ndarray, axis: int, idx: np.ndarray) -> np.ndarray:
            shape = list(a.shape)
            shape[axis] = k
            out = np.zeros(shape, a.dtype)
            index: list[Any] = [slice(None)] * a.ndim
            index[axis] = idx
            out[tuple(index)] = a
            return out

        return BucketedState(
            tuple(names),
            _frozen(widen(self.totals, 1, idx_a) + widen(other.totals, 1, idx_b)),
            _frozen(widen(self.replicates, 2, idx_a) + widen(other.replicates, 2, idx_b)),
            _frozen(self.mass + other.mass),
            _frozen(np.union1d(self.units, other.units)),
            _frozen(widen(self.holding, 0, idx_a) + widen(other.holding, 0, idx_b)),
            _frozen(widen(self.items, 1, idx_a) + widen(other.items, 1, idx_b)),
            self.samples,
            self.seed,
        )

    # ---------------------------------------------------------------------------------------------- reading
    def index(self, bucket: str) -> int:
        """The position of a bucket (``KeyError`` if absent)."""
        try:
            return self.buckets.index(bucket)
        except ValueError:
            raise KeyError(bucket) from None

    def compute(self, readout: Callable[[np.ndarray], Any]) -> dict[str, list[Any]]:
        """Each bucket's figures per system: ``{bucket: [readout(totals of system s) for s]}``."""
        return {b: [readout(self.totals[s, k]) for s in range(self.n_systems)] for k, b in enumerate(self.buckets)}

    def replicate_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Replicate totals ``(S, B, K, D)`` rescaled to the number of units, and which replicates are valid.

        Returns:
            ``(totals, valid)``: ``valid`` ``(B,)`` marks the replicates that weight some unit (the others are all
            zero and left out of every test).
        """
        valid = self.mass > 0
        scale = np.zeros(self.samples)
        scale[valid] = self.n / self.mass[valid]
        return self.replicates * scale[None, :, None, None], valid


def _check_config(systems: int, width: int, samples: int) -> None:
    if int(systems) < 1:
        raise ValueError(f"a state needs at least one system; found {systems}")
    if int(width) < 1:
        raise ValueError(f"item rows need at least one column; found {width}")
    if int(samples) < 1:
        raise ValueError(f"samples must be a positive integer; found {samples}")


def _ints(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(arr.shape, np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{what} must be integers; found {arr.dtype}")
    return arr.astype(np.int64)


def _codes(names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Names in order of first appearance, and each name's position."""
    seen: dict[str, int] = {}
    code = np.fromiter((seen.setdefault(b, len(seen)) for b in names), np.int64, len(names))
    return list(seen), code


#: the memo of the last weights drawn (one evaluation's analyses share them)
_WEIGHTS: dict[tuple[bytes, int, int, int], np.ndarray] = {}


def _weights(held: np.ndarray, samples: int, seed: int, start: int) -> np.ndarray:
    n = min(intervals.BLOCK, samples - start)
    key = (held.tobytes(), n, seed, start)
    if key not in _WEIGHTS:
        if len(_WEIGHTS) >= 8:
            _WEIGHTS.pop(next(iter(_WEIGHTS)))
        _WEIGHTS[key] = intervals.poisson_weights(held, n, seed, start=start)
    return _WEIGHTS[key]


def _replicates(
    rows: np.ndarray, at: np.ndarray, column: np.ndarray, columns: int, held: np.ndarray, samples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Replicate totals ``(B, columns, D)`` of rows grouped by (unit, column), and each replicate's mass ``(B,)``."""
    width = rows.shape[1]
    used = np.unique(at)  # positions of the units holding items
    local = np.searchsorted(used, at)
    need = 8 * (samples * columns * width + used.size * columns * width + 2 * intervals.BLOCK * held.size)
    if need > intervals.MEMORY_LIMIT:
        raise MemoryError(
            f"analysis: {samples} samples of {columns} bucket columns over {held.size} units would need "
            f"{need / 1024**3:.1f} GiB of memory (at most {intervals.MEMORY_LIMIT / 1024**3:.0f} GiB); use fewer "
            "samples or fewer buckets"
        )
    grouped = np.zeros((used.size, columns * width))
    if rows.shape[0]:
        flat = (column[:, None] * width + np.arange(width)[None, :]).reshape(-1)
        np.add.at(grouped, (np.repeat(local, width), flat), rows.reshape(-1))
    out = np.zeros((samples, columns * width))
    mass = np.zeros(samples)
    for lo in range(0, samples, intervals.BLOCK):
        w = _weights(held, samples, seed, lo)
        mass[lo : lo + w.shape[0]] = w.sum(axis=1)
        if used.size:
            out[lo : lo + w.shape[0]] = w[:, used] @ grouped
    return out.reshape(samples, columns, width), mass


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


def equal_frequency_buckets(values: Sequence[float], bins: int = 4) -> tuple[list[str], list[str]]:
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
        replicates: float64 ``(B,)``: the replicates' deltas (NaN where a replicate weights no unit or a figure
            does not exist).
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


def _figure(tree: Any, path: str) -> float | None:
    value = tree.get(path) if isinstance(tree, dict) else None
    if value is None or isinstance(value, Mapping):
        value = intervals.flatten(tree).get(path)
    return None if value is None or not math.isfinite(value) else float(value)


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
        value = _figure(analysis.readout(totals[b]), analysis.figure)
        if value is not None:
            out[b] = value
    return out


# ---------------------------------------------------------------------------------------------------- corrections
def correct(tests: Sequence[PairedTest], method: str = "holm", statistic: str = "studentized") -> list[float | None]:
    r"""The p-values of ``tests`` adjusted for testing them all (``None`` where a test has no p-value).

    The family is the tests with a p-value; ``m`` is their number.

    * ``holm``: sort :math:`p_{(1)} \le \dots \le p_{(m)}`; :math:`\tilde p_{(i)} = \max_{j \le i}
      \min(1, (m - j + 1) p_{(j)})` (Holm 1979).
    * ``bh``: :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m p_{(j)} / j)` (Benjamini and Hochberg 1995).
    * ``maxt``: the step-down max-T (Westfall and Young 1993, algorithm 4.1) over the replicates: with
      :math:`t_j = |\delta_j| / \hat\sigma_j` and :math:`t_{bj} = |\delta_{bj} - \delta_j| / \hat\sigma_j`
      (``studentized``; :math:`\hat\sigma_j` the standard deviation of the replicate deltas, 1 where it is 0) or
      the same without :math:`\hat\sigma_j` (``raw``), tests sorted by :math:`t_{(1)} \ge \dots \ge t_{(m)}`,
      :math:`\tilde p_{(i)} = \max_{r \le i} (1 + \#\{b : \max_{j \ge r} t_{b(j)} \ge t_{(r)}\}) / (B' + 1)`
      over the :math:`B'` replicates in which some test has a delta (a missing delta never exceeds). With one test
      it is that test's own p-value.
    * ``none``: each test's own p-value.
    """
    method = normalize_correction(method)
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
    index = [j for j, t in enumerate(tests) if t.p_value is not None]
    out: list[float | None] = [None] * len(tests)
    if not index:
        return out
    p = np.array([tests[j].p_value for j in index], np.float64)
    if method == "none":
        adjusted = p
    elif method == "holm":
        adjusted = _holm(p)
    elif method == "bh":
        adjusted = _bh(p)
    else:
        adjusted = _max_t([tests[j] for j in index], statistic)
    for j, value in zip(index, adjusted.tolist()):
        out[j] = float(value)
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(steps)
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, m * p[order] / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(steps[::-1])[::-1]
    return out


def _max_t(tests: Sequence[PairedTest], statistic: str) -> np.ndarray:
    deltas = np.array([t.delta for t in tests], np.float64)
    reps = np.stack([t.replicates for t in tests], axis=1)  # (B, m)
    scale = np.ones(len(tests))
    if statistic == "studentized":
        for j in range(len(tests)):
            col = reps[:, j][~np.isnan(reps[:, j])]
            sd = float(np.std(col, ddof=1)) if col.size > 1 else 0.0
            scale[j] = sd if sd > 0 and math.isfinite(sd) else 1.0
    observed = np.abs(deltas) / scale
    with np.errstate(invalid="ignore"):
        null = np.abs(reps - deltas[None, :]) / scale[None, :]
    valid = ~np.all(np.isnan(null), axis=1)
    null = np.where(np.isnan(null), -np.inf, null)[valid]
    order = np.argsort(-observed, kind="stable")
    running = np.maximum.accumulate(null[:, order[::-1]], axis=1)[:, ::-1]  # max over the tests from r on
    counts = np.sum(running >= observed[order][None, :], axis=0)
    steps = np.minimum(1.0, (1 + counts) / (null.shape[0] + 1))
    out = np.empty(len(tests))
    out[order] = np.maximum.accumulate(steps)
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
