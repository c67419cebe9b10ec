"""One of two JAX processes (CPU, loopback coordinator) scoring half of the data; merges across processes.

Usage: processes.py PROCESS_ID NUM_PROCESSES PORT OUT_JSON
Writes ``{"process_id", "process_count", "metric": {...}, "suite": {...}}`` with the merged figures to OUT_JSON.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
from _common import Boot, Both, Doc, boot_figures, data, figures  # noqa: E402

from metametric_jax.distributed import merge_across_processes  # noqa: E402


def main() -> None:
    pid, nproc, port, out_path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}", num_processes=nproc, process_id=pid, initialization_timeout=60
    )
    preds, refs = data(64)
    out: dict[str, object] = {"process_id": jax.process_index(), "process_count": jax.process_count()}
    for name, cls in (("metric", Doc.metric), ("suite", Both)):
        local = cls.from_model_output(preds[pid::nproc], refs[pid::nproc])
        out[name] = figures(merge_across_processes(local).compute())
        out[f"{name}_local"] = figures(local.compute())
    ids = list(range(pid, len(preds), nproc))
    local = Boot.from_model_output(preds[pid::nproc], refs[pid::nproc], example_ids=ids)
    out["bootstrap"] = boot_figures(merge_across_processes(local))
    with open(out_path, "w") as f:
        json.dump(out, f)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
