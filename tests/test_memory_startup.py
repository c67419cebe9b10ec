"""A command's fresh process serves arrays under 32 MiB from glibc's heap, keeping freed memory (_memory).

Asked before a task runs, only by a process that has not imported NumPy (one a user computes in keeps its allocator);
figures are the same either way.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from metametric_jax.commands._memory import reuse_freed_memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and /proc: Linux only")

PROBE = (
    "import io, json, sys, contextlib\n"
    "if sys.argv[1] == 'numpy first':\n"
    "    import numpy\n"
    "from metametric_jax.cli import main\n"
    "outputs = []\n"
    "for args in json.loads(sys.argv[2]):\n"
    "    out = io.StringIO()\n"
    "    with contextlib.redirect_stdout(out):\n"
    "        assert main(args) == 0\n"
    "    outputs.append(out.getvalue())\n"
    "import numpy as np\n"
    "array = np.ones(1 << 17)  # 1 MiB: above glibc's default threshold for a fresh mapping\n"
    "address = array.__array_interface__['data'][0]\n"
    "heap = [line.split()[0].split('-') for line in open('/proc/self/maps') if line.rstrip().endswith('[heap]')]\n"
    "in_heap = any(int(lo, 16) <= address < int(hi, 16) for lo, hi in heap)\n"
    "print(json.dumps([in_heap, outputs]))\n"
)

COMMANDS = [
    ["score", "ranking", "-m", "all_trec", "--format", "json"],
    ["score", "constituency", "--format", "json"],
    ["score", "ner", "--format", "json"],
]


def _probe(how: str, commands: list[list[str]]) -> tuple[bool, list[str]]:
    argv = [sys.executable, "-c", PROBE, how, json.dumps(commands)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    in_heap, outputs = json.loads(done.stdout.splitlines()[-1])
    return in_heap, outputs


def test_a_fresh_command_process_serves_arrays_from_the_heap_with_the_same_figures() -> None:
    fresh, outputs = _probe("fresh", COMMANDS)
    assert fresh  # the 1 MiB array after the run came from the heap, not a fresh mapping
    _, same = _probe("numpy first", COMMANDS)  # the allocator left as it was
    assert same == outputs and all(o.strip() for o in outputs)


def test_without_a_command_a_large_array_is_mapped_afresh() -> None:
    """The probe tells the two apart: glibc's default maps a 1 MiB array outside the heap."""
    in_heap, outputs = _probe("fresh", [])
    assert not in_heap and outputs == []


def test_not_asked_once_numpy_is_imported() -> None:
    import numpy  # noqa: F401 - imported: a process computing before the command keeps its allocator

    assert reuse_freed_memory() is False
