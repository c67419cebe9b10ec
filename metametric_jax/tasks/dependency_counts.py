r"""Counting the CoNLL 2018 figures: the character-level word alignment and per-sentence counts.

The figures are documented in :mod:`metametric_jax.tasks.dependency`, the tree checks in ``dependency_checks``; the
counting runs on plain Python and NumPy (no JAX). Each side is flattened into its text (forms without space characters,
Unicode Zs), tokens (character spans; a multiword token is one token), sentences (spans) and words (with the span of
their token). Words are aligned on equal spans, and around multiword tokens by a longest common subsequence of
lower-cased forms inside the smallest span of text holding whole multiword tokens of both sides; the sides are walked
left to right, the side whose current word starts first moving on when spans differ.

Example:
    >>> from metametric_jax.tasks.readers.conllu import parse_conllu
    >>> gold = parse_conllu("1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n1\tdo\t_\tAUX\t_\t_\t0\troot\t_\t_\n"
    ...                     "2\tn't\t_\tPART\t_\t_\t1\tadvmod\t_\t_\n")
    >>> pred = parse_conllu("1\tdon't\t_\tAUX\t_\t_\t0\troot\t_\t_\n")
    >>> counts = sentence_counts(pred, gold).sum(axis=0)  # (correct, predicted, reference, aligned) per figure
    >>> counts[METRICS.index("tokens")].tolist(), counts[METRICS.index("words")].tolist()
    ([1, 1, 1, 0], [0, 1, 2, 0])
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._collector import paused_collector
from metametric_jax.errors import InputFormatError
from metametric_jax.lcs import lcs_pairs
from metametric_jax.tasks.dependency_checks import (
    _all_checked,
    _check_heads,
    _check_multiword,
    _check_text,
    _columns,
    _documents,
    check_tree,
)
from metametric_jax.tasks.readers.conllu import DepSentence, DepToken, surface

__all__ = [
    "METRICS",
    "ALIGNED_METRICS",
    "CONTENT_DEPRELS",
    "FUNCTIONAL_DEPRELS",
    "UNIVERSAL_FEATURES",
    "OPTIONS",
    "parse_options",
    "check_tree",
    "sentence_counts",
    "example_counts",
]

#: The figures, in the order the script prints them (lower-case keys of :func:`score`).
METRICS: tuple[str, ...] = (
    *("tokens", "sentences", "words", "upos", "xpos", "ufeats", "alltags", "lemmas"),
    *("uas", "las", "clas", "mlas", "blex"),
)
#: The figures computed on aligned words, which have an aligned accuracy.
ALIGNED_METRICS = METRICS[3:]

#: Relations of content words (UD v2 guidelines; the CoNLL 2018 evaluation).
CONTENT_DEPRELS = frozenset(
    "nsubj obj iobj csubj ccomp xcomp obl vocative expl dislocated advcl advmod discourse nmod appos nummod acl amod "
    "conj fixed flat compound list parataxis orphan goeswith reparandum root dep".split()
)
#: Relations of function words, whose attachment to a content word MLAS checks.
FUNCTIONAL_DEPRELS = frozenset("aux cop mark det clf case cc".split())
#: The universal features (UD v2) that UFeats, AllTags and MLAS compare; other features are ignored.
UNIVERSAL_FEATURES = frozenset(
    "PronType NumType Poss Reflex Foreign Abbr Gender Animacy Number Case Definite Degree VerbForm Mood Tense Aspect "
    "Voice Evident Polarity Person Polite".split()
)

_ROOT, _UNALIGNED = -1, -2
#: The options of every scoring function: ``check_trees`` (default True), ``exclude_punct`` (False) and
#: ``strip_subtypes`` (True).
OPTIONS = frozenset({"check_trees", "exclude_punct", "strip_subtypes"})


# ------------------------------------------------------------------------------------------------ one side
@functools.lru_cache(maxsize=4096)
def _ufeats(feats: str) -> str:
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


class _Side:
    """One side (reference or prediction) of a corpus, flattened: its text, tokens, sentences and words."""

    text: str
    tokens: list[tuple[int, int]]  # character spans
    token_where: list[tuple[int, int | None]]  # (sentence, line)
    spans: list[tuple[int, int]]  # of the sentences
    start: list[int]  # of each word's token
    end: list[int]
    mwt: list[bool]  # whether the word is inside a multiword token
    form: list[str]  # lower-cased
    sentence_of: list[int]
    head: list[int]  # the head word's index on the side, or _ROOT
    words: list[DepToken]

    def __init__(self, sentences: Sequence[DepSentence], strip_subtypes: bool, check_trees: bool, name: str) -> None:
        self.sentences = sentences
        self.name = name
        # The sentences are checked at once (:func:`_all_checked`); a side it does not pass (or any error while
        # building it) is built again with every sentence checked in turn, which raises the error of the first
        # offending sentence in file order.
        columns = None
        try:
            if all(type(sentence) is DepSentence for sentence in sentences):
                lengths = [len(x.words) for x in sentences]
                words = list(itertools.chain.from_iterable(x.words for x in sentences))
                columns = _columns(words)
                if _all_checked(lengths, columns[0], columns[6], check_trees):
                    self._build_at_once(sentences, words, lengths, columns)
                else:
                    columns = None
        except Exception:
            columns = None
        if columns is None:
            self._build(sentences, check_trees)
            columns = _columns(self.words)
        _, _, self.lemma, self.upos, self.xpos, feats, _, deprels, _ = columns
        base_of = {d: d.split(":", 1)[0] for d in set(deprels)}
        self.base = list(map(base_of.__getitem__, deprels))
        self.label = self.base if strip_subtypes else list(deprels)
        self.feats = list(map(_ufeats, feats))
        content_of = {b: b in CONTENT_DEPRELS for b in base_of.values()}
        self.content = list(map(content_of.__getitem__, self.base))
        functional = {b for b in base_of.values() if b in FUNCTIONAL_DEPRELS}
        # the function words attached to each word, in order (only words with some are keys)
        self.children: dict[int, list[int]] = {}
        if functional:
            head = self.head
            for k in [k for k, b in enumerate(self.base) if b in functional]:
                if head[k] != _ROOT:
                    self.children.setdefault(head[k], []).append(k)

    def _build_at_once(
        self, sentences: Sequence[DepSentence], words: list[DepToken], lengths: list[int], columns: list[Sequence[Any]]
    ) -> None:
        """What :meth:`_build` gives, for sentences whose heads and trees are checked, built a side at a time.

        A token is a multiword token or a word outside one; each word gets its token's character span. Raises
        (anything) where :meth:`_build` would raise, or earlier: the caller then builds the side with it.
        """
        forms, heads, lines = columns[1], columns[6], columns[8]
        n_words, n_sentences = len(words), len(sentences)
        size = np.asarray(lengths, dtype=np.int64)
        offsets = np.cumsum(size) - size  # each sentence's first word
        word_sentence = np.repeat(np.arange(n_sentences), size)
        covered = np.zeros(n_words, dtype=bool)  # words inside a multiword token
        unit = np.ones(n_words, dtype=bool)  # words that start a token
        joined = "".join(forms)
        # forms without space separators (nearly all) are their own surface: one check of their concatenation
        texts = list(forms) if joined.isprintable() and " " not in joined else list(map(surface, forms))
        multiword = [(s, m) for s, x in enumerate(sentences) if x.multiword for m in x.multiword]
        if multiword:
            for s in sorted({s for s, _ in multiword}):
                _check_multiword(sentences[s], s + 1)
            base = offsets[[s for s, _ in multiword]]
            first = base + np.asarray([m.first for _, m in multiword], dtype=np.int64) - 1
            last = base + np.asarray([m.last for _, m in multiword], dtype=np.int64) - 1
            edge = np.zeros(n_words + 1, dtype=np.int64)
            edge[first] += 1
            edge[last + 1] -= 1
            covered = np.cumsum(edge[:-1]) > 0
            unit = ~covered
            unit[first] = True
        unit_words = np.flatnonzero(unit)
        if "" in texts and not all(texts[k] for k in np.flatnonzero(~covered).tolist()):
            raise InputFormatError(self.name, None, "a word outside a multiword token without a FORM")
        if multiword:
            take = unit_words.tolist()
            unit_texts, unit_lines = [texts[k] for k in take], [lines[k] for k in take]
        else:
            unit_texts, unit_lines = list(texts), list(lines)
        if multiword:
            at = np.searchsorted(unit_words, first).tolist()
            for k, (_, m) in zip(at, multiword):
                unit_texts[k] = surface(m.form)
                unit_lines[k] = m.line
        unit_sentence = word_sentence[unit_words].tolist()
        if None in unit_lines:
            unit_lines = [sentences[s].line if x is None else x for s, x in zip(unit_sentence, unit_lines)]
        bounds = np.fromiter(itertools.accumulate(map(len, unit_texts), initial=0), np.int64, len(unit_texts) + 1)
        starts, ends = bounds[:-1].tolist(), bounds[1:].tolist()
        self.text = "".join(unit_texts)
        self.tokens = list(zip(starts, ends))
        self.token_where = list(zip(unit_sentence, unit_lines))
        before = np.append(np.cumsum(unit) - unit, unit.sum())  # tokens before each word (and after the last)
        self.spans = list(zip(bounds[before[offsets]].tolist(), bounds[before[offsets + size]].tolist()))
        of_word = np.cumsum(unit) - 1  # each word's token
        self.start = bounds[:-1][of_word].tolist()
        self.end = bounds[1:][of_word].tolist()
        self.mwt = covered.tolist()
        if multiword:
            for k in np.flatnonzero(covered).tolist():
                texts[k] = forms[k]
        self.form = [t.lower() for t in texts]
        self.sentence_of = word_sentence.tolist()
        head = np.asarray(heads, dtype=np.int64)
        self.head = np.where(head == 0, _ROOT, np.repeat(offsets, size) + head - 1).tolist()
        self.words = words

    def _build(self, sentences: Sequence[DepSentence], check_trees: bool) -> None:
        """The text, tokens, sentences and words, each sentence checked (heads, tree) and read in turn.

        The reference of :meth:`_build_at_once`, and the path of sentences it does not take: it raises the error of
        the first offending sentence in file order.
        """
        chars: list[str] = []
        self.tokens = []
        self.token_where = []
        self.spans = []
        self.start = []
        self.end = []
        self.mwt = []
        self.form = []
        self.sentence_of = []
        self.head = []
        self.words = []
        pos = 0
        add_chars, add_token, add_where, add_form = (
            chars.append,
            self.tokens.append,
            self.token_where.append,
            self.form.append,
        )
        add_start, add_end, add_mwt, add_sentence = (
            self.start.append,
            self.end.append,
            self.mwt.append,
            self.sentence_of.append,
        )
        add_head, add_word = self.head.append, self.words.append
        for s, sentence in enumerate(sentences):
            if not isinstance(sentence, DepSentence):
                raise TypeError(f"expected a DepSentence; found {type(sentence).__name__}")
            if check_trees:
                check_tree(sentence, s + 1)
            else:
                _check_heads(sentence, s + 1)
            offset, begin = len(self.words), pos
            if not sentence.multiword:  # each word its own token: the same lists, built a sentence at a time
                pos = self._plain(sentence, s, offset, pos, chars)
                self.spans.append((begin, pos))
                continue
            _check_multiword(sentence, s + 1)
            ranges = {m.first: m for m in sentence.multiword}
            last = 0  # the last word id of the current multiword token
            span = (pos, pos)
            for w in sentence.words:
                if ranges:
                    m = ranges.get(w.id)
                    if m is not None:
                        text = surface(m.form)
                        span, last = (pos, pos + len(text)), m.last
                        add_chars(text)
                        add_token(span)
                        add_where((s, m.line if m.line is not None else sentence.line))
                        pos += len(text)
                inside = w.id <= last
                if inside:
                    add_form(w.form.lower())
                else:
                    text = surface(w.form)
                    if not text:
                        raise InputFormatError(
                            sentence.source, w.line, f"{sentence.describe(s + 1)}: expected a non-empty FORM"
                        )
                    span = (pos, pos + len(text))
                    add_chars(text)
                    add_token(span)
                    add_where((s, w.line if w.line is not None else sentence.line))
                    add_form(text.lower())
                    pos += len(text)
                add_start(span[0])
                add_end(span[1])
                add_mwt(inside)
                add_sentence(s)
                add_head(offset + w.head - 1 if w.head else _ROOT)
                add_word(w)
            self.spans.append((begin, pos))
        self.text = "".join(chars)

    def _plain(self, sentence: DepSentence, s: int, offset: int, pos: int, chars: list[str]) -> int:
        """Add the words of sentence ``s`` (no multiword token) starting at character ``pos``; the end of its text."""
        words = sentence.words
        texts = [surface(w.form) for w in words]
        if not all(texts):
            w = words[texts.index("")]
            raise InputFormatError(sentence.source, w.line, f"{sentence.describe(s + 1)}: expected a non-empty FORM")
        bounds = list(itertools.accumulate(map(len, texts), initial=pos))
        starts, ends = bounds[:-1], bounds[1:]
        chars += texts
        self.tokens += zip(starts, ends)
        self.token_where += [(s, sentence.line if w.line is None else w.line) for w in words]
        self.start += starts
        self.end += ends
        self.mwt += [False] * len(words)
        self.form += [t.lower() for t in texts]
        self.sentence_of += [s] * len(words)
        self.head += [offset + w.head - 1 if w.head else _ROOT for w in words]
        self.words += words
        return bounds[-1]

    def locate(self, char: int) -> tuple[str, int | None]:
        """The file and line of the token holding character ``char`` (the last token at the end of the text)."""
        if not self.tokens:
            return (f"{self.name} (no words)", None)
        k = max(0, min(bisect.bisect_right([a for a, _ in self.tokens], char) - 1, len(self.tokens) - 1))
        s, line = self.token_where[k]
        return self.sentences[s].source, line


# ------------------------------------------------------------------------------------------------ alignment
def _beyond(side: _Side, i: int, limit: int) -> bool:
    """Whether word ``i`` lies past a multiword span ending at character ``limit``."""
    if i >= len(side.words):
        return True
    return side.start[i] >= limit if side.mwt[i] else side.end[i] > limit


def _multiword_span(gold: _Side, system: _Side, i: int, j: int) -> tuple[int, int, int, int]:
    """The words ``gold[i0:i1]``, ``system[j0:j1]`` of the multiword span starting at words ``i``, ``j``."""
    if gold.mwt[i]:
        limit = gold.end[i]
        if not system.mwt[j] and system.start[j] < gold.start[i]:
            j += 1
    else:
        limit = system.end[j]
        if not gold.mwt[i] and gold.start[i] < system.start[j]:
            i += 1
    i0, j0 = i, j
    ng, ns = len(gold.words), len(system.words)
    while not (_beyond(gold, i, limit) and _beyond(system, j, limit)):
        if i < ng and (j >= ns or gold.start[i] <= system.start[j]):
            if gold.mwt[i]:
                limit = max(limit, gold.end[i])
            i += 1
        else:
            if system.mwt[j]:
                limit = max(limit, system.end[j])
            j += 1
    return i0, i, j0, j


def _align(gold: _Side, system: _Side) -> tuple[list[tuple[int, int]], int, int]:
    """Aligned word pairs ``(reference word, predicted word)`` (global indices), in order, and where the walk stopped.

    The walk stops when either side has no word left: ``i == len(gold.words)`` or ``j == len(system.words)``.
    """
    pairs: list[tuple[int, int]] = []
    i = j = 0
    ng, ns = len(gold.words), len(system.words)
    while i < ng and j < ns:
        if gold.mwt[i] or system.mwt[j]:
            i0, i, j0, j = _multiword_span(gold, system, i, j)
            if i > i0 and j > j0:
                pairs += [(i0 + x, j0 + y) for x, y in lcs_pairs(gold.form[i0:i], system.form[j0:j], ties="start")]
        elif gold.start[i] == system.start[j] and gold.end[i] == system.end[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif gold.start[i] <= system.start[j]:
            i += 1
        else:
            j += 1
    return pairs, i, j


def _left_over(gold: _Side, system: _Side, i: int, j: int) -> str | None:
    """The words the script could align with a following sentence once the walk of this corpus stopped at ``i, j``.

    In a longer corpus the script's walk goes on past the end of this one. When the side that ran out of words
    (say the reference) starts its next sentence with a multiword token, the span around that token takes in the
    words still left on the other side (all but the first, which is skipped unless it is in a multiword token), and
    its LCS can align them with words of the next sentence. When the prediction ran out and its next sentence starts
    with a multiword token, the same happens to the reference words after a reference word outside a multiword
    token. Otherwise (no word left, one left, or only multiword tokens before the last reference word) the walks of
    consecutive sentences join exactly.

    Returns:
        ``None`` when nothing can cross into a following sentence, else a description of the words left.
    """
    ng, ns = len(gold.words), len(system.words)
    if i >= ng and ns - j >= 2:
        return f"the alignment runs out of reference words with {ns - j} predicted words left"
    if j >= ns and any(not gold.mwt[k] for k in range(i, ng - 1)):
        return f"the alignment runs out of predicted words with {ng - i} reference words left"
    return None


# ------------------------------------------------------------------------------------------------ counts
def _getter(indices: list[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function giving ``tuple(values[i] for i in indices)`` (``operator.itemgetter``: one C call)."""
    if len(indices) == 1:
        k = indices[0]
        return lambda values: (values[k],)
    return operator.itemgetter(*indices)  # type: ignore[return-value]


