"""``score amr``'s resampling rows and read-out: ``readout(exact_totals(rows))`` is the JSON of ``score amr`` bit for
bit, at every path (fine-grained scores too), on the bundled sample and generated files; the warnings are the same."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from amr_graphs import random_pairs

from metametric_jax._ratios import Undefined  # a 0/0 ratio: 0.0, marked
from metametric_jax.cli import build_parser
from metametric_jax.commands import Resampling, registry
from metametric_jax.intervals import bootstrap, exact_totals, flatten
from metametric_jax.tasks import amr_fine

DATA = resources.files("metametric_jax") / "data" / "amr"
SAMPLE = (str(DATA / "gold.txt"), str(DATA / "pred.txt"))
_FIGURES = ("precision", "recall", "f1")


def _args(gold: str | Path, pred: str | Path, *options: str) -> Any:
    args = build_parser().parse_args(["score", "amr", "--gold", str(gold), "--pred", str(pred), *options])
    args.progress = False
    return args


def _check(gold: str | Path, pred: str | Path, *options: str) -> Resampling:
    """``readout(exact_totals(rows))`` equals ``score amr``'s figures at every path; the warnings are equal."""
    command = registry()["amr"]
    assert command.resample is not None
    res = command.resample(_args(gold, pred, *options))
    scores, warnings = command.run(_args(gold, pred, *options))
    fine = "--fine-grained" in options
    rows = np.asarray(res.rows)
    assert rows.dtype == np.float64 and rows.shape == (scores["pairs"], 3 + 3 * len(amr_fine.NAMES) * fine)
    got = flatten(res.readout(exact_totals(rows)))
    expected_paths = set(_FIGURES) | ({f"{n}/{k}" for n in amr_fine.NAMES for k in _FIGURES} if fine else set())
    assert set(got) == expected_paths
    for path, value in got.items():
        node: Any = scores
        for part in path.split("/"):
            node = node[part]
        assert type(node) in (float, Undefined) and value == node, (path, value, node)
    assert list(res.warnings) == list(warnings)
    assert res.unit == "graph pairs" and res.ids is not None and len(res.ids) == scores["pairs"]
    return res


@pytest.mark.parametrize("options", [(), ("--fine-grained",), ("--keep-alignments",)])
def test_sample(options: tuple[str, ...]) -> None:
    res = _check(*SAMPLE, *options)
    assert res.ids is not None and res.ids[0] == "sample.1"


def _write(path: Path, graphs: list[str]) -> Path:
    path.write_text("".join(g + "\n\n" for g in graphs))
    return path


@pytest.mark.parametrize("seed", range(4))
def test_generated(tmp_path: Path, seed: int) -> None:
    pairs = random_pairs(seed, 12 + 4 * seed, 3 + seed)
    pred = _write(tmp_path / "pred.txt", [p for p, _ in pairs])
    gold = _write(tmp_path / "gold.txt", [g for _, g in pairs])
    _check(gold, pred)
    _check(gold, pred, "--fine-grained")


def test_single_pair_and_a_bare_prediction(tmp_path: Path) -> None:
    ((pred_graph, gold_graph),) = random_pairs(7, 16, 1)
    res = _check(_write(tmp_path / "gold.txt", [gold_graph]), _write(tmp_path / "pred.txt", [pred_graph]))
    assert np.asarray(res.rows).shape[0] == 1
    _check(tmp_path / "gold.txt", _write(tmp_path / "bare.txt", ["(x / nothing)"]), "--fine-grained")


def test_mismatched_ids_warn_the_same(tmp_path: Path) -> None:
    pairs = random_pairs(8, 12, 2)
    gold = _write(tmp_path / "gold.txt", [f"# ::id g{k}\n{g}" for k, (_, g) in enumerate(pairs)])
    pred = _write(tmp_path / "pred.txt", [f"# ::id p{k}\n{p}" for k, (p, _) in enumerate(pairs)])
    res = _check(gold, pred)
    assert res.warnings and res.ids == ["g0", "g1"]


def test_no_graphs(tmp_path: Path) -> None:
    res = _check(_write(tmp_path / "gold.txt", []), _write(tmp_path / "pred.txt", []), "--fine-grained")
    assert np.asarray(res.rows).shape[0] == 0 and res.warnings


def test_readout_of_zero_and_weighted_totals() -> None:
    res = registry()["amr"].resample(_args(*SAMPLE, "--fine-grained"))  # type: ignore[misc]
    width = np.asarray(res.rows).shape[1]
    assert all(v == 0.0 for v in flatten(res.readout(np.zeros(width))).values())
    weights = np.linspace(0.0, 2.0, np.asarray(res.rows).shape[0])
    assert all(np.isfinite(v) for v in flatten(res.readout(weights @ res.rows)).values())  # type: ignore[arg-type]


def test_no_jax_on_the_resampling_path() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from metametric_jax.cli import build_parser
        from metametric_jax.commands import registry
        from metametric_jax.intervals import bootstrap
        args = build_parser().parse_args(["score", "amr", "--gold", {SAMPLE[0]!r}, "--pred", {SAMPLE[1]!r}])
        args.progress = False
        res = registry()["amr"].resample(args)
        bootstrap(res.readout, res.rows, samples=20, seed=0, level=0.9)
        print("jax" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_bootstrap_runs_on_the_rows() -> None:
    res = registry()["amr"].resample(_args(*SAMPLE))  # type: ignore[misc]
    out = bootstrap(res.readout, res.rows, samples=50, seed=3, level=0.9)
    assert out["estimate"] == res.readout(exact_totals(res.rows))
