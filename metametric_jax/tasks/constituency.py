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
sentences are left out of every figure but the sentence counts, and each is reported as a warning. (The 2006
"bug fix" of EVALB re-inserts mis-tagged quotes only with ``QUOTE_LABEL`` lines, which ``COLLINS.prm`` has none of;
``QUOTE_LABEL`` is refused here.) Unlike the program, scoring does not stop after ``MAX_ERROR`` errors: a warning says
that EVALB would have stopped.

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.report import Report
from metametric_jax.tasks.readers.ptb import Tree, Treebank, parse_params, read_treebank, scan_trees

__all__ = [
    "EvalbParams",
    "COLLINS",
    "read_params",
    "SentenceCounts",
    "evalb_counts",
    "summarize",
    "ConstituencyMetric",
    "score",
    "score_files",
]


def _classes(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each label of an ``EQ_LABEL`` pair mapped to its class's smallest member; the pairs must be transitive."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    pairs = list(pairs)
    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    out = {x: find(x) for x in list(parent)}
    linked = {(a, b) for a, b in pairs} | {(b, a) for a, b in pairs}
    for x in out:
        for y in out:
            if x < y and out[x] == out[y] and (x, y) not in linked:
                raise ValueError(
                    f"EQ_LABEL pairs must form equivalence classes: {x} and {y} are each paired with a common label "
                    "but not with each other (evalb's result would then depend on the order of the brackets)"
                )
    return out


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file; the defaults are ``COLLINS.prm``'s.

    Attributes:
        delete_labels: ``DELETE_LABEL``: tags whose words are removed, phrase labels not counted.
        delete_labels_for_length: ``DELETE_LABEL_FOR_LENGTH``: tags not counted in a sentence's length.
        equivalent_labels: ``EQ_LABEL`` pairs of labels that are the same (they must form equivalence classes).
        equivalent_words: ``EQ_WORD`` pairs of words that are the same.
        labeled: ``LABELED``: False to match brackets on their spans alone.
        cutoff_len: ``CUTOFF_LEN``: the length limit of the second summary.
        max_errors: ``MAX_ERROR``: EVALB stops after more errors than this (here: a warning).
    """

    delete_labels: tuple[str, ...] = ("TOP", "-NONE-", ",", ":", "``", "''", ".")
    delete_labels_for_length: tuple[str, ...] = ("-NONE-",)
    equivalent_labels: tuple[tuple[str, str], ...] = (("ADVP", "PRT"),)
    equivalent_words: tuple[tuple[str, str], ...] = ()
    labeled: bool = True
    cutoff_len: int = 40
    max_errors: int = 10

    def __post_init__(self) -> None:
        _classes(self.equivalent_labels)  # refuses a relation that is not an equivalence


COLLINS = EvalbParams()
"""``COLLINS.prm``: the parameters of Collins (1997), the default."""


def read_params(source: str | os.PathLike[str], text: str | None = None) -> EvalbParams:
    """The :class:`EvalbParams` of an EVALB parameter file (or of ``text``, named ``source`` in messages).

    Settings not in the file keep EVALB's built-in defaults (no deleted or equivalent labels, labeled, cut-off 40,
    ``MAX_ERROR`` 10), not ``COLLINS.prm``'s. ``DEBUG`` is ignored.

    Raises:
        InputFormatError: on an unknown keyword, a bad value or ``QUOTE_LABEL`` (not supported).
    """
    path = os.fspath(source)
    if text is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as err:
            raise InputFormatError(path, None, f"cannot read the parameter file ({err.strerror or err})") from None
    values = parse_params(text, path)
    if "QUOTE_LABEL" in values:
        raise InputFormatError(path, None, "QUOTE_LABEL (evalb's re-insertion of mis-tagged quotes) is not supported")

    def integer(key: str, default: int) -> int:
        raw = values.get(key, [str(default)])[-1].split()[0]
        try:
            return int(raw)
        except ValueError:
            raise InputFormatError(path, None, f"{key} must be an integer; found {raw!r}") from None

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        out = []
        for v in values.get(key, []):
            parts = v.split()
            if len(parts) != 2:
                raise InputFormatError(path, None, f"{key} takes two values; found {v!r}")
            out.append((parts[0], parts[1]))
        return tuple(out)

    try:
        return EvalbParams(
            delete_labels=tuple(values.get("DELETE_LABEL", [])),
            delete_labels_for_length=tuple(values.get("DELETE_LABEL_FOR_LENGTH", [])),
            equivalent_labels=pairs("EQ_LABEL"),
            equivalent_words=pairs("EQ_WORD"),
            labeled=integer("LABELED", 1) != 0,
            cutoff_len=integer("CUTOFF_LEN", 40),
            max_errors=integer("MAX_ERROR", 10),
        )
    except ValueError as err:
        raise InputFormatError(path, None, str(err)) from None


def _cut(label: str) -> str:
    """A phrase label without function tags: cut at the first ``-`` or ``=`` (as EVALB, even at the start)."""
    for i, ch in enumerate(label):
        if ch in "-=":
            return label[:i]
    return label


_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [2**64 - 1], dtype=np.uint64)


def _words64(buffer: np.ndarray) -> np.ndarray:
    """Overlapping little-endian uint64 views: ``out[i]`` is bytes ``i`` to ``i + 8`` of ``buffer`` (zero-padded)."""
    padded = np.append(buffer, np.zeros(8, np.uint8))
    return np.ndarray(shape=(buffer.size + 1,), dtype="<u8", buffer=padded, strides=(1,))


def _chunks(words: np.ndarray, start: np.ndarray, length: np.ndarray, k: int) -> np.ndarray:
    """Bytes ``8k`` to ``8k + 8`` of each string as a uint64 (zero past its end)."""
    rest = np.clip(length - 8 * k, 0, 8)
    return words[np.minimum(start + 8 * k, words.size - 1)] & _MASKS[rest]


def _intern(buffer: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """Codes of the byte strings ``buffer[start:end]`` and the distinct strings (hashing, checked exactly)."""
    length = end - start
    codes = np.empty(start.size, dtype=np.int64)
    short = length <= 7
    vocab: list[bytes] = []
    raw = buffer.tobytes()
    if short.any():
        key = _chunks(_words64(buffer), start[short], length[short], 0) | (
            length[short].astype(np.uint64) << np.uint64(56)
        )
        bits = 16
        while True:  # buckets by a multiplicative hash; a collision between distinct keys doubles the table
            bucket = ((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64)
            table = np.zeros(1 << bits, dtype=np.uint64)
            table[bucket] = key
            if np.array_equal(table[bucket], key) or bits >= 24:
                break
            bits += 4
        if np.array_equal(table[bucket], key):
            used = np.flatnonzero(np.bincount(bucket, minlength=1 << bits))
            rank = np.zeros(1 << bits, dtype=np.int64)
            rank[used] = np.arange(used.size)
            codes[short] = rank[bucket]
            first = np.zeros(1 << bits, dtype=np.int64)
            idx = np.flatnonzero(short)
            first[bucket[::-1]] = idx[::-1]
            vocab = [raw[int(start[i]) : int(end[i])] for i in first[used].tolist()]
        else:
            short[:] = False
    if not short.all():
        index = {v: i for i, v in enumerate(vocab)}
        for k in np.flatnonzero(~short).tolist():
            word = raw[int(start[k]) : int(end[k])]
            if word not in index:
                index[word] = len(vocab)
                vocab.append(word)
            codes[k] = index[word]
    return codes, vocab


def _words_equal(buffer: np.ndarray, a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Whether ``buffer[a0:a1] == buffer[b0:b1]`` for each pair, byte for byte, eight bytes at a time."""
    n = a1 - a0
    same = n == (b1 - b0)
    windows = _words64(buffer)
    k = 0
    todo = np.flatnonzero(same)
    while todo.size:
        eq = _chunks(windows, a0[todo], n[todo], k) == _chunks(windows, b0[todo], n[todo], k)
        same[todo[~eq]] = False
        k += 1
        todo = todo[eq & (n[todo] > 8 * k)]
    return same


