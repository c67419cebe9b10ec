"""Matching optima equal an exhaustive search over every matching the constraint allows (hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from metametric_jax import dsl
from metametric_jax._solvers import lcs_dp, solve_gram
from metametric_jax.constraint import Constraint
from metametric_jax.tasks.ranking import precision_at_k, recall_at_k


def brute_force(g: np.ndarray, constraint: Constraint) -> float:
    """Maximum total weight over every alignment the constraint allows, enumerated exhaustively."""
    n, m = g.shape
    if constraint is Constraint.MANY_TO_MANY:  # every subset of pairs (small inputs only)
        all_pairs = [(i, j) for i in range(n) for j in range(m)]
        return max(
            (
                sum(g[i, j] for i, j in sub)
                for k in range(len(all_pairs) + 1)
                for sub in itertools.combinations(all_pairs, k)
            ),
            default=0.0,
        )
    if constraint is Constraint.MANY_TO_ONE:
        return brute_force(g.T, Constraint.ONE_TO_MANY)
    best = 0.0
    # each predicted row picks one reference column or none (-1)
    for choice in itertools.product(range(-1, m), repeat=n):
        used = [j for j in choice if j >= 0]
        if constraint is Constraint.ONE_TO_ONE and len(set(used)) != len(used):
            continue
        best = max(best, sum(g[i, j] for i, j in enumerate(choice) if j >= 0))
    return best


values = st.integers(min_value=0, max_value=3)
soft = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    xs=st.lists(values, min_size=0, max_size=5),
    ys=st.lists(values, min_size=0, max_size=5),
    constraint=st.sampled_from(list(Constraint)),
)
def test_discrete_matching_equals_exhaustive_search(xs, ys, constraint):
    if constraint is Constraint.MANY_TO_MANY:
        xs, ys = xs[:3], ys[:3]
    g = np.array([[1.0 if x == y else 0.0 for y in ys] for x in xs]).reshape(len(xs), len(ys))
    sim = dsl.set_matching(dsl.discrete(), constraint=constraint.value)
    assert sim.score(xs, ys) == pytest.approx(brute_force(g, constraint))
    # the vectorized batch path agrees with the single-pair path
    stats = sim.batch_stats([xs], [ys])[0]
    assert stats[0] == pytest.approx(brute_force(g, constraint))
    gx = np.array([[1.0 if a == b else 0.0 for b in xs] for a in xs]).reshape(len(xs), len(xs))
    assert stats[1] == pytest.approx(brute_force(gx, constraint))


@settings(max_examples=60, deadline=None)
@given(
    xs=st.lists(soft, min_size=0, max_size=4),
    ys=st.lists(soft, min_size=0, max_size=4),
    constraint=st.sampled_from(list(Constraint)),
)
def test_soft_matching_equals_exhaustive_search(xs, ys, constraint):
    if constraint is Constraint.MANY_TO_MANY:
        xs, ys = xs[:3], ys[:3]

    def phi(a: float, b: float) -> float:
        return 1.0 / (1.0 + abs(a - b))

    g = np.array([[phi(x, y) for y in ys] for x in xs]).reshape(len(xs), len(ys))
    sim = dsl.set_matching(dsl.from_function(phi), constraint=constraint.value)
    assert sim.score(xs, ys) == pytest.approx(brute_force(g, constraint), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    g=st.integers(min_value=0, max_value=6).flatmap(
        lambda n: st.integers(min_value=0, max_value=6).flatmap(
            lambda m: st.lists(st.lists(soft, min_size=m, max_size=m), min_size=n, max_size=n).map(
                lambda rows, m=m: np.array(rows, dtype=float).reshape(len(rows), m)
            )
        )
    )
)
def test_one_to_one_equals_scipy_assignment(g):
    expected = g[linear_sum_assignment(g, maximize=True)].sum() if g.size else 0.0
    assert solve_gram(g, Constraint.ONE_TO_ONE)[0] == pytest.approx(expected)


def _lcs(a: list, b: list) -> int:
    """Textbook LCS length (independent of the library's cumulative-max recurrence)."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t[-1][-1]


@settings(max_examples=80, deadline=None)
@given(xs=st.lists(values, max_size=8), ys=st.lists(values, max_size=8))
def test_sequence_matching_is_lcs(xs, ys):
    assert dsl.sequence_matching(dsl.discrete()).score(xs, ys) == _lcs(xs, ys)


@settings(max_examples=40, deadline=None)
@given(xs=st.lists(soft, max_size=5), ys=st.lists(soft, max_size=5))
def test_sequence_matching_is_best_monotone_alignment(xs, ys):
    g = np.array([[1.0 / (1.0 + abs(x - y)) for y in ys] for x in xs]).reshape(len(xs), len(ys))
    best = 0.0
    for k in range(min(len(xs), len(ys)) + 1):
        for ii in itertools.combinations(range(len(xs)), k):
            for jj in itertools.combinations(range(len(ys)), k):
                best = max(best, sum(g[i, j] for i, j in zip(ii, jj)))
    assert lcs_dp(g)[0] == pytest.approx(best)


@settings(max_examples=25, deadline=None)
@given(
    xs=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 1)), max_size=4),
    ys=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 1)), max_size=4),
)
def test_latent_matching_equals_exhaustive_search(xs, ys):
    """Edges (u, v, label) over variables: best over every partial injection of variables and of edges."""
    from dataclasses import dataclass

    from metametric_jax import Variable

    @dataclass(frozen=True)
    class Edge:
        u: Variable
        v: Variable
        label: int

    def build(es):
        return [Edge(Variable(f"n{a}"), Variable(f"n{b}"), c) for a, b, c in es]

    inner = dsl.dataclass(Edge)
    sim = dsl.latent_set_matching(inner)
    px, py = build(xs), build(ys)
    vx = sorted({e.u for e in px} | {e.v for e in px}, key=lambda v: v.name)
    vy = sorted({e.u for e in py} | {e.v for e in py}, key=lambda v: v.name)
    best = 0
    for k in range(min(len(vx), len(vy)) + 1):
        for src in itertools.combinations(vx, k):
            for dst in itertools.permutations(vy, k):
                mapping = dict(zip(src, dst))
                g = np.array(
                    [[1.0 if (mapping.get(a.u) == b.u and mapping.get(a.v) == b.v and a.label == b.label) else 0.0
                      for b in py] for a in px]
                ).reshape(len(px), len(py))  # fmt: skip
                best = max(best, solve_gram(g, Constraint.ONE_TO_ONE)[0])
    assert sim.score(px, py) == pytest.approx(best)


