"""The second number is a pure function of the input: the same bits whatever BLAS kernel or NumPy version runs it.

A float64 matrix product adds in an order that its BLAS kernel chooses, and OpenBLAS picks its kernel by processor
(``OPENBLAS_CORETYPE`` forces one, as another machine would): the replicate sums are exact instead
(:class:`~metametric_jax.intervals.WeightedSums`). NumPy's standard deviation and quantile may change their summation
between versions: the standard error and the interval's ends are computed in Python floats with sums rounded once.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import sys
from fractions import Fraction
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from metametric_jax import intervals

DATA = resources.files("metametric_jax") / "data"


def _rows(seed: int, n: int = 2000, d: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random((n, d)) * 10.0 ** rng.integers(-4, 4, size=(1, d)) * rng.choice([-1.0, 1.0], size=(n, d))


def _exact(w: np.ndarray, rows: np.ndarray) -> list[list[Fraction]]:
    frac = [[Fraction(x) for x in col] for col in rows.T.tolist()]
    return [[sum((Fraction(int(wi)) * x for wi, x in zip(row, col) if wi), Fraction(0)) for col in frac] for row in w]


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_sums_are_exact_sums_rounded_in_a_fixed_way(seed: int) -> None:
    rows = _rows(seed, n=300, d=5)
    w = intervals.poisson_weights(np.arange(300), 6, seed=seed)
    got = intervals.WeightedSums(rows)(w)
    for j, row in enumerate(_exact(w, rows)):
        for k, value in enumerate(row):
            assert abs(Fraction(float(got[j, k])) - value) <= abs(value) * Fraction(2, 2**53), (j, k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_sums_do_not_depend_on_the_order_of_the_rows(seed: int) -> None:
    rows = _rows(seed)
    w = intervals.poisson_weights(np.arange(rows.shape[0]), 40, seed=seed)
    sums = intervals.WeightedSums(rows)(w)
    for order in (np.arange(rows.shape[0])[::-1], np.random.default_rng(seed).permutation(rows.shape[0])):
        np.testing.assert_array_equal(intervals.WeightedSums(rows[order])(w[:, order]), sums)
    # integer rows: the plain product (exact), also for swap masks and negative differences
    counts = np.random.default_rng(seed).integers(-50, 50, size=(500, 7)).astype(np.float64)
    masks = intervals.swap_masks(np.arange(500), 30, seed=seed)
    np.testing.assert_array_equal(intervals.WeightedSums(counts)(masks), masks @ counts)


def test_weighted_sums_edge_cases() -> None:
    zeros = np.zeros((4, 3))
    w = np.ones((2, 4))
    np.testing.assert_array_equal(intervals.WeightedSums(zeros)(w), np.zeros((2, 3)))
    np.testing.assert_array_equal(intervals.WeightedSums(np.zeros((0, 3)))(np.zeros((2, 0))), np.zeros((2, 3)))
    tiny = np.array([[1e-300, 3.0], [2.5e-310, 0.5]])
    np.testing.assert_array_equal(intervals.WeightedSums(tiny)(np.array([[1.0, 1.0]])), [[1e-300 + 2.5e-310, 3.5]])
    nan = np.array([[np.nan, 1.5], [1.0, 2.0]])
    got = intervals.WeightedSums(nan)(np.array([[1.0, 2.0]]))
    assert math.isnan(got[0, 0]) and got[0, 1] == 5.5
    with pytest.raises(ValueError, match="too large"):
        intervals.WeightedSums(np.array([[0.1]]))(np.array([[2.0**50]]))


@pytest.mark.parametrize("seed", range(5))
def test_quantiles_and_sample_sd(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(int(rng.integers(2, 1500))) * 10.0 ** float(rng.integers(-3, 3))
    values[:: max(1, values.size // 7)] = values[0]  # ties
    levels = [0.0, 0.025, 0.05, 0.1, 0.5, 0.9, 0.95, 0.975, 1.0]
    got = intervals.quantiles(values, levels)
    assert got == [float(np.quantile(values, q)) for q in levels]  # NumPy's default method, to the bit
    assert intervals.quantiles(values[::-1], levels) == got
    sd = intervals.sample_sd(values)
    assert math.isclose(sd, statistics.stdev(values.tolist()), rel_tol=4e-16)  # exact rational reference
    shuffled = rng.permutation(values)
    assert intervals.sample_sd(shuffled) == sd  # independent of the order (NumPy's pairwise sum is not)
    assert all(math.isnan(x) for x in intervals.quantiles([], [0.1, 0.9]))


def _files(tmp_path: Path, n: int = 400) -> tuple[str, str, str]:
    """References, predictions and a second system: the bundled sample's lines with words dropped at random."""
    rng = np.random.default_rng(0)
    refs = DATA.joinpath("rouge", "references.txt").read_text().splitlines()
    preds = DATA.joinpath("rouge", "predictions.txt").read_text().splitlines()
    paths = []
    for name, source in (("refs", refs), ("a", preds), ("b", preds)):
        lines = []
        for i in range(n):
            words = source[i % len(source)].split()
            kept = [w for w in words if rng.random() < 0.8] or words[:1]
            lines.append(" ".join(kept) + "\n")
        paths.append(tmp_path / f"{name}.txt")
        paths[-1].write_text("".join(lines))
    return str(paths[0]), str(paths[1]), str(paths[2])


