"""Compensated (double-float32) sums: totals that keep counting far beyond float32's 2**24.

A value is stored as a pair ``(hi, lo)`` of float32 along the last axis with ``hi + lo`` its value and
``|lo| <= ulp(hi) / 2``. Addition uses Knuth's TwoSum, so integer-valued totals stay exact up to about 2**48
without ``jax_enable_x64``. All functions but the host ones (:func:`split`, :func:`host_exact`, :func:`add_host`:
NumPy) are pure ``jax.numpy`` and jittable.

:func:`add_host` is :func:`add` in NumPy, for pairs whose every value is 0 or of magnitude in
:math:`[2^{-100}, 2^{100}]` (:func:`host_exact`). Every such value is a multiple of :math:`2^{-123}`, and so is every
rounded sum or difference of such multiples, so no step of TwoSum meets a subnormal (which XLA flushes to zero and
NumPy keeps) or overflows: each step is one correctly rounded float32 operation on both sides, the same bits. A sum
of two such arrays again holds multiples of :math:`2^{-123}`, so it may be added on the host again while its
magnitudes stay at most :math:`2^{100}`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["split", "add", "add_traced", "add_host", "host_exact", "value", "tree_sum"]


def split(x: Any) -> np.ndarray:
    """Split float64 host values into a ``(..., 2)`` float32 pair array (on the host, NumPy)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape + (2,), np.float32)
    hi = out[..., 0]
    hi[...] = x  # float64 -> float32, rounded to nearest (as astype)
    out[..., 1] = x - hi  # exact in float64, then rounded to float32
    return out


def _two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def add_traced(x: jax.Array, y: jax.Array) -> jax.Array:
    """Compensated elementwise sum of two pair arrays, as ``jax.numpy`` operations (inside a traced function)."""
    return _add(x, y)


def _add(x: jax.Array, y: jax.Array) -> jax.Array:
    s, e = _two_sum(x[..., 0], y[..., 0])
    e = e + (x[..., 1] + y[..., 1])
    hi = s + e
    lo = e - (hi - s)
    return jnp.stack([hi, lo], axis=-1)


_add_jit = jax.jit(_add)


def add(x: jax.Array, y: jax.Array) -> jax.Array:
    """Compensated elementwise sum of two pair arrays (jittable; one dispatch when called eagerly)."""
    if isinstance(x, jax.core.Tracer) or isinstance(y, jax.core.Tracer):
        return _add(x, y)
    return _add_jit(x, y)


#: the magnitudes :func:`add_host` takes (besides 0): every such float32 is a multiple of 2**-123
_TINY, _HUGE = np.float32(2.0**-100), np.float32(2.0**100)


def host_exact(pairs: np.ndarray) -> bool:
    """Whether :func:`add_host` gives :func:`add`'s bits for these float32 values: each 0 or in ``[2**-100, 2**100]``.

    Fails for NaN and infinities too.
    """
    m = np.abs(pairs)
    return bool(((m <= _HUGE) & ((m >= _TINY) | (m == 0))).all())


def add_host(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`add` of two float32 NumPy pair arrays of one shape on the host, where :func:`host_exact` holds for both.

    The same operations in the same order as :func:`add`, so the same bits (see the module docstring). Returns the
    sum and whether it may be added again on the host: its values are multiples of 2**-123 (as the operands'), so
    whether they are at most 2**100.
    """
    a, b = x[..., 0], y[..., 0]
    s = a + b
    bb = s - a
    e = ((a - (s - bb)) + (b - bb)) + (x[..., 1] + y[..., 1])
    out = np.empty(x.shape, np.float32)
    hi = out[..., 0]
    np.add(s, e, out=hi)
    np.subtract(e, hi - s, out=out[..., 1])
    return out, bool(np.abs(out).max(initial=0) <= _HUGE)


def value(x: jax.Array) -> jax.Array:
    """Collapse a pair array to one float (float64 when ``jax_enable_x64`` is on, else float32)."""
    if getattr(jax.config, "jax_enable_x64", False):
        return x[..., 0].astype(jnp.float64) + x[..., 1].astype(jnp.float64)
    return x[..., 0] + x[..., 1]


def tree_sum(pairs: jax.Array) -> jax.Array:
    """Compensated sum over the leading axis of a ``(n, ..., 2)`` pair array (pairwise, log-depth; jittable)."""
    if pairs.shape[0] == 0:
        return jnp.zeros(pairs.shape[1:], jnp.float32)
    while pairs.shape[0] > 1:
        if pairs.shape[0] % 2:
            pairs = jnp.concatenate([pairs, jnp.zeros_like(pairs[:1])])
        pairs = add(pairs[0::2], pairs[1::2])
    return pairs[0]
