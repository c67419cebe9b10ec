"""The machinery shared by the bootstrap and the randomization test (:mod:`metametric_jax.significance`).

Counter-based weights (a 32-bit hash of seed, example id and row: the host's is
:func:`metametric_jax.intervals.hashes`, which reads all 64 bits of an id, and ``jax.numpy`` mirrors it on the device
for int32 ids), the example ids a host-built state holds (:class:`IdSet`, refused twice in one evaluation), the
order-independent fingerprint of the examples (their ids and references), and a metric's or suite's per-example rows
and their weighted sums.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax import _compensated as comp
from metametric_jax import intervals
from metametric_jax._portable import MetricType, register
from metametric_jax.accumulate import Metric, merged_signature
from metametric_jax.digests import reference_digests
from metametric_jax.inputs import check_lengths, validate_weights
from metametric_jax.intervals import FINGERPRINT_STREAM, POISSON_STREAM, SWAP_STREAM, mix32
from metametric_jax.normalizer import safe_divide
from metametric_jax.suite import Suite

__all__ = [
    "poisson_weights",
    "swap_masks",
    "hashes",
    "fingerprint",
    "reference_digests",
    "IdSet",
    "example_rows",
    "sums_from_totals",
    "from_totals",
    "weighted_sums",
    "check_state",
    "reduce_leading",
    "vmapped_compute",
    "check_metric",
    "ResamplingConfig",
    "Positions",
    "example_ids_of",
    "zero_rows",
    "Precomputed",
]


def _device_ids(example_ids: jax.Array) -> jax.Array:
    """JAX example ids as uint32 (their int32 two's complement, as :func:`intervals.id_hashes` reads them)."""
    if not jnp.issubdtype(example_ids.dtype, jnp.integer) or example_ids.ndim != 1:
        raise TypeError(f"example_ids must be a 1-d integer array; found {example_ids.dtype} {example_ids.shape}.")
    return example_ids.astype(jnp.int32).astype(jnp.uint32)


def _key(seed: int, stream: int) -> np.uint32:
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps around by design
        return mix32(np.uint32(int(seed) & 0xFFFFFFFF) ^ np.uint32(stream))


def _row_hashes(per_id: jax.Array, rows: int, stream: int) -> jax.Array:
    """``(rows, n)`` hashes of per-id hashes and rows: :func:`intervals.hashes`'s expression, in ``jax.numpy``."""
    r = jnp.arange(rows, dtype=jnp.uint32)[:, None]
    return mix32(mix32(per_id[None, :] ^ (r * jnp.uint32(0x9E3779B9))) + jnp.uint32(stream))


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _device_hashes(ids: jax.Array, rows: int, seed: int, stream: int) -> jax.Array:
    # an id in the int32 range hashes as mix32(id ^ key) on the host too (its high word is 0 there)
    return _row_hashes(mix32(ids ^ jnp.uint32(_key(seed, stream))), rows, stream)


def hashes(example_ids: Any, rows: int, seed: int, stream: int) -> Any:
    """``(rows, n)`` uint32 hashes of ``(seed, id, row)``: a pure function of its arguments.

    NumPy ids (any 64-bit integers) are hashed on the host by :func:`metametric_jax.intervals.hashes`, the one home of
    the hash; JAX ids (int32, or tracers) by the same expression in ``jax.numpy``, equal for every int32 id.
    """
    if isinstance(example_ids, jax.Array):
        return _device_hashes(_device_ids(example_ids), int(rows), int(seed), int(stream))
    return intervals.hashes(example_ids, int(rows), int(seed), int(stream))


def _poisson_counts(h: jax.Array) -> jax.Array:
    """Poisson(1) draws from uint32 hashes: ``#{k : h >= T_k}`` (:data:`intervals.THRESHOLDS`)."""
    weight = jnp.zeros(h.shape, jnp.uint8)
    for t in intervals.THRESHOLDS.tolist():  # 16 elementwise comparisons, fused into one pass
        weight = weight + (h >= jnp.uint32(t)).astype(jnp.uint8)
    return weight


@functools.partial(jax.jit, static_argnums=(1, 2))
def _poisson(ids: jax.Array, replicates: int, seed: int) -> jax.Array:
    return _poisson_counts(_device_hashes(ids, replicates, seed, POISSON_STREAM))


def poisson_weights(example_ids: Any, replicates: int, seed: int = 0) -> Any:
    """Poisson(1) bootstrap weights, ``(replicates, n)``: a pure function of ``(seed, example id, replicate)``.

    Weight :math:`k` is drawn where a 32-bit hash of ``(seed, id, replicate)`` falls between the Poisson(1)
    distribution's quantiles :math:`T_{k-1}` and :math:`T_k` (scaled to :math:`2^{32}`). NumPy ids (all 64 bits of
    each id count) give float64 NumPy weights, those of :func:`metametric_jax.intervals.poisson_weights`; JAX integer
    ids (on the device, also under ``jit``; int32) give the same values as float32 JAX arrays.

    >>> poisson_weights([0, 1, 2], 2, seed=0).shape
    (2, 3)
    """
    if isinstance(example_ids, jax.Array):
        return _poisson(_device_ids(example_ids), int(replicates), int(seed)).astype(jnp.float32)
    return intervals.poisson_weights(example_ids, int(replicates), int(seed))


def swap_masks(example_ids: Any, permutations: int, seed: int = 0) -> Any:
    """Approximate-randomization swaps, ``(permutations, n)`` of 0/1: a pure function of ``(seed, id, permutation)``.

    >>> swap_masks([0, 1, 2], 4, seed=0).shape
    (4, 3)
    """
    h = hashes(example_ids, int(permutations), int(seed), SWAP_STREAM) >> np.uint32(31)
    return h.astype(jnp.float32) if isinstance(h, jax.Array) else h.astype(np.float64)


# ---------------------------------------------------------------------------------------------------- fingerprints
#: the fingerprint's lanes (each a compensated sum over the examples): 24-bit hashes of the ids; two 24-bit hashes of
#: (id, reference digest); the number of examples; the number of examples whose reference was digested
FP_IDS, FP_REFS, FP_EXAMPLES, FP_DIGESTED = 0, slice(1, 3), 3, 4
FP_LANES = 5


def fingerprint(example_ids: Any, digests: np.ndarray | None = None) -> Any:
    """The order-independent fingerprint of a batch's examples, ``(FP_LANES, 2)`` compensated pairs (merged by sum).

    Lane :data:`FP_IDS` sums a 24-bit hash of each id (every path, equal on the host and on the device for int32
    ids); lanes :data:`FP_REFS` sum two 24-bit hashes of each example's id and its reference's digest
    (:func:`reference_digests`), when ``digests`` are given (host ids only); :data:`FP_EXAMPLES` counts the examples
    and :data:`FP_DIGESTED` those whose reference was digested. Integer sums stay exact (compensated pairs).
    """
    h = hashes(example_ids, 1, 0, FINGERPRINT_STREAM)[0] >> np.uint32(8)
    if isinstance(h, jax.Array):
        if digests is not None:
            raise TypeError("reference digests are computed on the host, with NumPy example ids.")
        v = h.astype(jnp.float32)
        zero, one = jnp.zeros_like(v), jnp.ones_like(v)
        per_example = jnp.stack([v, zero, zero, one, zero], axis=-1)
        return comp.tree_sum(jnp.stack([per_example, jnp.zeros_like(per_example)], axis=-1))
    lanes = np.zeros(FP_LANES)
    lanes[FP_IDS] = np.asarray(h, np.float64).sum()
    lanes[FP_EXAMPLES] = h.shape[0]
    if digests is not None:
        d = np.asarray(digests, np.uint64)
        if d.shape != h.shape:
            raise ValueError(f"one reference digest per example is needed; found {d.shape} for {h.shape[0]} ids.")
        low, high = (d & np.uint64(0xFFFFFFFF)).astype(np.uint32), (d >> np.uint64(32)).astype(np.uint32)
        a = intervals.id_hashes(example_ids, 1, FINGERPRINT_STREAM)
        b = intervals.id_hashes(example_ids, 2, FINGERPRINT_STREAM)
        with np.errstate(over="ignore"):
            first = mix32(a ^ mix32(low ^ mix32(high ^ np.uint32(0x2545F491))))
            second = mix32(b ^ mix32(high ^ mix32(low ^ np.uint32(0x9E3779B9))))
        lanes[1] = (first >> np.uint32(8)).astype(np.float64).sum()
        lanes[2] = (second >> np.uint32(8)).astype(np.float64).sum()
        lanes[FP_DIGESTED] = h.shape[0]
    return comp.split(lanes)


# ---------------------------------------------------------------------------------------------------- the metric
class Precomputed(Sequence[Any]):
    """A batch's per-example statistics computed elsewhere (worker processes), given in place of its predictions.

    ``from_model_output(Precomputed(stats), references, ...)`` of a bootstrap or randomization class builds the
    state the predictions would give, from their statistics: ``metric.batch_stats(predictions, references)``, or a
    suite's ``{member: statistics}`` (:func:`metametric_jax.parallel.from_model_output` uses it).
    """

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        first = next(iter(stats.values())) if isinstance(stats, Mapping) else stats
        self.n = int(np.shape(first)[0])

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: Any) -> Any:
        raise TypeError("Precomputed statistics stand in for a batch's predictions; they hold no structures.")


