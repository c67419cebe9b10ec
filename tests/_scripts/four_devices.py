"""Every check on four simulated CPU devices, in one process: one interpreter and one JAX start instead of three.

Runs :func:`devices.main` (test_distributed), :func:`analysis_devices.main` (test_analysis_jax) and
``test_jit._multi_device_child`` in turn, each printing its JSON summary; prints one JSON object that maps each part
to ``{"result": its summary}`` or ``{"error": its traceback}``, so a failing part fails only its own tests.

Run with XLA_FLAGS=--xla_force_host_platform_device_count=4 (set here before JAX is imported if absent).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import sys
import traceback
from collections.abc import Callable

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the scripts, and the tests (helpers, test_jit)

#: part name -> (module, function printing the part's JSON summary as its last line)
PARTS = {
    "devices": ("devices", "main"),
    "analysis_devices": ("analysis_devices", "main"),
    "jit": ("test_jit", "_multi_device_child"),
}


def run(main: Callable[[], None]) -> dict[str, object]:
    """The part's summary (the last line it printed), or the traceback of what it raised."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            main()
        return {"result": json.loads(out.getvalue().strip().splitlines()[-1])}
    except Exception:  # reported to the part's tests, which fail with it
        return {"error": traceback.format_exc()[-4000:]}


def main() -> None:
    results = {}
    for part, (module, function) in PARTS.items():
        results[part] = run(lambda m=module, f=function: getattr(importlib.import_module(m), f)())
    print(json.dumps(results))


if __name__ == "__main__":
    main()
