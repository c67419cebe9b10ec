r"""Every core of a machine: host matching in worker processes, one merged state, the same figures.

A metric's state is a sum over examples, so matching (the expensive part: Smatch's integer programs, coreference's
per-document counts, alignments) splits into chunks of examples that worker processes match independently. Workers
return per-example statistics as NumPy; the parent builds the state from them, in the order of the examples, so the
result equals one process's:

* :func:`from_model_output` ``(M, predictions, references, *, jobs)`` — the state of a metric, suite, bootstrap or
  randomization class ``M``, identical to ``M.from_model_output(predictions, references)`` (every sum bit for bit:
  the parent sums the same per-example rows in the same order);
* :func:`map_items` / :func:`map_rows` — any per-example function over chunks (what ``metametric-jax score TASK
  --jobs N`` runs), results in the order of the items.

Workers start by ``forkserver`` (``spawn`` where it is missing, or where ``$METAMETRIC_JAX_START_METHOD`` says
``spawn``), never by ``fork``: a process that has started JAX must not fork. :func:`prepare` starts the fork server
early, so that it imports the task's modules while this process reads its input. Workers do not import JAX when the
statistics function pickles by reference from a module that does not (the task metrics' functions, ``dsl``
similarities, ``stats_metric`` with a module-level function); a class whose function does not pickle is sent instead
and rebuilt in the worker (which then imports JAX, without using it). Like any ``spawn`` or ``forkserver`` worker,
a worker imports the ``__main__`` module of a script (not of ``python -m`` or an interactive session).
``jobs=0`` means every core this process may use (:func:`available_cores`). Map calls inside a
:func:`reusing` block share one pool (a command that maps several times starts its workers once). Workers run their
numeric libraries on one thread each (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` are ``1``
where the environment does not set them): the processes are the parallelism. The pool, its workers and the ``map_*``
functions live in :mod:`metametric_jax._pool` (re-exported here); this module builds metric states from them and
holds the reductions that engines (Beam, Dask) call.

Warnings a worker raises are raised again in the parent, once per distinct message; an error in a worker is raised in
the parent with its type, naming the example (``example 117``) and with positions in its message counted in the whole
batch; the worker's traceback is its cause. ``progress(done, total)`` is called in the parent as chunks finish.

Example:
    >>> from metametric_jax.tasks.amr import SmatchMetric
    >>> from metametric_jax import parallel
    >>> preds, refs = ["(b / boy)", "(g / girl)"], ["(b / boy :mod (t / tall))", "(g / girl)"]
    >>> state = parallel.from_model_output(SmatchMetric, preds, refs, jobs=1)
    >>> round(float(state.compute()["f1"]), 4)
    0.8
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._pool import (
    CHUNKS_PER_WORKER,
    START_METHOD,
    THREAD_VARIABLES,
    RunInfo,
    available_cores,
    last_run,
    map_chunks,
    map_items,
    map_rows,
    prepare,
    resolve_jobs,
    reusing,
)

__all__ = [
    "available_cores",
    "resolve_jobs",
    "map_items",
    "map_rows",
    "map_chunks",
    "prepare",
    "reusing",
    "from_model_output",
    "state_of",
    "merged",
    "element_shape",
    "gather",
    "RunInfo",
    "last_run",
    "CHUNKS_PER_WORKER",
    "START_METHOD",
    "THREAD_VARIABLES",
]


# ------------------------------------------------------------------------------------------------------- metrics
class _Statistics:
    """A metric's (or suite's) per-example statistics of a batch, from its statistics functions (no JAX needed).

    ``fn`` is the metric's (or a suite's one-pass) statistics function; ``members`` a suite's members' functions
    when it has none; ``width`` a metric's number of statistics columns (3 and its tallies).
    """

    def __init__(self, fn: Any, members: dict[str, tuple[Any, int]] | None, width: int, suite: bool) -> None:
        self.fn = fn
        self.members = members
        self.width = width
        self.suite = suite

    @staticmethod
    def _array(out: Any, width: int) -> np.ndarray:
        arr = np.asarray(out, dtype=np.float64)
        return arr.reshape(-1, width if arr.ndim == 2 and arr.shape[1] > 3 else 3)

    def __call__(self, predictions: Sequence[Any], references: Sequence[Any]) -> Any:
        if self.members is not None:
            return {k: self._array(fn(predictions, references), w) for k, (fn, w) in self.members.items()}
        out = self.fn(predictions, references)
        if self.suite:
            return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}
        return self._array(out, self.width)


class _ClassStatistics:
    """The same statistics from the class itself (rebuilt in the worker, which then imports JAX)."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def __call__(self, predictions: Sequence[Any], references: Sequence[Any]) -> Any:
        if hasattr(self.metric, "member_stats"):
            return {k: np.asarray(v, np.float64) for k, v in self.metric.member_stats(predictions, references).items()}
        return self.metric.batch_stats(predictions, references)


