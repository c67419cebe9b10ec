r"""Longest common subsequences, in one place: their length, and one alignment chosen by a stated tie-break.

An LCS alignment of sequences ``a`` and ``b`` pairs positions :math:`(i, j)`, increasing on both sides, of equal items,
as many as there can be. With weights :math:`g_{ij} \ge 0` (the similarity of ``a[i]`` and ``b[j]``,
:func:`weighted_lcs`) it is the monotone partial alignment of largest total weight. Both are read off the table

.. math::

    t_{ij} = \max(t_{i-1,j},\ t_{i,j-1},\ t_{i-1,j-1} + g_{i-1,j-1}), \qquad t_{0j} = t_{i0} = 0,

by a walk from :math:`(|a|, |b|)`. Alignments of the same value are often several; ``ties`` names the walk:

* ``"end"``: a pair of equal items (a positive weight that reaches :math:`t_{ij}`) is taken; otherwise the last item
  of ``b`` is dropped when :math:`t_{i,j-1} > t_{i-1,j}`, else the last item of ``a``. This is rouge-score's
  ``_lcs_ind``, which defines ROUGE-Lsum's union LCS;
* ``"start"``: the same walk from the starts of both sequences (its mirror image), as the CoNLL 2018 script aligns
  the words of retokenized multiword tokens;
* ``"skip"``: the last item of ``a`` is dropped whenever the value stays, then the last item of ``b``; a pair is taken
  only when neither can be dropped (the alignment :class:`~metametric_jax.matching.SequenceMatching` explains).

Equal items are compared by bit-parallel rows (Allison and Dix 1986; Hyyrö 2004): bit ``j`` of a row stands for
``b[j]``, and the rows are built with one addition per item of ``a``; weights by one NumPy row per item of ``a``.

Example:
    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    >>> lcs_pairs("aba", "ab", ties="end"), lcs_pairs("aba", "ab", ties="start"), lcs_pairs("aba", "ab", ties="skip")
    ([(0, 0), (1, 1)], [(0, 0), (1, 1)], [(0, 0), (1, 1)])
    >>> lcs_pairs("aa", "a", ties="end"), lcs_pairs("aa", "a", ties="start"), lcs_pairs("aa", "a", ties="skip")
    ([(1, 0)], [(0, 0)], [(0, 0)])
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

__all__ = ["TIES", "Ties", "bit_masks", "lcs_length", "lcs_pairs", "lcs_positions", "weighted_lcs"]

Ties = Literal["end", "start", "skip"]
#: The tie-breaks of an LCS alignment (see the module docstring).
TIES: tuple[str, ...] = ("end", "start", "skip")


def _check_ties(ties: object) -> None:
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(map(repr, TIES))}; found {ties!r}")


def bit_masks(items: Sequence[Hashable]) -> dict[Hashable, int]:
    """``{item: mask}``: bit ``j`` of ``mask`` is set where ``items[j] == item`` (for :func:`lcs_pairs`' ``b_masks``).

    >>> bit_masks("abca")
    {'a': 9, 'b': 2, 'c': 4}
    """
    masks: dict[Hashable, int] = {}
    for j, x in enumerate(items):
        masks[x] = masks.get(x, 0) | (1 << j)
    return masks


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    r"""The length of a longest common subsequence of ``a`` and ``b`` (bit-parallel, exact).

    Bit ``j`` of the row vector :math:`V` stands for position ``j`` of ``a``; for each item ``c`` of ``b``,
    :math:`U = V \wedge M_c` and :math:`V \leftarrow (V + U) \vee (V - U)`. After ``k`` items of ``b``, the number
    of zero bits among the lowest ``j`` bits of :math:`V` is :math:`\mathrm{LCS}(a_{<j}, b_{<k})`.

    >>> lcs_length("ABCBDAB", "BDCABA")
    4
    """
    m = len(a)
    if m == 0 or len(b) == 0:
        return 0
    get = bit_masks(a).get
    full = (1 << m) - 1
    v = full
    for y in b:
        u = v & get(y, 0)
        if u:
            v = ((v + u) | (v - u)) & full
    return m - v.bit_count()


def _walk_from_end(
    a: Sequence[Hashable], b: Sequence[Hashable], masks: dict[Hashable, int] | None, pairs: bool
) -> list[Any]:
    """The ``"end"`` walk over bit-parallel rows: its pairs (``pairs``) or their positions in ``a``, in order."""
    n = len(b)
    if not a or n == 0:
        return []
    masks = masks if masks is not None else bit_masks(b)
    # An item of ``a`` absent from ``b`` leaves its row equal to the previous one, and the walk always steps over it:
    # only the other items need rows (``keep`` maps them back to their positions in ``a``).
    keep = [k for k, x in enumerate(a) if x in masks]
    if not keep:
        return []
    items = [a[k] for k in keep]
    full = (1 << n) - 1
    rows = [full]
    v = full
    for x in items:
        u = v & masks[x]
        if u:
            v = ((v + u) | (v - u)) & full
        rows.append(v)
    # t(i, j) = j - popcount(rows[i] & (2**j - 1)). Walk from (i, j) = (len(items), n) keeping x = t(i, j) and
    # y = t(i - 1, j): one bit test per step, one popcount per item of ``a`` left behind.
    out: list[Any] = []
    i, j = len(items), n
    x = j - v.bit_count()
    y = j - rows[i - 1].bit_count()
    while i > 0 and j > 0:
        if items[i - 1] == b[j - 1]:
            out.append((keep[i - 1], j - 1) if pairs else keep[i - 1])
            i -= 1
            j -= 1
            x = y - 1 + ((rows[i] >> j) & 1)
            y = j - (rows[i - 1] & ((1 << j) - 1)).bit_count() if i > 0 else 0
        else:
            left = x - 1 + ((rows[i] >> (j - 1)) & 1)  # t(i, j - 1)
            if left > y:
                j -= 1
                x = left
                y = y - 1 + ((rows[i - 1] >> j) & 1)
            else:
                i -= 1
                x = y
                y = j - (rows[i - 1] & ((1 << j) - 1)).bit_count() if i > 0 else 0
    out.reverse()
    return out


def lcs_pairs(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    ties: Ties = "end",
    b_masks: dict[Hashable, int] | None = None,
) -> list[tuple[int, int]]:
    """The pairs ``(i, j)`` with ``a[i] == b[j]`` of a longest common subsequence, in order, chosen by ``ties``.

    Args:
        a: a sequence of hashable items.
        b: another.
        ties: ``"end"`` (rouge-score's choice, the default), ``"start"`` or ``"skip"`` (see the module docstring).
        b_masks: :func:`bit_masks` of ``b``, when ``b`` is aligned with many sequences (``"end"`` only).

    >>> lcs_pairs(["a", "b", "a"], ["a", "b"])
    [(0, 0), (1, 1)]
    """
    if ties == "end":
        return _walk_from_end(a, b, b_masks, True)
    _check_ties(ties)
    if ties == "start":
        n, m = len(a), len(b)
        return [(n - 1 - i, m - 1 - j) for i, j in reversed(_walk_from_end(a[::-1], b[::-1], None, True))]
    g = np.array([[x == y for y in b] for x in a], dtype=np.float64).reshape(len(a), len(b))
    return weighted_lcs(g, ties="skip")[1]


def lcs_positions(
    a: Sequence[Hashable], b: Sequence[Hashable], b_masks: dict[Hashable, int] | None = None, *, ties: Ties = "end"
) -> list[int]:
    """The positions in ``a`` of :func:`lcs_pairs`, in order; with ``ties="end"``, rouge-score's ``lcs_ind``.

    >>> lcs_positions(["a", "b", "a"], ["a", "b"]), lcs_positions("aa", "a", ties="start")
    ([0, 1], [0])
    """
    if ties == "end":
        return _walk_from_end(a, b, b_masks, False)
    return [i for i, _ in lcs_pairs(a, b, ties=ties)]


def weighted_lcs(g: np.ndarray, *, ties: Ties = "skip") -> tuple[float, list[tuple[int, int]]]:
    """The best monotone (order-preserving) partial alignment of a weight matrix, and its pairs chosen by ``ties``.

    The table's rows are cumulative maxima, so the recurrence runs one NumPy row at a time. Pairs of weight 0 are
    left out.

    Args:
        g: ``(n, m)`` non-negative weights, ``g[i, j]`` of pairing item ``i`` of one sequence with item ``j`` of the
            other.
        ties: ``"skip"`` (the default), ``"end"`` or ``"start"`` (see the module docstring).

    Returns:
        ``(value, pairs)``: the total weight (a float) and the aligned pairs in order.

    >>> weighted_lcs(np.array([[0.5, 1.0], [1.0, 0.0]]))
    (1.0, [(0, 1)])
    """
    _check_ties(ties)
    g = np.asarray(g, dtype=np.float64)
    n, m = g.shape
    if n == 0 or m == 0:
        return 0.0, []
    if ties == "start":
        value, flipped = weighted_lcs(g[::-1, ::-1], ties="end")
        return value, [(n - 1 - i, m - 1 - j) for i, j in reversed(flipped)]
    dp = np.zeros((n + 1, m + 1), dtype=np.float64)
    for i in range(1, n + 1):
        cand = np.maximum(dp[i - 1, 1:], dp[i - 1, :-1] + g[i - 1])
        dp[i, 1:] = np.maximum.accumulate(cand)
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        if ties == "skip":
            if dp[i, j] == dp[i - 1, j]:
                i -= 1
                continue
            if dp[i, j] == dp[i, j - 1]:
                j -= 1
                continue
        elif not (g[i - 1, j - 1] > 0 and dp[i, j] == dp[i - 1, j - 1] + g[i - 1, j - 1]):
            if dp[i, j - 1] > dp[i - 1, j]:
                j -= 1
            else:
                i -= 1
            continue
        pairs.append((i - 1, j - 1))
        i -= 1
        j -= 1
    pairs.reverse()
    return float(dp[n, m]), [(a, b) for a, b in pairs if g[a, b] > 0]
