"""States built on the host keep their sums in NumPy and merge there: the same bits as the jitted merge.

The host merge (:func:`metametric_jax._compensated.add_host`) is checked against the jitted compensated addition on
random float32 pairs of every magnitude (subnormals, values near the float32 limits, signed zeros): where
:func:`~metametric_jax._compensated.host_exact` holds the bits are equal, elsewhere a merge goes to the jitted one.
Then host states against device states through merges, stacking, ``reduce``, ``jit``, pickling and checkpoints.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import serialization
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from metametric_jax import _compensated as comp
from metametric_jax import accumulate, stats_metric

M = stats_metric(name="host_state_metric", normalizer="f1", report=("precision", "recall", "none"), tallies=("t",))
ROWS = 4 + len(M.metric_config.reported) + len(M.metric_config.tallies)

#: any finite float32 (hypothesis covers subnormals, signed zeros and the extremes)
ANY32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
#: the magnitudes host_exact admits, at both ends of the range and in between
EXACT32 = st.one_of(
    st.just(0.0),
    st.just(-0.0),
    st.floats(2.0**-100, 2.0**100, width=32),
    st.floats(-(2.0**100), -(2.0**-100), width=32),
    st.floats(2.0**-100, 2.0**-90, width=32),
    st.floats(2.0**90, 2.0**100, width=32),
    st.integers(-(2**30), 2**30).map(float),
)


def bits(x: object) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def pairs(elements: st.SearchStrategy[float], rows: int | None = None) -> st.SearchStrategy[np.ndarray]:
    shape = st.just((rows, 2)) if rows else st.tuples(st.integers(1, 10), st.just(2))
    return shape.flatmap(lambda s: hnp.arrays(np.float32, s, elements=elements))


def device(state: accumulate.Metric) -> accumulate.Metric:
    return jax.tree.map(jnp.asarray, state)


def assert_same_bits(a: accumulate.Metric, b: accumulate.Metric) -> None:
    for x, y in zip(jax.tree.leaves(a._sums()), jax.tree.leaves(b._sums()), strict=True):
        np.testing.assert_array_equal(bits(x), bits(y))
    np.testing.assert_array_equal(np.asarray(a.signature), np.asarray(b.signature))


@settings(max_examples=250, deadline=None)
@given(st.data())
def test_add_host_has_the_jitted_bits(data: st.DataObject) -> None:
    x = data.draw(pairs(EXACT32))
    y = data.draw(hnp.arrays(np.float32, x.shape, elements=EXACT32))
    assert comp.host_exact(x) and comp.host_exact(y)
    got, again = comp.add_host(x, y)
    np.testing.assert_array_equal(bits(got), bits(comp._add_jit(x, y)))
    assert again == bool(np.all(np.abs(got) <= 2.0**100))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_host_sums_of_host_sums_keep_the_jitted_bits(data: st.DataObject) -> None:
    """A sum's low parts may fall below 2**-100 (multiples of 2**-123 still): it is added on the host again."""
    shape = data.draw(st.tuples(st.integers(1, 6), st.just(2)))
    terms = data.draw(st.lists(hnp.arrays(np.float32, shape, elements=EXACT32), min_size=2, max_size=8))
    host = device = terms[0]
    for term in terms[1:]:
        host, again = comp.add_host(host, term)
        device = comp._add_jit(device, term)
        np.testing.assert_array_equal(bits(host), bits(device))
        if not again:
            break


@settings(max_examples=300, deadline=None)
@given(pairs(ANY32, ROWS), pairs(ANY32, ROWS))
def test_merge_of_host_states_has_the_jitted_bits(x: np.ndarray, y: np.ndarray) -> None:
    a, b = M._host_state(x.copy()), M._host_state(y.copy())
    merged = a.merge(b)
    assert_same_bits(merged, accumulate._jitted_merge(device(a), device(b)))
    on_host = comp.host_exact(x) and comp.host_exact(y)
    assert isinstance(merged.count, np.ndarray) == on_host  # elsewhere the jitted merge ran


def test_subnormals_and_the_float32_limits_go_to_the_jitted_merge() -> None:
    tiny = np.float32(1e-40)  # subnormal: XLA on CPU flushes it to zero, NumPy keeps it
    x = np.zeros((ROWS, 2), np.float32)
    x[0] = [1.0, tiny]
    assert not comp.host_exact(x)
    merged = M._host_state(x).merge(M.empty())
    assert isinstance(merged.count, jax.Array)
    assert_same_bits(merged, accumulate._jitted_merge(device(M._host_state(x)), device(M.empty())))
    big = np.full((ROWS, 2), 2.0**100, np.float32)
    total, again = comp.add_host(big, big)
    assert not again  # 2**101: still the jitted bits, but not added on the host again
    state = M._host_state(total, exact=again)
    assert state._host_pair() is None
    assert isinstance(state.merge(state).count, jax.Array)


