"""The host resampling engine: a read-out over weighted example rows, checked against direct NumPy computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax import intervals
from metametric_jax._ratios import ratio


def f1(totals: np.ndarray) -> dict:
    xy, xx, yy = totals[:3]
    return {"f1": 2 * xy / (xx + yy) if xx + yy else 0.0, "overlap": float(xy)}


ROWS = np.array([[2, 3, 4], [1, 1, 2], [0, 2, 1], [3, 3, 3], [1, 4, 2], [2, 2, 5]], np.float64)


def test_weights_equal_the_device_hash_for_int32_ids() -> None:
    from metametric_jax import resampling

    ids = np.array([0, 1, 2, -5, 2**31 - 1, -(2**31), 77])
    for seed in (0, 3, 2**33 + 5):
        assert np.array_equal(intervals.poisson_weights(ids, 40, seed), resampling.poisson_weights(ids, 40, seed))
        assert np.array_equal(intervals.swap_masks(ids, 40, seed), resampling.swap_masks(ids, 40, seed))
        assert np.array_equal(
            intervals.poisson_weights(ids, 10, seed, start=30), intervals.poisson_weights(ids, 40, seed)[30:]
        )


def test_64_bit_ids_are_not_folded() -> None:
    w = intervals.poisson_weights([1, 2**32 + 1, -(2**40), 2**63 - 1], 200, 0)
    for i, j in itertools.combinations(range(4), 2):
        assert not np.array_equal(w[:, i], w[:, j])
    w = intervals.poisson_weights(np.arange(200_000), 1, 7)
    assert w.mean() == pytest.approx(1.0, abs=0.01) and w.var() == pytest.approx(1.0, abs=0.02)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=40), st.randoms())
def test_exact_totals_do_not_depend_on_order(values, rnd) -> None:
    rows = np.array(values)[:, None] * np.array([1.0, 0.1, 3.0])
    order = list(range(len(rows)))
    rnd.shuffle(order)
    shuffled = rows[order]
    assert np.array_equal(intervals.exact_totals(rows), intervals.exact_totals(shuffled))
    assert list(intervals.exact_totals(rows)) == [math.fsum(c) for c in rows.T]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40), st.integers(0, 39), st.randoms())
def test_exact_totals_of_columns_of_every_kind_are_fsum(values, at, rnd) -> None:
    """Integer columns and columns of one value summed as they are, the others with fsum: fsum's bits for each."""
    n = len(values)
    one = np.zeros(n)
    one[at % n] = values[0]
    big = np.full(n, 2.0**51 + 1)  # integers whose sum passes 2**52: not summed as they are
    rows = np.stack([np.array(values), np.round(np.array(values)), one, big, np.zeros(n), big + 0.5], axis=1)
    order = list(range(n))
    rnd.shuffle(order)
    assert list(intervals.exact_totals(rows)) == [math.fsum(c) for c in rows.T]
    assert np.array_equal(intervals.exact_totals(rows), intervals.exact_totals(rows[order]))


def test_bootstrap_equals_a_direct_numpy_computation() -> None:
    samples, seed, level = 300, 4, 0.9
    got = intervals.bootstrap(f1, ROWS, samples=samples, seed=seed, level=level)
    w = intervals.poisson_weights(np.arange(len(ROWS)), samples, seed)
    keep = w.sum(1) > 0
    reps = (w @ ROWS)[keep] * (len(ROWS) / w.sum(1)[keep])[:, None]
    f = np.array([f1(t)["f1"] for t in reps])
    o = reps[:, 0]
    assert got["estimate"]["f1"] == f1(ROWS.sum(0))["f1"]
    assert got["low"]["f1"] == pytest.approx(np.quantile(f, 0.05), abs=1e-12)
    assert got["high"]["f1"] == pytest.approx(np.quantile(f, 0.95), abs=1e-12)
    assert got["stderr"]["overlap"] == pytest.approx(np.std(o, ddof=1), abs=1e-9)


def test_an_interval_of_a_sum_is_conditioned_on_the_number_of_examples() -> None:
    rng = np.random.default_rng(0)
    rows = np.stack([rng.integers(0, 5, 400), rng.integers(5, 9, 400), rng.integers(5, 9, 400)], 1).astype(float)
    got = intervals.bootstrap(f1, rows, samples=2000, seed=1, level=0.95)
    idx = rng.integers(0, 400, (2000, 400))
    fixed_n = rows[idx, 0].sum(1)  # the multinomial bootstrap: exactly n examples per resample
    assert got["stderr"]["overlap"] == pytest.approx(np.std(fixed_n, ddof=1), rel=0.15)
    unconditioned = (intervals.poisson_weights(np.arange(400), 2000, 1) @ rows)[:, 0]
    assert np.std(unconditioned) > 1.5 * got["stderr"]["overlap"]


def test_paired_bootstrap_p_value_formula() -> None:
    other = ROWS[:, [0, 1, 2]].copy()
    other[:, 0] = np.maximum(other[:, 0] - 1, 0)
    got = intervals.paired_bootstrap(f1, ROWS, other, samples=500, seed=2, level=0.95)
    ids = np.arange(len(ROWS))
    w = intervals.poisson_weights(ids, 500, 2)
    keep = w.sum(1) > 0
    da = np.array([f1(t)["f1"] for t in (w @ ROWS)[keep]])
    db = np.array([f1(t)["f1"] for t in (w @ other)[keep]])
    delta = f1(ROWS.sum(0))["f1"] - f1(other.sum(0))["f1"]
    d = da - db
    p = (1 + np.sum(np.abs(d - delta) >= abs(delta))) / (d.size + 1)
    assert got["delta"]["f1"] == delta
    assert got["p_value"]["f1"] == pytest.approx(p, abs=1e-12)
    assert got["p_error"]["f1"] == pytest.approx(math.sqrt(p * (1 - p) / d.size))


