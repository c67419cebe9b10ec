"""Fine-grained AMR scores against amr-evaluation (Damonte et al. 2017): per-pair counts, corpus figures, definitions.

The fixtures (``tests/data/amr/amr_evaluation_*``, see the README there) hold amr-evaluation's counts per graph pair
and figure, recorded from its own functions: once as it runs (hill climbing, 5 starts) and once with 100 starts, on
the bundled sample, the ``fine`` pairs (alignment markers removed, and kept) and 181 generated pairs (hand-made cases
of each definition, then seeded random pairs).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import penman
import pytest
from helpers import run_json

from metametric_jax.tasks import amr_fine
from metametric_jax.tasks.amr import score, score_files, smatch_triples
from metametric_jax.tasks.amr_fine import amr_evaluation_counts, evaluation_graph, evaluation_reentrancies
from metametric_jax.tasks.readers.penman import read_penman

FIXTURES = Path(__file__).parents[1] / "data" / "amr"
DATA = Path(amr_fine.__file__).resolve().parents[1] / "data" / "amr"
FINE_GOLD, FINE_PRED = FIXTURES / "fine_gold.txt", FIXTURES / "fine_pred.txt"
SETS = {  # name: (predictions, references, keep_alignments, pairs where 5 starts stop below the optimum)
    "sample": (DATA / "pred.txt", DATA / "gold.txt", False, {}),
    "fine": (FINE_PRED, FINE_GOLD, False, {}),
    "fine_aligned": (FINE_PRED, FINE_GOLD, True, {}),
    "generated": (
        FIXTURES / "evaluation_pred.txt",
        FIXTURES / "evaluation_gold.txt",
        False,
        {"no_wsd": 1, "reentrancies": 1, "srl": 1},
    ),
}
FIGURES = ("smatch", *amr_fine.NAMES)
PRINTED = {
    "Smatch": "smatch",
    "Unlabeled": "unlabeled",
    "No WSD": "no_wsd",
    "Concepts": "concepts",
    "Named Ent.": "named_entities",
    "Negations": "negations",
    "Wikification": "wikification",
    "Reentrancies": "reentrancies",
    "SRL": "srl",
}


def tool_pairs(name: str) -> dict:
    return json.loads((FIXTURES / f"amr_evaluation_{name}_pairs.json").read_text())


def printed(name: str) -> dict[str, tuple[str, ...]]:
    """What evaluation.sh prints: ``{figure: (P, R, F)}`` with two decimals."""
    out = {}
    for line in (FIXTURES / f"amr_evaluation_{name}.txt").read_text().splitlines():
        out[PRINTED[line.split(" ->")[0]]] = tuple(re.findall(r"\d+\.\d+", line))
    return out


@functools.cache
def ours(name: str) -> list[dict[str, tuple[int, int, int, bool]]]:
    """Our counts of every pair of a set (computed once per session; the tests only read them)."""
    pred, gold, keep, _ = SETS[name]
    pairs = zip(read_penman(pred), read_penman(gold))
    return [amr_evaluation_counts(p.tree, g.tree, keep_alignments=keep, smatch=True) for p, g in pairs]


@functools.cache
def fine_report(name: str) -> Any:
    """``score_files`` of a set with the fine-grained figures (computed once per session; the tests only read it)."""
    pred, gold, keep, _ = SETS[name]
    return score_files(predictions=pred, references=gold, keep_alignments=keep, fine_grained=True)


def tool_figures(m: int, p: int, g: int) -> tuple[float, float, float]:
    """amr-evaluation's read-out of summed counts (``compute_f`` of its smatch, the division of scores.py)."""
    if p == 0 or g == 0:
        return 0.0, 0.0, 0.0
    precision, recall = m / p, m / g
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


# ------------------------------------------------------------------------------------------------ against the tool
@pytest.mark.parametrize("name", list(SETS))
def test_counts_per_pair_equal_amr_evaluation(name):
    """Every count of every pair is amr-evaluation's, the matched triples wherever its hill climbing finds the optimum.

    Its searches that stop below the optimum are counted (they must be as many as recorded); with 100 starts it finds
    the optimum on each of them.
    """
    document = tool_pairs(name)
    tool, many = document["pairs"], document["pairs_100_starts"]
    mine = ours(name)
    assert len(mine) == len(tool) == len(many)
    below: dict[str, int] = {}
    for counts, theirs, again in zip(mine, tool, many):
        for figure in FIGURES:
            matched, predicted, reference, optimal = counts[figure]
            assert optimal, (theirs["id"], figure)
            assert [predicted, reference] == theirs[figure][1:], (theirs["id"], figure, counts[figure], theirs)
            if matched != theirs[figure][0]:
                assert matched > theirs[figure][0], (theirs["id"], figure, counts[figure], theirs[figure])
                below[figure] = below.get(figure, 0) + 1
            if figure in again:
                assert [matched, predicted, reference] == again[figure], (theirs["id"], figure)
    assert below == SETS[name][3]


