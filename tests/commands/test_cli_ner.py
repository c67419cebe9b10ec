"""``metametric-jax score ner``: JSON against the API, seqeval and conlleval.pl's output; options, errors, progress."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run, run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report

from metametric_jax.commands import LARGE_INPUT
from metametric_jax.tasks.ner import sample_paths, score, score_files
from metametric_jax.tasks.readers.conll import read_conll

DATA = Path(__file__).parents[1] / "data" / "ner"


# ---------------------------------------------------------------------------------------------------- two files
def test_sample_json_equals_score_files_and_seqeval(capsys) -> None:
    got, err = run_json(capsys, "score", "ner")
    gold, pred = sample_paths()
    assert got == score_files(references=gold, predictions=pred).scores
    assert "bundled ner sample" in err
    ref = classification_report(read_conll(gold).tags, read_conll(pred).tags, output_dict=True)
    for avg in ("micro", "macro", "weighted"):
        for key in ("precision", "recall", "f1"):
            assert got[avg][key] == pytest.approx(ref[f"{avg} avg"][key if key != "f1" else "f1-score"], abs=1e-12)
    assert got["f1"] == got["micro"]["f1"]
    assert set(got["per_type"]) == {k for k in ref if not k.endswith(" avg")}
    for label, figures in got["per_type"].items():
        assert figures["support"] == ref[label]["support"]
        assert figures["f1"] == pytest.approx(ref[label]["f1-score"], abs=1e-12)


def test_explicit_files_format_before_task_and_scheme_alias(capsys) -> None:
    gold, pred = sample_paths()
    got, err = run_json(capsys, "score", "ner", "--gold", gold, "--pred", pred)
    assert got == score_files(references=gold, predictions=pred).scores and "bundled" not in err
    code, out, _ = run(capsys, "score", "--format", "json", "ner", "--gold", gold, "--pred", pred)
    assert code == 0 and json.loads(out) == got
    alias, _ = run_json(capsys, "score", "ner", "--scheme", "bio")
    assert alias == got


def test_table_names_types_averages_and_conlleval_counts(capsys) -> None:
    code, out, err = run(capsys, "score", "ner")
    assert code == 0, err
    for name in ("LOC", "MISC", "ORG", "PER", "micro avg", "macro avg", "weighted avg", "Precision", "Recall", "F1"):
        assert name in out
    scores = score_files(references=sample_paths()[0], predictions=sample_paths()[1]).scores
    assert f"{100 * scores['f1']:.2f}" in out
    c = scores["counts"]
    flat = " ".join(out.split())
    assert f"processed {c['tokens']} tokens with {c['phrases']} phrases; found: {c['found']} phrases;" in flat
    assert "ner" in out and "pred.txt" in out


# ---------------------------------------------------------------------------------------------------- one file
CASES = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_file_layout_with_conlleval_options(capsys, name: str) -> None:
    """``--file`` with conlleval's own options gives conlleval's counts (tests/data/ner/README.md)."""
    case = CASES[name]
    got, _ = run_json(capsys, "score", "ner", "--file", str(DATA / name), "--scheme", case["scheme"], *case["options"])
    out = (DATA / name.replace(".txt", ".out")).read_text(encoding="utf-8").splitlines()
    words = out[0].replace(";", "").replace(".", "").split()
    tokens, phrases, found, correct = int(words[1]), int(words[4]), int(words[7]), int(words[10])
    c = got["counts"]
    assert (c["tokens"], c["phrases"], c["found"], c["correct"]) == (tokens, phrases, found, correct)
    if tokens:  # the accuracy line: -DOCSTART- lines are tokens there, as here
        assert out[1].startswith(f"accuracy: {100 * got['accuracy']:6.2f}%; ")


def test_docstart_outside_and_tagged_marks_warn_on_stderr(capsys) -> None:
    """conlleval's questionable counts are followed and said: -DOCSTART- tokens, a tagged mark's line, -o without -r."""
    path = str(DATA / "docstart_tagged.txt")
    code, out, err = run(capsys, "score", "ner", "--file", path, "-o", "B-MISC", "--format", "json")
    assert code == 0 and json.loads(out) == score_files(file=path).scores
    lines = err.splitlines()
    ignored = "the outside tag 'B-MISC' (-o) is ignored without raw tags (-r), as conlleval ignores it"
    counted = "-DOCSTART- lines are counted as tokens (in the token count and the accuracy), as conlleval counts them"
    assert f"metametric-jax: warning: {ignored}" in lines
    assert sum(x.startswith(f"metametric-jax: warning: {path}: its ") and x.endswith(counted) for x in lines) == 1
    assert any(f"{path}:1: a -DOCSTART- line carries an entity tag" in x for x in lines)
    code, _, err = run(capsys, "score", "ner", "--file", str(DATA / "raw.txt"), "-r", "-o", "NONE")
    assert code == 0 and "ignored" not in err


def test_one_column_file_is_a_one_line_error_without_the_raw_hint(capsys, tmp_path) -> None:
    gold, tokens = tmp_path / "gold.txt", tmp_path / "tokens.txt"
    gold.write_text("Kestrel B-ORG\nopens O\n\nfoo O\n")
    tokens.write_text("Kestrel\nopens\n\nfoo\n")
    for raw in ([], ["-r"]):
        code, out, err = run(capsys, "score", "ner", "--gold", str(gold), "--pred", str(tokens), *raw)
        assert code == 1 and out == "" and err.count("\n") == 1
        assert err.startswith(f"metametric-jax: error: {tokens}:1: ") and "tag column is missing" in err
        assert ("raw mode" not in err) if not raw else "refused" in err


def test_file_option_conflicts_and_bad_delimiter_exit_2(capsys) -> None:
    gold, pred = sample_paths()
    code, out, err = run(capsys, "score", "ner", "--file", gold, "--gold", gold, "--pred", pred)
    assert code == 2 and out == "" and "--file" in err
    code, _, err = run(capsys, "score", "ner", "--file", gold, "-d", "(")
    assert code == 2 and "regular expression" in err


# ---------------------------------------------------------------------------------------------------- errors
def test_malformed_file_names_file_and_line(capsys, tmp_path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("Kestrel B-ORG\nopens O\n\nfoo\n")
    code, out, err = run(capsys, "score", "ner", "--gold", str(bad), "--pred", str(bad))
    assert code == 1 and out == "" and err.startswith(f"metametric-jax: error: {bad}:4: ") and "Traceback" not in err
    bad.write_text("Kestrel B-ORG\nopens E-ORG\n")
    code, _, err = run(capsys, "score", "ner", "--gold", str(bad), "--pred", str(bad))
    assert code == 1 and f"{bad}:2: " in err and "E-ORG" in err
    bad.write_bytes(b"Kestrel B-ORG\n\xff O\n")
    code, _, err = run(capsys, "score", "ner", "--gold", sample_paths()[0], "--pred", str(bad))
    assert code == 1 and f"{bad}:2: " in err and "UTF-8" in err
    code, _, err = run(capsys, "score", "ner", "--file", str(bad))
    assert code == 1 and f"{bad}:2: " in err and "UTF-8" in err


def test_missing_file(capsys, tmp_path) -> None:
    missing = tmp_path / "missing.txt"
    code, out, err = run(capsys, "score", "ner", "--gold", sample_paths()[0], "--pred", str(missing))
    assert code == 1 and out == "" and err.startswith(f"metametric-jax: error: {missing}: ") and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["score", "ner", "--scheme", "XYZ"], "IOBES"),
        (["score", "ner", "--format", "xml"], "invalid choice"),
        (["score", "ner", "--gold", "g.txt"], "--pred"),
    ],
)
def test_bad_usage_exits_2(capsys, argv, needle) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and needle in err


def test_empty_reference_file_warns(capsys, tmp_path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = run(capsys, "score", "ner", "--gold", str(empty), "--pred", str(empty), "--format", "json")
    assert code == 0 and json.loads(out)["f1"] == 0.0 and "holds no sentences" in err


# ---------------------------------------------------------------------------------------------------- progress
def write_ner(path: Path, sentences: list[list[tuple[str, str]]]) -> None:
    path.write_text("-DOCSTART- O\n\n" + "\n\n".join("\n".join(f"{w} {t}" for w, t in s) for s in sentences) + "\n")


@pytest.mark.parametrize("types", [("PER", "LOC", "ORG"), ("micro", "macro", "weighted")])
def test_progress_is_display_only(capsys, tmp_path, types) -> None:
    """Issue 10: one path with and without the bar, whatever the type names (micro/macro/weighted included)."""
    rng = random.Random(7)
    gold, pred = [], []
    for _ in range(2 * LARGE_INPUT):
        g = [rng.choice(["O"] + [f"B-{t}" for t in types]) for _ in range(3)]
        for k in range(1, 3):  # continue some entities over two tokens
            if g[k] != "O" and g[k - 1][2:] == g[k][2:] and rng.random() < 0.5:
                g[k] = "I" + g[k][1:]
        p = [t if rng.random() < 0.8 else rng.choice(["O", f"B-{types[0]}", f"I-{types[1]}"]) for t in g]
        gold.append([(f"w{k}", t) for k, t in enumerate(g)])
        pred.append([(f"w{k}", t) for k, t in enumerate(p)])
    gold_path, pred_path = tmp_path / "gold.txt", tmp_path / "pred.txt"
    write_ner(gold_path, gold)
    write_ner(pred_path, pred)
    files = ("score", "ner", "--gold", str(gold_path), "--pred", str(pred_path))
    got, err = run_json(capsys, *files)
    assert "ner: scoring sentences" in err and f"{2 * LARGE_INPUT}/{2 * LARGE_INPUT}" in err
    assert got == score_files(references=gold_path, predictions=pred_path).scores
    assert sorted(got["per_type"]) == sorted(types)
    plain, err = run_json(capsys, *files, "--no-progress")
    assert "scoring" not in err and plain == got
    small, err = run_json(capsys, "score", "ner", "--progress")
    assert "ner: scoring sentences" in err and small == run_json(capsys, "score", "ner")[0]


# ---------------------------------------------------------------------------------------------------- CLI vs API
LABELS = ("PER", "micro", "macro", "人名", "GPE-LOC")
TAG = st.sampled_from(["O"] + [f"{p}-{t}" for p in "BI" for t in LABELS])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(TAG, TAG), min_size=1, max_size=8), max_size=8))
def test_cli_equals_api(capsys, tmp_path, sentences) -> None:
    gold = [[g for g, _ in s] for s in sentences]
    pred = [[p for _, p in s] for s in sentences]
    one = tmp_path / "one.txt"
    one.write_text("\n\n".join("\n".join(f"w{k} {g} {p}" for k, (g, p) in enumerate(s)) for s in sentences) + "\n")
    got, _ = run_json(capsys, "score", "ner", "--file", str(one))
    assert got == score(pred, gold)


def test_run_path_does_not_import_jax() -> None:
    """A host computation suffices, so scoring a file must not load JAX (start-up time)."""
    gold, pred = sample_paths()
    code = (
        "import sys; from metametric_jax.cli import main; "
        f"status = main(['score', 'ner', '--gold', {gold!r}, '--pred', {pred!r}, '--format', 'json']); "
        "print(sorted(m for m in sys.modules if m == 'jax' or m.startswith('jax.')), status, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[] 0"
    assert json.loads(proc.stdout) == score_files(references=gold, predictions=pred).scores


def test_unknown_scheme_lists_valid_schemes(capsys) -> None:
    code, _, err = run(capsys, "score", "ner", "--scheme", "XYZ")
    assert code == 2
    for scheme in ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU"):
        assert scheme in err


def test_one_file_from_standard_input() -> None:
    """``--file -`` reads standard input, as conlleval.pl does."""
    data = (DATA / "random_iob2.txt").read_bytes()
    argv = [sys.executable, "-m", "metametric_jax", "score", "ner", "--file", "-", "--format", "json"]
    proc = subprocess.run(argv, input=data, capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout) == score_files(file=DATA / "random_iob2.txt").scores


def test_bootstrap_intervals_and_paired_comparison(capsys, tmp_path) -> None:
    got, _ = run_json(capsys, "score", "ner", "--bootstrap", "50")
    assert got["replicates"] == 50
    for path in (("f1",), ("micro", "f1"), ("macro", "recall"), ("accuracy",), ("per_type", "LOC", "f1")):
        low, high = _at(got["intervals"], path)
        assert 0.0 <= low <= high <= 1.0
        assert low - 1e-6 <= _at(got, path) <= high + 1e-6  # the corpus figure lies inside its interval
    gold, pred = sample_paths()
    got, _ = run_json(
        capsys, "compare", "ner", "--references", gold, "--system", pred, "--system", pred, "--samples", "50"
    )
    assert got["delta"]["f1"] == 0.0 and got["a"]["micro"] == got["b"]["micro"]
    worse = tmp_path / "worse.txt"
    worse.write_text(Path(pred).read_text(encoding="utf-8").replace("B-LOC", "B-ORG"), encoding="utf-8")
    got, _ = run_json(capsys, "compare", "ner", "--references", gold, "--system", pred, "--system", str(worse))
    a = score_files(references=gold, predictions=pred).scores
    b = score_files(references=gold, predictions=worse).scores
    assert got["a"]["f1"] == pytest.approx(a["f1"], abs=1e-6) and got["b"]["f1"] == pytest.approx(b["f1"], abs=1e-6)
    assert got["delta"]["f1"] > 0


def _at(tree: dict, path: tuple[str, ...]):
    for key in path:
        tree = tree[key]
    return tree


def test_real_submission_two_files(capsys) -> None:
    """A WNUT 2017 submission (CRLF line endings, tab-separated) against the test set, as the API scores it."""
    gold, pred = DATA / "wnut17" / "emerging.test.annotated", DATA / "wnut17" / "uh_ritual"
    got, _ = run_json(capsys, "score", "ner", "--gold", str(gold), "--pred", str(pred), "--no-progress")
    assert got == score_files(references=gold, predictions=pred).scores
    head = (DATA / "wnut17" / "uh_ritual.out").read_text(encoding="utf-8").splitlines()[0]
    c = got["counts"]
    assert head == (
        f"processed {c['tokens']} tokens with {c['phrases']} phrases; found: {c['found']} phrases; "
        f"correct: {c['correct']}."
    )
