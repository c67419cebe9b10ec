r"""Reusable checks of the accumulator laws, for the metrics this library ships and for your own.

An accumulator class ``M`` (a :class:`~metametric_jax.protocol.Accumulator`: ``empty``, ``from_model_output``,
``merge``, ``reduce`` and ``compute``, such as ``D.metric``, a suite from :func:`~metametric_jax.make_suite`, or a
``clu.metrics.Metric``) obeys, for states
:math:`a, b, c` and the data :math:`D = D_1 \cup \dots \cup D_k` split into batches:

.. math::

    e \oplus a = a \oplus e = a, \qquad (a \oplus b) \oplus c = a \oplus (b \oplus c), \qquad a \oplus b = b \oplus a,

.. math::

    \mathrm{reduce}(\mathrm{stack}(s_1, \dots, s_k)) = s_1 \oplus \dots \oplus s_k, \qquad
    M(D) = M(D_1) \oplus \dots \oplus M(D_k),

where :math:`e` is ``M.empty()`` and :math:`\oplus` is ``merge``; and ``merge``, ``reduce`` and ``compute`` run under
``jax.jit`` with a jitted merge loop tracing once. These are the laws of a commutative monoid that CLU
(``clu.metrics``) and metrax rely on to merge per-batch, per-device and per-host states in any order.

States are compared through ``compute()``: every figure must agree within ``rtol`` / ``atol``.

Example:
    >>> from dataclasses import dataclass
    >>> from metametric_jax import metametric
    >>> from metametric_jax.testing import check_accumulator_laws
    >>> @metametric(normalizer="f1")
    ... @dataclass(frozen=True)
    ... class Doc:
    ...     spans: frozenset[tuple[int, int]]
    >>> preds = [Doc(frozenset({(0, 1), (2, 3)})), Doc(frozenset()), Doc(frozenset({(4, 5)}))]
    >>> refs = [Doc(frozenset({(0, 1)})), Doc(frozenset({(1, 2)})), Doc(frozenset({(4, 5)}))]
    >>> check_accumulator_laws(Doc.metric, preds, refs, batch_size=1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax.inputs import check_lengths
from metametric_jax.protocol import Accumulator

__all__ = [
    "split_batches",
    "batch_states",
    "flatten_results",
    "assert_states_close",
    "check_compute_output",
    "check_identity",
    "check_associative",
    "check_commutative",
    "check_stack_reduce",
    "check_batching",
    "check_jit",
    "check_accumulator_laws",
]


def _name(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    cfg = getattr(cls, "metric_config", None)
    return getattr(cfg, "name", None) or cls.__name__


def split_batches(
    predictions: Sequence[Any], references: Sequence[Any], weights: Any = None, batch_size: int = 1
) -> list[tuple[list[Any], list[Any], np.ndarray | None]]:
    """Consecutive batches ``(predictions, references, weights)`` of at most ``batch_size`` examples.

    Raises:
        ValueError: if the lengths differ or ``batch_size`` is not a positive integer.
    """
    check_lengths(predictions, references, "split_batches")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer; found {batch_size!r}.")
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    out = []
    for start in range(0, len(predictions), batch_size):
        stop = start + batch_size
        out.append((list(predictions[start:stop]), list(references[start:stop]), None if w is None else w[start:stop]))
    return out


def _from_model_output(
    metric_cls: type[Accumulator], predictions: Sequence[Any], references: Sequence[Any], weights: Any
) -> Any:
    if weights is None:
        return metric_cls.from_model_output(predictions, references)
    return metric_cls.from_model_output(predictions, references, weights)


def batch_states(
    metric_cls: type[Accumulator],
    predictions: Sequence[Any],
    references: Sequence[Any],
    weights: Any = None,
    batch_size: int = 1,
) -> list[Any]:
    """One state per batch (``metric_cls.from_model_output`` of each batch of :func:`split_batches`)."""
    return [
        _from_model_output(metric_cls, p, r, w)
        for p, r, w in split_batches(predictions, references, weights, batch_size)
    ]


def flatten_results(results: Any, prefix: str = "") -> dict[str, np.ndarray]:
    """The figures of a ``compute()`` result (a possibly nested mapping, or one array) as ``{path: ndarray}``."""
    if isinstance(results, Mapping):
        out: dict[str, np.ndarray] = {}
        for key, value in results.items():
            out.update(flatten_results(value, f"{prefix}/{key}" if prefix else str(key)))
        return out
    return {prefix or "value": np.asarray(results)}


def assert_states_close(actual: Any, expected: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert two states have the same structure and ``compute()`` the same figures.

    Raises:
        AssertionError: naming the law (``what``), the figure and both values.
    """
    ta: Any = jax.tree.structure(actual)
    te: Any = jax.tree.structure(expected)
    if ta != te:
        raise AssertionError(f"{what}: the states differ in structure:\n  {ta}\nvs\n  {te}")
    for la, le in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        if np.shape(la) != np.shape(le):
            raise AssertionError(f"{what}: a state leaf has shape {np.shape(la)}, expected {np.shape(le)}.")
    ra, re = flatten_results(actual.compute()), flatten_results(expected.compute())
    if ra.keys() != re.keys():
        raise AssertionError(f"{what}: compute() returned keys {sorted(ra)}, expected {sorted(re)}.")
    for key in re:
        a = np.asarray(ra[key], dtype=np.float64)
        e = np.asarray(re[key], dtype=np.float64)
        if a.shape != e.shape or not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(
                f"{what}: compute()[{key!r}] is {a.tolist()}, expected {e.tolist()} (rtol={rtol}, atol={atol})."
            )


