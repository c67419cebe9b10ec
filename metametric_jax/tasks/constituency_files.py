"""EVALB on files: the parameters of a run, the sentences counted in chunks by worker processes, the report.

:func:`counts_in_chunks` and :func:`brackets_in_chunks` count two treebanks with the sentences cut in chunks over
``jobs`` worker processes (the same counts for every number); :func:`file_counts` counts two files (large files of
one tree per line read and counted piece by piece in one process); :func:`score_files` and :func:`summary_files` give
EVALB's report of two files: the summary (:func:`~metametric_jax.tasks.constituency_readout.summarize`), one item per
sentence and the warnings of :func:`file_warnings`. The conventions are those of
:mod:`metametric_jax.tasks.constituency`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.constituency_counts import (
    COLLINS,
    Brackets,
    EvalbParams,
    SentenceCounts,
    evalb_brackets,
    evalb_counts,
    read_params,
)
from metametric_jax.tasks.constituency_readout import summarize
from metametric_jax.tasks.readers.evalb import equivalence_classes
from metametric_jax.tasks.readers.ptb import Treebank, read_bytes, read_treebank, scan_trees
from metametric_jax.tasks.readers.text import BOM

if TYPE_CHECKING:  # pragma: no cover - imported where a report is built (the command prints the summary only)
    from metametric_jax.report import Report

__all__ = [
    "resolve_params",
    "counts_in_chunks",
    "file_counts",
    "brackets_in_chunks",
    "file_warnings",
    "score_files",
    "summary_files",
]


def resolve_params(params: EvalbParams | str | os.PathLike[str] | None, options: Mapping[str, Any]) -> EvalbParams:
    """The parameters of a run: ``params`` with the fields named in ``options`` replaced.

    ``params`` is an :class:`EvalbParams`, the path of a parameter file, or ``None`` for ``COLLINS.prm``; sequences in
    ``options`` become tuples. TypeError on an unknown field or a string where a sequence is expected.
    """
    base = COLLINS if params is None else params if isinstance(params, EvalbParams) else read_params(params)
    if options:
        names = set(EvalbParams._fields)
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; expected params or {', '.join(sorted(names))}")
        fix: dict[str, Any] = dict(options)
        for key in (
            "delete_labels",
            "delete_labels_for_length",
            "quote_labels",
            "equivalent_labels",
            "equivalent_words",
        ):
            if key in fix:
                if isinstance(fix[key], str):
                    raise TypeError(f"{key} takes a sequence, not the string {fix[key]!r}")
                fix[key] = tuple(x if isinstance(x, str) else tuple(x) for x in fix[key])
        base = base._replace(**fix)
        equivalence_classes(base.equivalent_labels)  # refuses a relation that is not an equivalence
    return base


def _report(counts: SentenceCounts, params: EvalbParams, pred_path: str) -> Report:
    from metametric_jax.report import Report

    scores = summarize(counts, params)
    status_name = ("valid", "error", "skipped")
    c = counts
    m, bg, bt, w, tags = (x.tolist() for x in (c.matched, c.gold, c.test, c.words, c.correct_tags))
    items = [
        {
            "id": s + 1,
            "line": line,
            "length": length,
            "status": status_name[status],
            "recall": m[s] / bg[s] if bg[s] else 0.0,
            "precision": m[s] / bt[s] if bt[s] else 0.0,
            "matched_brackets": m[s],
            "gold_brackets": bg[s],
            "test_brackets": bt[s],
            "crossing_brackets": crossing,
            "words": w[s],
            "correct_tags": tags[s],
            "tagging_accuracy": tags[s] / w[s] if w[s] else 0.0,
        }
        for s, (line, length, status, crossing) in enumerate(
            zip(c.line.tolist(), c.length.tolist(), c.status.tolist(), c.crossing.tolist())
        )
    ]
    return Report(scores, items, file_warnings(counts, params, pred_path))


def file_warnings(counts: SentenceCounts, params: EvalbParams, pred_path: str) -> list[str]:
    """What :func:`score_files` warns about: error sentences, skipped ones, more errors than ``MAX_ERROR``.

    Each error sentence has a line of its own, with its reason (as evalb reports them, on its standard error); the
    skipped sentences (empty parses) share one line that lists them all, with their reference lines where they are
    not the sentences' numbers (trees over several lines): a parser's hundreds of failed parses make one line.
    """
    skipped = [s for s in sorted(counts.messages) if counts.status[s] == 2]
    out = [
        f"{pred_path}: sentence {s + 1} (reference line {int(counts.line[s])}): {msg}; left out, as evalb does"
        for s, msg in sorted(counts.messages.items())
        if counts.status[s] != 2 or len(skipped) == 1
    ]
    if len(skipped) > 1:
        lines = [int(counts.line[s]) for s in skipped]
        same = all(line == s + 1 for s, line in zip(skipped, lines))
        listed = ", ".join(str(s + 1) if same else f"{s + 1} (line {line})" for s, line in zip(skipped, lines))
        message = counts.messages[skipped[0]]
        out.append(f"{pred_path}: {len(skipped)} sentences: {message}; left out, as evalb does: sentences {listed}")
    errors = int((counts.status == 1).sum())
    if errors > params.max_errors:
        out.append(
            f"{errors} error sentences: evalb stops after MAX_ERROR = {params.max_errors} (these figures leave the "
            "error sentences out and score the rest)"
        )
    return out


def _sentences(bank: Treebank, lo: int, hi: int) -> Treebank:
    """Sentences ``lo`` to ``hi`` of a treebank as a treebank of their own (their lines kept, byte offsets rebased)."""
    a, b = int(bank.leaf_offsets[lo]), int(bank.leaf_offsets[hi])
    n0, n1 = np.searchsorted(bank.node_sentence, [lo, hi])
    starts = np.concatenate([bank.tag_start[a:b], bank.word_start[a:b], bank.label_start[n0:n1]])
    ends = np.concatenate([bank.tag_end[a:b], bank.word_end[a:b], bank.label_end[n0:n1]])
    d0, d1 = (int(starts.min()), int(ends.max())) if starts.size else (0, 0)
    return bank._replace(
        data=bank.data[d0:d1],
        sentences=hi - lo,
        line=bank.line[lo:hi],
        leaf_offsets=bank.leaf_offsets[lo : hi + 1] - a,
        tag_start=bank.tag_start[a:b] - d0,
        tag_end=bank.tag_end[a:b] - d0,
        word_start=bank.word_start[a:b] - d0,
        word_end=bank.word_end[a:b] - d0,
        node_sentence=bank.node_sentence[n0:n1] - lo,
        label_start=bank.label_start[n0:n1] - d0,
        label_end=bank.label_end[n0:n1] - d0,
        first=bank.first[n0:n1],
        last=bank.last[n0:n1],
    )


def _chunk_counts(params: EvalbParams, predictions: list[Treebank], references: list[Treebank]) -> SentenceCounts:
    return evalb_counts(predictions[0], references[0], params)


def _chunk_brackets(
    params: EvalbParams, predictions: list[Treebank], references: list[Treebank]
) -> tuple[SentenceCounts, Brackets]:
    return evalb_brackets(predictions[0], references[0], params)


def _in_chunks(fn: Any, predictions: Treebank, references: Treebank, jobs: int) -> tuple[list[int], list[Any]]:
    """``fn``'s result on chunks of sentences, in ``jobs`` worker processes: the chunks' first sentences, results."""
    from metametric_jax import parallel

    n = references.sentences
    size = max(1, -(-n // (parallel.CHUNKS_PER_WORKER * parallel.resolve_jobs(jobs))))
    bounds = [(lo, min(n, lo + size)) for lo in range(0, n, size)]
    parts = parallel.map_chunks(
        fn,
        [_sentences(predictions, lo, hi) for lo, hi in bounds],
        [_sentences(references, lo, hi) for lo, hi in bounds],
        jobs=jobs,
        chunk_size=1,
        preload=[__name__],
    )
    return [lo for lo, _ in bounds], parts


def _joined(starts: Sequence[int], parts: Sequence[SentenceCounts]) -> SentenceCounts:
    fields = [f for f in SentenceCounts._fields if f != "messages"]
    joined: dict[str, Any] = {f: np.concatenate([getattr(c, f) for c in parts]) for f in fields}
    joined["messages"] = {lo + k: why for lo, c in zip(starts, parts) for k, why in c.messages.items()}
    return SentenceCounts(**joined)


#: One process counts the sentences in chunks of about this many words (the reference's, both files' bounded by the
#: same sentences): the arrays of a chunk stay small, in cache and in memory already used, where those of a whole
#: large file would each take fresh pages.
CHUNK_WORDS = 32768


def _ranges(cuts: Sequence[int], n: int) -> list[tuple[int, int]]:
    """Consecutive ranges of ``range(n)`` cut at ``cuts`` (those outside ``(0, n)`` and repeats left out)."""
    edges = sorted({0, n, *(c for c in cuts if 0 < c < n)})
    return list(zip(edges[:-1], edges[1:]))


def _bounds(bank: Treebank, words: int) -> list[tuple[int, int]]:
    """Consecutive sentence ranges of ``bank``, about ``words`` part-of-speech nodes each (at least a sentence)."""
    cuts = np.searchsorted(bank.leaf_offsets, np.arange(words, int(bank.leaf_offsets[-1]), words)).tolist()
    return _ranges(cuts, bank.sentences)


def counts_in_chunks(
    predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS, *, jobs: int = 1
) -> SentenceCounts:
    """:func:`evalb_counts` with the sentences in chunks counted by ``jobs`` worker processes (0: every core).

    EVALB compares the trees sentence by sentence, so the chunks' counts, joined in order, are the file's: the same
    arrays for every number of processes. One process counts a large file in chunks of :data:`CHUNK_WORDS` words.
    """
    n = references.sentences
    if predictions.sentences != n or n < 2:
        return evalb_counts(predictions, references, params)
    if jobs == 1:
        bounds = _bounds(references, CHUNK_WORDS)
        if len(bounds) == 1:
            return evalb_counts(predictions, references, params)
        parts = [
            evalb_counts(_sentences(predictions, lo, hi), _sentences(references, lo, hi), params) for lo, hi in bounds
        ]
        return _joined([lo for lo, _ in bounds], parts)
    return _joined(*_in_chunks(functools.partial(_chunk_counts, params), predictions, references, jobs))


def brackets_in_chunks(
    predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS, *, jobs: int = 1
) -> tuple[SentenceCounts, Brackets]:
    """:func:`evalb_brackets` with the sentences in chunks counted by ``jobs`` worker processes (0: every core).

    The counts are :func:`counts_in_chunks`'; the brackets the same multiset for every number of processes (their
    sentences counted in the whole file, their label numbers those of the labels in order of first appearance over the
    chunks, where one process numbers them as it meets them).
    """
    n = references.sentences
    if jobs == 1 or predictions.sentences != n or n < 2:
        return evalb_brackets(predictions, references, params)
    starts, parts = _in_chunks(functools.partial(_chunk_brackets, params), predictions, references, jobs)
    labels: dict[str, int] = {}
    sides: list[list[np.ndarray]] = [[], []]
    for lo, (_, brackets) in zip(starts, parts):
        code = np.array([labels.setdefault(x, len(labels)) for x in brackets.labels] + [0], np.int64)
        for side, found in zip(sides, (brackets.gold, brackets.test)):
            shifted = found.copy()
            shifted[:, 0] += lo
            shifted[:, 3] = code[found[:, 3]]
            side.append(shifted)
    gold, test = (np.concatenate(side).reshape(-1, 4) for side in sides)
    return _joined(starts, [c for c, _ in parts]), Brackets(gold, test, list(labels))


#: One process reads and counts two files of one tree per line in pieces of about this many bytes (of the
#: reference), cut at the same lines (sentences) of both: each piece's arrays are small, in cache and in memory
#: already used. The counts are those of the whole files (:func:`file_counts`).
PIECE_BYTES = 1 << 18


def _line_starts(data: bytes) -> np.ndarray:
    """The byte offset where each line of ``data`` starts (a last line after the final newline included)."""
    return np.concatenate(([0], np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1))


def _trees_end(data: bytes, line_starts: np.ndarray) -> int:
    """The number of lines up to the last tree's ``)`` (0 without one): the sentences of one tree per line."""
    last = data.rfind(b")")
    return 0 if last < 0 else int(np.searchsorted(line_starts, last, side="right"))


