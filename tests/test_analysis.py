"""The bucketed analysis engine: mergeable per-bucket totals and replicates, paired tests, and their corrections.

Each law is checked against a direct computation written here (weights times per-unit sums, Holm and
Benjamini-Hochberg by their textbook loops, max-T by brute force over subsets), not against the module itself.
"""

from __future__ import annotations

import itertools
import json
import math
import pickle

import numpy as np
import pytest

from metametric_jax import analysis, intervals
from metametric_jax.normalizer import prf


def f1_readout(totals):
    return prf(totals[0], totals[1], totals[2])


F1 = analysis.Analysis("b", f1_readout, "f1", count=lambda t: t[2])


def random_items(seed: int, n: int = 600, units: int = 80, systems: int = 2, buckets=("x", "y", "z")):
    rng = np.random.default_rng(seed)
    unit = rng.integers(0, units, n)
    system = rng.integers(0, systems, n)
    bucket = [str(b) for b in rng.choice(list(buckets), n)]
    rows = np.zeros((n, 3))
    kind = rng.integers(0, 3, n)  # 0: reference item; 1: predicted and matched; 2: predicted, not matched
    rows[kind == 0, 2] = 1
    rows[kind == 1, :2] = 1
    rows[kind == 2, 1] = 1
    return rows, unit, bucket, system


def build(rows, unit, bucket, system, *, units, samples=200, seed=3, systems=2):
    return analysis.BucketedState.from_rows(
        rows, unit, bucket, systems=system, n_systems=systems, unit_ids=units, samples=samples, seed=seed
    )


# ------------------------------------------------------------------------------------------------------ the state
def test_replicates_equal_weights_times_per_unit_sums() -> None:
    rows, unit, bucket, system = random_items(0)
    ids = np.arange(80) * 7 - 100  # any int64 ids
    unit = ids[unit]
    state = build(rows, unit, bucket, system, units=ids)
    w = intervals.poisson_weights(np.sort(ids), 200, 3)
    order = np.sort(ids)
    for name in ("x", "y", "z"):
        k = state.index(name)
        for s in range(2):
            per_unit = np.zeros((ids.size, 3))
            for i in range(len(rows)):
                if bucket[i] == name and system[i] == s:
                    per_unit[np.searchsorted(order, unit[i])] += rows[i]
            assert np.array_equal(state.totals[s, k], per_unit.sum(0))
            assert np.array_equal(state.replicates[s, :, k], w @ per_unit)
            assert state.items[s, k] == sum(1 for i in range(len(rows)) if bucket[i] == name and system[i] == s)
        holding = {unit[i] for i in range(len(rows)) if bucket[i] == name}
        assert state.holding[k] == len(holding)
    assert np.array_equal(state.mass, w.sum(1))
    reps, valid = state.replicate_totals()
    assert np.array_equal(valid, w.sum(1) > 0)
    assert np.array_equal(reps[:, valid], state.replicates[:, valid] * (80 / w.sum(1)[valid])[None, :, None, None])


def test_merge_of_batches_equals_one_state_in_any_order() -> None:
    rows, unit, bucket, system = random_items(1)
    whole = build(rows, unit, bucket, system, units=np.arange(80))
    parts = []
    for lo, hi in ((0, 17), (17, 50), (50, 80)):
        keep = (unit >= lo) & (unit < hi)
        names = [b for b, k in zip(bucket, keep) if k]
        parts.append(build(rows[keep], unit[keep], names, system[keep], units=np.arange(lo, hi)))
    empty = analysis.BucketedState.empty(2, 3, samples=200, seed=3)
    for order in itertools.permutations(range(3)):
        merged = empty
        for j in order:
            merged = merged.merge(parts[j])
        other = parts[order[0]].merge(parts[order[1]].merge(parts[order[2]]))
        for state in (merged, other):
            assert sorted(state.buckets) == sorted(whole.buckets) and state.n == 80
            assert np.array_equal(state.mass, whole.mass)
            for name in whole.buckets:
                k, j = whole.index(name), state.index(name)
                assert np.array_equal(state.totals[:, j], whole.totals[:, k])
                assert np.array_equal(state.replicates[:, :, j], whole.replicates[:, :, k])
                assert np.array_equal(state.holding[j], whole.holding[k])
                assert np.array_equal(state.items[:, j], whole.items[:, k])
    assert empty.merge(whole).buckets == whole.buckets


def test_merge_refuses_a_shared_unit_and_another_configuration() -> None:
    rows, unit, bucket, system = random_items(2)
    a = build(rows, unit, bucket, system, units=np.arange(80))
    b = build(rows[:5], np.full(5, 81), bucket[:5], system[:5], units=[81, 79])
    with pytest.raises(ValueError, match="unit 79 is in both merged states"):
        a.merge(b)
    c = build(rows[:5], np.full(5, 90), bucket[:5], system[:5], units=[90], seed=4)
    with pytest.raises(ValueError, match="differ in"):
        a.merge(c)
    with pytest.raises(ValueError, match="given twice"):
        build(rows, unit, bucket, system, units=[*range(80), 3])
    with pytest.raises(ValueError, match="not in unit_ids"):
        build(rows, unit, bucket, system, units=np.arange(40))


