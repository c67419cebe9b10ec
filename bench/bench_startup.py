"""Benchmark: start-up of the command line, ``metametric-jax --help`` against ``python -c pass``, as whole processes.

A user who scores a small file waits for the interpreter and for what the command imports before anything is read.
Three whole processes, each run ``--repeat`` times, interleaved, the best wall time (and the best CPU time of the
child, less disturbed by other work on a shared machine) kept:

* ``python -c pass``: the interpreter alone, the floor;
* ``metametric-jax --help``: the installed console script (the one beside ``sys.executable``, else the first on
  ``PATH``; a version manager's shim in front of it would add its own start-up);
* ``python -m metametric_jax --help``: the same command through the package.

Before timing, ``--help`` is checked to exit 0 with a usage line, and a child process reports whether running it
imported JAX (it must not: heavy imports belong inside the commands). The issue's target: ``metametric-jax --help``
in at most 0.3 s.

Then the ``score`` path, where start-up dominates on small files: ``metametric-jax score ranking`` and ``score
dependency`` on their bundled samples (``--format json``), against ``python -c "import numpy"`` (the floor of any
scorer that reads with NumPy); a child process reports which heavy modules each imported (JAX, SciPy, rich, pandas,
scikit-learn: none should be, rich only for tables).

Every process runs with Python's bytecode cache on (``bench/_process.py``: a folder outside the tree), as an installed
package runs.

Run: ``python bench/bench_startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import ENV, console_script  # noqa: E402  (the bytecode cache on, outside the tree, as an installed package runs)

TARGET_S = 0.3

PROBE = """
import sys
sys.argv = ["metametric-jax", "--help"]
from metametric_jax.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
print("JAX_IMPORTED=" + str("jax" in sys.modules), file=sys.stderr)
"""

SCORE_PROBE = """
import sys
sys.argv = ["metametric-jax", "score", TASK, "--format", "json"]
from metametric_jax.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
heavy = [m for m in ("jax", "scipy", "rich", "pandas", "sklearn") if m in sys.modules]
print("HEAVY=" + (",".join(heavy) or "none"), file=sys.stderr)
"""
SCORED = ("ranking", "dependency")


def run_timed(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds of the child, the finished process) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each process (best kept)")
    args = parser.parse_args()

    script = console_script()
    sides: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
    if script is not None:
        sides["metametric-jax --help"] = [script, "--help"]
    sides["python -m metametric_jax --help"] = [sys.executable, "-m", "metametric_jax", "--help"]

    for name, argv in sides.items():
        if name == "python -c pass":
            continue
        _, _, proc = run_timed(argv)
        if proc.returncode != 0 or "usage" not in proc.stdout.lower():
            raise SystemExit(f"{name} exited {proc.returncode} without a usage line: {proc.stderr.strip()[-500:]}")
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=False)
    jax_line = next((line for line in probe.stderr.splitlines() if line.startswith("JAX_IMPORTED=")), None)
    jax_imported = "unknown" if jax_line is None else ("yes" if jax_line.endswith("True") else "no")

    best = {name: (float("inf"), float("inf")) for name in sides}
    for _ in range(args.repeat):
        for name, argv in sides.items():
            wall, cpu, _ = run_timed(argv)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))

    print(f"whole processes, best of {args.repeat} interleaved runs; {sys.executable}")
    if script is None:
        print("metametric-jax is not installed as a command (pip install -e .): only python -m is timed")
    else:
        print(f"console script: {script}")
    print(f"JAX imported by --help: {jax_imported}")
    for name, (wall, cpu) in best.items():
        print(f"  {name:34s} wall {wall:6.3f} s   cpu {cpu:6.3f} s")
    score_path(script, args.repeat)
    floor = best["python -c pass"][0]
    for name in sides:
        if name == "python -c pass":
            continue
        wall = best[name][0]
        verdict = "met" if wall <= TARGET_S else "MISSED"
        print(f"{name}: {wall:.3f} s (target <= {TARGET_S} s: {verdict})")
        print(f"{name} / python -c pass = {wall / floor:.2f}x")


def score_path(script: str | None, repeat: int) -> None:
    """``score TASK`` on the bundled sample as whole processes, against importing NumPy; the heavy modules imported."""
    command = [script] if script is not None else [sys.executable, "-m", "metametric_jax"]
    sides = {"python -c 'import numpy'": [sys.executable, "-c", "import numpy"]}
    heavy = {}
    for task in SCORED:
        argv = [*command, "score", task, "--format", "json"]
        _, _, proc = run_timed(argv)
        if proc.returncode != 0 or not proc.stdout.startswith("{"):
            raise SystemExit(f"score {task} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        probe = [sys.executable, "-c", SCORE_PROBE.replace("TASK", repr(task))]
        lines = subprocess.run(probe, capture_output=True, text=True, check=False).stderr.splitlines()
        heavy[task] = next((line[6:] for line in lines if line.startswith("HEAVY=")), "unknown")
        sides[f"score {task} (sample)"] = argv
    best = {name: (float("inf"), float("inf")) for name in sides}
    for _ in range(repeat):
        for name, argv in sides.items():
            wall, cpu, _ = run_timed(argv)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    floor = best["python -c 'import numpy'"]
    print("score path, bundled samples, --format json:")
    for name, (wall, cpu) in best.items():
        print(f"  {name:34s} wall {wall:6.3f} s   cpu {cpu:6.3f} s")
    for task in SCORED:
        wall, cpu = best[f"score {task} (sample)"]
        print(
            f"score {task} (sample) / import numpy = {wall / floor[0]:.2f}x (CPU {cpu / floor[1]:.2f}x); heavy "
            f"modules imported: {heavy[task]}"
        )


if __name__ == "__main__":
    main()