@pytest.mark.parametrize("name", list(SETS))
def test_corpus_figures_equal_amr_evaluation(name):
    """``score_files``'s default: amr-evaluation's read-out of its counts to 1e-12, what it prints to 2 decimals.

    The counts are those of its 100-start search (equal to its 5-start search but on the pairs counted above).
    """
    scores = fine_report(name).scores
    many = tool_pairs(name)["pairs_100_starts"]
    tool = tool_pairs(name)["pairs"]
    for figure in amr_fine.NAMES:
        rows = [pair[figure] if figure in pair else other[figure] for pair, other in zip(many, tool)]
        expected = tool_figures(*(sum(row[k] for row in rows) for k in range(3)))
        got = tuple(scores[figure][k] for k in ("precision", "recall", "f1"))
        assert got == pytest.approx(expected, abs=1e-12, rel=0), figure
    shown = printed(name)
    for figure in amr_fine.NAMES:
        assert tuple(f"{scores[figure][k]:.2f}" for k in ("precision", "recall", "f1")) == shown[figure], figure
    smatch_line = [sum(c["smatch"][k] for c in ours(name)) for k in range(3)]
    assert tuple(f"{x:.2f}" for x in tool_figures(*smatch_line)) == shown["smatch"]
    assert scores["pairs_optimal"] == scores["pairs"]


def test_generated_pairs_cover_every_definition():
    """The generated file holds each case its README names, and both readings differ on it."""
    default = fine_report("generated")
    normalized = score_files(
        predictions=SETS["generated"][0], references=SETS["generated"][1], fine_grained="normalized"
    )
    assert default.scores["f1"] == normalized.scores["f1"]  # the headline Smatch is smatch 1.0.4's either way
    assert sum(item["id"].startswith("case.") for item in default.items) >= 30
    for figure in amr_fine.NAMES:
        assert default.scores[figure] != normalized.scores[figure], figure


# ------------------------------------------------------------------------------------------------ definitions
def counts(pred: str, gold: str, figure: str) -> tuple[int, int, int]:
    return amr_evaluation_counts(pred, gold, smatch=True)[figure][:3]


def test_mod_is_not_an_inverse_domain():
    tree = "(b / boy :mod (t / tall) :ARG0-of (g / go-02))"
    assert counts(tree, tree, "reentrancies") == (0, 0, 0)
    normalized = score([tree], [tree], fine_grained="normalized")["reentrancies"]
    assert normalized["f1"] == 1.0  # smatch 1.0.4's (domain t b) gives boy a second parent
    assert evaluation_graph(tree).relations == [("mod", "b", "t"), ("ARG0", "g", "b")]


def test_inverse_roles_as_written():
    assert evaluation_graph("(t / team :consist-of (p / person))").relations == [("consist", "p", "t")]
    # to a variable: inverted when written last in its node, kept before another role
    last = evaluation_graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0-of b))")
    assert last.relations[-1] == ("ARG0", "b", "g")
    before = evaluation_graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0-of b :time (n / now)))")
    assert ("ARG0-of", "g", "b") in before.relations
    # with a constant written last, the role is dropped
    assert evaluation_graph("(x / thing :ARG1-of 5)").triples() == [("instance", "x", "thing"), ("TOP", "x", "thing")]


def test_top_carries_the_root_concept():
    assert evaluation_graph("(w / want-01 :ARG0 (b / boy))").attributes == [("TOP", "w", "want-01")]
    # so roots with other concepts differ by one triple, and a root concept equal to its variable is a parent
    assert counts("(g / go-02 :ARG0 (b / boy))", "(b / boy :ARG0-of (g / go-02))", "smatch") == (3, 4, 4)
    reentrant = evaluation_reentrancies(evaluation_graph("(i / i :ARG0-of (w / want-01))"))
    assert reentrant.relations == [("TOP", "i", "i"), ("ARG0", "w", "i")]


