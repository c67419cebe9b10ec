r"""JAX accumulators: every derived metric is an immutable ``flax.struct`` state with the CLU / metrax contract.

A metric class ``M`` (for example ``D.metric``) has

* ``M.empty()`` — the identity of ``merge``;
* ``M.from_model_output(predictions, references, weights=None)`` — the state of one batch (host side: matching runs
  in Python / SciPy, per-example statistics are summed in NumPy and sent to the device once per batch);
* ``state.merge(other)``, ``state.reduce()``, ``state.compute()`` — pure ``jax.numpy``, jittable.

The state holds, for examples :math:`i` with weights :math:`w_i` (1 by default),

.. math::

    \sum_i w_i \phi(P_i, R_i), \quad \sum_i w_i \phi(P_i, P_i), \quad \sum_i w_i \phi(R_i, R_i),
    \quad \sum_i w_i\, n(P_i, R_i) \text{ for each normalizer } n, \quad \sum_i w_i

so every normalizer is applied once, in ``compute()``: to the totals (micro average) and to the per-example sums
divided by the (weighted) example count (macro average).

Laws (tested for every accumulator the library ships, see :mod:`metametric_jax.testing`):

* ``empty()`` is the identity of ``merge``; ``merge`` is associative and commutative;
* stacking states along a new leading axis and calling ``reduce()`` equals merging them one by one;
* one batch equals the same data in many batches;
* ``merge``, ``reduce`` and ``compute`` run under ``jax.jit``, and a jitted merge loop traces once.

Totals are compensated float32 pairs (see :mod:`metametric_jax._compensated`): integer counts stay exact far beyond
2**24 without ``jax_enable_x64``.

Attributes:
    sums: float32 array of shape ``(3 + K + 1, 2)``: the rows are the micro totals (overlap, predicted
        self-overlap, reference self-overlap), then the macro sums of the ``K`` reported normalizers, then the
        example count; the last axis is the (hi, lo) compensated pair.
    config: static configuration (not a pytree leaf): name, normalizers, ``zero_division``, ``empty_score``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from metametric_jax import _compensated as comp
from metametric_jax.normalizer import F1, JACCARD, NONE, PRECISION, RECALL, Normalizer, parse_normalizer, safe_divide

__all__ = [
    "Metric",
    "MetricConfig",
    "make_metric",
    "stats_metric",
    "normalized_scores",
]

M = TypeVar("M", bound="Metric")

_STANDARD = (PRECISION, RECALL, F1, JACCARD)


class _Plan(NamedTuple):
    identity: list[int]
    linear: list[int]
    other: list[int]
    normalized: list[int]
    num: np.ndarray
    den: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class MetricConfig:
    r"""Static configuration of a metric class (compared by identity: one config per metric class).

    Attributes:
        name: the metric's name (used in messages).
        normalizer: the declared normalizer, used by ``score``.
        reported: the normalizers reported by ``compute`` (micro and ``macro_``); ``none`` is reported as
            ``overlap``.
        zero_division: value of any 0/0 other than two empty structures.
        empty_score: per-example normalized score of two empty structures (self-overlaps both 0).
        batch_stats: host function ``(predictions, references) -> float64 array (n, 3)`` of per-example
            :math:`\phi(P,R), \phi(P,P), \phi(R,R)`.
        source: the similarity (or function) the metric was built from, for ``explain`` and messages.
    """

    name: str
    normalizer: Normalizer
    reported: tuple[Normalizer, ...]
    zero_division: float
    empty_score: float
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], np.ndarray] | None
    source: Any = None

    @property
    def n_rows(self) -> int:
        """Rows of the ``sums`` array."""
        return 3 + len(self.reported) + 1

    @functools.cached_property
    def plan(self) -> _Plan:
        """Which ``sums`` rows come from which normalizer, precomputed for :meth:`Metric.host_sums`."""
        identity, linear, other, num, den = [], [], [], [], []
        for k, n in enumerate(self.reported, start=3):
            if n.is_identity:
                identity.append(k)
            elif n.builtin and n.linear is not None:
                linear.append(k)
                num.append(n.linear[0])
                den.append(n.linear[1])
            else:
                other.append(k)
        normalized = linear + other
        return _Plan(
            identity, linear, other, sorted(normalized), np.array(num).reshape(-1, 3), np.array(den).reshape(-1, 3)
        )

    def __repr__(self) -> str:
        return f"MetricConfig({self.name!r}, normalizer={self.normalizer.name!r})"


def normalized_scores(
    normalizer: Normalizer, stats: np.ndarray, zero_division: float = 0.0, empty_score: float = 1.0
) -> np.ndarray:
    """Per-example normalized scores from an ``(n, 3)`` array of (xy, xx, yy); two empty structures get ``empty_score``.

    >>> normalized_scores(F1, np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])).tolist()
    [0.4, 1.0]
    """
    stats = np.asarray(stats, dtype=np.float64).reshape(-1, 3)
    xy, xx, yy = stats[:, 0], stats[:, 1], stats[:, 2]
    if normalizer.builtin and normalizer.linear is not None:  # (a·s) / (b·s), as Metric.host_sums computes it
        num = np.einsum("j,ij->i", np.asarray(normalizer.linear[0]), stats)
        den = np.einsum("j,ij->i", np.asarray(normalizer.linear[1]), stats)
        out = np.divide(num, den, out=np.full_like(num, zero_division), where=den != 0)
    else:
        out = np.asarray(normalizer(xy, xx, yy, zero_division), dtype=np.float64)
    if normalizer.is_identity:
        return out
    both_empty = (xx == 0) & (yy == 0)
    return np.where(both_empty, empty_score, out)


def _validate_stats(stats: Any, name: str) -> np.ndarray:
    arr = np.asarray(stats, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(
            f"{name}: per-example statistics must have shape (n, 3) (overlap, predicted self-overlap, reference "
            f"self-overlap); found shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = np.argwhere(~np.isfinite(arr) | (arr < 0))[0]
        raise ValueError(
            f"{name}: similarities must be finite and non-negative; example {bad[0]} has "
            f"{['overlap', 'predicted self-overlap', 'reference self-overlap'][bad[1]]} = {arr[bad[0], bad[1]]!r}."
        )
    return arr


def _validate_weights(weights: Any, n: int, name: str) -> np.ndarray:
    if weights is None:
        return np.ones(n, dtype=np.float64)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: weights must be non-negative numbers, one per example; found {weights!r}.") from None
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"{name}: weights must have shape ({n},), one per example; found shape {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{name}: weights must be finite and non-negative; found {w[~np.isfinite(w) | (w < 0)][:5]}.")
    return w


def _check_lengths(predictions: Sequence[Any], references: Sequence[Any], name: str) -> None:
    try:
        lp, lr = len(predictions), len(references)
    except TypeError:
        raise TypeError(
            f"{name}.from_model_output expects sequences of predictions and references (one per example); found "
            f"{type(predictions).__name__} and {type(references).__name__}."
        ) from None
    if lp != lr:
        raise ValueError(
            f"{name}.from_model_output: predictions and references must have the same length; found {lp} "
            f"predictions and {lr} references."
        )


class Metric(struct.PyTreeNode):
    """Base class of accumulators built from a similarity or a statistics function (see module docstring)."""

    sums: jax.Array
    config: MetricConfig = struct.field(pytree_node=False)

    _config: ClassVar[MetricConfig]

    # ------------------------------------------------------------------ construction (host side)
    @classmethod
    def empty(cls: type[M]) -> M:
        """The identity of ``merge``: all sums zero (float32, so it never causes a retrace)."""
        return cls(sums=jnp.zeros((cls._config.n_rows, 2), jnp.float32), config=cls._config)

    @classmethod
    def host_sums(cls, stats: Any, weights: Any = None) -> np.ndarray:
        """The state's ``sums`` (float32 ``(rows, 2)``) from per-example statistics, on the host, in NumPy."""
        cfg = cls._config
        stats = _validate_stats(stats, cfg.name)
        n = stats.shape[0]
        per = np.empty((cfg.n_rows, n), dtype=np.float64)  # one row per sum, one column per example
        per[:3] = stats.T
        plan = cfg.plan
        if plan.identity:
            per[plan.identity] = per[0]
        if plan.linear:  # every built-in ratio (a·s)/(b·s) in one vectorized division
            num = np.einsum("kj,ij->ki", plan.num, stats)
            den = np.einsum("kj,ij->ki", plan.den, stats)
            per[plan.linear] = np.divide(num, den, out=np.full_like(num, cfg.zero_division), where=den != 0)
        xy, xx, yy = per[0], per[1], per[2]
        for k in plan.other:
            per[k] = np.asarray(cfg.reported[k - 3](xy, xx, yy, cfg.zero_division), dtype=np.float64)
        if plan.normalized:
            both_empty = (xx == 0) & (yy == 0)
            if both_empty.any():
                block = per[plan.normalized]
                block[:, both_empty] = cfg.empty_score
                per[plan.normalized] = block
        per[-1] = 1.0
        if weights is None:
            rows = per.sum(axis=1)
        else:
            rows = (per * _validate_weights(weights, n, cfg.name)).sum(axis=1)  # not BLAS: no thread pool stalls
        return comp.split(rows)

    @classmethod
    def from_stats(cls: type[M], stats: Any, weights: Any = None) -> M:
        """The state of a batch given its per-example statistics, an ``(n, 3)`` array of (xy, xx, yy).

        One host→device transfer. ``weights`` (shape ``(n,)``, non-negative) scale each example's contribution to
        every sum, the example count included; weight 0 drops an example (padding).
        """
        return cls.from_sums(cls.host_sums(stats, weights))

    @classmethod
    def host_batch_sums(cls, predictions: Sequence[Any], references: Sequence[Any], weights: Any = None) -> np.ndarray:
        """The ``sums`` of a batch of Python structures, on the host (what the callback path computes)."""
        return cls.host_sums(cls.batch_stats(predictions, references), weights)

    @classmethod
    def sums_shape(cls) -> tuple[int, int]:
        """The fixed shape of :meth:`host_batch_sums` (the callback's result shape)."""
        return (cls._config.n_rows, 2)

    @classmethod
    def from_sums(cls: type[M], sums: Any) -> M:
        """A state from a ``sums`` array of shape :meth:`sums_shape` (NumPy, JAX array or tracer)."""
        return cls(sums=jnp.asarray(sums), config=cls._config)

    @classmethod
    def batch_stats(cls, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        """Per-example statistics ``(n, 3)`` of a batch of Python structures (host side)."""
        cfg = cls._config
        _check_lengths(predictions, references, cfg.name)
        if cfg.batch_stats is None:
            raise TypeError(f"{cfg.name} has no statistics function; build its states with from_stats().")
        return np.asarray(cfg.batch_stats(predictions, references), dtype=np.float64).reshape(-1, 3)

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
        stats = cls.batch_stats(predictions, references)
        return cls.from_stats(stats, weights)

    @classmethod
    def from_records(
        cls: type[M], pred_records: Any, pred_mask: Any, ref_records: Any, ref_mask: Any, weights: Any = None
    ) -> M:
        """The device-native state of a batch of integer records (jittable; see :mod:`metametric_jax.device`)."""
        from metametric_jax.device import device_state

        return device_state(cls, pred_records, pred_mask, ref_records, ref_mask, weights)

    # ------------------------------------------------------------------ one pair
    @classmethod
    def stats(cls, prediction: Any, reference: Any) -> tuple[float, float, float]:
        """(φ(P,R), φ(P,P), φ(R,R)) of one pair."""
        xy, xx, yy = cls.batch_stats([prediction], [reference])[0]
        return float(xy), float(xx), float(yy)

    @classmethod
    def score(cls, prediction: Any, reference: Any) -> float:
        """The declared normalizer applied to one pair (two empty structures score ``empty_score``)."""
        cfg = cls._config
        xy, xx, yy = cls.stats(prediction, reference)
        if not cfg.normalizer.is_identity and xx == 0 and yy == 0:
            return cfg.empty_score
        return float(cfg.normalizer(xy, xx, yy, cfg.zero_division))

    @classmethod
    def explain(cls, prediction: Any, reference: Any) -> Any:
        """The matching behind ``score``: which sub-structures were aligned to which, with paths and scores."""
        source = cls._config.source
        if source is None or not hasattr(source, "explain"):
            raise TypeError(f"{cls._config.name} was not built from a similarity; it has no matching to explain.")
        return source.explain(prediction, reference)

    # ------------------------------------------------------------------ the laws (pure jnp)
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
        self._check_rows()
        other._check_rows()
        if other.sums.shape != self.sums.shape:
            raise ValueError(
                f"{self.config.name}.merge: state shapes differ ({self.sums.shape} vs {other.sums.shape}); "
                "call reduce() on stacked states first."
            )

    def _check_rows(self) -> None:
        rows = self.config.n_rows
        if tuple(self.sums.shape[-2:]) != (rows, 2):
            raise ValueError(
                f"{self.config.name}: the state's sums have shape {tuple(self.sums.shape)}, but this metric keeps "
                f"({rows}, 2) (plus any stacked axes); was it restored from a checkpoint of a different metric?"
            )

    def merge(self: M, other: M) -> M:
        """Leafwise compensated addition; associative and commutative, ``empty()`` is its identity."""
        self._check_compatible(other)
        return self.replace(sums=comp.add(self.sums, other.sums))

    def reduce(self: M) -> M:
        """Merge states stacked along the leading axis (CLU's contract: ``all_gather(state).reduce()``)."""
        if self.sums.ndim == 2:
            return self
        sums = self.sums.reshape((-1,) + self.sums.shape[-2:])

        def body(carry: jax.Array, x: jax.Array) -> tuple[jax.Array, None]:
            return comp._add(carry, x), None

        if sums.shape[0] == 0:
            return self.replace(sums=jnp.zeros(sums.shape[1:], sums.dtype))
        # start from the first state (not from zeros) so the carry varies across devices like the states do
        total, _ = jax.lax.scan(body, sums[0], sums[1:])
        return self.replace(sums=total)

    def psum(self: M, axis_name: Any) -> M:
        """Merge across a named device axis with ``lax.psum`` (inside ``pmap`` / ``shard_map``).

        Exact while each per-device total's high part is an integer below 2**24; ``all_gather(...).reduce()`` is
        exact always.
        """
        hi = jax.lax.psum(self.sums[..., 0], axis_name)
        lo = jax.lax.psum(self.sums[..., 1], axis_name)
        total = hi + lo
        return self.replace(sums=jnp.stack([total, lo - (total - hi)], -1))

    def totals(self) -> dict[str, Any]:
        """The exact totals of a (reduced) state, read on the host in float64.

        Returns:
            ``{"xy", "xx", "yy", "count": float, "macro": {normalizer name: float}}`` (the overlap, predicted and
            reference self-overlaps, the weighted example count and the per-example normalized sums).
        """
        sums = np.asarray(self.sums, np.float64)
        if sums.ndim != 2:
            raise ValueError(f"{self.config.name}: the state is still stacked (sums shape {sums.shape}); call reduce().")
        v = sums[:, 0] + sums[:, 1]
        macro = {("overlap" if n.is_identity else n.name): float(v[3 + k]) for k, n in enumerate(self.config.reported)}
        return {"xy": float(v[0]), "xx": float(v[1]), "yy": float(v[2]), "count": float(v[-1]), "macro": macro}

    def compute(self) -> dict[str, jax.Array]:
        """Micro figures from the totals and ``macro_`` figures from the per-example sums.

        Returns:
            ``{"overlap", "precision", "recall", "f1", "jaccard", [declared f-beta or custom], and the same names
            prefixed "macro_"}`` as 0-d float arrays.
        """
        if self.sums.ndim != 2:
            raise ValueError(
                f"{self.config.name}.compute: the state is still stacked (sums shape {self.sums.shape}); "
                "call reduce() first."
            )
        self._check_rows()
        if not isinstance(self.sums, jax.core.Tracer):
            return _jitted_compute(self)  # one dispatch instead of a dozen eager ops
        return self._compute()

    def _compute(self) -> dict[str, jax.Array]:
        cfg = self.config
        v = comp.value(self.sums)
        xy, xx, yy, count = v[0], v[1], v[2], v[-1]
        out: dict[str, jax.Array] = {"overlap": xy}
        for n in cfg.reported:
            if not n.is_identity:
                out[n.name] = jnp.asarray(n(xy, xx, yy, cfg.zero_division))
        for k, n in enumerate(cfg.reported):
            key = "macro_overlap" if n.is_identity else f"macro_{n.name}"
            out[key] = safe_divide(v[3 + k], count, cfg.zero_division)
        return out


@jax.jit
def _jitted_compute(state: Any) -> Any:
    return state._compute()


def _reported(normalizer: Normalizer, extra: Sequence[Normalizer] = ()) -> tuple[Normalizer, ...]:
    out = [NONE, *_STANDARD]
    for n in (normalizer, *extra):
        if all(n.name != m.name for m in out):
            out.append(n)
    return tuple(out)


def _new_class(name: str, cfg: MetricConfig, doc: str | None, base: type[M]) -> type[M]:
    cls_name = "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_")) or "Metric"
    if not cls_name.endswith("Metric"):
        cls_name += "Metric"
    cls = type(cls_name, (base,), {"_config": cfg, "__doc__": doc or base.__doc__, "__module__": base.__module__})
    return cls  # type: ignore[return-value]