def test_state_pickles_and_is_read_only() -> None:
    rows, unit, bucket, system = random_items(3)
    state = build(rows, unit, bucket, system, units=np.arange(80))
    back = pickle.loads(pickle.dumps(state))
    assert back.buckets == state.buckets and np.array_equal(back.replicates, state.replicates)
    with pytest.raises(ValueError):
        state.totals[0, 0, 0] = 1.0
    with pytest.raises(AttributeError):
        state.samples = 3  # type: ignore[misc]


# ------------------------------------------------------------------------------------------------------ the tests
def _compared(rows, unit, system):
    """Each system's per-unit rows (60 units) and compare's paired bootstrap of them (500 samples, seed 9)."""
    ua, ub = np.zeros((60, 3)), np.zeros((60, 3))
    np.add.at(ua, unit[system == 0], rows[system == 0])
    np.add.at(ub, unit[system == 1], rows[system == 1])
    return ua, ub, intervals.paired_bootstrap(f1_readout, ub, ua, samples=500, seed=9, level=0.95)


def test_a_bucket_of_every_item_is_compare_s_paired_bootstrap() -> None:
    """The 'all' bucket's test equals intervals.paired_bootstrap on the per-unit rows (the p-value bit for bit)."""
    rows, unit, _, system = random_items(4, units=60)
    state = build(rows, unit, ["all"] * len(rows), system, units=np.arange(60), samples=500, seed=9)
    (test,) = analysis.paired_tests(state, F1)
    ua, ub, ref = _compared(rows, unit, system)
    assert test.delta == ref["delta"]["f1"]
    assert test.p_value == ref["p_value"]["f1"]
    assert test.p_error == ref["p_error"]["f1"]


def test_a_bucket_test_leaves_out_replicates_where_the_figure_is_undefined() -> None:
    """Precision over units of which few predict anything: replicates drawing none of them have no precision (0/0);
    the bucket's test leaves them out, as compare's paired bootstrap does."""
    rows, unit, _, system = random_items(6, units=60)
    rows[unit >= 6, :2] = 0  # only units 0-5 predict
    precision = analysis.Analysis("b", f1_readout, "precision", count=lambda t: t[2])
    state = build(rows, unit, ["all"] * len(rows), system, units=np.arange(60), samples=500, seed=9)
    (test,) = analysis.paired_tests(state, precision)
    ua, ub, ref = _compared(rows, unit, system)
    w = intervals.poisson_weights(np.arange(60), 500, 9)
    drawn = ((w @ ua)[:, 1] > 0) & ((w @ ub)[:, 1] > 0)
    assert drawn.sum() < 500 and int(np.sum(~np.isnan(test.replicates))) == int(drawn.sum())
    assert test.delta == ref["delta"]["precision"] and test.p_value == ref["p_value"]["precision"]


def test_p_value_by_its_definition() -> None:
    rows, unit, bucket, system = random_items(5)
    state = build(rows, unit, bucket, system, units=np.arange(80), samples=300)
    w = intervals.poisson_weights(np.arange(80), 300, 3)
    for test in analysis.paired_tests(state, F1):
        k = state.index(test.bucket)
        figures = []
        for s in (0, 1):
            per_unit = np.zeros((80, 3))
            for i in range(len(rows)):
                if bucket[i] == test.bucket and system[i] == s:
                    per_unit[unit[i]] += rows[i]
            reps = [f1_readout(t)["f1"] for t in (w @ per_unit) * (80 / w.sum(1))[:, None]]
            figures.append((f1_readout(per_unit.sum(0))["f1"], np.array(reps)))
        delta = figures[1][0] - figures[0][0]
        d = figures[1][1] - figures[0][1]
        p = (1 + np.sum(np.abs(d - delta) >= abs(delta))) / (d.size + 1)
        assert test.delta == delta and test.p_value == p
        assert test.p_error == pytest.approx(math.sqrt(p * (1 - p) / 300)) and state.holding[k] >= 10


def test_small_buckets_are_flagged_and_left_out_of_the_family() -> None:
    rows, unit, bucket, system = random_items(6)
    bucket = list(bucket)
    rare = [i for i in range(len(rows)) if unit[i] < 4]
    for i in rare:
        bucket[i] = "rare"
    state = build(rows, unit, bucket, system, units=np.arange(80))
    report = analysis.report([(F1, state)], min_units=10)
    entry = report["analyses"]["b"]["rare"]
    assert entry["units"] == 4 and entry["test"]["too_small"] is True
    assert entry["test"]["p_value"] is None and entry["test"]["p_adjusted"] is None
    assert report["correction"]["tests"] == 3
    assert any("too_small" in note for note in report["notes"])
    again = analysis.report([(F1, state)], min_units=4)
    assert again["analyses"]["b"]["rare"]["test"]["p_value"] is not None and again["correction"]["tests"] == 4


