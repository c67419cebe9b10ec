r"""The bootstrap as a mergeable accumulator: confidence intervals and the paired bootstrap test.

A metric's state is a sum of per-example rows, so ``B`` bootstrap replicates are ``B`` weighted sums of the same rows
(the Poisson bootstrap: Hanley and MacGibbon 2006; Chamandy et al. 2012). :func:`bootstrap` makes the accumulator
class, :func:`paired_bootstrap` tests two systems (Koehn 2004; Berg-Kirkpatrick et al. 2012). Its sibling
:mod:`metametric_jax.randomization` holds the randomization test; :mod:`metametric_jax.significance` presents both
(the semantics, the unit, the example ids and the three update paths are described there).

Example:
    >>> from metametric_jax import dsl, make_metric
    >>> Spans = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="spans")
    >>> Boot = bootstrap(Spans, replicates=200, seed=1)
    >>> state = Boot.from_model_output([["a", "b"], ["c"], []], [["a"], ["c", "d"], ["e"]], example_ids=[0, 1, 2])
    >>> out = state.compute()
    >>> round(float(out["estimate"]["f1"]), 4), bool(out["low"]["f1"] <= out["estimate"]["f1"] <= out["high"]["f1"])
    (0.5714, True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from metametric_jax import _compensated as comp
from metametric_jax import intervals, resampling
from metametric_jax.accumulate import Metric
from metametric_jax.inputs import check_batch, validate_weights
from metametric_jax.resampling import Positions, ResamplingConfig, poisson_weights
from metametric_jax.suite import Suite

__all__ = ["bootstrap", "paired_bootstrap", "BootstrapState"]

B = TypeVar("B", bound="BootstrapState")


class BootstrapState(struct.PyTreeNode):
    """The state of a :func:`bootstrap` accumulator.

    Attributes:
        plain: the resampled metric's state over the examples (its ``compute()`` is the estimate).
        replicas: the same metric's states of the ``B`` replicates, stacked along a leading axis.
        fingerprint: order-independent sums over the examples (compensated pairs, see
            :func:`metametric_jax.resampling.fingerprint`): hashes of the ids, hashes of each id with its reference's
            digest, the number of examples: equal fingerprints, same examples against the same references.

    A state built on the host (or on the device from concrete ids, outside ``jit``) also holds the set of its example
    ids beside the pytree (:func:`metametric_jax.resampling.ids_held`); ``merge`` refuses two states that hold the
    same id. JAX transformations drop that set: states that went through ``jit``, ``pmap``, a checkpoint or
    ``reduce()`` merge without that check (on the device path duplicates across states are not detected; the
    fingerprint still refuses a paired test of two systems scored on different examples).
    """

    plain: Any
    replicas: Any
    fingerprint: jax.Array

    resampling: ClassVar[ResamplingConfig]
    metric_config: ClassVar[Any]
    positions: ClassVar[Positions]

    @classmethod
    def empty(cls: type[B]) -> B:
        """The identity of ``merge``."""
        cfg = cls.resampling
        m = cfg.metric
        reps = jax.tree.map(lambda x: np.zeros((cfg.samples, x.shape[-1]), np.float64), resampling.zero_rows(m))
        state = cls(
            plain=m.empty(),
            replicas=resampling.from_totals(m, reps),
            fingerprint=jnp.zeros((resampling.FP_LANES, 2), jnp.float32),
        )
        return resampling.with_ids(state, resampling.IdSet())

    @classmethod
    def reset_positions(cls) -> None:
        """Restart the running example position used when ``example_ids`` are omitted.

        Call it before each new stream of examples scored without ids, such as a second system's predictions for
        :func:`paired_bootstrap`; never between the batches of one stream (their states would hold the same ids and
        refuse to merge).
        """
        cls.positions.next = 0

    @classmethod
    def from_model_output(
        cls: type[B],
        predictions: Any,
        references: Any,
        weights: Any = None,
        *,
        example_ids: Any = None,
        decode: Any = None,
        decode_references: Any = None,
    ) -> B:
        """The state of one batch: the metric's per-example rows under the plain and the ``B`` replicate weightings.

        Args:
            predictions: predicted structures, one per example; or, with ``decode``, arrays with a leading batch axis.
            references: reference structures, same length (or arrays, with ``decode``).
            weights: optional non-negative per-example weights (multiplied into every replicate's weights).
            example_ids: one integer per example, unique across the whole evaluation (all 64 bits count on the
                host); default on the host: the running position, see the module docstring; required inside
                ``jit``.
            decode: host function from one example's arrays to a structure (the callback path, usable inside
                ``jax.jit`` / ``pmap``; see :mod:`metametric_jax.jit`).
            decode_references: the same for the references (default ``decode``).

        Raises:
            ValueError: if an id is given to two examples (on the callback path inside ``jit``: when the callback
                runs, as a runtime error carrying this message), or on bad weights or lengths.
            TypeError: if the ids are not integers, or a structure (or a decode function's result) has the wrong
                type.
        """
        positional = example_ids is None
        if decode is not None or decode_references is not None:
            from metametric_jax.jit import callback_state

            leaves = jax.tree.leaves(predictions)
            if example_ids is None:
                if any(isinstance(x, jax.core.Tracer) for x in leaves):
                    raise ValueError(
                        f"{cls.resampling.name}: inside jit the bootstrap needs example_ids (one integer per example)."
                    )
                example_ids = cls.positions.take(int(np.shape(leaves[0])[0]) if leaves else 0)
            extra = {"example_ids": example_ids}
            state = callback_state(cls, predictions, references, weights, decode, decode_references, extra)
            if isinstance(example_ids, jax.core.Tracer):
                return state
            return resampling.with_ids(state, resampling.IdSet.of(np.asarray(example_ids, np.int64), positional))
        check_batch(predictions, references, cls.resampling.name)
        ids = resampling.example_ids_of(cls, example_ids, len(predictions))
        state = cls._from_sums(cls._host_batch_sums(predictions, references, weights, example_ids=ids))
        return resampling.with_ids(state, resampling.IdSet.of(ids, positional))

    @classmethod
    def _host_batch_sums(
        cls, predictions: Sequence[Any], references: Sequence[Any], weights: Any = None, *, example_ids: Any
    ) -> dict[str, Any]:
        """The state's sums of a batch of structures, on the host (NumPy; what the callback path computes).

        The fingerprint digests each reference (:func:`metametric_jax.resampling.reference_digests`), so a paired
        test refuses two systems whose references differ for the same id.
        """
        cfg = cls.resampling
        check_batch(predictions, references, cfg.name)
        n = len(predictions)
        ids = resampling.example_ids_of(cls, example_ids, n)
        w = validate_weights(weights, n, cfg.name)
        rows = resampling.example_rows(cfg.metric, predictions, references)
        plain, replicas = resampling.weighted_sums(rows, w, ids, cfg.samples, cfg.seed)
        return {
            "plain": resampling.sums_from_totals(cfg.metric, plain),
            "replicas": resampling.sums_from_totals(cfg.metric, replicas),
            "fingerprint": resampling.fingerprint(ids, resampling.reference_digests(references)),
        }

    @classmethod
    def _sums_shape(cls) -> dict[str, Any]:
        """The structure of :meth:`_host_batch_sums` as ``jax.ShapeDtypeStruct`` leaves."""
        cfg = cls.resampling
        plain = cfg.metric._sums_shape()
        return {
            "plain": plain,
            "replicas": jax.tree.map(lambda x: jax.ShapeDtypeStruct((cfg.samples, *x.shape), x.dtype), plain),
            "fingerprint": jax.ShapeDtypeStruct((resampling.FP_LANES, 2), jnp.float32),
        }

    @classmethod
    def _from_sums(cls: type[B], sums: Any) -> B:
        """A state from its sums (see :meth:`_host_batch_sums`; NumPy, JAX arrays or tracers)."""
        m = cls.resampling.metric
        return cls(
            plain=m._from_sums(sums["plain"]),
            replicas=m._from_sums(sums["replicas"]),
            fingerprint=jnp.asarray(sums["fingerprint"], jnp.float32),
        )

    @classmethod
    def from_records(cls: type[B], encoded: Any, weights: Any = None, *, example_ids: Any) -> B:
        """The device-native state of a batch of encoded records (jittable; see :mod:`metametric_jax.device`).

        The replicate weights are computed on the device from ``example_ids`` (integers in the int32 range) with the
        same hash as on the host; sums are float32 products at full precision, equal to the host path to float32
        rounding (counts exactly). Concrete ids are checked (integers, int32, unique within the batch), as are
        the weights, and the state then holds them (``merge`` refuses an id held twice); traced ids (inside
        ``jit``) are not checked for repeats, within the batch or across states. The fingerprint covers the ids
        only: the encoded records are not digested (their codes depend on the vocabulary), so a paired test of a
        device state checks that both systems saw the same ids, not the same references.
        """
        from metametric_jax.device import device_stats

        cfg = cls.resampling
        m = cfg.metric
        if not (isinstance(m, type) and issubclass(m, Metric)):
            raise TypeError(f"{cfg.name}: the device-native bootstrap needs a single record metric, not a suite.")
        rows = m.example_rows(device_stats(m, encoded))
        n = rows.shape[0]
        ids = resampling.device_ids(example_ids, n, cfg.name)
        w = resampling.device_weights(weights, n, cfg.name)
        state = cls._from_sums(_device_sums(m, cfg.samples, cfg.seed, rows, w, ids))
        if isinstance(example_ids, jax.core.Tracer):
            return state
        return resampling.with_ids(state, resampling.IdSet.of(np.asarray(example_ids, np.int64)))

    def merge(self: B, other: B) -> B:
        """Leafwise addition (the plain state, every replicate, the fingerprint).

        Raises:
            TypeError: if ``other`` is not a state of the same class.
            ValueError: if both states hold the same example id (known exactly for states built on the host; see the
                class docstring for states that went through ``jit`` or the device).
        """
        if not isinstance(other, BootstrapState) or other.resampling is not self.resampling:
            raise TypeError(f"Cannot merge {type(other).__name__} into a bootstrap state of {self.resampling.name}.")
        ids = resampling.merged_ids(self, other, f"{self.resampling.name} bootstrap merge")
        merged = self.replace(
            plain=self.plain.merge(other.plain),
            replicas=self.replicas.merge(other.replicas),
            fingerprint=comp.add(self.fingerprint, other.fingerprint),
        )
        return resampling.with_ids(merged, ids)

    def reduce(self: B) -> B:
        """Merge states stacked along the leading axis (``all_gather(state).reduce()``)."""
        if self.fingerprint.ndim == 2:
            return self
        tree = {"plain": self.plain, "replicas": self.replicas, "fingerprint": self.fingerprint}
        return self.replace(**resampling.reduce_leading(tree))

    def replicates(self) -> Any:
        """Each figure's ``B`` replicate values, with the structure of the metric's ``compute()`` (jittable).

        Replicate :math:`b` is the metric's ``compute()`` over the sums weighted by :math:`w_{bi}` (times the
        examples' own weights), each sum rescaled by :math:`n / n_b`, the plain weighted example count over the
        replicate's (:func:`metametric_jax.resampling.conditioned`): a raw sum (``overlap``, a count) is then
        conditioned on the number of examples, as in a multinomial resample of ``n`` examples (without it the
        Poisson bootstrap's random sample size widens a sum's interval, about twice where the per-example values
        vary little), and ratios (precision, F1, macro averages) are unchanged.

        A replicate whose Poisson draws weight no example (probability :math:`e^{-n}` for ``n`` examples of weight 1)
        has no statistic at all: its figures are NaN, and the interval, the standard error and the paired tests
        leave it out, as a resample of the usual multinomial bootstrap is never empty.
        """
        reps = resampling.conditioned_compute(self.replicas, self.plain)
        weighted = resampling.replicate_counts(self.replicas) > 0
        return jax.tree.map(lambda r: jnp.where(weighted.reshape((-1,) + (1,) * (r.ndim - 1)), r, jnp.nan), reps)

    def compute(self) -> dict[str, Any]:
        """``{"estimate", "low", "high", "stderr"}``, each with the structure of the metric's ``compute()``.

        Pure ``jax.numpy`` (jittable; when eager, two jitted calls, and the ends and standard errors come back as NumPy
        float32 arrays, cut per figure on the host): the percentile interval of the replicates at the
        class's ``level`` and their standard deviation (``ddof=1``), over the replicates that weight some example
        (see :meth:`replicates`). Intervals of raw sums (``overlap``, counts) are conditioned on the number of
        examples: each replicate's sums are rescaled to the plain weighted example count.
        """
        if not isinstance(self.fingerprint, jax.core.Tracer):
            resampling.check_state(self.plain)
            # the figures' rows are cut apart on the host: a program with a separate output for each of a suite's
            # figures took several seconds more to compile than the whole computation
            reps = _jitted_replicates(self)
            estimate, ends, spread = _jitted_matrices(self, reps)
            ends, spread = np.asarray(ends), np.asarray(spread)
            leaves, treedef = jax.tree.flatten(reps)
            cuts = np.cumsum([math.prod(leaf.shape[1:]) for leaf in leaves])[:-1]

            def figures(values: np.ndarray) -> Any:
                parts = np.split(values, cuts)
                return jax.tree.unflatten(
                    treedef, [p.reshape(leaf.shape[1:]).astype(leaf.dtype) for p, leaf in zip(parts, leaves)]
                )

            return {"estimate": estimate, "low": figures(ends[0]), "high": figures(ends[1]), "stderr": figures(spread)}
        return self._compute_traced()

    def _compute_traced(self) -> dict[str, Any]:
        """``compute`` without its eager checks (inside ``jit``)."""
        return self._summary(self.replicates())

    def _matrices(self, reps: Any) -> tuple[Any, jax.Array, jax.Array]:
        """The estimate, and every figure's interval ends ``(2, F)`` and standard error ``(F,)`` as matrix columns."""
        leaves = jax.tree.leaves(reps)
        b = leaves[0].shape[0]
        dtype = jnp.result_type(*leaves)
        # every figure a column of one matrix: one selection and one reduction for all figures
        columns = jnp.concatenate([leaf.reshape(b, -1).astype(dtype) for leaf in leaves], axis=1)
        return self.plain.compute(), _interval_ends(columns, (1.0 - self.resampling.level) / 2.0), _spread(columns)

    def _summary(self, reps: Any) -> dict[str, Any]:
        """The estimate, each figure's interval and standard error from its replicates (``reps``), inside ``jit``."""
        estimate, ends, spread = self._matrices(reps)
        leaves, treedef = jax.tree.flatten(reps)
        cuts = np.cumsum([math.prod(leaf.shape[1:]) for leaf in leaves])[:-1].tolist()

        def figures(values: jax.Array) -> Any:
            parts = jnp.split(values, cuts)
            return jax.tree.unflatten(
                treedef, [p.reshape(leaf.shape[1:]).astype(leaf.dtype) for p, leaf in zip(parts, leaves)]
            )

        return {
            "estimate": estimate,
            "low": figures(ends[0]),
            "high": figures(ends[1]),
            "stderr": figures(spread),
        }


def _interval_ends(reps: jax.Array, alpha: float) -> jax.Array:
    """The percentile interval's ends ``(2, ...)``: quantiles ``alpha`` and ``1 - alpha`` of each figure's replicates.

    As ``jnp.nanquantile(reps, [alpha, 1 - alpha], axis=0)`` defines them (linear interpolation between the order
    statistics next to rank ``q (n - 1)`` of the ``n`` replicates that are not NaN; NaN where there are none), found
    by two partial selections of the ``k`` smallest and ``k`` largest replicates (``lax.top_k``) instead of a full
    sort of every figure's replicates (XLA's sort took most of ``compute()``). The interpolation's two products go
    through :func:`metametric_jax._division.scale`, so a fused multiply-add (CPU) or none (GPU) gives the same bits.
    """
    from metametric_jax._division import scale

    b = reps.shape[0]
    k = min(b, math.floor(alpha * b) + 3)  # past the lower rank and its neighbour, with room for rounding
    if not 0.0 < alpha < 0.5 or 4 * k > b or reps.dtype != jnp.float32:
        return jnp.nanquantile(reps, jnp.asarray([alpha, 1.0 - alpha]), axis=0)
    flat = reps.reshape(b, -1).T  # (figures, B)
    missing = jnp.isnan(flat)
    count = jnp.sum(~missing, axis=1).astype(reps.dtype)
    last = count - 1
    smallest = -jax.lax.top_k(jnp.where(missing, -jnp.inf, -flat), k)[0]  # ascending
    largest = jax.lax.top_k(jnp.where(missing, -jnp.inf, flat), k)[0]  # descending
    tails = (smallest, largest)
    ends = []
    for q, tail in zip((alpha, 1.0 - alpha), tails):
        at = jnp.asarray(q, reps.dtype) * last
        low, high = jnp.floor(at), jnp.ceil(at)
        t = at - low
        picks = []
        for rank in (low, high):
            rank = jnp.clip(rank, 0, jnp.maximum(last, 0))
            place = rank if q < 0.5 else last - rank
            picks.append(jnp.take_along_axis(tail, jnp.clip(place, 0, k - 1).astype(jnp.int32)[:, None], axis=1)[:, 0])
        value = scale(picks[0], 1 - t) + scale(picks[1], t)
        ends.append(jnp.where(count > 0, value, jnp.nan))
    return jnp.stack(ends).reshape((2,) + reps.shape[1:])


def _halving_sum(x: jax.Array) -> jax.Array:
    """The sum over the leading axis in one fixed order: the two halves added elementwise until one row is left.

    A reduction's order is its backend's (a tree of partial sums on a GPU, another on a CPU); elementwise additions
    are rounded alike everywhere, so this sum has the same bits on every backend.
    """
    size = 1 << max(0, (x.shape[0] - 1).bit_length())
    if size != x.shape[0]:
        x = jnp.concatenate([x, jnp.zeros((size - x.shape[0], *x.shape[1:]), x.dtype)])
    while size > 1:
        size //= 2
        x = x[:size] + x[size:]
    return x[0]


def _spread(columns: jax.Array) -> jax.Array:
    """Each column's sample standard deviation (``ddof=1``) over its values that are not NaN, as ``jnp.nanstd``.

    The corrected two-pass formula (the squared deviations from the rounded mean less their sum's square over the
    count), with the same bits on every backend: sums in a fixed order (:func:`_halving_sum`), products through
    :func:`metametric_jax._division.scale` (rounded alike with or without fused multiply-adds), quotients through
    :func:`metametric_jax._division.divide` and the root through :func:`metametric_jax._division.sqrt`. NaN for fewer
    than two values.
    """
    from metametric_jax._division import divide, scale, sqrt

    missing = jnp.isnan(columns)
    kept = jnp.where(missing, jnp.zeros_like(columns), columns)
    count = jnp.sum(~missing, axis=0).astype(columns.dtype)  # whole numbers below 2**24: exact in any order
    mean = divide(_halving_sum(kept), jnp.maximum(count, 1))
    deviation = jnp.where(missing, jnp.zeros_like(columns), kept - mean)
    total = _halving_sum(deviation)  # the rounded mean's offset, taken out of the squares (corrected two-pass)
    squares = _halving_sum(scale(deviation, deviation)) - divide(scale(total, total), jnp.maximum(count, 1))
    variance = divide(jnp.maximum(squares, 0), jnp.maximum(count - 1, 1))
    return jnp.where(count > 1, sqrt(variance), jnp.nan)


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _device_sums(metric: Any, samples: int, seed: int, rows: jax.Array, w: jax.Array | None, ids: jax.Array) -> Any:
    """The sums of a device-native state from checked rows, weights and ids: one program per shape.

    Called eagerly, its operations would each compile a program of their own for every batch size.
    """
    base = jnp.ones((rows.shape[0],), jnp.float32) if w is None else w
    reps = poisson_weights(ids, samples, seed) * base[None, :]
    exact = jax.lax.Precision.HIGHEST  # full float32 products on every backend (no TF32 or bfloat16 passes)
    return {
        "plain": metric._sums_from_totals(jnp.matmul(base, rows, precision=exact)),
        "replicas": metric._sums_from_totals(jnp.matmul(reps, rows, precision=exact)),
        "fingerprint": resampling.fingerprint(ids),
    }


@jax.jit
def _jitted_replicates(state: Any) -> Any:
    return state.replicates()


@jax.jit
def _jitted_matrices(state: Any, reps: Any) -> Any:
    return state._matrices(reps)


def bootstrap(metric: Any, replicates: int = 1000, seed: int = 0, level: float = 0.95) -> type[BootstrapState]:
    """A bootstrap accumulator class for a metric or suite class (see the module docstring).

    The same arguments give the same class (its states merge with each other's, and it keeps one running position).

    Raises:
        TypeError: if ``metric`` is not a metric or suite class.
        ValueError: if ``replicates`` < 2 or ``level`` is not in (0, 1).
    """
    resampling.check_metric(metric, "bootstrap")
    if not isinstance(replicates, int) or replicates < 2:
        raise ValueError(f"bootstrap needs an integer number of replicates >= 2; found {replicates!r}.")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"bootstrap needs a confidence level in (0, 1); found {level!r}.")
    cfg = ResamplingConfig(metric, replicates, int(seed), float(level))
    return resampling.state_class(BootstrapState, "Bootstrap", cfg, __name__)


