"""One BLAS thread for commands whose scoring does no linear algebra, set before NumPy's first import.

NumPy's OpenBLAS starts a thread per core when NumPy is imported; ``score dependency`` and ``score constituency``
count with integer array operations and ``score ranking`` computes trec_eval's measures with elementwise ones (no
matrix product in any of them), so those threads only add to a run's start-up (about 0.05 s of CPU per process on a
2-core machine). A bootstrap multiplies matrices, so it keeps the default.
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
