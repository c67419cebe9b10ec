"""Suites: host states for their members, merged on the host; device suites merged by one jitted program.

A suite state built from Python structures holds host states (NumPy sums) for its members, so a loop of merges never
waits on the device. A suite whose members are on the device (after ``jit``, a checkpoint restore) merges in one
jitted program for every member. Both give the bits of each member's own jitted merge.
"""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import flat

from metametric_jax import suite as suite_module
from metametric_jax.tasks.coref import CorefMetric
from metametric_jax.tasks.ranking import RankingMetric


def _device(state):
    return jax.tree.map(jnp.asarray, state)


def _member_wise(a, b):
    """Each member's own jitted merge of device states (what a suite merge must equal)."""
    return a.replace(states={k: _device(v).merge(_device(b.states[k])) for k, v in a.states.items()})


def _ranking_batches(seed: int, n: int) -> list[tuple[list[list[int]], list[dict[int, int]]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        preds = [list(dict.fromkeys(rng.randrange(30) for _ in range(rng.randint(0, 12)))) for _ in range(6)]
        refs = [{rng.randrange(30): rng.randrange(-1, 4) for _ in range(rng.randint(0, 8))} for _ in range(6)]
        out.append((preds, refs))
    return out


def _coref_batches(seed: int, n: int) -> list[tuple[list[list[list[tuple[int, int]]]], list]]:
    rng = random.Random(seed)

    def doc() -> list[list[tuple[int, int]]]:
        spans = rng.sample([(s, s + rng.randint(0, 2)) for s in range(0, 60, 3)], rng.randint(0, 12))
        clusters: list[list[tuple[int, int]]] = [[] for _ in range(rng.randint(1, 4))]
        for span in spans:
            clusters[rng.randrange(len(clusters))].append(span)
        return [c for c in clusters if c]

    return [([doc() for _ in range(4)], [doc() for _ in range(4)]) for _ in range(n)]


@pytest.mark.parametrize(
    ("suite", "batches"),
    [
        (
            RankingMetric(["map", "gm_map", "P.5", "ndcg_cut.3", "num_rel", "recip_rank"], level=1),
            _ranking_batches(0, 5),
        ),
        (CorefMetric, _coref_batches(1, 5)),
    ],
    ids=["ranking", "coref"],
)
def test_suite_merges_have_each_member_s_jitted_bits(suite, batches) -> None:
    states = [suite.from_model_output(p, r) for p, r in batches]
    for state in states:
        leaves = jax.tree.leaves(state)
        assert all(type(x) is np.ndarray for x in leaves)  # built on the host, kept there
    host = states[0]
    expected = _device(states[0])
    for state in states[1:]:
        host = host.merge(state)
        expected = _member_wise(expected, state)
    assert all(type(x) is np.ndarray for x in jax.tree.leaves(host))  # host merges stay on the host
    np.testing.assert_array_equal(flat(host), flat(expected))
    on_device = _device(states[0])
    for state in states[1:]:
        on_device = on_device.merge(_device(state))  # the suite's one jitted program
    assert not any(type(x) is np.ndarray for x in jax.tree.leaves(on_device))
    np.testing.assert_array_equal(flat(on_device), flat(expected))
    mixed = _device(states[0]).merge(states[1])  # a device suite and a host suite
    np.testing.assert_array_equal(flat(mixed), flat(_member_wise(_device(states[0]), states[1])))
    # the figures: compute() of the host suite equals the device one's, and under jit
    figures = jax.tree.leaves(host.compute())
    for other in (on_device.compute(), jax.jit(lambda s: s.compute())(host)):
        np.testing.assert_array_equal(np.asarray(figures), np.asarray(jax.tree.leaves(other)))


def test_a_device_suite_merge_is_one_program() -> None:
    """Merging device states of a new suite compiles one program, whatever the number of members (not one each)."""
    suite = RankingMetric(["map", "P.1,2,3", "ndcg_cut.2,4", "recall.2", "num_rel"], level=1)
    preds, refs = _ranking_batches(2, 1)[0]
    a, b = _device(suite.from_model_output(preds, refs)), _device(suite.from_model_output(refs and preds, refs))
    assert len(a.states) >= 5
    before = suite_module._jitted_merge._cache_size()
    a.merge(b).merge(a)
    assert suite_module._jitted_merge._cache_size() == before + 1


def test_suite_merge_still_refuses_other_suites_and_signatures() -> None:
    a = RankingMetric(["map"]).from_model_output([[1, 2]], [{1: 1}])
    with pytest.raises(TypeError, match="Cannot merge"):
        a.merge(RankingMetric(["P.5"]).from_model_output([[1, 2]], [{1: 1}]))
    with pytest.raises(TypeError, match="Cannot merge"):
        a.merge(CorefMetric.empty())
