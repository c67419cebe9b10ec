"""Dependency parsing: every figure of conll18_ud_eval.py v1.2 on UD English-EWT, the accumulator, the reader, the CLI.

The figures of the official script are stored in ``tests/data/dependency/`` (see its README): each test compares
ours with them exactly (full float precision, and the underlying counts).
"""

from __future__ import annotations

import functools
import json
import random
import re
import sys
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metametric_jax.cli import main
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import dependency as dep
from metametric_jax.tasks.readers import conllu
from metametric_jax.tasks.readers.conllu import (
    SPACE_SEPARATORS,
    DepSentence,
    DepToken,
    MultiwordToken,
    parse_conllu,
    read_conllu,
    surface,
)

DATA = Path(__file__).parents[1] / "data" / "dependency"
SAMPLE = resources.files("metametric_jax") / "data" / "parsing"
EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
CASES = sorted(EXPECTED["figures"])
NAMES = {name.lower(): name for name in EXPECTED["figures"][CASES[0]]}
FIELDS = ("precision", "recall", "f1", "aligned_accuracy")
GOLD = str(DATA / "gold.conllu")


def _pred(case: str) -> str:
    return str(DATA / f"{case}.conllu")


# ============================================================================================ the official figures
@pytest.mark.parametrize("case", CASES)
def test_every_figure_equals_the_official_script(case: str) -> None:
    report = dep.score_files(predictions=_pred(case), references=GOLD)
    assert list(report.scores) == list(dep.METRICS) == list(NAMES)
    for metric, ours in report.scores.items():
        theirs = EXPECTED["figures"][case][NAMES[metric]]
        for field in FIELDS:
            assert ours[field] == theirs[field], (case, metric, field)  # exact, not approximate


@pytest.mark.parametrize("case", CASES)
def test_counts_equal_the_official_script(case: str) -> None:
    counts = dep.sentence_counts(read_conllu(_pred(case)), read_conllu(GOLD)).sum(axis=0)
    for k, metric in enumerate(dep.METRICS):
        theirs = EXPECTED["figures"][case][NAMES[metric]]
        correct, predicted, reference, aligned = (int(v) for v in counts[k])
        assert (correct, predicted, reference) == (theirs["correct"], theirs["system"], theirs["gold"]), metric
        if metric in dep.ALIGNED_METRICS:
            assert aligned == theirs["aligned"], metric


def test_alignment_cases_equal_the_official_script() -> None:
    """Random texts, tokenized, split into sentences and into multiword tokens independently on both sides."""
    cases = json.loads((DATA / "alignment_cases.json").read_text(encoding="utf-8"))
    assert len(cases) == 80
    retokenized = 0
    for case in cases:
        gold, system = parse_conllu(case["gold"]), parse_conllu(case["system"])
        counts = dep.sentence_counts(system, gold).sum(axis=0)
        for k, metric in enumerate(dep.METRICS):
            c, s, g, a = case["counts"][NAMES[metric]]
            assert [int(v) for v in counts[k, :3]] == [c, s, g], (case, metric)
            if a is not None:
                assert int(counts[k, 3]) == a, (case, metric)
        retokenized += case["counts"]["Tokens"][0] < case["counts"]["Tokens"][2]
    assert retokenized > 40  # most cases tokenize differently


@pytest.mark.parametrize("case", CASES)
def test_table_prints_the_scripts_two_decimals(case: str) -> None:
    rows = {}
    for line in EXPECTED["text"][case]["verbose"].splitlines()[2:]:
        cells = [c.strip() for c in line.split("|")]
        rows[cells[0]] = cells[1:]
    scores = dep.score_files(predictions=_pred(case), references=GOLD).scores
    from metametric_jax.commands.dependency import _table

    table = _table(scores, None).to_rich()  # the columns of the table as rich would draw it
    columns = [list(col.cells) for col in table.columns]
    for r, name in enumerate(columns[0]):
        assert [columns[c][r] for c in range(1, 5)] == rows[name], name
    default = EXPECTED["text"][case]["default"]
    assert f"LAS F1 Score: {100 * scores['las']['f1']:.2f}" in default
    assert f"MLAS Score: {100 * scores['mlas']['f1']:.2f}" in default


# ============================================================================================ tree validation
def _edited(tmp_path: Path, case: str) -> Path:
    e = EXPECTED["errors"][case]
    lines = Path(GOLD).read_text(encoding="utf-8").split("\n")
    k = e["line"] - 1
    assert lines[k].startswith(e["prefix"])
    lines[k] = lines[k].replace(e["old"], e["new"], 1)
    path = tmp_path / f"{case}.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_cycle_is_an_error_naming_the_sentence_and_can_be_scored(tmp_path: Path) -> None:
    assert "cycle" in EXPECTED["errors"]["pred-cycle"]["script_error"]
    path = _edited(tmp_path, "pred-cycle")
    with pytest.raises(InputFormatError) as err:
        dep.score_files(predictions=path, references=GOLD)
    assert err.value.path == str(path) and err.value.line == 5
    assert "sentence 1 (sent_id weblog-" in str(err.value) and "cycle through words 1 -> 4 -> 1" in str(err.value)
    assert "check_trees=False" in str(err.value) and "\n" not in str(err.value)
    scores = dep.score_files(predictions=path, references=GOLD, check_trees=False).scores
    words = sum(len(s) for s in read_conllu(GOLD))
    # only the head of word 1 changed: one attachment wrong, every tag right
    assert scores["uas"]["f1"] == scores["las"]["f1"] == (words - 1) / words
    assert scores["upos"]["f1"] == 1.0


