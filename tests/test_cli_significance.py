"""``score TASK --bootstrap`` and ``compare TASK``: every task with a resampling hook, end to end.

The second number is held to the first one's standard: the figures beside an interval and in a comparison are the
task's ``score`` figures bit for bit, the test is stated, the JSON is strict and bad requests end in one line.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from helpers import cli_json as run_json
from helpers import run

from metametric_jax.cli import main
from metametric_jax.commands import registry
from metametric_jax.intervals import flatten

COMMANDS = {name: c for name, c in registry().items() if c.resample is not None}
DATA = resources.files("metametric_jax") / "data"


def sample_args(name: str, *extra: str) -> list[str]:
    command = COMMANDS[name]
    out: list[str] = []
    for dest in command.inputs:
        files = command.sample[dest]
        for f in [files] if isinstance(files, str) else files:
            out += [f"--{dest.replace('_', '-')}", str(DATA.joinpath(*f.split("/")))]
    return out + list(extra)


def split_sample(name: str) -> tuple[list[str], str]:
    """The reference options as ``compare`` takes them, and the sample system file."""
    command = COMMANDS[name]
    argv = sample_args(name)
    flag = f"--{command.inputs[1].replace('_', '-')}"
    system = argv[argv.index(flag) + 1]
    reference = argv[: argv.index(flag)]
    return [a if not a.startswith("--") else "--references" for a in reference], system


def numbers(tree: Any, prefix: str = "") -> dict[str, Any]:
    """``{"muc/f1": value}`` of the numeric (or null) leaves of a JSON tree (strings and lists left out)."""
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for k, v in tree.items():
            out.update(numbers(v, f"{prefix}{k}/"))
        return out
    if tree is None or (isinstance(tree, (int, float)) and not isinstance(tree, bool)):
        return {prefix.rstrip("/"): tree}
    return {}


def test_every_task_of_the_command_line_can_be_resampled() -> None:
    assert set(COMMANDS) == set(registry()) == {
        "amr", "constituency", "coref", "dependency", "ie", "ner", "ranking", "rouge"
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_bootstrap_estimate_is_the_score_bit_for_bit_and_the_interval_holds_it(capsys, name: str) -> None:
    scores = run_json(capsys, "score", name, *sample_args(name), "--format", "json", "--bootstrap", "50")
    assert scores["replicates"] == 50 and scores["level"] == 0.95 and scores["seed"] == 0
    test = scores["test"]
    assert test["sided"] == "two-sided" and test["samples"] == 50 and test["n"] > 0 and test["unit"]
    intervals = flatten(_pairs(scores["intervals"]))
    assert intervals, "no figure was resampled"
    task = numbers({k: v for k, v in scores.items() if k not in ("intervals", "stderr", "test")})
    for path in {p.rsplit("/", 1)[0] for p in intervals}:
        value = task[path]
        low, high = intervals[f"{path}/0"], intervals[f"{path}/1"]
        if low is not None:
            assert low - 1e-12 <= value <= high + 1e-12 or low == high, path


def _pairs(tree: dict) -> dict:
    return {k: _pairs(v) if isinstance(v, dict) else {"0": v[0], "1": v[1]} for k, v in tree.items()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_compare_figures_are_the_score_figures_bit_for_bit(capsys, tmp_path: Path, name: str) -> None:
    reference, system = split_sample(name)
    command = COMMANDS[name]
    gold = reference[1::2]
    side = f"--{command.inputs[1].replace('_', '-')}"
    ref_args = [x for g in gold for x in (f"--{command.inputs[0].replace('_', '-')}", g)]
    scored = numbers(run_json(capsys, "score", name, *ref_args, side, system, "--format", "json"))
    other = str(tmp_path / ("copy" + Path(system).suffix)) if name in ("ranking", "rouge") else gold[0]
    if name in ("ranking", "rouge"):
        shutil.copy(system, other)
    for method in ("bootstrap", "randomization"):
        out = run_json(
            capsys, "compare", name, *reference, "--system", system, "--system", other,
            "--method", method, "--samples", "30", "--format", "json",
        )  # fmt: skip
        a = flatten(out["a"])
        assert a
        for path, value in a.items():
            assert value == scored[path], (method, path)  # the same read-out: no float32 rounding, same scale
        delta = flatten(out["delta"])
        b = flatten(out["b"])
        for path in a:
            if a[path] is not None and b[path] is not None:
                assert delta[path] == a[path] - b[path]


@pytest.mark.parametrize("method", ["bootstrap", "randomization"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_compare_a_system_with_itself(capsys, tmp_path: Path, name: str, method: str) -> None:
    reference, system = split_sample(name)
    copy = tmp_path / ("copy" + Path(system).suffix)
    shutil.copy(system, copy)
    out = run_json(
        capsys, "compare", name, *reference, "--system", system, "--system", str(copy),
        "--method", method, "--samples", "40", "--format", "json",
    )  # fmt: skip
    test = out["test"]
    assert test["sided"] == "two-sided" and test["samples"] == 40 and test["seed"] == 0 and test["n"] >= 1
    assert test["method"] == ("paired_bootstrap" if method == "bootstrap" else "randomization")
    assert isinstance(out["warnings"], list)
    assert out["a"] == out["b"]
    assert all(v in (0.0, None) for v in flatten(out["delta"]).values())
    assert all(v in (1.0, None) for v in flatten(out["p_value"]).values())
    if method == "bootstrap":
        assert set(flatten(out["low"])) == set(flatten(out["a"]))
        assert "level" in test


def test_compare_states_the_unit_and_warns_below_30_units(capsys) -> None:
    reference, system = split_sample("coref")
    code, out, err = run(capsys, "compare", "coref", *reference, "--system", system, "--system", reference[1])
    assert code == 0
    assert "two-sided" in out and "documents" in out and "Monte Carlo" in out
    assert "randomization" in err and "fewer than 30" in err
    got = run_json(
        capsys, "compare", "coref", *reference, "--system", system, "--system", reference[1], "--format", "json"
    )
    assert got["test"]["unit"] == "documents" and got["test"]["n"] == 3
    assert any("fewer than 30" in w for w in got["warnings"])
    p, e = flatten(got["p_value"]), flatten(got["p_error"])
    for path, value in p.items():
        if value is not None:
            assert 1 / 1001 <= value <= 1 and e[path] == pytest.approx(math.sqrt(value * (1 - value) / 1000), rel=0.2)


def test_p_value_floor_is_stated(capsys, tmp_path: Path) -> None:
    reference, system = split_sample("ner")
    empty = tmp_path / "o.txt"
    lines = Path(reference[1]).read_text().splitlines()
    empty.write_text("\n".join(" ".join(ln.split()[:-1] + ["O"]) if ln.strip() else ln for ln in lines) + "\n")
    got = run_json(
        capsys, "compare", "ner", *reference, "--system", reference[1], "--system", str(empty),
        "--samples", "20", "--unit", "sentence", "--format", "json",
    )  # fmt: skip
    assert got["p_value"]["f1"] == pytest.approx(1 / 21)
    assert any("floor" in w for w in got["warnings"])


def test_ranking_interval_table_is_on_the_score_table_scale(capsys) -> None:
    code, out, err = run(capsys, "score", "ranking", *sample_args("ranking"), "--bootstrap", "30")
    assert code == 0, err
    score = run_json(capsys, "score", "ranking", *sample_args("ranking"), "--format", "json")
    value = score["all"]["map"]
    assert f"{value:.4f}" in out and f"{100 * value:.2f}" not in out


def test_coref_tables_print_every_figure_as_score_does(capsys, tmp_path: Path) -> None:
    # scorer.pl cuts its percentages (int(x * 10000) / 100): score's table does, and so do the estimates beside the
    # intervals, compare's columns and analyze's tables (a rounded copy would print 56.00 for score's 55.99)
    score = run_json(capsys, "score", "coref", *sample_args("coref"), "--format", "json")
    cut = {k: f"{math.trunc(v * 10000) / 100:.2f}" for k, v in numbers(score).items() if k.endswith("/f1")}
    assert any(f"{100 * float(numbers(score)[k]):.2f}" != v for k, v in cut.items())  # rounding would differ here
    code, table, err = run(capsys, "score", "coref", *sample_args("coref"))
    assert code == 0, err
    assert all(v in table for v in cut.values())
    code, out, err = run(capsys, "score", "coref", *sample_args("coref"), "--bootstrap", "20")
    assert code == 0, err
    estimates = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines() if "/f1 " in line}
    assert estimates and all(estimates[k] == cut[k] for k in estimates), (estimates, cut)
    assert "truncated" in out
    reference, system = split_sample("coref")
    code, out, err = run(
        capsys, "compare", "coref", *reference, "--system", system, "--system", system, "--samples", "20"
    )
    assert code == 0, err
    columns = {line.split("│")[1].strip(): line.split("│")[2:4] for line in out.splitlines() if "/f1 " in line}
    assert columns and all([c.strip() for c in columns[k]] == [cut[k]] * 2 for k in columns), (columns, cut)
    report = run_json(capsys, "analyze", "coref", *reference, "--system", system, "--samples", "20", "--format", "json")
    assert report["truncated"] is True and report["scale"] == 100
    code, out, err = run(capsys, "analyze", "coref", *reference, "--system", system, "--samples", "20")
    assert code == 0, err
    overall = next(line for line in out.splitlines() if line.startswith("│ all"))
    shown = {"muc/f1": "muc", "bcub/f1": "bcub", "ceafe/f1": "ceafe", "lea/f1": "lea"}
    assert all(cut[k] in overall for k in shown if k in cut), (overall, cut)


def test_a_type_absent_from_a_replicate_is_left_out_of_its_interval(capsys, tmp_path: Path) -> None:
    # 30 sentences, one PER found right, LOC elsewhere: a replicate without the PER sentence has no PER precision
    # (0/0, which score prints as 0); it is left out of PER's interval, not counted as 0
    gold, pred = [], []
    for k in range(30):
        tag = "B-PER" if k == 0 else "B-LOC"
        gold.append(f"w{k} {tag}\nx O\n")
        pred.append(f"w{k} {tag if k % 4 else 'O'}\nx O\n" if k else f"w{k} {tag}\nx O\n")
    (tmp_path / "g.txt").write_text("\n".join(gold))
    (tmp_path / "p.txt").write_text("\n".join(pred))
    files = ["--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt")]
    got = run_json(capsys, "score", "ner", *files, "--bootstrap", "400", "--seed", "1", "--format", "json")
    assert got["per_type"]["PER"]["precision"] == 1.0
    assert got["intervals"]["per_type"]["PER"]["precision"] == [1.0, 1.0]
    assert got["intervals"]["per_type"]["PER"]["f1"] == [1.0, 1.0] and got["stderr"]["per_type"]["PER"]["f1"] == 0.0
    low, high = got["intervals"]["per_type"]["LOC"]["recall"]
    assert 0 < low < high < 1


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_compare_on_an_empty_reference_is_one_line(capsys, tmp_path: Path, name: str) -> None:
    reference, system = split_sample(name)
    empty = tmp_path / ("empty" + Path(reference[1]).suffix)
    empty.write_text("")
    refs = ["--references", str(empty)]
    code, out, err = run(capsys, "compare", name, *refs, "--system", system, "--system", system)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("metametric-jax: error:") and "Traceback" not in err


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if c.analyze is not None))
def test_analyze_on_an_empty_reference_is_one_line_as_compare(capsys, tmp_path: Path, name: str) -> None:
    reference, system = split_sample(name)
    empty = tmp_path / ("empty" + Path(reference[1]).suffix)
    empty.write_text("")
    argv = ["--references", str(empty), "--system", str(empty), "--system", str(empty), "--samples", "10"]
    code, out, err = run(capsys, "analyze", name, *argv)
    assert code == 1 and out == "", err
    assert err.count("\n") == 1 and err.startswith("metametric-jax: error:") and "Traceback" not in err
    code, out, err2 = run(capsys, "compare", name, *argv[:-2], "--samples", "10")
    assert code == 1 and out == "" and err2.count("\n") == 1


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_bootstrap_on_an_empty_input_is_strict_json(capsys, tmp_path: Path, name: str) -> None:
    command = COMMANDS[name]
    empty = tmp_path / ("empty" + Path(split_sample(name)[0][1]).suffix)
    empty.write_text("")
    argv = [x for dest in command.inputs for x in (f"--{dest.replace('_', '-')}", str(empty))]
    code, out, err = run(capsys, "score", name, *argv, "--bootstrap", "20", "--format", "json")
    if code == 0:
        got = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
        assert got["test"]["n"] == 0
    else:
        assert code == 1 and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["score", "compare"])
def test_absurd_numbers_of_samples_are_refused_before_allocating(capsys, command: str) -> None:
    argv = ["score", "ner", *sample_args("ner"), "--bootstrap", "100000000"]
    if command == "compare":
        reference, system = split_sample("ner")
        argv = ["compare", "ner", *reference, "--system", system, "--system", system, "--samples", "100000000"]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "GiB" in err and "Traceback" not in err


def test_compare_needs_two_systems_and_the_references(capsys) -> None:
    argv = sample_args("ie")
    assert main(["compare", "ie", "--system", argv[3]]) == 2
    assert "exactly two" in capsys.readouterr().err
    assert main(["compare", "ie", "--system", argv[3], "--system", argv[3]]) == 2
    assert "--references" in capsys.readouterr().err
    assert main(["score", "ie", *argv, "--bootstrap", "1"]) == 2


@pytest.mark.slow
def test_compare_and_bootstrap_import_no_jax() -> None:
    reference, system = split_sample("ner")
    code = (
        "import sys\nfrom metametric_jax.cli import main\n"
        f"assert main(['compare', 'ner', *{reference!r}, '--system', {system!r}, '--system', {system!r},"
        " '--format', 'json']) == 0\n"
        f"assert main(['score', 'ner', *{sample_args('ner')!r}, '--bootstrap', '100', '--format', 'json']) == 0\n"
        "print('JAX' if 'jax' in sys.modules else 'NOJAX', file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("NOJAX")


def test_compare_gives_each_warning_once_naming_its_file_once(capsys, tmp_path: Path) -> None:
    """The reference's warning (both systems read it) once, as analyze gives it; a system's own warning, which
    names its file, without the file named twice; one that does not name it, after its file."""
    gold = str(DATA / "ner" / "gold.txt")  # its -DOCSTART- lines: a warning about the reference
    code, _, err = run(capsys, "compare", "ner", "--references", gold, "--system", gold, "--system", gold)
    assert code == 0 and err.count("-DOCSTART-") == 1, err
    trees = (Path(__file__).parent / "data" / "constituency" / "gold.mrg").read_text().splitlines()[:40]
    reference, failed = tmp_path / "gold.mrg", tmp_path / "failed.mrg"
    reference.write_text("\n".join(trees) + "\n")
    failed.write_text("\n".join("" if k % 10 == 0 else t for k, t in enumerate(trees)) + "\n")  # empty parses
    code, _, err = run(
        capsys, "compare", "constituency", "--gold", str(reference), "--system", str(failed), "--system", str(reference)
    )
    skipped = [line for line in err.splitlines() if "empty parse" in line]
    assert code == 0 and len(skipped) == 1 and skipped[0].count(str(failed)) == 1, err
