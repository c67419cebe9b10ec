"""Smatch: triples and scores against the smatch 1.0.4 package, exactness against brute force."""

from __future__ import annotations

import io
import itertools
import random
import sys
from collections import Counter
from pathlib import Path

import amr as smatch_amr
import numpy as np
import penman
import pytest
import smatch

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import amr as ours
from metametric_jax.tasks.amr import Smatch, score_files, smatch_match, smatch_triples

DATA = Path(ours.__file__).resolve().parents[1] / "data" / "amr"
GOLD, PRED = DATA / "gold.txt", DATA / "pred.txt"


# ----------------------------------------------------------------------------------------------------- references
class _FixedRandom(random.Random):
    """smatch calls ``random.seed()`` before each restart; keep the seeded stream instead."""

    def seed(self, a=None, version=2):  # noqa: D102
        if a is not None:
            super().seed(a, version)


@pytest.fixture
def seeded_smatch(monkeypatch):
    monkeypatch.setattr(smatch, "random", _FixedRandom(1234))
    monkeypatch.setattr(smatch, "iteration_num", 5)  # smatch.py's default: 4 restarts + 1
    smatch.match_triple_dict.clear()
    yield smatch
    smatch.match_triple_dict.clear()


def one_line(text: str) -> str:
    return smatch_amr.AMR.get_amr_line(io.StringIO(text))


def smatch_reference(pred: str, gold: str) -> tuple[int, int, int]:
    """(matched, test triples, gold triples) of the smatch package (hill climbing)."""
    smatch.match_triple_dict.clear()
    result = smatch.get_amr_match(one_line(pred), one_line(gold))
    smatch.match_triple_dict.clear()
    return result


def smatch_package_triples(text: str) -> Counter:
    graph = smatch_amr.AMR.parse_AMR_line(one_line(text))
    graph.rename_node("v")
    instances, attributes, relations = graph.get_triples()
    # smatch marks a closed quote with a trailing "_" and strips it when comparing.
    return Counter([tuple(t) for t in instances + relations] + [(r, s, t.rstrip("_")) for r, s, t in attributes])


def renamed(triples) -> Counter:
    names = {}
    for role, source, _ in triples:
        if role == "instance" and source not in names:
            names[source] = f"v{len(names)}"
    return Counter((r, names.get(s, s), names.get(t, t) if r not in ("instance", "TOP") else t) for r, s, t in triples)


def blocks(path: Path) -> list[str]:
    text = path.read_text()
    return [b for b in text.split("\n\n") if b.strip()]


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


# ----------------------------------------------------------------------------------------------------- random graphs
CONCEPTS = ["want-01", "go-02", "boy", "girl", "person", "thing", "city", "name", "say-01", "and", "believe-01", "dog"]
ROLES = ["ARG0", "ARG1", "ARG2", "mod", "op1", "op2", "location", "time", "poss", "consist-of"]
ATTRS = [
    ("polarity", "-"),
    ("quant", "2"),
    ("quant", "5"),
    ("op1", '"Paris"'),
    ("op1", '"Kim"'),
    ("mode", "expressive"),
]


def random_graph(rng, n_triples):
    n_nodes = max(2, round(n_triples * 0.3))
    concepts = [rng.choice(CONCEPTS) for _ in range(n_nodes)]
    edges = [(rng.randrange(i), rng.choice(ROLES), i) for i in range(1, n_nodes)]
    attrs = []
    while n_nodes + 1 + len(edges) + len(attrs) < n_triples:
        if n_nodes > 2 and rng.random() < 0.5:
            s, t = rng.sample(range(n_nodes), 2)
            if (s, t) not in {(a, b) for a, _, b in edges} | {(b, a) for a, _, b in edges}:
                edges.append((s, rng.choice(ROLES), t))
        else:
            a = (rng.randrange(n_nodes), *rng.choice(ATTRS))
            if a not in attrs:
                attrs.append(a)
    return concepts, edges, attrs


def perturb(rng, graph, rate=0.25):
    concepts, edges, attrs = graph
    concepts = [rng.choice(CONCEPTS) if rng.random() < rate else c for c in concepts]
    edges = [(s, rng.choice(ROLES) if rng.random() < rate else r, t) for s, r, t in edges]
    edges = [e for e in edges if rng.random() > rate / 2 or e[0] == 0]
    attrs = [a for a in attrs if rng.random() > rate]
    return concepts, edges, attrs