def parse_options(options: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    """``(check_trees, exclude_punct, strip_subtypes)`` from keyword options (see :data:`OPTIONS`).

    Raises:
        TypeError: an unknown option.
    """
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}; expected some of {sorted(OPTIONS)}")
    return (
        bool(options.get("check_trees", True)),
        bool(options.get("exclude_punct", False)),
        bool(options.get("strip_subtypes", True)),
    )


def sentence_counts(predictions: Any, references: Any, **options: Any) -> np.ndarray:
    """The counts of every figure per reference sentence, the whole corpus aligned at once (as the script does).

    Args:
        predictions: the predicted sentences (:class:`DepSentence`), in order.
        references: the reference sentences, in order; both must spell the same text.
        **options: ``check_trees`` (default True), ``exclude_punct`` (False), ``strip_subtypes`` (True).

    Returns:
        An ``int64`` array of shape ``(len(references), len(METRICS), 4)``: per reference sentence and figure,
        ``(correct, predicted, reference, aligned)``. Predicted items count in the reference sentence where they
        start; ``aligned`` is 0 for ``tokens`` and ``sentences`` and equals ``correct`` for ``words``.

    Raises:
        InputFormatError: a sentence that is not a tree (unless ``check_trees=False``), or texts that differ.
        TypeError: inputs that are not sentences, or an unknown option.
    """
    return _counts(predictions, references, options)[0]


