"""The bucketed totals of an analysis and their bootstrap replicates: a mergeable sum (NumPy only).

:class:`BucketedState` holds, per system, the plain totals ``(S, K, D)`` of the ``K`` buckets and the Poisson
bootstrap's replicate totals ``(S, B, K, D)`` (:mod:`metametric_jax.analysis` says how a task's items become rows,
units and buckets). A bucket's totals are the exactly rounded sums of its rows
(:func:`metametric_jax.intervals.exact_totals`, as the tasks' scores sum them), so they do not depend on the order of
the items. The weights are those of :mod:`metametric_jax.intervals`: a pure function of ``(seed, unit id,
replicate)``, so one replicate weights the same units in every bucket, every system, every analysis and every batch.
A state is a sum: states of batches, processes or hosts holding disjoint units merge by addition (``merge``; merging
two states that hold the same unit is refused, as the library refuses an example id twice).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from metametric_jax import intervals

__all__ = ["BucketedState", "laid_out"]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclasses.dataclass(frozen=True, eq=False)
class BucketedState:
    """Per-bucket totals of one or more systems and their bootstrap replicates: a mergeable sum (NumPy, picklable).

    Build with :meth:`from_rows` (one batch of item rows) or :meth:`empty`; combine with :meth:`merge`; read with
    :meth:`compute` and :func:`metametric_jax.analysis.report`. Arrays are read-only.

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
            return laid_out(a, axis, idx, k)

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


def laid_out(a: np.ndarray, axis: int, at: np.ndarray, size: int) -> np.ndarray:
    """``a`` placed along ``axis`` of a zero array ``size`` long there, at positions ``at`` (buckets matched by name).

    >>> laid_out(np.array([[1, 2]]), 1, np.array([2, 0]), 3).tolist()
    [[2, 0, 1]]
    """
    shape = list(a.shape)
    shape[axis] = size
    out = np.zeros(shape, a.dtype)
    index: list[Any] = [slice(None)] * a.ndim
    index[axis] = at
    out[tuple(index)] = a
    return out


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
    sums = intervals.WeightedSums(grouped)
    for lo in range(0, samples, intervals.BLOCK):
        w = _weights(held, samples, seed, lo)
        mass[lo : lo + w.shape[0]] = w.sum(axis=1)
        if used.size:
            out[lo : lo + w.shape[0]] = sums(w[:, used])
    return out.reshape(samples, columns, width), mass
