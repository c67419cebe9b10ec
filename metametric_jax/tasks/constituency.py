r"""Constituency parsing: PARSEVAL brackets as EVALB scores them, with a parameter file (``COLLINS.prm`` by default).

EVALB (Sekine and Collins, 1997, http://nlp.cs.nyu.edu/evalb/) is the scorer of constituency parsers since Collins
(1997); PARSEVAL is Black et al., "A Procedure for Quantitatively Comparing the Syntactic Coverage of English
Grammars" (1991). This module computes every figure of EVALB's report, per sentence and in its summary (all
sentences and sentences of at most ``CUTOFF_LEN`` words), equal to the program's output; the default parameters are
those of ``COLLINS.prm``:

* ``DELETE_LABEL TOP -NONE- , : `` '' .``: a part-of-speech node whose tag is one of these is removed with its word
  (traces and punctuation); a phrase whose label (function tags cut) is one of these is not counted (only ``TOP``:
  a root labelled ``ROOT``, or an unlabelled root ``( (S ...))``, **is** a bracket, as in EVALB); a phrase left
  covering no word is not counted;
* function tags are cut from phrase labels at the first ``-`` or ``=`` (``NP-SBJ-1`` and ``NP=2`` are ``NP``);
* ``EQ_LABEL ADVP PRT``: the two labels are the same (for phrases and for tags);
* ``DELETE_LABEL_FOR_LENGTH -NONE-``: a sentence's length, which decides whether it is in the ``len<=40`` summary,
  counts the words of the reference tree except traces (punctuation included);
* brackets are multisets of ``(label, start, end)`` over the words left: :math:`n` identical reference brackets and
  :math:`m` predicted ones match :math:`\min(n, m)` times.

A sentence is **skipped** (status 2) when the prediction has no word left (an empty line: the parser failed), and is
an **error** (status 1) when the two trees have different numbers of words left or a different word at some
position: a part of speech that is deleted on one side only (``.`` tagged ``NN``) is such an error. Skipped and error
sentences are left out of every figure but the sentence counts, and each is reported as a warning. (David Ellis'
2006 change to EVALB puts back a quote word ``'``, ``"`` or ``/`` whose tag is deleted on one side only, before the
lengths are compared; it acts only through ``QUOTE_LABEL`` lines, which ``COLLINS.prm`` has none of, and is followed
exactly when a parameter file has them, as ``new.prm`` and ``nk.prm`` do.) Unlike the program, scoring does not stop
after ``MAX_ERROR`` errors: a warning says that EVALB would have stopped; and where EVALB prints ``nan`` for a 0/0 F1,
the figure is 0. Sentences are lines when no tree spans two lines (several trees on one line are one sentence, a
blank line is a failed parse), else trees; the program's limits (200 words, 5,000 characters a line) do not apply.

.. math::

    \mathrm{LR} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(T_i)|}, \quad
    \mathrm{LP} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(\hat T_i)|}, \quad
    F_1 = \frac{2\,\mathrm{LP}\,\mathrm{LR}}{\mathrm{LP} + \mathrm{LR}}

summed over the valid sentences :math:`i` (micro, as EVALB). A predicted bracket :math:`(a, b)` **crosses** the
reference when some reference bracket :math:`(c, d)` has :math:`c < a < d < b` or :math:`a < c < b < d`; "average
crossing" is the number of crossing predicted brackets per valid sentence, "no crossing" and "2 or less crossing"
the share of valid sentences with none and with at most two. Complete match: the share of valid sentences whose
predicted and reference brackets are all matched. Tagging accuracy: correct tags over the words left.

The headline figure is labeled bracket F1 over all sentences, ``score(...)["f1"]``.

Every figure is one read-out, :func:`readout`, of summed sentence rows (:func:`sentence_rows`), in :func:`score`,
:func:`score_files` and the command line. :func:`state_report` reads a state of the accumulators
:func:`ConstituencyMetric` and :func:`SentenceStatsMetric` in float64 through it: the state's counts are exact, so its
figures are :func:`score`'s bit for bit on the same sentences; ``compute()`` is its jittable float32 twin for training
loops (``brackets``, ``tagging``, ... members; read ``precision`` where the member is a ratio of sentences). The state
counts error and skipped sentences together (sentences not valid): their counts come from :func:`score` only.

Example:
    >>> gold = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down))) (. .)))"
    >>> pred = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (ADVP (RB down)) (. .)))"
    >>> s = score([pred], [gold])
    >>> round(s["f1"], 4), s["all"]["matched_brackets"], s["all"]["gold_brackets"], s["all"]["test_brackets"]
    (0.75, 3, 4, 4)
    >>> s["all"]["tagging_accuracy"], s["all"]["complete_match"]
    (0.75, 0.0)
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.inputs import check_lengths
from metametric_jax.normalizer import f_measure
from metametric_jax.report import Report
from metametric_jax.tasks.constituency_counts import (
    COLLINS,
    Brackets,
    EvalbParams,
    SentenceCounts,
    evalb_brackets,
    evalb_counts,
    read_params,
)
from metametric_jax.tasks.readers.ptb import Tree, Treebank, read_treebank, scan_trees

__all__ = [
    "EvalbParams",
    "COLLINS",
    "read_params",
    "SentenceCounts",
    "evalb_counts",
    "counts_in_chunks",
    "brackets_in_chunks",
    "summarize",
    "sentence_rows",
    "readout",
    "ROW_FIELDS",
    "file_warnings",
    "ConstituencyMetric",
    "score",
    "score_files",
    "summary_files",
    "sentence_stats",
    "SentenceStatsMetric",
    "state_report",
    "parse_bank",
]


_FIGURES = (
    "recall",
    "precision",
    "f1",
    "complete_match",
    "average_crossing",
    "no_crossing",
    "two_or_less_crossing",
    "tagging_accuracy",
)


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
    c = counts
    valid = c.status == 0
    crossing = np.where(valid, c.crossing, 0)
    columns = (
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
        np.ones(c.status.shape),
        c.status == 1,
        c.status == 2,
    )
    rows = np.stack([np.asarray(x, np.float64).reshape(-1) for x in columns], axis=1)
    short = (c.length <= params.cutoff_len).astype(np.float64)
    return np.concatenate([rows, rows * short[:, None]], axis=1)


def readout(totals: Any) -> dict[str, dict[str, float]]:
    """EVALB's figures of summed :func:`sentence_rows`: the one read-out of :func:`summarize`.

    Args:
        totals: float64 ``(2 len(ROW_FIELDS),)``: integer counts, or any non-negative real weights of them (a
            bootstrap replicate).

    Returns:
        ``{"all": {...}, "len40": {...}}``, each with ``recall``, ``precision``, ``f1``, ``complete_match``,
        ``average_crossing``, ``no_crossing``, ``two_or_less_crossing``, ``tagging_accuracy``: Python floats, 0.0
        where a denominator is 0.
    """
    values = np.asarray(totals, np.float64).tolist()
    out = {}
    for k, part in enumerate(_PARTS):
        t = dict(zip(ROW_FIELDS, values[k * len(ROW_FIELDS) : (k + 1) * len(ROW_FIELDS)]))
        m, bg, bt, v = t["matched_brackets"], t["gold_brackets"], t["test_brackets"], t["valid_sentences"]
        w, tags = t["words"], t["correct_tags"]
        r = m / bg if bg else 0.0
        p = m / bt if bt else 0.0
        out[part] = {
            "recall": r,
            "precision": p,
            "f1": f_measure(p, r),
            "complete_match": t["complete_match"] / v if v else 0.0,
            "average_crossing": t["crossing_brackets"] / v if v else 0.0,
            "no_crossing": t["no_crossing"] / v if v else 0.0,
            "two_or_less_crossing": t["two_or_less_crossing"] / v if v else 0.0,
            "tagging_accuracy": tags / w if w else 0.0,
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
    :func:`sentence_rows`.
    """
    from metametric_jax.intervals import exact_totals

    totals = exact_totals(sentence_rows(counts, params))
    figures = readout(totals)
    values = totals.tolist()
    out: dict[str, Any] = {}
    for k, part in enumerate(_PARTS):
        t = dict(zip(ROW_FIELDS, values[k * len(ROW_FIELDS) : (k + 1) * len(ROW_FIELDS)]))
        out[part] = {**figures[part], **{key: int(t[key]) for key in _COUNT_KEYS}}
        if part == "len40":
            out[part]["max_length"] = params.cutoff_len
    return {"f1": out["all"]["f1"], **out}