def test_report_is_strict_json_and_names_its_family() -> None:
    rows, unit, bucket, system = random_items(7, systems=3)
    state = build(rows, unit, bucket, system, units=np.arange(80), systems=3)
    report = analysis.report([(F1, state)], correction="bh")
    text = json.dumps(report, allow_nan=False)
    back = json.loads(text)
    entry = back["analyses"]["b"]["x"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2 and "test" not in entry
    assert entry["count"] == state.totals[0, state.index("x"), 2]
    c = back["correction"]
    assert (
        c["method"] == "bh"
        and c["tests"] == 6
        and c["floor"] == 1 / 201
        and "each system against the first" in (c["family"])
    )
    alone = build(rows, unit, bucket, np.zeros(len(rows), np.int64), units=np.arange(80), systems=1)
    one = analysis.report([(F1, alone)])
    assert "test" not in one["analyses"]["b"]["x"] and one["correction"]["tests"] == 0


# ------------------------------------------------------------------------------------------------------ corrections
def holm_by_hand(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def bh_by_hand(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(min(1.0, m * p[j] / (r + 1)) for r, j in enumerate(order) if r >= rank)
    return out


def fake_tests(p_values, deltas=None, reps=None):
    out = []
    for j, p in enumerate(p_values):
        delta = 0.0 if deltas is None else deltas[j]
        rep = np.zeros(4) if reps is None else reps[:, j]
        out.append(analysis.PairedTest("a", str(j), 1, delta, rep, p, 0.0, False))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_holm_and_bh_equal_their_textbook_loops(seed) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 12))
    p = rng.choice([0.001, 0.004, 0.01, 0.02, 0.03, 0.2, 0.5, 0.9, 1.0], m).tolist()
    if seed % 3 == 0:
        p = rng.uniform(0, 0.2, m).tolist()
    tests = fake_tests(p)
    assert analysis.correct(tests, "holm") == pytest.approx(holm_by_hand(p), abs=1e-15)
    assert analysis.correct(tests, "bh") == pytest.approx(bh_by_hand(p), abs=1e-15)
    assert analysis.correct(tests, "none") == p


def test_untested_entries_stay_none_and_out_of_the_family() -> None:
    tests = fake_tests([0.01, 0.04])
    tests.insert(1, analysis.PairedTest("a", "small", 1, 0.1, np.zeros(4), None, None, True))
    assert analysis.correct(tests, "holm") == [0.02, None, 0.04]
    with pytest.raises(ValueError, match="unknown correction"):
        analysis.correct(tests, "bonferroni")
    assert analysis.normalize_correction("Benjamini-Hochberg") == "bh"


def max_t_brute_force(deltas, reps, statistic):
    """Westfall-Young step-down max-T by its definition: for the r-th most significant test, the share of replicates
    whose maximum statistic over the tests ranked r and below reaches its statistic; then monotone."""
    m = len(deltas)
    scale = np.ones(m)
    if statistic == "studentized":
        scale = np.array([np.std(reps[:, j], ddof=1) or 1.0 for j in range(m)])
    t = [abs(deltas[j]) / scale[j] for j in range(m)]
    ranked = sorted(range(m), key=lambda j: -t[j])
    raw = {}
    for r, j in enumerate(ranked):
        below = ranked[r:]
        count = 0
        for b in range(reps.shape[0]):
            if max(abs(reps[b, i] - deltas[i]) / scale[i] for i in below) >= t[j]:
                count += 1
        raw[j] = (1 + count) / (reps.shape[0] + 1)
    out = [0.0] * m
    best = 0.0
    for j in ranked:
        best = max(best, raw[j])
        out[j] = min(1.0, best)
    return out


@pytest.mark.parametrize("statistic", ["studentized", "raw"])
@pytest.mark.parametrize("seed", range(8))
def test_max_t_equals_brute_force(statistic, seed) -> None:
    rng = np.random.default_rng(seed)
    m, b = int(rng.integers(2, 6)), 40
    deltas = rng.normal(0, 0.05, m)
    reps = deltas[None, :] + rng.normal(0, rng.uniform(0.01, 0.08, m)[None, :], (b, m))
    tests = fake_tests([0.5] * m, deltas.tolist(), reps)
    got = analysis.correct(tests, "maxt", statistic)
    assert got == pytest.approx(max_t_brute_force(deltas.tolist(), reps, statistic), abs=1e-15)


def test_max_t_of_one_test_is_its_p_value_and_never_below_it() -> None:
    rows, unit, bucket, system = random_items(8)
    state = build(rows, unit, bucket, system, units=np.arange(80), samples=300)
    tests = analysis.paired_tests(state, F1)
    for t in tests:
        assert analysis.correct([t], "maxt", "raw") == [t.p_value]
        assert analysis.correct([t], "maxt", "studentized") == [t.p_value]
    adjusted = analysis.correct(tests, "maxt")
    assert all(a >= t.p_value for a, t in zip(adjusted, tests))
