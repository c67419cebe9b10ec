"""Per-device states merged inside pmap and shard_map; prints JSON of the results and the single-device ones.

Run with XLA_FLAGS=--xla_force_host_platform_device_count=4 (set here before JAX is imported if absent).
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import numpy as np  # noqa: E402
from _common import Boot, Both, Doc, boot_figures, data, figures  # noqa: E402
from jax.sharding import Mesh, PartitionSpec  # noqa: E402


def block(state):
    """The first entry along the leading axis (the block of one shard_map device, traced)."""
    return jax.tree.map(lambda x: x[0], state)


def first(state):
    """The first replica of a pmap output (or the first device's copy of a jit output), on the host.

    One transfer of the whole state, then NumPy indexing: an eager ``x[0]`` per leaf compiles a program per leaf
    shape, and a state whose leaves stay committed to a device compiles ``compute()`` again (the single-process
    states it is compared with are host states).
    """
    return jax.tree.map(lambda x: x[0], jax.device_get(state))


def per_device(state):
    """Add a leading axis of size 1, so each device returns its own copy (out_specs=P("d"))."""
    return jax.tree.map(lambda x: x[None], state)


def main() -> None:
    n_dev = jax.device_count()
    preds, refs = data(64)
    out: dict[str, object] = {"devices": n_dev}
    for name, cls in (("metric", Doc.metric), ("suite", Both)):
        single = cls.from_model_output(preds, refs)
        shards = [cls.from_model_output(preds[i::n_dev], refs[i::n_dev]) for i in range(n_dev)]
        stacked = jax.tree.map(lambda *x: np.stack(x), *shards)  # noqa: B023  (host: no program per leaf shape)

        gathered = jax.pmap(lambda s: jax.lax.all_gather(s, "d").reduce(), axis_name="d")(stacked)
        summed = jax.pmap(lambda s: s.psum("d"), axis_name="d")(stacked)

        mesh = Mesh(jax.devices(), ("d",))
        spec = PartitionSpec("d")

        variants = {
            # CLU's pattern; all_gather's output is device-varying, so out_specs=P() needs check_vma=False
            "shard_map_all_gather": (lambda s: jax.lax.all_gather(block(s), "d").reduce(), PartitionSpec(), False),
            "shard_map_psum": (lambda s: block(s).psum("d"), PartitionSpec(), True),
            # with the default check_vma=True: reduce() of device-varying states (the local block, or a gather)
            "shard_map_vma_local_reduce_psum": (lambda s: s.reduce().psum("d"), PartitionSpec(), True),
            "shard_map_vma_all_gather": (
                lambda s: per_device(jax.lax.all_gather(s.reduce(), "d").reduce()),
                spec,
                True,
            ),
        }
        replicas = jax.device_get(gathered)  # every device's copy, on the host
        results = {
            "single": figures(single.compute()),
            "pmap_all_gather": figures(first(gathered).compute()),
            "pmap_all_gather_replicas_equal": all(bool((x == x[0]).all()) for x in jax.tree.leaves(replicas)),
            "pmap_psum": figures(first(summed).compute()),
        }
        for key, (fn, out_spec, vma) in variants.items():
            try:
                res = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=spec, out_specs=out_spec, check_vma=vma))(stacked)
                if out_spec == spec:
                    res = first(res)
                results[key] = figures(res.compute())
            except Exception as err:  # reported to the test, which fails with the message
                results[key] = f"{type(err).__name__}: {str(err).splitlines()[0]}"
        out[name] = results
    single = Boot.from_model_output(preds, refs, example_ids=list(range(len(preds))))
    shards = [
        Boot.from_model_output(preds[i::n_dev], refs[i::n_dev], example_ids=list(range(i, len(preds), n_dev)))
        for i in range(n_dev)
    ]
    stacked = jax.tree.map(lambda *x: np.stack(x), *shards)
    gathered = jax.pmap(lambda s: jax.lax.all_gather(s, "d").reduce(), axis_name="d")(stacked)
    out["bootstrap"] = {"single": boot_figures(single), "pmap_all_gather": boot_figures(first(gathered))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
