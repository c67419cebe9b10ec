r"""The accumulator contract, named: what every state class of this library implements.

``Metric`` (``D.metric``, ``make_metric``, ``stats_metric``), ``Suite`` (``make_suite``), the bootstrap state
(:func:`metametric_jax.significance.bootstrap`) and the randomization state
(:func:`metametric_jax.significance.randomization`) are all accumulators in CLU's sense: immutable states with

* ``M.empty()`` — the identity of ``merge``: ``s.merge(M.empty())`` is ``s``;
* ``M.from_model_output(...)`` — the state of one batch (Python structures, or arrays with ``decode=``);
* ``s.merge(t)`` — associative and commutative (leafwise addition);
* ``s.reduce()`` — the merge of states stacked along a leading axis (``all_gather(state, axis).reduce()``);
* ``s.compute()`` — the figures, a pure function of the state.

The modules that take "any accumulator" (:mod:`~metametric_jax.testing`, :mod:`~metametric_jax.distributed`,
:mod:`~metametric_jax.interop`, :mod:`~metametric_jax.jit`) say so with :class:`Accumulator` instead of duck typing.

Example:
    >>> from metametric_jax import dsl, make_metric
    >>> Bag = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="bag")
    >>> isinstance(Bag.empty(), Accumulator), is_accumulator_class(Bag)
    (True, True)
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

__all__ = ["Accumulator", "SumsAccumulator", "is_accumulator_class", "A"]

A = TypeVar("A", bound="Accumulator")

#: the methods the contract names (classmethods first)
CONTRACT = ("empty", "from_model_output", "merge", "reduce", "compute")


@runtime_checkable
class Accumulator(Protocol):
    """An immutable, mergeable evaluation state (see the module docstring for the laws)."""

    @classmethod
    def empty(cls: type[A]) -> A:
        """The identity of ``merge``."""
        ...

    @classmethod
    def from_model_output(cls: type[A], *args: Any, **kwargs: Any) -> A:
        """The state of one batch."""
        ...

    def merge(self: A, other: A) -> A:
        """The state of both (associative, commutative)."""
        ...

    def reduce(self: A) -> A:
        """The merge of states stacked along the leading axis."""
        ...

    def compute(self) -> Any:
        """The figures."""
        ...


@runtime_checkable
class SumsAccumulator(Accumulator, Protocol):
    """An accumulator whose state is built from named sums computed on the host (what the ``decode=`` callback needs).

    Every state class of this library is one: the callback computes ``_host_batch_sums`` on the host with the fixed
    result shape ``_sums_shape()`` and builds the state with ``_from_sums``.
    """

    metric_config: ClassVar[Any]

    @classmethod
    def _sums_shape(cls) -> Any:
        """The structure of ``_host_batch_sums`` as ``jax.ShapeDtypeStruct`` leaves."""
        ...

    @classmethod
    def _host_batch_sums(cls, *args: Any, **kwargs: Any) -> Any:
        """The sums of a batch of structures, on the host (NumPy)."""
        ...

    @classmethod
    def _from_sums(cls: type[A], sums: Any) -> A:
        """A state from its sums."""
        ...


def is_accumulator_class(cls: Any) -> bool:
    """Whether ``cls`` is a class implementing :class:`Accumulator` (every method of the contract callable)."""
    return isinstance(cls, type) and all(callable(getattr(cls, name, None)) for name in CONTRACT)
