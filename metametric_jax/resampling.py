"""The machinery shared by the bootstrap and the randomization test (:mod:`metametric_jax.significance`).

Counter-based weights (a 32-bit hash of seed, example id and row: identical in NumPy on the host and in ``jax.numpy``
on the device), the order-independent fingerprint of example ids, and a metric's or suite's per-example rows and
their weighted sums.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax import _compensated as comp
from metametric_jax.accumulate import Metric, merged_signature
from metametric_jax.inputs import validate_weights
from metametric_jax.suite import Suite

__all__ = [
    "poisson_weights",
    "swap_masks",
    "fingerprint",
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
]

_POISSON_STREAM = 0x5BD1E995
_SWAP_STREAM = 0x27D4EB2F
_FINGERPRINT_STREAM = 0x165667B1


def mix32(x: Any) -> Any:
    """A 32-bit integer hash (Wellons' lowbias32), on NumPy or jnp uint32 arrays alike."""
    x = x ^ (x >> 16)
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def ids32(example_ids: Any) -> Any:
    """Example ids as uint32: ids in the int32 range as their two's complement (as on the device), others folded."""
    if isinstance(example_ids, jax.Array):
        if not jnp.issubdtype(example_ids.dtype, jnp.integer) or example_ids.ndim != 1:
            raise TypeError(f"example_ids must be a 1-d integer array; found {example_ids.dtype} {example_ids.shape}.")
        return example_ids.astype(jnp.int32).astype(jnp.uint32)
    ids = np.asarray(example_ids)
    if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
        raise TypeError(f"example_ids must be a 1-d sequence of integers; found {ids.dtype} of shape {ids.shape}.")
    ids = ids.astype(np.int64)
    low = ids & 0xFFFFFFFF
    folded = np.where((ids >= -(2**31)) & (ids < 2**31), low, low ^ ((ids >> 32) & 0xFFFFFFFF))
    return folded.astype(np.uint32)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _hashes(ids: jax.Array, rows: int, seed: int, stream: int) -> jax.Array:
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps around by design
        key = mix32(np.uint32(seed & 0xFFFFFFFF) ^ np.uint32(stream))
    per_id = mix32(ids ^ jnp.uint32(key))
    r = jnp.arange(rows, dtype=jnp.uint32)[:, None]
    return mix32(mix32(per_id[None, :] ^ (r * jnp.uint32(0x9E3779B9))) + jnp.uint32(stream))


def hashes(example_ids: Any, rows: int, seed: int, stream: int) -> Any:
    """``(rows, n)`` uint32 hashes of ``(seed, id, row)``: a pure function of its arguments.

    Computed by one jitted ``jax.numpy`` function on the host and on the device alike (uint32 arithmetic is exact);
    NumPy ids give a NumPy array, JAX ids (or tracers) a JAX array.
    """
    ids = ids32(example_ids)
    if isinstance(ids, jax.Array):
        return _hashes(ids, int(rows), int(seed), int(stream))
    return np.asarray(_hashes(jnp.asarray(ids), int(rows), int(seed), int(stream)))


# Poisson(1) quantile thresholds on 32-bit integers: weight = #{k : h >= T_k}, P(weight = k) = e^-1 / k!
_THRESHOLDS = np.array(
    [
        min(2**32 - 1, math.floor(sum(math.exp(-1) / math.factorial(j) for j in range(k + 1)) * 2**32))
        for k in range(16)
    ],
    dtype=np.uint32,
)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _poisson(ids: jax.Array, replicates: int, seed: int) -> jax.Array:
    h = _hashes(ids, replicates, seed, _POISSON_STREAM)
    weight = jnp.zeros(h.shape, jnp.uint8)
    for t in _THRESHOLDS.tolist():  # 16 elementwise comparisons, fused into one pass
        weight = weight + (h >= jnp.uint32(t)).astype(jnp.uint8)
    return weight


def poisson_weights(example_ids: Any, replicates: int, seed: int = 0) -> Any:
    """Poisson(1) bootstrap weights, ``(replicates, n)``: a pure function of ``(seed, example id, replicate)``.

    Weight :math:`k` is drawn where a 32-bit hash of ``(seed, id, replicate)`` falls between the Poisson(1)
    distribution's quantiles :math:`T_{k-1}` and :math:`T_k` (scaled to :math:`2^{32}`). NumPy ids give float64 NumPy
    weights; JAX integer ids (on the device, also under ``jit``) give the same values as float32 JAX arrays. Ids in
    the int32 range hash the same on both.

    >>> poisson_weights([0, 1, 2], 2, seed=0).shape
    (2, 3)
    """
    ids = ids32(example_ids)
    if isinstance(ids, jax.Array):
        return _poisson(ids, int(replicates), int(seed)).astype(jnp.float32)
    return np.asarray(_poisson(jnp.asarray(ids), int(replicates), int(seed))).astype(np.float64)


def swap_masks(example_ids: Any, permutations: int, seed: int = 0) -> Any:
    """Approximate-randomization swaps, ``(permutations, n)`` of 0/1: a pure function of ``(seed, id, permutation)``.

    >>> swap_masks([0, 1, 2], 4, seed=0).shape
    (4, 3)
    """
    h = hashes(example_ids, int(permutations), int(seed), _SWAP_STREAM) >> np.uint32(31)
    return h.astype(jnp.float32) if isinstance(h, jax.Array) else h.astype(np.float64)


def fingerprint(example_ids: Any) -> Any:
    """An order-independent fingerprint of the ids: the sum of 24-bit hashes (exact as a compensated pair)."""
    h = hashes(example_ids, 1, 0, _FINGERPRINT_STREAM)[0] >> np.uint32(8)
    if isinstance(h, jax.Array):
        v = h.astype(jnp.float32)
        return comp.tree_sum(jnp.stack([v, jnp.zeros_like(v)], axis=-1))
    return comp.split(np.asarray(h, np.float64).sum())


# ---------------------------------------------------------------------------------------------------- the metric
def example_rows(metric: Any, predictions: Sequence[Any], references: Sequence[Any]) -> Any:
    """Per-example rows of ``metric`` (a dict by member for a suite)."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        stats = metric.member_stats(predictions, references)
        return {k: m.example_rows(stats[k]) for k, m in metric.metric_config.members}
    return metric.example_rows(metric.batch_stats(predictions, references))


def sums_from_totals(metric: Any, totals: Any) -> Any:
    """A metric's (or suite's, by member) named sums from summed example rows."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        return {k: m.sums_from_totals(totals[k]) for k, m in metric.metric_config.members}
    return metric.sums_from_totals(totals)


