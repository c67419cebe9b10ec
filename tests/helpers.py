"""Helpers shared by the tests."""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np


def flat(state: Any) -> np.ndarray:
    """Every leaf of a metric or suite state (sums as compensated pairs, signature), flattened to float64 in order.

    Two states are bit-for-bit equal iff their ``flat`` arrays are equal (float32 values are exact in float64).
    """
    return np.concatenate([np.asarray(leaf, np.float64).reshape(-1) for leaf in jax.tree.leaves(state)])


def totals(state: Any) -> np.ndarray:
    """The (xy, xx, yy, count, macro sums...) values of a reduced metric state (hi + lo), float64."""
    t = state.totals()
    return np.array([t["xy"], t["xx"], t["yy"], t["count"], *t["macro"].values()], np.float64)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``metametric-jax`` in process: ``(exit code, standard output, standard error)``."""
    from metametric_jax.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str) -> tuple[dict, str]:
    """Run ``metametric-jax ... --format json``, which must succeed: ``(parsed output, standard error)``."""
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out), err
