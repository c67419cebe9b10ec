"""Constituency parsing: every EVALB figure equal to EVALB's own output, the reader, errors, fuzzing, the CLI."""

from __future__ import annotations

import json
import random
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from helpers import run

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import constituency as cst
from metametric_jax.tasks.readers.ptb import Tree, parse_params, parse_trees, read_treebank, read_trees, scan_trees

DATA = Path(__file__).resolve().parents[1] / "data" / "constituency"
GOLD, PRED = DATA / "gold.mrg", DATA / "pred.mrg"
SAMPLE = resources.files("metametric_jax") / "data" / "parsing"

SUMMARY_KEYS = {
    "Number of sentence": "sentences",
    "Number of Error sentence": "error_sentences",
    "Number of Skip  sentence": "skipped_sentences",
    "Number of Valid sentence": "valid_sentences",
    "Bracketing Recall": "recall",
    "Bracketing Precision": "precision",
    "Bracketing FMeasure": "f1",
    "Complete match": "complete_match",
    "Average crossing": "average_crossing",
    "No crossing": "no_crossing",
    "2 or less crossing": "two_or_less_crossing",
    "Tagging accuracy": "tagging_accuracy",
}


def evalb_output(path: Path) -> tuple[list[list[str]], list[str], dict[str, dict[str, str]]]:
    """EVALB's stdout: the sentence rows, the totals row and the two summaries (as printed)."""
    rows, totals, summary, part = [], [], {}, None
    lines = path.read_text().splitlines()
    for k, line in enumerate(lines):
        fields = line.split()
        if len(fields) == 12 and fields[0].isdigit():
            rows.append(fields)
        elif line.startswith("=====") and k + 1 < len(lines) and lines[k + 1].startswith(" "):
            totals = lines[k + 1].split()
        elif line.startswith("-- All"):
            part = "all"
        elif line.startswith("-- len<="):
            part = "len40"
        elif part and " = " in line:
            name, value = line.split("=")
            summary.setdefault(part, {})[SUMMARY_KEYS[name.strip()]] = value.strip()
    return rows, totals, summary


def row_of(item: dict) -> list[str]:
    """A Report item printed as EVALB prints a sentence row."""
    status = {"valid": 0, "error": 1, "skipped": 2}[item["status"]]
    return [
        str(item["id"]),
        str(item["length"]),
        str(status),
        f"{100 * item['recall']:.2f}",
        f"{100 * item['precision']:.2f}",
        str(item["matched_brackets"]),
        str(item["gold_brackets"]),
        str(item["test_brackets"]),
        str(item["crossing_brackets"]),
        str(item["words"]),
        str(item["correct_tags"]),
        f"{100 * item['tagging_accuracy']:.2f}",
    ]


def printed(key: str, value: float) -> str:
    if key in ("sentences", "error_sentences", "skipped_sentences", "valid_sentences"):
        return str(value)
    return f"{value:.2f}" if key == "average_crossing" else f"{100 * value:.2f}"


CASES = [
    ("COLLINS.prm", GOLD, PRED, DATA / "COLLINS.prm", DATA / "evalb_collins.txt"),
    ("custom.prm", GOLD, PRED, DATA / "custom.prm", DATA / "evalb_custom.txt"),
    ("labeled.prm", GOLD, PRED, DATA / "labeled.prm", DATA / "evalb_labeled.txt"),
    ("nk.prm", GOLD, PRED, DATA / "nk.prm", DATA / "evalb_nk.txt"),
    (
        "evalb-sample",
        DATA / "evalb_sample" / "sample.gld",
        DATA / "evalb_sample" / "sample.tst",
        DATA / "evalb_sample" / "sample.prm",
        DATA / "evalb_sample" / "evalb_sample.txt",
    ),
]


@pytest.mark.parametrize(("name", "gold", "pred", "prm", "out"), CASES, ids=[c[0] for c in CASES])
def test_every_figure_equals_evalb(name, gold, pred, prm, out) -> None:
    rows, totals, summary = evalb_output(out)
    report = cst.score_files(predictions=pred, references=gold, params=prm)
    assert len(report.items) == len(rows)
    for item, row in zip(report.items, rows):
        assert row_of(item) == row, f"sentence {row[0]}"
    for part in ("all", "len40"):
        assert len(summary[part]) == 12
        for key, value in summary[part].items():
            assert printed(key, report.scores[part][key]) == value, (part, key)
    s = report.scores["all"]
    counts = [s["matched_brackets"], s["gold_brackets"], s["test_brackets"], s["crossing_brackets"]]
    counts += [s["words"], s["correct_tags"]]
    assert [int(x) for x in totals[2:8]] == counts
    assert report.scores["f1"] == s["f1"]


