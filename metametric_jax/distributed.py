r"""Merge accumulator states across hosts (JAX processes).

Each process scores its share of the data into a state :math:`s_p`; :func:`merge_across_processes` gathers every
process's state (``jax.experimental.multihost_utils.process_allgather``, stacking them along a new leading axis)
and reduces the stack, so every process ends with

.. math::

    s = s_0 \oplus s_1 \oplus \dots \oplus s_{P-1},

the state one process would have built from all the data (``merge`` is associative and commutative; see
:mod:`metametric_jax.testing`). Within one process, merge per-device states inside ``pmap`` / ``shard_map`` with
``jax.lax.all_gather(state, axis).reduce()`` (CLU's pattern) or ``state.psum(axis)``.
"""

from __future__ import annotations

from typing import TypeVar

import jax
import jax.numpy as jnp

__all__ = ["merge_across_processes"]

S = TypeVar("S")


def merge_across_processes(state: S) -> S:
    """The merge of every process's ``state`` (the same on every process).

    Must be called by all processes (it is a collective). With one process it returns ``state`` unchanged.

    Args:
        state: a reduced :class:`~metametric_jax.protocol.Accumulator` state (not stacked; call ``reduce()`` first
            on per-device stacks), or any pytree with a ``reduce()`` method over a leading axis, such as a
            ``clu.metrics.Collection``.

    Returns:
        The merged state, with its leaves on this process's default device.

    Raises:
        TypeError: if ``state`` has no ``reduce`` method.
    """
    if not callable(getattr(state, "reduce", None)):
        raise TypeError(
            f"merge_across_processes expects an accumulator state with a reduce() method; found {type(state).__name__}."
        )
    if jax.process_count() == 1:
        return state
    from jax.experimental import multihost_utils

    gathered = multihost_utils.process_allgather(state, tiled=False)
    stacked = jax.tree.map(jnp.asarray, gathered)
    return stacked.reduce()
