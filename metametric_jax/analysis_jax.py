r"""The bucketed state as a JAX pytree: merged across batches, devices and hosts like any state, to the last bit.

:class:`~metametric_jax.analysis_state.BucketedState` is the NumPy form (float64 totals ``(S, K, D)``, replicates
``(S, B, K, D)``). :class:`BucketedArrays` is the same state on device, a ``flax.struct`` pytree whose bucket names,
samples and seed are static: ``merge`` (jittable), ``psum(axis)`` inside ``pmap`` / ``shard_map``, and ``reduce()``
of states stacked along a leading axis (``all_gather(state, axis).reduce()``). Build it with :meth:`from_state`
(every device with the same bucket names, in the same order: pass ``buckets=`` the names of the whole evaluation) and
read it back with :meth:`to_state`.

**Exact sums without float64 on the device.** A float64 total :math:`x` is held as the integer
:math:`M = x \cdot 2^{96}` in seven int32 limbs of 24 bits, :math:`M = \sum_j \ell_j 2^{24 j}` (the top limb signed).
Every float64 of magnitude below :math:`2^{71}` whose lowest bit is not below :math:`2^{-96}` is held exactly (so
every count, and every fraction from about :math:`10^{-13}` up at full precision); :meth:`from_state` refuses any
other value, naming it. Limbs add as int32 (a ``psum`` over up to 127 devices cannot overflow a limb of 24 bits) and
carry into the next limb after each merge, so the sum of any number of states, in any order or tree, is the exact
sum of their totals; :meth:`to_state` rounds it to float64 once. Hence:

* for integer totals (counts, and their replicates under integer Poisson weights) every merge equals
  :meth:`BucketedState.merge`'s bit for bit (float64 sums of integers below :math:`2^{53}` are exact);
* for fractional totals (B-cubed's, CEAF's) the result is the correctly rounded exact sum: bit for bit the NumPy merge
  of two states, and independent of the order and grouping of the merges (where a chain of NumPy merges rounds once
  per merge).

Unit counts, items and the units holding each bucket are int32. The unit ids themselves are not carried (a device
holds only how many): :meth:`to_state` takes the ids of every unit merged, and checks their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from metametric_jax.analysis_state import BucketedState, laid_out

__all__ = ["GRID", "BITS", "LIMBS", "BucketedArrays", "encode", "decode"]

#: a total is held as the integer ``x * 2**GRID``
GRID = 96
#: bits per limb
BITS = 24
#: limbs per total: ``LIMBS * BITS - GRID`` = 72 bits above the unit (the top limb signed)
LIMBS = 7
#: the largest magnitude held
LIMIT = 2.0**71


def encode(values: Any, what: str = "total") -> np.ndarray:
    """int32 ``(..., LIMBS)`` limbs of float64 values, exactly (``ValueError`` naming a value that is not held).

    >>> encode([1.5, -2.0])[:, 3:].tolist()  # limbs 3-6: 1.5 = 2**-1 + 2**0; -2 with the top limb negative
    [[8388608, 1, 0, 0], [0, 16777214, 16777215, -1]]
    """
    x = np.asarray(values, np.float64)
    bad = ~np.isfinite(x) | (np.abs(x) >= LIMIT)
    y = np.ldexp(x, GRID)
    bad |= np.where(np.isfinite(y), y != np.floor(y), True)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"BucketedArrays: the {what} {float(x[at])!r} at {at} is not held exactly on the device grid (finite, "
            f"below 2**71 in magnitude, no bit below 2**-{GRID})"
        )
    limbs = np.empty((*x.shape, LIMBS), np.int32)
    quotient = y
    for j in range(LIMBS - 1):
        # each step is exact in float64: floor of a power-of-two scaling, and a Sterbenz subtraction
        upper = np.floor(np.ldexp(quotient, -BITS))
        limbs[..., j] = (quotient - np.ldexp(upper, BITS)).astype(np.int32)
        quotient = upper
    limbs[..., LIMBS - 1] = quotient.astype(np.int32)
    return limbs


def decode(limbs: Any) -> np.ndarray:
    """float64 values of int32 limbs ``(..., LIMBS)``: the exact integer, rounded to float64 once.

    >>> decode(encode([1.5, -2.0, 1 / 3])).tolist() == [1.5, -2.0, 1 / 3]
    True
    """
    arr = np.asarray(limbs).astype(np.int64)
    exact = np.zeros(arr.shape[:-1], dtype=object)
    for j in range(arr.shape[-1] - 1, -1, -1):
        exact = exact * (1 << BITS) + arr[..., j].astype(object)
    scale = 1 << GRID
    out = np.empty(arr.shape[:-1], np.float64)
    flat = out.reshape(-1)
    for k, m in enumerate(np.asarray(exact).reshape(-1).tolist()):
        flat[k] = m / scale  # int / int: correctly rounded
    return out


def _carry(limbs: jax.Array) -> jax.Array:
    """The same integers with every limb but the top one in ``[0, 2**BITS)`` (traced; int32)."""
    parts = [limbs[..., j] for j in range(LIMBS)]
    for j in range(LIMBS - 1):
        c = jnp.right_shift(parts[j], BITS)  # arithmetic: floor division by 2**BITS
        parts[j] = parts[j] - jnp.left_shift(c, BITS)
        parts[j + 1] = parts[j + 1] + c
    return jnp.stack(parts, axis=-1)


class BucketedArrays(struct.PyTreeNode):
    """A :class:`~metametric_jax.analysis_state.BucketedState` on device: the same sums, in exact int32 limbs.

    Attributes:
        totals: int32 ``(S, K, D, LIMBS)``: each system's totals per bucket.
        replicates: int32 ``(S, B, K, D, LIMBS)``: the same under each replicate's Poisson weights.
        mass: int32 ``(B, LIMBS)``: each replicate's total weight of the units held.
        n: int32 ``()``: the number of units held.
        holding: int32 ``(K,)``: the number of units holding items of each bucket.
        items: int32 ``(S, K)``: the number of items of each system in each bucket.
        buckets: the ``K`` bucket names (static: every state merged has the same, in the same order).
        samples: the number of replicates ``B`` (static).
        seed: the seed of the weights (static).
    """

    totals: jax.Array
    replicates: jax.Array
    mass: jax.Array
    n: jax.Array
    holding: jax.Array
    items: jax.Array
    buckets: tuple[str, ...] = struct.field(pytree_node=False, default=())
    samples: int = struct.field(pytree_node=False, default=1)
    seed: int = struct.field(pytree_node=False, default=0)

    # ---------------------------------------------------------------------------------------------- host
    @classmethod
    def from_state(cls, state: BucketedState, buckets: Sequence[str] | None = None) -> BucketedArrays:
        """The device form of a NumPy state, its buckets laid out as ``buckets`` (default: the state's own order).

        Args:
            state: the NumPy state.
            buckets: the bucket names of the whole evaluation, in the order every device uses; the state's buckets
                must be among them (those it lacks are zero).

        Raises:
            ValueError: a bucket of the state not in ``buckets``, a name twice, or a total not held exactly
                (:func:`encode`).
        """
        names = tuple(state.buckets if buckets is None else (str(b) for b in buckets))
        if len(set(names)) != len(names):
            raise ValueError(f"BucketedArrays: a bucket is named twice in {list(names)}")
        where = {b: j for j, b in enumerate(names)}
        missing = [b for b in state.buckets if b not in where]
        if missing:
            raise ValueError(f"BucketedArrays: the state's bucket {missing[0]!r} is not among buckets={list(names)}")
        idx = np.array([where[b] for b in state.buckets], np.int64)

        def laid(a: np.ndarray, axis: int) -> np.ndarray:
            return laid_out(a, axis, idx, len(names))

        return cls(
            totals=jnp.asarray(encode(laid(state.totals, 1))),
            replicates=jnp.asarray(encode(laid(state.replicates, 2), "replicate total")),
            mass=jnp.asarray(encode(state.mass, "replicate mass")),
            n=jnp.asarray(_int32(state.n), jnp.int32),
            holding=jnp.asarray(_int32(laid(state.holding, 0)), jnp.int32),
            items=jnp.asarray(_int32(laid(state.items, 1)), jnp.int32),
            buckets=names,
            samples=int(state.samples),
            seed=int(state.seed),
        )

    @classmethod
    def empty(cls, systems: int, width: int, buckets: Sequence[str], *, samples: int, seed: int = 0) -> BucketedArrays:
        """The state of no unit over ``buckets``: the identity of :meth:`merge`."""
        return cls.from_state(BucketedState.empty(systems, width, samples=samples, seed=seed), buckets)

    def to_state(self, units: Any) -> BucketedState:
        """The NumPy state of these sums; ``units``: the ids of every unit they hold (their number is checked).

        Buckets without items in any system are left out, as a NumPy state built from the same items has none.

        Raises:
            ValueError: on a stacked state (``reduce()`` it first), or ``units`` of another number or repeated.
        """
        if np.ndim(self.n) != 0:
            raise ValueError(f"BucketedArrays.to_state: the state is stacked (n of shape {np.shape(self.n)}); reduce()")
        held = np.sort(np.asarray(units, np.int64).reshape(-1))
        if held.size != int(self.n) or (held.size and np.any(held[1:] == held[:-1])):
            raise ValueError(
                f"BucketedArrays.to_state: the state holds {int(self.n)} units; found {held.size} unit ids"
                + (" with a repeat" if held.size and np.any(held[1:] == held[:-1]) else "")
            )
        items = np.asarray(self.items, np.int64)
        keep = np.flatnonzero(items.sum(axis=0) > 0)
        frozen = []
        for a in (
            decode(self.totals)[:, keep],
            decode(self.replicates)[:, :, keep],
            decode(self.mass),
            held,
            np.asarray(self.holding, np.int64)[keep],
            items[:, keep],
        ):
            a = np.ascontiguousarray(a)
            a.flags.writeable = False
            frozen.append(a)
        names = tuple(self.buckets[j] for j in keep.tolist())
        totals, replicates, mass, units_held, holding, counted = frozen
        return BucketedState(names, totals, replicates, mass, units_held, holding, counted, self.samples, self.seed)

    # ---------------------------------------------------------------------------------------------- laws
    def _check(self, other: BucketedArrays) -> None:
        if not isinstance(other, BucketedArrays):
            raise TypeError(f"merge expects a BucketedArrays; found {type(other).__name__}")
        mine = (self.buckets, self.samples, self.seed, self.totals.shape)
        theirs = (other.buckets, other.samples, other.seed, other.totals.shape)
        if mine != theirs:
            raise ValueError(
                "BucketedArrays.merge: the states differ in (buckets, samples, seed, totals' shape): "
                f"{mine} vs {theirs}; lay every state out over the same buckets (from_state(state, buckets=...))"
            )

    def merge(self, other: BucketedArrays) -> BucketedArrays:
        """The state of both: every sum exact (jittable)."""
        self._check(other)
        return self.replace(
            totals=_carry(self.totals + other.totals),
            replicates=_carry(self.replicates + other.replicates),
            mass=_carry(self.mass + other.mass),
            n=self.n + other.n,
            holding=self.holding + other.holding,
            items=self.items + other.items,
        )

    def psum(self, axis_name: Any) -> BucketedArrays:
        """Merge across a named device axis with ``lax.psum`` (inside ``pmap`` / ``shard_map``), exactly."""
        total = jax.lax.psum((self.totals, self.replicates, self.mass, self.n, self.holding, self.items), axis_name)
        totals, replicates, mass, n, holding, items = total
        return self.replace(
            totals=_carry(totals),
            replicates=_carry(replicates),
            mass=_carry(mass),
            n=n,
            holding=holding,
            items=items,
        )

    def reduce(self) -> BucketedArrays:
        """Merge states stacked along the leading axis (``all_gather(state, axis).reduce()``), exactly."""
        if self.n.ndim == 0:
            return self

        def body(carry: BucketedArrays, x: BucketedArrays) -> tuple[BucketedArrays, None]:
            return carry.merge(x), None

        first = jax.tree.map(lambda x: x[0], self)
        total, _ = jax.lax.scan(body, first, jax.tree.map(lambda x: x[1:], self))
        return total


def _int32(values: Any) -> np.ndarray:
    arr = np.asarray(values, np.int64)
    if arr.size and (arr.max() >= 2**31 or arr.min() < 0):
        raise ValueError(f"BucketedArrays: a count of {int(arr.max())} does not fit int32")
    return arr.astype(np.int32)