def _params(params: EvalbParams | str | os.PathLike[str] | None, options: Mapping[str, Any]) -> EvalbParams:
    base = COLLINS if params is None else params if isinstance(params, EvalbParams) else read_params(params)
    if options:
        names = {f.name for f in dataclasses.fields(EvalbParams)}
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
        base = dataclasses.replace(base, **fix)
    return base


def _bank(items: Sequence[Any], what: str) -> Treebank:
    """A one-tree-per-line treebank of trees or bracketed strings (an empty string is an empty parse)."""
    lines = []
    for k, x in enumerate(items):
        if isinstance(x, Tree):
            x = str(x)
        if not isinstance(x, str):
            raise TypeError(f"{what} {k}: expected a Tree or a bracketed string; found {type(x).__name__}")
        lines.append(x.replace("\r", " ").replace("\n", " ").strip())
    bank = scan_trees(("\n".join(lines) + "\n").encode("utf-8"), f"<{what}s>", one_per_line=True)
    n = len(items)
    if bank.sentences < n:  # trailing empty parses
        extra = n - bank.sentences
        bank = dataclasses.replace(
            bank,
            sentences=n,
            line=np.arange(1, n + 1),
            leaf_offsets=np.concatenate((bank.leaf_offsets, np.full(extra, bank.leaf_offsets[-1]))),
        )
    return bank