def make_metric(
    similarity: Any,
    normalizer: str | Normalizer = "f1",
    *,
    name: str | None = None,
    zero_division: float = 0.0,
    empty_score: float = 1.0,
    report: Sequence[str | Normalizer] = (),
) -> type[Metric]:
    """The accumulator class of a similarity (anything with ``batch_stats(predictions, references)``).

    Args:
        similarity: a :class:`metametric_jax.similarity.Similarity`.
        normalizer: the declared normalizer (``score`` uses it; ``compute`` reports it beside P / R / F1 / Jaccard).
        name: a name for messages; default the similarity's.
        zero_division: value of a 0/0 other than two empty structures.
        empty_score: per-example normalized score of two empty structures.
        report: further normalizers for ``compute`` to report.
    """
    norm = parse_normalizer(normalizer)
    extra = tuple(parse_normalizer(r) for r in report)
    metric_name = name or getattr(similarity, "name", None) or type(similarity).__name__
    cfg = MetricConfig(
        name=metric_name,
        normalizer=norm,
        reported=_reported(norm, extra),
        zero_division=float(zero_division),
        empty_score=float(empty_score),
        batch_stats=similarity.batch_stats,
        source=similarity,
    )
    return _new_class(metric_name, cfg, None, Metric)


def stats_metric(
    stats: Callable[[Any, Any], tuple[float, float, float]] | None = None,
    normalizer: str | Normalizer = "f1",
    *,
    name: str,
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], np.ndarray] | None = None,
    zero_division: float = 0.0,
    empty_score: float = 1.0,
    report: Sequence[str | Normalizer] = (),
    doc: str | None = None,
) -> type[Metric]:
    """An accumulator class from a per-pair statistics function ``stats(p, r) -> (xy, xx, yy)``.

    Either ``stats`` (called per pair) or ``batch_stats`` (called per batch, returning an ``(n, 3)`` array) must be
    given; with neither, states are built with ``from_stats`` only.
    """
    norm = parse_normalizer(normalizer)
    extra = tuple(parse_normalizer(r) for r in report)
    if batch_stats is None and stats is not None:
        pair = stats

        def batch_stats(predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
            return np.asarray([pair(p, r) for p, r in zip(predictions, references)], dtype=np.float64).reshape(-1, 3)

    cfg = MetricConfig(
        name=name,
        normalizer=norm,
        reported=_reported(norm, extra),
        zero_division=float(zero_division),
        empty_score=float(empty_score),
        batch_stats=batch_stats,
        source=stats,
    )
    return _new_class(name, cfg, doc, Metric)