def check_compute_output(state: Accumulator) -> None:
    """``compute()`` returns a mapping whose figures are all 0-d floating arrays.

    Raises:
        AssertionError: naming the figure that is not a 0-d float.
    """
    results = state.compute()
    if not isinstance(results, Mapping):
        raise AssertionError(f"{_name(state)}.compute() must return a dict of figures; found {type(results).__name__}.")
    for key, value in flatten_results(results).items():
        arr = jnp.asarray(value)
        if arr.ndim != 0 or not jnp.issubdtype(arr.dtype, jnp.floating):
            raise AssertionError(
                f"{_name(state)}.compute()[{key!r}] must be a 0-d float array; found shape {arr.shape}, "
                f"dtype {arr.dtype}."
            )


def check_identity(state: Accumulator, *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    r"""``empty()`` is the identity of ``merge``: :math:`e \oplus a = a \oplus e = a`."""
    empty: Any = type(state).empty()
    assert_states_close(empty.merge(state), state, what=f"{_name(state)}: empty().merge(a) != a", rtol=rtol, atol=atol)
    assert_states_close(state.merge(empty), state, what=f"{_name(state)}: a.merge(empty()) != a", rtol=rtol, atol=atol)


def check_associative(a: Any, b: Any, c: Any, *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    r"""``merge`` is associative: :math:`(a \oplus b) \oplus c = a \oplus (b \oplus c)`."""
    assert_states_close(
        a.merge(b).merge(c), a.merge(b.merge(c)), what=f"{_name(a)}: merge is not associative", rtol=rtol, atol=atol
    )


def check_commutative(a: Any, b: Any, *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    r"""``merge`` is commutative: :math:`a \oplus b = b \oplus a`."""
    assert_states_close(a.merge(b), b.merge(a), what=f"{_name(a)}: merge is not commutative", rtol=rtol, atol=atol)


def _merge_all(states: Sequence[Any]) -> Any:
    total = states[0]
    for s in states[1:]:
        total = total.merge(s)
    return total


def _stack(states: Sequence[Any]) -> Any:
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


def check_stack_reduce(states: Sequence[Accumulator], *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Stacking states along a new leading axis and calling ``reduce()`` equals merging them one by one."""
    if not states:
        raise ValueError("check_stack_reduce needs at least one state.")
    reduced = _stack(states).reduce()
    assert_states_close(
        reduced,
        _merge_all(states),
        what=f"{_name(states[0])}: reduce() of {len(states)} stacked states != merging them one by one",
        rtol=rtol,
        atol=atol,
    )


def check_batching(
    metric_cls: type[Accumulator],
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    weights: Any = None,
    batch_size: int = 1,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """One batch of all the data equals the same data in batches of ``batch_size``, merged."""
    whole = _from_model_output(metric_cls, list(predictions), list(references), weights)
    parts = batch_states(metric_cls, predictions, references, weights, batch_size)
    merged = metric_cls.empty()
    for s in parts:
        merged = merged.merge(s)
    assert_states_close(
        merged,
        whole,
        what=f"{_name(metric_cls)}: {len(parts)} batches of {batch_size} merged != one batch of {len(predictions)}",
        rtol=rtol,
        atol=atol,
    )


# one jitted function each for every check: a class checked again reuses its compiled program (a suite's compute()
# takes about a second to compile)
_jitted_reduce = jax.jit(lambda x: x.reduce())
_jitted_compute = jax.jit(lambda x: x.compute())


def check_jit(states: Sequence[Accumulator], *, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """``merge``, ``reduce`` and ``compute`` run under ``jax.jit``; a jitted merge loop traces once.

    The jitted results must equal the eager ones; traces are counted with a Python side effect inside the jitted
    function.
    """
    if not states:
        raise ValueError("check_jit needs at least one state.")
    name = _name(states[0])
    traces: list[int] = []

    def step(acc: Any, s: Any) -> Any:
        traces.append(1)
        return acc.merge(s)

    jstep = jax.jit(step)
    acc: Any = type(states[0]).empty()
    for s in states:
        acc = jstep(acc, s)
    if len(traces) != 1:
        raise AssertionError(
            f"{name}: a jitted merge loop over {len(states)} states traced {len(traces)} times, expected once "
            "(a state changes dtype, shape or static configuration between steps)."
        )
    eager = _merge_all(states)
    assert_states_close(acc, eager, what=f"{name}: jitted merge loop != eager merges", rtol=rtol, atol=atol)
    reduced = _jitted_reduce(_stack(states))
    assert_states_close(reduced, eager, what=f"{name}: jitted reduce() != eager merges", rtol=rtol, atol=atol)
    computed = flatten_results(_jitted_compute(eager))
    expected = flatten_results(eager.compute())
    for key, value in expected.items():
        if key not in computed or not np.allclose(computed[key], value, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(
                f"{name}: jitted compute()[{key!r}] is {computed.get(key)}, expected {value} (rtol={rtol})."
            )


def check_accumulator_laws(
    metric_cls: type[Accumulator],
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    weights: Any = None,
    batch_size: int | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """Run every law on ``metric_cls`` with the given data (at least 3 examples).

    Args:
        metric_cls: the accumulator class.
        predictions: predicted structures (what ``from_model_output`` takes).
        references: reference structures, same length.
        weights: optional per-example weights passed to ``from_model_output``.
        batch_size: the batch size of the batched states; default ``len(predictions) // 3`` (at least 1), so there
            are at least three states for associativity.
        rtol: relative tolerance of the comparisons of ``compute()`` figures.
        atol: absolute tolerance.

    Raises:
        AssertionError: naming the first law that fails, the figure and both values.
        ValueError: on fewer than 3 examples or mismatched lengths.
    """
    n = len(predictions)
    if n < 3:
        raise ValueError(f"check_accumulator_laws needs at least 3 examples (three states); found {n}.")
    bs = batch_size if batch_size is not None else max(1, n // 3)
    states = batch_states(metric_cls, predictions, references, weights, bs)
    if len(states) < 3:
        raise ValueError(
            f"check_accumulator_laws needs at least 3 batches; {n} examples in batches of {bs} give {len(states)}."
        )
    tol = {"rtol": rtol, "atol": atol}
    check_compute_output(metric_cls.empty())
    for s in states:
        check_compute_output(s)
        check_identity(s, **tol)
    check_associative(states[0], states[1], states[2], **tol)
    check_commutative(states[0], states[-1], **tol)
    check_stack_reduce(states, **tol)
    check_batching(metric_cls, predictions, references, weights=weights, batch_size=bs, **tol)
    check_jit(states, **tol)
