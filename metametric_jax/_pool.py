r"""Worker processes: the pool, its workers, and any per-example function over chunks of items (``map_*``).

A function applied to consecutive chunks of the items, in ``jobs`` worker processes, gives its results in the order of
the items (:func:`map_items`, :func:`map_rows`, :func:`map_chunks`): what ``metametric-jax score TASK --jobs N`` runs,
and what :func:`metametric_jax.parallel.from_model_output` runs for a metric's statistics. Workers start by
``forkserver`` (``spawn`` where it is missing, or where ``$METAMETRIC_JAX_START_METHOD`` says ``spawn``), never by
``fork``; :func:`prepare` starts the fork server early. Warnings a worker raises are raised again in this process,
once per distinct message; an error in a worker is raised here with its type, naming the example, positions in its
message counted in the whole batch (see :mod:`metametric_jax.parallel`). The public names are re-exported by
:mod:`metametric_jax.parallel`, where they are documented for users.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import pickle
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import concurrent.futures

__all__ = [
    "CHUNKS_PER_WORKER",
    "START_METHOD",
    "available_cores",
    "resolve_jobs",
    "map_items",
    "map_rows",
    "map_chunks",
    "prepare",
    "reusing",
    "THREAD_VARIABLES",
    "RunInfo",
    "last_run",
]

#: chunks per worker when no chunk size is given (several, so that uneven examples balance out)
CHUNKS_PER_WORKER = 8

#: warnings of these categories are not raised again in the parent (libraries' notices, not the metric's)
_QUIET = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def available_cores() -> int:
    """The number of CPU cores this process may run on (its affinity mask, not the machine's count)."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        n = count()
    else:
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            n = os.cpu_count()
    return max(1, int(n or 1))


def resolve_jobs(jobs: int) -> int:
    """The number of worker processes for ``jobs``: itself, or :func:`available_cores` for 0.

    Raises:
        ValueError: if ``jobs`` is not a non-negative integer.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 0:
        raise ValueError(f"jobs must be a non-negative integer (0: every core); found {jobs!r}.")
    return available_cores() if jobs == 0 else int(jobs)


@dataclasses.dataclass
class RunInfo:
    """What the last parallel call of this process did (for diagnostics and benchmarks).

    Attributes:
        jobs: the worker processes used (1: none, the work ran in this process).
        chunks: the number of chunks.
        start_method: ``"forkserver"`` or ``"spawn"`` (``None`` without workers).
        jax_in_workers: whether JAX was imported in any worker when it finished a chunk.
    """

    jobs: int = 1
    chunks: int = 0
    start_method: str | None = None
    jax_in_workers: bool = False


_LAST = RunInfo()


def last_run() -> RunInfo:
    """The :class:`RunInfo` of the last :func:`map_items`, :func:`map_rows` or :func:`from_model_output` call."""
    return dataclasses.replace(_LAST)


# ------------------------------------------------------------------------------------------------------- workers
@dataclasses.dataclass
class _Failure:
    index: int | None  # the failing example (None: only the chunk as a whole fails)
    start: int  # the chunk's first example
    error: Any  # an exception, or (class, args, attributes) of one that does not pickle back
    trace: str


@dataclasses.dataclass
class _Done:
    start: int
    result: Any
    warnings: list[tuple[type[Warning], str]]
    jax: bool
    failure: _Failure | None = None


_TASK: Any = None  # the function a worker applies to its chunks
_PAYLOAD: bytes | None = None  # its pickle: a worker unpickles a task once, while the chunks it gets carry the same one


def _portable_error(err: BaseException) -> Any:
    """The exception itself if it pickles back, else its class, arguments and attributes (rebuilt by the parent)."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        pass
    try:
        record = (type(err), err.args, dict(vars(err)))
        pickle.loads(pickle.dumps(record))
        return record
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")


def _rebuilt(error: Any) -> BaseException:
    if isinstance(error, BaseException):
        return error
    cls, args, attributes = error
    err = cls.__new__(cls)
    err.args = args
    vars(err).update(attributes)
    return err


def _caught(records: list[warnings.WarningMessage]) -> list[tuple[type[Warning], str]]:
    out = []
    for w in records:
        category = w.category
        if issubclass(category, _QUIET):
            continue
        try:
            pickle.dumps(category)
        except Exception:
            category = UserWarning
        out.append((category, str(w.message)))
    return out


def _apply(task: Any, start: int, columns: tuple[list[Any], ...]) -> _Done:
    """``task(*columns)`` with its warnings recorded; on an error, the first example that fails alone."""
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        try:
            result = task(*columns)
        except Exception as err:
            trace = traceback.format_exc()
            index = None
            for i in range(len(columns[0]) if columns else 0):
                try:
                    task(*(c[i : i + 1] for c in columns))
                except Exception:
                    index = start + i
                    break
            failure = _Failure(index, start, _portable_error(err), trace)
            return _Done(start, None, [], "jax" in sys.modules, failure)
    return _Done(start, result, _caught(records), "jax" in sys.modules)


def _work(payload: bytes, start: int, columns: tuple[list[Any], ...]) -> _Done:
    global _TASK, _PAYLOAD
    if payload != _PAYLOAD:
        _TASK, _PAYLOAD = pickle.loads(payload), payload
    return _apply(_TASK, start, columns)


# ------------------------------------------------------------------------------------------------------- the parent
class _RemoteTracebackError(Exception):
    def __init__(self, trace: str) -> None:
        self.trace = trace

    def __str__(self) -> str:
        return f'\n"""\n{self.trace}"""'


def _shift(message: str, offset: int) -> str:
    """Positions in a chunk's message (``[3]``, ``example 3``, ``sentence 3``...) counted in the whole batch instead."""
    if not offset:
        return message

    def renumber(m: re.Match[str]) -> str:
        return f"{m.group(1)}{int(m.group(2)) + offset}"

    return re.sub(r"(\[|\b(?:example|sentence|document|query|pair) )(\d+)(?=\]|\b)", renumber, message)


def _raise(failure: _Failure) -> None:
    from metametric_jax.errors import InputFormatError

    err = _rebuilt(failure.error)
    if failure.index is not None:
        suffix = f" (example {failure.index}, matched in a worker process)"
    else:
        suffix = f" (examples from {failure.start}, matched together in a worker process)"
    new: BaseException | None = None
    if isinstance(err, InputFormatError):  # its file and line say where; a label such as <prediction[3]> is shifted
        new = InputFormatError(_shift(err.path, failure.start), err.line, _shift(err.message, failure.start))
    else:
        message = _shift(str(err), failure.start) + suffix
        try:
            new = type(err)(message)
            if str(new) != message:
                new = None
        except Exception:
            new = None
    if new is None:  # an exception not built from its message: itself, with a note
        new = err
        new.add_note(f"positions in the message count from example {failure.start}{suffix}")
    if new is not err:
        raise new from _RemoteTracebackError(failure.trace)
    raise new


def _bounds(n: int, jobs: int, chunk_size: int | None) -> list[tuple[int, int]]:
    if chunk_size is None:
        chunk_size = max(1, math.ceil(n / (jobs * CHUNKS_PER_WORKER))) if jobs > 1 else max(n, 1)
    elif isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer; found {chunk_size!r}.")
    return [(lo, min(n, lo + int(chunk_size))) for lo in range(0, n, int(chunk_size))]


#: the environment variable that picks the start method of the workers (``forkserver`` or ``spawn``)
START_METHOD = "METAMETRIC_JAX_START_METHOD"


def _context() -> Any:
    import multiprocessing  # here: a run without workers does not import the machinery of processes

    method = os.environ.get(START_METHOD) or (
        "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    )
    if method not in ("forkserver", "spawn"):
        raise ValueError(f"${START_METHOD} must be 'forkserver' or 'spawn' (never 'fork'); found {method!r}.")
    return multiprocessing.get_context(method)


def prepare(jobs: int, preload: Sequence[str] = ()) -> None:
    """Start the fork server now, importing ``preload`` (modules that exist), when ``jobs`` asks for workers.

    Call it before reading the input: the server's imports then overlap the reading. Nothing happens for
    ``jobs=1``, under ``spawn``, or once the server runs.
    """
    if jobs == 1 or resolve_jobs(jobs) < 2:
        return
    ctx = _context()
    if ctx.get_start_method() != "forkserver":
        return
    import importlib.util
    from multiprocessing import forkserver

    def exists(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    ctx.set_forkserver_preload(["metametric_jax.parallel", *(m for m in preload if exists(m))])
    with _one_thread_per_worker():
        forkserver.ensure_running()


#: the numeric libraries' thread counts that workers get (``1`` where the user's environment does not say): the
#: parallelism is the processes; BLAS threads of their own would compete for the same cores, and OpenBLAS's keep
#: spinning for a while after every call
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def _one_thread_per_worker() -> Any:
    """The environment that worker processes (and the fork server) start in: :data:`THREAD_VARIABLES` set."""
    added = [name for name in THREAD_VARIABLES if name not in os.environ]
    for name in added:
        os.environ[name] = "1"
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@dataclasses.dataclass
class _Shared:
    workers: int
    pool: concurrent.futures.ProcessPoolExecutor | None = None


_SHARED: list[_Shared] = []


@contextlib.contextmanager
def reusing(jobs: int) -> Any:
    """Within the block, the map calls of ``jobs`` workers share one pool, started by the first that needs workers.

    A command that maps several times (an analysis: each system, each stage) then starts its workers once; without
    it every call starts and stops its own. The pool stops when the block ends.
    """
    shared = _Shared(resolve_jobs(jobs))
    _SHARED.append(shared)
    try:
        yield
    finally:
        _SHARED.remove(shared)
        if shared.pool is not None:
            shared.pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _main_importable() -> Any:
    """Workers import the ``__main__`` of a script; one read from standard input (``<stdin>``) they cannot: hide it."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None or os.path.exists(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _concat(parts: list[Any]) -> Any:
    first = parts[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(parts, axis=0)
    if isinstance(first, Mapping):
        return {k: _concat([p[k] for p in parts]) for k in first}
    return [x for p in parts for x in p]


def _length(result: Any) -> int:
    if isinstance(result, Mapping):
        return min((_length(v) for v in result.values()), default=0)
    return len(result)


def _run(
    task: Any,
    columns: Sequence[Sequence[Any]],
    jobs: int,
    chunk_size: int | None,
    progress: Callable[[int, int], Any] | None,
    preload: Sequence[str],
    per_item: bool = True,
) -> list[Any]:
    """The chunk results of ``task`` over ``columns``, in order (warnings raised again, errors raised).

    With ``per_item`` each chunk's result must hold one entry per item of the chunk.
    """
    global _LAST
    n = len(columns[0]) if columns else 0
    if any(len(c) != n for c in columns):
        raise ValueError(f"every sequence needs one item per example; found lengths {[len(c) for c in columns]}.")
    workers = resolve_jobs(jobs)
    bounds = _bounds(n, workers, chunk_size)
    workers = min(workers, len(bounds))
    done: dict[int, _Done] = {}
    if workers <= 1:  # in this process: errors and warnings as the function raises them
        _LAST = RunInfo(1, len(bounds), None, False)
        results = []
        for lo, hi in bounds:
            result = task(*(c[lo:hi] for c in columns))
            if per_item:
                _check(_Done(lo, result, [], False), hi - lo)
            results.append(result)
            if progress is not None:
                progress(hi, n)
        return results
    import concurrent.futures
    from concurrent.futures.process import BrokenProcessPool

    payload = pickle.dumps(task)
    ctx = _context()
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["metametric_jax.parallel", *preload])
    shared = next((s for s in reversed(_SHARED) if s.workers == resolve_jobs(jobs)), None)
    _LAST = RunInfo(shared.workers if shared else workers, len(bounds), ctx.get_start_method(), False)
    failed: int | None = None
    finished = 0
    with contextlib.ExitStack() as stack:
        stack.enter_context(_main_importable())
        stack.enter_context(_one_thread_per_worker())  # workers start at the first submit
        if shared is None:
            pool = stack.enter_context(concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx))
        else:
            if shared.pool is None:
                shared.pool = concurrent.futures.ProcessPoolExecutor(shared.workers, mp_context=ctx)
            pool = shared.pool
        futures = {
            pool.submit(_work, payload, lo, tuple(list(c[lo:hi]) for c in columns)): k
            for k, (lo, hi) in enumerate(bounds)
        }
        try:
            for future in concurrent.futures.as_completed(futures):
                k = futures[future]
                if future.cancelled():
                    continue
                try:
                    item = future.result()
                except BrokenProcessPool as err:
                    if shared is not None:
                        shared.pool = None  # the next call starts a new one
                    raise RuntimeError(
                        "a worker process stopped (it could not start, unpickle the task or import its module, or it "
                        f'was killed; a script must start workers under `if __name__ == "__main__":`): {err}'
                    ) from err
                done[k] = item
                _LAST.jax_in_workers |= item.jax
                if item.failure is not None:
                    if failed is None or k < failed:
                        failed = k
                        for other, j in futures.items():
                            if j > k:
                                other.cancel()
                    continue
                finished += bounds[k][1] - bounds[k][0]
                if progress is not None and failed is None:
                    progress(finished, n)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    if failed is not None:
        first = min(k for k, item in done.items() if item.failure is not None)
        failure = done[first].failure
        assert failure is not None
        _raise(failure)
    seen: set[tuple[type[Warning], str]] = set()
    for k, (lo, hi) in enumerate(bounds):
        if per_item:
            _check(done[k], hi - lo)
        _rewarn(done[k].warnings, seen)
    return [done[k].result for k in range(len(bounds))]


def _check(item: _Done, expected: int) -> None:
    got = _length(item.result)
    if got != expected:
        raise ValueError(f"a chunk of {expected} examples gave {got} results; the function must give one per example.")


def _rewarn(caught: list[tuple[type[Warning], str]], seen: set[tuple[type[Warning], str]]) -> None:
    for category, message in caught:
        if (category, message) not in seen:
            seen.add((category, message))
            warnings.warn(message, category, stacklevel=4)


def map_items(
    fn: Callable[..., Sequence[Any]],
    *columns: Sequence[Any],
    jobs: int = 1,
    chunk_size: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    preload: Sequence[str] = (),
) -> list[Any]:
    """``fn`` over consecutive chunks of the items, in ``jobs`` worker processes: one result per item, in order.

    Args:
        fn: ``fn(*chunk_columns) -> sequence`` of one result per item of the chunk; picklable (a module-level
            function or a ``functools.partial`` of one) when ``jobs`` is not 1.
        *columns: sequences of one item per example (predictions, references...), chunked alike.
        jobs: worker processes (0: every core; 1: this process, no workers).
        chunk_size: items per chunk (default: about :data:`CHUNKS_PER_WORKER` chunks per worker).
        progress: called as ``progress(done, total)`` in this process as chunks finish.
        preload: modules the worker server imports once (``forkserver``), such as the module of ``fn``.

    Raises:
        ValueError: on a bad ``jobs`` or ``chunk_size``, columns of different lengths, or a chunk result of another
            length; an error ``fn`` raises, raised again here naming the example (see the module docstring).
    """
    n = len(columns[0]) if columns else 0
    if n == 0:
        return []
    return [x for part in _run(fn, columns, jobs, chunk_size, progress, preload) for x in part]


def map_chunks(
    fn: Callable[..., Any],
    *columns: Sequence[Any],
    jobs: int = 1,
    chunk_size: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    preload: Sequence[str] = (),
) -> list[Any]:
    """``fn``'s result for each chunk of the items (whatever it is), in the order of the chunks; none without items.

    As :func:`map_items` (the same arguments and errors), for a ``fn`` that sums or gathers a chunk into one value
    that this process combines in order (counts whose columns it lines up, say).
    """
    n = len(columns[0]) if columns else 0
    if n == 0:
        return []
    return _run(fn, columns, jobs, chunk_size, progress, preload, per_item=False)


def map_rows(
    fn: Callable[..., Any],
    *columns: Sequence[Any],
    jobs: int = 1,
    chunk_size: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    preload: Sequence[str] = (),
) -> Any:
    """As :func:`map_items` for a ``fn`` giving an array of one row per item (or a dict of them): concatenated.

    Without items ``fn`` is called once, on empty columns, in this process (for the shape of its rows).
    """
    n = len(columns[0]) if columns else 0
    if n == 0:
        return fn(*([] for _ in columns))
    return _concat(_run(fn, columns, jobs, chunk_size, progress, preload))
