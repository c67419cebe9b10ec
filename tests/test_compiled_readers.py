"""The readers built from C are there where CI installs the package (with a C compiler), and say why where they are not.

``pip install`` builds them where a C compiler is present and installs the package without them where it is not
(NumPy then reads those files, with the same figures: ``tests/tasks/readers/test_ptb_native.py`` and
``test_trec_native.py`` compare the two). CI installs with ``gcc``: a reader missing there fails this test; elsewhere
the test is skipped, with the reason, and the comparisons with it.
"""

from __future__ import annotations

import os

import pytest

from metametric_jax.tasks.readers import ptb, trec


@pytest.mark.parametrize(
    ("module", "source"),
    [(ptb._ptb_scan, "_ptb_scan.c (bracketed trees)"), (trec._trec_scan, "_trec_scan.c (TREC fields)")],
    ids=["ptb", "trec"],
)
def test_the_reader_is_built_where_ci_installs_the_package(module: object, source: str) -> None:
    if module is None:
        message = f"the compiled reader metametric_jax/tasks/readers/{source} was not built"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI installs the package with a C compiler")
        pytest.skip(f"{message} here: NumPy reads those files")