_jitted_reduce = jax.jit(lambda s: s.reduce())


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_an_eager_reduce_has_the_jitted_reduce_s_bits(data: st.DataObject) -> None:
    """``reduce()`` of concrete states: the same bits and signature as ``jit(reduce)``.

    Folded on the host where that gives the jitted merges' bits, else the jitted scan; device and host leaves, one or
    two stacked axes.
    """
    shape = data.draw(st.sampled_from([(1,), (3,), (2, 3)]))
    elements = data.draw(st.sampled_from([EXACT32, ANY32]))
    packed = data.draw(hnp.arrays(np.float32, (*shape, ROWS, 2), elements=elements))
    signature = np.full(shape, M.metric_config.signature, np.int32)
    if data.draw(st.booleans()):
        signature.flat[-1] = 7  # another metric's sums among them: marked mixed
    stacked = M._host_state(packed.copy(), signature)
    want = _jitted_reduce(device(stacked))
    for state in (stacked, device(stacked)):
        got = state.reduce()
        assert_same_bits(got, want)
        assert np.asarray(got.signature).shape == ()
        if isinstance(got.count, np.ndarray):  # folded on the host: only values whose host sums are the jitted bits
            assert comp.host_exact(packed)


def stats_batches(seed: int, n: int, tiny: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 20))
        yy = rng.integers(0, 7, k).astype(np.float64)
        xx = rng.integers(0, 7, k).astype(np.float64)
        xy = np.minimum(xx, yy) * rng.random(k).round(2)
        t = rng.integers(0, 2, k).astype(np.float64)
        scale = rng.choice([1e-35 if tiny else 1e-20, 1e-3, 1.0, 3.7, 1e6, 1e25])
        out.append((np.stack([xy, xx, yy, t], axis=1) * [scale, scale, scale, 1.0], rng.random(k) * 3))
    return out


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_a_stream_of_host_merges_equals_the_jitted_stream(seed: int, tiny: bool) -> None:
    """Batches at scales from 1e-20 to 1e25 stay on the host; with 1e-35 (low parts below 2**-100) they leave it."""
    host, dev = M.empty(), device(M.empty())
    for stats, weights in stats_batches(seed, 60, tiny):
        part = M.from_stats(stats, weights if seed % 2 else None)
        assert isinstance(part.count, np.ndarray)
        host, dev = host.merge(part), accumulate._jitted_merge(dev, device(part))
        assert_same_bits(host, dev)
    assert isinstance(host.count, np.ndarray) != tiny
    for key, value in host.compute().items():
        np.testing.assert_array_equal(bits(value), bits(dev.compute()[key]), err_msg=key)
    assert host.totals() == dev.totals()


def test_host_states_under_jit_reduce_pickle_and_checkpoints() -> None:
    batches = [M.from_stats(s, w) for s, w in stats_batches(7, 5)]
    host = batches[0]
    for s in batches[1:]:
        host = host.merge(s)
    traces = []

    @jax.jit
    def step(a: accumulate.Metric, b: accumulate.Metric) -> accumulate.Metric:
        traces.append(1)
        return a.merge(b)

    jitted = M.empty()
    for s in batches:
        jitted = step(jitted, s)
    assert len(traces) == 1  # NumPy and JAX leaves of one shape and dtype share the trace
    assert_same_bits(jitted, host)
    mixed = device(batches[0])
    for s in batches[1:]:
        mixed = mixed.merge(s)  # a device state with host ones: the jitted merge
    assert isinstance(mixed.count, jax.Array)
    assert_same_bits(mixed, host)
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *batches)
    assert_same_bits(stacked.reduce(), host)
    restored = pickle.loads(pickle.dumps(host))
    assert_same_bits(restored, host)
    assert_same_bits(restored.merge(M.empty()), host)
    checkpoint = serialization.to_state_dict(host)
    back = serialization.from_state_dict(M.empty(), checkpoint)
    assert_same_bits(back, host)
    with pytest.raises(ValueError):
        host.merge(M.empty().replace(signature=np.int32(12345))).compute()


def test_a_host_merge_of_two_metrics_sums_is_marked_mixed() -> None:
    good = M.from_stats(np.array([[1.0, 2.0, 3.0, 0.0]]))
    packed, _ = good._host_pair()
    forged = M._host_state(packed.copy(), np.array(12345, np.int32))  # another metric's signature, on the host
    for merged in (good.merge(forged), forged.merge(good)):
        assert isinstance(merged.count, np.ndarray)
        assert int(merged.signature) == accumulate.MIXED == int(accumulate._jitted_merge(good, forged).signature)
        with pytest.raises(ValueError, match="merges sums of different metrics"):
            merged.compute()


def test_host_state_leaves_are_read_only_views() -> None:
    state = M.from_stats(np.array([[1.0, 2.0, 3.0, 0.0]]))
    with pytest.raises(ValueError):
        state.count[0] = 5.0
    merged = state.merge(state)
    assert float(merged.totals()["xy"]) == 2.0 and state.totals()["xy"] == 1.0


def test_a_host_state_is_the_same_pytree_whether_or_not_its_leaves_were_read() -> None:
    stats = np.array([[1.0, 2.0, 3.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    state = M.from_stats(stats).merge(M.from_stats(stats))  # leaves made on first use
    assert jax.tree.structure(state) == jax.tree.structure(device(M.from_stats(stats)))
    for other in (
        copy.deepcopy(state),
        copy.copy(state),
        dataclasses.replace(state),
        pickle.loads(pickle.dumps(state)),
    ):
        assert_same_bits(other, state)
    assert "count=" in repr(state) and state.totals()["tally"] == {"t": 2.0}
    with pytest.raises(AttributeError):
        state.no_such_leaf  # noqa: B018
