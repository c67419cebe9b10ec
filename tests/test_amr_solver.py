"""The exact latent solver: one optimum for AMR's Smatch and LatentSetMatching, brute force, the cascade's paths."""

from __future__ import annotations

import functools
import itertools
import random
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Union

import numpy as np
import pytest
from amr_graphs import random_pairs, unrelated_pair

from metametric_jax import Variable, _budget, _solvers, dsl, metametric, metric_of
from metametric_jax import _latent as latent
from metametric_jax._solvers import solve_latent, solve_latent_elements
from metametric_jax.constraint import parse_constraint
from metametric_jax.matching import GraphMatching, LatentSetMatching
from metametric_jax.tasks.amr import smatch_match, smatch_triples


# ----------------------------------------------------------------------------------------------------- references
def brute_force(pred, gold) -> int:
    """Maximum multiset overlap over every one-to-one partial variable mapping."""
    pred_vars = list(dict.fromkeys(s for r, s, _ in pred if r == "instance"))
    gold_vars = list(dict.fromkeys(s for r, s, _ in gold if r == "instance"))
    gold_set = set(gold_vars)
    gold_bag = Counter((r.lower(), s, t if t in gold_set and r != "TOP" else t.lower()) for r, s, t in gold)
    best = 0
    slots = gold_vars + [None] * len(pred_vars)
    for image in itertools.permutations(slots, len(pred_vars)):
        m = {p: (g if g is not None else f"__unmapped_{p}") for p, g in zip(pred_vars, image)}
        bag = Counter(
            (r.lower(), m[s], m[t] if t in m and r.lower() not in ("instance", "top") else t.lower())
            for r, s, t in pred
        )
        best = max(best, sum((bag & gold_bag).values()))
    return best


def mapping_score(pred, gold, mapping) -> int:
    gold_vars = {s for r, s, _ in gold if r == "instance"}
    gold_bag = Counter((r.lower(), s, t if t in gold_vars and r != "TOP" else t.lower()) for r, s, t in gold)
    pred_vars = {s for r, s, _ in pred if r == "instance"}
    m = {p: mapping.get(p, f"__unmapped_{p}") for p in pred_vars}
    bag = Counter(
        (r.lower(), m[s], m[t] if t in m and r.lower() not in ("instance", "top") else t.lower()) for r, s, t in pred
    )
    return sum((bag & gold_bag).values())


# ----------------------------------------------------------------------------------------------------- a derived AMR
@metametric()
@dataclass(frozen=True)
class Instance:
    var: Variable
    concept: str


@metametric()
@dataclass(frozen=True)
class Attribute:
    var: Variable
    role: str
    value: str


@metametric()
@dataclass(frozen=True)
class Relation:
    source: Variable
    role: str
    target: Variable


@metametric(normalizer="f1")
@dataclass
class Graph:
    triples: Collection[Union[Instance, Attribute, Relation]]


def as_graph(triples) -> Graph:
    """Smatch triples as a derived structure (lower-cased, as Smatch compares them)."""
    variables = {s for r, s, _ in triples if r == "instance"}
    out = []
    for r, s, t in triples:
        if r == "instance":
            out.append(Instance(Variable(s), t.lower()))
        elif t in variables and r != "TOP":
            out.append(Relation(Variable(s), r.lower(), Variable(t)))
        else:
            out.append(Attribute(Variable(s), r.lower(), t.lower()))
    return Graph(out)


LATENT = metric_of(Graph)


# ----------------------------------------------------------------------------------------------------- one optimum
@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_on_tiny_graphs(seed):
    for pred, gold in random_pairs(100 + seed, 9, 6):
        p, g = smatch_triples(pred), smatch_triples(gold)
        found = smatch_match(p, g)
        best = brute_force(p, g)
        assert found.matched == best and found.optimal, (pred, gold)
        assert mapping_score(p, g, found.mapping) == found.matched
        assert found[1:3] == (len(p), len(g))
        assert LATENT.stats(as_graph(p), as_graph(g))[0] == best


