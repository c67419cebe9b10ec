"""Per-device (pmap, shard_map) and per-host (two JAX processes) merges give the single-device result.

The multi-device and multi-process runs happen in subprocesses (tests/_scripts) so that the simulated CPU devices
and ``jax.distributed`` do not touch this process; every subprocess has a timeout.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SCRIPTS = Path(__file__).parent / "_scripts"
sys.path.insert(0, str(SCRIPTS))

from _common import Boot, Both, Doc, boot_figures, data, figures  # noqa: E402
from helpers import four_device_part  # noqa: E402

from metametric_jax.distributed import merge_across_processes  # noqa: E402

TIMEOUT = 600  # a bound on a hang: four simulated devices (10 s of CPU) took over 120 s on two busy cores
pytestmark = pytest.mark.slow


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS")}
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _assert_same(actual: Any, expected: dict[str, float], what: str, rtol: float = 1e-6) -> None:
    assert isinstance(actual, dict), f"{what} failed: {actual}"
    assert actual.keys() == expected.keys(), what
    for key, value in expected.items():
        np.testing.assert_allclose(actual[key], value, rtol=rtol, atol=1e-7, err_msg=f"{what}: {key}")


def _reference() -> dict[str, dict[str, float]]:
    """The single-process, single-batch figures (and a plain count check of the span F1)."""
    preds, refs = data(64)
    tp = sum(len(p.spans & r.spans) for p, r in zip(preds, refs))
    n_pred = sum(len(p.spans) for p in preds)
    n_ref = sum(len(r.spans) for r in refs)
    ref = {
        "metric": figures(Doc.metric.from_model_output(preds, refs).compute()),
        "suite": figures(Both.from_model_output(preds, refs).compute()),
    }
    assert ref["metric"]["overlap"] == tp
    assert ref["metric"]["f1"] == pytest.approx(2 * tp / (n_pred + n_ref), rel=1e-6)
    return ref


@pytest.fixture(scope="module")
def devices_run(four_devices: dict[str, Any]) -> dict[str, Any]:
    """``_scripts/devices.py``'s summary, run with the other four-device checks in one subprocess (conftest.py)."""
    return four_device_part(four_devices, "devices")


VARIANTS = ["pmap_all_gather", "pmap_psum", "shard_map_all_gather", "shard_map_psum"]
VMA_VARIANTS = ["shard_map_vma_local_reduce_psum", "shard_map_vma_all_gather"]


@pytest.mark.parametrize("kind", ["metric", "suite"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_devices_merge_equals_single_device(devices_run: dict[str, Any], kind: str, variant: str) -> None:
    assert devices_run["devices"] == 4
    result = devices_run[kind]
    expected = _reference()[kind]
    _assert_same(result["single"], expected, f"{kind} single")
    _assert_same(result[variant], expected, f"{kind} {variant}")
    if variant == "pmap_all_gather":
        assert result["pmap_all_gather_replicas_equal"]


@pytest.mark.parametrize("kind", ["metric", "suite"])
@pytest.mark.parametrize("variant", VMA_VARIANTS)
def test_shard_map_reduce_of_device_varying_states(devices_run: dict[str, Any], kind: str, variant: str) -> None:
    """``reduce()`` inside ``shard_map`` with the default ``check_vma=True`` (states that vary across devices)."""
    _assert_same(devices_run[kind][variant], _reference()[kind], f"{kind} {variant}")


def _boot_reference() -> dict[str, float]:
    preds, refs = data(64)
    return boot_figures(Boot.from_model_output(preds, refs, example_ids=list(range(64))))


def test_bootstrap_state_merges_across_four_devices(devices_run: dict[str, Any]) -> None:
    expected = _boot_reference()
    _assert_same(devices_run["bootstrap"]["single"], expected, "bootstrap single")
    _assert_same(devices_run["bootstrap"]["pmap_all_gather"], expected, "bootstrap pmap all_gather")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_merge_equals_single_process(tmp_path: Path) -> None:
    port = _free_port()
    outs = [tmp_path / f"p{i}.json" for i in range(2)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPTS / "processes.py"), str(i), "2", str(port), str(outs[i])],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=TIMEOUT)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, p in enumerate(procs):
        assert p.returncode == 0, f"process {i} failed:\n{logs[i][-4000:]}"
    ref = _reference()
    results = [json.loads(o.read_text()) for o in outs]
    for i, res in enumerate(results):
        assert res["process_id"] == i and res["process_count"] == 2
        for kind in ("metric", "suite"):
            _assert_same(res[kind], ref[kind], f"process {i} {kind}")
        _assert_same(res["bootstrap"], _boot_reference(), f"process {i} bootstrap")
    # each process alone saw only half the data
    assert results[0]["metric_local"]["overlap"] + results[1]["metric_local"]["overlap"] == ref["metric"]["overlap"]
    assert results[0]["metric_local"]["overlap"] < ref["metric"]["overlap"]


def test_merge_across_processes_single_process_is_identity() -> None:
    preds, refs = data(8)
    state = Doc.metric.from_model_output(preds, refs)
    assert merge_across_processes(state) is state


def test_merge_across_processes_rejects_non_state() -> None:
    with pytest.raises(TypeError, match="reduce"):
        merge_across_processes({"sums": np.zeros(3)})
