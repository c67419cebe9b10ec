"""Accumulator figures against independent counts, exact totals beyond 2**24, errors, suites, and interop
(clu Collection, flax.nnx.Metric, flax.serialization)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import clu.metrics
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scorch.scores
from flax import nnx, serialization
from helpers import Span
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax import make_suite, metametric, stats_metric
from metametric_jax.interop import NnxMetric, clu_metric


@metametric(normalizer="f2")
@dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Other:
    spans: frozenset[Span]


M = Doc.metric
MICRO = ("overlap", "precision", "recall", "f1", "jaccard", "f2")


def _doc(rng: random.Random, k: int) -> frozenset[Span]:
    return frozenset(Span(s, s + rng.randrange(1, 3), rng.choice("AB")) for s in rng.sample(range(20), k))


def corpus(seed: int, n: int = 40) -> tuple[list[Doc], list[Doc]]:
    rng = random.Random(seed)
    preds, refs = [], []
    for _ in range(n):
        ref = _doc(rng, rng.randrange(0, 6))
        kept = {s for s in sorted(ref, key=lambda x: (x.start, x.end, x.label)) if rng.random() < 0.6}
        preds.append(Doc(frozenset(kept) | _doc(rng, rng.randrange(0, 3))))
        refs.append(Doc(ref))
    return preds, refs


def counter_micro(preds: list[Doc], refs: list[Doc], weights: list[float] | None = None) -> dict[str, float]:
    """Micro P / R / F1 from a plain Counter loop over every predicted and reference item (the reference)."""
    tp = Counter()
    n_pred = Counter()
    n_ref = Counter()
    for i, (p, r) in enumerate(zip(preds, refs)):
        w = 1.0 if weights is None else weights[i]
        cp, cr = Counter(p.spans), Counter(r.spans)
        tp["x"] += w * sum((cp & cr).values())
        n_pred["x"] += w * sum(cp.values())
        n_ref["x"] += w * sum(cr.values())
    t, a, b = tp["x"], n_pred["x"], n_ref["x"]
    return {
        "overlap": t,
        "precision": t / a if a else 0.0,
        "recall": t / b if b else 0.0,
        "f1": 2 * t / (a + b) if a + b else 0.0,
    }


def streamed(preds: list[Doc], refs: list[Doc], batch: int, weights: np.ndarray | None = None) -> M:
    state = M.empty()
    for i in range(0, len(preds), batch):
        w = None if weights is None else weights[i : i + batch]
        state = state.merge(M.from_model_output(preds[i : i + batch], refs[i : i + batch], w))
    return state


# ----------------------------------------------------------------------------------------------------- compute()
def test_compute_reports_micro_macro_and_declared_fbeta_as_0d_floats() -> None:
    preds, refs = corpus(0)
    out = M.from_model_output(preds, refs).compute()
    expected = set(MICRO) | {f"macro_{k}" for k in MICRO}
    assert set(out) == expected
    for key, value in out.items():
        assert isinstance(value, jax.Array) and value.ndim == 0 and jnp.issubdtype(value.dtype, jnp.floating), key


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), batch=st.integers(1, 8))
def test_micro_figures_equal_counter_loop_exactly(seed: int, n: int, batch: int) -> None:
    preds, refs = corpus(seed, n)
    ref = counter_micro(preds, refs)
    out = streamed(preds, refs, batch).compute()
    # integer counts below 2**24 are exact in float32, and one float32 division is correctly rounded
    for key in ("overlap", "precision", "recall", "f1"):
        assert float(out[key]) == float(np.float32(ref[key])), key
    beta2 = 4.0
    t, a, b = ref["overlap"], sum(len(p.spans) for p in preds), sum(len(r.spans) for r in refs)
    assert float(out["f2"]) == pytest.approx((1 + beta2) * t / (beta2 * b + a) if a + b else 0.0, rel=1e-6)


def test_empty_documents_change_no_micro_figure() -> None:
    preds, refs = corpus(1)
    base = M.from_model_output(preds, refs).compute()
    empty = Doc(frozenset())
    padded_p = [x for p in preds for x in (p, empty)]
    padded_r = [x for r in refs for x in (r, empty)]
    padded = M.from_model_output(padded_p, padded_r).compute()
    for key in MICRO:
        assert float(padded[key]) == float(base[key]), key
    # the example count did change: macro figures average over twice the documents, empty pairs scoring 1
    n = len(preds)
    assert float(padded["macro_f2"]) == pytest.approx((float(base["macro_f2"]) * n + n) / (2 * n), rel=1e-6)


def test_weights_are_weighted_counts() -> None:
    preds, refs = corpus(2)
    w = np.random.default_rng(0).integers(0, 4, len(preds)).astype(float)
    out = streamed(preds, refs, 7, w).compute()
    ref = counter_micro(preds, refs, list(w))
    for key in ("overlap", "precision", "recall", "f1"):
        assert float(out[key]) == pytest.approx(ref[key], rel=1e-6), key
    # an integer weight k is the same as k copies of the example (macro figures included)
    rep_p = [p for p, k in zip(preds, w) for _ in range(int(k))]
    rep_r = [r for r, k in zip(refs, w) for _ in range(int(k))]
    copies = M.from_model_output(rep_p, rep_r).compute()
    for key, value in copies.items():
        assert float(out[key]) == pytest.approx(float(value), rel=1e-6), key


def test_no_lost_counts_beyond_2_pow_24_without_x64() -> None:
    assert not jax.config.jax_enable_x64
    big = 2**24
    running = M.from_stats(np.array([[big, big, big]], dtype=np.float64))
    hit, miss = Span(0, 1, "A"), Span(5, 6, "B")

    @jax.jit
    def merge(a: M, b: M) -> M:
        return a.merge(b)

    for i in range(4000):
        ref = frozenset({hit}) if i % 2 == 0 else frozenset()
        running = merge(running, M.from_model_output([Doc(frozenset({hit if i % 2 == 0 else miss}))], [Doc(ref)]))
    xy, xx = big + 2000, big + 4000
    totals = running.totals()
    assert totals["xy"] == xy and totals["xx"] == xx and totals["yy"] == xy
    out = running.compute()
    assert float(out["precision"]) == float(np.float32(xy / xx))
    assert float(out["recall"]) == 1.0
    # a plain float32 running sum loses every one of them
    naive = np.float32(big)
    for _ in range(4000):
        naive = np.float32(naive + np.float32(1.0))
    assert naive == big


# ----------------------------------------------------------------------------------------------------- errors
def test_static_config_is_not_a_leaf() -> None:
    state = M.from_model_output(*corpus(3, 4))
    leaves = jax.tree.leaves(state)
    named = [*state.micro.values(), *state.macro.values(), state.count, state.signature]
    assert len(leaves) == len(named) and all(any(a is b for b in named) for a in leaves)
    assert jax.tree.structure(state) == jax.tree.structure(M.empty())


def test_merging_different_metrics_is_a_type_error_naming_both() -> None:
    p, r = corpus(4, 4)
    a = M.from_model_output(p, r)
    b = Other.metric.from_model_output([Other(x.spans) for x in p], [Other(x.spans) for x in r])
    with pytest.raises(TypeError, match=r"(?s)'Other'.*'Doc'"):
        a.merge(b)
    Tok = stats_metric(lambda x, y: (1.0, 1.0, 1.0), name="tok")
    SuiteA = make_suite("suite_a", {"m": Tok})
    SuiteB = make_suite("suite_b", {"m": Tok})
    with pytest.raises(TypeError, match=r"(?s)suite_b.*suite_a"):
        SuiteA.from_model_output([1], [1]).merge(SuiteB.from_model_output([1], [1]))


def test_compute_on_stacked_state_says_call_reduce() -> None:
    p, r = corpus(5, 6)
    stacked = jax.tree.map(
        lambda *x: jnp.stack(x), M.from_model_output(p[:3], r[:3]), M.from_model_output(p[3:], r[3:])
    )
    with pytest.raises(ValueError, match=r"reduce\(\)"):
        stacked.compute()
    assert float(stacked.reduce().compute()["f1"]) == float(M.from_model_output(p, r).compute()["f1"])


def test_length_mismatch_names_both_lengths() -> None:
    p, r = corpus(6, 5)
    with pytest.raises(ValueError, match=r"5 predictions and 4 references"):
        M.from_model_output(p, r[:4])


@pytest.mark.parametrize("weights", [np.ones(3), np.array([1.0, -1.0, 1.0, 1.0]), np.array([1.0, np.nan, 1, 1])])
def test_bad_weights(weights: np.ndarray) -> None:
    p, r = corpus(7, 4)
    with pytest.raises(ValueError, match="weights"):
        M.from_model_output(p, r, weights)


# ----------------------------------------------------------------------------------------------------- suites
def _bcub_side(a: list[set], b: list[set]) -> tuple[float, float]:
    return sum(len(x & y) ** 2 / len(x) for x in a for y in b), float(sum(len(x) for x in a))


BcubRecall = stats_metric(lambda p, r: (_bcub_side(r, p)[0], 0.0, _bcub_side(r, p)[1]), "recall", name="b3_r")
BcubPrecision = stats_metric(lambda p, r: (_bcub_side(p, r)[0], _bcub_side(p, r)[1], 0.0), "precision", name="b3_p")
Bcub = make_suite(
    "b3",
    {"recall": BcubRecall, "precision": BcubPrecision},
    {
        "f1": lambda res: (
            2
            * res["recall"]["recall"]
            * res["precision"]["precision"]
            / (res["recall"]["recall"] + res["precision"]["precision"])
        )
    },
)


def test_bcubed_suite_micro_equals_scorch_on_the_concatenated_corpus() -> None:
    rng = random.Random(8)

    def partition() -> list[set[int]]:
        groups: dict[int, set[int]] = {}
        for m in rng.sample(range(12), rng.randrange(1, 9)):
            groups.setdefault(rng.randrange(3), set()).add(m)
        return list(groups.values())

    keys = [partition() for _ in range(20)]
    responses = [partition() for _ in range(20)]
    state = Bcub.empty()
    for i in range(0, 20, 6):
        state = state.merge(Bcub.from_model_output(responses[i : i + 6], keys[i : i + 6]))
    out = state.compute()
    # documents are disjoint: tag every mention with its document
    key_all = [{(d, m) for m in c} for d, doc in enumerate(keys) for c in doc]
    resp_all = [{(d, m) for m in c} for d, doc in enumerate(responses) for c in doc]
    r, p, f = scorch.scores.b_cubed(key_all, resp_all)
    assert float(out["recall"]["recall"]) == pytest.approx(r, rel=1e-6)
    assert float(out["precision"]["precision"]) == pytest.approx(p, rel=1e-6)
    assert float(out["f1"]) == pytest.approx(f, rel=1e-6)


# ----------------------------------------------------------------------------------------------------- interop
def test_clu_collection_field() -> None:
    preds, refs = corpus(9, 30)
    Metrics = clu.metrics.Collection.create(
        spans=clu_metric(M, predictions="preds", references="labels", weights="mask"),
        loss=clu.metrics.Average.from_output("loss"),
    )
    total = Metrics.empty()
    for i in range(0, 30, 8):
        upd = Metrics.single_from_model_output(
            preds=preds[i : i + 8], labels=refs[i : i + 8], loss=jnp.ones(len(preds[i : i + 8])), mask=None
        )
        total = total.merge(upd)
    out = total.compute()
    ref = counter_micro(preds, refs)
    assert float(out["spans"]["f1"]) == float(np.float32(ref["f1"]))
    assert float(out["loss"]) == 1.0
    # CLU's all_gather(...).reduce() pattern on a stack of collections
    stacked = jax.tree.map(lambda *x: jnp.stack(x), total, total)
    assert float(stacked.reduce().compute()["spans"]["overlap"]) == 2 * ref["overlap"]
    # the wrapped class's states merge with the plain metric's
    plain = M.from_model_output(preds, refs)
    assert float(total.spans.merge(plain).compute()["overlap"]) == 2 * ref["overlap"]


def test_clu_metric_missing_output_lists_outputs() -> None:
    Metrics = clu.metrics.Collection.create(spans=clu_metric(M, predictions="preds", references="labels"))
    with pytest.raises(TypeError, match=r"'labels'.*\['preds', 'targets'\]"):
        Metrics.single_from_model_output(preds=[], targets=[])
    with pytest.raises(TypeError, match="metric class"):
        clu_metric(object)


def test_nnx_metric_update_reset_compute_and_multimetric() -> None:
    preds, refs = corpus(10, 24)
    m = NnxMetric(M)
    for i in range(0, 24, 5):
        m.update(predictions=preds[i : i + 5], references=refs[i : i + 5])
    ref = counter_micro(preds, refs)
    assert float(m.compute()["f1"]) == float(np.float32(ref["f1"]))
    graphdef, state = nnx.split(m)
    restored = nnx.merge(graphdef, state)
    assert float(restored.compute()["overlap"]) == ref["overlap"]
    m.reset()
    assert float(m.compute()["overlap"]) == 0.0

    multi = nnx.MultiMetric(spans=NnxMetric(M, predictions="preds", references="labels"), loss=nnx.metrics.Average())
    multi.update(preds=preds, labels=refs, values=jnp.arange(4.0))
    out = multi.compute()
    assert float(out["spans"]["precision"]) == float(np.float32(ref["precision"]))
    assert float(out["loss"]) == 1.5
    with pytest.raises(TypeError, match="'references'"):
        NnxMetric(M).update(predictions=preds)


@pytest.mark.parametrize("cls", [M, Bcub], ids=["metric", "suite"])
def test_states_round_trip_through_flax_serialization(cls: type) -> None:
    if cls is M:
        preds, refs = corpus(11, 20)
    else:
        rng = random.Random(11)
        parts = [[set(rng.sample(range(6), rng.randrange(1, 4)))] for _ in range(20)]
        preds, refs = parts, parts[::-1]
    first = cls.empty()
    for i in range(0, 10, 5):
        first = first.merge(cls.from_model_output(preds[i : i + 5], refs[i : i + 5]))
    as_dict = serialization.to_state_dict(first)
    restored_dict = serialization.from_state_dict(cls.empty(), as_dict)
    restored_bytes = serialization.from_bytes(cls.empty(), serialization.to_bytes(first))
    uninterrupted = first.merge(cls.from_model_output(preds[10:], refs[10:]))
    for restored in (restored_dict, restored_bytes):
        assert type(restored) is cls and restored.config is first.config
        for a, b in zip(jax.tree.leaves(restored), jax.tree.leaves(first)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        resumed = restored.merge(cls.from_model_output(preds[10:], refs[10:]))  # the rest of the epoch
        for a, b in zip(jax.tree.leaves(resumed.compute()), jax.tree.leaves(uninterrupted.compute())):
            assert float(a) == float(b)


def test_host_rows_equal_normalized_rows_bit_for_bit():
    """The host fast path of a batch's rows gives the bytes of the general path (normalized_rows, column by column)."""
    from metametric_jax import accumulate, metric_config
    from metametric_jax.normalizer import F1, JACCARD, NONE, PRECISION, RECALL, Normalizer, fbeta, normalized_rows

    rng = np.random.default_rng(0)
    pick = random.Random(0)
    custom = Normalizer("mine", lambda xy, xx, yy, zd: xy)  # not built in: the general path
    assert metric_config.host_plan((F1, custom)) is None
    for trial in range(200):
        reported = tuple(
            pick.sample([NONE, F1, PRECISION, RECALL, JACCARD, fbeta(1.5), fbeta(0.5)], pick.randint(1, 5))
        )
        plan = metric_config.host_plan(reported)
        assert plan is not None
        tallies = ("t",) * (trial % 2)
        zero_division, empty_score = (0.0, 1.0, 0.5)[trial % 3], (1.0, 0.0)[trial % 2]
        cfg = accumulate.MetricConfig("m", reported[0], reported, zero_division, empty_score, None, tallies=tallies)
        stats = rng.choice([0.0, 1.0, 2.0, 3.5, 0.1, 1e-300], size=(int(rng.integers(0, 40)), 3 + len(tallies)))
        fast = metric_config.host_rows(cfg, stats, *plan)
        base = stats[:, :3]
        norm = normalized_rows(base, reported, cfg.zero_division, cfg.empty_score)
        general = np.concatenate([base, norm, np.ones_like(stats[:, :1]), stats[:, 3:]], axis=1)
        assert fast.shape == general.shape and fast.tobytes() == general.tobytes()


