"""Approximate randomization on its three update paths (host, decode callback, device-native records): one state."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from metametric_jax import make_suite, metametric
from metametric_jax import significance as sig
from metametric_jax import testing as laws
from metametric_jax.device import encode_pairs
from metametric_jax.normalizer import safe_divide


@dataclass(frozen=True)
class Rel:
    head: int
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    rels: list[Rel]  # a multiset: duplicates count


M = Doc.metric
R = 64
Rnd = sig.randomization(M, permutations=R, seed=11)
MACRO = tuple(f"macro_{k}" for k in M.metric_config.macro_names)  # per-example scores: row columns 3, 4, ...
MICRO = tuple(k for k in M.empty().compute() if k not in MACRO)  # from integer sums

# code 2 decodes to a value of the wrong type (a float head, an int label): every path must refuse it
HEADS = (0, 1, 0.5)
LABELS = ("a", "b", 7)
ITEMS = 4
SIZES = (0, 1, 3, 8)  # the batch sizes of every test here: the jitted and eager paths compile once per size


def decode(rows: np.ndarray) -> Doc:
    """One example's ``(ITEMS, 3)`` codes ``(valid, head, label)`` as a document."""
    return Doc([Rel(HEADS[h], LABELS[c]) for v, h, c in rows.tolist() if v])


def docs(arrays: np.ndarray) -> list[Doc]:
    return [decode(a) for a in arrays]


@jax.jit
def callback_jit(pa, pb, g, w, ids):
    return Rnd.from_model_output(pa, pb, g, w, example_ids=ids, decode=decode)


@jax.jit
def device_jit(ea, eb, w, ids):
    return Rnd.from_records(ea, eb, w, example_ids=ids)


def bare(*pairs):
    """Record pairs without their vocabulary for :func:`device_jit`: the vocabulary is static in a ``RecordPair``, so
    each set of strings a generated batch holds would compile it again (one program per batch size and weighting)."""
    return [p.replace(vocab=()) for p in pairs]


# ------------------------------------------------------------------------------------------------ inputs
@st.composite
def batches(draw, codes: int = 2):
    """Both systems' and the references' codes, ``(n, ITEMS, 3)`` each; small values make duplicates, all-invalid
    rows make empty examples."""
    n = draw(st.sampled_from(SIZES))  # few shapes: each new shape compiles the jitted paths again
    arrays = [draw(hnp.arrays(np.int32, (n, ITEMS, 3), elements=st.integers(0, codes - 1))) for _ in ("a", "b", "refs")]
    ids = draw(
        st.one_of(
            st.lists(st.integers(-(2**31), 2**31 - 1), min_size=n, max_size=n, unique=True),
            st.lists(st.integers(0, n), min_size=n, max_size=n, unique=True),  # dense ids (repeats are refused)
        )
    )
    weights = draw(st.one_of(st.none(), st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    return (*arrays, np.asarray(ids, np.int64), None if weights is None else np.asarray(weights, np.float32))


def leaves(state) -> dict[str, np.ndarray]:
    return {jax.tree_util.keystr(k): np.asarray(v) for k, v in jax.tree_util.tree_flatten_with_path(state)[0]}


def rows_and_masks(pa, pb, refs, ids, w):
    """Host float64 per-example rows of both systems, weighted, and the swap masks (for the tie analysis)."""
    base = np.ones(len(refs)) if w is None else np.asarray(w, np.float64)
    ra = M.example_rows(M.batch_stats(pa, refs)) * base[:, None]
    rb = M.example_rows(M.batch_stats(pb, refs)) * base[:, None]
    return ra, rb, sig.swap_masks(ids, R, 11)


def cancellation_ties(ra, rb, masks, column: int) -> int:
    """Permutations tying :math:`|\\delta|` in real arithmetic by cancelling different per-example scores.

    A permutation that swaps no example the systems score differently (or all of them) gives exactly
    :math:`\\pm\\delta` on every path; any other tie (to float64 precision) may be broken by the device's float32
    per-example scores, so its p-value may count it differently.
    """
    diff = ra[:, column] - rb[:, column]
    differ = diff != 0
    delta = diff.sum()
    d = ((1 - 2 * masks) * diff[None, :]).sum(1)  # swapped A minus swapped B
    swapped_differing = (masks[:, differ] > 0).sum(1)
    structural = (swapped_differing == 0) | (swapped_differing == differ.sum())
    tie = np.abs(np.abs(d) - abs(delta)) <= 1e-9 * max(1.0, abs(delta))
    return int((tie & ~structural).sum())


def assert_same_figures(got, want, ra, rb, masks) -> None:
    """Figures from integer sums: the same deltas and p-values; from per-example scores: deltas to float32 rounding
    and p-values differing by at most the permutations that tie only by cancellation."""
    for key in MICRO:
        assert got[key] == want[key], key
    for j, key in enumerate(MACRO):
        assert got[key]["delta"] == pytest.approx(want[key]["delta"], abs=1e-6), key
        allowed = cancellation_ties(ra, rb, masks, 3 + j)
        assert abs(got[key]["p_value"] - want[key]["p_value"]) * (R + 1) <= allowed + 1e-9, (key, allowed)


# ------------------------------------------------------------------------------------------------ every path
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=batches())
def test_every_path_equals_the_host_path(batch) -> None:
    a, b, g, ids, w = batch
    pa, pb, refs = docs(a), docs(b), docs(g)
    host = Rnd.from_model_output(pa, pb, refs, w, example_ids=ids)
    want = host.compute()
    ids32 = jnp.asarray(ids, jnp.int32)
    # the callback path, eager and inside jit: the host path's state bit for bit
    for other in (
        Rnd.from_model_output(a, b, g, w, example_ids=ids, decode=decode),
        callback_jit(a, b, g, w, ids32),
    ):
        got = leaves(other)
        for key, value in leaves(host).items():
            np.testing.assert_array_equal(got[key], value, err_msg=key)
        assert other.compute() == want
    # the device path, eager and inside jit: integer sums bit for bit, per-example scores to float32 rounding
    ea, eb = sig.encode_systems(pa, pb, refs, metric=M, max_items=ITEMS)
    ra, rb, masks = rows_and_masks(pa, pb, refs, ids, w)
    for other in (Rnd.from_records(ea, eb, w, example_ids=ids), device_jit(*bare(ea, eb), w, ids32)):
        for side in ("a", "b", "swapped_a", "swapped_b"):
            mine, theirs = getattr(other, side), getattr(host, side)
            for key in ("xy", "xx", "yy"):
                np.testing.assert_array_equal(mine.micro[key], theirs.micro[key], err_msg=f"{side} {key}")
            np.testing.assert_array_equal(mine.count, theirs.count, err_msg=f"{side} count")
            for key, value in theirs.macro.items():
                np.testing.assert_allclose(
                    np.asarray(mine.macro[key]).sum(-1), np.asarray(value, np.float64).sum(-1), rtol=2e-6, atol=1e-6
                )
        assert np.asarray(other.fingerprint, np.float64).sum() == np.asarray(host.fingerprint, np.float64).sum()
        assert_same_figures(other.compute(), want, ra, rb, masks)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=batches(codes=3), side=st.sampled_from(["a", "b", "refs"]), where=st.data())
