"""Compensated (double-float32) sums: totals that keep counting far beyond float32's 2**24.

A value is stored as a pair ``(hi, lo)`` of float32 along the last axis with ``hi + lo`` its value and
``|lo| <= ulp(hi) / 2``. Addition uses Knuth's TwoSum, so integer-valued totals stay exact up to about 2**48
without ``jax_enable_x64``. All functions are pure ``jax.numpy`` and jittable.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["split", "add", "add_traced", "value", "tree_sum"]


def split(x: Any) -> np.ndarray:
    """Split float64 host values into a ``(..., 2)`` float32 pair array (on the host, NumPy)."""
    x = np.asarray(x, dtype=np.float64)
    hi = x.astype(np.float32)
    lo = (x - hi.astype(np.float64)).astype(np.float32)
    return np.stack([hi, lo], axis=-1)


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
