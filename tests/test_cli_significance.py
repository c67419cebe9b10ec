"""``score TASK --bootstrap`` and ``compare TASK``: every task with a resampling hook, end to end."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from metametric_jax.cli import build_parser, main
from metametric_jax.commands import registry
from metametric_jax.commands import resampling as resampling_cli

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


def run_json(capsys, *argv: str) -> dict:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_every_task_of_the_command_line_can_be_resampled() -> None:
    assert set(COMMANDS) == set(registry()) == {
        "amr", "constituency", "coref", "dependency", "ie", "ner", "ranking", "rouge"
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_bootstrap_estimate_equals_the_task_figures_and_intervals_hold_it(capsys, name: str) -> None:
    scores = run_json(capsys, "score", name, *sample_args(name), "--format", "json", "--bootstrap", "50")
    assert scores["replicates"] == 50 and scores["level"] == 0.95 and scores["seed"] == 0
    parser = build_parser()
    args = parser.parse_args(["score", name, *sample_args(name), "--bootstrap", "50"])
    args.progress = False
    if COMMANDS[name].resolve is not None:
        COMMANDS[name].resolve(args, args.parser_)
    boot = resampling_cli.bootstrap_intervals(COMMANDS[name], args)
    estimate = resampling_cli.flat_figures(boot["estimate"])
    assert estimate, "no figure was resampled"
    intervals = resampling_cli.flat_figures_pairs(scores["intervals"])
    assert set(intervals) == set(estimate)
    task = resampling_cli.flat_figures(
        {k: v for k, v in scores.items() if k not in ("intervals", "level", "replicates", "seed")}
    )
    for path, value in estimate.items():
        assert value == pytest.approx(task[path], abs=2e-6), path  # the hook resamples the task's own figures
        low, high = intervals[path]
        assert low - 1e-6 <= value <= high + 1e-6 or low == high, path


@pytest.mark.parametrize("method", ["bootstrap", "randomization"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_compare_a_system_with_itself(capsys, tmp_path: Path, name: str, method: str) -> None:
    command = COMMANDS[name]
    argv = sample_args(name)
    system = argv[argv.index(f"--{command.inputs[1].replace('_', '-')}") + 1]
    copy = tmp_path / ("copy" + Path(system).suffix)
    shutil.copy(system, copy)
    reference_args = argv[: argv.index(f"--{command.inputs[1].replace('_', '-')}")]
    reference_args = [a if not a.startswith("--") else "--references" for a in reference_args]
    out = run_json(
        capsys,
        "compare",
        name,
        *reference_args,
        "--system",
        system,
        "--system",
        str(copy),
        "--method",
        method,
        "--samples",
        "40",
        "--format",
        "json",
    )
    assert set(out) >= {"a", "b", "delta", "p_value", "method", "samples", "seed", "level"}
    assert out["a"] == out["b"]
    assert all(v == 0.0 for v in resampling_cli.flat_figures(out["delta"]).values())
    assert all(v == 1.0 for v in resampling_cli.flat_figures(out["p_value"]).values())
    if method == "bootstrap":
        assert set(resampling_cli.flat_figures(out["low"])) == set(resampling_cli.flat_figures(out["a"]))


def test_compare_needs_two_systems_and_the_references(capsys) -> None:
    argv = sample_args("ie")
    assert main(["compare", "ie", "--system", argv[3]]) == 2
    assert "exactly two" in capsys.readouterr().err
    assert main(["compare", "ie", "--system", argv[3], "--system", argv[3]]) == 2
    assert "--references" in capsys.readouterr().err
    assert main(["score", "ie", *argv, "--bootstrap", "1"]) == 2
