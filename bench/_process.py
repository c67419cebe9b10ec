"""Whole-process timing shared by the benches that compare commands: wall and CPU time, the free CPU share.

``timed(argv)`` runs one command and gives its wall time, its CPU time (user + system of the process and the
children it waited for) and its standard output. ``interleaved`` runs several commands round-robin and keeps each
one's best wall and best CPU time. ``peak_memory(argv)`` gives one run's peak resident memory. ``cpu_share()``
measures how many cores are free to us: a busy loop alone, then two at once (2.00: two free cores; 1.00: one).

Every command runs with Python's bytecode cache on, in a folder of its own (``PYTHONPYCACHEPREFIX``, outside the
working tree; ``PYTHONDONTWRITEBYTECODE`` dropped), as an installed package runs: a machine that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module of ours from source at each start (about 0.1 s).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

BUSY = "import time\nt = time.perf_counter()\nx = 0\nfor i in range(6_000_000):\n    x += i\n"
BUSY += "print(time.perf_counter() - t)"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "metametric-jax-bench-pycache")


def console_script() -> str | None:
    """The installed ``metametric-jax`` script: beside this interpreter first, else on ``PATH``.

    A version manager's shim found first on ``PATH`` (pyenv's is a shell script that runs ``pyenv exec``, about 0.2 s
    here) would be timed with the command otherwise.
    """
    beside = Path(sys.executable).parent / "metametric-jax"
    if beside.is_file():
        return str(beside)
    return shutil.which("metametric-jax")


def cpu_share() -> float:
    """Cores free to this script: a busy loop alone (t1), then two at once (t2, the slower): ``2 t1 / t2``."""

    def run(n: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True) for _ in range(n)]
        return max(float(p.communicate()[0]) for p in procs)

    alone = min(run(1) for _ in range(2))
    together = min(run(2) for _ in range(2))
    return 2 * alone / together


def timed(argv: Sequence[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (the process and its waited-for descendants) and standard output of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def interleaved(commands: Mapping[str, Sequence[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Each command's best wall and best CPU time over ``repeat`` rounds, the commands run round-robin."""
    best = {name: (float("inf"), float("inf")) for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            wall, cpu, _ = timed(argv)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


#: Runs the command given after it with its output discarded, and prints the command's peak resident memory (kB).
#: A child's peak starts at the size of the process it is forked from (Linux counts the pages it inherits, or those
#: of the parent it shares them with until it executes), so the command is started by this small process rather
#: than by the bench, which may hold hundreds of megabytes of generated files.
LAUNCHER = (
    "import os, sys\n"
    "null = os.open(os.devnull, os.O_RDWR)\n"
    "actions = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]\n"
    "pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, file_actions=actions)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "print(usage.ru_maxrss)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def peak_memory(argv: Sequence[str]) -> float:
    """The peak resident memory of one run of a command, in MB (reaped with ``wait4`` by :data:`LAUNCHER`; Linux)."""
    done = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], capture_output=True, text=True, env=ENV)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed with status {done.returncode}")
    return int(done.stdout) / 1024  # kilobytes on Linux
