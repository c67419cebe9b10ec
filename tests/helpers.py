"""Helpers shared by the tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from metametric_jax import dsl, make_metric, metametric


def flat(state: Any) -> np.ndarray:
    """Every leaf of a metric or suite state (sums as compensated pairs, signature), flattened to float64 in order.

    Two states are bit-for-bit equal iff their ``flat`` arrays are equal (float32 values are exact in float64).
    """
    import jax

    return np.concatenate([np.asarray(leaf, np.float64).reshape(-1) for leaf in jax.tree.leaves(state)])


def totals(state: Any) -> np.ndarray:
    """The (xy, xx, yy, count, macro sums...) values of a reduced metric state (hi + lo), float64."""
    t = state.totals()
    return np.array([t["xy"], t["xx"], t["yy"], t["count"], *t["macro"].values()], np.float64)


def four_device_part(runs: dict[str, Any], part: str) -> Any:
    """One part's summary of the ``four_devices`` fixture (conftest.py); fails with its traceback where it raised."""
    outcome = runs[part]
    assert "error" not in outcome, f"the {part} part on four devices failed:\n{outcome['error']}"
    return outcome["result"]


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


def cli_json(capsys, *argv: str) -> Any:
    """Run ``metametric-jax ARGV`` (asking for JSON), which must succeed: its output, strict JSON (no NaN)."""
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


def analysis_json(capsys, task: str, references: Any, systems: Sequence[Any], *extra: str, samples: int = 200) -> Any:
    """``metametric-jax analyze TASK --references R --system S ... --samples N --format json EXTRA``: its JSON."""
    argv = ["analyze", task, "--references", str(references), *(x for s in systems for x in ("--system", str(s)))]
    return cli_json(capsys, *argv, "--samples", str(samples), "--format", "json", *extra)


def assert_one_line_errors(capsys, task: str, cases: Iterable[tuple[Sequence[str], str]], samples: int = 20) -> None:
    """Each ``(argv, needle)``: ``analyze TASK ARGV`` fails with status 1, nothing on stdout, one line naming needle."""
    for argv, needle in cases:
        code, out, err = run(capsys, "analyze", task, *argv, "--samples", str(samples))
        assert code == 1 and out == "", argv
        assert err.count("\n") == 1 and "Traceback" not in err and needle in err, err


# ------------------------------------------------------------------------------------------------ resampled data
BAG = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="resampled_bag")
"""F1 of sets of hashable items (what :func:`corpus` makes): the metric the host resampling tests resample."""


@metametric(normalizer="none")
@dataclass(frozen=True)
class Span:
    """A labelled span (its own metric: the raw overlap of two spans)."""

    start: int
    end: int
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Sentence:
    """A tagged sentence (what :func:`decode` makes of a row of :func:`tags`): its device path has records."""

    spans: frozenset[Span]


LABELS = ("PER", "LOC")


def decode(row: np.ndarray) -> Sentence:
    """One row of tags as a sentence: a one-token span per non-zero tag (1: PER, 2: LOC)."""
    return Sentence(frozenset(Span(int(i), int(i) + 1, LABELS[int(v) - 1]) for i, v in enumerate(row) if v > 0))


def corpus(n: int, seed: int, min_refs: int = 0) -> tuple[list[list[int]], list[list[int]]]:
    """``n`` predicted and reference sets of up to 4 integers in ``[0, 8)`` (references of at least ``min_refs``)."""
    rng = np.random.default_rng(seed)
    preds = [sorted({int(x) for x in rng.integers(0, 8, rng.integers(0, 5))}) for _ in range(n)]
    refs = [sorted({int(x) for x in rng.integers(0, 8, rng.integers(min_refs, 5))}) for _ in range(n)]
    return preds, refs


def tags(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Predicted and gold tag rows ``(n, 6)`` in ``{0, 1, 2}`` (0: no span); about 30% of the predictions redrawn."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, (n, 6)).astype(np.int32)
    pred = np.where(rng.random((n, 6)) < 0.3, rng.integers(0, 3, (n, 6)), gold).astype(np.int32)
    return pred, gold


def worker_pids(items: Sequence[Any]) -> list[int]:
    """The process of each item (a ``parallel.map_items`` function: which worker ran it)."""
    import os

    return [os.getpid() for _ in items]


def thread_settings(items: Sequence[Any]) -> list[tuple[str | None, ...]]:
    """The numeric libraries' thread variables of the process that ran each item."""
    import os

    from metametric_jax.parallel import THREAD_VARIABLES

    return [tuple(os.environ.get(name) for name in THREAD_VARIABLES) for _ in items]
