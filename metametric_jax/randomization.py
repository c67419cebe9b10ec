r"""Approximate randomization (Riezler and Maxwell 2005): a mergeable accumulator of two systems, on three paths.

:func:`randomization` ``(M, permutations=10000, seed=0)`` makes an accumulator class for a metric or suite ``M``, fed
with both systems' predictions against the same references. Permutation :math:`r` swaps example :math:`i`'s rows
between the systems where ``swap_masks(ids, R, seed)[r, i]`` is 1 (a pure function of the seed, the example id and
the permutation, :func:`metametric_jax.resampling.swap_masks`). The state holds A's and B's sums and, per
permutation, the two swapped sums; ``compute()`` gives per figure ``{"delta", "p_value"}`` with
:math:`\delta = a - b` and

.. math::

    p = \frac{1 + \#\{r : |\delta_r| \ge |\delta|\}}{R + 1}.

A batch's state comes from any of three update paths, as for the bootstrap (:mod:`metametric_jax.significance`);
the same examples with the same ids give the same state:

* host: ``from_model_output(predictions_a, predictions_b, references, weights=None, *, example_ids=None)`` with
  Python structures;
* callback: the same call with arrays (or pytrees of arrays) with a leading batch axis and ``decode=fn`` for both
  systems' predictions (``decode_references=`` for the references): one ``jax.pure_callback`` decodes and matches
  both systems on the host, so the call runs inside ``jax.jit`` / ``pmap``, where ``example_ids`` are required (see
  :mod:`metametric_jax.jit`). The state equals the host path's bit for bit;
* device: ``from_records(encoded_a, encoded_b, weights=None, *, example_ids)`` with two
  :class:`~metametric_jax.device.RecordPair` s, the systems' records against the same references, encoded with one
  vocabulary (:func:`encode_systems`); pure ``jax.numpy``, jittable (see :mod:`metametric_jax.device`).

The device path sums every permutation exactly: the weighted rows are cut into three 12-bit integer digits on one grid
per column, and each digit's sum over at most 1024 examples is an integer below :math:`2^{24}`, which a float32
matrix product computes exactly. So integer sums (the counts behind the micro figures, with integer or dyadic
weights) equal the host path's bit for bit, and a permutation that swaps only examples the two systems score alike,
or all those they score differently, gives exactly :math:`\pm\delta`, as on the host. The per-example normalized
scores behind the ``macro_`` figures are float32 on the device (float64 on the host): their deltas equal the host's
to float32 rounding, and their p-values equal the host's except where some :math:`|\delta_r|` equals
:math:`|\delta|` (or lies within that rounding of it) only because different per-example scores cancel, a tie that
float32 scores may break.

Example:
    >>> import numpy as np
    >>> from metametric_jax import dsl, make_metric
    >>> Bag = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="rnd_bag")
    >>> Rand = randomization(Bag, permutations=500, seed=0)
    >>> a, b, refs = [[1, 2], [3], [4], [6]], [[1], [7], [4], []], [[1, 2], [3], [4, 5], [6]]
    >>> host = Rand.from_model_output(a, b, refs, example_ids=[0, 1, 2, 3]).compute()["f1"]
    >>> round(float(host["delta"]), 4), 0.0 < float(host["p_value"]) <= 1.0
    (0.4646, True)
    >>> padded = lambda docs: np.array([d + [0] * (2 - len(d)) for d in docs])  # 0 pads
    >>> decode = lambda row: [int(x) for x in row if x > 0]
    >>> arrays = Rand.from_model_output(padded(a), padded(b), padded(refs), example_ids=np.arange(4), decode=decode)
    >>> arrays.compute()["f1"] == host
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from metametric_jax import _compensated as comp
from metametric_jax import resampling
from metametric_jax.accumulate import Metric
from metametric_jax.inputs import check_batch, check_lengths, validate_weights
from metametric_jax.resampling import Positions, ResamplingConfig, swap_masks

if TYPE_CHECKING:
    from metametric_jax.device import RecordPair

__all__ = ["randomization", "RandomizationState", "encode_systems"]

_DIGIT_BITS = 12  # bits of one digit of the exact device sums
_DIGITS = 3  # digits per value: 36 bits below the largest value of its column
_CHUNK = 1024  # examples per exact digit sum: 1024 * 2**13 (a difference of two digits) < 2**24


class RandomizationState(struct.PyTreeNode):
    """The state of a :func:`randomization` accumulator.

    Attributes:
        a: system A's state of the metric.
        b: system B's state.
        swapped_a: per permutation, A's state after swapping the marked examples' rows with B's (stacked).
        swapped_b: per permutation, B's state after the swaps (stacked).
        fingerprint: order-independent sums over the examples (compensated pairs): hashes of the ids and the
            number of examples (see :func:`metametric_jax.resampling.fingerprint`; the references are not digested:
            both systems are scored against the same references in one call, so no paired check needs them).

    As for the bootstrap (:class:`metametric_jax.bootstrap.BootstrapState`), a state built on the host (or on the
    device from concrete ids, outside ``jit``) holds the set of its example ids beside the pytree, and ``merge``
    refuses two states that hold the same id; states that went through ``jit``, ``pmap``, a checkpoint or
    ``reduce()`` do not hold it and merge without that check (on the device path duplicates across states are not
    detected).
    """

    a: Any
    b: Any
    swapped_a: Any
    swapped_b: Any
    fingerprint: jax.Array

    resampling: ClassVar[ResamplingConfig]
    metric_config: ClassVar[Any]
    positions: ClassVar[Positions]

    @classmethod
    def empty(cls) -> RandomizationState:
        """The identity of ``merge``."""
        cfg = cls.resampling
        m = cfg.metric
        zero = jax.tree.map(lambda x: np.zeros((cfg.samples, x.shape[-1]), np.float64), resampling.zero_rows(m))
        state = cls(
            a=m.empty(),
            b=m.empty(),
            swapped_a=resampling.from_totals(m, zero),
            swapped_b=resampling.from_totals(m, zero),
            fingerprint=jnp.zeros((resampling.FP_LANES, 2), jnp.float32),
        )
        return resampling.with_ids(state, resampling.IdSet())

    @classmethod
    def reset_positions(cls) -> None:
        """Restart the running example position used when ``example_ids`` are omitted.

        Call it before each new stream of examples scored without ids; never between the batches of one stream
        (their states would hold the same ids and refuse to merge).
        """
        cls.positions.next = 0

    @classmethod
    def from_model_output(
        cls,
        predictions_a: Any,
        predictions_b: Any,
        references: Any,
        weights: Any = None,
        *,
        example_ids: Any = None,
        decode: Callable[[Any], Any] | None = None,
        decode_references: Callable[[Any], Any] | None = None,
    ) -> RandomizationState:
        """The state of one batch of both systems' predictions against the same references.

        Args:
            predictions_a: system A's predicted structures, one per example; or, with ``decode``, arrays (or a pytree
                of arrays) with a leading batch axis.
            predictions_b: system B's, the same way (with ``decode``, its pytree may differ from A's).
            references: the reference structures, same length (or arrays, with ``decode``).
            weights: optional non-negative per-example weights (shape ``(n,)`` or a scalar).
            example_ids: one integer per example, unique across the whole evaluation (all 64 bits count on the
                host); default on the host: the running position, see :mod:`metametric_jax.significance`; required
                inside ``jit``, where they must lie in the int32 range.
            decode: host function from one example's arrays to a structure, applied to both systems' predictions
                (the callback path, usable inside ``jax.jit`` / ``pmap``).
            decode_references: the same for the references (default ``decode``).

        Raises:
            ValueError: if the sides differ in length (or batch size), an id is given to two examples (on the
                callback path inside ``jit``: when the callback runs, as a runtime error carrying this message), or
                on bad weights or ids' shape.
            TypeError: if ids are not integers, a structure has the wrong type, or a decode function returns one.
        """
        if decode is not None or decode_references is not None:
            return _callback_state(
                cls, predictions_a, predictions_b, references, weights, decode, decode_references, example_ids
            )
        name = cls.resampling.name
        check_batch(predictions_a, references, name)
        check_batch(predictions_b, references, name)
        positional = example_ids is None
        ids = resampling.example_ids_of(cls, example_ids, len(references))
        state = cls._from_sums(cls._host_batch_sums(predictions_a, predictions_b, references, weights, example_ids=ids))
        return resampling.with_ids(state, resampling.IdSet.of(ids, positional))

    @classmethod
    def _host_batch_sums(
        cls,
        predictions_a: Sequence[Any],
        predictions_b: Sequence[Any],
        references: Sequence[Any],
        weights: Any = None,
        *,
        example_ids: Any,
    ) -> dict[str, Any]:
        """The state's sums of a batch of structures, on the host (NumPy, float64; what the callback computes)."""
        cfg = cls.resampling
        m = cfg.metric
        check_batch(predictions_a, references, cfg.name)
        check_batch(predictions_b, references, cfg.name)
        n = len(references)
        ids = resampling.example_ids_of(cls, example_ids, n)
        w = validate_weights(weights, n, cfg.name)
        base = np.ones(n) if w is None else w
        ra = resampling.example_rows(m, predictions_a, references)
        rb = resampling.example_rows(m, predictions_b, references)
        masks = swap_masks(ids, cfg.samples, cfg.seed)
        swap = masks * base[None, :]
        keep = (1.0 - masks) * base[None, :]
        return {
            "a": resampling.sums_from_totals(m, jax.tree.map(lambda r: base @ r, ra)),
            "b": resampling.sums_from_totals(m, jax.tree.map(lambda r: base @ r, rb)),
            "swapped_a": resampling.sums_from_totals(m, jax.tree.map(lambda x, y: keep @ x + swap @ y, ra, rb)),
            "swapped_b": resampling.sums_from_totals(m, jax.tree.map(lambda x, y: swap @ x + keep @ y, ra, rb)),
            "fingerprint": resampling.fingerprint(ids),
        }

    @classmethod
    def _sums_shape(cls) -> dict[str, Any]:
        """The structure of :meth:`_host_batch_sums` as ``jax.ShapeDtypeStruct`` leaves."""
        cfg = cls.resampling
        plain = cfg.metric._sums_shape()
        stacked = jax.tree.map(lambda x: jax.ShapeDtypeStruct((cfg.samples, *x.shape), x.dtype), plain)
        return {
            "a": plain,
            "b": plain,
            "swapped_a": stacked,
            "swapped_b": stacked,
            "fingerprint": jax.ShapeDtypeStruct((resampling.FP_LANES, 2), jnp.float32),
        }

    @classmethod
    def _from_sums(cls, sums: Any) -> RandomizationState:
        """A state from its sums (see :meth:`_host_batch_sums`; NumPy, JAX arrays or tracers)."""
        m = cls.resampling.metric
        return cls(
            a=m._from_sums(sums["a"]),
            b=m._from_sums(sums["b"]),
            swapped_a=m._from_sums(sums["swapped_a"]),
            swapped_b=m._from_sums(sums["swapped_b"]),
            fingerprint=jnp.asarray(sums["fingerprint"], jnp.float32),
        )

    @classmethod
    def from_records(
        cls, encoded_a: Any, encoded_b: Any, weights: Any = None, *, example_ids: Any
    ) -> RandomizationState:
        """The device-native state of both systems' encoded records (jittable; see the module docstring).

        Args:
            encoded_a: system A's :class:`~metametric_jax.device.RecordPair` (its records and the references').
            encoded_b: system B's, against the same references with the same vocabulary (:func:`encode_systems`).
            weights: optional non-negative per-example weights (shape ``(n,)`` or a scalar; checked when concrete).
            example_ids: one integer per example, in the int32 range (hashed as on the host). Concrete ids are
                checked (int32, unique within the batch) and the state then holds them (``merge`` refuses an id
                held twice); traced ids (inside ``jit``) are not checked for repeats.

        Raises:
            TypeError: if the metric is a suite or does not qualify, an argument is not a ``RecordPair``, records
                or ids are not integers.
            ValueError: if the batch sizes differ, the two were encoded with different vocabularies or (when
                concrete) against different references, ids fall outside int32 or repeat, or on bad weights.
        """
        from metametric_jax.device import device_stats

        cfg = cls.resampling
        m = cfg.metric
        if not (isinstance(m, type) and issubclass(m, Metric)):
            raise TypeError(
                f"{cfg.name}: the device-native randomization test needs a single record metric, not a suite."
            )
        ra = jnp.asarray(m.example_rows(device_stats(m, encoded_a)))  # float32 rows on the device
        rb = jnp.asarray(m.example_rows(device_stats(m, encoded_b)))
        n = ra.shape[0]
        if rb.shape[0] != n:
            raise ValueError(
                f"{cfg.name}.from_records: the two systems' batches differ in size ({n} and {rb.shape[0]} examples)."
            )
        _check_same_encoding(encoded_a, encoded_b, cfg.name)
        ids = resampling.device_ids(example_ids, n, cfg.name)
        w = resampling.device_weights(weights, n, cfg.name)
        state = cls._from_sums(_device_sums(m, cfg.samples, cfg.seed, ra, rb, w, ids))
        if isinstance(example_ids, jax.core.Tracer):
            return state
        return resampling.with_ids(state, resampling.IdSet.of(np.asarray(example_ids, np.int64)))

    def merge(self, other: RandomizationState) -> RandomizationState:
        """Leafwise addition.

        Raises:
            TypeError: if ``other`` is not a state of the same class.
            ValueError: if both states hold the same example id (see the class docstring).
        """
        if not isinstance(other, RandomizationState) or other.resampling is not self.resampling:
            raise TypeError(
                f"Cannot merge {type(other).__name__} into a randomization state of {self.resampling.name}."
            )
        ids = resampling.merged_ids(self, other, f"{self.resampling.name} randomization merge")
        merged = self.replace(
            a=self.a.merge(other.a),
            b=self.b.merge(other.b),
            swapped_a=self.swapped_a.merge(other.swapped_a),
            swapped_b=self.swapped_b.merge(other.swapped_b),
            fingerprint=comp.add(self.fingerprint, other.fingerprint),
        )
        return resampling.with_ids(merged, ids)

    def reduce(self) -> RandomizationState:
        """Merge states stacked along the leading axis."""
        if self.fingerprint.ndim == 2:
            return self
        tree = {k: getattr(self, k) for k in ("a", "b", "swapped_a", "swapped_b", "fingerprint")}
        return self.replace(**resampling.reduce_leading(tree))

    def compute(self) -> Any:
        """Per figure ``{"delta", "p_value"}`` (the structure of the metric's ``compute()``; jittable)."""
        if not isinstance(self.fingerprint, jax.core.Tracer):
            resampling.check_state(self.a)
            resampling.check_state(self.b)
            ea, eb = self.a.compute(), self.b.compute()
            pa = resampling.vmapped_compute(self.swapped_a)
            pb = resampling.vmapped_compute(self.swapped_b)
            total = self.resampling.samples + 1.0

            def one(x: Any, y: Any, sx: Any, sy: Any) -> dict[str, Any]:
                delta = float(x) - float(y)
                d = np.asarray(sx, np.float64) - np.asarray(sy, np.float64)
                return {
                    "delta": np.float64(delta),
                    "p_value": np.float64((1.0 + np.sum(np.abs(d) >= abs(delta))) / total),
                }

            return jax.tree.map(one, ea, eb, pa, pb)
        return self._compute_traced()

    def _compute_traced(self) -> Any:
        """``compute`` without its eager checks (inside ``jit``; the p-values in float32)."""
        total = self.resampling.samples + 1.0
        return jax.tree.map(
            lambda d: {"delta": d["delta"], "p_value": (1.0 + d["extreme"]) / total},
            self.extreme_counts(),
            is_leaf=lambda x: isinstance(x, dict) and "extreme" in x,
        )

    def extreme_counts(self) -> Any:
        """Per figure ``{"delta", "extreme"}``: the difference and the number of permutations at least as extreme."""
        ea, eb = self.a.compute(), self.b.compute()
        pa = resampling.vmapped_compute(self.swapped_a)
        pb = resampling.vmapped_compute(self.swapped_b)

        def one(x: Any, y: Any, sx: Any, sy: Any) -> dict[str, Any]:
            delta = jnp.asarray(x, jnp.float32) - jnp.asarray(y, jnp.float32)
            return {"delta": delta, "extreme": jnp.sum(jnp.abs(sx - sy) >= jnp.abs(delta))}

        return jax.tree.map(one, ea, eb, pa, pb)


