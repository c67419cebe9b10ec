"""The command's process ends once its output is written and its exit handlers have run (commands/_exit.py).

``cli.run`` (the console script and ``python -m metametric_jax``) returns ``main``'s status without the interpreter's
teardown; ``cli.main`` itself returns as before. Nothing written is lost, exit handlers run, another thread is
waited for, and a reader that went away before the last flush gives status 1 without a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from metametric_jax import cli
from metametric_jax.commands import _exit

ROOT = Path(__file__).resolve().parent.parent
JSON_SCORE = ["score", "ranking", "-m", "all_trec", "--format", "json"]


#: This checkout first on the path of every subprocess, ahead of any installed copy.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


class _EndedError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _ended(status: int) -> None:
    """``os._exit`` in process: the status, raised."""
    raise _EndedError(status)


def _run_in_process(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[int, str, str]:
    """``cli.run()`` with ``argv``, ``os._exit`` replaced: its status, standard output and standard error."""

    ran: list[bool] = []
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # earlier tests may have left threads running here
    monkeypatch.setattr(os, "_exit", _ended)
    monkeypatch.setattr(_exit.atexit, "_run_exitfuncs", lambda: ran.append(True))
    monkeypatch.setattr(sys, "argv", ["metametric-jax", *argv])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(_EndedError) as ending:
        cli.run()
    assert ran == [True]  # the exit handlers ran before the process ended
    return ending.value.status, out.getvalue(), err.getvalue()


def test_run_ends_the_process_with_mains_status_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    status, out, _ = _run_in_process(monkeypatch, JSON_SCORE)
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(JSON_SCORE) == 0  # main itself returns
    assert status == 0 and out == expected.getvalue() and json.loads(out)["all"]["map"] is not None
    assert _run_in_process(monkeypatch, ["score", "ranking", "--run", "missing.txt", "--qrels", "q.txt"])[0] == 1
    assert _run_in_process(monkeypatch, ["score", "no-such-task"])[0] == 2


def test_with_another_thread_or_no_exit_runner_the_interpreter_ends_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "_exit", _ended)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    with pytest.raises(SystemExit) as exiting:
        _exit.finish(3)
    assert exiting.value.code == 3  # the interpreter's exit, which waits for the thread
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.delattr(_exit.atexit, "_run_exitfuncs")
    with pytest.raises(SystemExit) as exiting:
        _exit.finish(0)
    assert exiting.value.code == 0


def _python(code: str, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, env=ENV, **kwargs
    )


TEARDOWN = """
    import atexit, os, sys
    class Held:
        def __del__(self, write=os.write):  # sys.stderr, even os, may be gone by then
            write(2, b"freed at teardown\\n")
    held = Held()
    atexit.register(sys.stderr.write, "exit handler ran\\n")
    sys.argv = ["metametric-jax", *sys.argv[1:]]
    from metametric_jax import cli
    {end}
"""


def test_a_command_process_skips_the_teardown_and_runs_the_exit_handlers() -> None:
    fast = _python(TEARDOWN.format(end="cli.run()"), *JSON_SCORE)
    assert fast.returncode == 0 and json.loads(fast.stdout)["all"]["map"] is not None
    assert "exit handler ran" in fast.stderr and "freed at teardown" not in fast.stderr
    # The control: the interpreter's own exit frees the object (the probe can tell the two apart).
    slow = _python(TEARDOWN.format(end="sys.exit(cli.main())"), *JSON_SCORE)
    assert slow.returncode == 0 and slow.stdout == fast.stdout
    assert "exit handler ran" in slow.stderr and "freed at teardown" in slow.stderr


def test_another_running_thread_is_waited_for() -> None:
    code = """
        import sys, threading, time
        def late():
            time.sleep(0.3)
            sys.stderr.write("thread finished\\n")
        threading.Thread(target=late).start()
        sys.argv = ["metametric-jax", *sys.argv[1:]]
        from metametric_jax import cli
        cli.run()
    """
    done = _python(code, *JSON_SCORE)
    assert done.returncode == 0 and "thread finished" in done.stderr and json.loads(done.stdout)


def _with_reader_gone(argv: list[str]) -> tuple[int, str]:
    """Run ``argv`` with its standard output's reader gone before it writes: its status and standard error."""
    env = dict(ENV)
    env.pop("PYTHONUNBUFFERED", None)  # standard output buffered, as it is by default
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # long before the process, still starting, writes anything
    err = process.stderr.read().decode()
    return process.wait(timeout=120), err


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "metametric_jax", *JSON_SCORE],
        # Output still buffered when the process ends: the last flush finds the reader gone.
        [
            sys.executable,
            "-c",
            "import sys; from metametric_jax.commands._exit import finish\n"
            "sys.stdout.write('figures ' * 100); finish(0)",
        ],
    ],
    ids=["command", "last flush"],
)
def test_a_reader_gone_gives_status_1_without_a_traceback(argv: list[str]) -> None:
    status, err = _with_reader_gone(argv)
    assert status == 1
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err


