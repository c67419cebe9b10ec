"""EVALB's summary of per-sentence counts: additive sentence rows and their one read-out.

:func:`sentence_rows` lays out each sentence's counts (:mod:`metametric_jax.tasks.constituency_counts`) as a row of
:data:`ROW_FIELDS` for all sentences and again for the sentences of at most ``cutoff_len`` words; :func:`readout`
turns any sum of rows (weighted, for a bootstrap replicate) into EVALB's figures, and :func:`summarize` is the
read-out of the exact sum with its counts, the summary of :mod:`metametric_jax.tasks.constituency` (see there for the
conventions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metametric_jax._ratios import f_measure, ratio
from metametric_jax.tasks.constituency_counts import COLLINS, EvalbParams, SentenceCounts

__all__ = ["ROW_FIELDS", "sentence_rows", "readout", "summarize"]


#: The columns of a sentence's row for one part of the summary (``all``, then ``len40`` in the next 13 columns).
ROW_FIELDS = (
    "matched_brackets",
    "gold_brackets",
    "test_brackets",
    "words",
    "correct_tags",
    "valid_sentences",
    "complete_match",
    "crossing_brackets",
    "no_crossing",
    "two_or_less_crossing",
    "sentences",
    "error_sentences",
    "skipped_sentences",
)
_PARTS = ("all", "len40")


def sentence_rows(counts: SentenceCounts, params: EvalbParams = COLLINS) -> np.ndarray:
    """Additive rows of EVALB's counts: float64 ``(sentences, 2 len(ROW_FIELDS))``, read out by :func:`readout`.

    Columns :data:`ROW_FIELDS` of every sentence, then the same of the sentences of at most ``params.cutoff_len``
    words (zeros for the others). ``complete_match``, ``no_crossing`` and ``two_or_less_crossing`` are 0 or 1,
    ``crossing_brackets`` counts for valid sentences only, and ``sentences``, ``error_sentences``,
    ``skipped_sentences`` are each sentence's 1 (error and skipped sentences hold no other count).
    """
    rows = np.stack([np.asarray(x, np.float64).reshape(-1) for x in _columns(counts)], axis=1)
    short = (counts.length <= params.cutoff_len).astype(np.float64)
    return np.concatenate([rows, rows * short[:, None]], axis=1)


def _columns(counts: SentenceCounts) -> tuple[np.ndarray, ...]:
    """The columns :data:`ROW_FIELDS` of every sentence (integers and booleans)."""
    c = counts
    valid = c.status == 0
    crossing = np.where(valid, c.crossing, 0)
    return (
        c.matched,
        c.gold,
        c.test,
        c.words,
        c.correct_tags,
        valid,
        (c.gold == c.test) & (c.test == c.matched) & valid,
        crossing,
        (crossing == 0) & valid,
        (crossing <= 2) & valid,
        np.ones(c.status.shape, dtype=np.int64),
        c.status == 1,
        c.status == 2,
    )


def _exact_totals(counts: SentenceCounts, params: EvalbParams) -> list[float]:
    """The column sums of :func:`sentence_rows`, summed as integers (exact: ``exact_totals`` of the rows)."""
    columns = _columns(counts)
    short = counts.length <= params.cutoff_len
    every = [float(np.sum(x, dtype=np.int64)) for x in columns]
    return every + [float(np.sum(x[short], dtype=np.int64)) for x in columns]


def readout(totals: Any) -> dict[str, dict[str, float]]:
    """EVALB's figures of summed :func:`sentence_rows`: the one read-out of :func:`summarize`.

    Args:
        totals: float64 ``(2 len(ROW_FIELDS),)``: integer counts, or any non-negative real weights of them (a
            bootstrap replicate).

    Returns:
        ``{"all": {...}, "len40": {...}}``, each with ``recall``, ``precision``, ``f1``, ``complete_match``,
        ``average_crossing``, ``no_crossing``, ``two_or_less_crossing``, ``tagging_accuracy``: Python floats, 0.0
        where a denominator is 0 (:data:`~metametric_jax._ratios.UNDEFINED`).
    """
    values = np.asarray(totals, np.float64).tolist()
    out = {}
    for k, part in enumerate(_PARTS):
        t = dict(zip(ROW_FIELDS, values[k * len(ROW_FIELDS) : (k + 1) * len(ROW_FIELDS)]))
        m, bg, bt, v = t["matched_brackets"], t["gold_brackets"], t["test_brackets"], t["valid_sentences"]
        w, tags = t["words"], t["correct_tags"]
        r, p = ratio(m, bg), ratio(m, bt)
        out[part] = {
            "recall": r,
            "precision": p,
            "f1": f_measure(p, r),
            "complete_match": ratio(t["complete_match"], v),
            "average_crossing": ratio(t["crossing_brackets"], v),
            "no_crossing": ratio(t["no_crossing"], v),
            "two_or_less_crossing": ratio(t["two_or_less_crossing"], v),
            "tagging_accuracy": ratio(tags, w),
        }
    return out


_COUNT_KEYS = (
    "sentences",
    "error_sentences",
    "skipped_sentences",
    "valid_sentences",
    "matched_brackets",
    "gold_brackets",
    "test_brackets",
    "crossing_brackets",
    "words",
    "correct_tags",
)


def summarize(counts: SentenceCounts, params: EvalbParams = COLLINS) -> dict[str, Any]:
    """EVALB's summary of per-sentence counts: ``{"f1": ..., "all": {...}, "len40": {...}}``.

    Each of ``all`` and ``len40`` (sentences of length at most ``params.cutoff_len``, named ``len40`` whatever the
    cut-off, which ``max_length`` gives) holds ``recall``, ``precision``, ``f1``, ``complete_match``,
    ``no_crossing``, ``two_or_less_crossing``, ``tagging_accuracy`` (fractions), ``average_crossing`` (brackets per
    sentence), and the counts ``sentences``, ``error_sentences``, ``skipped_sentences``, ``valid_sentences``,
    ``matched_brackets``, ``gold_brackets``, ``test_brackets``, ``crossing_brackets``, ``words``, ``correct_tags``.
    A 0/0 figure is 0 (EVALB prints ``nan`` for F1 there). The figures are :func:`readout` of the exact sum of
    :func:`sentence_rows` (its columns summed as integers, without the rows).
    """
    values = _exact_totals(counts, params)
    figures = readout(values)
    out: dict[str, Any] = {}
    for k, part in enumerate(_PARTS):
        t = dict(zip(ROW_FIELDS, values[k * len(ROW_FIELDS) : (k + 1) * len(ROW_FIELDS)]))
        out[part] = {**figures[part], **{key: int(t[key]) for key in _COUNT_KEYS}}
        if part == "len40":
            out[part]["max_length"] = params.cutoff_len
    return {"f1": out["all"]["f1"], **out}