def randomization(metric: Any, permutations: int = 10000, seed: int = 0) -> type[RandomizationState]:
    """An approximate-randomization accumulator class for a metric or suite class (see the module docstring).

    The same arguments give the same class (its states merge with each other's, and it keeps one running position).

    Raises:
        TypeError: if ``metric`` is not a metric or suite class.
        ValueError: if ``permutations`` is not a positive integer.
    """
    resampling.check_metric(metric, "randomization")
    if not isinstance(permutations, int) or permutations < 1:
        raise ValueError(f"randomization needs a positive integer number of permutations; found {permutations!r}.")
    cfg = ResamplingConfig(metric, permutations, int(seed), 0.95)
    return resampling.state_class(RandomizationState, "Randomization", cfg, __name__)


def encode_systems(
    predictions_a: Sequence[Any],
    predictions_b: Sequence[Any],
    references: Sequence[Any],
    *,
    metric: Any,
    max_items: int | None = None,
    field: str | None = None,
) -> tuple[RecordPair, RecordPair]:
    """Encode two systems' documents and the references as integer records with one vocabulary (for ``from_records``).

    One :func:`~metametric_jax.device.encode_pairs` call over A's and B's predictions (against the references, twice):
    the two :class:`~metametric_jax.device.RecordPair` s share the vocabulary, the padding and the reference records.
    Its errors number B's documents after A's (document ``n + k`` is B's ``k``).

    Args:
        predictions_a: system A's documents, one per example.
        predictions_b: system B's documents, same length.
        references: the reference documents, same length.
        metric: the qualifying metric class.
        max_items: the padded number of records per document (default: the largest collection, at least 1).
        field: the collection field to read.

    Returns:
        ``(encoded_a, encoded_b)``.

    Raises:
        TypeError: as :func:`~metametric_jax.device.encode_pairs` (a value of the wrong type, naming its field).
        ValueError: if the three differ in length, or as :func:`~metametric_jax.device.encode_pairs`.
    """
    from metametric_jax.device import RecordPair, encode_pairs

    pa, pb, refs = list(predictions_a), list(predictions_b), list(references)
    check_lengths(pa, refs, "encode_systems (system A)")
    check_lengths(pb, refs, "encode_systems (system B)")
    n = len(refs)
    pair = encode_pairs(pa + pb, refs + refs, metric=metric, max_items=max_items, field=field)

    def side(part: slice) -> RecordPair:
        return RecordPair(
            pair.pred_records[part], pair.pred_mask[part], pair.ref_records[part], pair.ref_mask[part], pair.vocab
        )

    return side(slice(0, n)), side(slice(n, 2 * n))