@pytest.mark.parametrize(("name", "gold", "pred", "prm", "out"), CASES, ids=[c[0] for c in CASES])
def test_error_sentences_are_those_evalb_reports(name, gold, pred, prm, out) -> None:
    errors = Path(str(out).replace(".txt", ".stderr")).read_text().splitlines()
    expected = [int(line.split(":")[0]) for line in errors]
    report = cst.score_files(predictions=pred, references=gold, params=prm)
    assert [item["id"] for item in report.items if item["status"] == "error"] == expected
    warned = [int(m.group(1)) for w in report.warnings if (m := re.search(r"sentence (\d+) ", w))]
    skipped = [item["id"] for item in report.items if item["status"] == "skipped"]
    assert warned == (expected if len(skipped) > 1 else sorted(expected + skipped))  # errors: a line each
    assert _skipped_warned(report.warnings) == (skipped if len(skipped) > 1 else [])  # skipped: one line
    for line in errors:  # EVALB's reason, in our words
        number, reason = line.split(" : ")
        ours = next(w for w in report.warnings if f"sentence {number} " in w)
        if reason.startswith("Length unmatch"):
            a, b = re.findall(r"\d+", reason)
            assert f"{a} words in the reference, {b} in the prediction" in ours
        else:
            a, b = re.search(r"\((.*)\|(.*)\)", reason).groups()
            assert f"{a!r} in the reference, {b!r} in the prediction" in ours


def test_collins_is_the_default_and_params_objects_equal_files() -> None:
    by_file = cst.score_files(predictions=PRED, references=GOLD, params=DATA / "COLLINS.prm").scores
    assert cst.score_files(predictions=PRED, references=GOLD).scores == by_file
    assert cst.read_params(DATA / "COLLINS.prm") == cst.COLLINS
    custom = cst.read_params(DATA / "custom.prm")
    assert not custom.labeled and custom.cutoff_len == 20 and ("NP", "NX") in custom.equivalent_labels
    as_options = cst.score_files(
        predictions=PRED,
        references=GOLD,
        labeled=False,
        cutoff_len=20,
        delete_labels=custom.delete_labels,
        delete_labels_for_length=custom.delete_labels_for_length,
        equivalent_labels=custom.equivalent_labels,
        equivalent_words=custom.equivalent_words,
    ).scores
    assert as_options == cst.score_files(predictions=PRED, references=GOLD, params=DATA / "custom.prm").scores


def test_root_bracket_counts_unless_deleted() -> None:
    gold = "(ROOT (S (NP (NN a)) (VP (VB b))))"
    pred = "(ROOT (S (NP (NN a)) (VP (NN b))))"
    assert cst.score([pred], [gold])["all"]["gold_brackets"] == 4  # ROOT, S, NP, VP
    assert cst.score([pred.replace("ROOT", "")], [gold.replace("ROOT", "")])["all"]["gold_brackets"] == 4
    assert cst.score([pred.replace("ROOT", "TOP")], [gold.replace("ROOT", "TOP")])["all"]["gold_brackets"] == 3
    # a root labelled ROOT on one side and TOP on the other: the ROOT bracket is unmatched
    s = cst.score([pred.replace("ROOT", "TOP")], [gold])["all"]
    assert (s["matched_brackets"], s["gold_brackets"], s["test_brackets"]) == (3, 4, 3)
    assert cst.score([pred], [gold], delete_labels=("TOP", "ROOT"))["all"]["gold_brackets"] == 3