def _check_pair(a: Any, b: Any, cls: type, what: str) -> None:
    for s in (a, b):
        if not isinstance(s, cls):
            raise TypeError(f"{what} expects two {cls.__name__} states; found {type(s).__name__}.")
    ca, cb = a.resampling, b.resampling
    if ca.metric is not cb.metric or ca.samples != cb.samples or ca.seed != cb.seed:
        raise ValueError(
            f"{what}: the states resample different metrics or settings ({ca.name}, B={ca.samples}, seed={ca.seed} "
            f"vs {cb.name}, B={cb.samples}, seed={cb.seed}); build both with one bootstrap(...) class."
        )
    fa = np.asarray(a.fingerprint, np.float64).sum(axis=-1)  # each lane's exact value (hi + lo)
    fb = np.asarray(b.fingerprint, np.float64).sum(axis=-1)
    na, nb = _count(a.plain), _count(b.plain)
    ids, examples = resampling.FP_IDS, resampling.FP_EXAMPLES
    if fa[ids] != fb[ids] or fa[examples] != fb[examples] or na != nb:
        held = [resampling.ids_held(s) for s in (a, b)]
        running = all(h is not None and len(h) and h.positional for h in held)
        cause = (
            " Both were scored without example_ids, and a class's running positions continue from one system's "
            "examples to the next's: call reset_positions() before scoring each system, or pass example_ids."
            if running
            else " Without example_ids, call reset_positions() before scoring each system (a class's running "
            "positions continue from one system to the next), or pass the same example_ids to both."
        )
        raise ValueError(
            f"{what}: the two systems were scored on different examples (example-id fingerprints {fa[ids]:.0f} vs "
            f"{fb[ids]:.0f}, {fa[examples]:.0f} vs {fb[examples]:.0f} examples, weighted counts {na:g} vs {nb:g}); "
            f"score both on the same examples with the same example_ids.{cause}"
        )
    digested = fa[resampling.FP_DIGESTED] == fa[examples] and fb[resampling.FP_DIGESTED] == fb[examples]
    if digested and not np.array_equal(fa[resampling.FP_REFS], fb[resampling.FP_REFS]):
        raise ValueError(
            f"{what}: the two systems were scored against different references under the same example ids (the "
            "fingerprints of the references differ); give each example the same id and reference for both systems "
            "(a system fed in another order under the same ids would be paired with the wrong examples)."
        )


