"""``metametric-jax score ranking``: trec_eval's figures for the sample and the trec_eval fixtures, options, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run

from metametric_jax.cli import LARGE_INPUT
from metametric_jax.tasks.ranking import score_files

DATA = Path(__file__).parents[1] / "data" / "ranking"
SAMPLE = Path(__file__).parents[2] / "metametric_jax" / "data" / "ranking"


def trec_eval_output(name: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in (DATA / "expected" / f"{name}.txt").read_text().splitlines():
        measure, qid, value = line.split()
        out.setdefault(qid, {})[measure] = value
    return out


def shown(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def test_sample_equals_trec_eval_default(capsys) -> None:
    code, out, err = run(capsys, "score", "ranking", "--format", "json", "--per-query")
    assert code == 0, err
    assert "bundled ranking sample" in err
    got = json.loads(out)
    expected = trec_eval_output("sample")  # trec_eval -q -m all_trec on the sample
    assert list(got["all"])[:5] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    for qid, figures in [("all", got["all"]), *got["per_query"].items()]:
        assert figures, qid
        for measure, value in figures.items():
            assert shown(value) == expected[qid][measure], (qid, measure)
    assert set(got["per_query"]) == set(expected) - {"all"}


def test_trec_eval_options(capsys) -> None:
    argv = ["score", "ranking", "--qrels", str(DATA / "ties-complete.qrels"), "--run", str(DATA / "ties.run")]
    code, out, err = run(capsys, *argv, "-c", "-m", "all_trec", "--format", "json")
    assert code == 0, err
    expected = trec_eval_output("ties-complete-c")["all"]
    got = json.loads(out)
    assert "per_query" not in got
    assert list(got["all"]) == [k for k in expected if k != "runid"]  # every figure, in trec_eval's order
    assert {k: shown(v) for k, v in got["all"].items()} == {k: v for k, v in expected.items() if k != "runid"}
    assert len(got["all"]) == 98
    code, out, err = run(capsys, *argv, "-c", "-m", "all", "--format", "json")
    assert code == 0 and json.loads(out) == got
    code, out, err = run(capsys, *argv, "-l", "3", "-m", "ndcg_cut.10", "-m", "P.5", "--format", "json")
    assert code == 0
    assert "warning: 1 query left out, ranked in" in err and "warning: 1 query left out, judged in" in err
    levels = trec_eval_output("ties-l3")["all"]
    assert {k: shown(v) for k, v in json.loads(out)["all"].items()} == {
        k: levels[k] for k in ("map", "P_5", "ndcg_cut_10")
    }
    code, out, _ = run(capsys, *argv, "-M", "5", "-m", "num_ret", "--format", "json")
    assert json.loads(out)["all"]["num_ret"] == 12 * 5  # q12 is not ranked, q13 not judged


def test_table(capsys) -> None:
    code, out, _ = run(capsys, "score", "ranking", "-m", "map", "--per-query")
    assert code == 0
    assert "map" in out and "Q1" in out and "all" in out and "0.2932" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-m", "mapp"], "unknown measure 'mapp'"),
        (["-m", "P.0"], "positive integers"),
        (["-l", "x"], "non-negative integer"),
        (["-M", "-1"], "non-negative integer"),
        (["-m", "P.7,3,3"], "a cut-off is given twice"),
        (["--format", "json", "-m", "ndcg_cut.10,10"], "a cut-off is given twice"),
        (["-m", "iprec_at_recall.0.1,0.10"], "a cut-off is given twice"),
    ],
)
def test_usage_errors(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, "score", "ranking", *argv)
    assert code == 2 and not out
    assert message in err and "Traceback" not in err


def test_cut_offs_in_several_names_are_merged(capsys) -> None:
    """trec_eval refuses ``P.5,5``; cut-offs given again in another ``-m`` are merged (the table and JSON)."""
    from metametric_jax.tasks.trec_measures import parse_measures

    with pytest.raises(ValueError, match="given twice"):
        parse_measures(["P.5,5"])
    assert parse_measures(["P.5", "P.5,10"]) == (("P", 5), ("P", 10))
    code, out, err = run(capsys, "score", "ranking", "--format", "json", "-m", "P.5", "-m", "P.5,10")
    assert code == 0, err
    assert list(json.loads(out)["all"]) == ["map", "P_5", "P_10"]


def test_input_errors(capsys, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 d 1\nq 0 e\n")
    runfile = tmp_path / "run"
    runfile.write_text("q Q0 d 1 1 r\n")
    code, _, err = run(capsys, "score", "ranking", "--qrels", str(qrels), "--run", str(runfile))
    assert code == 1
    assert f"{qrels}:2: expected 4 fields" in err and "Traceback" not in err
    code, _, err = run(capsys, "score", "ranking", "--qrels", str(tmp_path / "missing"), "--run", str(runfile))
    assert code == 1 and "missing" in err
    code, _, err = run(capsys, "score", "ranking", "--qrels", str(qrels))
    assert code == 2 and "--run" in err


def test_progress_bar(capsys, tmp_path: Path) -> None:
    n = LARGE_INPUT
    (tmp_path / "q").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(n)))
    (tmp_path / "r").write_text("".join(f"q{i} Q0 d{i} 1 1 r\n" for i in range(n)))
    code, out, err = run(capsys, "score", "ranking", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"))
    assert code == 0
    assert "ranking: scoring queries" in err
    code, _, err = run(
        capsys, "score", "ranking", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "--no-progress"
    )
    assert code == 0 and "scoring queries" not in err


def test_cli_equals_score_files(capsys) -> None:
    code, out, _ = run(
        capsys,
        "score",
        "ranking",
        "--qrels",
        str(DATA / "trec_eval" / "qrels.test"),
        "--run",
        str(DATA / "trec_eval" / "results.test"),
        "--per-query",
        "-m",
        "all",
        "--format",
        "json",
    )
    report = score_files(
        predictions=DATA / "trec_eval" / "results.test", references=DATA / "trec_eval" / "qrels.test", measures="all"
    )
    got = json.loads(out)
    assert got["all"] == report.scores
    assert got["per_query"] == {item["id"]: {k: v for k, v in item.items() if k != "id"} for item in report.items}
    files = ["--qrels", str(DATA / "trec_eval" / "qrels.test"), "--run", str(DATA / "trec_eval" / "results.test")]
    code, out, _ = run(capsys, "score", "ranking", *files, "-m", "all", "--format", "json")  # no per-query items
    assert code == 0 and json.loads(out) == {"all": report.scores}


# What scoring TREC files never needs: JAX, and the similarities and portable metric classes of the accumulators.
NOT_IMPORTED = ("jax", "metametric_jax.similarity", "metametric_jax._portable", "metametric_jax.explain")


@pytest.mark.parametrize("form", ["table", "json", "trec"])
def test_scoring_imports_only_the_file_scoring(form: str) -> None:
    code = (
        "import sys; from metametric_jax.cli import main; "
        f"status = main(['score', 'ranking', '--format', {form!r}, '--qrels', {str(SAMPLE / 'sample.qrels')!r}, "
        f"'--run', {str(SAMPLE / 'sample.run')!r}]); "
        f"print(status, sorted(m for m in {NOT_IMPORTED!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "0 []", done.stderr