@dataclasses.dataclass(frozen=True)
class SentenceCounts:
    """EVALB's per-sentence counts, one entry per sentence (all zero for error and skipped sentences).

    Attributes:
        status: 0 valid, 1 error, 2 skipped.
        length: the sentence's length (reference words not deleted for length).
        matched, gold, test: matched brackets and brackets of the reference and of the prediction.
        crossing: predicted brackets crossing a reference bracket.
        words, correct_tags: words scored and words whose tags agree.
        line: the 1-based line of each reference sentence.
        messages: ``{sentence index: why it is an error or skipped}``.
    """

    status: np.ndarray
    length: np.ndarray
    matched: np.ndarray
    gold: np.ndarray
    test: np.ndarray
    crossing: np.ndarray
    words: np.ndarray
    correct_tags: np.ndarray
    line: np.ndarray
    messages: dict[int, str]


def evalb_counts(predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS) -> SentenceCounts:
    """EVALB's counts for every sentence of two treebanks (predictions first).

    Raises:
        InputFormatError: when the two files have different numbers of sentences.
    """
    g, t = references, predictions
    n = g.sentences
    if t.sentences != n:
        longer = t if t.sentences > n else g
        shorter = g if longer is t else t
        at = int(longer.line[shorter.sentences])
        raise InputFormatError(
            longer.path,
            at,
            f"{longer.sentences} sentences but {shorter.path} has {shorter.sentences}; sentence "
            f"{shorter.sentences + 1} has no counterpart (one tree per sentence, in the same order)",
        )
    buffer = np.concatenate((g.data, t.data))
    shift = g.data.size
    starts = [g.tag_start, g.label_start, t.tag_start + shift, t.label_start + shift]
    ends = [g.tag_end, g.label_end, t.tag_end + shift, t.label_end + shift]
    sizes = [a.size for a in starts]
    codes, vocab = _intern(buffer, np.concatenate(starts), np.concatenate(ends))
    g_tag, g_label, t_tag, t_label = np.split(codes, np.cumsum(sizes)[:-1])
    labels = [v.decode("utf-8", "replace") for v in vocab]
    eq = _classes(params.equivalent_labels)
    names: dict[str, int] = {}

    def cls(label: str) -> int:
        return names.setdefault(eq.get(label, label), len(names))

    delete = set(params.delete_labels)
    delete_classes = {cls(d) for d in delete}
    leaf_deleted = np.array([x in delete for x in labels] + [False], dtype=bool)
    length_deleted = np.array([x in params.delete_labels_for_length for x in labels] + [False], dtype=bool)
    tag_class = np.array([cls(x) for x in labels] + [0], dtype=np.int64)
    phrase_class = np.array([cls(_cut(x)) for x in labels] + [0], dtype=np.int64)
    phrase_deleted = np.array([cls(_cut(x)) in delete_classes for x in labels] + [False], dtype=bool)

    g_leaf_sentence = np.repeat(np.arange(n), np.diff(g.leaf_offsets))
    t_leaf_sentence = np.repeat(np.arange(n), np.diff(t.leaf_offsets))
    g_keep = ~leaf_deleted[g_tag]
    t_keep = ~leaf_deleted[t_tag]
    wn1 = np.bincount(g_leaf_sentence[g_keep], minlength=n)
    wn2 = np.bincount(t_leaf_sentence[t_keep], minlength=n)
    length = np.bincount(g_leaf_sentence[~length_deleted[g_tag]], minlength=n)
    status = np.zeros(n, dtype=np.int64)
    status[wn2 == 0] = 2
    status[(status == 0) & (wn1 != wn2)] = 1
    messages: dict[int, str] = {}
    for s in np.flatnonzero(status == 2).tolist():
        messages[s] = "the prediction has no words (an empty parse): skipped"
    for s in np.flatnonzero(status == 1).tolist():
        messages[s] = f"length mismatch: {int(wn1[s])} words in the reference, {int(wn2[s])} in the prediction"

    # words, position by position, where the lengths agree
    gk = np.flatnonzero(g_keep & (status == 0)[g_leaf_sentence])
    tk = np.flatnonzero(t_keep & (status == 0)[t_leaf_sentence])
    same = _words_equal(buffer, g.word_start[gk], g.word_end[gk], t.word_start[tk] + shift, t.word_end[tk] + shift)
    if not same.all():
        raw = buffer.tobytes()
        eq_words = {(a, b) for a, b in params.equivalent_words} | {(b, a) for a, b in params.equivalent_words}
        for k in np.flatnonzero(~same).tolist():
            i, j = int(gk[k]), int(tk[k])
            a = raw[int(g.word_start[i]) : int(g.word_end[i])].decode("utf-8", "replace")
            b = raw[int(t.word_start[j]) + shift : int(t.word_end[j]) + shift].decode("utf-8", "replace")
            s = int(g_leaf_sentence[i])
            if (a, b) in eq_words:
                same[k] = True
            elif status[s] == 0:
                status[s] = 1
                messages[s] = f"words differ: {a!r} in the reference, {b!r} in the prediction"
    ok = status == 0
    aligned = ok[g_leaf_sentence[gk]]
    correct = tag_class[g_tag[gk]] == tag_class[t_tag[tk]]
    correct_tags = np.bincount(g_leaf_sentence[gk][aligned & correct], minlength=n)
    words = np.where(ok, wn1, 0)

    def spans(bank: Treebank, keep: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, ...]:
        kept = np.concatenate(([0], np.cumsum(keep)))
        off = bank.leaf_offsets[bank.node_sentence]
        start = kept[off + bank.first] - kept[off]
        end = kept[off + bank.last] - kept[off]
        valid = (start < end) & ~phrase_deleted[label] & ok[bank.node_sentence]
        klass = phrase_class[label] if params.labeled else np.zeros_like(label)
        return bank.node_sentence[valid], start[valid], end[valid], klass[valid]

    gs, ga, gb, gc = spans(g, g_keep, g_label)
    ts, ta, tb, tc = spans(t, t_keep, t_label)
    gold = np.bincount(gs, minlength=n)
    test = np.bincount(ts, minlength=n)
    width = int(max(wn1.max(initial=0), 1)) + 1
    n_class = max(len(names), 1)
    if (n + 1) * width * width * n_class >= 2**61:  # beyond any treebank; refuse rather than overflow
        raise ValueError("too many sentences, words or labels to key the brackets in 64 bits")
    # multisets: sort the keys of both sides (side in the lowest bit); a run of one key holds gold, then test
    key_g = (((gs * width + ga) * width + gb) * n_class + gc) * 2
    key_t = (((ts * width + ta) * width + tb) * n_class + tc) * 2 + 1
    keys = np.sort(np.concatenate((key_g, key_t)))
    bracket = keys >> 1
    new_run = np.ones(keys.size, dtype=bool)
    new_run[1:] = bracket[1:] != bracket[:-1]
    run = np.cumsum(new_run) - 1
    run_key = bracket[new_run]
    n_test = np.bincount(run, weights=keys & 1, minlength=run_key.size)
    n_gold = np.bincount(run, minlength=run_key.size) - n_test
    both = np.minimum(n_gold, n_test)
    matched = np.bincount(run_key // (width * width * n_class), weights=both, minlength=n).astype(np.int64)[:n]
    crossing = _crossing(n, wn1, gs, ga, gb, ts, ta, tb)
    return SentenceCounts(
        status=status,
        length=length,
        matched=matched,
        gold=gold,
        test=test,
        crossing=crossing,
        words=words,
        correct_tags=correct_tags,
        line=g.line,
        messages=messages,
    )


def _crossing(n: int, wn: np.ndarray, gs: np.ndarray, ga: np.ndarray, gb: np.ndarray, *test: np.ndarray) -> np.ndarray:
    """Per sentence, the predicted brackets crossing some reference bracket (range minimum/maximum queries)."""
    ts, ta, tb = test
    offset = np.concatenate(([0], np.cumsum(wn + 1)))
    size = int(offset[-1]) + 1
    gc, gd = offset[gs] + ga, offset[gs] + gb
    a, b = offset[ts] + ta, offset[ts] + tb
    # reference brackets starting at x: the furthest end; ending at x: the earliest start
    far_end = np.full(size, -1, dtype=np.int64)
    early_start = np.full(size, size + 1, dtype=np.int64)
    if gc.size:
        order = np.argsort(gc, kind="stable")
        key, value = gc[order], gd[order]
        run = np.flatnonzero(np.append(True, key[1:] != key[:-1]))
        far_end[key[run]] = np.maximum.reduceat(value, run)
        order = np.argsort(gd, kind="stable")
        key, value = gd[order], gc[order]
        run = np.flatnonzero(np.append(True, key[1:] != key[:-1]))
        early_start[key[run]] = np.minimum.reduceat(value, run)
    lo, hi = a + 1, b - 1  # positions strictly inside the predicted bracket
    has = hi >= lo
    lo, hi, a, b, ts = lo[has], hi[has], a[has], b[has], ts[has]
    span = hi - lo + 1
    level = np.floor(np.log2(np.maximum(span, 1))).astype(np.int64)
    top_max, top_min = far_end.copy(), early_start.copy()
    best_max = np.full(lo.size, -1, dtype=np.int64)
    best_min = np.full(lo.size, size + 1, dtype=np.int64)
    k = 0
    while True:
        at = level == k
        if at.any():
            right = hi[at] - (1 << k) + 1
            best_max[at] = np.maximum(top_max[lo[at]], top_max[right])
            best_min[at] = np.minimum(top_min[lo[at]], top_min[right])
        if not (level > k).any():
            break
        step = 1 << k
        top_max[:-step] = np.maximum(top_max[:-step], top_max[step:])
        top_min[:-step] = np.minimum(top_min[:-step], top_min[step:])
        k += 1
    crosses = (best_max > b) | (best_min < a)
    return np.bincount(ts[crosses], minlength=n).astype(np.int64)


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


def summarize(counts: SentenceCounts, params: EvalbParams = COLLINS) -> dict[str, Any]:
    """EVALB's summary of per-sentence counts: ``{"f1": ..., "all": {...}, "len40": {...}}``.

    Each of ``all`` and ``len40`` (sentences of length at most ``params.cutoff_len``, named ``len40`` whatever the
    cut-off, which ``max_length`` gives) holds ``recall``, ``precision``, ``f1``, ``complete_match``,
    ``no_crossing``, ``two_or_less_crossing``, ``tagging_accuracy`` (fractions), ``average_crossing`` (brackets per
    sentence), and the counts ``sentences``, ``error_sentences``, ``skipped_sentences``, ``valid_sentences``,
    ``matched_brackets``, ``gold_brackets``, ``test_brackets``, ``crossing_brackets``, ``words``, ``correct_tags``.
    A 0/0 figure is 0 (EVALB prints ``nan`` for F1 there).
    """
    out: dict[str, Any] = {}
    for key, keep in (("all", None), ("len40", counts.length <= params.cutoff_len)):
        c = counts if keep is None else _subset(counts, keep)
        valid = c.status == 0
        v = int(valid.sum())
        m, bg, bt = int(c.matched.sum()), int(c.gold.sum()), int(c.test.sum())
        w, tags = int(c.words.sum()), int(c.correct_tags.sum())
        r = m / bg if bg else 0.0
        p = m / bt if bt else 0.0
        crossing = c.crossing[valid]
        complete = (c.gold == c.test) & (c.test == c.matched) & valid
        figures = {
            "recall": r,
            "precision": p,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "complete_match": int(complete.sum()) / v if v else 0.0,
            "average_crossing": int(crossing.sum()) / v if v else 0.0,
            "no_crossing": int((crossing == 0).sum()) / v if v else 0.0,
            "two_or_less_crossing": int((crossing <= 2).sum()) / v if v else 0.0,
            "tagging_accuracy": tags / w if w else 0.0,
            "sentences": int(c.status.size),
            "error_sentences": int((c.status == 1).sum()),
            "skipped_sentences": int((c.status == 2).sum()),
            "valid_sentences": v,
            "matched_brackets": m,
            "gold_brackets": bg,
            "test_brackets": bt,
            "crossing_brackets": int(crossing.sum()),
            "words": w,
            "correct_tags": tags,
        }
        if keep is not None:
            figures["max_length"] = params.cutoff_len
        out[key] = figures
    return {"f1": out["all"]["f1"], **out}


def _subset(c: SentenceCounts, keep: np.ndarray) -> SentenceCounts:
    fields = {f.name: getattr(c, f.name) for f in dataclasses.fields(c)}
    return SentenceCounts(**{k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in fields.items()})


def _params(params: EvalbParams | str | os.PathLike[str] | None, options: Mapping[str, Any]) -> EvalbParams:
    base = COLLINS if params is None else params if isinstance(params, EvalbParams) else read_params(params)
    if options:
        names = {f.name for f in dataclasses.fields(EvalbParams)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; expected params or {', '.join(sorted(names))}")
        fix = {
            k: tuple(tuple(x) if not isinstance(x, str) else x for x in v) if k.startswith(("delete", "equiv")) else v
            for k, v in options.items()
        }
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
    warnings = [
        f"{pred_path}: sentence {s + 1} (reference line {int(counts.line[s])}): {msg}; left out, as evalb does"
        for s, msg in sorted(counts.messages.items())
    ]
    errors = int((counts.status == 1).sum())
    if errors > params.max_errors:
        warnings.append(
            f"{errors} error sentences: evalb stops after MAX_ERROR = {params.max_errors} (these figures leave the "
            "error sentences out and score the rest)"
        )
    return Report(scores, items, warnings)


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
    if len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must have the same length; found {len(predictions)} and {len(references)}"
        )
    return summarize(evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), p), p)


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    params: EvalbParams | str | os.PathLike[str] | None = None,
    **options: Any,
) -> Report:
    """EVALB on two bracketed files (``evalb -p params references predictions``), with per-sentence figures.

    Args:
        predictions: the parser's output file (EVALB's "test" file).
        references: the gold file.
        params: :class:`EvalbParams` or the path of an EVALB parameter file; default ``COLLINS.prm``.
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
    counts = evalb_counts(read_treebank(predictions), read_treebank(references), p)
    return _report(counts, p, pred_path)


def _batch_stats(params: EvalbParams) -> Any:
    def stats(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
        c = evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), params)
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

    return stats


@functools.cache
def ConstituencyMetric(params: EvalbParams = COLLINS) -> type:  # noqa: N802 - a cached factory named as the class
    r"""The accumulator suite of EVALB's figures for ``params`` (cached: one class per setting).

    Members (each a :func:`~metametric_jax.stats_metric` with per-sentence statistics :math:`(xy, xx, yy)`):
    ``brackets`` (matched, predicted, reference brackets: ``precision``, ``recall``, ``f1`` are EVALB's), ``tagging``
    (correct tags, words, words: read ``precision``), ``complete_match``, ``no_crossing``, ``two_or_less_crossing``
    (sentences, valid, valid: read ``precision``), ``crossing`` (crossing brackets, valid, valid: ``precision`` is
    the average crossing), ``valid`` (1 for a valid sentence, 1, 1: ``precision`` is the share of valid sentences),
    and the same with ``_len40`` for sentences of at most ``params.cutoff_len`` words. Inputs: trees or bracketed
    strings, one per sentence. State attributes: each member's ``micro`` (``xy``, ``xx``, ``yy``), ``macro`` and
    ``count`` leaves.

    Example:
        >>> M = ConstituencyMetric()
        >>> gold = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (NP (NN c)) (VP (VB d)))"]
        >>> pred = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (VP (NN c) (VB d)))"]
        >>> out = M.from_model_output(pred, gold).compute()
        >>> round(float(out["brackets"]["recall"]), 4), round(float(out["brackets"]["precision"]), 4)
        (0.6, 0.75)
    """
    from metametric_jax import make_suite, stats_metric

    names = ("brackets", "tagging", "complete_match", "crossing", "no_crossing", "two_or_less_crossing", "valid")
    members = {}
    for name in names:
        for suffix in ("", "_len40"):
            members[name + suffix] = stats_metric(name=f"evalb_{name}{suffix}", doc=f"EVALB {name}{suffix}.")
    return make_suite(
        "evalb",
        members,
        batch_stats=_batch_stats(params),
        doc="EVALB's figures as an accumulator suite (see :func:`ConstituencyMetric`).",
    )
