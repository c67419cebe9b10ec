r"""ROUGE as Google's ``rouge-score`` 0.1.2 computes it: tokenizer, statistics, per-example figures, files.

This module is the host side of :mod:`metametric_jax.tasks.text` (which builds the JAX accumulators on it) and needs
only NumPy. Users import :mod:`metametric_jax.tasks.text`; everything here is re-exported there.

**Tokens.** A string is lower-cased, every run of characters outside ``[a-z0-9]`` becomes a separator, and the
remaining runs are the tokens (rouge-score's ``DefaultTokenizer``: non-ASCII letters, punctuation and underscores
separate tokens and are dropped). With ``use_stemmer=True`` tokens longer than 3 characters are replaced by their
Porter stem (:func:`metametric_jax.tasks.stem.porter_stem`, equal to NLTK's default stemmer that rouge-score uses).
A list or tuple of tokens is taken as given (with ``use_stemmer``, its string tokens longer than 3 characters are
stemmed).

**Figures** (Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", ACL workshop 2004). For a prediction
:math:`P` and a reference :math:`R`, each ROUGE type has an overlap :math:`h` and sizes :math:`|P|, |R|`:

* ``rougeN`` (any :math:`N \ge 1`): :math:`h = \sum_g \min(c_P(g), c_R(g))` over n-grams :math:`g`, sizes the
  numbers of n-grams;
* ``rougeL``: :math:`h = \mathrm{LCS}(P, R)`, the longest common subsequence of the tokens, sizes the token counts;
* ``rougeLsum`` (summary level, Lin 2004 §3.2): both texts are split into sentences at ``"\n"`` (empty lines
  dropped); for each reference sentence :math:`r_i` the *union LCS* :math:`\bigcup_j \mathrm{LCS}(r_i, p_j)` over
  the predicted sentences is taken (one LCS per pair, chosen as rouge-score's back-tracking chooses it), and each of
  its tokens is a hit while that token is still unused in both summaries; sizes the token counts of the summaries.

Then

.. math::

    P = \frac{h}{|P|}, \qquad R = \frac{h}{|R|}, \qquad F_1 = \frac{2PR}{P + R}

with 0 for any 0/0 (an empty prediction or reference scores 0). With several references per example, each type keeps
the reference of highest :math:`F_1` (the first on ties), as rouge-score's ``score_multi``. :func:`score` reports the
means over examples of :math:`P, R, F_1` per type — the figures rouge-score users average and report.

**Speed.** One tokenization per text for all types; n-gram overlaps by :class:`collections.Counter`; LCS lengths and
the back-tracked LCS of ``rougeLsum`` by bit-parallel rows (Allison and Dix 1986; Hyyrö 2004) instead of a
quadratic table; stems cached per word.

**One read-out.** :func:`score`, :func:`score_files` and the command line compute the figures as :func:`readout` of
the summed :func:`example_rows`. :func:`state_report` reads a state of the accumulators of
:mod:`metametric_jax.tasks.text` (``RougeMetric``, ``rouge_metric``) in float64 through the same read-out, and
``compute()``'s ``macro_precision``, ``macro_recall``, ``macro_f1`` are its jittable float32 twin for training loops.
The state keeps the sums of the per-example figures as compensated float32 pairs (about 48 bits), so the report
agrees with :func:`score` to about 1e-14, not to the last bit (its example count is exact).

>>> s = score(["the cat sat on the mat"], ["The cat was on the mat."], types=["rouge1", "rougeL"])
>>> round(s["rouge1"]["f1"], 4), round(s["rougeL"]["f1"], 4)
(0.8333, 0.8333)
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._ratios import f_measure
from metametric_jax.inputs import check_lengths
from metametric_jax.intervals import exact_totals
from metametric_jax.lcs import bit_masks, lcs_length, lcs_positions
from metametric_jax.report import Report
from metametric_jax.tasks.readers.summaries import read_pairs, read_texts
from metametric_jax.tasks.stem import porter_stem

__all__ = [
    "DEFAULT_TYPES",
    "stats_in_chunks",
    "kind_stats",
    "tokenize",
    "sentences",
    "parse_types",
    "ngrams",
    "lcs_length",
    "lcs_indices",
    "summary_lcs_hits",
    "rouge_stats",
    "figures",
    "example_rows",
    "readout",
    "mean_figures",
    "state_report",
    "score",
    "read_texts",
    "read_pairs",
    "score_files",
]

#: The ROUGE types :func:`score` and ``metametric-jax score rouge`` report by default.
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

_TOKEN = re.compile(r"[a-z0-9]+")
_TYPE = re.compile(r"rouge(?:[1-9][0-9]*|L|Lsum)")


# ---------------------------------------------------------------------------------------------------------- tokens
def tokenize(text: Any, *, use_stemmer: bool = False) -> list[Any]:
    """The tokens of one text, as rouge-score's default tokenizer gives them (a token list is taken as given).

    >>> tokenize("Hello, World! It's 2004.")
    ['hello', 'world', 'it', 's', '2004']
    >>> tokenize("The runners were running", use_stemmer=True)
    ['the', 'runner', 'were', 'run']

    Raises:
        TypeError: if ``text`` is neither a string nor a sequence of tokens.
    """
    if isinstance(text, str):
        tokens = _TOKEN.findall(text.lower())
        if use_stemmer:
            return [porter_stem(t) if len(t) > 3 else t for t in tokens]
        return tokens
    if isinstance(text, (bytes, bytearray)) or not isinstance(text, Sequence):
        raise TypeError(
            f"expected a text (str) or a token sequence (a list or tuple of tokens); found {type(text).__name__}: "
            f"{text!r:.80}."
        )
    if use_stemmer:
        return [porter_stem(t) if isinstance(t, str) and len(t) > 3 else t for t in text]
    return list(text)


def sentences(text: Any, *, use_stemmer: bool = False) -> list[list[Any]]:
    r"""The tokenized sentences of a summary for ``rougeLsum``: lines split at ``"\n"``, empty lines dropped.

    A token list is one sentence.

    >>> sentences("First one.\n\nSecond, here.")
    [['first', 'one'], ['second', 'here']]
    """
    if isinstance(text, str):
        return [tokenize(line, use_stemmer=use_stemmer) for line in text.split("\n") if line]
    tokens = tokenize(text, use_stemmer=use_stemmer)
    return [tokens] if tokens else []


def parse_types(types: str | Iterable[str]) -> tuple[str, ...]:
    """ROUGE type names as a tuple, in the order given, without repeats.

    Accepts an iterable of names or one comma-separated string: ``rougeN`` for any N >= 1, ``rougeL``, ``rougeLsum``.

    >>> parse_types("rouge1, rougeL,rouge1")
    ('rouge1', 'rougeL')

    Raises:
        ValueError: on an unknown name (the message lists the valid forms) or an empty list.
    """
    names = [t.strip() for t in types.split(",")] if isinstance(types, str) else list(types)
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not _TYPE.fullmatch(name):
            raise ValueError(
                f"unknown ROUGE type {name!r}: expected rougeN (N = 1, 2, 3, ...), rougeL or rougeLsum, e.g. "
                f"{','.join(DEFAULT_TYPES)}."
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError(
            f"no ROUGE type given: expected one or more of rougeN, rougeL, rougeLsum (e.g. {DEFAULT_TYPES})."
        )
    return tuple(out)


# ------------------------------------------------------------------------------------------------------ statistics
def ngrams(tokens: Sequence[Hashable], n: int) -> list[tuple[Hashable, ...]]:
    """The n-grams of a token sequence, in order (with repetitions).

    >>> ngrams(["a", "b", "a", "b"], 2)
    [('a', 'b'), ('b', 'a'), ('a', 'b')]
    """
    tokens = list(tokens)
    return list(zip(*(tokens[i:] for i in range(n))))


#: The positions in ``ref`` of the longest common subsequence with ``can`` that rouge-score's ``lcs_ind`` gives,
#: ``lcs_indices(ref, can, masks=None)``: :func:`metametric_jax.lcs.lcs_positions` (``ties="end"``).
lcs_indices = lcs_positions


def summary_lcs_hits(ref_sentences: Sequence[Sequence[Hashable]], can_sentences: Sequence[Sequence[Hashable]]) -> int:
    """The ``rougeLsum`` overlap: union-LCS hits of reference sentences against candidate sentences (Lin 2004 §3.2).

    >>> summary_lcs_hits([["a", "b", "c"], ["d", "e"]], [["a", "c"], ["b", "d", "e"]])
    5
    """
    if not ref_sentences or not can_sentences:
        return 0
    ref_count: Counter = Counter()
    can_count: Counter = Counter()
    for s in ref_sentences:
        ref_count.update(s)
    for s in can_sentences:
        can_count.update(s)
    if not ref_count or not can_count:
        return 0
    prepared = [(c, bit_masks(c)) for c in can_sentences if c]
    hits = 0
    for r in ref_sentences:
        union: set[int] = set()
        for c, masks in prepared:
            union.update(lcs_positions(r, c, masks))
        for i in sorted(union):
            token = r[i]
            if can_count[token] > 0 and ref_count[token] > 0:
                hits += 1
                can_count[token] -= 1
                ref_count[token] -= 1
    return hits


class _Text:
    """One text, tokenized once for every ROUGE type (n-gram counts and sentences computed when first needed)."""

    __slots__ = ("raw", "tokens", "use_stemmer", "_grams", "_sentences")

    def __init__(self, raw: Any, use_stemmer: bool) -> None:
        self.raw = raw
        self.use_stemmer = use_stemmer
        self.tokens = tokenize(raw, use_stemmer=use_stemmer)
        self._grams: dict[int, Counter] = {}
        self._sentences: list[list[Any]] | None = None

    def grams(self, n: int) -> Counter:
        got = self._grams.get(n)
        if got is None:
            t = self.tokens
            got = Counter(t) if n == 1 else Counter(zip(*(t[k:] for k in range(n))))
            self._grams[n] = got
        return got

    def sentences(self) -> list[list[Any]]:
        if self._sentences is None:
            self._sentences = sentences(self.raw, use_stemmer=self.use_stemmer)
        return self._sentences


def _type_stats(kind: str, p: _Text, r: _Text) -> tuple[int, int, int]:
    """(overlap, predicted size, reference size) of one ROUGE type for one pair."""
    if kind == "rougeL":
        tp, tr = p.tokens, r.tokens
        short, long_ = (tp, tr) if len(tp) <= len(tr) else (tr, tp)
        return lcs_length(short, long_), len(tp), len(tr)
    if kind == "rougeLsum":
        ps, rs = p.sentences(), r.sentences()
        return summary_lcs_hits(rs, ps), sum(map(len, ps)), sum(map(len, rs))
    n = int(kind[5:])
    cp, cr = p.grams(n), r.grams(n)
    small, big = (cp, cr) if len(cp) <= len(cr) else (cr, cp)
    hit = 0
    for g, c in small.items():
        other = big.get(g)
        if other is not None:
            hit += c if c < other else other
    return hit, max(len(p.tokens) - n + 1, 0), max(len(r.tokens) - n + 1, 0)


def _f1(hit: float, n_pred: float, n_ref: float) -> float:
    return f_measure(hit / n_pred if n_pred else 0.0, hit / n_ref if n_ref else 0.0)


def rouge_stats(
    predictions: Sequence[Any],
    references: Sequence[Any],
    types: str | Iterable[str] = DEFAULT_TYPES,
    *,
    use_stemmer: bool = False,
    multi_reference: bool = False,
) -> dict[str, np.ndarray]:
    """Per-example statistics ``(overlap, predicted size, reference size)`` of each ROUGE type, ``{type: (n, 3)}``.

    With ``multi_reference=True`` each element of ``references`` is a non-empty sequence of references, and each type
    keeps the statistics of the reference with the highest F1 (the first on ties), as rouge-score's ``score_multi``.

    >>> rouge_stats(["a b c"], ["a c"], ["rouge1", "rougeL"])["rougeL"].tolist()
    [[2.0, 3.0, 2.0]]

    Raises:
        ValueError: on lists of different lengths, an unknown type, or an empty reference set.
        TypeError: on an input that is neither a text nor a token sequence.
    """
    kinds = parse_types(types)
    check_lengths(predictions, references, "ROUGE")
    out = {k: np.zeros((len(predictions), 3), dtype=np.float64) for k in kinds}
    for i, (p_raw, r_raw) in enumerate(zip(predictions, references)):
        p = _Text(p_raw, use_stemmer)
        if not multi_reference:
            r = _Text(r_raw, use_stemmer)
            for k in kinds:
                out[k][i] = _type_stats(k, p, r)
            continue
        if isinstance(r_raw, str) or not isinstance(r_raw, Sequence) or len(r_raw) == 0:
            raise ValueError(
                f"ROUGE with multi_reference=True: example {i} needs a non-empty list of references; found "
                f"{type(r_raw).__name__}: {r_raw!r:.80}."
            )
        refs = [_Text(x, use_stemmer) for x in r_raw]
        for k in kinds:
            best, best_f = None, -1.0
            for r in refs:
                stats = _type_stats(k, p, r)
                f = _f1(*stats)
                if f > best_f:
                    best, best_f = stats, f
            out[k][i] = best
    return out


def kind_stats(
    kind: str, use_stemmer: bool, multi_reference: bool, predictions: Sequence[Any], references: Sequence[Any]
) -> np.ndarray:
    """The ``(n, 3)`` statistics of one ROUGE type: the batch function of its accumulator.

    A module-level function (bound by :func:`functools.partial`), so that worker processes unpickle it without
    importing JAX.
    """
    return rouge_stats(predictions, references, (kind,), use_stemmer=use_stemmer, multi_reference=multi_reference)[kind]


def _chunk_stats(types: tuple[str, ...], use_stemmer: bool, predictions: list[Any], references: list[Any]) -> Any:
    return rouge_stats(predictions, references, types, use_stemmer=use_stemmer, multi_reference=True)


def stats_in_chunks(
    predictions: Sequence[Any],
    references: Sequence[Sequence[Any]],
    types: str | Iterable[str] = DEFAULT_TYPES,
    *,
    use_stemmer: bool = False,
    jobs: int = 1,
    progress: Any = None,
) -> dict[str, np.ndarray]:
    """:func:`rouge_stats` (``multi_reference=True``) with the examples in chunks scored by ``jobs`` worker processes.

    ``jobs`` 0 means every core, 1 this process; the arrays are the same for every number. ``progress(done, total)``
    is called as chunks finish.
    """
    from metametric_jax import parallel

    task = functools.partial(_chunk_stats, parse_types(types), bool(use_stemmer))
    got: dict[str, np.ndarray] = parallel.map_rows(
        task, list(predictions), list(references), jobs=jobs, progress=progress, preload=[__name__]
    )
    return got


def figures(stats: np.ndarray) -> np.ndarray:
    """Per-example ``(precision, recall, f1)`` from ``(n, 3)`` statistics, as rouge-score computes them (0 for 0/0).

    >>> figures(np.array([[2.0, 3.0, 2.0], [0.0, 0.0, 4.0]])).round(4).tolist()
    [[0.6667, 1.0, 0.8], [0.0, 0.0, 0.0]]
    """
    stats = np.asarray(stats, dtype=np.float64).reshape(-1, 3)
    hit, n_pred, n_ref = stats[:, 0], stats[:, 1], stats[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_pred > 0, hit / np.where(n_pred > 0, n_pred, 1.0), 0.0)
        recall = np.where(n_ref > 0, hit / np.where(n_ref > 0, n_ref, 1.0), 0.0)
        total = precision + recall
        f1 = np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1.0), 0.0)
    return np.stack([precision, recall, f1], axis=1)


def example_rows(per_type: dict[str, np.ndarray]) -> np.ndarray:
    """The additive rows of the means over examples: float64 ``(n, 3 * types + 1)``.

    Per example, each type's precision, recall and F1 (:func:`figures` of its ``(n, 3)`` statistics, in the order of
    ``per_type``), then a 1 (the example count).

    >>> example_rows({"rougeL": np.array([[2.0, 4.0, 2.0]])}).tolist()
    [[0.5, 1.0, 0.6666666666666666, 1.0]]
    """
    parts = [figures(stats) for stats in per_type.values()]
    n = len(parts[0]) if parts else 0
    return np.concatenate([*parts, np.ones((n, 1))], axis=1)


def readout(totals: np.ndarray | Sequence[float], types: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{type: {"precision", "recall", "f1"}}``: the means over examples of totals laid out as :func:`example_rows`.

    Each figure is its total over the example count (the last total), 0.0 when that count is 0; any non-negative
    real totals are read (the bootstrap weights examples).

    >>> readout([1.0, 1.5, 1.2, 2.0], ["rouge1"])
    {'rouge1': {'precision': 0.5, 'recall': 0.75, 'f1': 0.6}}
    """
    values = [float(x) for x in totals]
    if len(values) != 3 * len(types) + 1:
        raise ValueError(f"expected {3 * len(types) + 1} ROUGE totals for {len(types)} types; found {len(values)}.")
    count = values[-1]
    out: dict[str, dict[str, float]] = {}
    for k, kind in enumerate(types):
        p, r, f = (v / count if count else 0.0 for v in values[3 * k : 3 * k + 3])
        out[kind] = {"precision": p, "recall": r, "f1": f}
    return out


