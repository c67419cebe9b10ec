r"""Suites: several accumulators as one pytree, with derived figures computed at the end.

A suite has the same contract as a single metric (``empty``, ``from_model_output``, ``merge``, ``reduce``,
``compute``), merges member by member, and derives figures from its members' results in ``compute()``: B³ F1 from its
separately normalized precision and recall members, or the CoNLL average of MUC, B³ and CEAF-e F1.

Example:
    >>> from metametric_jax import dsl
    >>> spans = dsl.set_matching(dsl.discrete())
    >>> P = dsl.metric(spans, normalizer="precision", name="p")
    >>> R = dsl.metric(spans, normalizer="recall", name="r")
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

from metametric_jax.accumulate import Metric, _check_lengths, _jitted_compute

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


class Suite(struct.PyTreeNode):
    """Several accumulators as one pytree, with derived figures computed at the end.

    ``compute()`` returns ``{member: member.compute(), ..., derived_name: value, ...}``; each derived function is
    given the members' results (and the derived figures before it).

    Attributes:
        states: the members' states, by name.
        config: static configuration.
    """

    states: dict[str, Metric]
    config: SuiteConfig = struct.field(pytree_node=False)

    _config: ClassVar[SuiteConfig]

    @classmethod
    def empty(cls: type[S]) -> S:
        """All members empty."""
        return cls(states={k: m.empty() for k, m in cls._config.members}, config=cls._config)

    @classmethod
    def from_member_stats(cls: type[S], stats: Mapping[str, Any], weights: Any = None) -> S:
        """A state from per-member ``(n, 3)`` statistics arrays (one host→device transfer per batch)."""
        cfg = cls._config
        missing = [k for k, _ in cfg.members if k not in stats]
        if missing:
            raise ValueError(f"{cfg.name}: statistics missing for members {missing}.")
        host = [m.host_sums(stats[k], weights) for k, m in cfg.members]
        dev = jax.device_put(host)
        return cls(
            states={k: m(sums=d, config=m._config) for (k, m), d in zip(cfg.members, dev)},
            config=cfg,
        )

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
        cfg = cls._config
        if decode is not None or decode_references is not None:
            from metametric_jax.jit import callback_state

            return callback_state(cls, predictions, references, weights, decode, decode_references)
        _check_lengths(predictions, references, cfg.name)
        return cls.from_member_stats(cls._member_stats(predictions, references), weights)

    @classmethod
    def _member_stats(cls, predictions: Sequence[Any], references: Sequence[Any]) -> Mapping[str, Any]:
        cfg = cls._config
        if cfg.batch_stats is not None:
            return cfg.batch_stats(predictions, references)
        return {k: m.batch_stats(predictions, references) for k, m in cfg.members}

    @classmethod
    def host_batch_sums(cls, predictions: Sequence[Any], references: Sequence[Any], weights: Any = None) -> np.ndarray:
        """Every member's ``sums`` of a batch, stacked along the row axis (what the callback path computes)."""
        _check_lengths(predictions, references, cls._config.name)
        stats = cls._member_stats(predictions, references)
        return np.concatenate([m.host_sums(stats[k], weights) for k, m in cls._config.members], axis=0)

    @classmethod
    def sums_shape(cls) -> tuple[int, int]:
        """The shape of :meth:`host_batch_sums`: the members' rows, stacked."""
        return (sum(m._config.n_rows for _, m in cls._config.members), 2)

    @classmethod
    def from_sums(cls: type[S], sums: Any) -> S:
        """A suite state from stacked member ``sums`` (see :meth:`host_batch_sums`)."""
        states, start = {}, 0
        for k, m in cls._config.members:
            states[k] = m.from_sums(sums[start : start + m._config.n_rows])
            start += m._config.n_rows
        return cls(states=states, config=cls._config)

    def merge(self: S, other: S) -> S:
        """Member-wise merge."""
        if not isinstance(other, Suite) or other.config is not self.config:
            found = other.config if isinstance(other, Suite) else type(other).__name__
            raise TypeError(f"Cannot merge {found!r} into a state of {self.config!r}.")
        return self.replace(states={k: v.merge(other.states[k]) for k, v in self.states.items()})

    def reduce(self: S) -> S:
        """Member-wise reduce over the leading axis."""
        return self.replace(states={k: v.reduce() for k, v in self.states.items()})

    def psum(self: S, axis_name: Any) -> S:
        """Member-wise :meth:`Metric.psum`."""
        return self.replace(states={k: v.psum(axis_name) for k, v in self.states.items()})

    def compute(self) -> dict[str, Any]:
        """Members' results and derived figures."""
        for k, v in self.states.items():
            if v.sums.ndim != 2:
                raise ValueError(
                    f"{self.config.name}.compute: member {k!r} is still stacked (sums shape {v.sums.shape}); "
                    "call reduce() first."
                )
        if not any(isinstance(v.sums, jax.core.Tracer) for v in self.states.values()):
            return _jitted_compute(self)
        return self._compute()

    def _compute(self) -> dict[str, Any]:
        results: dict[str, Any] = {k: v._compute() for k, v in self.states.items()}
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
    return type(cls_name, (Suite,), {"_config": cfg, "__doc__": doc or Suite.__doc__, "__module__": Suite.__module__})