def _report(counts: SentenceCounts, params: EvalbParams, pred_path: str) -> Report:
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
    """What :func:`score_files` warns about: each error or skipped sentence, and more errors than ``MAX_ERROR``."""
    out = [
        f"{pred_path}: sentence {s + 1} (reference line {int(counts.line[s])}): {msg}; left out, as evalb does"
        for s, msg in sorted(counts.messages.items())
    ]
    errors = int((counts.status == 1).sum())
    if errors > params.max_errors:
        out.append(
            f"{errors} error sentences: evalb stops after MAX_ERROR = {params.max_errors} (these figures leave the "
            "error sentences out and score the rest)"
        )
    return out


def score(
    predictions: Sequence[Tree | str],
    references: Sequence[Tree | str],
    *,
    params: EvalbParams | str | os.PathLike[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """EVALB's summary of predicted trees against reference trees, one per sentence in the same order.

    Args:
        predictions: :class:`~metametric_jax.tasks.readers.ptb.Tree` objects or bracketed strings (``""``: the
            parser gave no tree; the sentence is skipped).
        references: the same for the references.
        params: :class:`EvalbParams`, or the path of an EVALB parameter file; default ``COLLINS.prm``.
        **options: fields of :class:`EvalbParams` overriding ``params`` (``delete_labels=``, ``cutoff_len=``, ...).

    Returns:
        :func:`summarize`'s dict; the headline, labeled bracket F1 over all sentences, is ``["f1"]``.

    Raises:
        InputFormatError: on malformed brackets; ValueError if the two sequences differ in length.
    """
    p = _params(params, options)
    check_lengths(predictions, references, "constituency", "sentence")
    return summarize(evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), p), p)


def _sentences(bank: Treebank, lo: int, hi: int) -> Treebank:
    """Sentences ``lo`` to ``hi`` of a treebank as a treebank of their own (their lines kept, byte offsets rebased)."""
    a, b = int(bank.leaf_offsets[lo]), int(bank.leaf_offsets[hi])
    n0, n1 = np.searchsorted(bank.node_sentence, [lo, hi])
    starts = np.concatenate([bank.tag_start[a:b], bank.word_start[a:b], bank.label_start[n0:n1]])
    ends = np.concatenate([bank.tag_end[a:b], bank.word_end[a:b], bank.label_end[n0:n1]])
    d0, d1 = (int(starts.min()), int(ends.max())) if starts.size else (0, 0)
    return dataclasses.replace(
        bank,
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
    fields = [f.name for f in dataclasses.fields(SentenceCounts) if f.name != "messages"]
    joined: dict[str, Any] = {f: np.concatenate([getattr(c, f) for c in parts]) for f in fields}
    joined["messages"] = {lo + k: why for lo, c in zip(starts, parts) for k, why in c.messages.items()}
    return SentenceCounts(**joined)


def counts_in_chunks(
    predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS, *, jobs: int = 1
) -> SentenceCounts:
    """:func:`evalb_counts` with the sentences in chunks counted by ``jobs`` worker processes (0: every core).

    EVALB compares the trees sentence by sentence, so the chunks' counts, joined in order, are the file's: the same
    arrays for every number of processes.
    """
    n = references.sentences
    if jobs == 1 or predictions.sentences != n or n < 2:
        return evalb_counts(predictions, references, params)
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
    p = _params(params, options)
    pred_path = os.fspath(predictions)
    counts = counts_in_chunks(read_treebank(predictions), read_treebank(references), p, jobs=jobs)
    return _report(counts, p, pred_path)


def summary_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    params: EvalbParams | str | os.PathLike[str] | None = None,
    jobs: int = 1,
) -> tuple[dict[str, Any], list[str]]:
    """:func:`score_files`'s ``scores`` and ``warnings`` without its per-sentence items (what the summary needs)."""
    p = _params(params, {})
    counts = counts_in_chunks(read_treebank(predictions), read_treebank(references), p, jobs=jobs)
    return summarize(counts, p), file_warnings(counts, p, os.fspath(predictions))


