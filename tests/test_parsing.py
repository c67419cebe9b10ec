"""UAS / LAS from CoNLL-U and PARSEVAL labeled brackets: hand-worked examples, an independent UAS/LAS count, errors."""

from __future__ import annotations

import random
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.parsing import (
    ParsevalMetric,
    Tree,
    attachment_scores,
    brackets,
    dependency_metric,
    parse_conllu,
    parse_trees,
    parseval_scores,
    read_conllu,
    read_trees,
)

DATA = resources.files("metametric_jax") / "data" / "parsing"


# ================================================================================================ dependencies
def test_bundled_sample_hand_worked() -> None:
    gold, pred = str(DATA / "gold.conllu"), str(DATA / "pred.conllu")
    # 9 words (the multiword token "al" and the empty node 4.1 are skipped); the prediction attaches the first "."
    # to the wrong head, labels "el" nmod instead of det and "mar" obl instead of obl:arg.
    assert attachment_scores(pred, gold) == pytest.approx({"uas": 8 / 9, "las": 6 / 9, "la": 7 / 9})
    assert attachment_scores(pred, gold, strip_subtypes=True) == pytest.approx(
        {"uas": 8 / 9, "las": 7 / 9, "la": 8 / 9}
    )
    assert attachment_scores(pred, gold, exclude_punct=True) == pytest.approx({"uas": 7 / 7, "las": 5 / 7, "la": 5 / 7})
    sentences = read_conllu(Path(gold))
    assert [len(s) for s in sentences] == [4, 5]
    assert [t.form for t in sentences[1].tokens] == ["Vamos", "a", "el", "mar", "."]
    assert sentences[1].line == 8 and sentences[0].source == gold


def _random_conllu(rng: random.Random, n_sent: int) -> tuple[str, str]:
    """A reference and a perturbed prediction, with comments, multiword tokens and empty nodes."""
    upos = ["NOUN", "VERB", "PUNCT", "DET", "ADP"]
    rels = ["nsubj", "obj", "punct", "det", "obl", "obl:tmod", "root"]
    gold_lines, pred_lines = [], []
    for s in range(n_sent):
        n = rng.randint(1, 12)
        gold_lines.append(f"# sent_id = {s}")
        pred_lines.append(f"# sent_id = {s}")
        for i in range(1, n + 1):
            if rng.random() < 0.1 and i < n:
                line = f"{i}-{i + 1}\tmw\t_\t_\t_\t_\t_\t_\t_\t_"
                gold_lines.append(line)
                pred_lines.append(line)
            head, rel, pos = rng.randint(0, n), rng.choice(rels), rng.choice(upos)
            gold_lines.append(f"{i}\tw{i}\tw\t{pos}\t_\t_\t{head}\t{rel}\t_\t_")
            p_head = head if rng.random() < 0.7 else rng.randint(0, n)
            p_rel = rel if rng.random() < 0.7 else rng.choice(rels)
            p_pos = pos if rng.random() < 0.8 else rng.choice(upos)
            pred_lines.append(f"{i}\tw{i}\tw\t{p_pos}\t_\t_\t{p_head}\t{p_rel}\t_\t_")
            if rng.random() < 0.1:
                line = f"{i}.1\tempty\t_\t_\t_\t_\t_\t_\t{i}:dep\t_"
                gold_lines.append(line)
                pred_lines.append(line)
        gold_lines.append("")
        pred_lines.append("")
    return "\n".join(gold_lines) + "\n", "\n".join(pred_lines) + "\n"


def _independent(pred: str, gold: str, exclude_punct: bool, strip: bool) -> np.ndarray:
    """Plain-text UAS / LAS / LA counts per sentence: split lines on tabs, keep integer ids."""

    def words(text: str) -> list[list[list[str]]]:
        out, cur = [], []
        for line in text.split("\n"):
            if not line:
                if cur:
                    out.append(cur)
                cur = []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():
                    cur.append(cols)
        return out

    rows = []
    for ps, gs in zip(words(pred), words(gold)):
        u = las = la = n = 0
        for p, g in zip(ps, gs):
            if exclude_punct and g[3] == "PUNCT":
                continue
            n += 1
            pr, gr = (p[7].split(":")[0], g[7].split(":")[0]) if strip else (p[7], g[7])
            u += p[6] == g[6]
            la += pr == gr
            las += p[6] == g[6] and pr == gr
        rows.append((u, las, la, n))
    return np.array(rows, dtype=np.float64)


