"""Fixtures shared by the tests (plain functions and the shared test data types are in ``helpers.py``).

The resampling classes are shared so that their jitted ``compute`` and the eager operations on their replicate arrays
compile once per test session, not once per test: the same arguments give the same class (see
:func:`metametric_jax.significance.bootstrap`), and every test that does not depend on the number of replicates or
the seed uses these. Each fixture restarts the class's running example positions, which tests may advance.

XLA's programs are kept for the session in a fresh directory (JAX's persistent compilation cache, every program
however quick to compile), shared with the subprocesses the tests start: many tests build their own metric classes,
whose functions trace to programs already compiled, and a program found there is loaded, not compiled again (the
same executable either way). The directory is removed when the session ends.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import BAG, Sentence

from metametric_jax import metric_of
from metametric_jax import significance as sig

_PROGRAMS = {
    "jax_compilation_cache_dir": tempfile.mkdtemp(prefix="metametric-jax-tests-xla-"),
    "jax_persistent_cache_min_compile_time_secs": 0,
    "jax_persistent_cache_min_entry_size_bytes": 0,
}
atexit.register(shutil.rmtree, _PROGRAMS["jax_compilation_cache_dir"], ignore_errors=True)
for _name, _value in _PROGRAMS.items():
    jax.config.update(_name, _value)
    os.environ[_name.upper()] = str(_value)  # the subprocesses' JAX reads it from the environment

SCRIPTS = Path(__file__).parent / "_scripts"

REPLICATES = 32
"""The replicates (or permutations) of the shared resampling classes."""


def _fresh(cls: type) -> type:
    cls.reset_positions()
    return cls


@pytest.fixture
def bag_boot() -> type:
    """The bootstrap class of ``helpers.BAG`` (32 replicates, seed 0, level 0.95), its running positions restarted."""
    return _fresh(sig.bootstrap(BAG, replicates=REPLICATES, seed=0))


@pytest.fixture
def bag_rnd() -> type:
    """The randomization class of ``helpers.BAG`` (32 permutations, seed 0), its running positions restarted."""
    return _fresh(sig.randomization(BAG, permutations=REPLICATES, seed=0))


@pytest.fixture
def sentence_boot() -> type:
    """The bootstrap class of ``helpers.Sentence`` (32 replicates, seed 0), its running positions restarted."""
    return _fresh(sig.bootstrap(metric_of(Sentence), replicates=REPLICATES, seed=0))


@pytest.fixture
def sentence_rnd() -> type:
    """The randomization class of ``helpers.Sentence`` (32 permutations, seed 0), its running positions restarted."""
    return _fresh(sig.randomization(metric_of(Sentence), permutations=REPLICATES, seed=0))


@pytest.fixture(scope="session")
def four_devices() -> dict[str, Any]:
    """The checks on four simulated CPU devices, run once in one subprocess (``_scripts/four_devices.py``).

    ``{part: {"result": its JSON summary} or {"error": its traceback}}`` for the parts ``devices`` (test_distributed),
    ``analysis_devices`` (test_analysis_jax) and ``jit`` (test_jit): one interpreter and one JAX start for the three.
    The simulated devices (``XLA_FLAGS``) never touch this process; the subprocess has a timeout (a bound on a hang:
    the three parts take about 20 s of CPU, much longer on two busy cores).
    """
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "four_devices.py")], env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
