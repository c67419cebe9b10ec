"""Bootstrap intervals and paired tests: exact against direct NumPy computations, and statistically calibrated."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import REPLICATES
from helpers import BAG, Sentence, corpus, decode, tags

from metametric_jax import dsl, make_metric, make_suite, metric_of, resampling
from metametric_jax import significance as sig
from metametric_jax.device import encode_pairs
from metametric_jax.normalizer import safe_divide

Spans = BAG
P = make_metric(dsl.set_matching(dsl.discrete()), "precision", name="sig_p")
R = make_metric(dsl.set_matching(dsl.discrete()), "recall", name="sig_r")
PR = make_suite(
    "sig_pr",
    {"p": P, "r": R},
    {
        "f1": lambda res: safe_divide(
            2 * res["p"]["precision"] * res["r"]["recall"], res["p"]["precision"] + res["r"]["recall"]
        )
    },
)

PR_BOOT = sig.bootstrap(PR, replicates=REPLICATES, seed=0)  # the suite's: its compute compiles once


def test_weights_and_masks_are_pure_functions_of_seed_id_and_replicate() -> None:
    ids = np.array([5, 3, 9, 2**40 + 1])
    w = sig.poisson_weights(ids, 64, seed=7)
    np.testing.assert_array_equal(w[:, 1:3], sig.poisson_weights(ids[1:3], 64, seed=7))
    np.testing.assert_array_equal(w[:10], sig.poisson_weights(ids, 10, seed=7))
    assert not np.array_equal(w, sig.poisson_weights(ids, 64, seed=8))
    big = sig.poisson_weights(np.arange(20000), 20, seed=0)
    assert abs(big.mean() - 1.0) < 0.01 and abs(big.var() - 1.0) < 0.02  # Poisson(1)
    assert abs((big == 0).mean() - np.exp(-1)) < 0.01
    m = sig.swap_masks(np.arange(20000), 5, seed=0)
    assert set(np.unique(m)) == {0.0, 1.0} and abs(m.mean() - 0.5) < 0.01


def test_each_replicate_equals_the_weighted_metric(bag_boot) -> None:
    preds, refs = corpus(40, 0)
    ids = np.arange(100, 140)
    state = bag_boot.from_model_output(preds, refs, example_ids=ids)
    reps = state.replicates()
    w = sig.poisson_weights(ids, REPLICATES, seed=0)
    for b in range(REPLICATES):
        direct = Spans.from_model_output(preds, refs, weights=w[b]).compute()
        for key, value in direct.items():
            # a raw sum is conditioned on the number of examples: rescaled by n / n_b; ratios are unchanged
            want = float(value) * 40 / w[b].sum() if key == "overlap" else float(value)
            np.testing.assert_allclose(reps[key][b], want, rtol=1e-6, atol=1e-7, err_msg=f"{key} {b}")
    est = state.compute()["estimate"]
    for key, value in Spans.from_model_output(preds, refs).compute().items():
        assert float(est[key]) == float(value)


def test_state_does_not_depend_on_batching_order_or_stacking(bag_boot) -> None:
    preds, refs = corpus(37, 1)
    ids = np.arange(37)
    Boot = bag_boot
    one = Boot.from_model_output(preds, refs, example_ids=ids)
    parts = [
        Boot.from_model_output(preds[i : i + 5], refs[i : i + 5], example_ids=ids[i : i + 5]) for i in range(0, 37, 5)
    ]
    forward = Boot.empty()
    for s in parts:
        forward = forward.merge(s)
    backward = Boot.empty()
    for s in reversed(parts):
        backward = backward.merge(s)
    stacked = jax.tree.map(lambda *x: np.stack(x), *parts).reduce()
    for other in (forward, backward, stacked):
        for key, r in one.replicates().items():
            np.testing.assert_allclose(other.replicates()[key], r, rtol=1e-6, atol=1e-7)
        assert np.asarray(other.fingerprint).sum() == np.asarray(one.fingerprint).sum()


def test_suite_figures_are_computed_per_replicate() -> None:
    preds, refs = corpus(30, 2)
    ids = np.arange(30)
    reps = PR_BOOT.from_model_output(preds, refs, example_ids=ids).replicates()
    w = sig.poisson_weights(ids, REPLICATES, seed=0)
    for b in range(REPLICATES):
        direct = PR.from_model_output(preds, refs, weights=w[b]).compute()
        np.testing.assert_allclose(reps["f1"][b], float(direct["f1"]), rtol=1e-6)
        np.testing.assert_allclose(reps["p"]["precision"][b], float(direct["p"]["precision"]), rtol=1e-6)


def test_paired_bootstrap_equals_a_direct_computation_from_the_weights() -> None:
    preds_a, refs = corpus(60, 3)
    preds_b, _ = corpus(60, 4)
    ids = np.arange(60)
    Boot = sig.bootstrap(Spans, replicates=200, seed=5, level=0.9)
    a = Boot.from_model_output(preds_a, refs, example_ids=ids)
    b = Boot.from_model_output(preds_b, refs, example_ids=ids)
    out = sig.paired_bootstrap(a, b)["f1"]
    w = sig.poisson_weights(ids, 200, seed=5)
    fa = np.array([float(Spans.from_model_output(preds_a, refs, weights=wb).compute()["f1"]) for wb in w])
    fb = np.array([float(Spans.from_model_output(preds_b, refs, weights=wb).compute()["f1"]) for wb in w])
    delta = float(Spans.from_model_output(preds_a, refs).compute()["f1"]) - float(
        Spans.from_model_output(preds_b, refs).compute()["f1"]
    )
    d = fa - fb
    assert out["delta"] == pytest.approx(delta, abs=1e-7)
    assert out["p_value"] == pytest.approx((1 + np.sum(np.abs(d - delta) >= abs(delta))) / 201, abs=1 / 201 + 1e-12)
    assert out["low"] == pytest.approx(np.quantile(d, 0.05), abs=1e-6)
    assert out["high"] == pytest.approx(np.quantile(d, 0.95), abs=1e-6)


def test_randomization_equals_a_direct_computation_from_the_masks() -> None:
    preds_a, refs = corpus(50, 6)
    preds_b, _ = corpus(50, 7)
    ids = np.arange(50)
    Rnd = sig.randomization(Spans, permutations=300, seed=9)
    out = Rnd.from_model_output(preds_a, preds_b, refs, example_ids=ids).compute()["f1"]
    masks = sig.swap_masks(ids, 300, seed=9)
    f = lambda p: float(Spans.from_model_output(p, refs).compute()["f1"])  # noqa: E731
    delta = f(preds_a) - f(preds_b)
    ds = []
    for m in masks:
        sa = [b if s else a for a, b, s in zip(preds_a, preds_b, m)]
        sb = [a if s else b for a, b, s in zip(preds_a, preds_b, m)]
        ds.append(f(sa) - f(sb))
    expected = (1 + np.sum(np.abs(np.array(ds)) >= abs(delta) - 1e-7)) / 301
    assert out["delta"] == pytest.approx(delta, abs=1e-7)
    assert out["p_value"] == pytest.approx(expected, abs=2 / 301)


def test_identical_systems_give_p_one_and_a_better_system_a_small_p() -> None:
    rng = np.random.default_rng(11)
    refs = [list(range(10 * i, 10 * i + 4)) for i in range(500)]
    base = [[x for x in r if rng.random() < 0.6] + [10 * i + 9] for i, r in enumerate(refs)]
    better = [
        sorted(set(b) | {next((x for x in r if x not in b), 10 * i + 9)}) for i, (b, r) in enumerate(zip(base, refs))
    ]
    ids = np.arange(500)
    Boot = sig.bootstrap(Spans, replicates=500, seed=0)
    a, b = Boot.from_model_output(base, refs, example_ids=ids), Boot.from_model_output(base, refs, example_ids=ids)
    same = sig.paired_bootstrap(a, b)["f1"]
    assert same["delta"] == 0.0 and same["p_value"] == 1.0
    c = Boot.from_model_output(better, refs, example_ids=ids)
    assert sig.paired_bootstrap(c, a)["f1"]["p_value"] < 0.01
    Rnd = sig.randomization(Spans, permutations=500, seed=0)
    assert Rnd.from_model_output(base, base, refs, example_ids=ids).compute()["f1"]["p_value"] == 1.0
    assert Rnd.from_model_output(better, base, refs, example_ids=ids).compute()["f1"]["p_value"] < 0.01


def test_systems_scored_on_different_examples_are_refused(bag_boot) -> None:
    preds, refs = corpus(10, 8)
    Boot = bag_boot
    a = Boot.from_model_output(preds, refs, example_ids=np.arange(10))
    b = Boot.from_model_output(preds, refs, example_ids=np.arange(1, 11))
    with pytest.raises(ValueError, match="different examples"):
        sig.paired_bootstrap(a, b)
    other = sig.bootstrap(Spans, replicates=REPLICATES, seed=1).from_model_output(
        preds, refs, example_ids=np.arange(10)
    )
    with pytest.raises(ValueError, match="seed"):
        sig.paired_bootstrap(a, other)
    with pytest.raises(TypeError, match="integers"):
        Boot.from_model_output(preds, refs, example_ids=[0.5] * 10)


def test_running_positions_are_the_default_ids(bag_boot) -> None:
    preds, refs = corpus(12, 9)
    Boot = bag_boot
    Boot.reset_positions()
    streamed = Boot.from_model_output(preds[:5], refs[:5]).merge(Boot.from_model_output(preds[5:], refs[5:]))
    explicit = Boot.from_model_output(preds, refs, example_ids=np.arange(12))
    np.testing.assert_allclose(streamed.replicates()["f1"], explicit.replicates()["f1"], rtol=1e-6)


def test_an_interval_of_a_raw_sum_is_conditioned_on_the_number_of_examples() -> None:
    # per-example overlaps 3..5: a Poisson bootstrap's random sample size alone would make the interval of the sum
    # (overlap) about 5x as wide as the fixed-n bootstrap's; rescaled to n examples, the two agree
    rng = np.random.default_rng(0)
    n = 300
    sizes = rng.integers(3, 6, n)
    refs = [list(range(10 * i, 10 * i + int(k))) for i, k in enumerate(sizes)]
    preds = [r + [10 * i + 9] for i, r in enumerate(refs)]
    xy = sizes.astype(np.float64)
    Boot = sig.bootstrap(Spans, replicates=2000, seed=0, level=0.95)
    out = Boot.from_model_output(preds, refs, example_ids=np.arange(n)).compute()
    assert float(out["estimate"]["overlap"]) == xy.sum()
    resampled = xy[rng.integers(0, n, (4000, n))].sum(axis=1)  # the multinomial bootstrap: exactly n per resample
    width = float(out["high"]["overlap"]) - float(out["low"]["overlap"])
    fixed = np.quantile(resampled, 0.975) - np.quantile(resampled, 0.025)
    assert 0.85 < width / fixed < 1.15, (width, fixed)
    assert 0.85 < float(out["stderr"]["overlap"]) / resampled.std(ddof=1) < 1.15
    # ratios are unchanged by the rescaling
    w = sig.poisson_weights(np.arange(n), 2000, 0)
    f1 = [float(Spans.from_model_output(preds, refs, weights=w[b]).compute()["f1"]) for b in range(5)]
    reps = Boot.from_model_output(preds, refs, example_ids=np.arange(n)).replicates()
    np.testing.assert_allclose(np.asarray(reps["f1"])[:5], f1, rtol=1e-6)


@pytest.mark.slow
def test_interval_covers_the_population_f1_about_95_percent_of_the_time() -> None:
    # gold: 5 items per document; each found with probability 0.7; Poisson(1) false positives per document
    population_f1 = 2 * 3.5 / ((3.5 + 1.0) + 5.0)
    rng = np.random.default_rng(2026)
    Boot = sig.bootstrap(Spans, replicates=300, seed=0, level=0.95)
    covered = 0
    trials = 400
    for t in range(trials):
        refs = [[10 * i + k for k in range(5)] for i in range(150)]
        preds = [
            [x for x in r if rng.random() < 0.7] + [10 * i + 5 + k for k in range(rng.poisson(1.0))]
            for i, r in enumerate(refs)
        ]
        out = Boot.from_model_output(preds, refs, example_ids=np.arange(150) + 1000 * t).compute()
        covered += out["low"]["f1"] <= population_f1 <= out["high"]["f1"]
    assert 0.93 <= covered / trials <= 0.97, covered / trials


# ------------------------------------------------------------------------------------------------ every path
def test_replicates_that_weight_no_example_have_no_statistic() -> None:
    Boot = sig.bootstrap(Spans, replicates=400, seed=1)
    preds, refs, ids = [["a", "b"], ["c"], []], [["a"], ["c", "d"], ["e"]], np.arange(3)
    state = Boot.from_model_output(preds, refs, example_ids=ids)
    empty = np.asarray(sig.poisson_weights(ids, 400, 1)).sum(axis=1) == 0
    assert 5 <= empty.sum() <= 40  # e^-3 of 400 is about 20
    reps = np.asarray(state.replicates()["f1"], np.float64)
    assert np.array_equal(np.isnan(reps), empty)  # they used to read 0.0 (zero_division) and drag the interval down
    out = state.compute()
    kept = reps[~empty]
    assert float(out["stderr"]["f1"]) == pytest.approx(np.std(kept, ddof=1), rel=1e-5)
    assert float(out["low"]["f1"]) == pytest.approx(np.quantile(kept, 0.025), rel=1e-5, abs=1e-7)
    other = Boot.from_model_output([["a"], ["c", "d"], ["x"]], refs, example_ids=ids)
    d = (reps - np.asarray(other.replicates()["f1"], np.float64))[~empty]
    delta = float(state.plain.compute()["f1"]) - float(other.plain.compute()["f1"])
    p = sig.paired_bootstrap(state, other)["f1"]["p_value"]
    assert p == pytest.approx((1 + np.sum(np.abs(d - delta) >= abs(delta))) / (d.size + 1))


def test_device_bootstrap_checks_ids_and_weights_as_the_host_does(sentence_boot) -> None:
    pred, gold = tags(8, 1)
    pair = encode_pairs([decode(r) for r in pred], [decode(r) for r in gold], metric=metric_of(Sentence))
    Boot = sentence_boot
    ids = np.arange(8)
    with pytest.raises(TypeError, match="integers"):
        Boot.from_records(pair, example_ids=ids + 0.5)  # was truncated to integers without a word
    with pytest.raises(ValueError, match="int32 range"):
        Boot.from_records(pair, example_ids=ids + 2**40)
    with pytest.raises(ValueError, match="shape"):
        Boot.from_records(pair, example_ids=ids[:7])
    for bad in (-np.ones(8), np.full(8, np.nan), np.ones(7)):
        with pytest.raises(ValueError):
            Boot.from_records(pair, bad, example_ids=ids)
    weights = np.array([0.0, 1.0, 2.0, 1.0, 3.0, 1.0, 0.5, 1.0])
    host = Boot.from_model_output([decode(r) for r in pred], [decode(r) for r in gold], weights, example_ids=ids)
    device = Boot.from_records(pair, weights, example_ids=ids)
    for key, value in host.replicates().items():
        np.testing.assert_allclose(device.replicates()[key], value, rtol=2e-6, atol=1e-6, err_msg=key)


def test_callback_and_device_paths_equal_the_host_path(sentence_boot) -> None:
    pred, gold = tags(8, 0)
    ids = np.arange(500, 508)
    Boot = sentence_boot
    host = Boot.from_model_output([decode(r) for r in pred], [decode(r) for r in gold], example_ids=ids)
    eager = Boot.from_model_output(pred, gold, example_ids=ids, decode=decode)
    jitted = jax.jit(lambda p, g, i: Boot.from_model_output(p, g, example_ids=i, decode=decode))(pred, gold, ids)
    pair = encode_pairs([decode(r) for r in pred], [decode(r) for r in gold], metric=metric_of(Sentence))
    device = jax.jit(lambda pr, i: Boot.from_records(pr, example_ids=i))(pair, jnp.asarray(ids, jnp.int32))
    np.testing.assert_array_equal(
        sig.poisson_weights(jnp.asarray(ids, jnp.int32), REPLICATES, 0), sig.poisson_weights(ids, REPLICATES, 0)
    )
    want = host.replicates()
    for other in (eager, jitted, device):
        got = other.replicates()
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=2e-6, atol=1e-6, err_msg=key)
        fp, want_fp = (np.asarray(s.fingerprint, np.float64).sum(-1) for s in (other, host))
        if other is device:  # the ids and their number; the encoded references are not digested
            lanes = [resampling.FP_IDS, resampling.FP_EXAMPLES]
            np.testing.assert_array_equal(fp[lanes], want_fp[lanes])
            assert fp[resampling.FP_DIGESTED] == 0 and want_fp[resampling.FP_DIGESTED] == 8
        else:  # the callback path digests the decoded references on the host: the same fingerprint
            np.testing.assert_array_equal(fp, want_fp)
        assert float(other.compute()["estimate"]["f1"]) == pytest.approx(float(host.compute()["estimate"]["f1"]))
    with pytest.raises(ValueError, match="example_ids"):
        jax.jit(lambda p, g: Boot.from_model_output(p, g, decode=decode))(pred, gold)


# ------------------------------------------------------------------------------------------------ laws, checkpoints
def test_bootstrap_and_randomization_states_obey_the_accumulator_laws(bag_rnd) -> None:
    from metametric_jax import testing as laws

    preds, refs = corpus(30, 12)
    parts = [
        PR_BOOT.from_model_output(preds[i : i + 10], refs[i : i + 10], example_ids=np.arange(i, i + 10))
        for i in (0, 10, 20)
    ]
    laws.check_identity(parts[0])
    laws.check_associative(*parts)
    laws.check_commutative(parts[0], parts[1])
    laws.check_stack_reduce(parts)
    laws.check_jit(parts)
    preds_b, _ = corpus(30, 13)
    rparts = [
        bag_rnd.from_model_output(
            preds[i : i + 10], preds_b[i : i + 10], refs[i : i + 10], example_ids=np.arange(i, i + 10)
        )
        for i in (0, 10, 20)
    ]
    laws.check_identity(rparts[0])
    laws.check_associative(*rparts)
    laws.check_commutative(rparts[0], rparts[2])
    laws.check_stack_reduce(rparts)


def test_bootstrap_checkpoints_restore_only_into_the_same_metric(bag_boot) -> None:
    from flax import serialization

    preds, refs = corpus(12, 14)
    Boot = bag_boot
    state = Boot.from_model_output(preds, refs, example_ids=np.arange(12))
    restored = serialization.from_bytes(Boot.empty(), serialization.to_bytes(state))
    np.testing.assert_array_equal(restored.replicates()["f1"], state.replicates()["f1"])
    Other = sig.bootstrap(make_metric(dsl.set_matching(dsl.discrete()), "f1", name="sig_other"), REPLICATES)
    with pytest.raises(ValueError, match="resampled_bag"):
        serialization.from_bytes(Other.empty(), serialization.to_bytes(state))


def test_the_same_arguments_give_the_same_class_whose_states_merge() -> None:
    preds, refs = corpus(10, 15)
    assert sig.bootstrap(Spans, REPLICATES, 0, 0.95) is sig.bootstrap(Spans, replicates=REPLICATES, seed=0, level=0.95)
    assert sig.randomization(Spans, REPLICATES, 0) is sig.randomization(Spans, permutations=REPLICATES, seed=0)
    for other in (
        sig.bootstrap(Spans, REPLICATES + 1, 0, 0.95),
        sig.bootstrap(Spans, REPLICATES, 1, 0.95),
        sig.bootstrap(Spans, REPLICATES, 0, 0.9),
        sig.bootstrap(P, REPLICATES, 0, 0.95),
    ):
        assert other is not sig.bootstrap(Spans, REPLICATES, 0, 0.95)
    assert sig.randomization(Spans, REPLICATES, 1) is not sig.randomization(Spans, REPLICATES, 0)
    a = sig.bootstrap(Spans, REPLICATES, 0, 0.95).from_model_output(preds[:5], refs[:5], example_ids=np.arange(5))
    b = sig.bootstrap(Spans, REPLICATES, 0, 0.95).from_model_output(preds[5:], refs[5:], example_ids=np.arange(5, 10))
    whole = sig.bootstrap(Spans, REPLICATES, 0, 0.95).from_model_output(preds, refs, example_ids=np.arange(10))
    np.testing.assert_allclose(a.merge(b).replicates()["f1"], whole.replicates()["f1"], rtol=1e-6)
    ra = sig.randomization(Spans, REPLICATES, 0).from_model_output(
        preds[:5], refs[:5], refs[:5], example_ids=np.arange(5)
    )
    rb = sig.randomization(Spans, REPLICATES, 0).from_model_output(
        preds[5:], refs[5:], refs[5:], example_ids=np.arange(5, 10)
    )
    assert (
        ra.merge(rb).compute()
        == sig.randomization(Spans, REPLICATES, 0)
        .from_model_output(preds, refs, refs, example_ids=np.arange(10))
        .compute()
    )