def test_several_roots_is_an_error_and_can_be_scored(tmp_path: Path) -> None:
    assert "roots" in EXPECTED["errors"]["pred-roots"]["script_error"]
    path = _edited(tmp_path, "pred-roots")
    with pytest.raises(InputFormatError, match=r"expected exactly one root \(HEAD 0\); found 2: words 1, 3") as err:
        dep.score_files(predictions=path, references=GOLD)
    assert err.value.line == 7
    scores = dep.score_files(predictions=path, references=GOLD, check_trees=False).scores
    words = sum(len(s) for s in read_conllu(GOLD))
    assert scores["las"]["f1"] == (words - 1) / words
    # the reference is checked too
    with pytest.raises(InputFormatError, match="one root") as err:
        dep.score_files(predictions=GOLD, references=path)
    assert err.value.path == str(path)


def test_no_root_and_heads_out_of_range() -> None:
    row = "{}\tw\tw\tX\t_\t_\t{}\tdep\t_\t_"
    text = "\n".join(row.format(i, h) for i, h in ((1, 2), (2, 1))) + "\n"
    with pytest.raises(InputFormatError, match="cycle through words 1 -> 2 -> 1"):
        dep.score(parse_conllu(text), parse_conllu(text))
    with pytest.raises(InputFormatError, match="expected HEAD between 0 and 2"):
        parse_conllu("\n".join(row.format(i, h) for i, h in ((1, 0), (2, 3))) + "\n")
    words = (DepToken(1, "a", head=0), DepToken(2, "b", head=5))
    with pytest.raises(InputFormatError, match="HEAD between 0 and 2; found word 2 with HEAD 5"):
        dep.score([DepSentence(words)], [DepSentence(words)], check_trees=False)


def test_different_text_names_both_files_and_lines(tmp_path: Path) -> None:
    path = _edited(tmp_path, "pred-text")
    with pytest.raises(InputFormatError) as err:
        dep.score_files(predictions=path, references=GOLD)
    assert err.value.path == str(path) and err.value.line == 6
    assert f"({GOLD}:6)" in str(err.value) and "expected 'ifGoogleMorphedIntoG', found 'ofGoogleMorphedIntoG'" in str(
        err.value
    )


# ============================================================================================ hand-worked
def test_bundled_sample_hand_worked() -> None:
    gold, pred = str(SAMPLE / "gold.conllu"), str(SAMPLE / "pred.conllu")
    # 9 words (the multiword token "al" = a + el counts as one token, the empty node 4.1 is skipped); the prediction
    # attaches the first "." to the wrong head and labels "el" nmod instead of det, "mar" obl instead of obl:arg
    # (a subtype only: the same relation for the script).
    s = dep.score_files(predictions=pred, references=gold).scores
    assert s["tokens"]["f1"] == 1.0 and s["words"]["f1"] == 1.0
    assert s["uas"]["f1"] == pytest.approx(8 / 9) and s["las"]["f1"] == pytest.approx(7 / 9)
    # content words: gold 4 (cat, sat, Vamos, mar); predicted 5 ("el" is nmod); all 4 gold ones correct
    assert s["clas"] == pytest.approx({"precision": 4 / 5, "recall": 1.0, "f1": 8 / 9, "aligned_accuracy": 1.0})
    # MLAS: "mar" loses its functional child "el" (det in gold, nmod predicted); "sat" has a wrong punct child,
    # which is not functional, so it stays correct
    assert s["mlas"] == pytest.approx({"precision": 3 / 5, "recall": 3 / 4, "f1": 2 / 3, "aligned_accuracy": 3 / 4})
    keep = dep.score_files(predictions=pred, references=gold, strip_subtypes=False).scores
    assert keep["las"]["f1"] == pytest.approx(6 / 9)
    nopunct = dep.score_files(predictions=pred, references=gold, exclude_punct=True).scores
    assert nopunct["uas"]["f1"] == 1.0 and nopunct["las"]["f1"] == pytest.approx(6 / 7)
    assert nopunct["words"]["f1"] == 1.0 and nopunct["tokens"]["f1"] == 1.0
    sentences = read_conllu(gold)
    assert [len(s) for s in sentences] == [4, 5]
    assert [w.form for w in sentences[1].words] == ["Vamos", "a", "el", "mar", "."]
    assert sentences[1].multiword == (MultiwordToken(2, 3, "al"),)
    assert sentences[1].line == 8 and sentences[0].source == gold and sentences[1].sent_id == "2"


