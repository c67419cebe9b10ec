"""The CoNLL 2018 dependency figures of files and of counts: the read-out, the counts in chunks, the reports.

:func:`score_files` and :func:`summary_files` score two CoNLL-U files; :func:`counts_in_chunks` counts a corpus over
worker processes; :func:`readout` is the one read-out of every figure. The conventions are those of
:mod:`metametric_jax.tasks.dependency`, which re-exports all of them (this module leaves out the accumulators, so
scoring files imports neither JAX nor the machinery of portable metric classes).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from metametric_jax._collector import paused_collector
from metametric_jax.errors import InputFormatError
from metametric_jax.normalizer import prf
from metametric_jax.report import Report
from metametric_jax.tasks.dependency_counts import (
    ALIGNED_METRICS,
    METRICS,
    parse_options,
    sentence_counts,
)
from metametric_jax.tasks.readers.conllu import DepSentence, read_conllu

__all__ = ["sentence_rows", "readout", "counts_in_chunks", "score_files", "summary_files"]


# ------------------------------------------------------------------------------------------------ figures
def _figure(correct: float, predicted: float, reference: float, aligned: float | None) -> dict[str, float | None]:
    return {
        **prf(correct, predicted, reference),
        "aligned_accuracy": None if aligned is None else (correct / aligned if aligned else 0.0),
    }


def sentence_rows(counts: np.ndarray) -> np.ndarray:
    """Additive rows of :func:`sentence_counts`: float64 ``(n, 4 len(METRICS))``, read out by :func:`readout`.

    Figure ``k`` of :data:`METRICS` has its (correct, predicted, reference, aligned) counts in columns ``4 k`` to
    ``4 k + 3``.
    """
    return np.asarray(counts).reshape(-1, 4 * len(METRICS)).astype(np.float64)


def readout(totals: Any) -> dict[str, dict[str, float | None]]:
    """Every figure of summed :func:`sentence_rows`: the one read-out of :func:`score` and :func:`score_files`.

    Args:
        totals: float64 ``(4 len(METRICS),)``: integer counts, or any non-negative real weights of them (a bootstrap
            replicate).

    Returns:
        ``{figure: {"precision", "recall", "f1", "aligned_accuracy"}}``, Python floats, 0.0 where a denominator is
        0; ``aligned_accuracy`` is None for ``tokens``, ``sentences`` and ``words``.
    """
    values = np.asarray(totals, np.float64).reshape(len(METRICS), 4).tolist()
    return {m: _figure(c, s, g, a if m in ALIGNED_METRICS else None) for m, (c, s, g, a) in zip(METRICS, values)}


def _score_counts(counts: np.ndarray) -> dict[str, Any]:
    """The figures of corpus totals: integer counts summed exactly, so every ratio is the script's."""
    from metametric_jax.intervals import exact_totals

    return readout(exact_totals(sentence_rows(counts)))


def _chunk_counts(options: dict[str, Any], predictions: list[Any], references: list[Any]) -> np.ndarray:
    return sentence_counts(predictions[0], references[0], **options)