def _in_pieces(pred_data: bytes, ref_data: bytes, params: EvalbParams) -> SentenceCounts | None:
    """The counts of two files of one tree per line read and counted in pieces of :data:`PIECE_BYTES`, or None.

    None (the caller reads the files whole, which decides the layout and words any error) where a file is not one
    tree per line, is malformed, the files' sentences differ in number, or one piece would hold them all.
    """
    if len(ref_data) <= PIECE_BYTES:
        return None
    ref_starts, pred_starts = _line_starts(ref_data), _line_starts(pred_data)
    n = _trees_end(ref_data, ref_starts)
    if n < 2 or _trees_end(pred_data, pred_starts) != n:
        return None
    cuts = np.searchsorted(ref_starts, np.arange(PIECE_BYTES, len(ref_data), PIECE_BYTES)).tolist()
    pieces = _ranges(cuts, n)
    if len(pieces) < 2:
        return None
    parts = []
    for lo, hi in pieces:
        end = None if hi == n else hi  # the last piece runs to the end of the file (text after the last tree)
        ref = ref_data[ref_starts[lo] : None if end is None else ref_starts[end]]
        pred = pred_data[pred_starts[lo] : None if end is None else pred_starts[end]]
        if lo and (ref.startswith(BOM) or pred.startswith(BOM)):  # a byte-order mark only opens a file
            return None
        try:
            t = scan_trees(pred, one_per_line=True, lines=hi - lo)
            g = scan_trees(ref, one_per_line=True, lines=hi - lo)
        except InputFormatError:
            return None
        counts = evalb_counts(t, g, params)
        parts.append(counts._replace(line=counts.line + lo))
    return _joined([lo for lo, _ in pieces], parts)


