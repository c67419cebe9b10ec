r"""Corrections for testing many buckets at once: the p-values of a family of paired tests, adjusted (NumPy only).

The family is the tests shown in an analysis report (:func:`metametric_jax.analysis.report`): every bucket's tested
figure, each system against the baseline. Holm's step-down (Holm 1979; the default, it controls the family-wise error
rate under any dependence), Benjamini and Hochberg's step-up (1995; the false discovery rate, under independence or
positive dependence), and the step-down max-T of Westfall and Young (1993), which reads the joint replicate
distribution of all the tests' statistics (studentized deltas :math:`|\delta_b - \delta| / \hat\sigma`, or raw ones)
and so accounts for how the buckets' tests depend on each other (the same replicates serve them all).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from metametric_jax import intervals


class PairedTest(Protocol):
    """What a correction reads of a paired test (:class:`metametric_jax.analysis.PairedTest` is one)."""

    @property
    def delta(self) -> Any:
        """The tested difference."""
        ...

    @property
    def p_value(self) -> float | None:
        """The uncorrected two-sided p-value (``None``: not tested)."""
        ...

    @property
    def replicates(self) -> Any:
        """The replicates' differences."""
        ...


__all__ = ["CORRECTIONS", "STATISTICS", "normalize_correction", "correct"]

#: the corrections for multiple testing, with their names in the JSON
CORRECTIONS = {
    "holm": "Holm's step-down (family-wise error rate)",
    "bh": "Benjamini-Hochberg step-up (false discovery rate)",
    "maxt": "Westfall-Young step-down max-T over the joint bootstrap replicates (family-wise error rate)",
    "none": "none (each test's own p-value)",
}
_CORRECTION_ALIASES = {
    "benjamini-hochberg": "bh",
    "fdr": "bh",
    "max-t": "maxt",
    "westfall-young": "maxt",
    "bonferroni-holm": "holm",
}

#: the statistics the max-T correction compares across tests
STATISTICS = ("studentized", "raw")


def normalize_correction(name: str) -> str:
    """The canonical name of a correction (``holm``, ``bh``, ``maxt``, ``none``; aliases accepted).

    Raises:
        ValueError: naming the valid names.
    """
    key = str(name).strip().lower()
    key = _CORRECTION_ALIASES.get(key, key)
    if key not in CORRECTIONS:
        valid = ", ".join([*CORRECTIONS, *_CORRECTION_ALIASES])
        raise ValueError(f"unknown correction {name!r}; expected one of {valid}")
    return key


def correct(tests: Sequence[PairedTest], method: str = "holm", statistic: str = "studentized") -> list[float | None]:
    r"""The p-values of ``tests`` adjusted for testing them all (``None`` where a test has no p-value).

    The family is the tests with a p-value; ``m`` is their number.

    * ``holm``: sort :math:`p_{(1)} \le \dots \le p_{(m)}`; :math:`\tilde p_{(i)} = \max_{j \le i}
      \min(1, (m - j + 1) p_{(j)})` (Holm 1979).
    * ``bh``: :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m p_{(j)} / j)` (Benjamini and Hochberg 1995).
    * ``maxt``: the step-down max-T (Westfall and Young 1993, algorithm 4.1) over the replicates: with
      :math:`t_j = |\delta_j| / \hat\sigma_j` and :math:`t_{bj} = |\delta_{bj} - \delta_j| / \hat\sigma_j`
      (``studentized``; :math:`\hat\sigma_j` the standard deviation of the replicate deltas, 1 where it is 0) or
      the same without :math:`\hat\sigma_j` (``raw``), tests sorted by :math:`t_{(1)} \ge \dots \ge t_{(m)}`,
      :math:`\tilde p_{(i)} = \max_{r \le i} (1 + \#\{b : \max_{j \ge r} t_{b(j)} \ge t_{(r)}\}) / (B' + 1)`
      over the :math:`B'` replicates in which some test has a delta (a missing delta never exceeds). With one test
      it is that test's own p-value.
    * ``none``: each test's own p-value.
    """
    method = normalize_correction(method)
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
    index = [j for j, t in enumerate(tests) if t.p_value is not None]
    out: list[float | None] = [None] * len(tests)
    if not index:
        return out
    p = np.array([tests[j].p_value for j in index], np.float64)
    if method == "none":
        adjusted = p
    elif method == "holm":
        adjusted = _holm(p)
    elif method == "bh":
        adjusted = _bh(p)
    else:
        adjusted = _max_t([tests[j] for j in index], statistic)
    for j, value in zip(index, adjusted.tolist()):
        out[j] = float(value)
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(steps)
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m = p.size
    order = np.argsort(p, kind="stable")
    steps = np.minimum(1.0, m * p[order] / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(steps[::-1])[::-1]
    return out


def _max_t(tests: Sequence[PairedTest], statistic: str) -> np.ndarray:
    deltas = np.array([t.delta for t in tests], np.float64)
    reps = np.stack([t.replicates for t in tests], axis=1)  # (B, m)
    scale = np.ones(len(tests))
    if statistic == "studentized":
        for j in range(len(tests)):
            col = reps[:, j][~np.isnan(reps[:, j])]
            sd = intervals.sample_sd(col) if col.size > 1 else 0.0
            scale[j] = sd if sd > 0 and math.isfinite(sd) else 1.0
    observed = np.abs(deltas) / scale
    with np.errstate(invalid="ignore"):
        null = np.abs(reps - deltas[None, :]) / scale[None, :]
    valid = ~np.all(np.isnan(null), axis=1)
    null = np.where(np.isnan(null), -np.inf, null)[valid]
    order = np.argsort(-observed, kind="stable")
    running = np.maximum.accumulate(null[:, order[::-1]], axis=1)[:, ::-1]  # max over the tests from r on
    counts = np.sum(running >= observed[order][None, :], axis=0)
    steps = np.minimum(1.0, (1 + counts) / (null.shape[0] + 1))
    out = np.empty(len(tests))
    out[order] = np.maximum.accumulate(steps)
    return out