# ------------------------------------------------------------------------------------------------ the callback path
def _callback_state(
    cls: type[RandomizationState],
    predictions_a: Any,
    predictions_b: Any,
    references: Any,
    weights: Any,
    decode: Callable[[Any], Any] | None,
    decode_references: Callable[[Any], Any] | None,
    example_ids: Any,
) -> RandomizationState:
    """Decode both systems' arrays and the references on the host; one ``jax.pure_callback`` when traced."""
    from metametric_jax.jit import sides_state

    name = cls.resampling.name
    sides = {"predictions A": predictions_a, "predictions B": predictions_b, "references": references}
    ref_leaves = jax.tree.leaves(references)  # sides_state checks that every side has this batch size
    n = int(np.shape(ref_leaves[0])[0]) if ref_leaves and np.ndim(ref_leaves[0]) else 0
    positional = example_ids is None
    if any(isinstance(x, jax.core.Tracer) for x in [*jax.tree.leaves(sides), weights, example_ids]):
        if example_ids is None:
            raise ValueError(f"{name}: inside jit the randomization test needs example_ids (one integer per example).")
        example_ids = resampling.device_ids(example_ids, n, name)
        weights = resampling.device_weights(weights, n, name)
    elif example_ids is None:
        example_ids = cls.positions.take(n)
    state = sides_state(cls, sides, weights, decode, decode_references, {"example_ids": example_ids})
    if isinstance(example_ids, jax.core.Tracer):
        return state
    return resampling.with_ids(state, resampling.IdSet.of(np.asarray(example_ids, np.int64), positional))