def test_conventions_hand_worked() -> None:
    gold = (
        "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down)) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
    )
    pred = (
        "(TOP (S (NP=2 (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down)) (PP (IN on) (NP (DT the)) (NN mat))) (. .)))"
    )
    s = cst.score([pred], [gold])["all"]
    # brackets (. removed): S(0,7) NP(0,2) VP(2,7) ADVP=PRT(3,4) PP(4,7) NP(5,7) | pred NP(5,6) instead of NP(5,7)
    assert (s["matched_brackets"], s["gold_brackets"], s["test_brackets"]) == (5, 6, 6)
    assert (s["words"], s["correct_tags"]) == (7, 6)  # RB vs RP; "." not scored
    trace = "( (S (NP-SBJ (-NONE- *)) (VP (VB Go) (NP (NN home))) (. !)))"
    s = cst.score([trace], [trace])["all"]
    # the empty subject and "!" (tagged ".") are gone: 2 words; brackets: the unlabelled root, S, VP, NP
    assert (s["gold_brackets"], s["words"]) == (4, 2)
    # a "." mis-tagged NN makes the prediction one word longer: an error sentence, left out
    r = cst.score(["(S (NP (PRP it)) (VP (VBZ rains) (NN .)))"], ["(S (NP (PRP it)) (VP (VBZ rains)) (. .))"])
    assert r["all"]["error_sentences"] == 1 and r["all"]["valid_sentences"] == 0 and r["f1"] == 0.0


def test_bundled_sample_hand_worked() -> None:
    s = cst.score_files(predictions=SAMPLE / "pred.mrg", references=SAMPLE / "gold.mrg").scores["all"]
    # tree 1 (TOP deleted): S NP VP ADVP=PRT PP NP; the prediction's NP covers "the" only: 5 of 6; tags 6 of 7
    # tree 2: the unlabelled root and S, VP, ADVP(home) against ROOT, S, VP, NP(home): 2 of 4; tags 1 of 2
    assert (s["matched_brackets"], s["gold_brackets"], s["test_brackets"]) == (7, 10, 10)
    assert (s["correct_tags"], s["words"], s["complete_match"]) == (7, 9, 0.0)
    trees = read_trees(SAMPLE / "gold.mrg")
    assert [t.label for t in trees] == ["TOP", ""]
    out = cst.ConstituencyMetric().from_model_output(read_trees(SAMPLE / "pred.mrg"), trees).compute()
    assert float(out["brackets"]["f1"]) == pytest.approx(0.7, abs=1e-6)
    assert float(out["brackets"]["macro_recall"]) == pytest.approx((5 / 6 + 2 / 4) / 2, abs=1e-6)


def test_duplicate_brackets_are_a_multiset() -> None:
    gold = "(S (NP (NP (NN x))) (VP (VBZ y)))"  # NP(0, 1) twice
    pred = "(S (NP (NN x)) (VP (VBZ y)))"
    s = cst.score([pred], [gold])["all"]
    assert (s["precision"], s["recall"]) == (1.0, 0.75)
    s = cst.score([gold], [pred])["all"]
    assert (s["precision"], s["recall"]) == (0.75, 1.0)


def test_crossing_brackets_hand_worked() -> None:
    gold = "(S (A (X a) (X b)) (B (X c) (X d)))"
    pred = "(S (X a) (C (X b) (X c)) (X d))"  # C(1,3) crosses A(0,2) and B(2,4): one crossing bracket
    s = cst.score([pred], [gold])["all"]
    assert (s["crossing_brackets"], s["no_crossing"], s["two_or_less_crossing"]) == (1, 0.0, 1.0)
    pred = "(S (P (X a) (X b) (X c)) (X d))"  # P(0,3) crosses B(2,4)
    assert cst.score([pred], [gold])["all"]["crossing_brackets"] == 1


def test_headline_micro_over_sentences_and_len40() -> None:
    pairs = [
        ("(S (NP (NN a)) (VP (VB b)))", "(S (NP (NN a)) (VP (VB b)))"),  # 3 / 3 / 3
        ("(S (NN a) (VB b) (NN c))", "(S (NP (NN a)) (VP (VB b) (NP (NN c))))"),  # 1 / 1 / 4
    ]
    s = cst.score([p for p, _ in pairs], [g for _, g in pairs], cutoff_len=2)
    assert s["all"]["precision"] == 1.0 and s["all"]["recall"] == 4 / 7
    assert s["f1"] == pytest.approx(2 * (4 / 7) / (1 + 4 / 7))
    assert s["all"]["complete_match"] == 0.5
    assert s["len40"]["sentences"] == 1 and s["len40"]["f1"] == 1.0 and s["len40"]["max_length"] == 2


