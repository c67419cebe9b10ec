"""The bucketed state as a JAX pytree (analysis_jax.BucketedArrays): exact limbs, merges equal to NumPy's, devices.

The four-device merges (pmap, shard_map, all_gather + reduce) run in a subprocess (tests/_scripts/analysis_devices.py)
with XLA_FLAGS=--xla_force_host_platform_device_count=4, as tests/test_distributed.py runs the states of metrics.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

from metametric_jax import analysis
from metametric_jax.analysis_jax import BucketedArrays, decode, encode
from metametric_jax.analysis_state import BucketedState
from metametric_jax.tasks import buckets as kit

SCRIPTS = Path(__file__).parent / "_scripts"
sys.path.insert(0, str(SCRIPTS))

from analysis_devices import DEVICES, UNITS, names, states  # noqa: E402
from helpers import four_device_part  # noqa: E402

FIELDS = ("totals", "replicates", "mass", "holding", "items")


def _state(seed: int, units: range, fractional: bool, samples: int = 40) -> BucketedState:
    rng = np.random.default_rng(seed)
    n = 120
    rows = rng.integers(0, 4, (n, 3)).astype(np.float64)
    if fractional:
        rows = rows / rng.integers(1, 12, (n, 3))
    return BucketedState.from_rows(
        rows, rng.integers(units.start, units.stop, n), [f"b{v}" for v in rng.integers(0, 5, n)],
        systems=rng.integers(0, 2, n), n_systems=2, unit_ids=np.arange(units.start, units.stop), samples=samples,
        seed=3,
    )  # fmt: skip


def _aligned(state: BucketedState, order: list[str]) -> dict[str, np.ndarray]:
    """The state's arrays over the buckets of ``order`` (zeros where it has none)."""
    out = {}
    for field, axis in (("totals", 1), ("replicates", 2), ("holding", 0), ("items", 1)):
        a = getattr(state, field)
        shape = list(a.shape)
        shape[axis] = len(order)
        full = np.zeros(shape, a.dtype)
        index: list[Any] = [slice(None)] * a.ndim
        index[axis] = [order.index(b) for b in state.buckets]
        full[tuple(index)] = a
        out[field] = full
    out["mass"] = state.mass
    return out


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_limbs_hold_every_float64_of_the_grid_exactly() -> None:
    rng = np.random.default_rng(0)
    x = (rng.random(5000) + 1.0) * rng.choice([2.0**-40, 1e-6, 1.0, 1e6, 1e15, 2.0**68], 5000)
    x *= rng.choice([-1.0, 1.0], 5000)
    x = np.concatenate([x, [0.0, -0.0, 1 / 3, 2.0**70, -(2.0**70), 2.0**-44, np.nextafter(1.0, 2.0)]])
    assert _bits_equal(decode(encode(x)), x + 0.0)  # -0.0 comes back as 0.0: the sums are integers
    limbs = encode(x)
    assert limbs.dtype == np.int32 and limbs.shape == (x.size, 7)
    assert np.all((limbs[:, :-1] >= 0) & (limbs[:, :-1] < 2**24))


@pytest.mark.parametrize("value", [1e-20, 2.0**-60 / 3, float("inf"), float("nan"), 2.0**71, -(2.0**72)])
def test_values_off_the_grid_are_refused_by_name(value: float) -> None:
    with pytest.raises(ValueError, match=r"the total .* at \(1,\) is not held exactly on the device grid"):
        encode([1.0, value])


@pytest.mark.parametrize("fractional", [False, True])
def test_a_round_trip_and_a_merge_equal_numpy_s_bit_for_bit(fractional: bool) -> None:
    a, b = _state(1, range(0, 30), fractional), _state(2, range(30, 70), fractional)
    order = sorted(set(a.buckets) | set(b.buckets) | {"never"})
    back = BucketedArrays.from_state(a, order).to_state(a.units)
    assert back.buckets == tuple(x for x in order if x in a.buckets)  # laid out in order, empty buckets left out
    for field in FIELDS:
        assert _bits_equal(_aligned(back, order)[field], _aligned(a, order)[field]), field
    merged = jax.jit(lambda p, q: p.merge(q))(BucketedArrays.from_state(a, order), BucketedArrays.from_state(b, order))
    got, want = merged.to_state(np.arange(70)), a.merge(b)
    assert np.array_equal(got.units, want.units) and got.n == 70
    for field in FIELDS:
        assert _bits_equal(_aligned(got, order)[field], _aligned(want, order)[field]), field