def example_rows(metric: Any, predictions: Sequence[Any], references: Sequence[Any]) -> Any:
    """Per-example rows of ``metric`` (a dict by member for a suite); of :class:`Precomputed` statistics, too."""
    suite = isinstance(metric, type) and issubclass(metric, Suite)
    if isinstance(predictions, Precomputed):
        check_lengths(predictions, references, "example_rows (precomputed statistics)")
        stats = predictions.stats
    else:
        stats = metric.member_stats(predictions, references) if suite else metric.batch_stats(predictions, references)
    if suite:
        return {k: m.example_rows(stats[k]) for k, m in metric.metric_config.members}
    return metric.example_rows(stats)


def sums_from_totals(metric: Any, totals: Any) -> Any:
    """A metric's (or suite's, by member) named sums from summed example rows."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        return {k: m._sums_from_totals(totals[k]) for k, m in metric.metric_config.members}
    return metric._sums_from_totals(totals)


def from_totals(metric: Any, totals: Any) -> Any:
    """A metric's (or suite's) state from summed example rows (leading axes stay stacked)."""
    return metric._from_sums(sums_from_totals(metric, totals))


def weighted_sums(rows: Any, base: np.ndarray | None, example_ids: Any, replicates: int, seed: int) -> tuple[Any, Any]:
    """The plain sums (``base`` weights, or 1; float64) and the ``replicates`` bootstrap sums of every member's rows.

    The replicate sums ``(poisson_weights(ids) * base) @ rows`` are one jitted float32 product: each id's hash
    (:func:`metametric_jax.intervals.id_hashes`, all 64 bits of the id) is computed on the host, the weights from it
    on the device, where they stay. Integer totals are exact below 2**24 per batch, other sums to float32 rounding.
    Members' rows are concatenated so that the product runs once for a suite.
    """
    leaves, treedef = jax.tree.flatten(rows)
    widths = [leaf.shape[1] for leaf in leaves]
    block = np.concatenate(leaves, axis=1) if len(leaves) > 1 else leaves[0]
    plain = block.sum(axis=0) if base is None else base @ block
    scale = np.ones(block.shape[0], np.float32) if base is None else np.asarray(base, np.float32)
    per_id = jnp.asarray(intervals.id_hashes(example_ids, int(seed), POISSON_STREAM))
    reps = np.asarray(_replicate_product(per_id, block.astype(np.float32), scale, int(replicates)), np.float64)
    cuts = np.cumsum(widths)[:-1]
    return (
        jax.tree.unflatten(treedef, np.split(plain, cuts, axis=-1)),
        jax.tree.unflatten(treedef, np.split(reps, cuts, axis=-1)),
    )


@functools.partial(jax.jit, static_argnums=(3,))
def _replicate_product(per_id: jax.Array, block: jax.Array, scale: jax.Array, replicates: int) -> jax.Array:
    weights = _poisson_counts(_row_hashes(per_id, replicates, POISSON_STREAM)).astype(jnp.float32) * scale[None, :]
    return jnp.matmul(weights, block, precision=jax.lax.Precision.HIGHEST)


def check_state(state: Any) -> None:
    """The eager checks of a metric's or suite's state before ``compute`` (reduced, its own signature)."""
    members = state.states.values() if isinstance(state, Suite) else [state]
    for member in members:
        member._check_reduced("compute")


def reduce_leading(tree: Any) -> Any:
    """Merge a pytree of states stacked along axis 0, in order (signatures as ``merge`` combines them)."""

    def body(carry: Any, x: Any) -> tuple[Any, None]:
        return jax.tree.map(
            lambda a, b: merged_signature(a, b) if a.dtype == jnp.int32 else comp.add(a, b), carry, x
        ), None

    first = jax.tree.map(lambda x: x[0], tree)
    total, _ = jax.lax.scan(body, first, jax.tree.map(lambda x: x[1:], tree))
    return total


#: one class per (kind, metric, samples, seed, level): the same arguments give the same class, whose states merge
_CLASSES: dict[tuple[Any, ...], type] = {}


def state_class(base: type, prefix: str, cfg: ResamplingConfig, module: str) -> Any:
    """The resampling state class of ``cfg.metric``: ``base`` with ``cfg`` and its own running positions.

    The same ``base`` and configuration (metric, samples, seed, level) give the same class, so states built from two
    calls with the same arguments merge. It carries the resampled metric's ``metric_config``, so decode functions are
    checked against the metric's type.
    """
    key = (base, cfg.metric, cfg.samples, cfg.seed, cfg.level)
    cls = _CLASSES.get(key)
    if cls is None:
        attrs = {
            "resampling": cfg,
            "positions": Positions(),
            "metric_config": cfg.metric.metric_config,
            "__module__": module,
        }
        cls = _CLASSES[key] = MetricType(f"{prefix}{cfg.metric.__name__}", (base,), attrs)
        args = (base, prefix, cfg.metric, cfg.samples, cfg.seed, cfg.level, module)
        register(cls, _state_class, args)  # pickled by reference: the same call gives this class
    return cls


def _state_class(base: type, prefix: str, metric: Any, samples: int, seed: int, level: float, module: str) -> Any:
    """:func:`state_class` of a configuration given field by field (how a resampling class is unpickled)."""
    return state_class(base, prefix, ResamplingConfig(metric, samples, seed, level), module)


def replicate_counts(stacked: Any) -> jax.Array:
    """The weighted example count of each state stacked along the leading axis (a suite's: its first member's)."""
    state = next(iter(stacked.states.values())) if isinstance(stacked, Suite) else stacked
    return comp.value(state.count)


@jax.jit
def vmapped_compute(state: Any) -> Any:
    """``compute()`` of each state stacked along the leading axis (the replicates), in one jitted call."""
    return jax.vmap(lambda s: s._compute_traced())(state)


def _conditioned(replicas: Any, plain: Any) -> Any:
    counts = comp.value(replicas.count)
    scale = safe_divide(comp.value(plain.count), counts)

    def rescale(x: jax.Array) -> jax.Array:
        if not jnp.issubdtype(x.dtype, jnp.floating):
            return x  # the signature
        return x * scale.astype(x.dtype).reshape(scale.shape + (1,) * (x.ndim - scale.ndim))

    return jax.tree.map(rescale, replicas)


def conditioned(replicas: Any, plain: Any) -> Any:
    r"""Replicate states (stacked) rescaled to the plain state's weighted example count: sums times ``n / n_b``.

    A Poisson replicate weights :math:`n_b = \sum_i w_{bi}` examples, a random number; rescaling every sum by
    :math:`n / n_b` conditions a raw sum (``overlap``, a count) on the number of examples, as a multinomial resample
    of ``n`` examples is, and leaves every ratio of sums (precision, F1, macro averages) unchanged. A replicate that
    weights no example stays all zero. A suite's members are rescaled each by its own count (all equal).
    """
    if isinstance(replicas, Suite):
        return replicas.replace(states={k: _conditioned(v, plain.states[k]) for k, v in replicas.states.items()})
    return _conditioned(replicas, plain)


@jax.jit
def conditioned_compute(replicas: Any, plain: Any) -> Any:
    """``compute()`` of each replicate state after :func:`conditioned`, in one jitted call."""
    return jax.vmap(lambda s: s._compute_traced())(conditioned(replicas, plain))


def check_metric(metric: Any, what: str) -> None:
    """Refuse anything but a metric or suite class."""
    ok = isinstance(metric, type) and issubclass(metric, (Metric, Suite)) and hasattr(metric, "metric_config")
    if not ok:
        raise TypeError(f"{what} expects a metric or suite class (such as metric_of(D)); found {metric!r}.")


@dataclasses.dataclass(frozen=True, eq=False)
class ResamplingConfig:
    """Static configuration of a bootstrap or randomization accumulator class.

    Attributes:
        metric: the metric or suite class resampled.
        samples: the number of replicates (bootstrap) or permutations (randomization).
        seed: the seed of the weights or swaps.
        level: the confidence level of the bootstrap interval.
    """

    metric: Any
    samples: int
    seed: int
    level: float

    @property
    def name(self) -> str:
        """The resampled metric's name."""
        return self.metric.metric_config.name


