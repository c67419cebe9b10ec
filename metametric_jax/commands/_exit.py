"""A command's process ends as soon as its output is written, without freeing its objects one by one.

When a Python process exits, the interpreter tears itself down: it runs the exit handlers (:mod:`atexit`), then
clears every module and frees every object it still holds, one by one. That last part is pure cost, as the operating
system takes the whole memory back at once: ending a process that imported NumPy takes about 11 ms, ending one that
scored 12,000 short parse trees or a 30,000-line TREC run 14-36 ms (whole processes, interleaved), a tenth to a
fifth of such a run.

:func:`finish` (the last step of the console script and of ``python -m metametric_jax``, never of
:func:`~metametric_jax.cli.main`, which a notebook or a test calls and which returns) flushes standard output and
standard error, runs the exit handlers as the interpreter would (the worker processes of ``--jobs`` are stopped by
:mod:`multiprocessing`'s, temporary directories removed by :mod:`weakref`'s, logging flushed), flushes again, and
ends the process with the status. Where it cannot do all of that as the interpreter would (another Python thread
still runs, which the interpreter would wait for; an interpreter without :mod:`atexit`'s runner), it leaves the exit
to the interpreter. Nothing a command writes is lost either way; the status is the same.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import Any, NoReturn


def silence(stream: Any) -> None:
    """Send ``stream``'s later writes nowhere, quietly (its reader went away: ``| head``)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())


def _flush() -> bool:
    """Flush standard output and standard error; ``False`` when the reader of standard output went away."""
    gone = False
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            gone = gone or stream is sys.stdout
            silence(stream)
        except (OSError, ValueError):  # closed or detached: nothing is buffered that could still be written
            pass
    return not gone


def finish(status: int) -> NoReturn:
    """End the process with ``status`` once its output is written and its exit handlers have run.

    A reader of standard output that went away before the last flush (``| head``) makes the status 1, as
    :func:`~metametric_jax.cli.main` does when a write fails earlier.
    """
    threading = sys.modules.get("threading")
    run_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_handlers is None or (threading is not None and threading.active_count() > 1):
        raise SystemExit(status)  # the interpreter's own exit: it waits for the other threads
    if not _flush():
        status = status or 1
    run_handlers()
    _flush()
    os._exit(status)