def example_counts(prediction: Any, reference: Any, *, example: int | None = None, **options: Any) -> np.ndarray:
    """The counts of one accumulator example, summed over its reference sentences.

    An example given as a sequence of sentences on both sides is a whole document, aligned as the script aligns a
    file (see :func:`sentence_counts`). An example given as a bare :class:`DepSentence` (on either side) is a sentence
    of a larger corpus, and its counts add up to the script's figures of that corpus only when its alignment cannot
    run into the next sentence: both sides must spell the same text (the same sentence boundaries), and the alignment
    must not run out of words on one side while words the script's walk could carry into the next sentence are left
    on the other (see :func:`_left_over`). Otherwise an error says to score whole documents; no sentence of the
    bundled EWT fixtures is refused.

    Args:
        prediction: a predicted sentence or document.
        reference: the reference sentence or document.
        example: the 1-based position of the example in its batch, for messages.
        **options: as :func:`sentence_counts`.

    Returns:
        An ``int64`` array ``(len(METRICS), 4)`` of ``(correct, predicted, reference, aligned)`` per figure.

    Raises:
        InputFormatError: as :func:`sentence_counts`; for a bare sentence also texts that differ (as where the two
            sides split sentences differently) and words left over, naming the example, its sent_id and its line.
    """
    if not (isinstance(prediction, DepSentence) or isinstance(reference, DepSentence)):
        return _counts(prediction, reference, options)[0].sum(axis=0)
    name = "example" if example is None else f"example {example} of the batch"
    ids = [s.sent_id for s in (reference, prediction) if isinstance(s, DepSentence) and s.sent_id is not None]
    name += f" (sent_id {ids[0]})" if ids else ""
    advice = "score whole documents (score_files, or a list of sentences per example) to get the script's figures"
    counts, left = _counts(
        prediction, reference, options, f"{name}: ", f"; if sentences are split differently, {advice}"
    )
    if left is not None:
        first = reference if isinstance(reference, DepSentence) else prediction
        raise InputFormatError(
            first.source,
            first.line,
            f"{name}: {left}, which the CoNLL 2018 script may align with the next sentence if that starts with a "
            f"multiword token: {advice}",
        )
    return counts.sum(axis=0)


