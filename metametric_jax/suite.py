r"""Suites: several accumulators as one pytree, with derived figures computed at the end.

A suite has the same contract as a single metric (``empty``, ``from_model_output``, ``merge``, ``reduce``,
``compute``), merges member by member, and derives figures from its members' results in ``compute()``: B³ F1 from its
separately normalized precision and recall members, or the CoNLL average of MUC, B³ and CEAF-e F1.

Example:
    >>> from metametric_jax import dsl, make_metric
    >>> spans = dsl.set_matching(dsl.discrete())
    >>> P = make_metric(spans, normalizer="precision", name="p")
    >>> R = make_metric(spans, normalizer="recall", name="r")
    >>> from metametric_jax.normalizer import safe_divide
    >>> def f1(r):
    ...     p, q = r["p"]["precision"], r["r"]["recall"]
    ...     return safe_divide(2 * p * q, p + q)
    >>> PR = make_suite("pr", {"p": P, "r": R}, {"f1": f1})
    >>> round(float(PR.from_model_output([["a", "b"]], [["a"]]).compute()["f1"]), 4)
    0.6667
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import jax
import numpy as np
from flax import struct

from metametric_jax._portable import MetricType, register
from metametric_jax.accumulate import Metric
from metametric_jax.inputs import check_batch

__all__ = ["Suite", "SuiteConfig", "make_suite"]

S = TypeVar("S", bound="Suite")


@dataclasses.dataclass(frozen=True, eq=False)
class SuiteConfig:
    """Static configuration of a suite: its members, derived figures and optional one-pass statistics function."""

    name: str
    members: tuple[tuple[str, type[Metric]], ...]
    derived: tuple[tuple[str, Callable[[Mapping[str, Any]], Any]], ...]
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], Mapping[str, np.ndarray]] | None

    def __repr__(self) -> str:
        return f"SuiteConfig({self.name!r}, members={[m for m, _ in self.members]})"


class Suite(struct.PyTreeNode, metaclass=MetricType):
    """Several accumulators as one pytree, with derived figures computed at the end.

    ``compute()`` returns ``{member: member.compute(), ..., derived_name: value, ...}``; each derived function is
    given the members' results (and the derived figures before it).

    Attributes:
        states: the members' states, by name.
        config: static configuration.

    Classes and states pickle as a metric's do (the class by reference, each member's sums as NumPy).
    """

    states: dict[str, Metric]
    config: SuiteConfig = struct.field(pytree_node=False)

    #: the class's configuration (also each state's ``config``)
    metric_config: ClassVar[SuiteConfig]

    @classmethod
    def empty(cls: type[S]) -> S:
        """All members empty."""
        return cls(states={k: m.empty() for k, m in cls.metric_config.members}, config=cls.metric_config)

    @classmethod
    def from_member_stats(cls: type[S], stats: Mapping[str, Any], weights: Any = None) -> S:
        """A state from per-member ``(n, 3)`` statistics arrays (one host→device transfer per batch)."""
        cfg = cls.metric_config
        missing = [k for k, _ in cfg.members if k not in stats]
        if missing:
            raise ValueError(f"{cfg.name}: statistics missing for members {missing}.")
        return cls._from_sums({k: m._host_sums(stats[k], weights) for k, m in cfg.members})

    @classmethod
    def from_model_output(
        cls: type[S],
        predictions: Any,
        references: Any,
        weights: Any = None,
        *,
        decode: Callable[[Any], Any] | None = None,
        decode_references: Callable[[Any], Any] | None = None,
    ) -> S:
        """The state of one batch: one pass of the suite's statistics function, or each member's own.

        With ``decode`` (and optionally ``decode_references``) the inputs are arrays and the batch is decoded and
        matched on the host, also inside ``jax.jit`` (see :mod:`metametric_jax.jit`).
        """
        cfg = cls.metric_config
        if decode is not None or decode_references is not None:
            from metametric_jax.jit import callback_state

            return callback_state(cls, predictions, references, weights, decode, decode_references)
        check_batch(predictions, references, cfg.name)
        return cls.from_member_stats(cls.member_stats(predictions, references), weights)

    @classmethod
    def member_stats(cls, predictions: Sequence[Any], references: Sequence[Any]) -> Mapping[str, Any]:
        """Per-member statistics ``{member: (n, 3)}`` of a batch (one pass of the suite's function if it has one)."""
        cfg = cls.metric_config
        if cfg.batch_stats is not None:
            return cfg.batch_stats(predictions, references)
        return {k: m.batch_stats(predictions, references) for k, m in cfg.members}

    @classmethod
    def _host_batch_sums(cls, predictions: Sequence[Any], references: Sequence[Any], weights: Any = None) -> Any:
        """Every member's sums of a batch, by member (what the callback path computes)."""
        check_batch(predictions, references, cls.metric_config.name)
        stats = cls.member_stats(predictions, references)
        return {k: m._host_sums(stats[k], weights) for k, m in cls.metric_config.members}

    @classmethod
    def _sums_shape(cls) -> dict[str, Any]:
        """The structure of :meth:`_host_batch_sums` as ``jax.ShapeDtypeStruct`` leaves."""
        return {k: m._sums_shape() for k, m in cls.metric_config.members}

    @classmethod
    def _from_sums(cls: type[S], sums: Mapping[str, Any]) -> S:
        """A suite state from its members' sums (see :meth:`_host_batch_sums`).

        NumPy sums make host states (see :meth:`Metric._host_state`): they merge on the host, and go to the device
        when ``jit`` or ``compute`` takes them.
        """
        cfg = cls.metric_config
        if all(isinstance(x, np.ndarray) for x in jax.tree.leaves(sums)):
            return cls(states={k: m._host_state(m._pack(sums[k])) for k, m in cfg.members}, config=cfg)
        states = {k: m._from_sums(sums[k]) for k, m in cfg.members}
        return cls(states=states, config=cfg)

    @classmethod
    def _unpack(cls: type[S], packed: Mapping[str, Any]) -> S:
        """A suite state from each member's packed sums (see :meth:`Metric._pack`; jnp, usable inside ``jit``)."""
        cfg = cls.metric_config
        return cls(states={k: m._unpack(packed[k]) for k, m in cfg.members}, config=cfg)

    def __getstate__(self) -> dict[str, Any]:
        return {"states": {k: v.__getstate__() for k, v in self.states.items()}}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        cfg = type(self).metric_config
        states = {}
        for key, member in cfg.members:
            states[key] = member.__new__(member)
            states[key].__setstate__(state["states"][key])
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "config", cfg)

    def merge(self: S, other: S) -> S:
        """Member-wise merge: each member's :meth:`Metric.merge`, in one jitted program for the whole suite.

        Members whose states are all on the host merge there (with the jitted merge's bits, as a metric's do);
        inside ``jit`` each member merges as traced.
        """
        if not isinstance(other, Suite) or other.config is not self.config:
            found = other.config if isinstance(other, Suite) else type(other).__name__
            raise TypeError(f"Cannot merge {found!r} into a state of {self.config!r}.")
        pairs = [(k, v, other.states[k]) for k, v in self.states.items()]
        traced = any(isinstance(v.count, jax.core.Tracer) or isinstance(o.count, jax.core.Tracer) for _, v, o in pairs)
        if traced or all(v._host_pair() is not None and o._host_pair() is not None for _, v, o in pairs):
            return self.replace(states={k: v.merge(o) for k, v, o in pairs})
        for _, v, o in pairs:
            v._check_compatible(o)
        return _jitted_merge(self, other)  # one program (and one dispatch) for every member, not one per member

    def reduce(self: S) -> S:
        """Member-wise reduce over the leading axis."""
        return self.replace(states={k: v.reduce() for k, v in self.states.items()})

    def psum(self: S, axis_name: Any) -> S:
        """Member-wise :meth:`Metric.psum`."""
        return self.replace(states={k: v.psum(axis_name) for k, v in self.states.items()})

    def compute(self) -> dict[str, Any]:
        """Members' results and derived figures."""
        traced = any(isinstance(v.count, jax.core.Tracer) for v in self.states.values())
        if not traced:
            for v in self.states.values():
                v._check_reduced("compute")
            return _jitted_compute(self)
        return self._compute_traced()

    def _compute_traced(self) -> dict[str, Any]:
        """``compute`` without its eager checks (inside ``jit`` / ``pmap``; the state must be reduced)."""
        results: dict[str, Any] = {k: v._compute_traced() for k, v in self.states.items()}
        for key, fn in self.config.derived:
            results[key] = fn(results)
        return results


