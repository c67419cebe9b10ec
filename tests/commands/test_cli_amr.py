"""``metametric-jax score amr``: JSON against the API and smatch 1.0.4's figures; options, errors, warnings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from amr_graphs import unrelated_pair
from helpers import run, run_json

from metametric_jax.tasks.amr import score_files

DATA = resources.files("metametric_jax") / "data" / "amr"
GOLD, PRED = str(DATA / "gold.txt"), str(DATA / "pred.txt")
FIXTURES = Path(__file__).parents[1] / "data" / "amr"


def test_sample_json_equals_score_files_and_smatch(capsys):
    got, err = run_json(capsys, "score", "amr")
    assert got == score_files(predictions=PRED, references=GOLD).scores
    assert set(got) == {"precision", "recall", "f1", "matched", "predicted", "reference", "pairs", "pairs_optimal"}
    assert "bundled amr sample" in err
    smatch = [float(x) for x in re.findall(r": ([0-9.]+)", (FIXTURES / "smatch_1.0.4_sample.txt").read_text())]
    assert [got["precision"], got["recall"], got["f1"]] == pytest.approx(smatch, abs=5e-7)


def test_options_json(capsys):
    gold, pred = str(FIXTURES / "fine_gold.txt"), str(FIXTURES / "fine_pred.txt")
    got, _ = run_json(capsys, "score", "amr", "--gold", gold, "--pred", pred, "--fine-grained", "--per-pair")
    report = score_files(predictions=pred, references=gold, fine_grained=True)
    assert got == {**report.scores, "per_pair": report.items}
    assert [item["id"] for item in got["per_pair"]] == [f"fine.{k}" for k in range(1, 7)]
    kept, _ = run_json(capsys, "score", "amr", "--gold", gold, "--pred", pred, "--keep-alignments")
    assert kept == score_files(predictions=pred, references=gold, keep_alignments=True).scores
    assert kept["f1"] < got["f1"]


def test_table(capsys):
    code, out, err = run(capsys, "score", "amr", "--fine-grained", "--per-pair")
    assert code == 0, err
    for name in ("Smatch", "Precision", "Recall", "F1", "Unlabeled", "No WSD", "Reentrancies", "SRL", "sample.10"):
        assert name in out
    f1 = score_files(predictions=PRED, references=GOLD).scores["f1"]
    assert f"{100 * f1:.2f}" in out and "10 of 10 graph pairs proven optimal" in out


def test_work_budget_warns_and_flags(capsys, tmp_path):
    p, g = unrelated_pair(0, 60)
    (tmp_path / "p.txt").write_text(p + "\n")
    (tmp_path / "g.txt").write_text(g + "\n")
    argv = ("score", "amr", "--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt"))
    got, err = run_json(capsys, *argv, "--work-limit", "1e6")
    assert got["pairs"] == 1 and got["pairs_optimal"] == 0 and "pairs_timed_out" not in got
    assert "1 of 1 graph pairs: the work budget of 1,000,000 units per pair ran out" in " ".join(err.split())
    assert "reproducible" not in err
    again, _ = run_json(capsys, *argv, "--work-limit", "1000000")
    assert again == got
    code, out, _ = run(capsys, *argv, "--work-limit", "1e6", "--per-pair")
    assert code == 0 and "Smatch 1 *" in out and "work budget" in " ".join(out.split())


def test_time_limit_says_figures_are_not_reproducible(capsys, tmp_path):
    p, g = unrelated_pair(0, 60)
    (tmp_path / "p.txt").write_text(p + "\n")
    (tmp_path / "g.txt").write_text(g + "\n")
    argv = ("score", "amr", "--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt"))
    got, err = run_json(capsys, *argv, "--work-limit", "none", "--time-limit", "0.05", "--per-pair")
    assert got["pairs_optimal"] == 0 and got["pairs_timed_out"] == 1 and got["per_pair"][0]["timed_out"]
    assert "not reproducible" in err and "time limit of 0.05 s per pair" in " ".join(err.split())
    code, out, _ = run(capsys, *argv, "--work-limit", "none", "--time-limit", "0.05")
    assert code == 0 and "not reproducible" in " ".join(out.split())


def test_malformed_file(capsys, tmp_path):
    bad = tmp_path / "bad.amr"
    bad.write_text("# ::id 1\n(a / b\n")
    code, _, err = run(capsys, "score", "amr", "--gold", str(bad), "--pred", str(bad))
    assert code == 1 and err.startswith(f"metametric-jax: error: {bad}:2: ") and "Traceback" not in err


def test_graph_count_mismatch(capsys, tmp_path):
    (tmp_path / "g.txt").write_text("(a / b)\n\n(c / d)\n")
    (tmp_path / "p.txt").write_text("(a / b)\n")
    code, _, err = run(capsys, "score", "amr", "--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt"))
    assert code == 1 and "1 graphs" in err and "has 2" in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["score", "amr", "--gold", "g.txt"], "--pred"),
        (["score", "amr", "--key", "k.txt"], "unrecognized"),
        (["score", "amr", "--time-limit", "0"], "positive number"),
        (["score", "amr", "--time-limit", "soon"], "positive number"),
        (["score", "amr", "--work-limit", "0"], "positive whole number"),
        (["score", "amr", "--work-limit", "1.5"], "positive whole number"),
        (["score", "amr", "--work-limit", "lots"], "positive whole number"),
    ],
)
def test_bad_usage_exits_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err


def test_empty_reference_file_warns(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    got, err = run_json(capsys, "score", "amr", "--gold", str(empty), "--pred", str(empty))
    assert got["f1"] == 0.0 and got["pairs"] == 0
    assert "holds no graphs" in err


def test_progress_on_request(capsys):
    code, _, err = run(capsys, "score", "amr", "--progress", "--format", "json")
    assert code == 0 and "amr: scoring graph pairs" in err


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        ("()", "expected '(variable / concept ...)'; found an empty graph '()'"),
        ("(w /)", "variable 'w' has no concept; expected '(w / concept ...)'"),
        ("(w / want-01 :ARG0)", "role ':ARG0' of variable 'w' has no value"),
    ],
)
@pytest.mark.parametrize("side", ["gold", "pred"])
def test_incomplete_graph_is_one_line_on_stderr(tmp_path, graph, message, side):
    """In a process of its own (no test logging handlers): penman's warning must not reach stderr."""
    bad = tmp_path / "bad.txt"
    bad.write_text(f"# ::id a\n(x / fine)\n\n# ::id b\n{graph}\n")
    good = tmp_path / "good.txt"
    good.write_text("(x / fine)\n\n(y / fine)\n")
    gold, pred = (bad, good) if side == "gold" else (good, bad)
    for extra in ([], ["--jobs", "2", "--fine-grained"]):
        proc = subprocess.run(
            [sys.executable, "-m", "metametric_jax", "score", "amr", "--gold", str(gold), "--pred", str(pred), *extra],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr == f"metametric-jax: error: {bad}:5: {message}\n"


def test_module_entry_point_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "metametric_jax", "score", "amr", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == score_files(predictions=PRED, references=GOLD).scores
    assert "bundled amr sample" in proc.stderr


def test_an_unparsable_graph_is_the_same_error_for_every_number_of_jobs(capsys, tmp_path):
    """Graphs are parsed where their pair is scored (in the workers with ``--jobs``): the first bad pair's error."""
    graphs = [f"(a{k} / cat-{k} :mod (b{k} / big))" for k in range(12)]
    gold, pred = list(graphs), list(graphs)
    pred[5] = "(a5 / cat :mod (b5 / big)"  # unbalanced
    gold[9] = "(a9 / cat :mod"
    gold_file, pred_file = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold_file.write_text("\n\n".join(gold) + "\n", encoding="utf-8")
    pred_file.write_text("\n\n".join(pred) + "\n", encoding="utf-8")
    errors = set()
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "score", "amr", "--gold", str(gold_file), "--pred", str(pred_file), "--jobs", jobs)
        assert code == 1 and out == "" and err.count("\n") == 1, err
        errors.add(err)
    assert errors == {
        f"metametric-jax: error: {pred_file}:11: unbalanced parentheses in the PENMAN graph: 2 '(' but 1 ')'\n"
    }
