"""One BLAS thread for ``score``, set before NumPy's first import: scoring multiplies no float matrices.

NumPy's OpenBLAS starts a thread per core when NumPy is imported. No task's scoring multiplies float matrices (the
counts are integer array operations, trec_eval's measures elementwise ones, the matchings SciPy's assignment and
HiGHS solvers, coreference's one product an integer one, done by NumPy's own loops), so those threads only add to a
run's start-up: 0.03-0.06 s of CPU per process on a 2-core machine, 0.13 s of wall time on coreference's sample,
more on a machine with more cores. The command line asks for it before any task runs (:func:`one_blas_thread`); a
bootstrap multiplies matrices, so it keeps the default.
"""

from __future__ import annotations

import argparse
import os
import sys

#: The variable OpenBLAS reads at load time for its thread count.
VARIABLE = "OPENBLAS_NUM_THREADS"


def one_blas_thread(args: argparse.Namespace) -> bool:
    """Ask for one OpenBLAS thread, unless NumPy is already imported, the variable is set or a bootstrap is asked.

    Returns:
        Whether the variable was set here.
    """
    if "numpy" in sys.modules or VARIABLE in os.environ or getattr(args, "bootstrap", None):
        return False
    os.environ[VARIABLE] = "1"
    return True
