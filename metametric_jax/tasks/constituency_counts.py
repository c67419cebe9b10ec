"""EVALB's per-sentence counts: the checks of each sentence, brackets, crossing, tags.

The computation behind :mod:`metametric_jax.tasks.constituency` (see there for the conventions): both treebanks are
read into columns (:mod:`metametric_jax.tasks.readers.ptb`) and every sentence is counted with NumPy at once;
labels are interned by hashing (checked exactly), words compared byte for byte, brackets matched as multisets by
sorting, crossing brackets found with range minimum / maximum queries.
"""

from __future__ import annotations

import bisect
import collections
from typing import Any, NamedTuple

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.evalb import COLLINS, EvalbParams, equivalence_classes, read_params
from metametric_jax.tasks.readers.ptb import Treebank

__all__ = ["EvalbParams", "COLLINS", "read_params", "SentenceCounts", "evalb_counts", "Brackets", "evalb_brackets"]


def _cut(label: str) -> str:
    """A phrase label without function tags: cut at the first ``-`` or ``=`` (as EVALB, even at the start)."""
    for i, ch in enumerate(label):
        if ch in "-=":
            return label[:i]
    return label


def _words64(buffer: np.ndarray) -> np.ndarray:
    """Overlapping little-endian uint64 views: ``out[i]`` is bytes ``i`` to ``i + 8`` of ``buffer`` (zero-padded)."""
    return _padded(buffer)[1]