def test_graph_matching_preserves_reachability():
    from dataclasses import dataclass

    @dataclass
    class G:
        nodes: list
        edges: list

    chain = G(["a", "b", "c"], [(0, 1), (1, 2)])
    reversed_chain = G(["a", "b", "c"], [(2, 1), (1, 0)])
    sim = dsl.graph_matching(dsl.discrete())
    assert sim.score(chain, chain) == 3.0
    # a->b->c vs c->b->a: any two matched nodes would invert reachability, so only one node can be matched
    assert sim.score(chain, reversed_chain) == 1.0
    flat = G(["a", "b", "c"], [])
    assert sim.score(chain, flat) == 1.0
    ex = sim.explain(chain, chain)
    assert {(m.pred_path, m.ref_path) for m in ex.matches} == {
        ("nodes[0]", "nodes[0]"),
        ("nodes[1]", "nodes[1]"),
        ("nodes[2]", "nodes[2]"),
    }


def test_max_pair_and_ranking():
    assert dsl.max_pair(dsl.from_function(lambda x, y: 1.0 / (1 + abs(x - y)))).score(
        [1, 5], [4.5, 9]
    ) == pytest.approx(1 / 1.5)
    from metametric_jax.tasks.ranking import AveragePrecisionMetric

    assert AveragePrecisionMetric.score(["a", "b", "c", "d"], {"c", "d", "e"}) == pytest.approx((1 / 3 + 2 / 4) / 3)
    assert precision_at_k(2).score(["a", "c", "d"], {"c", "d", "e"}) == 0.5
    assert recall_at_k(3).score(["a", "c", "d"], {"c", "d", "e"}) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="positive integer"):
        precision_at_k(0)


intervals = st.lists(
    st.tuples(st.integers(0, 6), st.integers(1, 4)).map(lambda t: (t[0], t[0] + t[1])), min_size=0, max_size=5
)


def _dice(a: tuple[int, int], b: tuple[int, int]) -> float:
    shared = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return 2.0 * shared / ((a[1] - a[0]) + (b[1] - b[0]))


@settings(max_examples=60, deadline=None)
@given(xs=intervals, constraint=st.sampled_from(["<->", "->", "<-"]))
def test_self_bounded_shortcut_equals_the_solved_self_matching(xs, constraint):
    bounded = dsl.set_matching(dsl.from_function(_dice, self_bounded=True), constraint=constraint)
    general = dsl.set_matching(dsl.from_function(_dice), constraint=constraint)
    assert bounded.inner.self_bounded and not general.inner.self_bounded
    assert bounded.self_bounded == (constraint == "<->")  # only a 1:1 matching is itself self-bounded
    assert bounded.self_score(xs) == pytest.approx(general.self_score(xs))
    # nested: entities as sets of mentions compared by dice (CEAF-e's phi4), matched 1:1
    phi4 = dsl.normalize(dsl.set_matching(dsl.discrete()), normalizer="dice")
    clusters = [frozenset(range(a, b)) for a, b in xs]
    nested = dsl.set_matching(phi4, constraint=constraint)
    assert nested.inner.self_bounded
    g = phi4.gram(clusters, clusters, "pp")
    assert nested.self_score(clusters) == pytest.approx(solve_gram(g, Constraint(constraint))[0])