def from_totals(metric: Any, totals: Any) -> Any:
    """A metric's (or suite's) state from summed example rows (leading axes stay stacked)."""
    return metric.from_sums(sums_from_totals(metric, totals))


def weighted_sums(rows: Any, base: np.ndarray | None, example_ids: Any, replicates: int, seed: int) -> tuple[Any, Any]:
    """The plain sums (``base`` weights, or 1; float64) and the ``replicates`` bootstrap sums of every member's rows.

    The replicate sums ``(poisson_weights(ids) * base) @ rows`` are one jitted float32 product (the weights never
    leave the device): integer totals are exact below 2**24 per batch, other sums to float32 rounding. Members' rows
    are concatenated so that the product runs once for a suite.
    """
    leaves, treedef = jax.tree.flatten(rows)
    widths = [leaf.shape[1] for leaf in leaves]
    block = np.concatenate(leaves, axis=1) if len(leaves) > 1 else leaves[0]
    plain = block.sum(axis=0) if base is None else base @ block
    scale = np.ones(block.shape[0], np.float32) if base is None else np.asarray(base, np.float32)
    ids = jnp.asarray(ids32(example_ids))
    reps = np.asarray(_replicate_product(ids, block.astype(np.float32), scale, int(replicates), int(seed)), np.float64)
    cuts = np.cumsum(widths)[:-1]
    return (
        jax.tree.unflatten(treedef, np.split(plain, cuts, axis=-1)),
        jax.tree.unflatten(treedef, np.split(reps, cuts, axis=-1)),
    )


@functools.partial(jax.jit, static_argnums=(3, 4))
def _replicate_product(ids: jax.Array, block: jax.Array, scale: jax.Array, replicates: int, seed: int) -> jax.Array:
    weights = _poisson(ids, replicates, seed).astype(jnp.float32) * scale[None, :]
    return jnp.matmul(weights, block, precision=jax.lax.Precision.HIGHEST)


def check_state(state: Any) -> None:
    """The eager checks of a metric's or suite's state before ``compute`` (reduced, its own signature)."""
    members = state.states.values() if isinstance(state, Suite) else [state]
    for member in members:
        member.check_reduced("compute")


def reduce_leading(tree: Any) -> Any:
    """Merge a pytree of states stacked along axis 0, in order (signatures as ``merge`` combines them)."""

    def body(carry: Any, x: Any) -> tuple[Any, None]:
        return jax.tree.map(
            lambda a, b: merged_signature(a, b) if a.dtype == jnp.int32 else comp.add(a, b), carry, x
        ), None

    first = jax.tree.map(lambda x: x[0], tree)
    total, _ = jax.lax.scan(body, first, jax.tree.map(lambda x: x[1:], tree))
    return total


def state_class(base: type, prefix: str, cfg: ResamplingConfig, module: str) -> Any:
    """A resampling state class of ``cfg.metric``: ``base`` with ``cfg`` and its own running positions.

    It carries the resampled metric's ``metric_config``, so decode functions are checked against the metric's type.
    """
    attrs = {
        "resampling": cfg,
        "positions": Positions(),
        "metric_config": cfg.metric.metric_config,
        "__module__": module,
    }
    return type(f"{prefix}{cfg.metric.__name__}", (base,), attrs)


def replicate_counts(stacked: Any) -> jax.Array:
    """The weighted example count of each state stacked along the leading axis (a suite's: its first member's)."""
    state = next(iter(stacked.states.values())) if isinstance(stacked, Suite) else stacked
    return comp.value(state.count)


@jax.jit
def vmapped_compute(state: Any) -> Any:
    """``compute()`` of each state stacked along the leading axis (the replicates), in one jitted call."""
    return jax.vmap(lambda s: s.compute_traced())(state)


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


def example_ids_of(cls: Any, example_ids: Any, n: int) -> np.ndarray:
    """The batch's example ids: given ones checked, else the class's running positions."""
    if example_ids is None:
        return cls.positions.take(n)
    ids = np.asarray(example_ids)
    if ids.shape != (n,):
        raise ValueError(
            f"{cls.resampling.name}: example_ids must have one integer per example, shape ({n},); found {ids.shape}."
        )
    ids32(ids)
    return ids.astype(np.int64)


def zero_rows(metric: Any) -> Any:
    """An empty ``(0, D)`` block of rows per member (for shapes)."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        return {k: m.example_rows(np.zeros((0, 3))) for k, m in metric.metric_config.members}
    return metric.example_rows(np.zeros((0, 3)))


_INT32 = np.iinfo(np.int32)


def device_ids(example_ids: Any, n: int, name: str) -> jax.Array:
    """Example ids as int32 (checked: one integer per example, in the int32 range when concrete)."""
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