def test_empty_prediction_is_skipped_and_tree_objects_work() -> None:
    gold = parse_trees("(S (NP (NN a)) (VP (VB b)))\n(S (NN c))")
    s = cst.score([gold[0], ""], gold)
    assert s["all"]["skipped_sentences"] == 1 and s["all"]["valid_sentences"] == 1 and s["f1"] == 1.0
    with pytest.raises(ValueError, match="same length"):
        cst.score([gold[0]], gold)
    with pytest.raises(TypeError, match="unknown option"):
        cst.score(gold, gold, cutoff=3)
    with pytest.raises(TypeError, match="takes a sequence"):
        cst.score(gold, gold, delete_labels="TOP")
    with pytest.raises(TypeError):
        cst.score_files(PRED, GOLD)  # keyword-only


def test_predictions_come_first() -> None:
    s = cst.score(["(S (NP (NN x)) (VP (VBZ y)))"], ["(S (NP (NP (NN x))) (VP (VBZ y)))"])["all"]
    assert (s["test_brackets"], s["gold_brackets"]) == (3, 4)
    r = cst.score_files(predictions=PRED, references=GOLD).scores["all"]
    assert r["gold_brackets"] == 4684 and r["test_brackets"] == 4768  # evalb_collins.txt's totals row


def test_suite_accumulates_evalb_figures() -> None:
    from metametric_jax.testing import check_accumulator_laws

    gold, pred = GOLD.read_text().splitlines(), PRED.read_text().splitlines()
    metric = cst.ConstituencyMetric()
    assert cst.ConstituencyMetric() is metric
    state = metric.empty()
    for lo in range(0, len(gold), 50):
        state = state.merge(metric.from_model_output(pred[lo : lo + 50], gold[lo : lo + 50]))
    out = state.compute()
    s = cst.score(pred, gold)
    assert float(out["brackets"]["recall"]) == pytest.approx(s["all"]["recall"], abs=1e-6)
    assert float(out["brackets_len40"]["f1"]) == pytest.approx(s["len40"]["f1"], abs=1e-6)
    assert float(out["tagging"]["precision"]) == pytest.approx(s["all"]["tagging_accuracy"], abs=1e-6)
    assert float(out["crossing"]["precision"]) == pytest.approx(s["all"]["average_crossing"], abs=1e-6)
    assert float(out["complete_match_len40"]["precision"]) == pytest.approx(s["len40"]["complete_match"], abs=1e-6)
    assert float(out["valid"]["precision"]) == pytest.approx(204 / 225, abs=1e-6)
    check_accumulator_laws(metric, pred[:12], gold[:12], batch_size=5)
    custom = cst.read_params(DATA / "custom.prm")
    out = cst.ConstituencyMetric(custom).from_model_output(pred, gold).compute()
    s = cst.score(pred, gold, params=custom)
    assert float(out["brackets"]["f1"]) == pytest.approx(s["f1"], abs=1e-6)
    assert float(out["brackets_len40"]["recall"]) == pytest.approx(s["len40"]["recall"], abs=1e-6)


# ------------------------------------------------------------------------------------------------------ reader
def test_bracket_reader() -> None:
    trees = parse_trees("(S (NP (DT a) (NN b)) (VP (VBZ c)))\n( (X (Y z)))")
    assert len(trees) == 2
    np_ = Tree("NP", (Tree("DT", ("a",)), Tree("NN", ("b",))))
    assert trees[0] == Tree("S", (np_, Tree("VP", (Tree("VBZ", ("c",)),))))
    assert trees[1].label == "" and trees[1].words() == ["z"]
    assert str(parse_trees(str(trees[0]))[0]) == str(trees[0])
    assert [str(t) for t in read_trees(GOLD)] == GOLD.read_text().splitlines()


