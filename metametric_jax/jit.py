r"""Metric updates inside ``jax.jit``, ``jax.pmap`` and ``shard_map``: decoding and matching on the host.

A model produces arrays; a metric compares structures. ``D.metric.from_model_output(predictions, references,
decode=fn)`` bridges the two: ``predictions`` and ``references`` are arrays (or pytrees of arrays) with a leading
batch axis, and ``fn`` is a host function mapping one example's slice (NumPy arrays, same pytree structure) to a
structure of the metric's type. Inside a traced computation the batch goes to the host once through
``jax.pure_callback``; there every example is decoded, matched, and its statistics are summed into the state's
named sums (``micro``: ``xy``, ``xx``, ``yy``; ``macro``: one sum per reported figure; ``count``), each a compensated
float32 pair of fixed shape ``(2,)`` (the callback's result shape is the metric's ``sums_shape()``):

.. math::

    \mathrm{xy} = \sum_i w_i \phi(P_i, R_i),\ \mathrm{xx} = \sum_i w_i \phi(P_i, P_i),\
    \mathrm{yy} = \sum_i w_i \phi(R_i, R_i),\ \mathrm{macro}_k = \sum_i w_i\, n_k(P_i, R_i),\
    \mathrm{count} = \sum_i w_i

with :math:`P_i = \mathrm{decode}(\mathrm{predictions}[i])`, :math:`R_i = \mathrm{decode\_references}(\mathrm{
references}[i])` and :math:`n_k` the :math:`k`-th reported normalized score (Chen et al., "A Unified View of
Evaluation Metrics for Structured Prediction", EMNLP 2023). The result equals the host path,
``D.metric.from_model_output([P_i], [R_i], weights)``, bit for bit.

Suites work the same way (``NERSuite.from_model_output(tags, gold, decode=fn)``): one callback computes every
member's sums, and the suite state is built from them.

Padding is the decode function's business: pass a mask or the lengths as part of the pytree, e.g.
``{"tags": tags, "mask": mask}``, and drop the padded positions in ``decode``.

Errors: mismatched leading axes raise ``ValueError`` at trace time. A decode function that returns the wrong type
raises ``TypeError`` naming the returned and the expected type: directly outside a traced computation; inside one,
at trace time when the decode function returns the wrong type for an all-zero example of the right shapes (the
usual case), else when the computation runs, as a ``JaxRuntimeError`` whose message contains the ``TypeError``'s
(the runtime stays usable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax.composite import Product
from metametric_jax.protocol import SumsAccumulator

__all__ = ["callback_state", "sides_state", "host_state_sums", "expected_type"]


def expected_type(metric_cls: Any) -> type | None:
    """The type a decode function must return for ``metric_cls``, or ``None`` when the metric does not say.

    A metric derived by ``@metametric`` (or built on a :class:`~metametric_jax.similarity.Product`) expects instances
    of its dataclass.
    """
    source = getattr(metric_cls.metric_config, "source", None)
    if isinstance(source, Product) and isinstance(source.cls, type):
        return source.cls
    return None


def _leading(tree: Any, what: str, name: str) -> tuple[list[Any], Any, int]:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if not leaves:
        raise ValueError(
            f"{name}.from_model_output(decode=...): {what} holds no arrays; expected arrays (or a pytree "
            "of arrays) with a leading batch axis."
        )
    shapes = [tuple(np.shape(x)) for x in leaves]
    for s in shapes:
        if len(s) == 0:
            raise ValueError(
                f"{name}.from_model_output(decode=...): every array of {what} needs a leading batch axis; found a "
                f"scalar among shapes {shapes}."
            )
    sizes = {s[0] for s in shapes}
    if len(sizes) != 1:
        raise ValueError(
            f"{name}.from_model_output(decode=...): the arrays of {what} disagree on the batch size (leading axis); "
            f"found shapes {shapes}."
        )
    return leaves, treedef, shapes[0][0]


def _decode_all(
    decode: Callable[[Any], Any], treedef: Any, leaves: list[Any], n: int, expected: type | None, side: str, name: str
) -> list[Any]:
    arrays = [np.asarray(x) for x in leaves]
    out = []
    for i in range(n):
        obj = decode(jax.tree_util.tree_unflatten(treedef, [a[i] for a in arrays]))
        if expected is not None and not isinstance(obj, expected):
            raise TypeError(
                f"{name}: the decode function for the {side} returned {type(obj).__module__}.{type(obj).__qualname__} "
                f"for example {i}; expected {expected.__module__}.{expected.__qualname__} (the metric's type)."
            )
        out.append(obj)
    return out


def host_state_sums(
    metric_cls: Any,
    sides: list[tuple[str, list[Any], Any, Callable[[Any], Any]]],
    n: int,
    weights: Any,
    extra: dict[str, Any] | None = None,
) -> Any:
    """Decode every example on the host and return the state's sums (named float32 pairs, NumPy).

    Args:
        metric_cls: the class whose ``_host_batch_sums`` takes the decoded sides, in order, then the weights.
        sides: per side ``(name, leaves, treedef, decode)``: the flattened arrays of a pytree with a leading axis.
        n: the batch size.
        weights: per-example weights (or ``None``).
        extra: arrays of one value per example (e.g. ``example_ids``), passed to ``_host_batch_sums`` by keyword.
    """
    name = metric_cls.metric_config.name
    expected = expected_type(metric_cls)
    decoded = [
        _decode_all(decode, treedef, list(leaves), n, expected, side, name) for side, leaves, treedef, decode in sides
    ]
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    kwargs = {k: np.asarray(v) for k, v in (extra or {}).items()}
    sums = metric_cls._host_batch_sums(*decoded, w, **kwargs)
    return jax.tree.map(lambda x: np.asarray(x, dtype=np.float32), sums)


def _probe_decode(
    decode: Callable[[Any], Any], treedef: Any, leaves: list[Any], expected: type | None, side: str, name: str
) -> None:
    """At trace time, decode an all-zero example of the right shapes and check the type it returns.

    A decode function that returns the wrong type is then reported as a ``TypeError`` to the caller of the traced
    function, before anything runs. A decode that fails on zeros (or returns the right type) is left to the runtime
    check on the real values.
    """
    if expected is None:
        return
    dummy = [np.zeros(tuple(x.shape[1:]), dtype=np.dtype(x.dtype)) for x in leaves]
    try:
        obj = decode(jax.tree_util.tree_unflatten(treedef, dummy))
    except Exception:  # noqa: BLE001 - zeros may be an invalid example; the runtime check covers it
        return
    if not isinstance(obj, expected):
        raise TypeError(
            f"{name}: the decode function for the {side} returned {type(obj).__module__}.{type(obj).__qualname__} "
            f"(on an all-zero example, at trace time); expected {expected.__module__}.{expected.__qualname__} "
            "(the metric's type)."
        )


def _is_traced(leaves: list[Any]) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in leaves)


def callback_state(
    metric_cls: type[SumsAccumulator],
    predictions: Any,
    references: Any,
    weights: Any = None,
    decode: Callable[[Any], Any] | None = None,
    decode_references: Callable[[Any], Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    """The state of one batch of arrays, decoded and matched on the host; usable inside ``jit`` / ``pmap``.

    Args:
        metric_cls: the metric class (e.g. ``D.metric``) or a suite class.
        predictions: arrays, or a pytree of arrays, with a leading batch axis ``n``.
        references: the same for the references (its pytree structure may differ).
        weights: optional non-negative per-example weights, shape ``(n,)`` or scalar (an array or a tracer).
        decode: host function from one example's slice of ``predictions`` (NumPy) to a structure.
        decode_references: host function for ``references`` (default ``decode``).
        extra: further per-example arrays (shape ``(n,)``) passed to the class's ``_host_batch_sums`` by keyword
            (the bootstrap's ``example_ids``).

    Returns:
        A ``metric_cls`` state equal to the host path's.

    Raises:
        ValueError: if the leading axes (or the weights' shape) disagree; at trace time.
        TypeError: if no decode function is given, or a decode function returns the wrong type (see module
            docstring for when).
    """
    return sides_state(
        metric_cls, {"predictions": predictions, "references": references}, weights, decode, decode_references, extra
    )


def sides_state(
    metric_cls: type[SumsAccumulator],
    sides: dict[str, Any],
    weights: Any = None,
    decode: Callable[[Any], Any] | None = None,
    decode_references: Callable[[Any], Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    """:func:`callback_state` for any number of sides: ``{name: pytree}``, the references last.

    Every side but the last is decoded with ``decode``, the last with ``decode_references`` (default ``decode``);
    ``metric_cls._host_batch_sums`` takes the decoded sides in order, then the weights (the randomization test's
    two systems and their references, for instance).
    """
    cfg = metric_cls.metric_config
    name = cfg.name
    if decode is None:
        raise TypeError(
            f"{name}.from_model_output: decode_references was given without decode; pass decode=fn for the "
            "predictions (decode_references defaults to it)."
        )
    if not callable(decode) or (decode_references is not None and not callable(decode_references)):
        raise TypeError(
            f"{name}.from_model_output: decode and decode_references must be callables (arrays -> structure)."
        )
    decoders = [decode] * (len(sides) - 1) + [decode if decode_references is None else decode_references]
    flat = [(side, *_leading(tree, side, name), dec) for (side, tree), dec in zip(sides.items(), decoders)]
    sizes = {size for _, _, _, size, _ in flat}
    if len(sizes) != 1:
        found = "; ".join(f"{side} {[tuple(np.shape(x)) for x in leaves]}" for side, leaves, _, _, _ in flat)
        raise ValueError(
            f"{name}.from_model_output: {' and '.join(sides)} must have the same batch size (leading axis); found "
            f"shapes {found}."
        )
    n = sizes.pop()
    w = None
    if weights is not None:
        w = jnp.asarray(weights, jnp.float32) if _is_traced([weights]) else np.asarray(weights, np.float64)
        if w.ndim == 0:
            w = jnp.broadcast_to(w, (n,)) if _is_traced([w]) else np.broadcast_to(w, (n,))
        if tuple(w.shape) != (n,):
            raise ValueError(
                f"{name}.from_model_output: weights must have shape ({n},), one per example, or be a scalar; found "
                f"shape {tuple(w.shape)}."
            )

    extra = dict(extra or {})
    for key, value in extra.items():
        if tuple(np.shape(value)) != (n,):
            raise ValueError(
                f"{name}.from_model_output: {key} must have shape ({n},), one per example; found {np.shape(value)}."
            )
    names = list(extra)
    parts = [(side, leaves, treedef, dec) for side, leaves, treedef, _, dec in flat]
    all_leaves = [x for _, leaves, _, _ in parts for x in leaves]
    if not _is_traced(all_leaves + ([] if w is None else [w]) + list(extra.values())):
        return metric_cls._from_sums(host_state_sums(metric_cls, parts, n, w, extra))

    expected = expected_type(metric_cls)
    for side, leaves, treedef, dec in parts:
        _probe_decode(dec, treedef, leaves, expected, side, name)
    counts = [len(leaves) for _, leaves, _, _ in parts]

    def host(*args: Any) -> Any:
        given, start = [], 0
        for (side, _, treedef, dec), k in zip(parts, counts):
            given.append((side, list(args[start : start + k]), treedef, dec))
            start += k
        wt = args[start] if w is not None else None
        rest = dict(zip(names, args[start + (w is not None) :]))
        return host_state_sums(metric_cls, given, n, wt, rest)

    operands = all_leaves + ([jnp.asarray(w, jnp.float32)] if w is not None else []) + [extra[k] for k in names]
    sums = jax.pure_callback(host, metric_cls._sums_shape(), *operands, vmap_method="sequential")
    return metric_cls._from_sums(sums)
