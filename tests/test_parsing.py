"""PARSEVAL labeled brackets: hand-worked examples and errors (dependency parsing: tests/test_dependency.py)."""

from __future__ import annotations

from importlib import resources

import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.parsing import (
    ParsevalMetric,
    Tree,
    brackets,
    parse_trees,
    parseval_scores,
    read_trees,
)

DATA = resources.files("metametric_jax") / "data" / "parsing"


# ================================================================================================ constituents
def test_bracket_reader() -> None:
    trees = parse_trees("(S (NP (DT a) (NN b)) (VP (VBZ c)))\n( (X (Y z)))")
    assert len(trees) == 2
    np_ = Tree("NP", (Tree("DT", ("a",)), Tree("NN", ("b",))))
    assert trees[0] == Tree("S", (np_, Tree("VP", (Tree("VBZ", ("c",)),))))
    assert trees[1].label == "" and trees[1].words() == ["z"]
    assert str(parse_trees(str(trees[0]))[0]) == str(trees[0])
    with pytest.raises(InputFormatError, match="never closed") as err:
        parse_trees("(S (NP x)\n(VP y)", "t.mrg")
    assert err.value.line == 1 and err.value.path == "t.mrg"
    with pytest.raises(InputFormatError, match="unbalanced") as err:
        parse_trees("(S x)\n)")
    assert err.value.line == 2
    with pytest.raises(InputFormatError, match="outside"):
        parse_trees("word (S x)")


def test_evalb_conventions_hand_worked() -> None:
    gold = parse_trees(
        "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down)) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
    )[0]
    # TOP and preterminals are not brackets, NP-SBJ -> NP, PRT == ADVP, the final "." is removed before spans
    assert brackets(gold) == {
        ("S", 0, 7): 1,
        ("NP", 0, 2): 1,
        ("VP", 2, 7): 1,
        ("ADVP", 3, 4): 1,
        ("PP", 4, 7): 1,
        ("NP", 5, 7): 1,
    }
    # traces and constituents over traces only are removed; "NP=2" loses its index
    trace = parse_trees("( (S (NP-SBJ (-NONE- *)) (VP (VB Go) (NP=2 (NN home))) (. !)))")[0]
    assert brackets(trace) == {("S", 0, 2): 1, ("VP", 0, 2): 1, ("NP", 1, 2): 1}
    # punctuation is decided by the reference tag: a "." mis-tagged NN is still removed from the prediction
    pred = parse_trees("(S (NP (PRP it)) (VP (VBZ rains) (NN .)))")[0]
    ref = parse_trees("(S (NP (PRP it)) (VP (VBZ rains)) (. .))")[0]
    assert brackets(pred, ref) == brackets(ref) == {("S", 0, 2): 1, ("NP", 0, 1): 1, ("VP", 1, 2): 1}
    # a root labelled anything else than TOP / ROOT / "" counts
    assert ("S", 0, 1) in brackets(parse_trees("(S (NN x))")[0])


def test_bundled_trees_hand_worked() -> None:
    pred, gold = str(DATA / "pred.mrg"), str(DATA / "gold.mrg")
    # tree 1: 5 of 6 brackets match (NP over "the mat" vs "the"); tags 6 / 7 ("down" RB vs RP, "." excluded)
    # tree 2: S, VP match, NP(home) vs ADVP(home) does not; tags 1 / 2
    scores = parseval_scores(pred, gold)
    assert scores == pytest.approx(
        {"precision": 7 / 9, "recall": 7 / 9, "f1": 7 / 9, "tagging_accuracy": 7 / 9, "exact_match": 0.0}
    )
    out = ParsevalMetric.from_model_output(read_trees(pred), read_trees(gold)).compute()
    assert float(out["brackets"]["precision"]) == pytest.approx(7 / 9, abs=1e-6)
    assert float(out["brackets"]["macro_recall"]) == pytest.approx((5 / 6 + 2 / 3) / 2, abs=1e-6)
    assert float(out["tagging"]["recall"]) == pytest.approx(7 / 9, abs=1e-6)


def test_duplicate_brackets_are_a_multiset() -> None:
    gold = "(S (NP (NP (NN x))) (VP (VBZ y)))"  # NP(0, 1) twice
    pred = "(S (NP (NN x)) (VP (VBZ y)))"
    out = ParsevalMetric.from_model_output([pred], [gold]).compute()["brackets"]
    assert float(out["precision"]) == pytest.approx(1.0)
    assert float(out["recall"]) == pytest.approx(3 / 4)
    out = ParsevalMetric.from_model_output([gold], [pred]).compute()["brackets"]
    assert float(out["precision"]) == pytest.approx(3 / 4)
    assert float(out["recall"]) == pytest.approx(1.0)


def test_micro_over_sentences_and_exact_match() -> None:
    pairs = [
        ("(S (NP (NN a)) (VP (VB b)))", "(S (NP (NN a)) (VP (VB b)))"),  # 3 / 3 / 3
        ("(S (NN a) (VB b) (NN c))", "(S (NP (NN a)) (VP (VB b) (NP (NN c))))"),  # 1 / 1 / 4
    ]
    out = ParsevalMetric.from_model_output([p for p, _ in pairs], [g for _, g in pairs]).compute()
    assert float(out["brackets"]["precision"]) == pytest.approx(4 / 4)
    assert float(out["brackets"]["recall"]) == pytest.approx(4 / 7)
    assert float(out["exact"]["recall"]) == pytest.approx(0.5)


def test_word_count_mismatch_raises() -> None:
    with pytest.raises(InputFormatError, match="sentence 1: the predicted tree has 1 words but the reference has 2"):
        parseval_scores("(S (NN a))", "(S (NN a) (NN b))")
    with pytest.raises(InputFormatError, match="1 trees but the reference has 2"):
        parseval_scores("(S (NN a))", "(S (NN a))\n(S (NN b))")


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    trees = read_trees(str(DATA / "gold.mrg"))
    preds = read_trees(str(DATA / "pred.mrg"))
    check_accumulator_laws(ParsevalMetric, preds * 2, trees * 2, batch_size=1)