def to_penman(rng, graph) -> str:
    """PENMAN with shuffled variable names and branch order; edges are written forward or inverted (-of)."""
    concepts, edges, attrs = graph
    n = len(concepts)
    names = [f"{chr(97 + rng.randrange(26))}{i}" for i in rng.sample(range(n), n)]
    edges = list(edges)
    adjacent = {i: [] for i in range(n)}
    for k, (s, _, t) in enumerate(edges):
        adjacent[s].append(k)
        adjacent[t].append(k)
    reach, todo = set(), [0]
    while todo:
        x = todo.pop()
        if x not in reach:
            reach.add(x)
            todo.extend(edges[k][2] if edges[k][0] == x else edges[k][0] for k in adjacent[x])
    for i in range(n):
        if i not in reach:
            edges.append((0, rng.choice(ROLES), i))
            adjacent[0].append(len(edges) - 1)
            adjacent[i].append(len(edges) - 1)
    seen, used = {0}, set()

    def write(x):
        parts = [f"({names[x]} / {concepts[x]}"]
        items = [("e", k) for k in adjacent[x]] + [("a", a) for a in attrs if a[0] == x]
        rng.shuffle(items)
        for kind, item in items:
            if kind == "a":
                parts.append(f":{item[1]} {item[2]}")
                continue
            if item in used:
                continue
            used.add(item)
            s, r, t = edges[item]
            other, role = (t, r) if s == x else (s, r[:-3] if r.endswith("-of") else r + "-of")
            if other in seen:
                parts.append(f":{role} {names[other]}")
            else:
                seen.add(other)
                parts.append(f":{role} {write(other)}")
        return " ".join(parts) + ")"

    return write(0)


def random_pairs(seed, n_triples, count):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        gold = random_graph(rng, n_triples)
        out.append((to_penman(rng, perturb(rng, gold)), to_penman(rng, gold)))
    return out


def no_repeated_triples(text: str) -> bool:
    counts = smatch_package_triples(text)
    return all(c == 1 for c in counts.values())


# ----------------------------------------------------------------------------------------------------- triples
def test_triples_equal_smatch_extraction_on_sample():
    graphs = blocks(GOLD) + blocks(PRED)
    assert len(graphs) == 20
    for text in graphs:
        expected = smatch_package_triples(text)
        found = renamed(smatch_triples(text))
        assert sum(found.values()) == sum(expected.values())
        assert found == expected, text


@pytest.mark.parametrize("seed", [0, 1])
def test_triples_equal_smatch_extraction_on_random_graphs(seed):
    for pred, gold in random_pairs(seed, 25, 20):
        for text in (pred, gold):
            assert renamed(smatch_triples(text)) == smatch_package_triples(text), text


def test_inverse_roles_mod_and_top():
    triples = smatch_triples('(a / a-concept :ARG0-of (b / bb) :mod (c / cc) :consist-of (d / dd) :op1 "New")')
    assert ("ARG0", "b", "a") in triples
    assert ("domain", "c", "a") in triples
    assert ("consist-of", "a", "d") in triples
    assert ("op1", "a", "New") in triples
    assert ("TOP", "a", "top") in triples


def test_graph_tree_and_triple_inputs_agree():
    text = blocks(GOLD)[3]
    expected = smatch_triples(text)
    assert sorted(smatch_triples(penman.decode(text))) == sorted(expected)
    assert sorted(smatch_triples(penman.parse(text))) == sorted(expected)
    assert smatch_triples(expected) == expected


# ----------------------------------------------------------------------------------------------------- exactness
def test_cai_knight_example():
    """Cai & Knight (2013), Section 2: 'the boy wants to go' vs 'the boy wants the football', F1 = 0.73."""
    go = [
        ("instance", "a", "want-01"),
        ("instance", "b", "boy"),
        ("instance", "c", "go-01"),
        ("ARG0", "a", "b"),
        ("ARG1", "a", "c"),
        ("ARG0", "c", "b"),
    ]
    football = [
        ("instance", "x", "want-01"),
        ("instance", "y", "boy"),
        ("instance", "z", "football"),
        ("ARG0", "x", "y"),
        ("ARG1", "x", "z"),
    ]
    matched, n_pred, n_gold, mapping = smatch_match(football, go)
    assert (matched, n_pred, n_gold) == (4, 5, 6)
    assert mapping["x"] == "a" and mapping["y"] == "b"
    assert 2 * matched / (n_pred + n_gold) == pytest.approx(0.73, abs=0.005)
    assert Smatch.from_stats([[matched, n_pred, n_gold]]).compute()["f1"] == pytest.approx(0.73, abs=0.005)