def test_unlabeled_keeps_the_written_direction():
    pred, gold = "(b / boy :ARG0-of (g / go-02))", "(g / go-02 :ARG0 (b / boy))"
    assert evaluation_graph(pred, relabel=True).relations == [("label", "b", "g")]
    assert evaluation_graph(gold, relabel=True).relations == [("label", "g", "b")]
    assert counts(pred, gold, "unlabeled") == (2, 4, 4)  # the two concepts; TOP and the edge differ
    # the rewrite is textual: a colon inside a constant reads ":label" too
    assert evaluation_graph('(t / time :value "10:30")', relabel=True).attributes[0] == ("label", "t", "10:label_")


def test_subgraphs_carry_a_top_triple():
    graph = evaluation_graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))")
    assert amr_fine.evaluation_srl(graph).attributes == [("TOP", "w", "want-01")]
    assert evaluation_reentrancies(graph).attributes == [("TOP", "w", "want-01")]
    assert len(evaluation_reentrancies(graph).triples()) == 6  # three instances, TOP, two relations
    assert evaluation_reentrancies(evaluation_graph("(b / boy)")).triples() == []


def test_strings_as_read():
    # concepts compare case-sensitively in the string figures, not in the Smatch-based ones
    pred = '(c / Country :polarity - :name (n / name :op1 "France"))'
    gold = '(c / country :polarity - :name (n / name :op1 "France"))'
    assert counts(pred, gold, "concepts") == (1, 2, 2)
    assert counts(pred, gold, "named_entities") == (0, 1, 1)
    assert counts(pred, gold, "negations") == (0, 1, 1)
    assert counts(pred, gold, "smatch") == (6, 6, 6)
    # a quoted constant: its first word, "_" for the closing quote
    graph = evaluation_graph('(c / city :wiki "Paris" :name (n / name :op1 "New York"))')
    assert graph.attributes == [("wiki", "c", "Paris_"), ("TOP", "c", "city"), ("op1", "n", "New")]
    assert counts("(c / city :wiki Paris)", '(c / city :wiki "Paris")', "wikification") == (0, 1, 1)
    assert counts("(c / city :wiki Paris)", '(c / city :wiki "Paris")', "smatch") == (3, 3, 3)


def test_repeated_triples_count_every_pair():
    tree = "(d / date-entity :month 5 :day 5)"
    assert counts(tree, tree, "unlabeled") == (6, 4, 4)  # instance, TOP, and 2 x 2 "(label d 5)" pairs
    assert counts(tree, tree, "smatch") == (4, 4, 4)


def test_senses_are_rewritten_after_a_slash():
    graph = evaluation_graph("(h / have-org-role-91 :ARG1 (g / go-02x))", no_sense=True)
    assert graph.concepts == {"h": "have-org-role-01", "g": "go-01x"}


# ------------------------------------------------------------------------------------------------ options
def test_modes_and_inputs():
    pred = ["(g / go-02 :ARG0 (b / boy :mod (t / tall)))"]
    gold = ["(b / boy :ARG0-of (g / go-01) :mod (t / tall))"]
    default = score(pred, gold, fine_grained=True)
    assert default == score(pred, gold, fine_grained="amr-evaluation")
    assert default == score([penman.parse(pred[0])], [penman.decode(gold[0])], fine_grained=True)
    assert default["f1"] == score(pred, gold)["f1"]
    assert set(default) == set(score(pred, gold, fine_grained="normalized"))
    triples = [smatch_triples(pred[0])]
    with pytest.raises(TypeError, match="fine_grained='normalized'"):
        score(triples, [smatch_triples(gold[0])], fine_grained=True)
    assert score(triples, [smatch_triples(gold[0])], fine_grained="normalized")["unlabeled"]["f1"] > 0
    with pytest.raises(ValueError, match="fine_grained"):
        score(pred, gold, fine_grained="amr")
    assert "unlabeled" not in score(pred, gold, fine_grained=False)


def test_command_modes(capsys):
    gold, pred = str(FINE_GOLD), str(FINE_PRED)
    argv = ("score", "amr", "--gold", gold, "--pred", pred)
    default, _ = run_json(capsys, *argv, "--fine-grained")
    assert default == score_files(predictions=pred, references=gold, fine_grained=True).scores
    named, _ = run_json(capsys, *argv, "--fine-grained", "--fine-grained-mode", "amr-evaluation")
    assert named == default
    normalized, _ = run_json(capsys, *argv, "--fine-grained-mode", "normalized")
    assert normalized == score_files(predictions=pred, references=gold, fine_grained="normalized").scores
    assert set(normalized) == set(default) and normalized != default