def test_fractional_sums_do_not_depend_on_the_grouping_of_the_merges() -> None:
    parts = [_state(10 + k, range(20 * k, 20 * k + 20), True) for k in range(5)]
    order = sorted(set().union(*(p.buckets for p in parts)))
    dev = [BucketedArrays.from_state(p, order) for p in parts]
    left = dev[0].merge(dev[1]).merge(dev[2]).merge(dev[3]).merge(dev[4])
    right = dev[4].merge(dev[3].merge(dev[2].merge(dev[1].merge(dev[0]))))
    stacked = jax.tree.map(lambda *x: np.stack(x), *dev).reduce()
    exact = _exact_sum([_aligned(p, order) for p in parts])
    for state in (left, right, stacked):
        got = _aligned(state.to_state(np.arange(100)), order)
        for field in FIELDS:
            assert _bits_equal(got[field], exact[field]), field


def test_the_report_of_the_device_state_is_the_numpy_report() -> None:
    a, b = _state(1, range(0, 30), False), _state(2, range(30, 70), False)
    order = sorted(set(a.buckets) | set(b.buckets))
    dev = BucketedArrays.from_state(a, order).merge(BucketedArrays.from_state(b, order)).to_state(np.arange(70))
    spec = analysis.Analysis("x", kit.match_readout, order=order)
    assert analysis.report([(spec, dev)], min_units=2) == analysis.report([(spec, a.merge(b))], min_units=2)


def test_merges_of_other_layouts_and_wrong_units_are_refused() -> None:
    a = _state(1, range(0, 30), False)
    one = BucketedArrays.from_state(a, ["b0", "b1", "b2", "b3", "b4"])
    other = BucketedArrays.from_state(a, ["b4", "b3", "b2", "b1", "b0"])
    with pytest.raises(ValueError, match="lay every state out over the same buckets"):
        one.merge(other)
    with pytest.raises(ValueError, match="not among buckets"):
        BucketedArrays.from_state(a, ["b0"])
    with pytest.raises(ValueError, match="holds 30 units; found 29 unit ids"):
        one.to_state(np.arange(29))
    empty = BucketedArrays.empty(2, 3, one.buckets, samples=40, seed=3)
    for field in FIELDS:
        assert _bits_equal(
            _aligned(one.merge(empty).to_state(a.units), list(one.buckets))[field],
            _aligned(a, list(one.buckets))[field],
        )


def _exact_sum(aligned: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Each total's exact sum over the states, rounded once (math.fsum), and the counts' sums."""
    out = {}
    for field in FIELDS:
        stacked = np.stack([a[field] for a in aligned])
        if stacked.dtype == np.float64:
            flat = stacked.reshape(len(aligned), -1)
            out[field] = np.array([math.fsum(flat[:, j]) for j in range(flat.shape[1])]).reshape(stacked.shape[1:])
        else:
            out[field] = stacked.sum(axis=0)
    return out


@pytest.fixture(scope="module")
def devices_run(four_devices: dict[str, Any]) -> dict[str, Any]:
    """``_scripts/analysis_devices.py``'s summary, run with the other four-device checks in one subprocess
    (conftest.py)."""
    return four_device_part(four_devices, "analysis_devices")


VARIANTS = ["pmap_psum", "pmap_all_gather", "shard_map_psum", "jit_merge_chain"]


def _arrays(result: Any, variant: str) -> dict[str, np.ndarray]:
    assert isinstance(result, dict), f"{variant} failed: {result}"
    return {
        field: np.asarray(result[field], np.int64 if field in ("holding", "items") else np.float64) for field in FIELDS
    }


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_four_devices_merge_integer_states_as_numpy_merges_them(devices_run, variant) -> None:
    assert devices_run["devices"] == DEVICES
    parts = states(False)
    chained = parts[0].merge(parts[1]).merge(parts[2]).merge(parts[3])
    got = devices_run["integer"][variant]
    assert got["buckets"] == names() and got["units"] == list(range(DEVICES * UNITS))
    want = _aligned(chained, names())
    arrays = _arrays(got, variant)
    for field in FIELDS:
        assert _bits_equal(arrays[field], want[field].astype(arrays[field].dtype)), field
    # and the device sums are the sums of the devices' own states
    exact = _exact_sum([_aligned(s, names()) for s in parts])
    for field in FIELDS:
        assert np.array_equal(arrays[field], exact[field]), field


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_four_devices_merge_fractional_states_to_the_exactly_rounded_sum(devices_run, variant) -> None:
    parts = states(True)
    arrays = _arrays(devices_run["fractional"][variant], variant)
    exact = _exact_sum([_aligned(s, names()) for s in parts])
    for field in FIELDS:
        assert _bits_equal(arrays[field], exact[field].astype(arrays[field].dtype)), field
    # NumPy's chain of merges rounds once per merge: the same sums to within its three roundings
    chained = _aligned(parts[0].merge(parts[1]).merge(parts[2]).merge(parts[3]), names())
    np.testing.assert_allclose(arrays["replicates"], chained["replicates"], rtol=4e-16, atol=0)
    assert np.any(arrays["totals"] != 0) and np.any(arrays["totals"] != np.round(arrays["totals"]))