def _statistics(metric: Any) -> Any:
    """A picklable statistics function for ``metric`` (a metric or suite class): its own functions if they pickle."""
    from metametric_jax.suite import Suite

    cfg = metric.metric_config
    suite = issubclass(metric, Suite)
    if suite and cfg.batch_stats is None:
        members = {k: (m.metric_config.batch_stats, 3 + len(m.metric_config.tallies)) for k, m in cfg.members}
        task = _Statistics(None, members, 3, True)
        usable = all(fn is not None for fn, _ in members.values())
    else:
        task = _Statistics(cfg.batch_stats, None, 3 + len(getattr(cfg, "tallies", ())), suite)
        usable = cfg.batch_stats is not None
    if not usable:
        raise TypeError(f"{cfg.name} has no statistics function; build its states with from_stats().")
    try:
        pickle.dumps(task)
        return task
    except Exception:
        fallback = _ClassStatistics(metric)
        try:
            pickle.dumps(fallback)
        except Exception as err:
            raise TypeError(
                f"{cfg.name}: neither its statistics function nor its class can be sent to worker processes ({err}); "
                "build it from module-level functions, or use jobs=1."
            ) from err
        return fallback


def from_model_output(
    metric: Any,
    predictions: Any,
    references: Sequence[Any],
    weights: Any = None,
    *,
    jobs: int,
    chunk_size: int | None = None,
    example_ids: Any = None,
    progress: Callable[[int, int], Any] | None = None,
) -> Any:
    """The state of ``metric`` for a batch, matched in ``jobs`` worker processes: equal to one process's.

    Workers compute each example's statistics (``metric.batch_stats``; a suite's members'; for a bootstrap or
    randomization class, its metric's); this process builds the state from them in the order of the examples, as
    ``metric.from_model_output`` does from its own statistics: every sum is the same, bit for bit.

    Args:
        metric: a metric or suite class, or a :func:`~metametric_jax.significance.bootstrap` or
            :func:`~metametric_jax.significance.randomization` class.
        predictions: one predicted structure per example; for a randomization class the pair ``(predictions_a,
            predictions_b)``.
        references: the reference structures, same length.
        weights: optional non-negative per-example weights (as ``from_model_output`` takes them).
        jobs: worker processes (0: every core; 1: this process only).
        chunk_size: examples per chunk (default: about :data:`CHUNKS_PER_WORKER` chunks per worker).
        example_ids: for bootstrap and randomization classes, one integer per example (default: the class's running
            positions, as ``from_model_output``).
        progress: called as ``progress(done, total)`` as chunks of examples finish.

    Raises:
        TypeError: if ``metric`` is not one of those classes, or ``example_ids`` are given to a plain metric.
        ValueError: on different lengths, bad ``jobs`` or ``chunk_size``; an error raised while matching, raised
            again naming the example.
    """
    from metametric_jax import resampling
    from metametric_jax.accumulate import Metric
    from metametric_jax.suite import Suite

    if not isinstance(metric, type):
        raise TypeError(f"parallel.from_model_output expects a metric class; found {type(metric).__name__}.")
    cls: Any = metric
    if hasattr(metric, "resampling"):
        base = metric.resampling.metric
        two = "swapped_a" in getattr(metric, "__dataclass_fields__", {})
        if two:
            predictions_a, predictions_b = predictions
            n = len(references)
            if len(predictions_a) != n or len(predictions_b) != n:
                raise ValueError(
                    f"{metric.resampling.name}: both systems need one prediction per reference; found "
                    f"{len(predictions_a)} and {len(predictions_b)} for {n} references."
                )
            both = _stats(
                base, [*predictions_a, *predictions_b], [*references, *references], jobs, chunk_size, progress
            )
            a, b = _split(both, n)
            return cls.from_model_output(
                resampling.Precomputed(a), resampling.Precomputed(b), references, weights, example_ids=example_ids
            )
        _same_length(predictions, references, metric.resampling.name)
        stats = _stats(base, predictions, references, jobs, chunk_size, progress)
        return cls.from_model_output(resampling.Precomputed(stats), references, weights, example_ids=example_ids)
    if not issubclass(metric, (Metric, Suite)):
        raise TypeError(f"parallel.from_model_output expects a metric, suite or resampling class; found {metric!r}.")
    if example_ids is not None:
        raise TypeError("example_ids are for bootstrap and randomization classes; a metric's state does not keep them.")
    _same_length(predictions, references, metric.metric_config.name)
    stats = _stats(metric, predictions, references, jobs, chunk_size, progress)
    if issubclass(metric, Suite):
        return metric.from_member_stats(stats, weights)
    return metric.from_stats(stats, weights)


