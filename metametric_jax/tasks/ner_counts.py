"""NER's per-sentence counts and their one read-out, shared by the scorer, the files and the accumulators.

A sentence's row (:data:`HEAD` columns, then three per entity type) holds its matched, predicted and reference span
counts, its tokens and its correctly tagged tokens; :class:`Tally` sums rows exactly over chunks of :data:`CHUNK`
sentences (in worker processes with ``jobs``), and :func:`readout` turns any sum of rows (weighted, for a bootstrap
replicate) into the figures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from metametric_jax._ratios import UNDEFINED, ratio
from metametric_jax.inputs import check_lengths
from metametric_jax.normalizer import prf
from metametric_jax.tasks.spans import SpanCounts, count_spans

__all__ = ["HEAD", "CHUNK", "readout", "report_of", "Tally", "tally", "check_labels"]

#: Sentences per host counting step (the progress callback is called after each).
CHUNK = 512

FIGURES = ("precision", "recall", "f1")

#: The columns of a sentence's row before its per-type columns: the micro (matched, predicted, reference) span counts,
#: the tokens and the tokens whose predicted tag is the reference tag. Type ``j`` of the row's ``labels`` then has the
#: columns ``HEAD + 3 j + (0, 1, 2)``: its (matched, predicted, reference) span counts.
HEAD = 5


def readout(totals: Any, labels: Sequence[str], reported: Sequence[str] | None = None) -> dict[str, Any]:
    """The NER figures of summed sentence rows (see :data:`HEAD`): the one read-out of :func:`score` and the files.

    Args:
        totals: float64 ``(HEAD + 3 len(labels),)``: summed rows, integer counts or any non-negative real weights
            of them (a bootstrap replicate).
        labels: the entity types of the per-type columns, in column order.
        reported: the types to report per type (zeros for a type without a column); default ``sorted(labels)``.

    Returns:
        ``{"f1", "micro", "macro", "weighted": {"precision", "recall", "f1"}, "accuracy", "per_type": {type:
        {"precision", "recall", "f1"}}}``, Python floats, 0.0 where a denominator is 0. ``macro`` is the mean over the
        reported types that occur (predicted or reference spans), ``weighted`` their mean weighted by reference spans.
    """
    values = np.asarray(totals, np.float64).tolist()
    column = {label: HEAD + 3 * j for j, label in enumerate(labels)}
    types: dict[str, dict[str, float]] = {}
    present: list[tuple[dict[str, float], float]] = []
    for label in sorted(labels) if reported is None else reported:
        j = column.get(label)
        xy, xx, yy = values[j : j + 3] if j is not None else (0.0, 0.0, 0.0)
        types[label] = prf(xy, xx, yy)
        if xx + yy > 0:
            present.append((types[label], yy))
    support = sum(yy for _, yy in present)
    macro = {k: (float(np.mean([r[k] for r, _ in present])) if present else UNDEFINED) for k in FIGURES}
    weighted = {k: ratio(sum(r[k] * yy for r, yy in present), support) for k in FIGURES}
    micro = prf(*values[:3])
    return {
        "f1": micro["f1"],
        "micro": micro,
        "macro": macro,
        "weighted": weighted,
        "accuracy": ratio(values[4], values[3]),
        "per_type": types,
    }


def report_of(totals: Any, labels: Sequence[str], reported: Sequence[str] | None) -> dict[str, Any]:
    """The report of exact totals (see :data:`HEAD`): :func:`readout`'s figures and the counts."""
    values = np.asarray(totals, np.float64).tolist()
    out = readout(totals, labels, reported)
    column = {label: HEAD + 3 * j for j, label in enumerate(labels)}
    for label, figures in out["per_type"].items():
        j = column.get(label)
        xy, xx, yy = values[j : j + 3] if j is not None else (0.0, 0.0, 0.0)
        figures.update(support=int(round(yy)), predicted=int(round(xx)), correct=int(round(xy)))
    xy, xx, yy, tokens, correct_tags = values[:HEAD]
    counts = {
        "tokens": int(round(tokens)),
        "phrases": int(round(yy)),
        "found": int(round(xx)),
        "correct": int(round(xy)),
        "correct_tags": int(round(correct_tags)),
    }
    per_type = out.pop("per_type")
    return {**out, "counts": counts, "per_type": per_type}