@pytest.mark.parametrize("n_triples", [10, 25, 50])
def test_latent_set_matching_equals_amr_smatch(n_triples):
    """One solver: the derived latent metric and AMR's Smatch give one optimum on generated graphs."""
    for pred, gold in random_pairs(40 + n_triples, n_triples, 12):
        p, g = smatch_triples(pred), smatch_triples(gold)
        expected = smatch_match(p, g, work_limit=None).matched
        assert LATENT.stats(as_graph(p), as_graph(g)) == (float(expected), float(len(p)), float(len(g)))


def test_tiny_problem_without_relations_uses_assignment():
    p = [("instance", "a", "dog"), ("instance", "b", "dog"), ("polarity", "b", "-"), ("TOP", "a", "top")]
    g = [("instance", "x", "dog"), ("polarity", "x", "-"), ("instance", "y", "cat"), ("TOP", "y", "top")]
    found = smatch_match(p, g)
    # b -> x matches "dog" and the polarity, a -> y the TOP attribute.
    assert found.matched == brute_force(p, g) == 3
    assert found.mapping == {"a": "y", "b": "x"}


def test_cascade_paths_agree(monkeypatch):
    """Branch and bound, the relaxation's certificate, local search and the integer program give one optimum."""
    pairs = random_pairs(11, 40, 12)
    default = [smatch_match(smatch_triples(p), smatch_triples(g)) for p, g in pairs]
    assert all(found.optimal for found in default)
    monkeypatch.setattr(latent, "_BNB_NODE_LIMIT", 0)
    without_search = [smatch_match(smatch_triples(p), smatch_triples(g)) for p, g in pairs]
    assert [f.matched for f in without_search] == [f.matched for f in default]
    monkeypatch.setattr(latent, "_relaxation", lambda form, budget: (None, float("inf")))  # no certificate: the MILP
    integer = [smatch_match(smatch_triples(p), smatch_triples(g), work_limit=None) for p, g in pairs]
    assert [f.matched for f in integer] == [f.matched for f in default]
    assert all(f.optimal for f in integer)


def test_local_search_finds_a_good_mapping_alone(monkeypatch):
    """With no room for the integer program, the local search's mapping is a valid one near the optimum."""
    monkeypatch.setattr(latent, "_BNB_NODE_LIMIT", 0)
    for pred, gold in random_pairs(12, 40, 6):
        p, g = smatch_triples(pred), smatch_triples(gold)
        best = smatch_match(p, g, work_limit=None).matched
        found = smatch_match(p, g, work_limit=10**5)
        assert mapping_score(p, g, found.mapping) == found.matched <= best <= found.upper_bound


@pytest.mark.parametrize("constraint", ["<->", "->", "<-", "~"])
def test_block_reduction_equals_integer_program(constraint, monkeypatch):
    """Every element constraint: the reduction to variable-pair terms equals the program over element pairs."""
    program = _solvers._latent_program
    monkeypatch.setattr(_solvers, "_latent_program", None)  # the reduction must not fall back to it
    rng = random.Random(5)
    inner = dsl.auto(Union[Instance, Relation])
    for _ in range(15):
        n_vars = 4
        xs = [Instance(Variable(f"p{rng.randrange(n_vars)}"), rng.choice("ab")) for _ in range(4)]
        xs += [
            Relation(Variable(f"p{rng.randrange(n_vars)}"), rng.choice("rs"), Variable(f"p{rng.randrange(n_vars)}"))
            for _ in range(5)
        ]
        ys = [Instance(Variable(f"g{rng.randrange(n_vars)}"), rng.choice("ab")) for _ in range(4)]
        ys += [
            Relation(Variable(f"g{rng.randrange(n_vars)}"), rng.choice("rs"), Variable(f"g{rng.randrange(n_vars)}"))
            for _ in range(5)
        ]
        c = parse_constraint(constraint)
        bindings = functools.partial(_bindings, inner, xs, ys)
        # integer weights and others (compared up to a tolerance); branch and bound, or the relaxation and beyond
        for scale, limit in itertools.product((1.0, 0.37), (400, 0)):
            monkeypatch.setattr(latent, "_BNB_NODE_LIMIT", limit)
            g = scale * inner.gram(xs, ys)
            total, pairs, optimal = solve_latent_elements(g, bindings, c)
            cand = [(int(i), int(j)) for i, j in zip(*np.nonzero(g > 0))]
            expected, _, _ = program(g, cand, bindings, c)
            assert optimal and total == pytest.approx(expected)
            assert sum(g[i, j] for i, j in pairs) == pytest.approx(total)