def file_counts(
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    params: EvalbParams = COLLINS,
    *,
    jobs: int = 1,
) -> SentenceCounts:
    """:func:`counts_in_chunks` of two bracketed files (predictions first), as :func:`score_files` counts them.

    One process reads and counts large files of one tree per line in pieces cut at the same sentences
    (:data:`PIECE_BYTES`); other layouts, malformed input (whose error is then raised, naming the file and line)
    and ``jobs`` other than 1 read each file whole. The counts are the same arrays either way.
    """
    pred_data = read_bytes(predictions)
    try:
        ref_data: bytes | None = read_bytes(references)
    except InputFormatError:  # raised below, after the predictions' own errors
        ref_data = None
    if jobs == 1 and ref_data is not None:
        counts = _in_pieces(pred_data, ref_data, params)
        if counts is not None:
            return counts
    pred = scan_trees(pred_data, os.fspath(predictions))
    ref = read_treebank(references) if ref_data is None else scan_trees(ref_data, os.fspath(references))
    return counts_in_chunks(pred, ref, params, jobs=jobs)


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    params: EvalbParams | str | os.PathLike[str] | None = None,
    jobs: int = 1,
    **options: Any,
) -> Report:
    """EVALB on two bracketed files (``evalb -p params references predictions``), with per-sentence figures.

    Args:
        predictions: the parser's output file (EVALB's "test" file).
        references: the gold file.
        params: :class:`EvalbParams` or the path of an EVALB parameter file; default ``COLLINS.prm``.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is
            the same for every number (:func:`counts_in_chunks`).
        **options: fields of :class:`EvalbParams` overriding ``params``.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`summarize`; one item per sentence (``id``,
        reference ``line``, ``length``, ``status``, ``recall``, ``precision``, bracket counts, ``crossing_brackets``,
        ``words``, ``correct_tags``, ``tagging_accuracy``); a warning per error or skipped sentence.

    Raises:
        InputFormatError: on malformed brackets or files with different numbers of sentences (file and line).
    """
    p = resolve_params(params, options)
    pred_path = os.fspath(predictions)
    return _report(file_counts(predictions, references, p, jobs=jobs), p, pred_path)


def summary_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    params: EvalbParams | str | os.PathLike[str] | None = None,
    jobs: int = 1,
) -> tuple[dict[str, Any], list[str]]:
    """:func:`score_files`'s ``scores`` and ``warnings`` without its per-sentence items (what the summary needs)."""
    p = resolve_params(params, {})
    counts = file_counts(predictions, references, p, jobs=jobs)
    return summarize(counts, p), file_warnings(counts, p, os.fspath(predictions))