def sentence_stats(c: SentenceCounts, params: EvalbParams = COLLINS) -> dict[str, np.ndarray]:
    """Per-sentence statistics ``{member: (n, 3)}`` of :func:`ConstituencyMetric`'s members from EVALB's counts."""
    valid = (c.status == 0).astype(np.float64)
    one = np.ones_like(valid)
    crossing = c.crossing.astype(np.float64)
    per = {
        "brackets": (c.matched, c.test, c.gold),
        "tagging": (c.correct_tags, c.words, c.words),
        "complete_match": (valid * ((c.gold == c.test) & (c.test == c.matched)), valid, valid),
        "crossing": (crossing, valid, valid),
        "no_crossing": (valid * (crossing == 0), valid, valid),
        "two_or_less_crossing": (valid * (crossing <= 2), valid, valid),
        "valid": (valid, one, one),
    }
    short = (c.length <= params.cutoff_len).astype(np.float64)
    out = {}
    for name, cols in per.items():
        arr = np.stack([np.asarray(x, np.float64) for x in cols], axis=1)
        out[name] = arr
        out[name + "_len40"] = arr * short[:, None]
    return out


def _evalb_stats(params: EvalbParams, predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    """:func:`sentence_stats` of trees: the batch function of :func:`ConstituencyMetric`.

    A module-level function, so that worker processes unpickle it without importing JAX.
    """
    c = evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), params)
    return sentence_stats(c, params)