def make_suite(
    name: str,
    members: Mapping[str, type[Metric]],
    derived: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
    *,
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], Mapping[str, np.ndarray]] | None = None,
    doc: str | None = None,
) -> type[Suite]:
    """A suite class: several metric classes as one accumulator.

    Args:
        name: the suite's name.
        members: metric classes by name.
        derived: figures computed from the members' results at the end, e.g.
            ``{"conll": lambda r: (r["muc"]["f1"] + r["bcub"]["f1"] + r["ceafe"]["f1"]) / 3}``.
        batch_stats: optional one-pass host function returning every member's ``(n, 3)`` statistics.
        doc: docstring of the class.
    """
    cfg = SuiteConfig(
        name=name,
        members=tuple(members.items()),
        derived=tuple((derived or {}).items()),
        batch_stats=batch_stats,
    )
    cls_name = "".join(p[:1].upper() + p[1:] for p in name.replace("-", "_").split("_")) + "Suite"
    cls: Any = MetricType(
        cls_name, (Suite,), {"metric_config": cfg, "__doc__": doc or Suite.__doc__, "__module__": Suite.__module__}
    )
    kwargs = {"derived": derived, "batch_stats": batch_stats, "doc": doc}
    return register(cls, make_suite, (name, members), kwargs, raw=True)


@jax.jit
def _jitted_compute(state: Any) -> Any:
    return state._compute_traced()


@jax.jit
def _jitted_merge(a: Any, b: Any) -> Any:
    return a.replace(states={k: v._merge_traced(b.states[k]) for k, v in a.states.items()})
