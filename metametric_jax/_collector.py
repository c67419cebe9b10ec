"""Python's cycle collector: paused while a corpus is read and counted, rare in a command's own process."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused_collector", "collect_rarely", "COMMAND_THRESHOLD"]

#: New container objects (allocated less freed) that start a pass of the youngest generation in a command's own
#: process; Python's default is 700.
COMMAND_THRESHOLD = 100_000


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """Python's cycle collector paused inside the block (as it was after it).

    Reading and counting a corpus builds hundreds of thousands of small objects without cycles (spans, mentions,
    words, tuples, strings), which reference counting frees; the collector's full passes over them, triggered by their
    number alone, took a tenth (coreference files) to two fifths (dependency counting) of the time. A cycle made inside
    the block is collected after it.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def collect_rarely() -> None:
    """The collector's youngest generation passed after :data:`COMMAND_THRESHOLD` new objects, not 700.

    For a command's own process (:func:`metametric_jax.cli.run`, never :func:`~metametric_jax.cli.main`, which a
    notebook or a test calls). A command's start imports NumPy and its task's modules: some 70,000 objects that live
    as long as the process, whose numbers alone started about 50 passes, 5 ms of a 140 ms run (12,000 short parse
    trees). Cycles are still collected, in fewer, larger passes (the older generations at Python's own ratios); the
    garbage cycles a run can hold at once stay bounded by the threshold. Figures are the same either way.
    """
    gc.set_threshold(COMMAND_THRESHOLD, *gc.get_threshold()[1:])