class Positions:
    """The running position of examples given to a class's ``from_model_output`` without ids."""

    def __init__(self) -> None:
        self.next = 0

    def take(self, n: int) -> np.ndarray:
        """The next ``n`` positions."""
        ids = np.arange(self.next, self.next + n, dtype=np.int64)
        self.next += n
        return ids


class IdSet:
    """The example ids a state built on the host holds: kept beside the pytree, so JAX transformations drop it.

    Sorted int64 runs of geometrically decreasing sizes: merging a stream of batches one by one into an accumulator
    of ``n`` examples copies each id O(log n) times, and each check searches the smaller side's ids in the other's
    runs.

    Attributes:
        runs: sorted, disjoint int64 arrays whose union is the set.
        positional: whether every id is a running position (ids given to ``from_model_output`` without
            ``example_ids``).
    """

    def __init__(self, runs: tuple[np.ndarray, ...] = (), positional: bool = True) -> None:
        self.runs = runs
        self.positional = positional

    @classmethod
    def of(cls, ids: np.ndarray, positional: bool = False) -> IdSet:
        """The set of ``ids`` (distinct; see :func:`check_unique`)."""
        run = np.sort(np.asarray(ids, np.int64))
        return cls((run,) if run.size else (), positional)

    def __len__(self) -> int:
        return sum(r.size for r in self.runs)

    def ids(self) -> np.ndarray:
        """Every id, sorted."""
        return np.sort(np.concatenate(self.runs)) if self.runs else np.zeros(0, np.int64)

    def common(self, other: IdSet) -> int | None:
        """An id in both sets (the smallest of the first pair of runs that share one), or ``None``."""
        for mine in self.runs:
            for theirs in other.runs:
                small, big = (mine, theirs) if mine.size <= theirs.size else (theirs, mine)
                at = np.minimum(np.searchsorted(big, small), big.size - 1)
                hit = big[at] == small
                if hit.any():
                    return int(small[np.argmax(hit)])
        return None

    def union(self, other: IdSet) -> IdSet:
        """The union of two disjoint sets (runs merged while the smallest is at least half the next one)."""
        runs = sorted([*self.runs, *other.runs], key=len, reverse=True)
        while len(runs) > 1 and 2 * runs[-1].size >= runs[-2].size:
            small, big = runs.pop(), runs.pop()
            runs.append(np.sort(np.concatenate([big, small]), kind="stable"))
            runs.sort(key=len, reverse=True)
        return IdSet(tuple(runs), self.positional and other.positional)


