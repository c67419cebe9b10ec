"""Counting typed spans on the host: matched, predicted and reference spans per sentence and type.

A sentence's spans come from its tags (decoded by :func:`metametric_jax.tasks.tagging.decode_tags`, the one chunk
rule) or are given as collections of :class:`~metametric_jax.tasks.tagging.Span` / ``(start, end, label)``; a
predicted span is matched when a reference span of the same sentence has the same start, end and type (conlleval's
and seqeval's rule). Pure NumPy: the command line counts files with it without importing JAX.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from metametric_jax.inputs import check_lengths
from metametric_jax.tasks.tagging import Span, SpanTable, decode_tags, normalize_scheme

__all__ = ["SpanCounts", "read_span_sets", "is_tag_batch", "count_spans"]


def read_span_sets(batch: Sequence[Iterable[Any]], labels: dict[str, int], side: str) -> SpanTable:
    """A table of span collections (``Span`` or ``(start, end, label)``, end exclusive; duplicates count once).

    Raises:
        TypeError: on an item that is not a span or has a label that is not a string.
        ValueError: on a span whose bounds are not integers ``0 <= start < end``.
    """
    sent: list[int] = []
    start: list[int] = []
    end: list[int] = []
    lab: list[int] = []
    for k, spans in enumerate(batch):
        seen = set()
        for x in spans:
            if isinstance(x, Span):
                s, e, label = x.start, x.end, x.label
            else:
                try:
                    s, e, label = x
                except (TypeError, ValueError):
                    raise TypeError(
                        f"{side}: sentence {k}: expected a Span or a (start, end, label) triple; found {x!r}."
                    ) from None
            ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (s, e))
            if not (ints and 0 <= s < e):
                raise ValueError(f"{side}: sentence {k}: span {x!r} needs integers 0 <= start < end (end exclusive).")
            if not isinstance(label, str):
                raise TypeError(f"{side}: sentence {k}: span {x!r} needs a string label; found {label!r}.")
            key = (int(s), int(e), label)
            if key in seen:
                continue
            seen.add(key)
            sent.append(k)
            start.append(key[0])
            end.append(key[1])
            lab.append(labels.setdefault(label, len(labels)))
    return SpanTable(*(np.asarray(v, np.int64) for v in (sent, start, end, lab)))


class SpanCounts(NamedTuple):
    """Per-sentence counts of a batch (host side, exact integers).

    Attributes:
        matched: int64 ``(n, T)``, spans found in both, per sentence and type.
        predicted: int64 ``(n, T)``, predicted spans.
        gold: int64 ``(n, T)``, reference spans.
        labels: the ``T`` type names, in the order of the columns.
        tokens: int64 ``(n,)`` tokens per sentence (0 where a side is given as spans).
        correct_tags: int64 ``(n,)`` tokens whose predicted tag equals the reference tag (0 for spans).
    """

    matched: np.ndarray
    predicted: np.ndarray
    gold: np.ndarray
    labels: tuple[str, ...]
    tokens: np.ndarray
    correct_tags: np.ndarray

    def micro(self) -> np.ndarray:
        """Per-sentence ``(matched, predicted, reference)`` span counts, float64 ``(n, 3)``."""
        return np.stack([self.matched.sum(1), self.predicted.sum(1), self.gold.sum(1)], 1).astype(np.float64)

    def of(self, label: str) -> np.ndarray:
        """Per-sentence ``(matched, predicted, reference)`` counts of one type, float64 ``(n, 3)`` (zeros if absent)."""
        if label not in self.labels:
            return np.zeros((self.matched.shape[0], 3))
        j = self.labels.index(label)
        return np.stack([self.matched[:, j], self.predicted[:, j], self.gold[:, j]], 1).astype(np.float64)


def is_tag_batch(batch: Sequence[Any], side: str) -> bool:
    """Whether a batch holds tag sequences (True) or span collections (False); a bare string raises TypeError."""
    for item in batch:
        if isinstance(item, str):
            raise TypeError(
                f"{side}: expected one tag sequence (or span collection) per sentence; found the string {item!r}. "
                "Wrap a single sentence in a list: [['B-PER', 'O']]."
            )
        if isinstance(item, (set, frozenset)):
            return False
        try:
            for x in item:
                return isinstance(x, str)
        except TypeError:
            raise TypeError(
                f"{side}: expected one tag sequence (or span collection) per sentence; found {item!r}."
            ) from None
    return True


def _keys(a: SpanTable, b: SpanTable, n: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys of (sentence, start, end, label), equal iff the spans are equal."""
    r_start = int(max(a.start.max(initial=0), b.start.max(initial=0))) + 1
    r_end = int(max(a.end.max(initial=0), b.end.max(initial=0))) + 1
    if max(n, 1) * r_start * r_end * max(n_labels, 1) < 2**62:

        def key(t: SpanTable) -> np.ndarray:
            return ((t.sentence * r_start + t.start) * r_end + t.end) * n_labels + t.label

        return key(a), key(b)
    rows = np.concatenate([np.stack([t.sentence, t.start, t.end, t.label], 1) for t in (a, b)])
    _, inv = np.unique(rows, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    return inv[: len(a.start)], inv[len(a.start) :]


def count_spans(
    predictions: Sequence[Any], references: Sequence[Any], scheme: str = "IOB2", labels: dict[str, int] | None = None
) -> SpanCounts:
    """Per-sentence, per-type counts of matched, predicted and reference spans, and token agreement.

    Each side is a list of tag sequences or a list of span collections. A predicted span is matched when a
    reference span of the same sentence has the same start, end and type.

    Args:
        predictions: one tag sequence (or span collection) per sentence.
        references: the same for the reference.
        scheme: the tag scheme.
        labels: a type vocabulary to extend in place (so the columns of several batches line up); default a new one.

    >>> c = count_spans([["B-PER", "I-PER", "O"]], [["B-PER", "O", "B-LOC"]])
    >>> c.micro().tolist(), c.labels, c.correct_tags.tolist()
    ([[0.0, 1.0, 2.0]], ('LOC', 'PER'), [1])

    Raises:
        ValueError: on different numbers of sentences or of tokens, or an invalid tag (naming side and position).
        TypeError: on input that is neither tags nor spans.
    """
    scheme = normalize_scheme(scheme)
    n = len(references)
    check_lengths(predictions, references, "count_spans", "sentence")
    labels = {} if labels is None else labels
    sides = [("predictions", predictions), ("references", references)]
    kinds = [is_tag_batch(batch, side) for side, batch in sides]
    decoded = iter(decode_tags([x for x, is_tags in zip(sides, kinds) if is_tags], scheme, labels))
    pt, gt = (next(decoded) if is_tags else read_span_sets(b, labels, side) for (side, b), is_tags in zip(sides, kinds))
    tokens = np.zeros(n, np.int64)
    correct = np.zeros(n, np.int64)
    if pt.lengths is not None and gt.lengths is not None:
        if not np.array_equal(pt.lengths, gt.lengths):
            k = int(np.flatnonzero(pt.lengths != gt.lengths)[0])
            raise ValueError(
                f"sentence {k} (0-based) has {int(pt.lengths[k])} predicted tags but {int(gt.lengths[k])} reference "
                "tags; a prediction needs one tag per reference token."
            )
        tokens = gt.lengths
        owner = np.repeat(np.arange(n, dtype=np.int64), tokens)
        correct = np.bincount(owner[pt.codes == gt.codes], minlength=n)
    n_labels = len(labels)
    kp, kg = _keys(pt, gt, n, n_labels)
    _, ip, _ = np.intersect1d(kp, kg, assume_unique=True, return_indices=True)
    size = n * n_labels

    def grid(sent: np.ndarray, lab: np.ndarray) -> np.ndarray:
        return np.bincount(sent * n_labels + lab, minlength=size).reshape(n, n_labels)

    return SpanCounts(
        grid(pt.sentence[ip], pt.label[ip]),
        grid(pt.sentence, pt.label),
        grid(gt.sentence, gt.label),
        tuple(labels),
        tokens,
        correct,
    )