def test_host_linear_combinations_add_each_row_s_nonzero_terms_in_order():
    """On NumPy, ``stats @ coefficients.T`` is each row's products by its nonzero coefficients (each rounded once),
    added in the order of the columns; zero coefficients add nothing (signed zeros, infinities and NaNs included).
    """
    import warnings

    from metametric_jax.normalizer import _combined

    def one_by_one(stats, coefficients):
        columns = []
        for row in coefficients:
            total = None
            for j, c in enumerate(row.tolist()):
                if c != 0:
                    term = stats[:, j] * stats.dtype.type(c)
                    total = term if total is None else total + term
            columns.append(np.zeros(stats.shape[0], stats.dtype) if total is None else total)
        return np.stack(columns, axis=1)

    rng = np.random.default_rng(3)
    values = np.array([0.0, -0.0, 1.0, 3.0, 0.1, 3e38, -2.5, np.inf, -np.inf, np.nan])  # 3e38 * 2: inf in float32
    for _ in range(500):
        n, k, width = (int(x) for x in rng.integers(1, 6, size=3))
        stats = rng.choice(values, (n - 1, width)).astype(rng.choice([np.float64, np.float32]))
        coefficients = rng.choice([0.0, 0.0, 1.0, -1.0, 2.0, 0.5, 0.3, -3.0], (k, width))
        with warnings.catch_warnings(record=True) as want_warnings:
            warnings.simplefilter("always")
            want = one_by_one(stats, coefficients)
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            got = _combined(stats, coefficients)
        assert got.shape == want.shape and np.array_equal(np.isnan(got), np.isnan(want)), (stats, coefficients)
        nan = np.isnan(want)  # a NaN's sign bit follows the operand order of NumPy's loops: not compared
        assert np.where(nan, 0, got).tobytes() == np.where(nan, 0, want).tobytes(), (stats, coefficients)
        assert {str(w.message) for w in got_warnings} == {str(w.message) for w in want_warnings}