def counts_in_chunks(
    predictions: Sequence[DepSentence], references: Sequence[DepSentence], *, jobs: int = 1, **options: Any
) -> np.ndarray:
    """:func:`sentence_counts` with the corpus cut into chunks counted by ``jobs`` worker processes (0: every core).

    The corpus is cut only before a reference sentence that starts at the same character of the text as a predicted
    sentence: no word crosses that point on either side, so the alignment after it does not depend on what comes
    before, and every item counts in a sentence of its chunk. The chunks' counts, joined in order, are the corpus's:
    the same array for every number of processes. Inputs that do not spell the same text are counted in one process
    (for its message).
    """
    from metametric_jax.tasks.dependency_counts import _Side

    n = len(references)
    if jobs == 1 or n < 2 or not all(isinstance(s, DepSentence) for s in (*predictions, *references)):
        return sentence_counts(predictions, references, **options)
    from metametric_jax import parallel

    check_trees, _, strip_subtypes = parse_options(options)
    gold = _Side(list(references), strip_subtypes, check_trees, "<references>")
    system = _Side(list(predictions), strip_subtypes, check_trees, "<predictions>")
    if gold.text != system.text:
        return sentence_counts(predictions, references, **options)
    predicted_at = {a: k for k, (a, _) in enumerate(system.spans)}
    shared = [k for k in range(1, n) if gold.spans[k][0] in predicted_at]
    size = max(1, -(-n // (parallel.CHUNKS_PER_WORKER * parallel.resolve_jobs(jobs))))
    cuts, target = [0], size
    for k in shared:
        if k >= target:
            cuts.append(k)
            target = k + size
    cuts.append(n)
    pred_cuts = [0, *(predicted_at[gold.spans[k][0]] for k in cuts[1:-1]), len(predictions)]
    parts = parallel.map_chunks(
        functools.partial(_chunk_counts, dict(options)),
        [list(predictions[a:b]) for a, b in zip(pred_cuts, pred_cuts[1:])],
        [list(references[a:b]) for a, b in zip(cuts, cuts[1:])],
        jobs=jobs,
        chunk_size=1,
        preload=[__name__],
    )
    return np.concatenate(parts, axis=0)


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    jobs: int = 1,
    **options: Any,
) -> Report:
    """Score a predicted CoNLL-U file against a reference file, as ``conll18_ud_eval.py`` does.

    Args:
        predictions: the system's CoNLL-U file.
        references: the gold CoNLL-U file.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is
            the same for every number (:func:`counts_in_chunks`).
        **options: as :func:`score`.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score`; ``items`` one per reference sentence
        (``id``: its sent_id or position, ``line``, ``n_words``, and the F1 of each figure over the items that start
        in it); ``warnings`` when the reference holds no sentence.

    Raises:
        InputFormatError: malformed CoNLL-U, a sentence that is not a tree, or files that spell different texts.
    """
    parse_options(options)
    with paused_collector():
        return _score_files(predictions, references, jobs, options)


def summary_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    jobs: int = 1,
    **options: Any,
) -> tuple[dict[str, Any], list[str]]:
    """The ``scores`` and ``warnings`` of :func:`score_files`, without its per-sentence items (``score dependency``).

    Raises:
        InputFormatError: as :func:`score_files`.
    """
    parse_options(options)
    with paused_collector():
        gold, counts = _file_counts(predictions, references, jobs, options)
        warnings = _warnings(gold, references)
        # the sentences freed before the collector resumes: its first pass would otherwise walk all of them
        del gold
        return _score_counts(counts), warnings


def _file_counts(
    predictions: str | os.PathLike[str], references: str | os.PathLike[str], jobs: int, options: dict[str, Any]
) -> tuple[list[DepSentence], np.ndarray]:
    gold = read_conllu(references)
    system = read_conllu(predictions)
    if gold and not system:
        raise InputFormatError(
            os.fspath(predictions), None, f"expected the sentences of {os.fspath(references)}; found no sentence"
        )
    if system and not gold:
        raise InputFormatError(
            os.fspath(references), None, f"expected the sentences of {os.fspath(predictions)}; found no sentence"
        )
    return gold, counts_in_chunks(system, gold, jobs=jobs, **options)


def _warnings(gold: list[DepSentence], references: str | os.PathLike[str]) -> list[str]:
    return [] if gold else [f"{os.fspath(references)} holds no sentences; every figure is 0"]


def _score_files(
    predictions: str | os.PathLike[str], references: str | os.PathLike[str], jobs: int, options: dict[str, Any]
) -> Report:
    gold, counts = _file_counts(predictions, references, jobs, options)
    correct, total = counts[:, :, 0].astype(np.float64), (counts[:, :, 1] + counts[:, :, 2]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # prf's F1, 2m / (t + g), each sentence at once
        f1 = np.where(total > 0, 2.0 * correct / total, 0.0).tolist()
    items = []
    for k, (sentence, row) in enumerate(zip(gold, f1), start=1):
        item: dict[str, Any] = {"id": sentence.sent_id or str(k), "line": sentence.line, "n_words": len(sentence)}
        item.update(zip(METRICS, row))
        items.append(item)
    return Report(_score_counts(counts), items, _warnings(gold, references))