def test_wrong_types_raise_the_same_error_on_every_path(batch, side, where) -> None:
    arrays = dict(zip(("a", "b", "refs"), (x.copy() for x in batch[:3])))
    ids, w = batch[3], batch[4]
    bad = arrays[side]
    if bad.shape[0] == 0:
        return
    i = where.draw(st.integers(0, bad.shape[0] - 1))
    k = where.draw(st.integers(0, ITEMS - 1))
    bad[i, k, 0] = 1
    bad[i, k, where.draw(st.sampled_from([1, 2]))] = 2  # a float head or an int label
    a, b, g = arrays["a"], arrays["b"], arrays["refs"]
    pa, pb, refs = docs(a), docs(b), docs(g)
    with pytest.raises(TypeError, match=r"Rel\.(head|label): Discrete similarity over"):
        Rnd.from_model_output(pa, pb, refs, w, example_ids=ids)
    with pytest.raises(TypeError, match=r"Rel\.(head|label): Discrete similarity over"):
        Rnd.from_model_output(a, b, g, w, example_ids=ids, decode=decode)
    with pytest.raises(Exception, match=r"Rel\.(head|label): Discrete similarity over"):  # raised in the callback
        jax.block_until_ready(callback_jit(a, b, g, w, jnp.asarray(ids, jnp.int32)))
    with pytest.raises(TypeError, match=r"field '(head|label)' is (int|str); found"):
        sig.encode_systems(pa, pb, refs, metric=M)


def test_a_decode_function_returning_the_wrong_type_is_refused_on_the_callback_path() -> None:
    a, b, g = (np.ones((3, ITEMS, 3), np.int32) for _ in range(3))
    for dec in (lambda rows: "not a document", lambda rows: decode(rows).rels):
        with pytest.raises(TypeError, match="decode function for the predictions A returned"):
            Rnd.from_model_output(a, b, g, example_ids=np.arange(3), decode=dec)
        traced = jax.jit(lambda x, y, z, dec=dec: Rnd.from_model_output(x, y, z, example_ids=np.arange(3), decode=dec))
        with pytest.raises(TypeError, match="decode function for the predictions A returned"):  # at trace time
            traced(a, b, g)
    with pytest.raises(TypeError, match="decode function for the references returned"):
        Rnd.from_model_output(a, b, g, example_ids=np.arange(3), decode=decode, decode_references=lambda r: None)