def _bindings(inner, xs, ys, i, j):
    return inner.bindings(xs[i], ys[j])


def test_soft_similarity_uses_the_integer_program():
    @dataclass(frozen=True)
    class Node:
        var: Variable
        weight: float

    sim = dsl.latent_set_matching(dsl.dataclass(Node, weight=dsl.from_function(lambda a, b: 1.0 / (1.0 + abs(a - b)))))
    xs = [Node(Variable("a"), 1.0), Node(Variable("b"), 2.0)]
    ys = [Node(Variable("x"), 2.0), Node(Variable("y"), 1.5)]
    # a -> y (1/1.5) and b -> x (1) beat a -> x (1/2) and b -> y (1/1.5)
    assert sim.score(xs, ys) == pytest.approx(1.0 + 1.0 / 1.5)


# ----------------------------------------------------------------------------------------------------- the budget
def test_solve_latent_doctest_example_and_validation():
    s = solve_latent(2, 2, {0: 1.0, 3: 1.0, 1: 1.5}, {(0, 3): 1.0})
    assert (s.value, s.mapping, s.optimal, s.upper_bound) == (3.0, {0: 0, 1: 1}, True, 3.0)
    with pytest.raises(ValueError, match="non-negative"):
        solve_latent(1, 1, {0: -1.0})


def test_hard_pair_finishes_within_budget():
    """Two unrelated 60-variable graphs with 2 concepts: no longer unbounded; flagged, with a valid mapping."""
    pred, gold = unrelated_pair(0, 60)
    p, g = smatch_triples(pred), smatch_triples(gold)
    start = time.perf_counter()
    found = smatch_match(p, g)
    elapsed = time.perf_counter() - start
    assert elapsed < 10.0  # about 1.5 s alone; the default budget plus the problem's construction, on a loaded machine
    assert not found.optimal and not found.timed_out and found.matched < found.upper_bound
    assert mapping_score(p, g, found.mapping) == found.matched


def test_latent_set_matching_warns_when_the_budget_runs_out():
    pred, gold = unrelated_pair(1, 60)
    sim = LatentSetMatching(dsl.auto(Union[Instance, Attribute, Relation]), work_limit=10**6)
    with pytest.warns(latent.SolverBudgetWarning, match="latent matching: the work budget of 1,000,000 units ran out"):
        value = sim.score(as_graph(smatch_triples(pred)).triples, as_graph(smatch_triples(gold)).triples)
    assert value > 0


# --------------------------------------------------------------------------- soft similarities and graphs, bounded
@dataclass(frozen=True)
class Edge:
    head: Variable
    tail: Variable
    weight: float


def _random_edges(rng: np.random.Generator, prefix: str, n_vars: int, n_edges: int) -> list[Edge]:
    return [
        Edge(Variable(f"{prefix}{rng.integers(n_vars)}"), Variable(f"{prefix}{rng.integers(n_vars)}"), float(w))
        for w in rng.integers(1, 4, n_edges)
    ]


SOFT_EDGE = dsl.dataclass(Edge, weight=dsl.from_function(lambda a, b: 1.0 / (1.0 + abs(a - b))))