def test_multiword_tokens_and_retokenization_hand_worked() -> None:
    def doc(*tokens: str) -> list[DepSentence]:
        """Tokens ``form`` or ``form=word+word`` (a multiword token); a chain of heads."""
        lines, n = [], 0
        for t in tokens:
            form, _, parts = t.partition("=")
            words = parts.split("+") if parts else [form]
            if parts:
                lines.append(f"{n + 1}-{n + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_")
            for w in words:
                n += 1
                lines.append(f"{n}\t{w}\t_\tX\t_\t_\t{n - 1}\tdep\t_\t_")
        return parse_conllu("\n".join(lines) + "\n")

    def words(gold: list[DepSentence], system: list[DepSentence]) -> tuple[int, int, int]:
        c = dep.sentence_counts(system, gold).sum(axis=0)[dep.METRICS.index("words")]
        return int(c[0]), int(c[1]), int(c[2])

    assert words(doc("abc=a+b+c"), doc("a", "b", "c")) == (3, 3, 3)  # words aligned inside the multiword span
    assert words(doc("abcd=a+b+c+d"), doc("ab=a+b", "cd=c+d")) == (4, 4, 4)
    assert words(doc("abcd"), doc("a", "b", "c", "d")) == (0, 4, 1)  # spans differ: nothing aligned
    assert words(doc("a", "bc", "d"), doc("a", "b", "c", "d")) == (2, 4, 3)
    assert words(doc("abc=a+BX+c", "def=d+EX+f"), doc("ab=a+b", "cd=c+d", "ef=e+f")) == (4, 6, 6)  # case-blind LCS
    s = dep.score(doc("a", "bc=b+c"), doc("a", "bc=b+c"))
    assert s["tokens"]["f1"] == s["words"]["f1"] == s["uas"]["f1"] == 1.0


def test_independent_count_when_tokenization_is_equal() -> None:
    """UAS/LAS/UPOS/Lemmas counted by hand from the columns, with and without options, on same-tokenized files."""
    gold, pred = read_conllu(GOLD), read_conllu(_pred("pred-heads"))
    tags = read_conllu(_pred("pred-tags"))
    for exclude_punct in (False, True):
        for strip in (False, True):
            n = uas = las = upos = lemma = 0
            for gs, ps, ts in zip(gold, pred, tags):
                for g, p, t in zip(gs.words, ps.words, ts.words):
                    if exclude_punct and g.upos == "PUNCT":
                        continue
                    n += 1
                    rel = (lambda r: r.split(":")[0]) if strip else (lambda r: r)
                    uas += g.head == p.head
                    las += g.head == p.head and rel(g.deprel) == rel(p.deprel)
                    upos += g.upos == t.upos
                    lemma += g.lemma in ("_", t.lemma)
            options = {"exclude_punct": exclude_punct, "strip_subtypes": strip}
            s = dep.score(pred, gold, **options)
            assert (s["uas"]["f1"], s["las"]["f1"]) == (uas / n, las / n)
            t = dep.score(tags, gold, **options)
            assert (t["upos"]["aligned_accuracy"], t["lemmas"]["f1"]) == (upos / n, lemma / n)


# ============================================================================================ accumulator
def test_suite_equals_score_and_batches_merge() -> None:
    gold, pred = read_conllu(GOLD), read_conllu(_pred("pred-all"))
    metric = dep.DependencyMetric()
    # one example: the whole corpus, aligned at once as the script does
    state = metric.from_model_output([pred], [gold])
    assert dep.figures(state) == dep.score(pred, gold)
    out = state.compute()["scores"]
    for m in dep.METRICS:
        for f in FIELDS:
            expected = EXPECTED["figures"]["pred-all"][NAMES[m]][f]
            if expected is None:
                assert f not in out[m]
            else:
                assert float(out[m][f]) == pytest.approx(expected, abs=1e-6)
    # sentence pairs (same sentence boundaries): batches merge to the totals of the corpus
    gold, pred = read_conllu(GOLD), read_conllu(_pred("pred-tokenization"))
    whole = metric.from_model_output(pred, gold)
    merged = metric.empty()
    for lo in range(0, len(gold), 7):
        merged = merged.merge(metric.from_model_output(pred[lo : lo + 7], gold[lo : lo + 7]))
    assert dep.figures(merged) == dep.figures(whole) == dep.score(pred, gold)


def test_options_make_distinct_classes_and_unknown_options_raise() -> None:
    assert dep.DependencyMetric() is dep.DependencyMetric(check_trees=True, strip_subtypes=True)
    assert dep.DependencyMetric(exclude_punct=True) is not dep.DependencyMetric()
    gold = read_conllu(GOLD)
    with pytest.raises(TypeError, match="unknown option"):
        dep.score(gold, gold, check_tree=False)
    with pytest.raises(TypeError, match="unknown option"):
        dep.score_files(predictions=GOLD, references=GOLD, exclude_punctuation=True)
    with pytest.raises(TypeError):
        dep.score_files(GOLD, GOLD)  # type: ignore[misc]
    with pytest.raises(TypeError, match="DepSentence"):
        dep.score(["1\ta\t_"], gold)


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    gold, pred = read_conllu(GOLD)[:12], read_conllu(_pred("pred-tokenization"))[:12]
    check_accumulator_laws(dep.DependencyMetric(exclude_punct=True), pred, gold, batch_size=5)


def test_report_items_per_reference_sentence() -> None:
    report = dep.score_files(predictions=_pred("pred-sentences"), references=GOLD)
    gold = read_conllu(GOLD)
    assert [item["id"] for item in report.items] == [s.sent_id for s in gold]
    assert [item["line"] for item in report.items] == [s.line for s in gold]
    counts = dep.sentence_counts(read_conllu(_pred("pred-sentences")), gold)
    k = dep.METRICS.index("las")
    for item, row in zip(report.items, counts[:, k]):
        c, s, g = (int(v) for v in row[:3])
        assert item["las"] == (2 * c / (s + g) if s + g else 0.0)
    assert report.warnings == []


