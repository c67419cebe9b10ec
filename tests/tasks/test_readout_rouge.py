"""``score rouge``'s resampling rows and read-out: ``readout(exact_totals(rows))`` is the JSON of ``score rouge`` bit
for bit, at every path, on the bundled sample and generated files; the warnings are the same."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metametric_jax._ratios import Undefined  # a 0/0 ratio: 0.0, marked
from metametric_jax.cli import build_parser
from metametric_jax.commands import Resampling, registry
from metametric_jax.intervals import bootstrap, exact_totals, flatten
from metametric_jax.tasks import rouge

DATA = resources.files("metametric_jax") / "data" / "rouge"
SAMPLE = (str(DATA / "references.txt"), str(DATA / "predictions.txt"))


def _args(references: list[str | Path], predictions: str | Path, *options: str, progress: bool = False) -> Any:
    argv = ["score", "rouge", "--predictions", str(predictions)]
    for path in references:
        argv += ["--references", str(path)]
    parser = build_parser()
    args = parser.parse_args([*argv, *options])
    args.progress = progress
    command = registry()["rouge"]
    assert command.resolve is not None
    command.resolve(args, parser)
    return args


def _check(references: list[str | Path], predictions: str | Path, *options: str) -> Resampling:
    """``readout(exact_totals(rows))`` equals ``score rouge``'s figures at every path, with and without progress."""
    command = registry()["rouge"]
    assert command.resample is not None
    args = _args(references, predictions, *options)
    res = command.resample(args)
    scores, warnings = command.run(_args(references, predictions, *options))
    shown, _ = command.run(_args(references, predictions, *options, progress=True))
    rows = np.asarray(res.rows)
    assert rows.dtype == np.float64 and rows.shape[1] == 3 * len(args.types) + 1
    got = flatten(res.readout(exact_totals(rows)))
    assert set(got) == {f"{t}/{k}" for t in args.types for k in ("precision", "recall", "f1")}
    for path, value in got.items():
        kind, name = path.split("/")
        assert type(scores[kind][name]) in (float, Undefined) and value == scores[kind][name], (
            path,
            value,
            scores[kind][name],
        )
        assert value == shown[kind][name], path
    assert list(res.warnings) == list(warnings)
    assert res.unit == "examples"
    return res


@pytest.mark.parametrize("options", [(), ("--use-stemmer",), ("--types", "rouge3,rougeL,rouge1")])
def test_sample(options: tuple[str, ...]) -> None:
    _check([SAMPLE[0]], SAMPLE[1], *options)


def test_score_equals_the_readout_of_the_rows() -> None:
    preds, refs = rouge.read_pairs(SAMPLE[1], [SAMPLE[0]])
    stats = rouge.rouge_stats(preds, refs, rouge.DEFAULT_TYPES, multi_reference=True)
    expected = rouge.score(preds, refs, multi_reference=True)
    assert rouge.readout(exact_totals(rouge.example_rows(stats)), rouge.DEFAULT_TYPES) == expected


# ----------------------------------------------------------------------------------------------- generated files
_WORDS = "the a cat cats dog ran running runs sat on mat mats of and is was".split()


def _summary(rng: random.Random) -> str:
    lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(1, 3))]
    return "\n".join(lines)


def _write(path: Path, texts: list[str]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(t) + "\n" for t in texts))
    else:
        path.write_text("".join(t.replace("\n", " ") + "\n" for t in texts))
    return path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("suffix", [".txt", ".jsonl"])
def test_generated(tmp_path: Path, seed: int, suffix: str) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    preds = _write(tmp_path / f"pred{suffix}", [_summary(rng) for _ in range(n)])
    refs = [_write(tmp_path / f"ref{k}{suffix}", [_summary(rng) for _ in range(n)]) for k in range(rng.randint(1, 3))]
    _check(list(refs), preds)
    _check(list(refs), preds, "--use-stemmer", "--types", "rouge2,rougeLsum,rouge4")


def test_empty_predictions(tmp_path: Path) -> None:
    rng = random.Random(31)
    refs = _write(tmp_path / "ref.txt", [_summary(rng) for _ in range(7)])
    res = _check([refs], _write(tmp_path / "pred.txt", [""] * 7))
    assert all(v == 0.0 for v in flatten(res.readout(exact_totals(res.rows))).values())


def test_single_example(tmp_path: Path) -> None:
    res = _check([_write(tmp_path / "ref.txt", ["the cat sat"])], _write(tmp_path / "pred.txt", ["the cat ran"]))
    assert np.asarray(res.rows).shape[0] == 1


def test_no_examples(tmp_path: Path) -> None:
    res = _check([_write(tmp_path / "ref.txt", [])], _write(tmp_path / "pred.txt", []))
    assert np.asarray(res.rows).shape == (0, 13) and res.warnings


def test_readout_of_zero_and_weighted_totals() -> None:
    res = registry()["rouge"].resample(_args([SAMPLE[0]], SAMPLE[1]))  # type: ignore[misc]
    width = np.asarray(res.rows).shape[1]
    assert all(v == 0.0 for v in flatten(res.readout(np.zeros(width))).values())
    weights = np.linspace(0.0, 3.0, np.asarray(res.rows).shape[0])
    assert all(np.isfinite(v) for v in flatten(res.readout(weights @ res.rows)).values())  # type: ignore[arg-type]


def test_no_jax_on_the_resampling_path() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from metametric_jax.cli import build_parser
        from metametric_jax.commands import registry
        from metametric_jax.intervals import bootstrap
        parser = build_parser()
        args = parser.parse_args(["score", "rouge", "--references", {SAMPLE[0]!r}, "--predictions", {SAMPLE[1]!r}])
        args.progress = False
        registry()["rouge"].resolve(args, parser)
        res = registry()["rouge"].resample(args)
        bootstrap(res.readout, res.rows, samples=20, seed=0, level=0.9)
        print("jax" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_bootstrap_runs_on_the_rows() -> None:
    res = registry()["rouge"].resample(_args([SAMPLE[0]], SAMPLE[1]))  # type: ignore[misc]
    out = bootstrap(res.readout, res.rows, samples=50, seed=3, level=0.9)
    assert out["estimate"] == res.readout(exact_totals(res.rows))
