"""``score TASK`` asks for one OpenBLAS thread before NumPy's import (_blas), for every task.

Only where it cannot change a figure or a user's choice: not when NumPy is already imported, the variable is set, or a
bootstrap (matrix products) is asked.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys

import pytest

from metametric_jax.commands import registry
from metametric_jax.commands._blas import VARIABLE, one_blas_thread

PROBE = (
    "import io, json, os, sys, contextlib\n"
    "from metametric_jax.cli import main\n"
    "assert 'numpy' not in sys.modules\n"
    "said = []\n"
    "for args in json.loads(sys.argv[1]):\n"
    "    out = io.StringIO()\n"
    "    with contextlib.redirect_stdout(out):\n"
    "        status = main(args)\n"
    "    said.append([status, os.environ.get('OPENBLAS_NUM_THREADS'), out.getvalue()])\n"
    "print(json.dumps(said))\n"
)


def _runs(commands: list[list[str]], **env: str) -> list[tuple[int, str | None, str]]:
    """Each command's exit status, the thread variable after it and its output, all in one process run in turn."""
    environ = {k: v for k, v in os.environ.items() if k != VARIABLE} | env
    argv = [sys.executable, "-c", PROBE, json.dumps(commands)]
    done = subprocess.run(argv, capture_output=True, text=True, env=environ, check=True)
    return [tuple(said) for said in json.loads(done.stdout.splitlines()[-1])]


def _run(args: list[str], **env: str) -> tuple[int, str | None, str]:
    return _runs([args], **env)[0]


TASKS = [[name] for name in sorted(registry())]
COMMANDS = [*TASKS, ["ranking", "-m", "all_trec"], ["ranking", "-q", "--format", "trec"]]


def _args(command: list[str]) -> list[str]:
    return ["score", *command] + ([] if "--format" in command else ["--format", "json"])


@functools.cache
def _with_two_threads() -> list[tuple[int, str | None, str]]:
    """Every command with the user's own setting of two threads (one process: NumPy reads it once)."""
    return _runs([_args(c) for c in COMMANDS], OPENBLAS_NUM_THREADS="2")


@pytest.mark.parametrize("command", COMMANDS, ids=[*(c[0] for c in TASKS), "ranking-all_trec", "ranking-trec"])
def test_one_thread_asked_and_figures_unchanged(command: list[str]) -> None:
    status, value, scores = _run(_args(command))  # a process of its own: the task runs before NumPy is imported
    assert status == 0 and value == "1" and scores.strip()
    status, preset, same = _with_two_threads()[COMMANDS.index(command)]
    assert status == 0 and preset == "2"  # a user's setting is kept
    assert same == scores


def test_not_asked_with_a_bootstrap() -> None:
    status, value, _ = _run(["score", "constituency", "--format", "json", "--bootstrap", "20", "--seed", "1"])
    assert status == 0 and value is None


def test_not_asked_once_numpy_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy  # noqa: F401 - imported: the variable would no longer change anything

    monkeypatch.delenv(VARIABLE, raising=False)
    assert one_blas_thread(argparse.Namespace()) is False
    assert VARIABLE not in os.environ