def _with_marker(marker: str) -> list[int]:
    """The processes whose environment holds ``METAMETRIC_JAX_TEST_MARKER=marker`` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if f"METAMETRIC_JAX_TEST_MARKER={marker}".encode() in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker processes in /proc")
def test_worker_processes_are_stopped_and_the_output_is_the_same_for_every_jobs() -> None:
    """``--jobs 2``: the exit handlers stop the workers before the process ends; no worker outlives the command."""
    marker = f"{os.getpid()}-{id(object())}"
    outputs = []
    for jobs in ("1", "2"):
        argv = [sys.executable, "-m", "metametric_jax", "score", "coref", "--jobs", jobs, "--format", "json"]
        done = subprocess.run(
            argv, capture_output=True, text=True, env={**ENV, "METAMETRIC_JAX_TEST_MARKER": marker}, timeout=300
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and json.loads(outputs[0])
    assert _with_marker(marker) == []  # neither the command nor a worker of it still runs


def test_the_console_script_and_python_m_end_through_run() -> None:
    assert 'metametric-jax = "metametric_jax.__main__:run"' in (ROOT / "pyproject.toml").read_text()
    assert "run()" in (ROOT / "metametric_jax" / "__main__.py").read_text()


def test_the_entry_sets_the_collector_before_the_command_line_is_imported() -> None:
    """Importing the console script's module (as the script does) passes no generation over the command line's
    imports; importing ``metametric_jax.cli`` alone leaves the collector as it is (some 10 passes)."""
    code = (
        "import gc, sys\n"
        "before = gc.get_stats()[0]['collections']\n"
        "if sys.argv[1] == 'entry':\n"
        "    from metametric_jax.__main__ import run\n"
        "    from metametric_jax import cli\n"
        "    assert run is cli.run\n"
        "else:\n"
        "    from metametric_jax import cli\n"
        "print(gc.get_threshold()[0], gc.get_stats()[0]['collections'] - before)\n"
    )
    passes = {}
    for how in ("entry", "cli"):
        done = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, env=ENV, timeout=120)
        assert done.returncode == 0, done.stderr
        threshold, passes[how] = map(int, done.stdout.split())
        assert threshold == (100_000 if how == "entry" else 700)
    assert passes["entry"] == 0 and passes["cli"] >= 3, passes


COLLECTOR = """import gc, json, sys
from metametric_jax import cli
how = sys.argv[1]
before = gc.get_stats()[0]["collections"]
def report(status):
    passes = gc.get_stats()[0]["collections"] - before
    print(json.dumps([status, gc.get_threshold()[0], passes]), file=sys.stderr)
cli.finish = report
sys.argv = ["metametric-jax", "score", "constituency", "--format", "json"]
if how == "run":
    cli.run()
else:
    report(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("how", ["run", "main"])
def test_a_command_process_collects_cycles_rarely(how: str) -> None:
    """``run`` (a process of its own) passes the youngest generation after 100,000 new objects; ``main`` leaves the
    collector as it is. The default's passes over a start's imported objects: some 30 in this run."""
    done = subprocess.run([sys.executable, "-c", COLLECTOR, how], capture_output=True, text=True, env=ENV, timeout=300)
    status, threshold, passes = json.loads(done.stderr.splitlines()[-1])
    assert status == 0 and json.loads(done.stdout)["all"]["sentences"] == 2
    if how == "run":
        assert threshold == 100_000 and passes <= 2, (threshold, passes)
    else:
        assert threshold == 700 and passes >= 10, (threshold, passes)
