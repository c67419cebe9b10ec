"""The ``metametric-jax`` command: JSON against the task modules and seqeval;
table output, exit statuses, error messages and warnings."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from helpers import run, run_json

import metametric_jax
from metametric_jax.tasks import ner

DATA = resources.files("metametric_jax") / "data"
SAMPLES = {
    "ner": (DATA / "ner" / "gold.txt", DATA / "ner" / "pred.txt"),
}


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
        ("ner", ["LOC", "MISC", "ORG", "PER", "micro avg", "macro avg", "Precision", "Recall", "F1", "Support"]),
    ],
)
def test_table_names_metrics_task_and_files(capsys, task, names):
    code, out, err = run(capsys, "score", task)
    assert code == 0, err
    for name in names:
        assert name in out
    assert task in out and Path(str(SAMPLES[task][1])).name in out


# --------------------------------------------------------------------------------------------------------- exit codes
def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and metametric_jax.__version__ in out


def test_score_help_lists_tasks(capsys):
    code, out, _ = run(capsys, "score", "--help")
    assert code == 0
    for task in ("coref", "ner", "amr"):
        assert task in out


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
        (["score", "ner", "--scheme", "XYZ"], "IOBES"),
        (["score", "ner", "--format", "xml"], "invalid choice"),
    ],
)
def test_bad_usage_exits_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err


# --------------------------------------------------------------------------------------------------------- subprocess
@pytest.mark.parametrize(("task", "sides", "what"), [
    ("ner", ("--gold", "--pred"), "sentences"),
])  # fmt: skip
def test_empty_reference_file_warns(capsys, tmp_path, task, sides, what):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = run(capsys, "score", task, sides[0], str(empty), sides[1], str(empty), "--format", "json")
    assert code == 0
    json.loads(out)
    assert f"holds no {what}" in err