@pytest.mark.parametrize("depth", [3, 125, 126, 127, 300, 32001, 70000])
def test_deep_trees_match_each_bracket(depth: int) -> None:
    # (X (T w0) (X (T w1) ... (X (T wk)) ...)): the node opened k-th covers the words k to the last; the brackets
    # are paired by their level, sorted in a narrower integer type where the tree is shallow enough (levels that
    # wrapped around in too narrow a type would pair brackets of different levels)
    text = "".join(f"(X (T w{k}) " for k in range(depth - 1)) + f"(X (T w{depth - 1}))" + ")" * (depth - 1)
    bank = scan_trees(text.encode())
    assert bank.sentences == 1 and bank.leaf_offsets.tolist() == [0, depth]
    assert bank.first.tolist() == list(range(depth)) and bank.last.tolist() == [depth] * depth
    side = f"(S (X (T a) (T b)) {text})"
    twin = f"(S (X (T a) (T b)) {text.replace('(X', '(Y', 1)})"
    scores = cst.score([twin], [side])
    assert scores["all"]["gold_brackets"] == depth + 2 and scores["all"]["matched_brackets"] == depth + 1


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("(S (NP (NN x))\n(VP (VB y))", 1, "never closed"),
        ("(S (NN x))\n)", 2, "unbalanced ')'"),
        ("word (S (NN x))", 1, "outside any tree"),
        ("(S (NN x)) word", 1, "outside any tree"),
        ("(S (NP the cat))", 1, "expected a part-of-speech node"),
        ("(S\n (NP (DT the) cat))", 2, "bare word 'cat'"),
        ("(S (NP) (NN x))", 1, "no word"),
        ("(S () (NN x))", 1, "no tag"),
        ("(S\n\n (NN a b))", 3, "more than one word"),
    ],
)
def test_malformed_trees_name_file_and_line(text, line, needle) -> None:
    with pytest.raises(InputFormatError, match=re.escape(needle)) as err:
        scan_trees(text.encode(), "t.mrg")
    assert err.value.path == "t.mrg" and err.value.line == line
    assert "\n" not in str(err.value)


def test_layouts_bom_and_crlf_give_the_same_scores(tmp_path: Path) -> None:
    base = cst.score_files(predictions=PRED, references=GOLD).scores
    pretty = tmp_path / "gold_pretty.mrg"  # trees over several lines, blank lines between
    text = "\n\n".join(re.sub(r" \(([^ ()]+) \(", r"\n  (\1 (", line) for line in GOLD.read_text().splitlines())
    pretty.write_text(text + "\n")
    bank = read_treebank(pretty)
    assert bank.sentences == 225 and bank.line[1] > 2
    assert cst.score_files(predictions=PRED, references=pretty).scores == base
    crlf = tmp_path / "pred_crlf.mrg"
    crlf.write_bytes(b"\xef\xbb\xbf" + PRED.read_bytes().replace(b"\n", b"\r\n"))
    assert cst.score_files(predictions=crlf, references=GOLD).scores == base
    trailing = tmp_path / "gold_trailing.mrg"
    trailing.write_bytes(GOLD.read_bytes() + b"\n\n")
    assert cst.score_files(predictions=PRED, references=trailing).scores == base


def test_different_numbers_of_sentences_is_an_error(tmp_path: Path) -> None:
    short = tmp_path / "short.mrg"
    short.write_text("\n".join(PRED.read_text().splitlines()[:-3]) + "\n")
    with pytest.raises(InputFormatError, match="225 sentences but .*short.mrg has 222") as err:
        cst.score_files(predictions=short, references=GOLD)
    assert err.value.line == 223


def test_params_reader() -> None:
    assert parse_params("DELETE_LABEL TOP\n# x\nEQ_LABEL ADVP PRT\n") == {
        "DELETE_LABEL": ["TOP"],
        "EQ_LABEL": ["ADVP PRT"],
    }
    with pytest.raises(InputFormatError, match="unknown keyword 'DELETE_LABELS'") as err:
        cst.read_params("x.prm", "DEBUG 0\nDELETE_LABELS TOP\n")
    assert err.value.line == 2
    assert cst.read_params("x.prm", "QUOTE_LABEL ``\nQUOTE_LABEL POS\n").quote_labels == ("``", "POS")
    with pytest.raises(InputFormatError, match="CUTOFF_LEN must be an integer"):
        cst.read_params("x.prm", "CUTOFF_LEN forty\n")
    with pytest.raises(InputFormatError, match="equivalence classes"):
        cst.read_params("x.prm", "EQ_LABEL A B\nEQ_LABEL B C\n")
    with pytest.raises(InputFormatError, match="cannot read"):
        cst.read_params("/nonexistent/x.prm")


