"""The ``metametric-jax`` command: JSON against the task modules, seqeval and the CoNLL-2012 scorer's own figures;
table output, exit statuses, error messages, warnings and the progress bar."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import metametric_jax
from metametric_jax.cli import LARGE_INPUT, main
from metametric_jax.tasks import amr, conll2012, ner

DATA = resources.files("metametric_jax") / "data"
SCORER_TESTS = Path(__file__).resolve().parent / "data" / "conll2012-scorer-tests"
SAMPLES = {
    "coref": (DATA / "coref" / "sample.key", DATA / "coref" / "sample.response"),
    "ner": (DATA / "ner" / "gold.txt", DATA / "ner" / "pred.txt"),
    "amr": (DATA / "amr" / "gold.txt", DATA / "amr" / "pred.txt"),
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str) -> tuple[dict, str]:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out), err


def scorer_tests() -> Path:
    if not (SCORER_TESTS / "expected.json").is_file():
        pytest.fail(f"the CoNLL-2012 scorer test cases are missing: expected {SCORER_TESTS}/expected.json")
    return SCORER_TESTS


# ---------------------------------------------------------------------------------------------------- bundled samples
def test_coref_sample_json_equals_score_files(capsys):
    got, err = run_json(capsys, "score", "coref")
    expected, _ = conll2012.score_files(*SAMPLES["coref"])
    assert got == expected
    assert set(got) == {"muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "conll", "mentions"}
    assert set(got["conll"]) == {"f1"}
    assert all(0.0 <= v <= 1.0 for figures in got.values() for v in figures.values())
    assert "bundled coref sample" in err


def test_amr_sample_json_equals_score_files(capsys):
    got, err = run_json(capsys, "score", "amr")
    assert got == amr.score_files(*SAMPLES["amr"])
    assert set(got) == {"precision", "recall", "f1"}
    assert "bundled amr sample" in err


def test_explicit_files_and_format_before_task(capsys):
    gold, pred = ner.sample_paths()
    got, err = run_json(capsys, "score", "ner", "--gold", gold, "--pred", pred)
    assert got == ner.score_files(references=gold, predictions=pred).scores
    assert "bundled" not in err
    code, out, _ = run(capsys, "score", "--format", "json", "ner", "--gold", gold, "--pred", pred)
    assert code == 0 and json.loads(out) == got


# ------------------------------------------------------------------------------------------------------------- tables
@pytest.mark.parametrize(
    "task, names",
    [
        ("coref", ["MUC", "B3", "CEAFm", "CEAFe", "BLANC", "LEA", "CoNLL", "Mentions", "Recall", "Precision", "F1"]),
        ("ner", ["LOC", "MISC", "ORG", "PER", "micro avg", "macro avg", "Precision", "Recall", "F1", "Support"]),
        ("amr", ["Smatch", "Precision", "Recall", "F1"]),
    ],
)
def test_table_names_metrics_task_and_files(capsys, task, names):
    code, out, err = run(capsys, "score", task)
    assert code == 0, err
    for name in names:
        assert name in out
    assert task in out and Path(str(SAMPLES[task][1])).name in out


def test_table_shows_percentages(capsys):
    code, out, _ = run(capsys, "score", "amr")
    f1 = amr.score_files(*SAMPLES["amr"])["f1"]
    assert code == 0 and f"{100 * f1:.2f}" in out


# ---------------------------------------------------------------------------------- CoNLL-2012 scorer's own test cases
@pytest.mark.parametrize("case_id", ["A1", "A2", "A3", "D1", "N1"])
def test_coref_scorer_test_case(capsys, case_id):
    base = scorer_tests()
    cases = {c["id"]: c for c in json.loads((base / "expected.json").read_text())["cases"]}
    case = cases[case_id]
    got, _ = run_json(
        capsys, "score", "coref", "--key", str(base / case["key"]), "--response", str(base / case["response"])
    )
    for metric, figures in case["expected"].items():
        for key, value in figures.items():
            assert got[metric][key] == pytest.approx(value, abs=1e-4), (case_id, metric, key)


# --------------------------------------------------------------------------------------------------------- exit codes
def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and metametric_jax.__version__ in out


def test_score_help_lists_tasks(capsys):
    code, out, _ = run(capsys, "score", "--help")
    assert code == 0
    for task in ("coref", "ner", "amr"):
        assert task in out


def test_malformed_coref_file_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_text("#begin document (a); part 000\na 0 0 x (1\na 0 1 y -\n#end document\n")
    code, _, err = run(capsys, "score", "coref", "--key", str(bad), "--response", str(bad))
    assert code == 1 and err.startswith(f"metametric-jax: error: {bad}:4: ") and "Traceback" not in err


def test_malformed_amr_file(capsys, tmp_path):
    bad = tmp_path / "bad.amr"
    bad.write_text("# ::id 1\n(a / b\n")
    code, _, err = run(capsys, "score", "amr", "--gold", str(bad), "--pred", str(bad))
    assert code == 1 and err.startswith(f"metametric-jax: error: {bad}:2: ")


def test_non_utf8_file_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"EU B-ORG\n\xff O\n")
    gold, _ = ner.sample_paths()
    code, _, err = run(capsys, "score", "ner", "--gold", gold, "--pred", str(bad))
    assert code == 1 and f"{bad}:2: " in err and "UTF-8" in err


def test_missing_file(capsys, tmp_path):
    missing = tmp_path / "missing.txt"
    gold, _ = ner.sample_paths()
    code, out, err = run(capsys, "score", "ner", "--gold", gold, "--pred", str(missing))
    assert code == 1 and out == ""
    assert err.startswith(f"metametric-jax: error: {missing}: ") and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["score", "pos"], "invalid choice"),
        (["score"], "TASK"),
        ([], "usage"),
        (["score", "coref", "--key", "k.txt"], "--response"),
        (["score", "coref", "--response", "r.txt"], "--key"),
        (["score", "amr", "--gold", "g.txt"], "--pred"),
        (["score", "ner", "--scheme", "XYZ"], "IOBES"),
        (["score", "ner", "--format", "xml"], "invalid choice"),
        (["score", "amr", "--key", "k.txt"], "unrecognized"),
    ],
)
def test_bad_usage_exits_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err


def test_missing_documents_are_warned_on_stderr(capsys, tmp_path):
    key, response = tmp_path / "k.txt", tmp_path / "r.txt"
    key.write_text("#begin document (a); part 000\na (1)\na (1)\n#end document\n")
    response.write_text("#begin document (b); part 000\nb (1)\n#end document\n")
    got, err = run_json(capsys, "score", "coref", "--key", str(key), "--response", str(response))
    assert "warning" in err and "(a); part 000" in err and "(b); part 000" in err
    assert got["muc"] == {"recall": 0.0, "precision": 0.0, "f1": 0.0}


# ------------------------------------------------------------------------------------------------------- progress bar


def test_progress_bar_on_large_coref_file(capsys, tmp_path):
    rng = random.Random(3)
    key_lines, response_lines = [], []
    for d in range(2 * LARGE_INPUT):
        key_cols = ["(1", "1)", "-", "(1)", "(2)"]
        response_cols = [rng.choice(["(1)", "-", "(2)"]) for _ in key_cols]
        for lines, cols in ((key_lines, key_cols), (response_lines, response_cols)):
            lines.append(f"#begin document (d{d}); part 000")
            lines.extend(f"d{d} {c}" for c in cols)
            lines.append("#end document")
    key, response = tmp_path / "big.key", tmp_path / "big.response"
    key.write_text("\n".join(key_lines) + "\n")
    response.write_text("\n".join(response_lines) + "\n")
    got, err = run_json(capsys, "score", "coref", "--key", str(key), "--response", str(response))
    assert "coref: scoring documents" in err and f"{2 * LARGE_INPUT}/{2 * LARGE_INPUT}" in err
    assert "scored " not in err  # the task module's own count lines are turned into the bar
    expected, _ = conll2012.score_files(key, response)
    assert got == expected


def test_no_progress_bar_on_small_input(capsys):
    _, err = run_json(capsys, "score", "coref")
    assert "scoring documents" not in err


# --------------------------------------------------------------------------------------------------------- subprocess
def test_module_entry_point_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "metametric_jax", "score", "amr", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == amr.score_files(*SAMPLES["amr"])
    assert "bundled amr sample" in proc.stderr


@pytest.mark.parametrize(("task", "sides", "what"), [
    ("coref", ("--key", "--response"), "documents"),
    ("ner", ("--gold", "--pred"), "sentences"),
    ("amr", ("--gold", "--pred"), "graphs"),
])  # fmt: skip
def test_empty_reference_file_warns(capsys, tmp_path, task, sides, what):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = run(capsys, "score", task, sides[0], str(empty), sides[1], str(empty), "--format", "json")
    assert code == 0
    json.loads(out)
    assert f"holds no {what}" in err