def _same_length(predictions: Any, references: Any, name: str) -> None:
    from metametric_jax.inputs import check_batch

    check_batch(predictions, references, name)


def _stats(
    metric: Any,
    predictions: Sequence[Any],
    references: Sequence[Any],
    jobs: int,
    chunk_size: int | None,
    progress: Callable[[int, int], Any] | None,
) -> Any:
    task = _statistics(metric)
    preload = [_module_of(task.fn)] if isinstance(task, _Statistics) else []
    preload = [m for m in preload if m.startswith("metametric_jax.")]
    return map_rows(
        task,
        list(predictions),
        list(references),
        jobs=jobs,
        chunk_size=chunk_size,
        progress=progress,
        preload=preload,
    )


def _module_of(fn: Any) -> str:
    """The module defining a function (through partials and bound methods), or ``""``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, type):
        fn = type(owner)
    return str(getattr(fn, "__module__", "") or "")


def _split(stats: Any, n: int) -> tuple[Any, Any]:
    if isinstance(stats, Mapping):
        return {k: v[:n] for k, v in stats.items()}, {k: v[n:] for k, v in stats.items()}
    return stats[:n], stats[n:]


# ------------------------------------------------------------------------------------------------------- engines
def element_shape(metric: Any) -> tuple[bool, int]:
    """``(with_ids, arity)``: whether ``metric``'s elements carry an example id, and how many structures they hold.

    A metric or suite takes ``(prediction, reference)``; a bootstrap class ``(example_id, (prediction, reference))``;
    a randomization class ``(example_id, (prediction_a, prediction_b, reference))``.
    """
    return hasattr(metric, "resampling"), 3 if "swapped_a" in getattr(metric, "__dataclass_fields__", {}) else 2


def gather(metric: Any, elements: Any) -> tuple[list[list[Any]], list[int]]:
    """The ``from_model_output`` arguments of examples given as elements (see :func:`element_shape`): sides, ids.

    Raises:
        ValueError: an element of another shape, or one without an id for a bootstrap or randomization class
            (running positions mean nothing across workers).
    """
    with_ids, arity = element_shape(metric)
    cfg = getattr(metric, "resampling", None) or getattr(metric, "metric_config", None)
    name = getattr(cfg, "name", getattr(metric, "__name__", "metric"))
    inner = "(prediction_a, prediction_b, reference)" if arity == 3 else "(prediction, reference)"
    sides: list[list[Any]] = [[] for _ in range(arity)]
    ids: list[int] = []
    for element in elements:
        if with_ids:
            shaped = isinstance(element, Sequence) and len(element) == 2 and isinstance(element[1], (tuple, list))
            if not (shaped and isinstance(element[0], (int, np.integer)) and not isinstance(element[0], bool)):
                raise ValueError(
                    f"{name}: a bootstrap or randomization class takes elements (example_id, {inner}) with integer "
                    f"ids; running positions mean nothing across workers. Found {_short(element)}."
                )
            ids.append(int(element[0]))
            element = element[1]
        if not (isinstance(element, (tuple, list)) and len(element) == arity):
            raise ValueError(f"{name}: expected an element {inner}; found {_short(element)}.")
        for side, value in zip(sides, element):
            side.append(value)
    return sides, ids


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def state_of(metric: Any, elements: Any) -> Any:
    """The state of examples given as elements (see :func:`element_shape`), such as a Dask bag's partition.

    With :func:`merged`, a ``dask.bag`` reduction: ``bag.reduction(functools.partial(state_of, M), merged)``.
    """
    sides, ids = gather(metric, elements)
    if not sides[0]:
        return metric.empty()
    extra = {"example_ids": np.asarray(ids, np.int64)} if ids or hasattr(metric, "resampling") else {}
    return metric.from_model_output(*sides, **extra)


def merged(states: Any) -> Any:
    """The merge of states (an iterable; at least one), in order."""
    out = None
    for state in states:
        out = state if out is None else out.merge(state)
    if out is None:
        raise ValueError("merged needs at least one state.")
    return out