# ------------------------------------------------------------------------------------------------ the device path
def _check_same_encoding(encoded_a: Any, encoded_b: Any, name: str) -> None:
    """Refuse two systems encoded with different vocabularies, or (concrete arrays) against different references."""
    if encoded_a.vocab != encoded_b.vocab:
        raise ValueError(
            f"{name}.from_records: the two systems' records were encoded with different vocabularies "
            f"({encoded_a.vocabulary} vs {encoded_b.vocabulary}); encode both with encode_systems(...)."
        )
    arrays = (encoded_a.ref_records, encoded_a.ref_mask, encoded_b.ref_records, encoded_b.ref_mask)
    if any(isinstance(x, jax.core.Tracer) for x in arrays):
        return
    ra, ma, rb, mb = (np.asarray(x) for x in arrays)
    ma, mb = ma.astype(bool), mb.astype(bool)
    if ra.shape == rb.shape and np.array_equal(ma, mb) and np.array_equal(ra[ma], rb[mb]):
        return
    for i in range(ra.shape[0]):
        if sorted(map(tuple, ra[i][ma[i]].tolist())) != sorted(map(tuple, rb[i][mb[i]].tolist())):
            raise ValueError(
                f"{name}.from_records: the two systems were encoded against different references (example {i}); "
                "encode both against the same references with encode_systems(...)."
            )