def _corruptions(data: bytes, rng: random.Random) -> list[tuple[str, bytes, int]]:
    """Corrupted copies of a file, each with the 1-based line of the change."""
    lines = data.split(b"\n")
    out = []
    for _ in range(4):
        k = rng.randrange(len(data))
        out.append(("truncated", data[:k], data[:k].count(b"\n") + 1))
    for _ in range(4):
        k = rng.randrange(len(lines) - 1)
        out.append(("dropped", b"\n".join(lines[:k] + lines[k + 1 :]), k + 1))
        out.append(("duplicated", b"\n".join(lines[: k + 1] + lines[k:]), k + 1))
    for _ in range(16):
        k = rng.randrange(len(data))
        flipped = data[:k] + bytes([data[k] ^ (1 << rng.randrange(8))]) + data[k + 1 :]
        out.append(("flipped", flipped, data[:k].count(b"\n") + 1))
    return out


@pytest.mark.parametrize("side", ["predictions", "references"])
def test_reader_fuzz_same_score_or_one_line_error(tmp_path: Path, side: str) -> None:
    rng = random.Random(7 if side == "predictions" else 8)
    clean = (PRED if side == "predictions" else GOLD).read_bytes()
    base = cst.score_files(predictions=PRED, references=GOLD)
    for n, (kind, data, line) in enumerate(_corruptions(clean, rng)):
        path = tmp_path / f"{side}{n}.mrg"
        path.write_bytes(data)
        files = {"predictions": PRED, "references": GOLD, side: path}
        try:
            report = cst.score_files(**files)
        except InputFormatError as err:
            assert str(path) in str(err) and "\n" not in str(err), (kind, str(err))
            assert re.match(r"[^:]+:\d+: ", str(err)), str(err)  # file and line
            continue
        # the files still align sentence by sentence: only the sentence on the changed line may score differently
        assert kind in ("flipped", "truncated"), f"a line {kind} in a one-tree-per-line file went unnoticed"
        changed = [a["id"] for a, b in zip(report.items, base.items) if a != b]
        assert set(changed) <= {line}, (kind, line, changed)
        if kind == "truncated":
            assert report.scores == base.scores


def _no_line(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "line"}


def _skipped_warned(warnings: list[str]) -> list[int]:
    """The sentences of the one warning line that lists the skipped sentences (empty parses), if there is one."""
    grouped = [w for w in warnings if re.search(r": \d+ sentences: the prediction has no words", w)]
    assert len(grouped) <= 1
    return [int(n) for n in re.findall(r"(?:^|, )(\d+)", grouped[0].split("sentences ")[-1])] if grouped else []


def test_skipped_sentences_share_one_warning_line_and_errors_have_one_each(tmp_path: Path) -> None:
    trees = ["(S (NP (DT a) (NN b)) (VP (VBZ c)))", "(S (NP (NNP d)) (VP (VBD e)))", "(S (NN f) (NN g))"] * 3
    gold, pred = list(trees), list(trees)
    pred[1] = pred[4] = pred[7] = ""  # empty parses: skipped
    pred[2] = pred[2].replace("(NN f)", "(NN x)")  # a word differs: an error
    g, p = tmp_path / "gold.mrg", tmp_path / "pred.mrg"
    g.write_text("\n".join(gold) + "\n")
    p.write_text("\n".join(pred) + "\n")
    report = cst.score_files(predictions=p, references=g)
    assert [i["id"] for i in report.items if i["status"] == "skipped"] == [2, 5, 8]
    assert report.warnings == [
        f"{p}: sentence 3 (reference line 3): words differ: 'f' in the reference, 'x' in the prediction; left out, "
        "as evalb does",
        f"{p}: 3 sentences: the prediction has no words (an empty parse): skipped; left out, as evalb does: "
        "sentences 2, 5, 8",
    ]
    assert _skipped_warned(report.warnings) == [2, 5, 8]
    # trees over several lines: each skipped sentence with its reference line; a single one keeps a line of its own
    g.write_text("\n\n".join(t.replace(" (VP", "\n  (VP") for t in gold) + "\n")
    p.write_text("\n\n".join(t.replace(" (VP", "\n  (VP").replace("(NN f) (NN g)", "(-NONE- *)") for t in trees) + "\n")
    report = cst.score_files(predictions=p, references=g)
    assert report.warnings == [
        f"{p}: 3 sentences: the prediction has no words (an empty parse): skipped; left out, as evalb does: "
        "sentences 3 (line 7), 6 (line 15), 9 (line 23)"
    ]
    p.write_text("\n".join(trees[:2] + [""] + trees[3:]) + "\n")
    g.write_text("\n".join(gold) + "\n")
    assert cst.score_files(predictions=p, references=g).warnings == [
        f"{p}: sentence 3 (reference line 3): the prediction has no words (an empty parse): skipped; left out, as "
        "evalb does"
    ]