def test_cai_knight_penman_matches_smatch_package(seeded_smatch):
    go = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))"
    football = "(w / want-01 :ARG0 (b / boy) :ARG1 (f / football))"
    expected = smatch_reference(football, go)
    assert Smatch.stats(football, go) == tuple(float(x) for x in expected)
    assert Smatch.score(football, go) == pytest.approx(2 * expected[0] / (expected[1] + expected[2]))


def test_case_and_quotes_compare_like_smatch(seeded_smatch):
    pred = "(W / Want-01 :arg0 (b / BOY :Polarity -) :ARG1 (c / city :name (n / name :op1 Paris)))"
    gold = '(w / want-01 :ARG0 (x / boy :polarity -) :ARG1 (y / city :name (z / name :op1 "paris")))'
    expected = smatch_reference(pred, gold)
    assert expected[0] == expected[1] == expected[2]
    assert Smatch.stats(pred, gold) == tuple(float(v) for v in expected)


@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_on_tiny_graphs(seed):
    for pred, gold in random_pairs(100 + seed, 9, 6):
        p, g = smatch_triples(pred), smatch_triples(gold)
        matched, n_pred, n_gold, mapping = smatch_match(p, g)
        assert matched == brute_force(p, g), (pred, gold)
        assert mapping_score(p, g, mapping) == matched
        assert (n_pred, n_gold) == (len(p), len(g))


def test_tiny_problem_without_relations_uses_assignment():
    p = [("instance", "a", "dog"), ("instance", "b", "dog"), ("polarity", "b", "-"), ("TOP", "a", "top")]
    g = [("instance", "x", "dog"), ("polarity", "x", "-"), ("instance", "y", "cat"), ("TOP", "y", "top")]
    matched, _, _, mapping = smatch_match(p, g)
    # b -> x matches "dog" and the polarity, a -> y the TOP attribute.
    assert matched == brute_force(p, g) == 3
    assert mapping == {"a": "y", "b": "x"}


@pytest.mark.parametrize("n_triples", [10, 25])
def test_never_below_smatch_package(seeded_smatch, n_triples):
    pairs = random_pairs(7 + n_triples, n_triples, 40)
    pairs = [(p, g) for p, g in pairs if no_repeated_triples(p) and no_repeated_triples(g)]
    assert len(pairs) >= 30
    strictly_better = 0
    for pred, gold in pairs:
        ref = smatch_reference(pred, gold)
        mine = Smatch.stats(pred, gold)
        assert mine[1:] == (ref[1], ref[2])
        assert mine[0] >= ref[0], (pred, gold)
        strictly_better += mine[0] > ref[0]
    assert strictly_better <= len(pairs) // 4


def test_equals_smatch_with_many_restarts(seeded_smatch, monkeypatch):
    monkeypatch.setattr(smatch, "iteration_num", 60)
    pairs = [(p, g) for p, g in random_pairs(3, 12, 30) if no_repeated_triples(p) and no_repeated_triples(g)]
    pairs += list(zip(blocks(PRED), blocks(GOLD)))
    for pred, gold in pairs:
        assert Smatch.stats(pred, gold) == tuple(float(x) for x in smatch_reference(pred, gold)), (pred, gold)


def test_solver_paths_agree(monkeypatch):
    """Branch and bound, the LP relaxation with its certificate, and the integer program give one optimum."""
    pairs = random_pairs(11, 40, 12)
    default = [smatch_match(smatch_triples(p), smatch_triples(g))[0] for p, g in pairs]
    monkeypatch.setattr(ours, "_BNB_NODE_LIMIT", 0)
    via_highs = [smatch_match(smatch_triples(p), smatch_triples(g))[0] for p, g in pairs]
    assert via_highs == default
    for pred, gold in pairs:
        p, g = ours._Side(smatch_triples(pred)), ours._Side(smatch_triples(gold))
        unary, edges, _ = ours._problem(p, g)
        if edges:
            chosen, value = ours._highs(len(g.names), unary, edges, integer=True)
            assert ours._evaluate(chosen, unary, edges) == round(value)
            assert round(value) == smatch_match(smatch_triples(pred), smatch_triples(gold))[0]


