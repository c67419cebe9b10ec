"""The README's Dask recipe and its parallel.from_model_output block run as written and equal one process."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import flat

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if marker in b)


def test_the_dask_recipe_equals_one_process():
    pytest.importorskip("dask.bag")
    namespace: dict = {"__name__": "__main__"}
    exec(compile(_block("db.from_sequence"), str(README), "exec"), namespace)  # noqa: S102 - the README's recipe
    state, boot, elements = namespace["state"], namespace["Boot"], namespace["elements"]
    ids = np.array([i for i, _ in elements])
    preds, refs = zip(*(pair for _, pair in elements))
    one = boot.from_model_output(list(preds), list(refs), example_ids=ids)
    assert type(state) is boot
    for k in ("xy", "xx", "yy", "count"):  # counts exact; fractional sums to float32 rounding of each partition
        assert state.plain.totals()[k] == one.plain.totals()[k]
    np.testing.assert_allclose(flat(state.replicas), flat(one.replicas), rtol=1e-6, atol=1e-5)
    interval = namespace["interval"]
    assert float(interval["low"]["f1"]) <= float(interval["estimate"]["f1"]) <= float(interval["high"]["f1"])


@pytest.mark.slow
@pytest.mark.parametrize("marker", ["parallel.from_model_output", "db.from_sequence"])
def test_the_blocks_run_as_scripts(tmp_path: Path, marker: str):
    # saved to a file and run with `python file.py`: the workers import the script's module (forkserver, spawn)
    if marker == "db.from_sequence":
        pytest.importorskip("dask.bag")
    script = tmp_path / "recipe.py"
    script.write_text(_block(marker), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_an_unguarded_script_is_told_why_its_workers_stopped(tmp_path: Path):
    block = _block("parallel.from_model_output").replace('if __name__ == "__main__":\n', "if True:\n")
    script = tmp_path / "recipe.py"
    script.write_text(block, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    # the error's line (the resource tracker may still report the stopped workers' semaphores after it)
    told = [line for line in done.stderr.splitlines() if line.startswith("RuntimeError: a worker process stopped")]
    assert done.returncode != 0 and told, done.stderr[-2000:]
    assert all('if __name__ == "__main__":' in line for line in told)