def test_empty_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.conllu"
    empty.write_text("# nothing\n", encoding="utf-8")  # comments at the end of a file are skipped, as the script does
    report = dep.score_files(predictions=empty, references=empty)
    assert report.scores["las"]["f1"] == 0.0 and "holds no sentences" in report.warnings[0]
    with pytest.raises(InputFormatError, match=f"expected the sentences of {GOLD}; found no sentence") as err:
        dep.score_files(predictions=empty, references=GOLD)
    assert err.value.path == str(empty)
    with pytest.raises(InputFormatError, match="found no sentence") as err:
        dep.score_files(predictions=GOLD, references=empty)
    assert err.value.path == str(empty)
    with pytest.raises(InputFormatError, match="<predictions> .no words.: the predicted words spell a different"):
        dep.score([], read_conllu(GOLD))


# ============================================================================================ reader
def test_malformed_conllu_is_reported_with_its_line() -> None:
    row = "{}\tw\tw\tX\t_\t_\t{}\tdep\t_\t_"
    bad = "# c\n1\tThe\tthe\tDET\t_\t_\t2\tdet\n2\tcat\tcat\tNOUN\t_\t_\t0\troot\t_\t_\n"
    with pytest.raises(InputFormatError, match="10 tab-separated fields; found 8") as err:
        parse_conllu(bad, "x.conllu")
    assert (err.value.path, err.value.line) == ("x.conllu", 2)
    with pytest.raises(InputFormatError, match="HEAD to be a word id or 0; found 'zero'") as err:
        parse_conllu(row.format(1, 0) + "\n" + row.format(2, "zero") + "\n")
    assert err.value.line == 2
    with pytest.raises(InputFormatError, match="expected word id 2; found '3'"):
        parse_conllu(row.format(1, 0) + "\n" + row.format(3, 1) + "\n")
    with pytest.raises(InputFormatError, match="not spaces"):
        parse_conllu(row.format(1, 0).replace("\t", " ") + "\n")
    with pytest.raises(InputFormatError, match="comments come before") as err:
        parse_conllu(row.format(1, 0) + "\n# c\n" + row.format(2, 1) + "\n")
    assert err.value.line == 2
    with pytest.raises(InputFormatError, match="multiword range 1-N"):
        parse_conllu("1-1\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + row.format(1, 0) + "\n")
    with pytest.raises(InputFormatError, match="word 2 of the multiword token 1-2; found the end") as err:
        parse_conllu("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + row.format(1, 0) + "\n\n")
    assert err.value.line == 3
    with pytest.raises(InputFormatError, match="non-empty FORM"):
        parse_conllu("1\t \t_\tX\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(InputFormatError, match="expected a word id"):
        parse_conllu("x\tw\tw\tX\t_\t_\t0\troot\t_\t_\n")


@pytest.mark.parametrize("name", ["gold", "pred-all", "pred-multiword"])
def test_reader_equals_the_conllu_package(name: str) -> None:
    import conllu

    path = DATA / f"{name}.conllu"
    theirs = conllu.parse(path.read_text(encoding="utf-8"))
    ours = read_conllu(path)
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs):
        words = [t for t in other if isinstance(t["id"], int)]
        ranges = [t for t in other if isinstance(t["id"], tuple) and t["id"][1] == "-"]
        fields = ("form", "lemma", "upos", "xpos", "head", "deprel")
        assert [tuple(getattr(w, f) for f in fields) for w in mine.words] == [
            tuple("_" if t[f] is None else t[f] for f in fields) for t in words
        ]
        assert [(m.first, m.last, m.form) for m in mine.multiword] == [
            (t["id"][0], t["id"][2], t["form"]) for t in ranges
        ]
        assert mine.sent_id == other.metadata.get("sent_id")


WORD = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n"


def test_comment_only_block_is_an_error_naming_its_blank_line() -> None:
    """Comments then a blank line: conll18_ud_eval.py's "There are 0 roots in a sentence at line 3"."""
    text = f"# sent_id = 1\n# text = x\n\n{WORD}\n"
    with pytest.raises(InputFormatError) as err:
        parse_conllu(text, "c.conllu")
    assert str(err.value) == (
        "c.conllu:3: expected a word line after the comment lines 1-2; found a blank line (a sentence of comments "
        "only, without words)"
    )
    with pytest.raises(InputFormatError, match="after the comment line 3; found a blank line") as err:
        parse_conllu(f"{WORD}\n# sent_id = 2\n\n{WORD}", "c.conllu")  # between sentences
    assert err.value.line == 4
    with pytest.raises(InputFormatError, match="after the comment line 3; found a blank line") as err:
        parse_conllu(f"{WORD}\r\n# c\r\n \r\n")  # a comment-only block at the end, then a (whitespace) blank line
    assert err.value.line == 4
    with pytest.raises(InputFormatError, match="after the comment line 1; found a blank line"):
        conllu._parse_general("# c\n\n" + WORD)  # the reader's general path too
    # Comments after the last sentence, with no blank line after them, are skipped (as the script skips them).
    [sentence] = parse_conllu(f"{WORD}\n# sent_id = 2\n# text = y\n")
    assert [w.form for w in sentence.words] == ["Hi"] and sentence.comments == ()
    assert parse_conllu("# only a comment\n") == []


@pytest.mark.parametrize("side", ["gold", "pred"])
def test_comment_only_block_is_refused_on_both_sides_in_every_path(
    side: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.conllu"
    good.write_text(WORD + "\n" + WORD + "\n", encoding="utf-8")
    bad = tmp_path / "bad.conllu"
    bad.write_text(f"# sent_id = 1\n# text = x\n\n{WORD}\n{WORD}\n", encoding="utf-8")
    gold, pred = (bad, good) if side == "gold" else (good, bad)
    message = (
        f"{bad}:3: expected a word line after the comment lines 1-2; found a blank line (a sentence of comments only, "
        "without words)"
    )
    with pytest.raises(InputFormatError, match=re.escape(message)):
        dep.score_files(predictions=pred, references=gold)
    with pytest.raises(InputFormatError, match=re.escape(message)):
        read_conllu(bad)
    argvs = [
        ["score", "dependency", str(gold), str(pred)],
        ["score", "dependency", "--gold", str(gold), "--pred", str(pred), "--jobs", "2"],
        ["score", "dependency", "--gold", str(gold), "--pred", str(pred), "--bootstrap", "20"],
        ["compare", "dependency", "--references", str(gold), "--system", str(pred), "--system", str(good)],
        ["analyze", "dependency", "--references", str(gold), "--system", str(pred), "--samples", "20"],
    ]
    for argv in argvs:
        assert main(argv) == 1, argv
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err == f"metametric-jax: error: {message}\n", (argv, captured.err)


def test_bom_crlf_blank_runs_and_missing_final_blank_line_are_accepted(tmp_path: Path) -> None:
    text = Path(GOLD).read_text(encoding="utf-8")
    reference = dep.score_files(predictions=_pred("pred-all"), references=GOLD).scores
    variants = {
        "bom": "\ufeff" + text,
        "crlf": text.replace("\n", "\r\n"),
        "blank-runs": text.replace("\n\n", "\n\n\n"),
        "no-final-blank": text.rstrip("\n"),
        "whitespace-blank": text.replace("\n\n", "\n \n"),
    }
    for name, variant in variants.items():
        path = tmp_path / f"{name}.conllu"
        path.write_bytes(variant.encode("utf-8"))
        assert dep.score_files(predictions=_pred("pred-all"), references=path).scores == reference, name
        assert dep.score_files(predictions=path, references=GOLD).scores["las"]["f1"] == 1.0, name


def test_invalid_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.conllu"
    path.write_bytes(b"1\tw\tw\tX\t_\t_\t0\troot\t_\t_\n\n1\tcaf\xe9\tw\tX\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(InputFormatError, match="expected UTF-8 text; found the byte 0xe9") as err:
        read_conllu(path)
    assert err.value.line == 3


def _outcome(pred: Path, gold: str | Path) -> Any:
    try:
        return dep.score_files(predictions=pred, references=gold).scores
    except InputFormatError as err:
        message = str(err)
        assert "\n" not in message and re.match(r"[^:]+:(\d+: )?", message), message
        return "error"


@pytest.mark.slow
def test_reader_fuzz_same_score_or_one_line_error(tmp_path: Path) -> None:
    """Corrupted predictions (and references): the clean score or a one-line error with file and line, never else.

    Dropping a multiword range line leaves the same text with other tokens (a different tokenization, scored as
    such), and a flipped byte may change a tag: those two must only not raise anything but InputFormatError.
    """
    rng = random.Random(7)
    clean = dep.score_files(predictions=_pred("pred-all"), references=GOLD).scores
    seen = {"same": 0, "error": 0}
    path = tmp_path / "corrupt.conllu"
    for trial in range(160):
        side = _pred("pred-all") if trial % 2 else GOLD
        lines = Path(side).read_text(encoding="utf-8").split("\n")
        kind = (trial // 2) % 5
        k = rng.randrange(len(lines))
        if kind == 0:  # truncated
            data = "\n".join(lines).encode("utf-8")[: rng.randrange(1, len(lines) * 40)]
        elif kind == 1:  # a line dropped
            if re.match(r"\d+-\d+\t", lines[k]):
                continue
            data = "\n".join(lines[:k] + lines[k + 1 :]).encode("utf-8")
        elif kind == 2:  # a line duplicated
            data = "\n".join(lines[: k + 1] + lines[k:]).encode("utf-8")
        elif kind == 3:  # tabs to spaces on a word line
            while not lines[k] or lines[k].startswith("#"):
                k = rng.randrange(len(lines))
            data = "\n".join(lines[:k] + [lines[k].replace("\t", " ")] + lines[k + 1 :]).encode("utf-8")
        else:  # bytes flipped
            raw = bytearray("\n".join(lines).encode("utf-8"))
            for _ in range(3):
                raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
            data = bytes(raw)
        path.write_bytes(data)
        pred, gold = (path, GOLD) if side != GOLD else (Path(_pred("pred-all")), path)
        result = _outcome(pred, gold)
        if kind == 4:
            continue  # a score or a one-line error (checked in _outcome)
        assert result == "error" or result == clean, (trial, kind, k, side)
        seen["same" if result == clean else "error"] += 1
    assert seen["same"] >= 3 and seen["error"] > 100, seen


# ============================================================================================ command line
def test_cli_json_equals_score_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "dependency", "--gold", GOLD, "--pred", _pred("pred-all"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == dep.score_files(predictions=_pred("pred-all"), references=GOLD).scores
    assert set(out["las"]) == set(FIELDS) and out["tokens"]["aligned_accuracy"] is None
    assert main(["score", "dependency", GOLD, _pred("pred-all"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == out


def test_cli_sample_table_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "dependency"]) == 0
    captured = capsys.readouterr()
    assert "bundled dependency sample" in captured.err and "LAS" in captured.out and "77.78" in captured.out
    path = _edited(tmp_path, "pred-cycle")
    assert main(["score", "dependency", "--gold", GOLD, "--pred", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:5: sentence 1" in err and "Traceback" not in err
    assert main(["score", "dependency", "--gold", GOLD, "--pred", str(path), "--no-check-trees"]) == 0
    capsys.readouterr()
    assert main(["score", "dependency", GOLD]) == 2
    assert "expected two files" in capsys.readouterr().err
    bad = tmp_path / "bad.conllu"
    bad.write_text("1 w w X _ _ 0 root _ _\n", encoding="utf-8")
    assert main(["score", "dependency", "--gold", GOLD, "--pred", str(bad)]) == 1
    assert f"{bad}:1: expected a CoNLL-U word line" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["pred-tokenization", "pred-all"])
def test_cli_counts_equal_the_scripts_counts(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = {}
    for line in EXPECTED["text"][case]["counts"].splitlines()[2:]:
        cells = [c.strip() for c in line.split("|")]
        rows[cells[0]] = cells[1:]
    assert main(["score", "dependency", GOLD, _pred(case), "--counts", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for name, (correct, gold, predicted, aligned) in rows.items():
        c = out[name.lower()]
        assert [str(c["correct"]), str(c["gold"]), str(c["predicted"]), str(c["aligned"] or "")] == [
            correct,
            gold,
            predicted,
            aligned,
        ], name
    assert main(["score", "dependency", GOLD, _pred(case), "-c"]) == 0
    assert "Predicted" in capsys.readouterr().out


def test_sentence_counts_shape_and_attribution() -> None:
    gold, pred = read_conllu(GOLD), read_conllu(_pred("pred-sentences"))
    counts = dep.sentence_counts(pred, gold)
    assert counts.shape == (len(gold), len(dep.METRICS), 4) and counts.dtype == np.int64
    k = dep.METRICS.index("sentences")
    assert counts[:, k, 2].tolist() == [1] * len(gold)  # each reference sentence counts itself
    assert counts[:, k, 1].sum() == len(pred)


# ============================================================================================ every path agrees
def _random_side(rng: random.Random, text: str, p_mwt: float, cuts: int, cycle: bool = False) -> str:
    """One side of ``text``: random tokens, sentences, multiword tokens, trees, tags (as CoNLL-U)."""
    points = sorted(rng.sample(range(1, len(text)), rng.randint(0, len(text) - 1))) if len(text) > 1 else []
    tokens = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    splits = sorted(rng.sample(range(1, len(tokens)), min(cuts, len(tokens) - 1))) if len(tokens) > 1 else []
    lines = []
    for sentence in (tokens[a:b] for a, b in zip([0, *splits], [*splits, len(tokens)])):
        groups = []
        for t in sentence:
            if rng.random() < p_mwt:
                groups.append((t, [rng.choice(["a", "B", t, t.upper()]) for _ in range(rng.randint(2, 3))]))
            else:
                groups.append((t, [t]))
        n = sum(len(forms) for _, forms in groups)
        order = rng.sample(range(1, n + 1), n)
        heads = {order[0]: 0} | {w: order[rng.randrange(k)] for k, w in enumerate(order) if k}
        if cycle and n > 1:
            heads[order[0]] = order[1]
        k = 0
        for t, forms in groups:
            if len(forms) > 1:
                lines.append(f"{k + 1}-{k + len(forms)}\t{t}\t_\t_\t_\t_\t_\t_\t_\t_")
            for form in forms:
                k += 1
                upos, rel = rng.choice(["NOUN", "ADP", "PUNCT"]), rng.choice(["nsubj", "case", "det:x", "punct"])
                lemma, feats = rng.choice(["_", "l"]), rng.choice(["_", "Number=Sing", "Foo=1|Case=Nom"])
                lines.append(f"{k}\t{form}\t{lemma}\t{upos}\tX\t{feats}\t{heads[k]}\t{rel}\t_\t_")
        lines.append("")
    return "\n".join(lines) + "\n"


#: the documents the jitted callback path decodes (code 0: the predictions, 1: the references), set before each run
_DECODED: list[Any] = []


@functools.cache
def _jitted_state(metric: type) -> Any:
    """``metric.from_model_output`` inside ``jax.jit`` through a decode callback, compiled once per metric class.

    The program does not depend on the documents (the callback decodes them when it runs, from ``_DECODED``), so one
    compilation serves every generated pair instead of one per pair.
    """
    import jax

    return jax.jit(lambda p, g: metric.from_model_output(p, g, decode=lambda i: _DECODED[int(i)]))


def _paths(pred: list[DepSentence], gold: list[DepSentence], **options: Any) -> dict[str, Any]:
    """The figures by every path: host score, the accumulator on one corpus pair, inside jit via a callback."""
    out: dict[str, Any] = {}
    for name, run in (
        ("score", lambda: dep.score(pred, gold, **options)),
        ("accumulator", lambda: dep.figures(dep.DependencyMetric(**options).from_model_output([pred], [gold]))),
    ):
        try:
            out[name] = run()
        except InputFormatError as err:
            out[name] = str(err)
    _DECODED[:] = [pred, gold]
    try:
        state = _jitted_state(dep.DependencyMetric(**options))(np.zeros(1, np.int32), np.ones(1, np.int32))
        out["jit"] = dep.figures(state)
    except Exception as err:  # the host error comes back through the callback, wrapped by JAX
        out["jit"] = "error" if "expected a tree" in str(err) or "spell a different text" in str(err) else repr(err)
    return out


def test_every_path_gives_the_same_figures_or_the_same_error() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=40, deadline=None)
    @given(st.randoms(use_true_random=False), st.booleans(), st.booleans())
    def check(rng: random.Random, cycle: bool, retext: bool) -> None:
        text = "".join(rng.choice("aAbB") for _ in range(rng.randint(1, 14)))
        gold = parse_conllu(_random_side(rng, text, 0.3, rng.randint(0, 2)))
        other = text + "a" if retext and rng.random() < 0.3 else text
        pred = parse_conllu(_random_side(rng, other, 0.3, rng.randint(0, 2), cycle=cycle))
        for options in ({}, {"check_trees": False, "exclude_punct": True, "strip_subtypes": False}):
            out = _paths(pred, gold, **options)
            if isinstance(out["score"], str):
                assert out["accumulator"] == out["score"] and out["jit"] == "error"
            else:
                assert out["accumulator"] == out["score"] == out["jit"]

    check()


# ============================================================================================ sentence by sentence
BOUNDARY = json.loads((DATA / "boundary_cases.json").read_text(encoding="utf-8"))
WHOLE_DOCUMENTS = "score whole documents (score_files, or a list of sentences per example)"


def _script_counts(counts: np.ndarray) -> dict[str, list[Any]]:
    """Summed counts in the fixtures' layout: ``{Metric: [correct, system, gold, aligned or None]}``."""
    rows = np.asarray(counts).reshape(-1, len(dep.METRICS), 4).sum(axis=0).tolist()
    return {NAMES[m]: [*r[:3], r[3] if m in dep.ALIGNED_METRICS else None] for m, r in zip(dep.METRICS, rows)}


@pytest.mark.parametrize("case", BOUNDARY, ids=[c["name"] for c in BOUNDARY])
def test_sentence_examples_give_the_scripts_figures_or_refuse(case: dict[str, Any], tmp_path: Path) -> None:
    """The script's walk can align words across a sentence boundary: sentence examples never give another number."""
    gold, pred = parse_conllu(case["gold"], "gold.conllu"), parse_conllu(case["system"], "system.conllu")
    (tmp_path / "gold.conllu").write_text(case["gold"], encoding="utf-8")
    (tmp_path / "system.conllu").write_text(case["system"], encoding="utf-8")
    report = dep.score_files(predictions=tmp_path / "system.conllu", references=tmp_path / "gold.conllu")
    assert _script_counts(dep.sentence_counts(pred, gold)) == case["counts"]  # the whole files
    assert report.scores == dep.score(pred, gold)
    metric = dep.DependencyMetric()
    assert dep.figures(metric.from_model_output([pred], [gold])) == report.scores  # one document
    # a list of one sentence is a file of its own: the script's counts on each sentence file, summed
    alone = [dep.example_counts([p], [g]) for p, g in zip(pred, gold)]
    assert _script_counts(np.stack(alone)) == case["sentence_file_counts"]
    if case["counts"] == case["sentence_file_counts"]:
        assert dep.figures(metric.from_model_output(pred, gold)) == report.scores
        return
    sentence_files = dep.figures(metric.from_model_output([[p] for p in pred], [[g] for g in gold]))
    assert (report.scores["uas"]["f1"], sentence_files["uas"]["f1"]) == (0.0, 0.5)  # the script's two figures
    with pytest.raises(InputFormatError) as err:
        metric.from_model_output(pred, gold)  # sentence examples: refused rather than UAS F1 0.5
    message = str(err.value)
    assert (err.value.path, err.value.line) == ("gold.conllu", 1) and "\n" not in message
    assert "example 1 of the batch (sent_id s1): the alignment runs out of" in message and WHOLE_DOCUMENTS in message
    with pytest.raises(InputFormatError, match="runs out of"):
        metric.from_model_output([pred[0]], [gold[:1]])  # a bare sentence on either side is a sentence example


def test_sentence_examples_split_differently_and_bad_multiword_ranges_are_refused() -> None:
    gold, pred = read_conllu(GOLD), read_conllu(_pred("pred-sentences"))
    with pytest.raises(InputFormatError) as err:
        dep.DependencyMetric().from_model_output(pred[:20], gold[:20])
    message = str(err.value)
    assert message.startswith(f"{_pred('pred-sentences')}:138: example 7 of the batch (sent_id weblog-")
    assert f"if sentences are split differently, {WHOLE_DOCUMENTS}" in message and "\n" not in message
    words = tuple(DepToken(k, f, head=k - 1) for k, f in enumerate("abc", start=1))
    for ranges in ([MultiwordToken(2, 4, "bc")], [MultiwordToken(1, 1, "a")], [MultiwordToken(1, 2, "ab")] * 2):
        sentence = DepSentence(words, tuple(ranges), ("# sent_id = x",))
        with pytest.raises(InputFormatError, match=r"sentence 1 \(sent_id x\): expected multiword tokens in order"):
            dep.score([sentence], [sentence])
    with pytest.raises(InputFormatError, match="non-empty FORM"):
        dep.score([DepSentence(words, (MultiwordToken(1, 2, " "),))], [DepSentence(words)])


def _next_sentence(message: str, pred: DepSentence, gold: DepSentence) -> tuple[DepSentence, DepSentence]:
    """A sentence pair to follow a refused one whose first token is a multiword token of the side that ran out.

    Its words are the forms of the other side's sentence, so that the script's LCS can take the words left over.
    """
    reference_ran_out = "runs out of reference words" in message
    forms = [w.form for w in (pred if reference_ran_out else gold).words]
    mwt = f"1-{len(forms)}\tzz" + "\t_" * 8 + "\n"
    mwt += "".join(f"{k}\t{f}\t_\tX\t_\t_\t{int(k > 1)}\tdep\t_\t_\n" for k, f in enumerate(forms, start=1))
    [plain, multi] = [parse_conllu(t)[0] for t in ("1\tzz\t_\tX\t_\t_\t0\troot\t_\t_\n", mwt)]
    return (plain, multi) if reference_ran_out else (multi, plain)


def test_sentence_examples_equal_score_files_or_refuse_where_the_script_can_differ(tmp_path: Path) -> None:
    """Generated documents (multiword tokens, retokenized, same or other sentence boundaries), fed sentence by sentence.

    Accepted sentence examples, in any batches, give score_files' figures exactly; a refused one is refused only
    where a following sentence makes the script's counts differ from the sentence's own.
    """
    from hypothesis import given, settings
    from hypothesis import strategies as st

    metric = dep.DependencyMetric()

    @settings(max_examples=120, deadline=None)
    @given(st.randoms(use_true_random=False), st.sampled_from([0.0, 0.3, 0.6]), st.booleans())
    def check(rng: random.Random, p_mwt: float, resplit: bool) -> None:
        gold_text, pred_text = "", ""
        for _ in range(rng.randint(1, 5)):
            text = "".join(rng.choice("aAbBc") for _ in range(rng.randint(1, 8)))
            gold_text += _random_side(rng, text, p_mwt, rng.randint(0, 1) if resplit else 0)
            pred_text += _random_side(rng, text, p_mwt, rng.randint(0, 1) if resplit else 0)
        gold, pred = parse_conllu(gold_text, "gold.conllu"), parse_conllu(pred_text, "pred.conllu")
        (tmp_path / "gold.conllu").write_text(gold_text, encoding="utf-8")
        (tmp_path / "pred.conllu").write_text(pred_text, encoding="utf-8")
        expected = dep.score_files(predictions=tmp_path / "pred.conllu", references=tmp_path / "gold.conllu").scores
        assert dep.figures(metric.from_model_output([pred], [gold])) == expected
        if len(pred) != len(gold):
            return
        size = rng.randint(1, 3)
        try:
            state = metric.empty()
            for lo in range(0, len(gold), size):
                state = state.merge(metric.from_model_output(pred[lo : lo + size], gold[lo : lo + size]))
        except InputFormatError as err:
            message = str(err)
            assert WHOLE_DOCUMENTS in message and "\n" not in message
            k = lo + int(re.search(r"example (\d+) of the batch", message).group(1)) - 1
            if "split differently" in message:
                assert resplit  # the same boundaries spell the same text sentence by sentence
                return
            p2, g2 = _next_sentence(message, pred[k], gold[k])
            together = dep.sentence_counts([pred[k], p2], [gold[k], g2]).sum(axis=0)
            apart = dep.sentence_counts(pred[k], gold[k]).sum(axis=0) + dep.sentence_counts(p2, g2).sum(axis=0)
            assert (together != apart).any()
        else:
            assert dep.figures(state) == expected

    check()


def test_space_separators_are_unicode_category_zs() -> None:
    found = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"]
    assert SPACE_SEPARATORS == "".join(found)
    assert surface("New\u00a0York\u3000City ok") == "NewYorkCityok"
    assert surface("tab\tstays") == "tab\tstays"  # a tab is not a space separator (category Cc)


def test_read_words_are_the_tokens_their_constructor_builds() -> None:
    import pickle

    (sentence,) = parse_conllu("1\tHi\thi\tINTJ\tUH\tA=b\t0\troot\t_\tSpaceAfter=No\n", "s.conllu")
    word = sentence.words[0]
    built = DepToken(1, "Hi", "hi", "INTJ", "UH", "A=b", 0, "root", "_", "SpaceAfter=No", 1)
    assert word == built and hash(word) == hash(built) and vars(word) == vars(built)
    assert list(vars(word)) == list(vars(built)) and word.line == 1
    assert pickle.loads(pickle.dumps(word)) == built
    with pytest.raises(AttributeError):
        word.head = 2  # type: ignore[misc]  # still frozen


def test_summary_files_is_score_files_without_items(tmp_path: Path) -> None:
    pred = str(DATA / "pred-all.conllu")
    for options in ({}, {"exclude_punct": True}, {"strip_subtypes": False}):
        report = dep.score_files(predictions=pred, references=GOLD, **options)
        scores, warnings = dep.summary_files(predictions=pred, references=GOLD, **options)
        assert json.dumps(scores) == json.dumps(report.scores) and warnings == report.warnings
    empty = tmp_path / "empty.conllu"
    empty.write_text("", encoding="utf-8")
    assert dep.summary_files(predictions=empty, references=empty)[1] == [
        f"{empty} holds no sentences; every figure is 0"
    ]
    with pytest.raises(InputFormatError, match="expected the sentences of"):
        dep.summary_files(predictions=empty, references=GOLD)