def test_bad_ids_weights_and_lengths_raise_the_same_error_on_every_path() -> None:
    a, b, g = (np.ones((3, ITEMS, 3), np.int32) for _ in range(3))
    pa, pb, refs = docs(a), docs(b), docs(g)
    ea, eb = sig.encode_systems(pa, pb, refs, metric=M)
    paths = {
        "host": lambda w, ids: Rnd.from_model_output(pa, pb, refs, w, example_ids=ids),
        "callback": lambda w, ids: Rnd.from_model_output(a, b, g, w, example_ids=ids, decode=decode),
        "callback-jit": lambda w, ids: jax.jit(
            lambda x, y, z, i: Rnd.from_model_output(x, y, z, w, example_ids=i, decode=decode)
        )(a, b, g, jnp.asarray(ids)),
        "device": lambda w, ids: Rnd.from_records(ea, eb, w, example_ids=ids),
        "device-jit": lambda w, ids: jax.jit(lambda i: Rnd.from_records(ea, eb, w, example_ids=i))(jnp.asarray(ids)),
    }
    for name, run in paths.items():
        with pytest.raises(TypeError, match="integers"):
            run(None, np.array([0.5, 1.5, 2.5]))
        with pytest.raises(ValueError, match=r"shape \(3,\)"):
            run(None, np.arange(4))
        if "jit" not in name:
            with pytest.raises(ValueError, match="non-negative"):
                run(np.array([1.0, -1.0, 1.0]), np.arange(3))
            with pytest.raises(ValueError, match="shape"):
                run(np.ones(2), np.arange(3))
    with pytest.raises(ValueError, match="same length"):
        Rnd.from_model_output(pa, pb[:2], refs, example_ids=np.arange(3))
    with pytest.raises(ValueError, match="same batch size"):
        Rnd.from_model_output(a, b[:2], g, example_ids=np.arange(3), decode=decode)
    with pytest.raises(ValueError, match="same length"):
        sig.encode_systems(pa, pb[:2], refs, metric=M)
    with pytest.raises(ValueError, match="differ in size"):
        Rnd.from_records(ea, sig.encode_systems(pa[:2], pb[:2], refs[:2], metric=M)[1], example_ids=np.arange(3))
    with pytest.raises(ValueError, match="example_ids"):  # inside jit the ids cannot be running positions
        jax.jit(lambda x, y, z: Rnd.from_model_output(x, y, z, decode=decode))(a, b, g)
    with pytest.raises(ValueError, match="int32 range"):
        Rnd.from_records(ea, eb, example_ids=np.array([0, 1, 2**40]))


def test_records_must_share_one_vocabulary_and_the_references() -> None:
    refs = [Doc([Rel(0, "a"), Rel(1, "b")]), Doc([])]
    pa = [Doc([Rel(0, "a")]), Doc([Rel(1, "b")])]
    pb = [Doc([Rel(1, "b")]), Doc([])]
    ids = np.arange(2)
    ea, eb = sig.encode_systems(pa, pb, refs, metric=M)
    np.testing.assert_array_equal(ea.ref_records, eb.ref_records)
    assert ea.vocab == eb.vocab
    # separately encoded pairs: B's vocabulary numbers "b" first
    with pytest.raises(ValueError, match="different vocabularies"):
        Rnd.from_records(ea, encode_pairs(pb, refs, metric=M), example_ids=ids)
    other_refs = [Doc([Rel(0, "a")]), Doc([Rel(1, "b")])]
    _, eb_other = sig.encode_systems(pa, pb, other_refs, metric=M)
    with pytest.raises(ValueError, match="different references"):
        Rnd.from_records(ea, eb_other, example_ids=ids)
    # the same references in another order and padding are the same references
    wide = encode_pairs(list(pa) + list(pb), [Doc(list(reversed(r.rels))) for r in refs] * 2, metric=M, max_items=5)
    half = type(wide)(wide.pred_records[2:], wide.pred_mask[2:], wide.ref_records[2:], wide.ref_mask[2:], wide.vocab)
    host = Rnd.from_model_output(pa, pb, refs, example_ids=ids).compute()
    assert Rnd.from_records(ea, half, example_ids=ids).compute()["f1"] == host["f1"]
    with pytest.raises(TypeError, match="RecordPair"):
        Rnd.from_records(ea, (eb.pred_records, eb.pred_mask), example_ids=ids)
    with pytest.raises(TypeError, match="not a suite"):
        sig.randomization(PR, permutations=4).from_records(ea, eb, example_ids=ids)