def mean_figures(per_type: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """``{type: {"precision", "recall", "f1"}}``: the means over examples of the figures of ``{type: (n, 3) stats}``.

    :func:`readout` of the exact totals (:func:`~metametric_jax.intervals.exact_totals`) of :func:`example_rows`.

    >>> mean_figures({"rougeL": np.array([[2.0, 4.0, 2.0], [0.0, 1.0, 1.0]])})
    {'rougeL': {'precision': 0.25, 'recall': 0.5, 'f1': 0.3333333333333333}}
    """
    return readout(exact_totals(example_rows(per_type)), list(per_type))


def _state_type(name: str) -> str | None:
    """The ROUGE type of a one-type accumulator's name (``rouge_2_stemmed`` → ``rouge2``), else None."""
    parts = name.split("_")
    if len(parts) < 2 or parts[0] != "rouge" or not set(parts[2:]) <= {"stemmed", "multi"}:
        return None
    kind = parts[1]
    return f"rouge{kind}" if kind.isdigit() else {"l": "rougeL", "lsum": "rougeLsum"}.get(kind)


def state_report(state: Any) -> dict[str, dict[str, float]]:
    """``{type: {"precision", "recall", "f1"}}`` of a (reduced) ROUGE accumulator state, in float64 as :func:`score`.

    :func:`readout` of the state's totals (per type the sums of the examples' precision, recall and F1, and the
    example count), for a ``RougeMetric`` suite or a one-type ``rouge_metric`` state of
    :mod:`metametric_jax.tasks.text`. The state keeps each sum to about 48 bits (a compensated float32 pair), so the
    figures agree with :func:`score` on the same examples to about 1e-14. ``compute()``'s ``macro_`` figures are the
    jittable float32 twin.

    Raises:
        TypeError: if ``state`` is not a state of a ROUGE accumulator.
    """
    members = getattr(state, "states", None)
    name = str(getattr(getattr(state, "config", None), "name", ""))
    if isinstance(members, Mapping) and name == "rouge":
        parts = [(kind, member.totals()) for kind, member in members.items()]
    elif members is None and _state_type(name) is not None and callable(getattr(state, "totals", None)):
        parts = [(str(_state_type(name)), state.totals())]
    else:
        raise TypeError(f"state_report expects a RougeMetric state; found {type(state).__name__}.")
    values = [t["macro"][k] for _, t in parts for k in ("precision", "recall", "f1")]
    count = parts[0][1]["count"] if parts else 0.0
    return readout([*values, count], [kind for kind, _ in parts])


def score(
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    types: str | Iterable[str] = DEFAULT_TYPES,
    use_stemmer: bool = False,
    multi_reference: bool = False,
) -> dict[str, dict[str, float]]:
    """ROUGE of a corpus: per type, the means over examples of precision, recall and F1 (rouge-score's figures).

    Args:
        predictions: one text (or token list) per example.
        references: one reference per example, or with ``multi_reference=True`` a list of references per example.
        types: ROUGE types (``rougeN`` for any N, ``rougeL``, ``rougeLsum``), a list or a comma-separated string.
        use_stemmer: Porter-stem tokens longer than 3 characters, as rouge-score's ``use_stemmer=True``.
        multi_reference: each example has several references; each type keeps the one of highest F1.

    Returns:
        ``{type: {"precision", "recall", "f1"}}`` in the order of ``types`` (floats; 0.0 for an empty corpus). The
        stable headline keys are ``score(...)["rouge1"]["f1"]``, ``["rouge2"]["f1"]``, ``["rougeL"]["f1"]`` and
        ``["rougeLsum"]["f1"]``.

    >>> score(["a b c d"], [["a b", "a c d"]], types="rouge1,rougeL", multi_reference=True)["rougeL"]["f1"]
    0.8571428571428571
    """
    return mean_figures(
        rouge_stats(predictions, references, types, use_stemmer=use_stemmer, multi_reference=multi_reference)
    )


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    types: str | Iterable[str] = DEFAULT_TYPES,
    use_stemmer: bool = False,
) -> Report:
    """ROUGE of a prediction file against one or several reference files (see :func:`read_texts` for the formats).

    With several reference files, example ``i`` has the ``i``-th line of each as its references and each type keeps
    the reference of highest F1 (rouge-score's ``score_multi``).

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score`; ``items`` one per example, ``{"id":
        line number, type: {"precision", "recall", "f1"}, ...}``; a warning when the files hold no example.
    """
    kinds = parse_types(types)
    preds, refs = read_pairs(predictions, references)
    stats = rouge_stats(preds, refs, kinds, use_stemmer=use_stemmer, multi_reference=True)
    per = {k: figures(v) for k, v in stats.items()}
    items = [
        {"id": i + 1, **{k: dict(zip(("precision", "recall", "f1"), map(float, per[k][i]))) for k in kinds}}
        for i in range(len(preds))
    ]
    warnings = [] if preds else [f"{os.fspath(predictions)} holds no examples; every figure is 0"]
    return Report(mean_figures(stats), items, warnings)