def test_fuzz_multiline_file_drops_and_duplicates_lines(tmp_path: Path) -> None:
    text = "\n\n".join(re.sub(r" \(([^ ()]+) \(", r"\n  (\1 (", line) for line in GOLD.read_text().splitlines())
    lines = (text + "\n").split("\n")
    base = cst.score_files(predictions=PRED, references=GOLD)
    rng = random.Random(3)
    for _ in range(20):
        k = rng.randrange(len(lines) - 1)
        for variant in (lines[:k] + lines[k + 1 :], lines[: k + 1] + lines[k:]):
            path = tmp_path / "g.mrg"
            path.write_text("\n".join(variant))
            try:
                report = cst.score_files(predictions=PRED, references=path)
            except InputFormatError as err:
                assert "\n" not in str(err) and str(path) in str(err)
                continue
            if lines[k].strip():  # a tree lost or gained words: its sentence is an error, named in a warning
                bad = [i["id"] for i, b in zip(report.items, base.items) if _no_line(i) != _no_line(b)]
                assert bad and all(report.items[i - 1]["status"] == "error" for i in bad)
                assert all(any(f"sentence {i} " in w for w in report.warnings) for i in bad)
            else:
                assert report.scores == base.scores


# --------------------------------------------------------------------------------------------------------- CLI
def test_cli_json_equals_score_files(capsys) -> None:
    code, out, err = run(capsys, "score", "constituency", "--gold", str(GOLD), "--pred", str(PRED), "--format", "json")
    assert code == 0
    got = json.loads(out)
    assert set(got) == {"all", "len40"}
    report = cst.score_files(predictions=PRED, references=GOLD)
    assert got == {"all": report.scores["all"], "len40": report.scores["len40"]}
    for key in ("recall", "precision", "f1", "complete_match", "average_crossing", "no_crossing"):
        assert key in got["all"] and key in got["len40"]
    for key in ("two_or_less_crossing", "tagging_accuracy", "sentences", "error_sentences", "skipped_sentences"):
        assert key in got["all"]
    rows, _, summary = evalb_output(DATA / "evalb_collins.txt")
    assert str(got["all"]["valid_sentences"]) == summary["all"]["valid_sentences"] == "204"
    errors = (DATA / "evalb_collins.stderr").read_text().splitlines()
    skipped = [row[0] for row in rows if row[2] == "2"]
    assert err.count("warning:") == len(errors) + 1 + 1 == 17  # the skipped sentences: one line
    assert "15 error sentences: evalb stops after MAX_ERROR = 10" in err  # EVALB without -e would have stopped
    assert all(f"sentence {line.split(' : ')[0]} " in err for line in errors)
    assert _skipped_warned(err.splitlines()) == [int(s) for s in skipped]


def test_cli_params_and_table(capsys) -> None:
    code, out, _ = run(
        capsys, "score", "constituency", "--gold", str(GOLD), "--pred", str(PRED), "--params", str(DATA / "custom.prm")
    )
    assert code == 0
    _, _, summary = evalb_output(DATA / "evalb_custom.txt")
    row = next(line for line in out.splitlines() if "Bracketing FMeasure" in line)
    assert re.findall(r"\d+\.\d\d", row) == [summary["all"]["f1"], summary["len40"]["f1"]]
    assert "len<=20" in out


def test_cli_bundled_sample(capsys) -> None:
    code, out, err = run(capsys, "score", "constituency", "--format", "json")
    assert code == 0 and "bundled constituency sample" in err
    expected = cst.score_files(predictions=SAMPLE / "pred.mrg", references=SAMPLE / "gold.mrg").scores
    assert json.loads(out)["all"] == expected["all"]