def test_randomization_equals_enumerated_swaps() -> None:
    other = ROWS[::-1].copy()
    got = intervals.randomization(f1, ROWS, other, samples=400, seed=9)
    s = intervals.swap_masks(np.arange(len(ROWS)), 400, 9)
    count = 0
    delta = f1(ROWS.sum(0))["f1"] - f1(other.sum(0))["f1"]
    for mask in s:
        a = np.where(mask[:, None] > 0, other, ROWS).sum(0)
        b = np.where(mask[:, None] > 0, ROWS, other).sum(0)
        count += abs(f1(a)["f1"] - f1(b)["f1"]) >= abs(delta) - 1e-12
    assert got["p_value"]["f1"] == pytest.approx((1 + count) / 401)


def test_a_figure_that_does_not_exist_is_none_not_nan() -> None:
    def readout(t: np.ndarray) -> dict:
        return {"ratio": t[0] / t[1] if t[1] else None}

    got = intervals.bootstrap(readout, np.zeros((3, 2)), samples=20, seed=0, level=0.95)
    assert got == {
        "estimate": {"ratio": None},
        "low": {"ratio": None},
        "high": {"ratio": None},
        "stderr": {"ratio": None},
    }
    got = intervals.bootstrap(readout, np.zeros((0, 2)), samples=20, seed=0, level=0.95)
    assert got["low"] == {"ratio": None}


def _rare(t: np.ndarray) -> dict:
    # a type that one unit of 40 holds: its precision is 0/0 (reported 0.0, UNDEFINED) wherever no replicate holds it
    return {"rare": ratio(t[0], t[1]), "common": ratio(t[2], t[3])}


RARE = np.array([[1.0, 1.0, 1.0, 2.0]] + [[0.0, 0.0, float(k % 2), 1.0] for k in range(39)])


def test_a_replicate_without_a_ratio_s_denominator_leaves_the_figure_out() -> None:
    samples, seed = 400, 3
    got = intervals.bootstrap(_rare, RARE, samples=samples, seed=seed, level=0.9)
    w = intervals.poisson_weights(np.arange(len(RARE)), samples, seed)
    held = w[:, 0] > 0  # the replicates that draw the rare unit: its precision is 1 there, undefined elsewhere
    assert 0 < held.sum() < samples
    assert got["estimate"]["rare"] == 1.0 and got["low"]["rare"] == got["high"]["rare"] == 1.0
    assert got["stderr"]["rare"] == 0.0
    keep = w.sum(1) > 0
    reps = (w @ RARE)[keep] * (len(RARE) / w.sum(1)[keep])[:, None]
    common = reps[:, 2] / reps[:, 3]
    assert got["low"]["common"] == pytest.approx(np.quantile(common, 0.05), abs=1e-12)
    other = RARE.copy()
    other[0, 0] = 0.0  # the other system misses the rare unit: 0 where it is drawn
    paired = intervals.paired_bootstrap(_rare, RARE, other, samples=samples, seed=seed, level=0.9)
    assert paired["delta"]["rare"] == 1.0 and paired["low"]["rare"] == paired["high"]["rare"] == 1.0
    assert paired["p_value"]["rare"] == pytest.approx(1 / (held.sum() + 1))  # over the replicates that hold it
    swapped = intervals.randomization(_rare, RARE, other, samples=samples, seed=seed)
    assert swapped["delta"]["rare"] == 1.0 and swapped["p_value"]["rare"] == pytest.approx(1.0)
    zero = intervals.bootstrap(_rare, RARE[1:], samples=50, seed=0, level=0.9)  # undefined everywhere
    assert zero["estimate"]["rare"] == 0.0 and zero["low"]["rare"] is None and zero["stderr"]["rare"] is None


def test_group_rows_sums_units_in_order_of_appearance() -> None:
    rows = np.arange(12, dtype=float).reshape(6, 2)
    got = intervals.group_rows(rows, ["d2", "d2", "d1", "d3", "d3", "d3"])
    assert got.tolist() == [[2, 4], [4, 5], [24, 27]]


def test_memory_is_checked_before_allocating() -> None:
    intervals.check_memory(1000, 3453, 40, "ok")
    with pytest.raises(MemoryError, match=r"GiB"):
        intervals.check_memory(100_000_000, 3453, 40, "--bootstrap 100000000")


@pytest.mark.parametrize("seed", [0, 11, 2**40 + 3])
def test_weights_and_swaps_are_the_plain_formula(seed: int) -> None:
    """The in-place hashes and the counted thresholds give what the definition gives (weights up to the tail)."""
    rng = np.random.default_rng(seed % 2**32)
    ids = np.concatenate([np.arange(3000), rng.integers(-(2**63), 2**63 - 1, 3000, dtype=np.int64)])
    for start, rows in ((0, 200), (37, 65)):
        per_id = intervals.id_hashes(ids, seed, intervals.POISSON_STREAM)
        r = np.arange(start, start + rows, dtype=np.uint64).astype(np.uint32)[:, None]
        with np.errstate(over="ignore"):
            mixed = intervals.mix32(per_id[None, :] ^ (r * np.uint32(0x9E3779B9)))
            h = intervals.mix32(mixed + np.uint32(intervals.POISSON_STREAM))
        plain = np.searchsorted(intervals.THRESHOLDS, h, side="right").astype(np.float64)
        got = intervals.poisson_weights(ids, rows, seed, start=start)
        assert got.dtype == np.float64 and np.array_equal(got, plain)
        assert got.max() >= 5  # the tail past the three counted thresholds is exercised
        np.testing.assert_array_equal(intervals.hashes(ids, rows, seed, intervals.POISSON_STREAM, start), h)
