"""What ``score TASK`` imports in one process: neither JAX nor the machinery of worker processes, nor the other
tasks' command modules (start-up time)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from metametric_jax.commands import registry

# Modules a command scoring files in this process never needs: JAX (the accumulators), multiprocessing and
# concurrent.futures (only --jobs N starts workers).
NOT_IMPORTED = ("jax", "multiprocessing", "concurrent.futures")


def test_scoring_in_this_process_imports_neither_jax_nor_worker_processes() -> None:
    tasks = sorted(registry())
    code = (
        "import contextlib, io, sys\n"
        "from metametric_jax.cli import main\n"
        "def commands():\n"
        "    return {m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('metametric_jax.commands.')}\n"
        f"for task in {tasks!r}:\n"
        "    before = commands()\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "        assert main(['score', task, '--format', 'json']) == 0, task\n"
        "    new = sorted(m for m in commands() - before if not m.startswith('_'))\n"
        f"    print(task, sorted(m for m in {NOT_IMPORTED!r} if m in sys.modules), new)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # each task's run imports its own command module only (not its analysis hook, which score does not use)
    assert done.stdout.splitlines() == [f"{task} [] {[task]}" for task in tasks], done.stdout
    assert len(tasks) >= 8


#: What a task's command does not import at its start (after the scoring and the table): EVALB's and conlleval's
#: ``100.0 * a / b`` cells recover the counts without ``fractions`` (nor ``decimal``); the constituency and ranking
#: commands' classes generate no code (no ``dataclasses``).
LEAN = {
    "constituency": ("fractions", "decimal", "dataclasses"),
    "ner": ("fractions", "decimal"),
    "ranking": ("fractions", "decimal", "dataclasses"),
}


@pytest.mark.parametrize("task", sorted(LEAN))
def test_a_command_s_start_imports_no_more_than_it_needs(task: str) -> None:
    code = (
        "import sys\n"
        "from metametric_jax.cli import main\n"
        f"assert main(['score', {task!r}]) == 0\n"
        f"print('imported', sorted(m for m in {LEAN[task]!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") > 5  # the table, printed into a pipe
    assert [line for line in done.stderr.splitlines() if line.startswith("imported")] == ["imported []"]