def _digits(values: jax.Array, exponent: jax.Array) -> jax.Array:
    """``(n, DIGITS, D)`` integer-valued float32 digits of ``values`` ``(n, D)``, where ``|values| < 2**exponent``.

    ``values`` is ``sum_k digits[:, k] * 2**(exponent - 12 (k + 1))`` up to 36 bits below ``2**exponent``; a digit
    lies in ``[-2**12, 2**12]``. Every step is exact: scaling by powers of two, rounding, and subtracting the rounded
    part.
    """
    x = jnp.ldexp(values, -exponent)
    out = []
    for _ in range(_DIGITS):
        x = jnp.ldexp(x, _DIGIT_BITS)
        digit = jnp.round(x)
        out.append(digit)
        x = x - digit
    return jnp.stack(out, axis=1)


def _exact_sums(va: jax.Array, vb: jax.Array, masks: jax.Array) -> tuple[jax.Array, ...]:
    """A's and B's sums and the permutations' swapped sums of weighted rows ``(n, D)``, as compensated pairs.

    Both systems' rows are cut into digits on one grid per column; per block of at most 1024 examples, A's digit sums,
    B's and the swapped ones (``A - masks @ (A - B)`` and ``B + masks @ (A - B)``) are integers below 2**24, exact in
    float32 whatever the order of summation. The blocks' and digits' values are then added as compensated pairs in
    the same order for every sum, so equal multisets of rows give equal sums bit for bit.

    Returns:
        ``(a, b, swapped_a, swapped_b)``: pairs ``(D, 2)``, ``(D, 2)``, ``(R, D, 2)``, ``(R, D, 2)``.
    """
    n = va.shape[0]
    _, exponent = jnp.frexp(jnp.max(jnp.abs(jnp.concatenate([va, vb])), axis=0, initial=0.0))
    chunk = max(1, min(n, _CHUNK))
    blocks = -(-n // chunk)

    def chunked(x: jax.Array) -> jax.Array:
        x = jnp.pad(x, [(0, blocks * chunk - n)] + [(0, 0)] * (x.ndim - 1))
        return x.reshape(blocks, chunk, *x.shape[1:])

    da, db = chunked(_digits(va, exponent)), chunked(_digits(vb, exponent))
    ta, tb = da.sum(axis=1), db.sum(axis=1)
    moved = jnp.einsum("cjr,cjkd->crkd", chunked(masks.T), da - db, precision=jax.lax.Precision.HIGHEST)
    scale = exponent[None, :] - _DIGIT_BITS * jnp.arange(1, _DIGITS + 1, dtype=exponent.dtype)[:, None]

    # the four sums side by side, (blocks, 2 + 2R, digits, D): one compensated sum over blocks and digits, each
    # element added in the same order as alone (fewer operations for the compiler than four sums)
    r = moved.shape[1]
    digit_sums = jnp.concatenate([ta[:, None], tb[:, None], ta[:, None] - moved, tb[:, None] + moved], axis=1)
    v = jnp.moveaxis(jnp.ldexp(digit_sums, scale), -2, 1)
    v = v.reshape(-1, *v.shape[2:])
    sums = comp.tree_sum(jnp.stack([v, jnp.zeros_like(v)], axis=-1))
    return sums[0], sums[1], sums[2 : 2 + r], sums[2 + r :]


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _device_sums(
    metric: Any, samples: int, seed: int, ra: jax.Array, rb: jax.Array, w: jax.Array | None, ids: jax.Array
) -> dict[str, Any]:
    """The sums of a device-native state from both systems' checked rows, weights and ids: one program per shape.

    Called eagerly, its operations would each compile a program of their own for every batch size.
    """
    va, vb = (ra, rb) if w is None else (ra * w[:, None], rb * w[:, None])
    a, b, swapped_a, swapped_b = _exact_sums(va, vb, swap_masks(ids, samples, seed))
    return {
        "a": _named_pairs(metric, a),
        "b": _named_pairs(metric, b),
        "swapped_a": _named_pairs(metric, swapped_a),
        "swapped_b": _named_pairs(metric, swapped_b),
        "fingerprint": resampling.fingerprint(ids),
    }


def _named_pairs(metric: Any, pairs: jax.Array) -> dict[str, Any]:
    """A metric's named sums from compensated pairs ``(..., 3 + K + 1, 2)`` of its summed example rows."""
    hi = metric._sums_from_totals(pairs[..., 0])
    lo = metric._sums_from_totals(pairs[..., 1])
    return jax.tree.map(lambda h, lo_: jnp.stack([h[..., 0], lo_[..., 0]], axis=-1), hi, lo)