class Tally:
    """Exact integer totals over chunks of sentences: overall, per type, tokens; and per-sentence counts."""

    def __init__(self, scheme: str, keep_sentences: bool) -> None:
        self.scheme = scheme
        self.labels: dict[str, int] = {}
        self.types = np.zeros((0, 3), np.int64)
        self.tokens = 0
        self.correct_tags = 0
        self.keep_sentences = keep_sentences
        self.sentences: list[SpanCounts] = []

    def add(self, predictions: Sequence[Any], references: Sequence[Any]) -> SpanCounts:
        """Count a chunk of sentences (its types join the vocabulary) and return its counts."""
        counts = count_spans(predictions, references, self.scheme, self.labels)
        width = len(counts.labels)
        if width > len(self.types):
            self.types = np.concatenate([self.types, np.zeros((width - len(self.types), 3), np.int64)])
        self.types[:width] += np.stack([counts.matched.sum(0), counts.predicted.sum(0), counts.gold.sum(0)], 1)
        self.tokens += int(counts.tokens.sum())
        self.correct_tags += int(counts.correct_tags.sum())
        if self.keep_sentences:
            self.sentences.append(counts)
        return counts

    def absorb(self, counts: SpanCounts) -> None:
        """Add a chunk's counts made with its own type vocabulary (in a worker process), columns lined up with ours.

        Chunks absorbed in order give the vocabulary, the totals and the sentences of :meth:`add` on the same chunks.
        """
        index = np.array([self.labels.setdefault(label, len(self.labels)) for label in counts.labels], np.int64)
        k, width = counts.matched.shape[0], len(self.labels)

        def lined_up(grid: np.ndarray) -> np.ndarray:
            out = np.zeros((k, width), np.int64)
            out[:, index] = grid
            return out

        matched, predicted, gold = lined_up(counts.matched), lined_up(counts.predicted), lined_up(counts.gold)
        if width > len(self.types):
            self.types = np.concatenate([self.types, np.zeros((width - len(self.types), 3), np.int64)])
        self.types[:width] += np.stack([matched.sum(0), predicted.sum(0), gold.sum(0)], 1)
        self.tokens += int(counts.tokens.sum())
        self.correct_tags += int(counts.correct_tags.sum())
        if self.keep_sentences:
            self.sentences.append(
                SpanCounts(matched, predicted, gold, tuple(self.labels), counts.tokens, counts.correct_tags)
            )

    def rows(self) -> np.ndarray:
        """float64 ``(sentences, HEAD + 3 types)``: each sentence's counts, types in the order of ``self.labels``."""
        n = sum(c.matched.shape[0] for c in self.sentences)
        out = np.zeros((n, HEAD + 3 * len(self.labels)))
        lo = 0
        for c in self.sentences:
            k, width = c.matched.shape
            hi = lo + k
            out[lo:hi, 0], out[lo:hi, 1], out[lo:hi, 2] = c.matched.sum(1), c.predicted.sum(1), c.gold.sum(1)
            out[lo:hi, 3], out[lo:hi, 4] = c.tokens, c.correct_tags
            out[lo:hi, HEAD : HEAD + 3 * width] = np.stack([c.matched, c.predicted, c.gold], 2).reshape(k, 3 * width)
            lo = hi
        return out

    def totals(self) -> np.ndarray:
        """The summed rows (see :meth:`rows`), from the integer totals."""
        micro = self.types.sum(0) if len(self.types) else np.zeros(3, np.int64)
        head = np.array([*micro.tolist(), self.tokens, self.correct_tags], np.float64)
        return np.concatenate([head, self.types.reshape(-1).astype(np.float64)])

    def report(self, labels: Sequence[str] | None) -> dict[str, Any]:
        """The figures and counts of the totals, per type for ``labels`` (default: every type seen)."""
        return report_of(self.totals(), list(self.labels), labels)


def check_labels(labels: Sequence[str] | None, what: str) -> tuple[str, ...] | None:
    """``labels`` as a tuple of distinct non-empty strings (``None`` stays ``None``), or an error naming ``what``."""
    if labels is None:
        return None
    if isinstance(labels, str):
        raise TypeError(f"{what} expects a sequence of entity types; found the string {labels!r}.")
    out = tuple(labels)
    for label in out:
        if not isinstance(label, str) or not label:
            raise ValueError(f"{what}: entity types must be non-empty strings; found {label!r}.")
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: duplicated entity types {sorted({x for x in out if out.count(x) > 1})}.")
    return out


def tally(
    predictions: Sequence[Any],
    references: Sequence[Any],
    scheme: str,
    keep_sentences: bool,
    progress: Callable[[int, int], Any] | None,
    jobs: int = 1,
) -> Tally:
    """Count in chunks of :data:`CHUNK` sentences (one path for every caller; ``progress(done, total)`` displays).

    With ``jobs`` other than 1, worker processes count the chunks (0: every core) and the tally absorbs them in order:
    the same counts and type vocabulary.
    """
    n = len(references)
    check_lengths(predictions, references, "ner", "sentence")
    tally = Tally(scheme, keep_sentences)
    if jobs != 1 and n:
        from metametric_jax import parallel

        task = functools.partial(_count_chunk, scheme)
        size = min(CHUNK, -(-n // (parallel.CHUNKS_PER_WORKER * parallel.resolve_jobs(jobs))))
        chunks = parallel.map_chunks(
            task,
            list(predictions),
            list(references),
            jobs=jobs,
            chunk_size=size,
            progress=progress,
            preload=[__name__],
        )
        for counts in chunks:
            tally.absorb(counts)
        return tally
    for lo in range(0, max(n, 1), CHUNK):
        hi = min(n, lo + CHUNK)
        try:
            tally.add(predictions[lo:hi], references[lo:hi])
        except (ValueError, TypeError) as err:  # positions within the chunk → positions in the batch
            raise type(err)(_shift(str(err), lo)) from None
        if progress is not None:
            progress(hi, n)
    return tally


def _count_chunk(scheme: str, predictions: Sequence[Any], references: Sequence[Any]) -> SpanCounts:
    return count_spans(predictions, references, scheme)


def _shift(message: str, offset: int) -> str:
    """Renumber ``sentence K`` in a chunk's message to the sentence's index in the whole batch."""
    if not offset:
        return message
    import re

    return re.sub(r"sentence (\d+)", lambda m: f"sentence {int(m.group(1)) + offset}", message, count=1)
