"""``score ie``'s resampling rows and read-out: ``readout(exact_totals(rows))`` is the JSON of ``score ie`` bit for
bit, at every path, on the bundled sample and generated files; the warnings are the same."""

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
from metametric_jax.tasks import ie

DATA = resources.files("metametric_jax") / "data" / "ie"
SAMPLE = (str(DATA / "gold.jsonl"), str(DATA / "pred.jsonl"))


def _args(gold: str | Path, pred: str | Path, *options: str) -> Any:
    args = build_parser().parse_args(["score", "ie", "--gold", str(gold), "--pred", str(pred), *options])
    args.progress = False
    return args


def _check(gold: str | Path, pred: str | Path, *options: str) -> Resampling:
    """``readout(exact_totals(rows))`` equals ``score ie``'s figures at every path; the warnings are equal."""
    command = registry()["ie"]
    assert command.resample is not None
    res = command.resample(_args(gold, pred, *options))
    scores, warnings = command.run(_args(gold, pred, *options))
    rows = np.asarray(res.rows)
    assert rows.dtype == np.float64 and rows.shape == (scores["documents"], 3 * len(ie.FIGURES))
    got = flatten(res.readout(exact_totals(rows)))
    assert set(got) == {f"{f}/{k}" for f in ie.FIGURES for k in ("precision", "recall", "f1")}
    for path, value in got.items():
        figure, name = path.split("/")
        assert type(scores[figure][name]) in (float, Undefined) and value == scores[figure][name], (path, value)
    assert list(res.warnings) == list(warnings)
    assert res.unit == "documents"
    return res


@pytest.mark.parametrize("options", [(), ("--mode", "boundaries"), ("--undirected",)])
def test_sample(options: tuple[str, ...]) -> None:
    _check(*SAMPLE, *options)


# ----------------------------------------------------------------------------------------------- generated files
def _document(rng: random.Random, k: int) -> dict[str, Any]:
    entities = []
    for _ in range(rng.randint(0, 5)):
        start = rng.randrange(8)
        entities.append({"start": start, "end": start + rng.choice((1, 1, 2)), "type": rng.choice("AB")})
    relations = []
    events = []
    if entities:
        for _ in range(rng.randint(0, 3)):
            head, tail = rng.randrange(len(entities)), rng.randrange(len(entities))
            relations.append({"type": rng.choice(("R", "S")), "head": head, "tail": tail})
        for _ in range(rng.randint(0, 2)):
            start = rng.randrange(8)
            arguments = [
                {"entity": rng.randrange(len(entities)), "role": rng.choice(("x", "y"))}
                for _ in range(rng.randint(0, 3))
            ]
            events.append(
                {"type": rng.choice(("E", "F")), "trigger": {"start": start, "end": start + 1}, "arguments": arguments}
            )
    return {"id": f"d{k}", "entities": entities, "relations": relations, "events": events}


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


@pytest.mark.parametrize("seed", range(8))
def test_generated(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    gold = _write(tmp_path / "gold.jsonl", [_document(rng, k) for k in range(n)])
    pred = _write(tmp_path / "pred.jsonl", [_document(rng, k) for k in range(n)])
    for options in [(), ("--mode", "boundaries"), ("--undirected",)]:
        _check(gold, pred, *options)


def test_empty_prediction(tmp_path: Path) -> None:
    rng = random.Random(21)
    gold = _write(tmp_path / "gold.jsonl", [_document(rng, k) for k in range(5)])
    res = _check(gold, _write(tmp_path / "pred.jsonl", [{"id": f"d{k}"} for k in range(5)]))
    assert res.warnings  # the predictions hold no entities (nor relations, events)


def test_single_document(tmp_path: Path) -> None:
    rng = random.Random(22)
    gold = _write(tmp_path / "gold.jsonl", [_document(rng, 0)])
    res = _check(gold, _write(tmp_path / "pred.jsonl", [_document(rng, 0)]))
    assert np.asarray(res.rows).shape[0] == 1


def test_empty_files(tmp_path: Path) -> None:
    res = _check(_write(tmp_path / "gold.jsonl", []), _write(tmp_path / "pred.jsonl", []))
    assert np.asarray(res.rows).shape == (0, 12) and res.warnings


def test_readout_of_zero_and_weighted_totals() -> None:
    res = registry()["ie"].resample(_args(*SAMPLE))  # type: ignore[misc]
    assert all(v == 0.0 for v in flatten(res.readout(np.zeros(12))).values())
    weights = np.linspace(0.0, 2.0, np.asarray(res.rows).shape[0])
    assert all(np.isfinite(v) for v in flatten(res.readout(weights @ res.rows)).values())  # type: ignore[arg-type]


def test_no_jax_on_the_resampling_path() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from metametric_jax.cli import build_parser
        from metametric_jax.commands import registry
        from metametric_jax.intervals import bootstrap
        args = build_parser().parse_args(["score", "ie", "--gold", {SAMPLE[0]!r}, "--pred", {SAMPLE[1]!r}])
        args.progress = False
        res = registry()["ie"].resample(args)
        bootstrap(res.readout, res.rows, samples=20, seed=0, level=0.9)
        print("jax" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_bootstrap_runs_on_the_rows() -> None:
    res = registry()["ie"].resample(_args(*SAMPLE))  # type: ignore[misc]
    out = bootstrap(res.readout, res.rows, samples=50, seed=3, level=0.9)
    assert out["estimate"] == res.readout(exact_totals(res.rows))