# ----------------------------------------------------------------------------------------------------- corpus / metric
def test_score_files_equals_smatch_package(seeded_smatch, monkeypatch):
    monkeypatch.setattr(smatch, "iteration_num", 60)
    with open(PRED) as f1, open(GOLD) as f2:
        (precision, recall, f1_score) = next(smatch.score_amr_pairs(f1, f2))
    result = score_files(GOLD, PRED)
    assert set(result) == {"precision", "recall", "f1"}
    assert all(isinstance(v, float) for v in result.values())
    assert result["precision"] == pytest.approx(precision)
    assert result["recall"] == pytest.approx(recall)
    assert result["f1"] == pytest.approx(f1_score)


def test_metric_is_micro_over_pairs_and_merges(seeded_smatch):
    preds, golds = blocks(PRED), blocks(GOLD)
    refs = [smatch_reference(p, g) for p, g in zip(preds, golds)]
    m, t, g = (sum(r[k] for r in refs) for k in range(3))
    state = Smatch.from_model_output(preds, golds)
    result = state.compute()
    assert float(result["precision"]) == pytest.approx(m / t, rel=1e-6)
    assert float(result["recall"]) == pytest.approx(m / g, rel=1e-6)
    assert float(result["f1"]) == pytest.approx(2 * m / (t + g), rel=1e-6)
    macro = np.mean([2 * a / (b + c) for a, b, c in refs])
    assert float(result["macro_f1"]) == pytest.approx(macro, rel=1e-6)
    merged = Smatch.from_model_output(preds[:4], golds[:4]).merge(Smatch.from_model_output(preds[4:], golds[4:]))
    np.testing.assert_allclose(np.asarray(merged.compute()["f1"]), np.asarray(result["f1"]), rtol=1e-6)
    mixed_preds = [penman.decode(p) if k % 2 else smatch_triples(p) for k, p in enumerate(preds)]
    mixed = Smatch.from_model_output(mixed_preds, [penman.parse(x) for x in golds]).compute()
    assert float(mixed["f1"]) == pytest.approx(float(result["f1"]), rel=1e-6)


# ----------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("(a / b :ARG0 (c / d)", "unbalanced"),
        ("(a / b :ARG0 (c / d) (e / f))", "invalid PENMAN"),
        ("a / b", "starting with '('"),
        ("(a / b) (c / d)", "found 2"),
        ("(a / b :ARG0 (a / c))", "defined twice"),
        ("(a :ARG0 (b / c))", "no concept"),
    ],
)
def test_bad_penman_in_file(tmp_path, text, fragment):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"# ::snt fine\n(x / fine)\n\n# ::snt broken\n{text}\n")
    good = tmp_path / "good.txt"
    good.write_text("(x / fine)\n\n(y / fine)\n")
    with pytest.raises(InputFormatError) as info:
        score_files(good, bad)
    assert info.value.path == str(bad)
    assert info.value.line == 5
    assert fragment in info.value.message


def test_bad_penman_string_in_batch():
    with pytest.raises(InputFormatError, match=r"<prediction\[1\]>.*unbalanced"):
        Smatch.from_model_output(["(a / b)", "(a / b"], ["(a / b)", "(a / b)"])


def test_different_graph_counts(tmp_path):
    gold = tmp_path / "gold.txt"
    pred = tmp_path / "pred.txt"
    gold.write_text("(a / b)\n\n(c / d)\n\n(e / f)\n")
    pred.write_text("(a / b)\n\n(c / d)\n")
    with pytest.raises(InputFormatError, match=r"2 graphs.*has 3"):
        score_files(gold, pred)


def test_wrong_types():
    with pytest.raises(TypeError, match="PENMAN string"):
        smatch_triples(42)
    with pytest.raises(TypeError, match="item 1"):
        smatch_triples([("instance", "a", "b"), ("ARG0", "a")])
    with pytest.raises(ValueError, match="same length"):
        Smatch.from_model_output(["(a / b)"], [])


def test_missing_penman_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "penman", None)
    with pytest.raises(ImportError, match=r"pip install metametric-jax\[formats\]"):
        smatch_triples("(a / b)")
    assert smatch_match([("instance", "a", "b")], [("instance", "x", "b")])[0] == 1