def _feasible(pairs, xs, ys, inner) -> bool:
    """One-to-one elements, and the variables their bindings need mapped one-to-one."""
    forward, backward = {}, {}
    for i, j in pairs:
        for u, v in inner.bindings(xs[i], ys[j]):
            if forward.setdefault(u, v) != v or backward.setdefault(v, u) != u:
                return False
    return len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})


def test_soft_latent_matching_is_bounded_warned_and_feasible():
    """15 variables and 40 soft-weighted edges a side took over 300 s unbounded; now the budget holds."""
    rng = np.random.default_rng(0)
    xs, ys = _random_edges(rng, "a", 15, 40), _random_edges(rng, "x", 15, 40)
    sim = dsl.latent_set_matching(SOFT_EDGE, work_limit=10**7)
    start = time.perf_counter()
    with pytest.warns(
        latent.SolverBudgetWarning, match=r"latent matching: the work budget of 10,000,000 units ran out"
    ):
        total, pairs, g = sim._solve(xs, ys, "pr")
    assert time.perf_counter() - start < 10.0  # the budget plus building the program, on a loaded machine
    assert _feasible(pairs, xs, ys, SOFT_EDGE)
    assert total == pytest.approx(sum(g[i, j] for i, j in pairs)) and total > 0
    assert sim.self_score(xs) == len(xs)  # the identity alignment reaches the row maxima: no search


def test_soft_latent_matching_within_budget_is_exact():
    rng = np.random.default_rng(3)
    for _ in range(5):
        xs, ys = _random_edges(rng, "a", 3, 4), _random_edges(rng, "x", 3, 4)
        bounded = dsl.latent_set_matching(SOFT_EDGE).score(xs, ys)
        assert bounded == pytest.approx(dsl.latent_set_matching(SOFT_EDGE, work_limit=None).score(xs, ys))
        best = 0.0  # brute force over one-to-one variable mappings, then the best element assignment under it
        pv = sorted({v.name for e in xs for v in (e.head, e.tail)})
        gv = sorted({v.name for e in ys for v in (e.head, e.tail)})
        g = SOFT_EDGE.gram(xs, ys)
        for image in itertools.permutations(gv + [None] * len(pv), len(pv)):
            m = dict(zip(pv, image))
            masked = np.array(
                [
                    [
                        g[i, j] if m[x.head.name] == y.head.name and m[x.tail.name] == y.tail.name else 0.0
                        for j, y in enumerate(ys)
                    ]
                    for i, x in enumerate(xs)
                ]
            )
            best = max(best, _solvers.solve_gram(masked, parse_constraint("<->"))[0])
        assert bounded == pytest.approx(best)


def test_graph_matching_is_bounded_and_warned():
    @dataclass
    class Graph:
        nodes: list
        edges: list

    rng = np.random.default_rng(1)

    def graph() -> Graph:
        ends = rng.integers(0, 40, (40, 2))
        return Graph([int(x) for x in rng.integers(0, 2, 40)], [(int(a), int(b)) for a, b in ends if a != b])

    x, y = graph(), graph()
    with pytest.warns(latent.SolverBudgetWarning, match="graph matching: the work budget of 1,000,000 units ran out"):
        value = dsl.graph_matching(dsl.discrete(), work_limit=10**6).score(x, y)
    assert value >= 1.0  # at least the greedy packing's first pair
    small = Graph([0, 1, 1], [(0, 1), (1, 2)]), Graph([0, 1], [(0, 1)])
    assert dsl.graph_matching(dsl.discrete()).score(*small) == 2.0


# ------------------------------------------------------------------------------------- graph matching past the program
@dataclass
class _Nodes:
    nodes: list
    edges: list


def _sixteen_node_pair(seed: int) -> tuple[_Nodes, _Nodes]:
    """Two random 16-node graphs of two labels: a program of more nonzeros than the default budget's root affords."""
    rng = np.random.default_rng(seed)

    def graph() -> _Nodes:
        ends = rng.integers(0, 16, (20, 2))
        return _Nodes([int(v) for v in rng.integers(0, 2, 16)], [(int(a), int(b)) for a, b in ends if a != b])

    return graph(), graph()