# ------------------------------------------------------------------------------------------------ exact ties
def test_systems_differing_on_one_example_give_p_one_on_every_path() -> None:
    # every permutation swaps that example or not: |delta_r| = |delta| exactly, on the device as on the host
    rng = np.random.default_rng(0)
    g = rng.integers(0, 2, (300, ITEMS, 3)).astype(np.int32)
    g[7, 0] = (1, 0, 0)
    a = g.copy()
    a[:, 0, 0] = 0  # A drops each reference's first record: per-example scores of all kinds (thirds, halves...)
    b = a.copy()
    b[7] = g[7]
    pa, pb, refs = docs(a), docs(b), docs(g)
    ids = np.arange(300)
    ea, eb = sig.encode_systems(pa, pb, refs, metric=M, max_items=ITEMS)
    states = {
        "host": Rnd.from_model_output(pa, pb, refs, example_ids=ids),
        "callback": callback_jit(a, b, g, None, jnp.asarray(ids, jnp.int32)),
        "device": device_jit(*bare(ea, eb), None, jnp.asarray(ids, jnp.int32)),
        "identical": Rnd.from_records(ea, ea, example_ids=ids),
    }
    for name, state in states.items():
        for key, res in state.compute().items():
            assert res["p_value"] == 1.0, (name, key, res)
        if name != "identical":
            assert state.compute()["macro_f1"]["delta"] < 0


# ------------------------------------------------------------------------------------------------ suites, laws
PR = make_suite(
    "rnd_pr",
    {"p": M, "r": M},
    {"f1": lambda res: safe_divide(2 * res["p"]["precision"] * res["r"]["recall"], res["p"]["precision"] + 1.0)},
)


def test_suite_callback_path_equals_the_host_path() -> None:
    rng = np.random.default_rng(1)
    a, b, g = (rng.integers(0, 2, (9, ITEMS, 3)).astype(np.int32) for _ in range(3))
    Rand = sig.randomization(PR, permutations=32, seed=5)
    host = Rand.from_model_output(docs(a), docs(b), docs(g), example_ids=np.arange(9))
    jitted = jax.jit(lambda x, y, z, i: Rand.from_model_output(x, y, z, example_ids=i, decode=decode))(
        a, b, g, np.arange(9)
    )
    for key, value in leaves(host).items():
        np.testing.assert_array_equal(leaves(jitted)[key], value, err_msg=key)
    assert jitted.compute() == host.compute()


def test_default_ids_are_running_positions_on_the_callback_path() -> None:
    rng = np.random.default_rng(2)
    a, b, g = (rng.integers(0, 2, (8, ITEMS, 3)).astype(np.int32) for _ in range(3))
    Rnd.reset_positions()
    streamed = Rnd.from_model_output(a[:3], b[:3], g[:3], decode=decode).merge(
        Rnd.from_model_output(docs(a[3:]), docs(b[3:]), docs(g[3:]))
    )
    explicit = Rnd.from_model_output(docs(a), docs(b), docs(g), example_ids=np.arange(8))
    assert streamed.compute() == explicit.compute()


@pytest.mark.parametrize("path", ["callback", "device"])
def test_states_of_every_path_obey_the_accumulator_laws(path: str) -> None:
    rng = np.random.default_rng(3)
    a, b, g = (rng.integers(0, 2, (12, ITEMS, 3)).astype(np.int32) for _ in range(3))
    ids = np.arange(100, 112)
    first, second = SIZES[2], SIZES[2] + SIZES[1]  # parts of 3, 1 and 8 examples: sizes already compiled

    def state(lo: int, hi: int):
        part = slice(lo, hi)
        if path == "callback":
            return Rnd.from_model_output(a[part], b[part], g[part], example_ids=ids[part], decode=decode)
        ea, eb = sig.encode_systems(docs(a[part]), docs(b[part]), docs(g[part]), metric=M, max_items=ITEMS)
        return device_jit(*bare(ea, eb), None, jnp.asarray(ids[part]))

    parts = [state(0, first), state(first, second), state(second, 12)]
    laws.check_identity(parts[0])
    laws.check_associative(*parts)
    laws.check_commutative(parts[0], parts[2])
    laws.check_stack_reduce(parts)
    laws.check_jit(parts)
    whole = Rnd.from_model_output(docs(a), docs(b), docs(g), example_ids=ids)
    ties = rows_and_masks(docs(a), docs(b), docs(g), ids, None)
    assert_same_figures(parts[0].merge(parts[1]).merge(parts[2]).compute(), whole.compute(), *ties)
    host_part = Rnd.from_model_output(docs(a[:first]), docs(b[:first]), docs(g[:first]), example_ids=ids[:first])
    assert_same_figures(host_part.merge(parts[1].merge(parts[2])).compute(), whole.compute(), *ties)
