r"""JAX accumulators: every metric is an immutable ``flax.struct`` state with the CLU / metrax contract.

A metric class ``M`` (for example ``metric_of(D)``) has

* ``M.empty()`` — the identity of ``merge``;
* ``M.from_model_output(predictions, references, weights=None)`` — the state of one batch (host side: matching runs
  in Python / SciPy, per-example statistics are summed in NumPy; the state's sums stay NumPy until a merge with a
  device state, ``jit`` or ``compute`` needs them on the device);
* ``state.merge(other)``, ``state.reduce()``, ``state.compute()`` — pure ``jax.numpy``, jittable (two host states
  merge in NumPy, with the same bits).

The state holds, for examples :math:`i` with weights :math:`w_i` (1 by default),

.. math::

    \sum_i w_i \phi(P_i, R_i), \quad \sum_i w_i \phi(P_i, P_i), \quad \sum_i w_i \phi(R_i, R_i),
    \quad \sum_i w_i\, n(P_i, R_i) \text{ for each normalizer } n, \quad \sum_i w_i

so every normalizer is applied once, in ``compute()``: to the totals (micro average) and to the per-example sums
divided by the (weighted) example count (macro average). The per-example rule (statistics → rows, the empty-structure
rule included) is :func:`metametric_jax.normalizer.normalized_rows`, shared by the host (NumPy) and device (jnp) paths.

Laws (tested for every accumulator the library ships, see :mod:`metametric_jax.testing`):

* ``empty()`` is the identity of ``merge``; ``merge`` is associative and commutative;
* stacking states along a new leading axis and calling ``reduce()`` equals merging them one by one;
* one batch equals the same data in many batches;
* ``merge``, ``reduce`` and ``compute`` run under ``jax.jit``, and a jitted merge loop traces once.

Totals are compensated float32 pairs (see :mod:`metametric_jax._compensated`): integer counts stay exact far beyond
2**24 without ``jax_enable_x64``. A class's configuration and how a batch's statistics become rows and named sums are
in :mod:`metametric_jax.metric_config`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import serialization, struct

from metametric_jax import _compensated as comp
from metametric_jax._portable import MetricType
from metametric_jax.inputs import check_batch, validate_stats, validate_weights
from metametric_jax.metric_config import (
    KNOWN_SIGNATURES,
    MICRO,
    MIXED,
    MetricConfig,
    from_state_dict,
    host_fold,
    host_merged_signature,
    host_named_sums,
    host_pair,
    host_signature,
    merged_signature,
    named_sums,
    pack,
    stats_rows,
    to_state_dict,
)
from metametric_jax.normalizer import normalize_pair, safe_divide

__all__ = ["Metric", "MetricConfig", "merged_signature"]

M = TypeVar("M", bound="Metric")


class Metric(struct.PyTreeNode, metaclass=MetricType):
    r"""Base class of accumulators built from a similarity or a statistics function (see module docstring).

    Attributes:
        micro: ``{"xy", "xx", "yy"}``: the weighted totals of :math:`\phi(P,R)`, :math:`\phi(P,P)`,
            :math:`\phi(R,R)`.
        macro: ``{figure: sum}``: the weighted sum of per-example normalized scores, one per reported normalizer
            (``overlap`` for ``none``).
        count: the weighted number of examples.
        tally: ``{name: sum}``: the weighted sums of the metric's tallies (``config.tallies``; empty for most
            metrics), such as Smatch's ``not_optimal`` (pairs whose solver budget ran out).
        signature: int32 identifying the metric's configuration; a state restored into a metric of another
            configuration is refused.
        config: static configuration (not a pytree leaf): name, normalizers, ``zero_division``, ``empty_score``.

    Every sum is a compensated float32 pair, shape ``(..., 2)`` (see :mod:`metametric_jax._compensated`).

    Classes and states pickle: a class by reference (:mod:`metametric_jax._portable`), a state as its class and its
    sums (NumPy), so a state made in another process merges with this process's states.
    """

    micro: dict[str, jax.Array]
    macro: dict[str, jax.Array]
    count: jax.Array
    tally: dict[str, jax.Array]
    signature: jax.Array
    config: MetricConfig = struct.field(pytree_node=False)

    #: the class's configuration (also each state's ``config``)
    metric_config: ClassVar[MetricConfig]

    # ------------------------------------------------------------------ classes
    @classmethod
    def _subclass(
        cls: type[M], config: MetricConfig, doc: str | None = None, *, class_name: str | None = None
    ) -> type[M]:
        """A new metric class with this static configuration (one class per configuration)."""
        name = class_name or "".join(p[:1].upper() + p[1:] for p in config.name.replace("-", "_").split("_"))
        name = name or "Metric"
        if not name.endswith("Metric"):
            name += "Metric"
        new = type(name, (cls,), {"metric_config": config, "__doc__": doc or cls.__doc__, "__module__": cls.__module__})
        serialization.register_serialization_state(new, to_state_dict, from_state_dict, override=True)
        return new  # type: ignore[return-value]

    @classmethod
    def _nested_similarity(cls) -> Any:
        """The similarity this metric stands for inside another structure (its source, normalized as declared)."""
        cfg = cls.metric_config
        source = cfg.source
        if source is None or not hasattr(source, "gram"):
            raise TypeError(f"Metric {cfg.name} was not built from a similarity and cannot be nested.")
        if cfg.normalizer.is_identity:
            return source
        from metametric_jax.similarity import Normalized

        return Normalized(source, cfg.normalizer, cfg.zero_division, cfg.empty_score)

    # ------------------------------------------------------------------ construction (host side)
    @classmethod
    def empty(cls: type[M]) -> M:
        """The identity of ``merge``: all sums zero (float32, so it never causes a retrace)."""
        cfg = cls.metric_config
        zeros = np.zeros((4 + len(cfg.reported) + len(cfg.tallies), 2), np.float32)
        zeros.flags.writeable = False
        # device leaves (a restore target, as orbax formats them), sent in one transfer: no program to compile
        sums, signature = jax.device_put((host_named_sums(cfg, zeros), host_signature(cfg, ())))
        state = cls(**sums, signature=signature, config=cfg)
        object.__setattr__(state, "_host", (zeros, host_signature(cfg, ())))  # merges on the host all the same
        return state

    @classmethod
    def example_rows(cls, stats: Any) -> np.ndarray:
        """Each example's contribution to every sum, float64 ``(n, 3 + K + 1 + T)``: (xy, xx, yy), K scores, 1, tallies.

        A state's sums are the (weighted) sum of these rows over the examples; :meth:`_from_totals` builds a state from
        such a sum. The bootstrap (:mod:`metametric_jax.significance`) sums the same rows under many weightings.
        """
        cfg = cls.metric_config
        if isinstance(stats, jax.Array):  # on the device (float32; not validated)
            return stats_rows(cfg, stats.astype(jnp.float32))
        return stats_rows(cfg, cls._checked_stats(stats))

    @classmethod
    def _checked_stats(cls, stats: Any) -> np.ndarray:
        """Statistics validated as float64 ``(n, 3 + T)`` (tally columns added as 0 to ``(n, 3)`` statistics)."""
        cfg = cls.metric_config
        return validate_stats(stats, cfg.name, self_bounded=cfg.self_bounded, tallies=len(cfg.tallies))

    @classmethod
    def _sums_from_totals(cls, totals: Any) -> dict[str, Any]:
        """Named sums (compensated pairs) from summed :meth:`example_rows` ``(..., 3 + K + 1 + T)``.

        Float64 NumPy totals are split exactly; JAX arrays (float32) become pairs with a zero low part.
        """
        cfg = cls.metric_config
        if isinstance(totals, jax.Array):
            totals = totals.astype(jnp.float32)
            return named_sums(cfg, jnp.stack([totals, jnp.zeros_like(totals)], axis=-1))
        return named_sums(cfg, comp.split(np.asarray(totals, np.float64)))

    @classmethod
    def _from_totals(cls: type[M], totals: Any) -> M:
        """A state from summed :meth:`example_rows` ``(..., 3 + K + 1 + T)`` (leading axes stay stacked)."""
        return cls._from_sums(cls._sums_from_totals(totals))

    @classmethod
    def _host_packed(cls, stats: Any, weights: Any = None) -> np.ndarray:
        """The state's sums packed as float32 ``(3 + K + 1 + T, 2)`` (see :meth:`_pack`) from per-example statistics."""
        cfg = cls.metric_config
        stats = cls._checked_stats(stats)
        rows = stats_rows(cfg, stats)
        w = validate_weights(weights, stats.shape[0], cfg.name)
        totals = rows.sum(axis=0) if w is None else (rows * w[:, None]).sum(axis=0)
        return comp.split(totals)

    @classmethod
    def _host_sums(cls, stats: Any, weights: Any = None) -> dict[str, Any]:
        """The state's sums (named float32 pairs, NumPy) from per-example statistics ``(n, 3)``, on the host."""
        return named_sums(cls.metric_config, cls._host_packed(stats, weights))

    @classmethod
    def _device_sums(cls, stats: Any, weights: Any = None) -> dict[str, Any]:
        """The state's sums from per-example statistics in jnp (jittable; the device-native path).

        Weights are not validated on the device: they must be finite and non-negative.
        """
        cfg = cls.metric_config
        stats = jnp.asarray(stats, jnp.float32)
        n = stats.shape[0]
        rows = stats_rows(cfg, stats)
        if weights is not None:
            rows = rows * jnp.broadcast_to(jnp.asarray(weights, jnp.float32), (n,))[:, None]
        return named_sums(cfg, comp.tree_sum(jnp.stack([rows, jnp.zeros_like(rows)], axis=-1)))

    @classmethod
    def from_stats(cls: type[M], stats: Any, weights: Any = None) -> M:
        """The state of a batch given its per-example statistics, an ``(n, 3)`` array of (xy, xx, yy).

        A metric with tallies also takes ``(n, 3 + T)`` statistics, the tallies in the last columns (as its
        :meth:`batch_stats` returns them); ``(n, 3)`` statistics count no tally.

        NumPy (or lists) are summed on the host and sent to the device once; JAX arrays (or tracers) are summed
        on the device by the same rule. ``weights`` (shape ``(n,)``, non-negative) scale each example's contribution
        to every sum, the example count included; weight 0 drops an example (padding).

        Raises:
            ValueError: on statistics no similarity can produce (negative, NaN, infinite; for a metric of a
                self-bounded similarity, an overlap above a self-overlap) or a wrong shape.
        """
        if isinstance(stats, jax.Array):
            return cls._from_sums(cls._device_sums(stats, weights))
        return cls._host_state(cls._host_packed(stats, weights))  # a new array: no copy

    @classmethod
    def _sums_shape(cls) -> dict[str, Any]:
        """The structure of :meth:`_host_sums` as ``jax.ShapeDtypeStruct`` leaves (the callback's result shape)."""
        cfg = cls.metric_config
        pair = jax.ShapeDtypeStruct((2,), jnp.float32)
        return {
            "micro": {k: pair for k in MICRO},
            "macro": {k: pair for k in cfg.macro_names},
            "count": pair,
            "tally": {k: pair for k in cfg.tallies},
        }

    @classmethod
    def _from_sums(cls: type[M], sums: Mapping[str, Any]) -> M:
        """A state from named sums (as :meth:`_host_sums` returns; NumPy, JAX arrays or tracers).

        NumPy sums are packed into one array and sent to the device in one transfer, then split into the named
        leaves by one jitted call.
        """
        if all(isinstance(x, np.ndarray) for x in jax.tree.leaves(sums)):
            return cls._from_packed(cls._pack(sums))
        return cls._unpack(None, sums)

    @classmethod
    def _pack(cls, sums: Mapping[str, Any]) -> np.ndarray:
        """Named NumPy sums as one float32 array ``(..., 3 + K + 1 + T, 2)`` (rows: micro, macro, count, tally)."""
        return pack(cls.metric_config, sums)

    @classmethod
    def _from_packed(cls: type[M], packed: Any) -> M:
        """A state from :meth:`_pack`'s array: NumPy stays on the host (:meth:`_host_state`), jnp is split by jnp."""
        if isinstance(packed, jax.core.Tracer):
            return cls._unpack(packed)
        if isinstance(packed, np.ndarray):
            return cls._host_state(np.array(packed, np.float32))  # a copy: the state's leaves view it
        return _jitted_unpack(cls, packed)

    @classmethod
    def _host_state(cls: type[M], packed: np.ndarray, signature: Any = None, exact: bool | None = None) -> M:
        """A state whose leaves are NumPy views of ``packed`` (float32, owned by the state, made read-only).

        Such states merge on the host while their values give the jitted merge's bits (``exact``, by default
        :func:`metametric_jax._compensated.host_exact`); ``jit``, ``compute`` and a merge with a device state take
        NumPy leaves as they take JAX arrays.
        """
        cfg = cls.metric_config
        packed.flags.writeable = False
        sig: Any = host_signature(cfg, packed.shape[:-2]) if signature is None else signature
        state = cls.__new__(cls)  # the sums' leaves are made on first use (a merge of two host states needs none)
        exact = comp.host_exact(packed) if exact is None else exact
        state.__dict__.update(signature=sig, config=cfg, _packed=packed, _host=(packed, sig) if exact else None)
        return state

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """The sums' leaves of a host state (:meth:`_host_state`), made on first use as views of its array."""
            packed = self.__dict__.get("_packed")
            if packed is None or name not in ("micro", "macro", "count", "tally"):
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            sums = host_named_sums(self.__dict__["config"], packed)
            self.__dict__.update(sums)
            return sums[name]

    def _host_pair(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The sums packed (:meth:`_pack`) and the signature in NumPy, where a host merge gives the jitted bits."""
        if "_host" in self.__dict__:
            return self.__dict__["_host"]
        return host_pair(self.config, self._sums(), self.signature)

    @classmethod
    def _unpack(cls: type[M], packed: Any, sums: Mapping[str, Any] | None = None) -> M:
        """A state from a packed array (jnp slicing) or from named sums (``packed`` None), signature added."""
        cfg = cls.metric_config
        if sums is None:
            sums = named_sums(cfg, packed)
        count = jnp.asarray(sums["count"])
        return cls(
            micro={k: jnp.asarray(sums["micro"][k]) for k in MICRO},
            macro={k: jnp.asarray(sums["macro"][k]) for k in cfg.macro_names},
            count=count,
            tally={k: jnp.asarray(sums["tally"][k]) if "tally" in sums else jnp.zeros_like(count) for k in cfg.tallies},
            signature=jnp.full(count.shape[:-1], cfg.signature, jnp.int32),
            config=cfg,
        )

    @classmethod
    def batch_stats(cls, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        """Per-example statistics ``(n, 3 + T)`` of a batch of Python structures (host side): (xy, xx, yy), tallies."""
        cfg = cls.metric_config
        check_batch(predictions, references, cfg.name)
        if cfg.batch_stats is None:
            raise TypeError(f"{cfg.name} has no statistics function; build its states with from_stats().")
        stats = np.asarray(cfg.batch_stats(predictions, references), dtype=np.float64)
        width = 3 + len(cfg.tallies) if stats.ndim == 2 and stats.shape[1] > 3 else 3
        return stats.reshape(-1, width)

    @classmethod
    def _host_batch_sums(cls, predictions: Sequence[Any], references: Sequence[Any], weights: Any = None) -> Any:
        """The sums of a batch of Python structures, on the host (what the callback path computes)."""
        return cls._host_sums(cls.batch_stats(predictions, references), weights)

    @classmethod
    def from_model_output(
        cls: type[M],
        predictions: Any,
        references: Any,
        weights: Any = None,
        *,
        decode: Callable[[Any], Any] | None = None,
        decode_references: Callable[[Any], Any] | None = None,
    ) -> M:
        """The state of one batch.

        Args:
            predictions: a sequence of predicted structures, one per example; or, with ``decode``, arrays (or a
                pytree of arrays) with a leading batch axis.
            references: the reference structures, same length (or arrays, with ``decode``).
            weights: optional non-negative per-example weights (shape ``(n,)``).
            decode: host function mapping one example's slice of the arrays (NumPy) to a structure. With it this
                method may be called inside ``jax.jit`` / ``pmap`` / ``shard_map``: matching runs on the host via
                ``jax.pure_callback`` (see :mod:`metametric_jax.jit`).
            decode_references: a separate decode function for the references (default: ``decode``).

        Raises:
            ValueError: if predictions and references (or weights) differ in length.
        """
        if decode is not None or decode_references is not None:
            from metametric_jax.jit import callback_state

            return callback_state(cls, predictions, references, weights, decode, decode_references)
        return cls.from_stats(cls.batch_stats(predictions, references), weights)

    @classmethod
    def from_records(cls: type[M], encoded: Any, weights: Any = None) -> M:
        """The device-native state of a batch of encoded records (jittable; see :mod:`metametric_jax.device`).

        ``encoded`` is what :func:`metametric_jax.device.encode_pairs` returns (or a ``RecordPair`` built on the
        device with the same vocabulary).
        """
        from metametric_jax.device import device_stats

        return cls.from_stats(device_stats(cls, encoded), weights)

    # ------------------------------------------------------------------ one pair
    @classmethod
    def stats(cls, prediction: Any, reference: Any) -> tuple[float, float, float]:
        """(φ(P,R), φ(P,P), φ(R,R)) of one pair."""
        xy, xx, yy = cls.batch_stats([prediction], [reference])[0][:3]
        return float(xy), float(xx), float(yy)

    @classmethod
    def score(cls, prediction: Any, reference: Any) -> float:
        """The declared normalizer applied to one pair (two empty structures score ``empty_score``)."""
        cfg = cls.metric_config
        return normalize_pair(cfg.normalizer, *cls.stats(prediction, reference), cfg.zero_division, cfg.empty_score)

    @classmethod
    def explain(cls, prediction: Any, reference: Any) -> Any:
        """The matching behind ``score``: which sub-structures were aligned to which, with paths and scores."""
        source = cls.metric_config.source
        if source is None or not hasattr(source, "explain"):
            raise TypeError(f"{cls.metric_config.name} was not built from a similarity; it has no matching to explain.")
        return source.explain(prediction, reference)

    # ------------------------------------------------------------------ the laws (pure jnp)
    def _sums(self) -> dict[str, Any]:
        return {"micro": self.micro, "macro": self.macro, "count": self.count, "tally": self.tally}

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """The sums and signature as NumPy (the class, pickled by reference, brings the configuration)."""
        if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(self._sums())):
            raise TypeError(f"{self.config.name}: a traced state (inside jit) cannot be pickled.")
        out = {k: jax.tree.map(np.asarray, v) for k, v in self._sums().items()}
        out["signature"] = np.asarray(self.signature)
        return out

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        cfg = type(self).metric_config
        for key in ("micro", "macro", "count", "tally", "signature"):
            object.__setattr__(self, key, jax.tree.map(jnp.asarray, state[key]))
        object.__setattr__(self, "config", cfg)

    def _check_compatible(self, other: Any) -> None:
        if not isinstance(other, Metric):
            raise TypeError(f"{self.config.name}.merge expects a metric state; found {type(other).__name__}.")
        if other.config is not self.config:
            hint = (
                " They have the same name but are different metric classes: was the metric created twice (e.g. a "
                "decorator or dsl call run again)? Build both states from one class."
                if other.config.name == self.config.name
                else ""
            )
            raise TypeError(
                f"Cannot merge a state of {other.config!r} into a state of {self.config!r}: they are different "
                f"metrics (or configurations).{hint}"
            )
        a, b = self.count.shape, other.count.shape
        if a != b:
            raise ValueError(
                f"{self.config.name}.merge: state shapes differ ({a} vs {b}); call reduce() on stacked states first."
            )

    def _check_signature(self) -> None:
        """Refuse a state whose signature is another metric's (a checkpoint restored into the wrong metric)."""
        sig = self.signature
        if isinstance(sig, jax.core.Tracer):
            return
        found = np.unique(np.asarray(sig))
        mine = self.config.signature
        for value in found.tolist():
            if value == MIXED:
                raise ValueError(
                    f"This state of {self.config.name!r} merges sums of different metrics or configurations: a state "
                    "restored from another metric's checkpoint was merged into it."
                )
            if value != mine:
                other = KNOWN_SIGNATURES.get(int(value), "an unknown metric")
                raise ValueError(
                    f"This state of {self.config.name!r} holds the sums of {other!r} (signature {value}, expected "
                    f"{mine}): it was restored from a checkpoint of a different metric or configuration."
                )

    def merge(self: M, other: M) -> M:
        """Leafwise compensated addition; associative and commutative, ``empty()`` is its identity."""
        a = self.__dict__.get("_host")
        b = other.__dict__.get("_host") if isinstance(other, Metric) else None
        if a is None or b is None or other.config is not self.config or a[0].shape != b[0].shape:
            self._check_compatible(other)
            if isinstance(self.count, jax.core.Tracer) or isinstance(other.count, jax.core.Tracer):
                return self._merge_traced(other)
            a, b = self._host_pair(), other._host_pair()
            if a is None or b is None:
                return _jitted_merge(self, other)  # one dispatch for every leaf
        total, exact = comp.add_host(a[0], b[0])  # both on the host, values that give the jitted merge's bits
        return type(self)._host_state(total, host_merged_signature(a[1], b[1]), exact)

    def _merge_traced(self: M, other: M) -> M:
        """``merge`` without its checks (inside ``jit``)."""
        sums = jax.tree.map(comp.add_traced, self._sums(), other._sums())
        return self.replace(**sums, signature=merged_signature(self.signature, other.signature))

    def reduce(self: M) -> M:
        """Merge states stacked along the leading axis (CLU's contract: ``all_gather(state).reduce()``).

        Equal to merging the stacked states one by one, in order (a sequential ``lax.scan``).
        """
        if self.count.ndim == 1:
            return self
        if not isinstance(self.count, jax.core.Tracer):
            # folded on the host, or one jitted program: an eager lax.scan compiles its body at every call
            folded = self._host_reduce()
            return _jitted_reduce(self) if folded is None else folded
        return self._reduce_traced()

    def _reduce_traced(self: M) -> M:
        """``reduce`` of states stacked along the leading axis, in jnp (a sequential ``lax.scan``)."""
        stacked = jax.tree.map(lambda x: x.reshape((-1, 2)), self._sums())
        sig = jnp.reshape(self.signature, (-1,))
        if sig.shape[0] == 0:
            return self.__class__.empty()

        def body(carry: Any, x: Any) -> tuple[Any, None]:
            return jax.tree.map(comp.add, carry, x), None

        # start from the first state (not from zeros) so the carry varies across devices like the states do
        first = jax.tree.map(lambda x: x[0], stacked)
        total, _ = jax.lax.scan(body, first, jax.tree.map(lambda x: x[1:], stacked))
        return self.replace(**total, signature=jnp.where(jnp.all(sig == sig[0]), sig[0], MIXED))

    def _host_reduce(self: M) -> M | None:
        """``reduce()`` folded on the host (:func:`host_fold`) where that gives the jitted bits, else ``None``."""
        pair = self.__dict__.get("_host")
        if pair is None:  # device leaves (or a host state whose values a host merge would round otherwise)
            pair = host_pair(self.config, jax.tree.map(np.asarray, self._sums()), np.asarray(self.signature))
        if pair is None or pair[1].size == 0:
            return None if pair is None else self.__class__.empty()
        folded = host_fold(*pair)
        return None if folded is None else type(self)._host_state(*folded)

    def psum(self: M, axis_name: Any) -> M:
        """Merge across a named device axis with ``lax.psum`` (inside ``pmap`` / ``shard_map``).

        Exact while each per-device total's high part is an integer below 2**24; ``all_gather(...).reduce()`` is
        exact always.
        """

        def one(pair: jax.Array) -> jax.Array:
            hi = jax.lax.psum(pair[..., 0], axis_name)
            lo = jax.lax.psum(pair[..., 1], axis_name)
            total = hi + lo
            return jnp.stack([total, lo - (total - hi)], -1)

        # pmax / pmin make the signature visible to shard_map's replication check; a mixture is marked MIXED
        high, low = jax.lax.pmax(self.signature, axis_name), jax.lax.pmin(self.signature, axis_name)
        return self.replace(**jax.tree.map(one, self._sums()), signature=merged_signature(high, low))

    def _check_reduced(self, what: str) -> None:
        """Refuse a stacked state, or one restored from another metric's checkpoint (before ``compute``)."""
        if self.count.ndim != 1:
            raise ValueError(
                f"{self.config.name}.{what}: the state is still stacked (count shape {self.count.shape}); "
                "call reduce() first."
            )
        if set(self.macro) != set(self.config.macro_names):
            raise ValueError(
                f"{self.config.name}: the state's macro sums are {sorted(self.macro)}, this metric keeps "
                f"{sorted(self.config.macro_names)}: was it restored from a checkpoint of a different metric?"
            )
        self._check_signature()

    def totals(self) -> dict[str, Any]:
        """The exact totals of a (reduced) state, read on the host in float64.

        Returns:
            ``{"xy", "xx", "yy", "count": float, "macro": {figure: float}}``: the overlap, predicted and reference
            self-overlaps, the weighted example count and the sums of per-example normalized scores; with
            ``"tally": {name: float}`` for a metric with tallies.
        """
        self._check_reduced("totals")

        def f64(pair: Any) -> float:
            hi, lo = np.asarray(pair, np.float64)
            return float(hi + lo)

        out: dict[str, Any] = {k: f64(self.micro[k]) for k in MICRO}
        out["count"] = f64(self.count)
        out["macro"] = {k: f64(v) for k, v in self.macro.items()}
        if self.config.tallies:
            out["tally"] = {k: f64(v) for k, v in self.tally.items()}
        return out

    def compute(self) -> dict[str, jax.Array]:
        """Micro figures from the totals and ``macro_`` figures from the per-example sums.

        Returns:
            ``{"overlap", "precision", "recall", "f1", "jaccard", [declared f-beta or custom], and the same names
            prefixed "macro_"}`` as 0-d float arrays; and each tally's sum by its name (``not_optimal`` for Smatch).
        """
        self._check_reduced("compute")
        if not isinstance(self.count, jax.core.Tracer):
            return _jitted_compute(self)  # one dispatch instead of a dozen eager ops
        return self._compute_traced()

    def _compute_traced(self) -> dict[str, jax.Array]:
        """``compute`` without its eager checks (inside ``jit`` / ``pmap``; the state must be reduced)."""
        cfg = self.config
        xy, xx, yy = (comp.value(self.micro[k]) for k in MICRO)
        count = comp.value(self.count)
        out: dict[str, jax.Array] = {"overlap": xy}
        for n in cfg.reported:
            if not n.is_identity:
                out[n.name] = jnp.asarray(n(xy, xx, yy, cfg.zero_division))
        for key in cfg.macro_names:
            out[f"macro_{key}"] = safe_divide(comp.value(self.macro[key]), count, cfg.zero_division)
        for key in cfg.tallies:
            out[key] = comp.value(self.tally[key])
        return out


# one program (and one dispatch) for all of a state's leaves
_jitted_compute = jax.jit(lambda state: state._compute_traced())
_jitted_merge = jax.jit(lambda a, b: a._merge_traced(b))
_jitted_reduce = jax.jit(lambda state: state._reduce_traced())
_jitted_unpack = jax.jit(lambda cls, packed: cls._unpack(packed), static_argnums=0)
