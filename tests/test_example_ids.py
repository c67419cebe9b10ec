"""Example ids that cannot mislead: full 64-bit ids, repeats refused, merges of the same id refused, and paired
tests that check each example's reference, not only the set of ids."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import REPLICATES
from helpers import BAG, Sentence, Span, decode, tags
from helpers import corpus as any_corpus

from metametric_jax import intervals, metric_of, resampling
from metametric_jax import significance as sig
from metametric_jax.device import encode_pairs

Bag = BAG


def corpus(n: int, seed: int) -> tuple[list[list[int]], list[list[int]]]:
    """Sets of up to 4 integers; every reference non-empty."""
    return any_corpus(n, seed, min_refs=1)


# ------------------------------------------------------------------------------------------------ 64-bit ids
def test_ids_that_agree_in_their_low_32_bits_get_different_weights() -> None:
    for pair in ([1, 2**32 + 1], [0, 2**32 + 1], [5, -(2**32) + 5], [2**40, 2**41]):
        w = sig.poisson_weights(np.array(pair, np.int64), 500, seed=3)
        assert not np.array_equal(w[:, 0], w[:, 1]), pair
        m = sig.swap_masks(np.array(pair, np.int64), 500, seed=3)
        assert not np.array_equal(m[:, 0], m[:, 1]), pair
    # one home for the hash: the host's weights are intervals.poisson_weights
    ids = np.array([7, 2**33 + 7, -(2**50), 2**63 - 1])
    np.testing.assert_array_equal(sig.poisson_weights(ids, 64, seed=9), intervals.poisson_weights(ids, 64, seed=9))
    np.testing.assert_array_equal(sig.swap_masks(ids, 64, seed=9), intervals.swap_masks(ids, 64, seed=9))


def test_a_bootstrap_state_weights_64_bit_ids_as_the_host_hash_does(bag_boot) -> None:
    preds, refs = corpus(6, 0)
    ids = np.array([1, 2**32 + 1, 0, 2**32, 2**40 + 3, -(2**35)])
    reps = bag_boot.from_model_output(preds, refs, example_ids=ids).replicates()["f1"]
    w = intervals.poisson_weights(ids, REPLICATES, seed=0)
    for b in range(REPLICATES):
        if w[b].sum() == 0:
            continue
        direct = float(Bag.from_model_output(preds, refs, weights=w[b]).compute()["f1"])
        assert float(reps[b]) == pytest.approx(direct, rel=1e-5, abs=1e-6), b
    # the fingerprint reads all 64 bits too
    fp = lambda i: np.asarray(resampling.fingerprint(np.array(i)), np.float64).sum(-1)  # noqa: E731
    assert fp([1])[resampling.FP_IDS] != fp([2**32 + 1])[resampling.FP_IDS]
    assert fp([0])[resampling.FP_IDS] != fp([2**32 + 1])[resampling.FP_IDS]


def test_int32_ids_hash_the_same_on_the_host_and_on_the_device() -> None:
    ids = np.array([0, 1, -1, 12345, -(2**31), 2**31 - 1, 77, -999], np.int64)
    on_device = jnp.asarray(ids, jnp.int32)
    for stream in (intervals.POISSON_STREAM, intervals.SWAP_STREAM, intervals.FINGERPRINT_STREAM):
        np.testing.assert_array_equal(
            np.asarray(resampling.hashes(on_device, 32, 5, stream)), intervals.hashes(ids, 32, 5, stream)
        )
    np.testing.assert_array_equal(np.asarray(sig.poisson_weights(on_device, 64, 4)), sig.poisson_weights(ids, 64, 4))
    jitted = jax.jit(lambda i: sig.poisson_weights(i, 64, 4))(on_device)
    np.testing.assert_array_equal(np.asarray(jitted), sig.poisson_weights(ids, 64, 4))
    np.testing.assert_array_equal(np.asarray(sig.swap_masks(on_device, 64, 4)), sig.swap_masks(ids, 64, 4))
    host, device = resampling.fingerprint(ids), resampling.fingerprint(on_device)
    lanes = [resampling.FP_IDS, resampling.FP_EXAMPLES]
    np.testing.assert_array_equal(
        np.asarray(device, np.float64).sum(-1)[lanes], np.asarray(host, np.float64).sum(-1)[lanes]
    )


# ------------------------------------------------------------------------------------------------ repeats in a call
def test_an_id_repeated_within_a_call_is_refused_naming_it(bag_boot, bag_rnd) -> None:
    preds, refs = [["a"], ["b"], ["c"], []], [["a"], ["b", "x"], ["c"], ["d"]]
    Boot = bag_boot
    with pytest.raises(ValueError, match="example id 0 is given to more than one example"):
        Boot.from_model_output(preds, refs, example_ids=[0, 0, 0, 0])  # was the interval [0.857, 0.857]
    with pytest.raises(ValueError, match="example id 7 "):
        Boot.from_model_output(preds, refs, example_ids=[3, 7, 5, 7])
    with pytest.raises(ValueError, match="example id 2"):
        bag_rnd.from_model_output(preds, preds, refs, example_ids=[2, 1, 2, 0])
    Boot.from_model_output(preds, refs, example_ids=[0, 1, 2**32, 2**32 + 1])  # distinct 64-bit ids are fine


def test_repeats_are_refused_on_the_callback_and_the_concrete_device_paths(sentence_boot, sentence_rnd) -> None:
    pred, gold = tags(4, 0)
    ids = np.array([4, 9, 4, 1])
    M = metric_of(Sentence)
    Boot, Rnd = sentence_boot, sentence_rnd
    with pytest.raises(ValueError, match="example id 4"):
        Boot.from_model_output(pred, gold, example_ids=ids, decode=decode)
    with pytest.raises(ValueError, match="example id 4"):
        Rnd.from_model_output(pred, pred, gold, example_ids=ids, decode=decode)
    # inside jit the callback sees the ids when it runs: a runtime error carrying the message
    with pytest.raises(Exception, match="example id 4"):
        jax.block_until_ready(
            jax.jit(lambda p, g, i: Boot.from_model_output(p, g, example_ids=i, decode=decode))(pred, gold, ids)
        )
    pair = encode_pairs([decode(r) for r in pred], [decode(r) for r in gold], metric=M)
    with pytest.raises(ValueError, match="example id 4"):
        Boot.from_records(pair, example_ids=ids)
    ea, eb = sig.encode_systems(
        [decode(r) for r in pred], [decode(r) for r in pred], [decode(r) for r in gold], metric=M
    )
    with pytest.raises(ValueError, match="example id 4"):
        Rnd.from_records(ea, eb, example_ids=ids)


# ------------------------------------------------------------------------------------------------ repeats across merges
def test_batches_whose_ids_restart_at_zero_refuse_to_merge(bag_boot, bag_rnd) -> None:
    preds, refs = corpus(12, 1)
    Boot = bag_boot
    first = Boot.from_model_output(preds[:6], refs[:6], example_ids=np.arange(6))
    second = Boot.from_model_output(preds[6:], refs[6:], example_ids=np.arange(6))  # the np.arange(len(batch)) slip
    for a, b in ((first, second), (second, first), (Boot.empty().merge(first), second)):
        with pytest.raises(ValueError, match=r"example id 0 is in both merged states") as err:
            a.merge(b)
        for words in ("unique across the whole evaluation", "offset", "running positions", "reset_positions()"):
            assert words in str(err.value)
    with pytest.raises(ValueError, match="example id 3"):
        first.merge(Boot.from_model_output(preds[6:8], refs[6:8], example_ids=[40, 3]))
    with pytest.raises(ValueError, match="in both merged states"):
        first.merge(first)
    # global ids (offset by the batch start) merge, and equal one batch
    offset = first.merge(Boot.from_model_output(preds[6:], refs[6:], example_ids=np.arange(6, 12)))
    whole = Boot.from_model_output(preds, refs, example_ids=np.arange(12))
    np.testing.assert_allclose(offset.replicates()["f1"], whole.replicates()["f1"], rtol=1e-6)
    assert list(resampling.ids_held(offset).ids()) == list(range(12))
    r1 = bag_rnd.from_model_output(preds[:6], preds[:6], refs[:6], example_ids=np.arange(6))
    r2 = bag_rnd.from_model_output(preds[6:], preds[6:], refs[6:], example_ids=np.arange(6))
    with pytest.raises(ValueError, match="example id 0 is in both merged states"):
        r1.merge(r2)


def test_a_long_stream_of_batches_checks_every_id() -> None:
    held = resampling.IdSet()
    rng = np.random.default_rng(0)
    order = rng.permutation(5000)
    for lo in range(0, 5000, 50):
        held = held.union(resampling.IdSet.of(order[lo : lo + 50]))
    assert len(held.runs) <= 14 and list(held.ids()) == list(range(5000))
    for k in (0, 1234, 4999):
        assert held.common(resampling.IdSet.of(np.array([10**9, k]))) == k
    assert held.common(resampling.IdSet.of(np.array([5000, -1, 2**40]))) is None


def test_running_positions_stream_and_a_reset_inside_a_stream_is_named(bag_boot) -> None:
    preds, refs = corpus(10, 2)
    Boot = bag_boot
    Boot.reset_positions()
    first = Boot.from_model_output(preds[:5], refs[:5])
    streamed = first.merge(Boot.from_model_output(preds[5:], refs[5:]))
    np.testing.assert_allclose(
        streamed.replicates()["f1"],
        Boot.from_model_output(preds, refs, example_ids=np.arange(10)).replicates()["f1"],
        rtol=1e-6,
    )
    Boot.reset_positions()
    with pytest.raises(ValueError, match="reset_positions\\(\\) was called between them"):
        first.merge(Boot.from_model_output(preds[5:], refs[5:]))


def test_a_second_system_scored_without_ids_is_refused_naming_the_remedies(bag_boot) -> None:
    preds_a, refs = corpus(8, 3)
    preds_b, _ = corpus(8, 4)
    Boot = bag_boot
    Boot.reset_positions()
    a = Boot.from_model_output(preds_a, refs)
    b = Boot.from_model_output(preds_b, refs)  # the class's positions continue: ids 8..15
    with pytest.raises(ValueError, match="different examples") as err:
        sig.paired_bootstrap(a, b)
    assert "reset_positions()" in str(err.value) and "example_ids" in str(err.value)
    Boot.reset_positions()
    b = Boot.from_model_output(preds_b, refs)
    explicit = sig.paired_bootstrap(
        Boot.from_model_output(preds_a, refs, example_ids=np.arange(8)),
        Boot.from_model_output(preds_b, refs, example_ids=np.arange(8)),
    )
    assert sig.paired_bootstrap(a, b) == explicit


def test_states_that_went_through_jit_merge_without_the_check(sentence_boot) -> None:
    pred, gold = tags(8, 5)
    M = metric_of(Sentence)
    Boot = sentence_boot
    host = Boot.from_model_output(
        [decode(r) for r in pred[:4]], [decode(r) for r in gold[:4]], example_ids=np.arange(4)
    )
    assert len(resampling.ids_held(host)) == 4
    pair = encode_pairs([decode(r) for r in pred[4:]], [decode(r) for r in gold[4:]], metric=M)
    eager_device = Boot.from_records(pair, example_ids=np.arange(4, 8))
    assert list(resampling.ids_held(eager_device).ids()) == [4, 5, 6, 7]  # concrete ids: held, checked
    with pytest.raises(ValueError, match="example id 4"):
        eager_device.merge(Boot.from_records(pair, example_ids=np.arange(4, 8)))
    jitted = jax.jit(lambda p, i: Boot.from_records(p, example_ids=i))(pair, jnp.arange(4, 8))
    assert resampling.ids_held(jitted) is None  # jit drops the set
    assert resampling.ids_held(host.merge(jitted)) is None
    step = jax.jit(lambda acc, s: acc.merge(s))
    assert resampling.ids_held(step(host, eager_device)) is None


# ------------------------------------------------------------------------------------------------ references
def test_a_paired_test_refuses_another_order_under_the_same_ids(bag_boot) -> None:
    preds_a, refs = corpus(20, 6)
    preds_b, _ = corpus(20, 7)
    ids = np.arange(20)
    Boot = bag_boot
    a = Boot.from_model_output(preds_a, refs, example_ids=ids)
    order = np.random.default_rng(0).permutation(20)
    shuffled = Boot.from_model_output([preds_b[i] for i in order], [refs[i] for i in order], example_ids=ids)
    with pytest.raises(ValueError, match="different references under the same example ids"):
        sig.paired_bootstrap(a, shuffled)  # used to pair example i of A with example order[i] of B
    right = Boot.from_model_output([preds_b[i] for i in order], [refs[i] for i in order], example_ids=order)
    got = sig.paired_bootstrap(a, right)  # the same examples under their own ids: the same test (to float32 sums)
    want = sig.paired_bootstrap(a, Boot.from_model_output(preds_b, refs, example_ids=ids))
    for key, res in want.items():
        for k, v in res.items():
            assert got[key][k] == pytest.approx(v, rel=1e-5, abs=1e-6), (key, k)
    edited = list(refs)
    edited[3] = edited[3] + [99]
    with pytest.raises(ValueError, match="different references"):
        sig.paired_bootstrap(a, Boot.from_model_output(preds_b, edited, example_ids=ids))


def test_host_callback_and_device_states_pair_with_each_other(sentence_boot) -> None:
    pred_a, gold = tags(8, 8)
    pred_b, _ = tags(8, 9)
    M = metric_of(Sentence)
    Boot = sentence_boot
    ids = np.arange(100, 108)
    host_a = Boot.from_model_output([decode(r) for r in pred_a], [decode(r) for r in gold], example_ids=ids)
    callback_b = jax.jit(lambda p, g, i: Boot.from_model_output(p, g, example_ids=i, decode=decode))(pred_b, gold, ids)
    want = sig.paired_bootstrap(
        host_a, Boot.from_model_output([decode(r) for r in pred_b], [decode(r) for r in gold], example_ids=ids)
    )
    assert sig.paired_bootstrap(host_a, callback_b) == want  # the callback digests the decoded references
    with pytest.raises(ValueError, match="different references"):
        sig.paired_bootstrap(host_a, Boot.from_model_output(pred_b, gold[::-1], example_ids=ids, decode=decode))
    # the device path digests no reference: it pairs on the ids
    pair = encode_pairs([decode(r) for r in pred_b], [decode(r) for r in gold], metric=M)
    device_b = Boot.from_records(pair, example_ids=ids)
    got = sig.paired_bootstrap(host_a, device_b)
    assert got["f1"]["delta"] == pytest.approx(want["f1"]["delta"], abs=1e-6)


def test_reference_digests_are_canonical() -> None:
    digest = lambda *xs: [int(d) for d in resampling.reference_digests(list(xs))]  # noqa: E731
    s1, s2 = (
        Sentence(frozenset({Span(0, 1, "PER"), Span(3, 4, "LOC")})),
        Sentence(frozenset({Span(3, 4, "LOC"), Span(0, 1, "PER")})),
    )
    assert len(set(digest(s1, s2))) == 1  # sets by content, not iteration order
    assert len(set(digest({"a": 1, "b": [2]}, {"b": [2], "a": 1}))) == 1
    distinct = digest([1, 2], [2, 1], (1, 2), {1, 2}, 1, 1.0, True, "1", b"1", None, "", [], s1, Span(0, 1, "PER"))
    assert len(set(distinct)) == len(distinct)  # order of lists, types and classes count
    assert len(set(digest(np.arange(3), np.arange(3), np.arange(3.0), np.arange(3).reshape(3, 1)))) == 3
    assert digest(np.int64(3)) == digest(3)
    # objects whose repr names an address are digested by their attributes
    plain_a, plain_b, plain_c = Plain(1, "x"), Plain(1, "x"), Plain(2, "x")
    assert digest(plain_a) == digest(plain_b) != digest(plain_c)
    assert digest(Slotted(1)) == digest(Slotted(1)) != digest(Slotted(2))


class Plain:
    def __init__(self, a: int, b: str) -> None:
        self.a, self.b = a, b


class Slotted:
    __slots__ = ("v",)

    def __init__(self, v: int) -> None:
        self.v = v


def test_reference_digests_are_the_same_in_every_process() -> None:
    from metametric_jax import digests

    assert resampling.reference_digests is digests.reference_digests  # the one home, which imports no JAX
    code = (
        "from dataclasses import dataclass\n"
        "from metametric_jax.digests import reference_digests\n"
        "@dataclass(frozen=True)\n"
        "class Span:\n    start: int\n    label: str\n"
        "refs = [frozenset({Span(0, 'PER'), Span(3, 'LOC'), Span(9, 'ORG')}), {'x': {'y', 'z'}}, ['é', 2.5, None]]\n"
        "print(list(map(int, reference_digests(refs))))\n"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "JAX_PLATFORMS": "cpu"}
        outs.add(
            subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        )
    assert len(outs) == 1
