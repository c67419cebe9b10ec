r"""Text overlap metrics: ROUGE-N, ROUGE-L and the multiset F-score, as JAX accumulators.

Every metric compares a predicted token sequence :math:`P` with a reference token sequence :math:`R` through one
raw similarity :math:`\phi(P, R)` and the self-similarities :math:`\phi(P, P) = |P|`, :math:`\phi(R, R) = |R|`
(Chen et al., "A Unified View of Evaluation Metrics for Structured Prediction", EMNLP 2023):

* the **multiset F-score** — :math:`\phi` is the size of the multiset intersection of the tokens (a one-to-one
  matching of tokens under a discrete similarity: ``dsl.set_matching(dsl.discrete())``);
* **ROUGE-N** (Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", 2004) — the same intersection over the
  multisets of n-grams, :math:`\phi = \sum_g \min(c_P(g), c_R(g))`;
* **ROUGE-L** (Lin 2004) — :math:`\phi` is the length of the longest common subsequence, the best monotone alignment
  of the tokens (``dsl.sequence_matching(dsl.discrete())``).

Then :math:`P = \phi(P, R) / |P|`, :math:`R = \phi(P, R) / |R|` and :math:`F_1 = 2PR / (P + R)`. ``compute()``
reports the per-example (macro) averages as ``macro_precision``, ``macro_recall``, ``macro_f1`` — the figures of
Google's ``rouge-score`` package averaged over examples, which is what metrax's ``RougeL`` / ``RougeN`` report — and
the micro figures from corpus totals as ``precision``, ``recall``, ``f1``.

Inputs are token sequences (lists or tuples of hashable tokens); a ``str`` is split on whitespace. No lower-casing,
stemming or punctuation removal is done: tokenize beforehand. An empty prediction or reference scores 0 (also when
both are empty), as in ``rouge-score``.

The statistics are computed with :class:`collections.Counter` intersections of n-grams and a bit-parallel LCS
(Allison and Dix, "A bit-string longest-common-subsequence algorithm", IPL 1986; Hyyrö, "Bit-parallel LCS-length
computation revisited", 2004): one pass over the reference, a few big-integer operations per token.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from metametric_jax.accumulate import Metric, make_metric
from metametric_jax.matching import SequenceMatching, SetMatching
from metametric_jax.similarity import Discrete, Mode, Preprocess

__all__ = [
    "tokens",
    "ngrams",
    "lcs_length",
    "rouge_n_stats",
    "rouge_l_stats",
    "multiset_stats",
    "RougeN",
    "RougeL",
    "rouge_n",
    "Rouge1",
    "Rouge2",
    "RougeLMetric",
    "MultisetF1",
]


def tokens(x: Any) -> list[Any]:
    """A token sequence as a list: a ``str`` is split on whitespace, any other sequence is taken as tokens.

    Raises:
        TypeError: if ``x`` is neither a string nor a sequence.
    """
    if isinstance(x, str):
        return x.split()
    if isinstance(x, (bytes, bytearray)) or not isinstance(x, Sequence):
        raise TypeError(
            f"expected a token sequence (a list or tuple of tokens) or a whitespace-separated str; found "
            f"{type(x).__name__}: {x!r:.80}."
        )
    return list(x)


def ngrams(toks: Sequence[Hashable], n: int) -> list[tuple[Hashable, ...]]:
    """The n-grams of a token sequence, in order (with repetitions).

    >>> ngrams(["a", "b", "a", "b"], 2)
    [('a', 'b'), ('b', 'a'), ('a', 'b')]
    """
    toks = list(toks)
    return list(zip(*(toks[i:] for i in range(n))))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    r"""Length of the longest common subsequence of ``a`` and ``b`` (bit-parallel, exact).

    Bit ``i`` of the row vector :math:`V` is 1 while position ``i`` of ``a`` is still unused; for each token ``c`` of
    ``b``, :math:`U = V \wedge M_c` and :math:`V \leftarrow (V + U) \vee (V - U)`. The LCS length is the number of
    zero bits of :math:`V` at the end.

    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    """
    m = len(a)
    if m == 0 or len(b) == 0:
        return 0
    masks: dict[Hashable, int] = {}
    for i, x in enumerate(a):
        masks[x] = masks.get(x, 0) | (1 << i)
    full = (1 << m) - 1
    v = full
    get = masks.get
    for y in b:
        u = v & get(y, 0)
        if u:
            v = ((v + u) | (v - u)) & full
    return m - v.bit_count()


def rouge_n_stats(predictions: Sequence[Any], references: Sequence[Any], n: int) -> np.ndarray:
    """Per-example (matching n-grams, predicted n-grams, reference n-grams), an ``(len, 3)`` float64 array."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"ROUGE-N needs a positive integer n; found {n!r}.")
    out = np.empty((len(predictions), 3), dtype=np.float64)
    for i, (p, r) in enumerate(zip(predictions, references)):
        tp, tr = tokens(p), tokens(r)
        if n == 1:
            cp, cr = Counter(tp), Counter(tr)
        else:
            cp, cr = Counter(zip(*(tp[k:] for k in range(n)))), Counter(zip(*(tr[k:] for k in range(n))))
        small, big = (cp, cr) if len(cp) <= len(cr) else (cr, cp)
        hit = sum(min(c, big[g]) for g, c in small.items() if g in big)
        out[i] = (hit, max(len(tp) - n + 1, 0), max(len(tr) - n + 1, 0))
    return out