def test_cli_bad_input_is_one_line(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.mrg"
    bad.write_text("(S (NN a))\n(S (NP the cat))\n")
    code, out, err = run(capsys, "score", "constituency", "--gold", str(bad), "--pred", str(bad))
    assert code == 1 and out == ""
    assert err.strip().count("\n") == 0 and f"{bad}:2:" in err and "Traceback" not in err
    code, _, err = run(
        capsys, "score", "constituency", "--gold", str(GOLD), "--pred", str(PRED), "--params", str(tmp_path / "x.prm")
    )
    assert code == 1 and "cannot read the parameter file" in err
    code, _, err = run(capsys, "score", "constituency", "--gold", str(GOLD))
    assert code == 2


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("DELETE_LABEL TOP\nCUTOFF_LEN abc\n", 2, "CUTOFF_LEN must be an integer; found 'abc'"),
        ("# x\nLABELED yes\n", 2, "LABELED must be an integer; found 'yes'"),
        ("MAX_ERROR 1e3\n", 1, "MAX_ERROR must be an integer; found '1e3'"),
        ("CUTOFF_LEN 40\n\nCUTOFF_LEN x\n", 3, "CUTOFF_LEN must be an integer; found 'x'"),  # the last one counts
        ("EQ_LABEL ADVP PRT\nEQ_LABEL A\n", 2, "EQ_LABEL takes two values; found 'A'"),
        ("EQ_WORD a b c\n", 1, "EQ_WORD takes two values; found 'a b c'"),
        ("DEBUG 0\nDELETE_LABELS TOP\n", 2, "unknown keyword 'DELETE_LABELS'; expected one of"),
        ("DELETE_LABEL\tTOP\nCUTOFF_LEN \n", 2, "CUTOFF_LEN without a value"),
        (
            "EQ_LABEL A B\n# c\nEQ_LABEL C D\nEQ_LABEL B C\nEQ_LABEL X Y\n",
            4,  # the pair that joins {A, B} and {C, D} without pairing A and C
            "EQ_LABEL pairs must form equivalence classes: A and C are each paired with a common label but not with "
            "each other",
        ),
    ],
)
def test_params_errors_name_the_file_and_line_once(capsys, tmp_path: Path, text: str, line: int, message: str) -> None:
    prm = tmp_path / "bad.prm"
    prm.write_text(text)
    with pytest.raises(InputFormatError) as err:
        cst.read_params(prm)
    assert (err.value.path, err.value.line) == (str(prm), line)
    assert str(err.value).startswith(f"{prm}:{line}: {message}") and str(err.value).count(str(prm)) == 1
    code, out, err_text = run(
        capsys, "score", "constituency", "--gold", str(GOLD), "--pred", str(PRED), "--params", str(prm)
    )
    assert code == 1 and out == ""
    assert err_text.startswith(f"metametric-jax: error: {prm}:{line}: {message}")
    assert err_text.count("\n") == 1 and err_text.count(str(prm)) == 1


def test_counts_are_numpy_free_python_values() -> None:
    s = cst.score_files(predictions=PRED, references=GOLD)
    for part in ("all", "len40"):
        assert all(type(v) in (int, float) for v in s.scores[part].values())
    assert all(type(v) in (int, float, str) for item in s.items for v in item.values())
    assert isinstance(np.float64(s.scores["f1"]), float)


def test_summary_files_equals_score_files_without_items():
    from metametric_jax.tasks.constituency import score_files, summary_files

    for params in (None, DATA / "custom.prm"):
        report = score_files(predictions=DATA / "pred.mrg", references=DATA / "gold.mrg", params=params)
        summary, warnings = summary_files(predictions=DATA / "pred.mrg", references=DATA / "gold.mrg", params=params)
        assert summary == report.scores and warnings == list(report.warnings) and warnings


def test_options_that_break_equivalence_classes_are_refused() -> None:
    with pytest.raises(ValueError, match="equivalence classes"):
        cst.score_files(predictions=PRED, references=GOLD, equivalent_labels=[("A", "B"), ("B", "C")])
    bad = cst.COLLINS._replace(equivalent_labels=(("A", "B"), ("B", "C")))
    with pytest.raises(ValueError, match="equivalence classes"):
        cst.score_files(predictions=PRED, references=GOLD, params=bad)
    assert cst.EvalbParams(cutoff_len=5) == cst.COLLINS._replace(cutoff_len=5) != cst.COLLINS