def _padded(*parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of ``parts`` joined (one copy, eight zero bytes after them) and :func:`_words64` of them."""
    padded = np.concatenate((*parts, np.zeros(8, np.uint8)))
    size = padded.size - 8
    return padded[:size], np.ndarray(shape=(size + 1,), dtype="<u8", buffer=padded, strides=(1,))


_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [2**64 - 1], dtype=np.uint64)


def _chunks(words: np.ndarray, start: np.ndarray, length: np.ndarray, k: int) -> np.ndarray:
    """Bytes ``8k`` to ``8k + 8`` of each string as a uint64 (zero past its end)."""
    rest = length - 8 * k if k else length
    return words[start + 8 * k if k else start] & _MASKS[np.clip(rest, 0, 8, out=rest if k else None)]


def _intern(
    buffer: np.ndarray, start: np.ndarray, end: np.ndarray, windows: np.ndarray | None = None
) -> tuple[np.ndarray, list[bytes]]:
    """Codes of the byte strings ``buffer[start:end]`` and the distinct strings (hashing, checked exactly).

    ``windows``: :func:`_words64` of ``buffer`` where the caller has it already.

    The arrays over every string are computed in place and dropped once used (a file's strings number in the
    millions: fewer of them at once, fewer fresh pages of memory).
    """
    length = end - start
    short = length <= 15  # two 64-bit words: bytes 0-7, and bytes 8-14 with the length
    everything = bool(short.all())
    codes = np.empty(0 if everything else start.size, dtype=np.int64)
    vocab: list[bytes] = []
    if short.any():
        words = _words64(buffer) if windows is None else windows
        s, n = (start, length) if everything else (start[short], length[short])
        k0 = words[s]  # _chunks(words, s, n, 0), in place (no string is shorter than 0 bytes)
        k0 &= _MASKS[np.minimum(n, 8)]
        k1 = n.astype(np.uint64)
        k1 <<= np.uint64(56)
        more = np.flatnonzero(n > 8)
        k1[more] |= _chunks(words, s[more], n[more], 1)
        del words, more
        mixed = k0 * np.uint64(0x9E3779B97F4A7C15)
        mixed ^= k1 * np.uint64(0xC2B2AE3D27D4EB4F)
        bits = 16
        while True:  # buckets by a multiplicative hash; a collision between distinct keys widens the table
            bucket = (mixed >> np.uint64(64 - bits)).view(np.int64)  # below 2**bits: the same numbers
            # (the tables are read only where written: no zeros to write first, as in rank and first below)
            t0 = np.empty(1 << bits, dtype=np.uint64)
            t1 = np.empty(1 << bits, dtype=np.uint64)
            t0[bucket] = k0
            t1[bucket] = k1
            exact = bool(np.array_equal(t0[bucket], k0) and np.array_equal(t1[bucket], k1))
            if exact or bits >= 24:
                break
            bits += 4
        del mixed, k0, k1, t0, t1
        if exact:
            seen = np.zeros(1 << bits, dtype=bool)
            seen[bucket] = True
            used = np.flatnonzero(seen)
            rank = np.empty(1 << bits, dtype=np.int64)
            rank[used] = np.arange(used.size)
            first = np.empty(1 << bits, dtype=np.int64)
            first[bucket] = np.arange(start.size) if everything else np.flatnonzero(short)  # any item of a bucket
            if everything:
                codes = rank[bucket]
            else:
                codes[short] = rank[bucket]
            vocab = [buffer[int(start[i]) : int(end[i])].tobytes() for i in first[used].tolist()]
        else:
            short[:] = False
            everything = False
            codes = np.empty(start.size, dtype=np.int64)
    if not everything:
        raw = buffer.tobytes()
        index = {v: i for i, v in enumerate(vocab)}
        for k in np.flatnonzero(~short).tolist():
            word = raw[int(start[k]) : int(end[k])]
            if word not in index:
                index[word] = len(vocab)
                vocab.append(word)
            codes[k] = index[word]
    return codes, vocab


def _words_equal(windows: np.ndarray, a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Whether the byte strings ``[a0, a1)`` and ``[b0, b1)`` of a buffer are equal, byte for byte, eight at a time.

    ``windows``: :func:`_words64` of the buffer. Strings of one length are compared: the bytes of each eight that
    differ (exclusive or), those past the strings' end masked away.
    """
    n = a1 - a0
    same = n == (b1 - b0)
    todo = None if same.all() else np.flatnonzero(same)  # None: every string (no copies of the starts)
    k = 0
    while todo is None or todo.size:
        a, b, rest = (a0, b0, n) if todo is None else (a0[todo], b0[todo], n[todo])
        if k:
            a, b, rest = a + 8 * k, b + 8 * k, rest - 8 * k
        differ = windows[a]
        differ ^= windows[b]
        differ &= _MASKS[np.minimum(rest, 8)]
        eq = differ == 0
        if todo is None:
            same &= eq
            todo = np.flatnonzero(eq & (n > 8))
        else:
            same[todo[~eq]] = False
            todo = todo[eq & (rest > 8)]
        k += 1
    return same


class SentenceCounts(NamedTuple):
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


class Brackets(NamedTuple):
    """The brackets EVALB counts in each valid sentence, with their labels (for figures per label).

    Attributes:
        gold: int64 ``(n, 4)``: each reference bracket's sentence, start, end (in the words left) and label.
        test: the same of the predicted brackets.
        labels: the label names: a phrase label without function tags, the smallest of its ``EQ_LABEL`` class.
    """

    gold: np.ndarray
    test: np.ndarray
    labels: list[str]


def _count(n: int) -> str:
    return f"{n} sentence" if n == 1 else f"{n} sentences"


def evalb_counts(predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS) -> SentenceCounts:
    """EVALB's counts for every sentence of two treebanks (predictions first).

    Raises:
        InputFormatError: when the two files have different numbers of sentences.
    """
    return _evalb(predictions, references, params, brackets=False)[0]


def evalb_brackets(
    predictions: Treebank, references: Treebank, params: EvalbParams = COLLINS
) -> tuple[SentenceCounts, Brackets]:
    """:func:`evalb_counts` and the labelled brackets it counts in each valid sentence.

    The brackets carry their labels whatever ``params.labeled`` (which decides whether the counts compare them).

    Raises:
        InputFormatError: when the two files have different numbers of sentences.
    """
    counts, tables = _evalb(predictions, references, params)
    if tables is None:  # never: _evalb builds them unless told not to
        raise AssertionError("the bracket tables were not built")
    return counts, tables


def _evalb(
    predictions: Treebank, references: Treebank, params: EvalbParams, *, brackets: bool = True
) -> tuple[SentenceCounts, Brackets | None]:
    """:func:`evalb_brackets`; ``brackets=False`` leaves out the bracket tables (None), which the counts do not use."""
    g, t = references, predictions
    n = g.sentences
    if t.sentences != n:
        longer = t if t.sentences > n else g
        shorter = g if longer is t else t
        at = int(longer.line[shorter.sentences])
        raise InputFormatError(
            longer.path,
            at,
            f"{_count(longer.sentences)} but {shorter.path} has {shorter.sentences}; sentence "
            f"{shorter.sentences + 1} has no counterpart (one tree per sentence, in the same order)",
        )
    buffer, windows = _padded(g.data, t.data)  # one copy of both files' bytes, read eight bytes at a time
    shift = g.data.size
    starts = [g.tag_start, g.label_start, t.tag_start + shift, t.label_start + shift]
    ends = [g.tag_end, g.label_end, t.tag_end + shift, t.label_end + shift]
    sizes = [a.size for a in starts]
    codes, vocab = _intern(buffer, np.concatenate(starts), np.concatenate(ends), windows)
    del starts, ends
    g_tag, g_label, t_tag, t_label = np.split(codes, np.cumsum(sizes)[:-1])
    labels = [v.decode("utf-8") for v in vocab]
    eq = equivalence_classes(params.equivalent_labels)
    names: dict[str, int] = {}

    def cls(label: str) -> int:
        return names.setdefault(eq.get(label, label), len(names))

    delete = set(params.delete_labels)
    delete_classes = {cls(d) for d in delete}
    for_length = set(params.delete_labels_for_length)
    leaf_deleted = np.array([x in delete for x in labels] + [False], dtype=bool)
    length_deleted = np.array([x in for_length for x in labels] + [False], dtype=bool)
    tag_class = np.array([cls(x) for x in labels] + [0], dtype=np.int64)
    cut_class = [cls(_cut(x)) for x in labels]
    phrase_class = np.array(cut_class + [0], dtype=np.int64)
    phrase_deleted = np.array([c in delete_classes for c in cut_class] + [False], dtype=bool)

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
    raw = buffer.data  # the bytes of a word sliced where a message or a quote needs them (no copy)
    by_hand: dict[int, tuple[tuple[int, ...], list[tuple[int, int, int]], list[tuple[int, int, int]]]] = {}
    quote_tags = {k for k, x in enumerate(labels) if x in params.quote_labels}
    for s in np.flatnonzero(status == 1).tolist():
        message = f"length mismatch: {int(wn1[s])} words in the reference, {int(wn2[s])} in the prediction"
        if quote_tags:
            counts = _by_hand(
                _evalb_reading(g, s, g_tag, g_label, raw, 0, leaf_deleted, quote_tags),
                _evalb_reading(t, s, t_tag, t_label, raw, shift, leaf_deleted, quote_tags),
                _Rules(leaf_deleted, tag_class, phrase_class, phrase_deleted, params),
            )
            if isinstance(counts, str):
                message = counts
            else:
                by_hand[s] = counts
        messages[s] = message

    # words, position by position, where the lengths agree
    gk = np.flatnonzero(g_keep & (status == 0)[g_leaf_sentence])
    tk = np.flatnonzero(t_keep & (status == 0)[t_leaf_sentence])
    same = _words_equal(windows, g.word_start[gk], g.word_end[gk], t.word_start[tk] + shift, t.word_end[tk] + shift)
    if not same.all():
        eq_words = {(a, b) for a, b in params.equivalent_words} | {(b, a) for a, b in params.equivalent_words}
        for k in np.flatnonzero(~same).tolist():
            i, j = int(gk[k]), int(tk[k])
            a = bytes(raw[int(g.word_start[i]) : int(g.word_end[i])]).decode("utf-8")
            b = bytes(raw[int(t.word_start[j]) + shift : int(t.word_end[j]) + shift]).decode("utf-8")
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
    # (arrays no longer needed are dropped as the counting goes: less memory held at once, fewer fresh pages)
    del raw, buffer, windows, gk, tk, same, aligned, correct, g_leaf_sentence, t_leaf_sentence
    words = np.where(ok, wn1, 0)

    def spans(bank: Treebank, keep: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, ...]:
        kept = np.concatenate(([0], np.cumsum(keep)))
        off = bank.leaf_offsets[bank.node_sentence]
        start = kept[off + bank.first] - kept[off]
        end = kept[off + bank.last] - kept[off]
        valid = (start < end) & ~phrase_deleted[label] & ok[bank.node_sentence]
        return bank.node_sentence[valid], start[valid], end[valid], phrase_class[label][valid]

    gs, ga, gb, g_class = spans(g, g_keep, g_label)
    ts, ta, tb, t_class = spans(t, t_keep, t_label)
    gc = g_class if params.labeled else np.zeros_like(g_class)
    tc = t_class if params.labeled else np.zeros_like(t_class)
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
    del keys, bracket, new_run, run, run_key, n_test, n_gold, both, key_g, key_t
    crossing = _crossing(n, wn1, gs, ga, gb, ts, ta, tb)
    for s, ((m, bg, bt, cross, w, tags), _, _) in by_hand.items():
        status[s] = 0
        del messages[s]
        matched[s], gold[s], test[s], crossing[s], words[s], correct_tags[s] = m, bg, bt, cross, w, tags

    def table(sentence: np.ndarray, start: np.ndarray, end: np.ndarray, klass: np.ndarray, side: int) -> np.ndarray:
        rows = [np.stack([sentence, start, end, klass], 1).astype(np.int64).reshape(-1, 4)]
        for s, (_, g_brackets, t_brackets) in sorted(by_hand.items()):
            listed = g_brackets if side == 0 else t_brackets
            rows.append(np.array([(s, a, b, c) for a, b, c in listed], np.int64).reshape(-1, 4))
        return np.concatenate(rows)

    class_names = [""] * len(names)
    for name, code in names.items():
        class_names[code] = name
    tables = Brackets(table(gs, ga, gb, g_class, 0), table(ts, ta, tb, t_class, 1), class_names) if brackets else None
    result = SentenceCounts(
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
    return result, tables


def _crossing(n: int, wn: np.ndarray, gs: np.ndarray, ga: np.ndarray, gb: np.ndarray, *test: np.ndarray) -> np.ndarray:
    """Per sentence, the predicted brackets crossing some reference bracket (range minimum/maximum queries).

    A predicted bracket ``(a, b)`` crosses a reference bracket ``(c, d)`` where ``a < c < b < d`` or
    ``c < a < d < b``: some reference bracket starting strictly inside it ends after ``b``, or some ending strictly
    inside it starts before ``a``. The sentences' positions are laid end to end (one apart), the furthest end of the
    reference brackets starting at each position and the earliest start of those ending there kept in sparse tables
    (row ``k``: the extreme over ``2**k`` positions from each), so each bracket's inside is two overlapping rows' cells.
    """
    ts, ta, tb = test
    offset = np.concatenate(([0], np.cumsum(wn + 1)))
    size = int(offset[-1]) + 1
    gc = offset[gs]
    gd = gc + gb
    gc += ga
    a = offset[ts]
    b = a + tb
    a += ta
    far_end = np.full(size, -1, dtype=np.int64)  # none: ends after no bracket
    np.maximum.at(far_end, gc, gd)
    early_start = np.full(size, size + 1, dtype=np.int64)  # none: starts before no bracket
    np.minimum.at(early_start, gd, gc)
    lo = a + 1  # positions a + 1 to b - 1: strictly inside (none for a bracket of one word, left out at the end)
    span = b - lo
    level = np.frexp(np.maximum(span, 1))[1] - 1  # floor(log2(span)), exactly
    levels = int(level.max(initial=0)) + 1
    cell = np.int32 if size < 2**31 - 2 else np.int64  # positions (and size + 1): half the memory of the rows
    top_max = np.empty((levels, size), dtype=cell)
    top_min = np.empty((levels, size), dtype=cell)
    top_max[0], top_min[0] = far_end, early_start
    for k in range(1, levels):
        step = 1 << (k - 1)
        top_max[k, -step:], top_min[k, -step:] = top_max[k - 1, -step:], top_min[k - 1, -step:]
        np.maximum(top_max[k - 1, :-step], top_max[k - 1, step:], out=top_max[k, :-step])
        np.minimum(top_min[k - 1, :-step], top_min[k - 1, step:], out=top_min[k, :-step])
    left = level * size + lo
    right = left + (span - (1 << level))  # the row's cell that ends at b - 1
    cells_max, cells_min = top_max.reshape(-1), top_min.reshape(-1)
    crosses = np.maximum(cells_max[left], cells_max[right]) > b
    crosses |= np.minimum(cells_min[left], cells_min[right]) < a
    crosses &= span > 0
    return np.bincount(ts[crosses], minlength=n).astype(np.int64)


class _Rules(NamedTuple):
    """What :func:`_by_hand` needs of a run's label tables and parameters."""

    leaf_deleted: np.ndarray
    tag_class: np.ndarray
    phrase_class: np.ndarray
    phrase_deleted: np.ndarray
    params: EvalbParams


_QUOTE_WORDS = (b"'", b'"', b"/")


def _evalb_reading(
    bank: Treebank,
    s: int,
    tag: np.ndarray,
    label: np.ndarray,
    raw: bytes | memoryview,
    shift: int,
    leaf_deleted: np.ndarray,
    quote_tags: set[int],
) -> tuple[list[list[Any]], list[list[int]], list[list[Any]]]:
    """One sentence as EVALB holds it: kept words, brackets and quote words.

    Returns:
        ``[tag, word]`` of the words kept, ``[start, end, label]`` of the brackets (in EVALB's numbering) and
        ``[index, brackets opened before, enclosing brackets, tag, word]`` of the quote words.
    """
    lo, hi = int(bank.leaf_offsets[s]), int(bank.leaf_offsets[s + 1])
    n0, n1 = (int(x) for x in np.searchsorted(bank.node_sentence, [s, s + 1]))
    tags = tag[lo:hi].tolist()
    starts, ends = bank.word_start[lo:hi].tolist(), bank.word_end[lo:hi].tolist()
    words = [bytes(raw[a + shift : b + shift]) for a, b in zip(starts, ends)]
    first, last = bank.first[n0:n1].tolist(), bank.last[n0:n1].tolist()
    kept = [0]
    for x in tags:
        kept.append(kept[-1] + (not leaf_deleted[x]))
    terms = [[x, w] for x, w in zip(tags, words) if not leaf_deleted[x]]
    brackets = [[kept[f], kept[e], lab] for f, e, lab in zip(first, last, label[n0:n1].tolist())]
    quotes = []
    for i, (x, w) in enumerate(zip(tags, words)):
        if x in quote_tags and w in _QUOTE_WORDS:
            opened = bisect.bisect_right(first, i)
            quotes.append([kept[i], opened, [k for k in range(opened) if last[k] > i], x, w])
    return terms, brackets, quotes


def _put_back(quote: list[Any], terms: list[list[Any]], brackets: list[list[int]]) -> None:
    """Insert a deleted quote word at its place: later brackets move right, enclosing ones grow (as EVALB)."""
    terms.insert(quote[0], [quote[3], quote[4]])
    for b in brackets[quote[1] :]:
        b[0] += 1
        b[1] += 1
    for k in quote[2]:
        brackets[k][1] += 1


def _by_hand(
    gold: tuple[list[Any], ...], test: tuple[list[Any], ...], rules: _Rules
) -> tuple[tuple[int, ...], list[tuple[int, int, int]], list[tuple[int, int, int]]] | str:
    """EVALB's counts of one sentence whose lengths differ, after putting back mis-tagged quotes; or why not.

    Returns:
        ``(counts, reference brackets, predicted brackets)``, each bracket ``(start, end, label class)``; or why the
        sentence is an error.
    """
    t1, b1, q1 = gold
    t2, b2, q2 = test
    deleted = rules.leaf_deleted
    for i in range(len(q2)):
        at = q2[i][0]
        for j in range(len(q1)):
            if q1[j][0] == at and q1[j][3] != q2[i][3]:
                if deleted[q1[j][3]] and not deleted[q2[i][3]]:
                    _put_back(q1[j], t1, b1)
                    for q in q1[j:]:
                        q[0] += 1
                elif deleted[q2[i][3]] and not deleted[q1[j][3]]:
                    _put_back(q2[i], t2, b2)
                    for q in q2[i:]:
                        q[0] += 1
    if len(t1) != len(t2):
        return f"length mismatch: {len(t1)} words in the reference, {len(t2)} in the prediction"
    same = {(a.encode(), b.encode()) for a, b in rules.params.equivalent_words}
    for (_, a), (_, b) in zip(t1, t2):
        if a != b and (a, b) not in same and (b, a) not in same:
            a_, b_ = a.decode("utf-8"), b.decode("utf-8")
            return f"words differ: {a_!r} in the reference, {b_!r} in the prediction"

    def counted(brackets: list[list[int]]) -> list[tuple[int, int, int]]:
        out = []
        for start, end, lab in brackets:
            if start != end and not rules.phrase_deleted[lab]:
                out.append((start, end, int(rules.phrase_class[lab])))
        return out

    g, t = counted(b1), counted(b2)
    keys_g = g if rules.params.labeled else [(a, b, 0) for a, b, _ in g]
    keys_t = t if rules.params.labeled else [(a, b, 0) for a, b, _ in t]
    matched = sum((collections.Counter(keys_g) & collections.Counter(keys_t)).values())
    crossing = sum(1 for a, b, _ in t if any(c < a < d < b or a < c < b < d for c, d, _ in g))
    tags = sum(1 for x, y in zip(t1, t2) if rules.tag_class[x[0]] == rules.tag_class[y[0]])
    return (matched, len(g), len(t), crossing, len(t1), tags), g, t