def rouge_l_stats(predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
    """Per-example (LCS length, predicted length, reference length), an ``(len, 3)`` float64 array."""
    out = np.empty((len(predictions), 3), dtype=np.float64)
    for i, (p, r) in enumerate(zip(predictions, references)):
        tp, tr = tokens(p), tokens(r)
        short, long_ = (tp, tr) if len(tp) <= len(tr) else (tr, tp)
        out[i] = (lcs_length(short, long_), len(tp), len(tr))
    return out


def multiset_stats(predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
    """Per-example (multiset intersection size, predicted size, reference size) of token multisets."""
    return rouge_n_stats(predictions, references, 1)


class _NGramMatching(Preprocess):
    """ROUGE-N's similarity: a one-to-one matching of n-grams under a discrete similarity, with a Counter fast path."""

    def __init__(self, n: int) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"ROUGE-N needs a positive integer n; found {n!r}.")
        self.n = n
        super().__init__(SetMatching(Discrete(), "<->"), functools.partial(_ngrams_of, n=n))
        self.name = f"rouge_{n}"

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return rouge_n_stats(predictions, references, self.n)


def _ngrams_of(x: Any, n: int) -> list[tuple[Hashable, ...]]:
    return ngrams(tokens(x), n)


class _LCS(SequenceMatching):
    """ROUGE-L's similarity: the best monotone alignment of tokens under a discrete similarity (the LCS)."""

    def __init__(self) -> None:
        super().__init__(Discrete())
        self.name = "rouge_l"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return float(lcs_length(tokens(x), tokens(y)))

    def self_score(self, x: Any, side: str = "p") -> float:
        return float(len(tokens(x)))

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list:
        return super().explain_matches(tokens(x), tokens(y), px, py, mode)

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return rouge_l_stats(predictions, references)


_ROUGE_N_DOC = r"""ROUGE-{n} (Lin 2004): n-gram overlap of a predicted and a reference token sequence.

Per example, with n-gram counts :math:`c_P, c_R`,

.. math::

    \mathrm{{hit}} = \sum_g \min(c_P(g), c_R(g)), \quad P = \frac{{\mathrm{{hit}}}}{{\sum_g c_P(g)}}, \quad
    R = \frac{{\mathrm{{hit}}}}{{\sum_g c_R(g)}}, \quad F_1 = \frac{{2PR}}{{P + R}}.

``compute()``: ``macro_precision`` / ``macro_recall`` / ``macro_f1`` are the means over examples (rouge-score's
per-example figures, averaged); ``precision`` / ``recall`` / ``f1`` are micro (corpus totals).
"""


@functools.lru_cache(maxsize=None, typed=True)
def rouge_n(n: int) -> type[Metric]:
    """The ROUGE-N accumulator class (one class per ``n``, so states of it merge).

    >>> state = rouge_n(2).from_model_output([["the", "cat", "sat"]], [["the", "cat", "ran"]])
    >>> float(state.compute()["macro_f1"])
    0.5
    """
    cls = make_metric(_NGramMatching(n), "f1", name=f"rouge_{n}", empty_score=0.0)
    cls.__doc__ = _ROUGE_N_DOC.format(n=n)
    return cls


RougeN = rouge_n
Rouge1: type[Metric] = rouge_n(1)
Rouge2: type[Metric] = rouge_n(2)

RougeL: type[Metric] = make_metric(_LCS(), "f1", name="rouge_l", empty_score=0.0)
RougeL.__doc__ = r"""ROUGE-L (Lin 2004): longest-common-subsequence overlap of a predicted and a reference sequence.

Per example,

.. math::

    P = \frac{\mathrm{LCS}(P, R)}{|P|}, \quad R = \frac{\mathrm{LCS}(P, R)}{|R|}, \quad F_1 = \frac{2PR}{P + R}

(rouge-score's ``rougeL``, :math:`\beta = 1`). ``compute()``: ``macro_*`` are the means over examples, the plain
names are micro (corpus totals). ``RougeL.explain(p, r)`` lists the aligned tokens.

>>> round(RougeL.score("a b c d", "a c b d"), 4)
0.75
"""
RougeLMetric = RougeL

MultisetF1: type[Metric] = make_metric(SetMatching(Discrete(), "<->"), "f1", name="multiset_f1")
MultisetF1.__doc__ = r"""Multiset F-score of token bags, micro-averaged over a corpus by default.

.. math::

    P = \frac{\sum_i |P_i \cap R_i|}{\sum_i |P_i|}, \quad R = \frac{\sum_i |P_i \cap R_i|}{\sum_i |R_i|}, \quad
    F_1 = \frac{2 \sum_i |P_i \cap R_i|}{\sum_i |P_i| + \sum_i |R_i|}

with :math:`\cap` the multiset intersection (a one-to-one matching of equal tokens, Chen et al., EMNLP 2023).
Inputs are collections of hashable tokens (not strings). ``macro_*`` are per-example means.

>>> P, R = "a mouse and a cat chase the mouse".split(), "the mouse and the cat chase a second mouse".split()
>>> MultisetF1.stats(P, R)
(7.0, 8.0, 9.0)
"""