def _greedy_value(x: _Nodes, y: _Nodes) -> int:
    """Node pairs of equal label in order, each kept if it is 1:1 and keeps reachability with the kept ones."""
    reach = []
    for g in (x, y):
        n = len(g.nodes)
        r = np.zeros((n, n), dtype=bool)
        for a, b in g.edges:
            r[a, b] = True
        for k in range(n):
            r |= r[:, k : k + 1] & r[k : k + 1, :]
        reach.append(r)
    kept: list[tuple[int, int]] = []
    for i, j in itertools.product(range(len(x.nodes)), range(len(y.nodes))):
        if x.nodes[i] != y.nodes[j] or any(i == a or j == b for a, b in kept):
            continue
        if all(reach[0][i, a] == reach[1][j, b] and reach[0][a, i] == reach[1][b, j] for a, b in kept):
            kept.append((i, j))
    return len(kept)


@pytest.mark.parametrize("seed", [0, 1, 7, 11])
def test_graph_matching_search_reaches_the_optimum_when_the_program_is_skipped(seed):
    x, y = _sixteen_node_pair(seed)
    captured = []
    original = _solvers.solve_binary_program

    def spy(weights, rows, *args, **kwargs):
        captured.append(sum(len(row) for row in rows if len(row) > 1))
        return original(weights, rows, *args, **kwargs)

    metric = GraphMatching(dsl.discrete())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("metametric_jax.matching.solve_binary_program", spy)
        with pytest.warns(latent.SolverBudgetWarning, match="graph matching: the work budget of 100,000,000 units"):
            found = metric.score(x, y)
    assert _budget.program_cost(captured[0]) > _budget.DEFAULT_WORK_LIMIT  # the root does not fit: no HiGHS
    optimum = GraphMatching(dsl.discrete(), work_limit=None).score(x, y)
    assert _greedy_value(x, y) < optimum  # greedy alone falls short on this pair
    assert found == optimum
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", latent.SolverBudgetWarning)
        again = [metric.explain_matches(x, y, "", "") for _ in range(2)]
    assert again[0] == again[1]


def test_graph_matching_search_never_below_greedy_and_repeats_in_a_fresh_process():
    x, y = _sixteen_node_pair(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", latent.SolverBudgetWarning)
        tiny = GraphMatching(dsl.discrete(), work_limit=1).score(x, y)  # no kick affordable: the first local optima
        here = GraphMatching(dsl.discrete(), work_limit=3 * 10**6).score(x, y)
    assert tiny >= _greedy_value(x, y)
    code = (
        "import sys, warnings; sys.path.insert(0, 'tests'); warnings.simplefilter('ignore')\n"
        "from test_amr_solver import _sixteen_node_pair, GraphMatching, dsl\n"
        "print(GraphMatching(dsl.discrete(), work_limit=3 * 10**6).score(*_sixteen_node_pair(0)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(out.stdout) == here


def test_small_assignment_equals_scipy_and_keeps_scipy_off_the_score_path():
    from scipy.optimize import linear_sum_assignment

    rng = random.Random(3)
    for _ in range(500):
        n, m = rng.randint(1, 8), rng.randint(1, 8)
        w = [[rng.choice([0, 0, 1, 2, 5]) for _ in range(m)] for _ in range(n)]
        pairs = latent._small_assignment(w)
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs) == min(n, m)
        r, c = linear_sum_assignment(np.array(w), maximize=True)
        assert sum(w[i][j] for i, j in pairs) == int(np.array(w)[r, c].sum())
    code = (
        "import sys, contextlib, io\nfrom metametric_jax.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['score', 'amr', '--gold', 'metametric_jax/data/amr/gold.txt', '--pred',"
        " 'metametric_jax/data/amr/pred.txt', '--format', 'json'])\n"
        "print(sorted(m for m in ('scipy', 'jax', 'flax') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # every sample pair is proven without SciPy: its import is not paid
