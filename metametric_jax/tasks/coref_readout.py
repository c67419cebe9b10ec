"""The read-out of coreference statistics: their row layout, sums and figures (recall, precision, F1, CoNLL).

A document's statistics are four numbers per metric (:data:`COUNT_NAMES`), laid out as one float64 row
(:func:`count_rows`); a corpus sums the rows (:func:`sum_counts`) and :func:`figures` or :func:`readout` divides.
:mod:`metametric_jax.tasks.coref_counts` computes the statistics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._ratios import f_measure, ratio
from metametric_jax.intervals import exact_totals

__all__ = ["METRICS", "COUNT_NAMES", "Counts", "figures", "count_rows", "unpack_totals", "sum_counts", "readout"]

#: The metrics of :func:`figures`, in output order (``conll`` follows them).
METRICS: tuple[str, ...] = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "mentions")
#: Per-document statistics: ``(recall numerator, recall denominator, precision numerator, precision denominator)``.
COUNT_NAMES: tuple[str, ...] = ("muc", "bcub", "ceafm", "ceafe", "lea", "mentions", "blanc_coref", "blanc_noncoref")
#: A document's statistics: ``{name: (recall num, recall den, precision num, precision den)}``.
Counts = dict[str, tuple[float, float, float, float]]


def _f1(r: float, p: float) -> float:
    return f_measure(p, r)


def _prf(num_r: float, den_r: float, num_p: float, den_p: float) -> dict[str, float]:
    r, p = ratio(num_r, den_r), ratio(num_p, den_p)
    return {
        "recall": r,
        "precision": p,
        "f1": _f1(r, p),
        "recall_num": num_r,
        "recall_den": den_r,
        "precision_num": num_p,
        "precision_den": den_p,
    }


def figures(totals: Mapping[str, Sequence[float]]) -> dict[str, dict[str, Any]]:
    """The figures of summed statistics ``{name: (recall num, recall den, precision num, precision den)}``.

    Returns:
        ``{metric: {"recall", "precision", "f1", "recall_num", "recall_den", "precision_num", "precision_den"}}`` for
        MUC, B³, CEAF-m, CEAF-e, LEA and mentions; ``blanc: {"recall", "precision", "f1", "coreference_links": {...},
        "non_coreference_links": {...}}`` (BLANC with the scorer's cases); ``conll: {"f1"}``.
    """
    out: dict[str, dict[str, Any]] = {m: _prf(*totals[m]) for m in METRICS if m != "blanc"}
    c, n = _prf(*totals["blanc_coref"]), _prf(*totals["blanc_noncoref"])
    if c["recall_den"] and n["recall_den"]:
        blanc = {k: (c[k] + n[k]) / 2 for k in ("recall", "precision", "f1")}
    else:
        use = c if c["recall_den"] else n if n["recall_den"] else dict.fromkeys(("recall", "precision", "f1"), 0.0)
        blanc = {k: use[k] for k in ("recall", "precision", "f1")}
    out["blanc"] = {**blanc, "coreference_links": c, "non_coreference_links": n}
    out = {m: out[m] for m in METRICS}
    out["conll"] = {"f1": (out["muc"]["f1"] + out["bcub"]["f1"] + out["ceafe"]["f1"]) / 3}
    return out


def count_rows(per_document: Sequence[Counts]) -> np.ndarray:
    """The statistics of each document as one float64 row, ``(n, 4 * len(COUNT_NAMES))``.

    Each of :data:`COUNT_NAMES` in turn: its recall numerator, recall denominator, precision numerator and precision
    denominator (the additive rows of :mod:`metametric_jax.intervals`).
    """
    rows = np.zeros((len(per_document), 4 * len(COUNT_NAMES)))
    for i, d in enumerate(per_document):
        rows[i] = [x for name in COUNT_NAMES for x in d[name]]
    return rows


def unpack_totals(totals: np.ndarray | Sequence[float]) -> dict[str, tuple[float, ...]]:
    """``{name: (recall num, recall den, precision num, precision den)}`` of totals laid out as :func:`count_rows`."""
    values = [float(x) for x in totals]
    if len(values) != 4 * len(COUNT_NAMES):
        raise ValueError(f"expected {4 * len(COUNT_NAMES)} coreference totals; found {len(values)}.")
    return {name: tuple(values[4 * k : 4 * k + 4]) for k, name in enumerate(COUNT_NAMES)}


def sum_counts(per_document: Sequence[Counts]) -> dict[str, tuple[float, ...]]:
    """The statistics of several documents summed, each rounded once whatever the order (``exact_totals``)."""
    return unpack_totals(exact_totals(count_rows(per_document)))


_FIGURES = ("recall", "precision", "f1")


def readout(totals: np.ndarray | Sequence[float], metric: str = "all") -> dict[str, dict[str, Any]]:
    """The read-out of totals laid out as :func:`count_rows`: :func:`figures` without the counts.

    Recall, precision and F1 of each metric (BLANC's two link kinds too) and the CoNLL average, the figures of
    ``score coref`` (bit for bit, from the same totals).

    Args:
        totals: the summed statistics (any non-negative reals: a 0 denominator gives 0).
        metric: ``"all"``, or one of :data:`METRICS` but ``mentions``: that metric and the mentions only.
    """
    full = figures(unpack_totals(totals))
    out: dict[str, dict[str, Any]] = {m: {k: full[m][k] for k in _FIGURES} for m in METRICS}
    for kind in ("coreference_links", "non_coreference_links"):
        out["blanc"][kind] = {k: full["blanc"][kind][k] for k in _FIGURES}
    out["conll"] = {"f1": full["conll"]["f1"]}
    if metric == "all":
        return out
    if metric not in METRICS or metric == "mentions":
        raise ValueError(f"metric must be 'all' or one of {[m for m in METRICS if m != 'mentions']}; found {metric!r}.")
    return {"mentions": out["mentions"], metric: out[metric]}