def _counts(
    predictions: Any, references: Any, options: Mapping[str, Any], prefix: str = "", advice: str = ""
) -> tuple[np.ndarray, str | None]:
    """:func:`sentence_counts` and what :func:`_left_over` says of the end of the alignment."""
    with paused_collector():
        return _counts_of(predictions, references, options, prefix, advice)


def _counts_of(
    predictions: Any, references: Any, options: Mapping[str, Any], prefix: str, advice: str
) -> tuple[np.ndarray, str | None]:
    check_trees, exclude_punct, strip_subtypes = parse_options(options)
    gold = _Side(_documents(references, "references"), strip_subtypes, check_trees, "<references>")
    system = _Side(_documents(predictions, "predictions"), strip_subtypes, check_trees, "<predictions>")
    _check_text(gold, system, prefix, advice)
    out = np.zeros((len(gold.sentences), len(METRICS), 4), dtype=np.int64)
    if not gold.sentences:
        return out, None
    starts = np.asarray([a for a, _ in gold.spans], dtype=np.int64)

    def count(rows: Any, weights: Any = None) -> np.ndarray:
        """How many items (or how many true ``weights``) each reference sentence holds."""
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        return np.bincount(np.asarray(rows, dtype=np.int64), w, minlength=len(starts)).astype(np.int64)

    col = {m: k for k, m in enumerate(METRICS)}
    # tokens and sentences: equal character spans
    for key, g_spans, g_sent, s_spans in (
        ("tokens", gold.tokens, [s for s, _ in gold.token_where], system.tokens),
        ("sentences", gold.spans, list(range(len(gold.spans))), system.spans),
    ):
        s_set = set(s_spans)
        out[:, col[key], 2] += count(g_sent)
        out[:, col[key], 0] += count(g_sent, [span in s_set for span in g_spans])
        out[:, col[key], 1] += count(np.searchsorted(starts, [a for a, _ in s_spans], side="right") - 1)

    pairs, i, j = _align(gold, system)
    to_gold = [_UNALIGNED] * len(system.words)
    for g, s in pairs:
        to_gold[s] = g
    g_words, s_words = gold.words, system.words
    if exclude_punct:
        g_scored = [u != "PUNCT" for u in gold.upos]
        s_scored = [u != "PUNCT" for u in system.upos]
    else:
        g_scored, s_scored = [True] * len(g_words), [True] * len(s_words)
    for g, s in pairs:
        s_scored[s] = g_scored[g]
    plain = [col[m] for m in METRICS[2:] if m not in ("clas", "mlas", "blex")]
    content = [col[m] for m in ("clas", "mlas", "blex")]
    for side, scored, where, field in (
        (gold, g_scored, gold.sentence_of, 2),
        (system, s_scored, np.searchsorted(starts, system.start, side="right") - 1, 1),
    ):
        mask = np.asarray(scored, dtype=bool)
        rows = np.asarray(where, dtype=np.int64)[mask]
        for c in plain:
            out[:, c, field] += count(rows)
        rows = np.asarray(where, dtype=np.int64)[mask & np.asarray(side.content, dtype=bool)]
        for c in content:
            out[:, c, field] += count(rows)

    def child_keys(side: _Side, k: int, mapping: Sequence[int] | None) -> list[tuple[Any, ...]]:
        return [
            (c if mapping is None else mapping[c], side.label[c], side.upos[c], side.feats[c])
            for c in side.children.get(k, ())
        ]

    # per scored aligned pair: its reference sentence and, per word-level figure, whether it is correct (columns)
    kept = [(g, s) for g, s in pairs if g_scored[g]] if exclude_punct else pairs
    if kept:
        gs = [g for g, _ in kept]
        ss = [s for _, s in kept]

        take_g, take_s = _getter(gs), _getter(ss)  # one C call gathers a column's values at the pairs

        def same(a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
            """``a[g] == b[s]`` for each kept pair ``(g, s)``."""
            return np.array(list(map(operator.eq, take_g(a), take_s(b))), dtype=bool)

        upos = same(gold.upos, system.upos)
        xpos = same(gold.xpos, system.xpos)
        feats = same(gold.feats, system.feats)
        g_lemma = take_g(gold.lemma)
        lemma = np.array(list(map(operator.eq, g_lemma, itertools.repeat("_"))), dtype=bool)
        lemma |= np.array(list(map(operator.eq, g_lemma, take_s(system.lemma))), dtype=bool)
        s_head = [h if h == _ROOT else to_gold[h] for h in system.head]
        head = same(gold.head, s_head)
        labelled = head & same(gold.label, system.label)
        content_word = np.array(take_g(gold.content), dtype=bool)
        mlas = np.zeros(len(kept), dtype=bool)
        for k in np.flatnonzero(content_word & labelled & upos & feats).tolist():
            g, s = kept[k]
            mlas[k] = child_keys(gold, g, None) == child_keys(system, s, to_gold)
        sentence_of = np.asarray(gold.sentence_of, dtype=np.int64)[gs]
        everything = np.ones(len(kept), dtype=bool)
        columns: tuple[np.ndarray, ...] = (everything, upos, xpos, feats, upos & xpos & feats, lemma, head, labelled)
        columns += (labelled, mlas, labelled & lemma)  # content words only
        for k, (m, correct) in enumerate(zip(METRICS[2:], columns)):
            counted = content_word if k >= 8 else everything
            out[:, col[m], 3] += count(sentence_of[counted])
            out[:, col[m], 0] += count(sentence_of[counted], correct[counted])
    out[:, col["words"], 3] = out[:, col["words"], 0]
    return out, _left_over(gold, system, i, j)