#: the attribute of a state holding its :class:`IdSet` (absent on states that went through jit or the device)
_ID_ATTRIBUTE = "example_id_set"


def ids_held(state: Any) -> IdSet | None:
    """The example ids a state holds, or ``None`` when unknown (built under ``jit``, on the device, or restored)."""
    held = getattr(state, _ID_ATTRIBUTE, None)
    return held if isinstance(held, IdSet) else None


def with_ids(state: Any, ids: IdSet | None) -> Any:
    """``state`` holding ``ids`` (an attribute beside the pytree; not on traced states)."""
    if ids is not None and not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(state)):
        object.__setattr__(state, _ID_ATTRIBUTE, ids)
    return state


def merged_ids(a: Any, b: Any, name: str) -> IdSet | None:
    """The ids of ``a.merge(b)``: refuses an id held by both; ``None`` when either side's ids are unknown."""
    ia, ib = ids_held(a), ids_held(b)
    if ia is None or ib is None:
        return None
    shared = ia.common(ib)
    if shared is not None:
        cause = (
            " Both states' ids are running positions: reset_positions() was called between them."
            if ia.positional and ib.positional
            else ""
        )
        raise ValueError(
            f"{name}: example id {shared} is in both merged states; example ids must be unique across the whole "
            "evaluation. Use global ids (e.g. offset each batch's ids by the batch start, not "
            "np.arange(len(batch))) or omit example_ids to use running positions; reset_positions() restarts "
            f"those for a new stream (such as another system's examples), never between the batches of one.{cause}"
        )
    return ia.union(ib)


