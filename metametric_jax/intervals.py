r"""Intervals and paired tests of a read-out over weighted example rows (NumPy only, on the host).

A task's figures are one float64 function of its summed statistics, its *read-out*: ``figures = readout(rows.sum(0))``
where row :math:`i` is example :math:`i`'s additive contribution (counts, sums of per-example scores, an example
count). A bootstrap replicate is the same read-out over weighted rows, a randomization permutation the same read-out
over rows swapped between two systems; so the figures of ``score``, of the estimate beside an interval and of
``compare``'s systems are one computation, bit for bit.

* :func:`poisson_weights` / :func:`swap_masks` — counter-based draws: a pure function of ``(seed, example id,
  replicate)`` (a 32-bit hash, full 64-bit ids), equal to :func:`metametric_jax.resampling.poisson_weights` on the
  device for ids in the int32 range.
* :func:`exact_totals` — column sums rounded once (``math.fsum``): independent of order and chunking.
* :class:`WeightedSums` — a replicate's weighted column sums ``w @ rows``, exact before a fixed final rounding, so the
  same bits whatever BLAS kernel, thread count or processor computes the product.
* :func:`quantiles` and :func:`sample_sd` — an interval's ends and a standard error in Python floats, every sum
  correctly rounded: the same bits with any NumPy version.
* :func:`bootstrap` — percentile intervals (Efron and Tibshirani 1993) from the Poisson bootstrap (Hanley and
  MacGibbon 2006), each replicate rescaled to the number of examples, so an interval of a raw sum (a count) is
  conditioned on the number of examples; ratios are unchanged by the rescaling.
* :func:`paired_bootstrap` — the paired bootstrap test (Koehn 2004; Berg-Kirkpatrick et al. 2012), two-sided:
  :math:`p = (1 + \#\{b : |\delta_b - \delta| \ge |\delta|\}) / (B' + 1)` over the :math:`B'` replicates that weight
  some example.
* :func:`randomization` — approximate randomization (Riezler and Maxwell 2005; Noreen 1989), two-sided:
  :math:`p = (1 + \#\{r : |\delta_r| \ge |\delta|\}) / (R + 1)`.

A p-value of a test with :math:`B` samples is at least :math:`1/(B + 1)`, and its Monte Carlo error is
:math:`\sqrt{p (1 - p) / B}`. This module imports NumPy only (no JAX): the command line pays no compilation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from metametric_jax._ratios import undefined

__all__ = [
    "POISSON_STREAM",
    "SWAP_STREAM",
    "FINGERPRINT_STREAM",
    "MEMORY_LIMIT",
    "mix32",
    "id_hashes",
    "hashes",
    "poisson_weights",
    "swap_masks",
    "exact_totals",
    "WeightedSums",
    "quantiles",
    "sample_sd",
    "group_rows",
    "check_memory",
    "bootstrap",
    "paired_bootstrap",
    "randomization",
    "flatten",
    "unflatten",
    "strict",
]

POISSON_STREAM = 0x5BD1E995
SWAP_STREAM = 0x27D4EB2F
FINGERPRINT_STREAM = 0x165667B1

#: the most memory a resampling on the host may ask for (bytes); larger requests are refused before allocating
MEMORY_LIMIT = 2 * 1024**3

#: replicates drawn and summed at a time (bounds the weights' memory to BLOCK x examples)
BLOCK = 256

_U32 = np.uint32


def mix32(x: Any) -> Any:
    """A 32-bit integer hash (Wellons' lowbias32) of uint32 arrays (NumPy; the same expression works on ``jnp``)."""
    x = x ^ (x >> 16)
    x = x * _U32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * _U32(0x846CA68B)
    return x ^ (x >> 16)


def _ids64(example_ids: Any) -> np.ndarray:
    ids = np.asarray(example_ids)
    if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
        raise TypeError(f"example_ids must be a 1-d sequence of integers; found {ids.dtype} of shape {ids.shape}.")
    if ids.dtype == np.uint64:
        return ids
    return ids.astype(np.int64).view(np.uint64)


def _key(seed: int, stream: int) -> np.uint32:
    with np.errstate(over="ignore"):
        return mix32(_U32(int(seed) & 0xFFFFFFFF) ^ _U32(stream))


def id_hashes(example_ids: Any, seed: int, stream: int) -> np.ndarray:
    """One uint32 hash per example id, using all 64 bits of the id.

    Ids in the int32 range hash as their 32-bit two's complement (as on the device); the high word of any other id
    is mixed in, so ids that agree in their low 32 bits (``1`` and ``2**32 + 1``) hash apart.
    """
    ids = _ids64(example_ids)
    low = (ids & np.uint64(0xFFFFFFFF)).astype(_U32)
    sign = np.where(low >> _U32(31), _U32(0xFFFFFFFF), _U32(0))
    high = (ids >> np.uint64(32)).astype(_U32) ^ sign  # 0 exactly for ids in the int32 range
    key = _key(seed, stream)
    with np.errstate(over="ignore"):
        per_id = mix32(low ^ key)
        extra = mix32(per_id ^ mix32(high ^ _U32(0x632BE5AB)) ^ key)
    return np.where(high == 0, per_id, extra)


def _mix32_in_place(x: np.ndarray) -> np.ndarray:
    """:func:`mix32` of a NumPy uint32 array, written into it (one temporary instead of five)."""
    t = np.empty_like(x)
    with np.errstate(over="ignore"):
        np.right_shift(x, 16, out=t)
        np.bitwise_xor(x, t, out=x)
        np.multiply(x, _U32(0x7FEB352D), out=x)
        np.right_shift(x, 15, out=t)
        np.bitwise_xor(x, t, out=x)
        np.multiply(x, _U32(0x846CA68B), out=x)
        np.right_shift(x, 16, out=t)
        np.bitwise_xor(x, t, out=x)
    return x


def hashes(example_ids: Any, rows: int, seed: int, stream: int, start: int = 0) -> np.ndarray:
    """``(rows, n)`` uint32 hashes of ``(seed, id, row)`` for rows ``start .. start + rows - 1``.

    That is ``mix32(mix32(id_hash ^ row * 0x9E3779B9) + stream)``, computed in place.
    """
    return _row_hashes(id_hashes(example_ids, seed, stream), rows, stream, start)


def _row_hashes(per_id: np.ndarray, rows: int, stream: int, start: int) -> np.ndarray:
    r = np.arange(start, start + rows, dtype=np.uint64).astype(_U32)[:, None]
    with np.errstate(over="ignore"):
        x = per_id[None, :] ^ (r * _U32(0x9E3779B9))
        _mix32_in_place(x)
        np.add(x, _U32(stream), out=x)
    return _mix32_in_place(x)


# Poisson(1) quantile thresholds on 32-bit integers: weight = #{k : h >= T_k}, P(weight = k) = e^-1 / k!
THRESHOLDS = np.array(
    [
        min(2**32 - 1, math.floor(sum(math.exp(-1) / math.factorial(j) for j in range(k + 1)) * 2**32))
        for k in range(16)
    ],
    dtype=_U32,
)


def poisson_weights(example_ids: Any, replicates: int, seed: int = 0, start: int = 0) -> np.ndarray:
    """Poisson(1) bootstrap weights, float64 ``(replicates, n)``: a pure function of ``(seed, id, replicate)``.

    >>> poisson_weights([0, 1, 2], 2, seed=0).shape
    (2, 3)
    """
    per_id = id_hashes(example_ids, seed, POISSON_STREAM)
    out = np.empty((replicates, per_id.size))
    block = max(1, _BLOCK_HASHES // max(1, per_id.size))  # rows at a time: the passes stay in the cache
    for lo in range(0, replicates, block):
        h = _row_hashes(per_id, min(block, replicates - lo), POISSON_STREAM, start + lo)
        # #{k : h >= T_k}: three comparisons give the weights below 4 (98% of them), a search the rest
        w = np.greater_equal(h, THRESHOLDS[0]).view(np.uint8)
        w += h >= THRESHOLDS[1]
        w += h >= THRESHOLDS[2]
        flat_h, flat_w = h.reshape(-1), w.reshape(-1)
        tail = np.flatnonzero(flat_h >= THRESHOLDS[3])
        flat_w[tail] = np.searchsorted(THRESHOLDS, flat_h[tail], side="right")
        out[lo : lo + h.shape[0]] = w
    return out


#: hashes computed at a time by :func:`poisson_weights` (about a megabyte of uint32)
_BLOCK_HASHES = 1 << 18


def swap_masks(example_ids: Any, permutations: int, seed: int = 0, start: int = 0) -> np.ndarray:
    """Approximate-randomization swaps, float64 ``(permutations, n)`` of 0/1: a pure function of the same triple."""
    return (hashes(example_ids, permutations, seed, SWAP_STREAM, start) >> _U32(31)).astype(np.float64)


def exact_totals(rows: Any) -> np.ndarray:
    """Column sums of ``(n, D)`` rows, each rounded once (``math.fsum``): the same bits in any order or chunking."""
    arr = np.asarray(rows, np.float64)
    if arr.ndim != 2:
        raise ValueError(f"rows must have shape (n, D); found {arr.shape}.")
    if not arr.shape[0]:
        return np.zeros(arr.shape[1])
    # exact in float64 whatever the order: a column of integers summing below 2**52, or of one value at most
    exact = ((arr == np.round(arr)).all(axis=0) & (np.abs(arr).sum(axis=0) < 2**52)) | (
        np.count_nonzero(arr, axis=0) < 2
    )
    totals = arr.sum(axis=0)
    for k in np.flatnonzero(~exact).tolist():
        totals[k] = math.fsum(arr[:, k].tolist())  # a column of Python floats: fsum reads it quicker
    return totals


class WeightedSums:
    """Weighted column sums ``w @ rows`` of fixed rows for non-negative integer weights (bootstrap draws, swap masks).

    A float64 matrix product adds in an order its BLAS kernel chooses (blocking, threads, vector width), so its last
    bits depend on the machine. Here every sum is exact, whatever the order: integer rows are summed as they are where
    ``max(w) * sum(|rows|)`` stays below ``2**52``; other rows are split, per column, into integer pieces of ``bits``
    bits below the column's power-of-two scale (``bits`` chosen from the largest weight sum, so that each piece's sums
    stay exact), each piece multiplied exactly, and the pieces joined in one fixed sequence of roundings. Rows with a
    non-finite value are multiplied as they are (the result is not finite either way).

    >>> WeightedSums(np.array([[0.1, 1.0], [0.2, 2.0]]))(np.array([[1.0, 2.0]])).tolist()
    [[0.5, 5.0]]
    """

    #: bits of a column's scale covered by the pieces (beyond float64's 53: values far below a column's largest)
    COVER = 78

    def __init__(self, rows: Any) -> None:
        self.rows = np.asarray(rows, np.float64)
        finite = bool(np.all(np.isfinite(self.rows)))
        self.plain = not finite
        self.integral = finite and bool(np.all(self.rows == np.round(self.rows)))
        self.abs_total = float(np.abs(self.rows).sum(axis=0).max()) if self.rows.size and finite else 0.0
        if finite and self.rows.size:
            _, self.exponent = np.frexp(np.abs(self.rows).max(axis=0))  # |value| <= 2**exponent in each column
        else:
            self.exponent = np.zeros(self.rows.shape[1:], np.int64)
        self._pieces: dict[int, list[np.ndarray]] = {}

    def __call__(self, w: np.ndarray) -> np.ndarray:
        """``w @ rows`` for weights ``(B, n)`` of non-negative integers, ``(B, D)``: the same bits on every machine."""
        if self.plain or not self.rows.size:
            return w @ self.rows
        top = float(w.max()) if w.size else 0.0
        if self.integral and top * self.abs_total < 2.0**52:
            return w @ self.rows  # integer sums below 2**53: exact in any order
        mass = float(w.sum(axis=1).max()) if w.size else 0.0
        bits = min(26, 52 - math.ceil(math.log2(mass + 1.0)))
        if bits < 8:
            raise ValueError(f"weights summing to {mass:g} are too large for exact weighted sums")
        pieces = self._split(bits)
        acc = w @ pieces[-1]
        for piece in reversed(pieces[:-1]):  # Horner from the smallest piece: one rounding a step, in a fixed order
            acc = w @ piece + np.ldexp(acc, -bits)
        return np.ldexp(acc, self.exponent - bits)

    def _split(self, bits: int) -> list[np.ndarray]:
        if bits not in self._pieces:
            rest = np.ldexp(self.rows, -self.exponent)  # in [-1, 1], exactly
            pieces = []
            for _ in range(-(-self.COVER // bits)):
                rest = np.ldexp(rest, bits)
                whole = np.round(rest)
                pieces.append(whole)
                rest = rest - whole  # exact: a float minus its nearest integer
            self._pieces[bits] = pieces
        return self._pieces[bits]


def quantiles(values: Any, levels: Any) -> list[float]:
    """Quantiles by linear interpolation between order statistics (Hyndman and Fan's type 7, NumPy's default method).

    One sort; the interpolation in Python floats (``b - (b - a) (1 - t)`` from the upper neighbour when ``t >= 0.5``,
    as NumPy does), so the same bits with any NumPy version. ``values`` must be free of NaN; NaN for each level
    where there are none.

    >>> quantiles([3.0, 1.0, 2.0, 4.0], [0.0, 0.5, 1.0])
    [1.0, 2.5, 4.0]
    """
    ordered = np.sort(np.asarray(values, np.float64)).tolist()
    last = len(ordered) - 1
    if last < 0:
        return [math.nan for _ in levels]
    out = []
    for q in levels:
        at = last * float(q)
        lo = math.floor(at)
        hi = min(lo + 1, last)
        t = at - lo
        a, b = ordered[lo], ordered[hi]
        out.append(b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t)
    return out


def sample_sd(values: Any) -> float:
    """The sample standard deviation (``ddof=1``) of at least two values, both sums rounded once (``math.fsum``).

    >>> sample_sd([1.0, 2.0, 3.0, 4.0])
    1.2909944487358056
    """
    arr = np.asarray(values, np.float64)
    mean = math.fsum(arr.tolist()) / arr.size
    dev = arr - mean
    return math.sqrt(math.fsum((dev * dev).tolist()) / (arr.size - 1))


def group_rows(rows: np.ndarray, groups: Any) -> np.ndarray:
    """Rows summed per group (``groups[i]`` the unit of row ``i``; units in order of first appearance)."""
    g = np.asarray(groups)
    if g.shape != (rows.shape[0],):
        raise ValueError(f"groups must give one unit per row, shape ({rows.shape[0]},); found {g.shape}.")
    _, first, inverse = np.unique(g, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # unit index in order of first appearance
    out = np.zeros((len(first), rows.shape[1]))
    np.add.at(out, order[inverse], rows)
    return out


def check_memory(samples: int, examples: int, width: int, what: str, systems: int = 1) -> None:
    """Refuse a resampling whose arrays would need more than :data:`MEMORY_LIMIT` bytes, naming what it would need."""
    block = min(samples, BLOCK)
    need = 8 * (samples * width * systems * 2 + block * examples * 2)
    if need > MEMORY_LIMIT:
        raise MemoryError(
            f"{what}: {samples} samples of {examples} examples would need {need / 1024**3:.1f} GiB of memory "
            f"(at most {MEMORY_LIMIT / 1024**3:.0f} GiB); use fewer samples"
        )


# ---------------------------------------------------------------------------------------------------- figures trees
def flatten(tree: Any, prefix: str = "") -> dict[str, float | None]:
    """``{"muc/f1": value}`` of a nested dict of figures (``None`` stays ``None``)."""
    if isinstance(tree, Mapping):
        out: dict[str, float | None] = {}
        for k, v in tree.items():
            out.update(flatten(v, f"{prefix}{k}/"))
        return out
    return {prefix.rstrip("/"): None if tree is None else tree if undefined(tree) else float(tree)}


def unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The nested dict of :func:`flatten`'s paths."""
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node = out
        *parents, leaf = path.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def strict(tree: Any) -> Any:
    """A tree ready for strict JSON: non-finite floats become ``None`` (``null``), NumPy scalars Python numbers."""
    if isinstance(tree, Mapping):
        return {str(k): strict(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [strict(v) for v in tree]
    if isinstance(tree, (float, np.floating)):
        return float(tree) if math.isfinite(tree) else None
    if isinstance(tree, np.integer):
        return int(tree)
    return tree


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _replicate_figures(
    readout: Callable[[np.ndarray], Any], units: np.ndarray, ids: np.ndarray, samples: int, seed: int
) -> tuple[list[str], np.ndarray]:
    """Each replicate's figures ``(samples, F)``: NaN where none is (see :func:`_replicated`) or no unit is weighted."""
    paths = list(flatten(readout(exact_totals(units))))
    out = np.full((samples, len(paths)), np.nan)
    m = units.shape[0]
    sums = WeightedSums(units)
    for lo, w in _blocks(ids, samples, seed, POISSON_STREAM):
        totals = sums(w)
        mass = w.sum(axis=1)
        for j in range(w.shape[0]):
            if mass[j] > 0:
                fig = flatten(readout(totals[j] * (m / mass[j])))
                out[lo + j] = [_replicated(fig.get(p)) for p in paths]
    return paths, out


def _blocks(ids: np.ndarray, samples: int, seed: int, stream: int) -> Iterator[tuple[int, np.ndarray]]:
    for lo in range(0, samples, BLOCK):
        n = min(BLOCK, samples - lo)
        if stream == POISSON_STREAM:
            yield lo, poisson_weights(ids, n, seed, start=lo)
        else:
            yield lo, swap_masks(ids, n, seed, start=lo)


def _replicated(value: float | None) -> float:
    """A replicate's figure: NaN (left out) where it does not exist, or is a ratio with a zero denominator."""
    return np.nan if value is None or undefined(value) else value


def _difference(a: float | None, b: float | None) -> float:
    return _replicated(a) - _replicated(b)


def _units(rows: Any) -> np.ndarray:
    arr = np.asarray(rows, np.float64)
    if arr.ndim != 2:
        raise ValueError(f"rows must have shape (n, D); found {arr.shape}.")
    return arr


def bootstrap(
    readout: Callable[[np.ndarray], Any], rows: Any, *, samples: int, seed: int, level: float
) -> dict[str, Any]:
    """Percentile intervals of every figure of ``readout`` by the Poisson bootstrap over the rows (the units).

    Returns:
        ``{"estimate", "low", "high", "stderr"}``, each a nested dict shaped like ``readout``'s figures (``None``
        where a figure does not exist or no replicate gives it).
    """
    units = _units(rows)
    ids = np.arange(units.shape[0], dtype=np.int64)
    estimate = flatten(readout(exact_totals(units)))
    paths, reps = _replicate_figures(readout, units, ids, samples, seed)
    alpha = (1.0 - level) / 2.0
    low, high, err = {}, {}, {}
    for k, p in enumerate(paths):
        col = reps[:, k][~np.isnan(reps[:, k])]
        ok = col.size > 1 and estimate[p] is not None
        ends = quantiles(col, (alpha, 1.0 - alpha)) if ok else (None, None)
        low[p], high[p] = _finite(ends[0]), _finite(ends[1])
        err[p] = _finite(sample_sd(col)) if ok else None
    return {
        "estimate": unflatten({p: _finite(estimate[p]) for p in paths}),
        "low": unflatten(low),
        "high": unflatten(high),
        "stderr": unflatten(err),
    }


def _test_result(delta: float | None, extreme: int, valid: int) -> dict[str, Any]:
    if delta is None or valid == 0:
        return {"delta": _finite(delta), "p_value": None, "p_error": None}
    p = (1 + extreme) / (valid + 1)
    return {"delta": delta, "p_value": p, "p_error": math.sqrt(p * (1.0 - p) / valid)}


def paired_bootstrap(
    readout: Callable[[np.ndarray], Any], rows_a: Any, rows_b: Any, *, samples: int, seed: int, level: float
) -> dict[str, Any]:
    """The paired bootstrap test of every figure, system A against system B (rows of the same units, in order).

    Returns:
        ``{"a", "b", "delta", "low", "high", "p_value", "p_error"}``: the two systems' figures, their difference
        A - B, its percentile interval at ``level``, the two-sided p-value and its Monte Carlo error, each a nested
        dict shaped like ``readout``'s figures (``None`` where a figure does not exist).
    """
    ua, ub = _units(rows_a), _units(rows_b)
    if ua.shape != ub.shape:
        raise ValueError(f"the two systems have rows of different shapes: {ua.shape} vs {ub.shape}")
    ids = np.arange(ua.shape[0], dtype=np.int64)
    fa, fb = flatten(readout(exact_totals(ua))), flatten(readout(exact_totals(ub)))
    paths, ra = _replicate_figures(readout, ua, ids, samples, seed)
    _, rb = _replicate_figures(readout, ub, ids, samples, seed)
    alpha = (1.0 - level) / 2.0
    out: dict[str, dict[str, Any]] = {k: {} for k in ("a", "b", "delta", "low", "high", "p_value", "p_error")}
    for k, p in enumerate(paths):
        a, b = fa[p], fb[p]
        delta = None if a is None or b is None else a - b
        d = ra[:, k] - rb[:, k]
        d = d[~np.isnan(d)]
        extreme = int(np.sum(np.abs(d - delta) >= abs(delta))) if delta is not None else 0
        res = _test_result(delta, extreme, d.size)
        ok = delta is not None and d.size > 1
        ends = quantiles(d, (alpha, 1.0 - alpha)) if ok else (None, None)
        out["low"][p], out["high"][p] = _finite(ends[0]), _finite(ends[1])
        out["a"][p], out["b"][p] = _finite(a), _finite(b)
        for key in ("delta", "p_value", "p_error"):
            out[key][p] = res[key]
    return {k: unflatten(v) for k, v in out.items()}


def randomization(
    readout: Callable[[np.ndarray], Any], rows_a: Any, rows_b: Any, *, samples: int, seed: int
) -> dict[str, Any]:
    """The approximate randomization test of every figure, system A against system B (rows of the same units).

    Returns:
        ``{"a", "b", "delta", "p_value", "p_error"}``, each a nested dict shaped like ``readout``'s figures.
    """
    ua, ub = _units(rows_a), _units(rows_b)
    if ua.shape != ub.shape:
        raise ValueError(f"the two systems have rows of different shapes: {ua.shape} vs {ub.shape}")
    ids = np.arange(ua.shape[0], dtype=np.int64)
    fa, fb = flatten(readout(exact_totals(ua))), flatten(readout(exact_totals(ub)))
    paths = list(fa)
    ta, tb = exact_totals(ua), exact_totals(ub)
    diff = WeightedSums(ub - ua)
    deltas = np.full((samples, len(paths)), np.nan)
    for lo, s in _blocks(ids, samples, seed, SWAP_STREAM):
        moved = diff(s)  # what swapping moves from A to B
        for j in range(s.shape[0]):
            xa, xb = flatten(readout(ta + moved[j])), flatten(readout(tb - moved[j]))
            deltas[lo + j] = [_difference(xa[p], xb[p]) for p in paths]
    out: dict[str, dict[str, Any]] = {k: {} for k in ("a", "b", "delta", "p_value", "p_error")}
    for k, p in enumerate(paths):
        a, b = fa[p], fb[p]
        delta = None if a is None or b is None else a - b
        d = deltas[:, k][~np.isnan(deltas[:, k])]
        extreme = int(np.sum(np.abs(d) >= abs(delta) - 1e-12 * max(1.0, abs(delta)))) if delta is not None else 0
        res = _test_result(delta, extreme, d.size)
        out["a"][p], out["b"][p] = _finite(a), _finite(b)
        for key in ("delta", "p_value", "p_error"):
            out[key][p] = res[key]
    return {k: unflatten(v) for k, v in out.items()}