def _row_stats(names: tuple[str, ...], predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    """Each member's statistics from rows of :func:`sentence_stats` given as the predictions (references ignored)."""
    return {k: np.asarray([row[k] for row in predictions], np.float64).reshape(-1, 3) for k in names}


@class_factory
def ConstituencyMetric(params: EvalbParams = COLLINS) -> Any:  # noqa: N802 - a cached factory named as the class
    r"""The accumulator suite of EVALB's figures for ``params`` (cached: one class per setting).

    Members (each a :func:`~metametric_jax.stats_metric` with per-sentence statistics :math:`(xy, xx, yy)`):
    ``brackets`` (matched, predicted, reference brackets: ``precision``, ``recall``, ``f1`` are EVALB's), ``tagging``
    (correct tags, words, words: read ``precision``), ``complete_match``, ``no_crossing``, ``two_or_less_crossing``
    (sentences, valid, valid: read ``precision``), ``crossing`` (crossing brackets, valid, valid: ``precision`` is
    the average crossing), ``valid`` (1 for a valid sentence, 1, 1: ``precision`` is the share of valid sentences),
    and the same with ``_len40`` for sentences of at most ``params.cutoff_len`` words. Inputs: trees or bracketed
    strings, one per sentence. State attributes: each member's ``micro`` (``xy``, ``xx``, ``yy``), ``macro`` and
    ``count`` leaves. The micro figures are EVALB's (Sekine and Collins, 1997):

    .. math::

        \mathrm{LP} = \frac{\sum_i m_i}{\sum_i t_i}, \quad \mathrm{LR} = \frac{\sum_i m_i}{\sum_i g_i}

    with :math:`m_i, t_i, g_i` the matched, predicted and reference brackets of valid sentence :math:`i` (error and
    skipped sentences add zeros). The ``macro_*`` figures are not EVALB's: they average over every sentence, error
    and skipped ones included, and count a sentence without brackets on either side as 1.0.

    Example:
        >>> M = ConstituencyMetric()
        >>> gold = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (NP (NN c)) (VP (VB d)))"]
        >>> pred = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (VP (NN c) (VB d)))"]
        >>> out = M.from_model_output(pred, gold).compute()
        >>> round(float(out["brackets"]["recall"]), 4), round(float(out["brackets"]["precision"]), 4)
        (0.6667, 0.8)
    """
    from metametric_jax.build import stats_metric
    from metametric_jax.suite import make_suite

    names = ("brackets", "tagging", "complete_match", "crossing", "no_crossing", "two_or_less_crossing", "valid")
    members = {}
    for name in names:
        for suffix in ("", "_len40"):
            members[name + suffix] = stats_metric(name=f"evalb_{name}{suffix}", doc=f"EVALB {name}{suffix}.")
    return make_suite(
        "evalb",
        members,
        batch_stats=functools.partial(_evalb_stats, params),
        doc="EVALB's figures as an accumulator suite (see :func:`ConstituencyMetric`).",
    )


@class_factory
def SentenceStatsMetric(params: EvalbParams = COLLINS) -> Any:  # noqa: N802 - a cached factory named as the class
    """:func:`ConstituencyMetric` fed with each sentence's statistics (a row of :func:`sentence_stats` per example).

    The files are read and counted once, as :func:`score_files` does (error and skipped sentences included, as zero
    rows); each sentence becomes one example, the ``predictions``, with ``references`` ignored: the accumulator form of
    :func:`sentence_rows`, which ``score constituency --bootstrap`` and ``compare constituency`` resample on the host.

    Example:
        >>> counts = evalb_counts(parse_bank(["(S (NN a))"]), parse_bank(["(S (NN a))"]))
        >>> rows = sentence_stats(counts)
        >>> M = SentenceStatsMetric()
        >>> float(M.from_model_output([{k: v[0] for k, v in rows.items()}], [None]).compute()["brackets"]["f1"])
        1.0
    """
    from metametric_jax.suite import make_suite

    base = ConstituencyMetric(params).metric_config
    batch = functools.partial(_row_stats, tuple(k for k, _ in base.members))
    return make_suite(
        "evalb_sentences", dict(base.members), batch_stats=batch, doc="EVALB's figures from sentence statistics."
    )


#: The (row field, member, statistic) of each column of :data:`ROW_FIELDS` that a state carries; ``error_sentences``
#: and ``skipped_sentences`` it does not (it counts them together, as sentences not valid), and no figure reads them.
_STATE_FIELDS = (
    ("matched_brackets", "brackets", "xy"),
    ("gold_brackets", "brackets", "yy"),
    ("test_brackets", "brackets", "xx"),
    ("words", "tagging", "xx"),
    ("correct_tags", "tagging", "xy"),
    ("valid_sentences", "valid", "xy"),
    ("complete_match", "complete_match", "xy"),
    ("crossing_brackets", "crossing", "xy"),
    ("no_crossing", "no_crossing", "xy"),
    ("two_or_less_crossing", "two_or_less_crossing", "xy"),
    ("sentences", "valid", "xx"),
)


def state_report(state: Any) -> dict[str, dict[str, float]]:
    """EVALB's figures of a (reduced) :func:`ConstituencyMetric` or :func:`SentenceStatsMetric` state, in float64.

    :func:`readout` of the state's exact totals laid out as :func:`sentence_rows` (``error_sentences`` and
    ``skipped_sentences``, which no figure reads, as 0): the read-out of :func:`score`, so its figures bit for bit on
    the same sentences. ``compute()`` is the jittable float32 twin.

    Returns:
        ``{"all": {...}, "len40": {...}}`` as :func:`readout`.

    Raises:
        TypeError: if ``state`` is not a state of an EVALB accumulator.
    """
    members = getattr(state, "states", None)
    name = getattr(getattr(state, "config", None), "name", None)
    if not isinstance(members, Mapping) or name not in ("evalb", "evalb_sentences"):
        raise TypeError(f"state_report expects a ConstituencyMetric state; found {type(state).__name__}.")
    totals = np.zeros(2 * len(ROW_FIELDS))
    for k, suffix in enumerate(("", "_len40")):
        member = {m: members[m + suffix].totals() for m in dict.fromkeys(m for _, m, _ in _STATE_FIELDS)}
        for field, m, stat in _STATE_FIELDS:
            totals[k * len(ROW_FIELDS) + ROW_FIELDS.index(field)] = member[m][stat]
    return readout(totals)


def parse_bank(trees: Sequence[Any]) -> Treebank:
    """A treebank of trees or bracketed strings, one per sentence (an empty string is a failed parse)."""
    return _bank(trees, "tree")