def check_unique(ids: np.ndarray, name: str) -> None:
    """Refuse ids given to more than one example of a batch, naming one."""
    if ids.size < 2:
        return
    ordered = np.sort(ids)
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    if same.size:
        raise ValueError(
            f"{name}: example id {ordered[same[0]]} is given to more than one example; example ids must be unique, "
            "one per example (a document, sentence or graph index), or omitted to use running positions."
        )


def example_ids_of(cls: Any, example_ids: Any, n: int) -> np.ndarray:
    """The batch's example ids (int64): given ones checked (shape, integers, unique), else the running positions."""
    if example_ids is None:
        return cls.positions.take(n)
    ids = np.asarray(example_ids)
    if ids.shape != (n,):
        raise ValueError(
            f"{cls.resampling.name}: example_ids must have one integer per example, shape ({n},); found {ids.shape}."
        )
    if not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
        raise TypeError(f"example_ids must be a 1-d sequence of integers; found {ids.dtype} of shape {ids.shape}.")
    ids = ids.astype(np.int64)
    check_unique(ids, cls.resampling.name)
    return ids


def zero_rows(metric: Any) -> Any:
    """An empty ``(0, D)`` block of rows per member (for shapes)."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        return {k: m.example_rows(np.zeros((0, 3))) for k, m in metric.metric_config.members}
    return metric.example_rows(np.zeros((0, 3)))


_INT32 = np.iinfo(np.int32)


def device_ids(example_ids: Any, n: int, name: str) -> jax.Array:
    """Example ids as int32 (checked: one integer per example; when concrete, in the int32 range and unique)."""
    concrete = not isinstance(example_ids, jax.core.Tracer)
    ids = np.asarray(example_ids) if concrete else example_ids
    if tuple(ids.shape) != (n,):
        raise ValueError(f"{name}: example_ids must have one integer per example, shape ({n},); found {ids.shape}.")
    if not (jnp.issubdtype(ids.dtype, jnp.integer) or (concrete and ids.size == 0)):
        raise TypeError(f"example_ids must be a 1-d sequence of integers; found {ids.dtype} of shape {ids.shape}.")
    if concrete and ids.size and (ids.min() < _INT32.min or ids.max() > _INT32.max):
        raise ValueError(
            f"{name}: on the device example_ids must lie in the int32 range; found {ids.min()}..{ids.max()}."
        )
    if concrete:
        check_unique(np.asarray(ids, np.int64), name)
    return jnp.asarray(ids, jnp.int32)


def device_weights(weights: Any, n: int, name: str) -> jax.Array | None:
    """Weights as float32 ``(n,)`` (a scalar is broadcast); concrete ones are checked as on the host."""
    if weights is None:
        return None
    if not isinstance(weights, jax.core.Tracer):
        return jnp.asarray(validate_weights(weights, n, name), jnp.float32)
    w = jnp.asarray(weights, jnp.float32)
    w = jnp.broadcast_to(w, (n,)) if w.ndim == 0 else w
    if w.shape != (n,):
        raise ValueError(f"{name}: weights must have shape ({n},), one per example; found shape {w.shape}.")
    return w
