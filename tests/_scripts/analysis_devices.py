"""Bucketed states of four devices merged inside pmap and shard_map (BucketedArrays); prints JSON of the results.

Run with XLA_FLAGS=--xla_force_host_platform_device_count=4 (set here before JAX is imported if absent). The states
of the devices are :func:`states`'s, which the test builds again to compare.
"""

from __future__ import annotations

import json
import os

if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

from metametric_jax.analysis_state import BucketedState  # noqa: E402

DEVICES = 4
UNITS = 25  # per device


def states(fractional: bool) -> list[BucketedState]:
    """One state per device, of disjoint units and different buckets: integer rows or fractions (B-cubed's kind)."""
    rng = np.random.default_rng(7 if fractional else 3)
    out = []
    for d in range(DEVICES):
        n = 150
        rows = rng.integers(0, 4, (n, 3)).astype(np.float64)
        if fractional:
            rows = rows / rng.integers(1, 12, (n, 3))
        units = rng.integers(d * UNITS, (d + 1) * UNITS, n)
        names = [f"b{v}" for v in rng.integers(d, d + 4, n)]  # device d holds buckets b{d}..b{d+3}
        out.append(
            BucketedState.from_rows(
                rows, units, names, systems=rng.integers(0, 2, n), n_systems=2,
                unit_ids=np.arange(d * UNITS, (d + 1) * UNITS), samples=64, seed=5,
            )
        )  # fmt: skip
    return out


def names() -> list[str]:
    """Every bucket of the evaluation, in the order every device lays them out."""
    return [f"b{k}" for k in range(DEVICES + 3)]


def arrays(state: BucketedState) -> dict[str, object]:
    return {
        "buckets": list(state.buckets),
        "totals": state.totals.tolist(),
        "replicates": state.replicates.tolist(),
        "mass": state.mass.tolist(),
        "units": state.units.tolist(),
        "holding": state.holding.tolist(),
        "items": state.items.tolist(),
    }


def runs(device: list, names_: list[str]) -> dict[str, object]:
    """Each way of merging the devices' states, run: its NumPy state's arrays, or the error it raised."""
    import jax
    from jax.sharding import Mesh, PartitionSpec

    stacked = jax.tree.map(lambda *x: np.stack(x), *device)  # on the host: no program per leaf shape

    def block(s):  # the block of one shard_map device (traced)
        return jax.tree.map(lambda x: x[0], s)

    def first(s):  # the first replica of a pmap output, on the host (one transfer, then NumPy indexing)
        return jax.tree.map(lambda x: x[0], jax.device_get(s))

    mesh = Mesh(jax.devices(), ("d",))
    spec = PartitionSpec("d")
    ways = {
        "pmap_psum": lambda: first(jax.pmap(lambda s: s.psum("d"), axis_name="d")(stacked)),
        "pmap_all_gather": lambda: first(
            jax.pmap(lambda s: jax.lax.all_gather(s, "d").reduce(), axis_name="d")(stacked)
        ),
        "shard_map_psum": lambda: jax.jit(
            jax.shard_map(lambda s: block(s).psum("d"), mesh=mesh, in_specs=spec, out_specs=PartitionSpec())
        )(stacked),
        "jit_merge_chain": lambda: jax.jit(lambda a, b, c, d: a.merge(b).merge(c).merge(d))(*device),
    }
    results: dict[str, object] = {}
    for name, run in ways.items():
        try:
            results[name] = arrays(run().to_state(np.arange(DEVICES * UNITS)))
        except Exception as err:  # reported to the test, which fails with the message
            results[name] = f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return results


def main() -> None:
    import jax

    from metametric_jax.analysis_jax import BucketedArrays

    out: dict[str, object] = {"devices": jax.device_count()}
    for kind in ("integer", "fractional"):
        out[kind] = runs([BucketedArrays.from_state(s, names()) for s in states(kind == "fractional")], names())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