@pytest.mark.parametrize("exclude_punct,strip", [(False, False), (True, False), (False, True), (True, True)])
def test_attachment_scores_equal_independent_count(exclude_punct: bool, strip: bool) -> None:
    gold, pred = _random_conllu(random.Random(int(exclude_punct) * 2 + int(strip)), 60)
    counts = _independent(pred, gold, exclude_punct, strip)
    total = counts[:, 3].sum()
    suite = dependency_metric(exclude_punct=exclude_punct, strip_subtypes=strip)
    out = suite.from_model_output(parse_conllu(pred), parse_conllu(gold)).compute()
    for j, key in enumerate(("uas", "las", "la")):
        assert float(out["scores"][key]) == pytest.approx(counts[:, j].sum() / total, abs=1e-6)
        assert float(out[key]["recall"]) == pytest.approx(counts[:, j].sum() / total, abs=1e-6)
        with np.errstate(invalid="ignore"):
            per = np.where(counts[:, 3] > 0, counts[:, j] / np.maximum(counts[:, 3], 1), 1.0)
        assert float(out[key]["macro_recall"]) == pytest.approx(per.mean(), abs=1e-6)
    assert attachment_scores(pred, gold, exclude_punct, strip) == pytest.approx(
        {k: counts[:, j].sum() / total for j, k in enumerate(("uas", "las", "la"))}
    )


def test_batches_merge() -> None:
    gold, pred = _random_conllu(random.Random(9), 30)
    ps, gs = parse_conllu(pred), parse_conllu(gold)
    suite = dependency_metric()
    state = suite.empty()
    for i in range(0, 30, 7):
        state = state.merge(suite.from_model_output(ps[i : i + 7], gs[i : i + 7]))
    whole = suite.from_model_output(ps, gs).compute()
    for key in ("uas", "las"):
        assert float(state.compute()[key]["recall"]) == pytest.approx(float(whole[key]["recall"]), abs=1e-6)


def test_different_token_counts_name_sentence_and_line(tmp_path: Path) -> None:
    gold = (DATA / "gold.conllu").read_text()
    lines = gold.split("\n")
    pred = "\n".join(line for line in lines if not line.startswith("5\t."))  # drop the last word of sentence 2
    p = tmp_path / "pred.conllu"
    p.write_text(pred)
    with pytest.raises(InputFormatError) as err:
        attachment_scores(p, str(DATA / "gold.conllu"))
    assert err.value.path == str(p) and err.value.line == 8
    assert "sentence 2" in str(err.value) and "4 predicted words but 5 reference words" in str(err.value)


def test_malformed_conllu_is_reported_with_its_line() -> None:
    bad_fields = "# c\n1\tThe\tthe\tDET\t_\t_\t2\tdet\n2\tcat\tcat\tNOUN\t_\t_\t0\troot\t_\t_\n"
    with pytest.raises(InputFormatError, match="10 tab-separated fields") as err:
        parse_conllu(bad_fields, "x.conllu")
    assert err.value.line == 2 and err.value.path == "x.conllu"
    bad_head = "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\t_\t_\tzero\troot\t_\t_\n"
    with pytest.raises(InputFormatError) as err:
        parse_conllu(bad_head)
    assert err.value.line == 2
    bad_id = "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n3\tcat\tcat\tNOUN\t_\t_\t0\troot\t_\t_\n"
    with pytest.raises(InputFormatError, match="expected word id 2"):
        parse_conllu(bad_id)
    with pytest.raises(InputFormatError, match="sentences"):
        attachment_scores(bad_id.split("\n")[0] + "\n", (DATA / "gold.conllu").read_text())


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


def test_missing_conllu_points_at_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "conllu", None)
    with pytest.raises(ImportError, match=r"pip install metametric-jax\[formats\]"):
        parse_conllu("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n")


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    gold, pred = _random_conllu(random.Random(21), 9)
    check_accumulator_laws(dependency_metric(exclude_punct=True), parse_conllu(pred), parse_conllu(gold))
    trees = read_trees(str(DATA / "gold.mrg"))
    preds = read_trees(str(DATA / "pred.mrg"))
    check_accumulator_laws(ParsevalMetric, preds * 2, trees * 2, batch_size=1)