def _kernels() -> list[dict[str, str]]:
    """Settings under which OpenBLAS multiplies in other orders: forced kernels (x86-64) or thread counts."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        return [{"OPENBLAS_CORETYPE": "Prescott"}, {"OPENBLAS_CORETYPE": "Sandybridge"}, {"OPENBLAS_NUM_THREADS": "2"}]
    return [{"OPENBLAS_NUM_THREADS": "2"}]


def _outputs(args: list[str]) -> set[str]:
    seen = set()
    for extra in [{}, *_kernels()]:
        env = {**os.environ, "JAX_PLATFORMS": "cpu", **extra}
        proc = subprocess.run(
            [sys.executable, "-m", "metametric_jax", *args], capture_output=True, text=True, env=env, timeout=300
        )
        assert proc.returncode == 0, proc.stderr
        seen.add(proc.stdout)
    return seen


@pytest.mark.parametrize("command", ["score", "compare"])
def test_rouge_intervals_are_the_same_under_every_blas_kernel(tmp_path: Path, command: str) -> None:
    refs, preds, other = _files(tmp_path)
    args = {
        "score": [
            "score",
            "--format",
            "json",
            "rouge",
            "--references",
            refs,
            "--predictions",
            preds,
            "--bootstrap",
            "300",
        ],
        "compare": [
            *("compare", "--format", "json", "rouge", "--references", refs, "--system", preds, "--system", other),
            *("--method", "bootstrap", "--samples", "300"),
        ],
    }[command]
    outputs = _outputs(args)
    assert len(outputs) == 1, f"{command}: {len(outputs)} different outputs"


_ROWS_SCRIPT = """
import hashlib
import numpy as np
from metametric_jax import dsl, make_metric, metric_config
from metametric_jax import normalizer as N
rng = np.random.default_rng(0)
stats = rng.random((4000, 3)) * 37.3
stats[::5, 0] = 0.0
M = make_metric(dsl.set_matching(dsl.discrete()), "f1.5", report=("jaccard", "f0.3", "precision"))
rows = metric_config.stats_rows(M.metric_config, stats)
norm = N.normalized_rows(stats, (N.fbeta(2.5), N.JACCARD, N.F1, N.fbeta(0.7), N.RECALL))
print(hashlib.sha256(rows.tobytes() + norm.tobytes()).hexdigest())
"""


def test_per_example_rows_are_the_same_under_every_blas_kernel() -> None:
    """F-beta's ``beta^2 yy + xx``: a kernel with fused multiply-adds (OpenBLAS on Haswell) rounds it once."""
    seen = set()
    for extra in [{}, *_kernels()]:
        env = {**os.environ, "JAX_PLATFORMS": "cpu", **extra}
        proc = subprocess.run(
            [sys.executable, "-c", _ROWS_SCRIPT], capture_output=True, text=True, env=env, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        seen.add(proc.stdout)
    assert len(seen) == 1, seen


def test_a_binary_programs_objective_is_its_weights_summed_and_rounded_once() -> None:
    from metametric_jax._solvers import _objective

    rng = np.random.default_rng(3)
    weights = rng.random(5000) * 10.0 ** rng.integers(-6, 6, size=5000)
    z = (rng.random(5000) < 0.5).astype(np.float64)
    exact = sum((Fraction(w) for w, on in zip(weights.tolist(), z.tolist()) if on), Fraction(0))
    assert _objective(weights, z) == float(exact)  # correctly rounded, so in no particular order
    order = rng.permutation(5000)
    assert _objective(weights[order], z[order]) == _objective(weights, z)
