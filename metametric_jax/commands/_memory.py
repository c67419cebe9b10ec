"""A command's process keeps the memory it frees for its next arrays (glibc's allocator), asked before a task runs.

Every task's scoring allocates and frees NumPy arrays of about the same sizes over and over: the columns of a file read
in bulk, then their sorted, masked and gathered copies (a 300-query x 1,000-document run holds dozens of 2.4 MB
arrays), and a treebank's pieces one after the other. By default glibc maps each array of 128 KiB or more afresh and
gives it back to the system when it is freed, and trims freed memory at the top of its heap, so the next array faults
in new pages: a few microseconds per 4 KiB page, 5-8% of a short ranking or constituency run. :func:`reuse_freed_memory`
asks glibc (``mallopt``) to serve arrays under 32 MiB from its heap and to keep what is freed there (up to 1 GiB at
the heap's top), so freed pages are reused. The command's process ends after the run: nothing is held longer than
the run. A process that imported NumPy before the command (a notebook calling :func:`metametric_jax.cli.main`) keeps
its allocator as it is, as it keeps its BLAS threads (:mod:`metametric_jax.commands._blas`). Memory is not a figure:
every figure is the same either way.
"""

from __future__ import annotations

import sys

#: ``mallopt`` parameters (glibc's ``malloc.h``): freed memory at the heap's top kept up to this many bytes; arrays
#: from this size up mapped afresh.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
KEPT, MAPPED_FROM = 1 << 30, 32 << 20


def reuse_freed_memory() -> bool:
    """Ask glibc to keep freed memory for the next arrays, unless NumPy is imported already or there is no glibc.

    Returns:
        Whether both settings were made.
    """
    if "numpy" in sys.modules or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError, TypeError):  # no C library with mallopt: the default allocator
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, KEPT)) and bool(mallopt(M_MMAP_THRESHOLD, MAPPED_FROM))