def _count(state: Any) -> float:
    if isinstance(state, Suite):
        return _count(next(iter(state.states.values())))
    return state.totals()["count"]


def paired_bootstrap(state_a: BootstrapState, state_b: BootstrapState) -> Any:
    """The paired bootstrap test of system A against system B (see the module docstring).

    Returns:
        per figure ``{"delta", "low", "high", "p_value"}`` (the structure of the metric's ``compute()``).

    Raises:
        ValueError: if the states differ in metric, replicates or seed, were scored on different examples, or (both
            with every reference digested: the host and callback paths) against different references under the same
            ids. The message that refuses a second system scored on running positions names ``reset_positions()``.
    """
    _check_pair(state_a, state_b, BootstrapState, "paired_bootstrap")
    cfg = state_a.resampling
    alpha = (1.0 - cfg.level) / 2.0
    est_a, est_b = state_a.plain.compute(), state_b.plain.compute()
    reps_a, reps_b = state_a.replicates(), state_b.replicates()

    def one(ea: Any, eb: Any, ra: Any, rb: Any) -> dict[str, float]:
        delta = float(ea) - float(eb)
        d = np.asarray(ra, np.float64) - np.asarray(rb, np.float64)
        d = d[~np.isnan(d)]  # replicates that weight no example (the same for both systems) have no statistic
        extreme = np.abs(d - delta) >= abs(delta)
        low, high = intervals.quantiles(d, (alpha, 1.0 - alpha))
        return {
            "delta": delta,
            "low": low,
            "high": high,
            "p_value": float((1 + extreme.sum()) / (d.size + 1)),
        }

    return jax.tree.map(one, est_a, est_b, reps_a, reps_b)
