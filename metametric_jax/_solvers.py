"""Matching solvers behind :mod:`metametric_jax.matching`: assignment, row/column maxima, integer programs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linear_sum_assignment, milp

from metametric_jax.constraint import Constraint

__all__ = ["solve_gram", "discrete_stats", "solve_binary_program", "lcs_dp"]


def solve_gram(g: np.ndarray, constraint: Constraint, want_pairs: bool = False) -> tuple[float, list[tuple[int, int]]]:
    """Best total similarity of a Gram matrix under a constraint (rows: predicted, columns: reference).

    * ``1:1`` — maximum-weight partial bijection (``scipy.optimize.linear_sum_assignment``);
    * ``1:*`` — each row aligned to at most one column: the sum of row maxima;
    * ``*:1`` — each column aligned to at most one row: the sum of column maxima;
    * ``*:*`` — every pair: the sum of the matrix.
    """
    if g.size == 0:
        return 0.0, []
    if constraint is Constraint.ONE_TO_ONE:
        rows, cols = linear_sum_assignment(g, maximize=True)
        vals = g[rows, cols]
        pairs = [(int(i), int(j)) for i, j, v in zip(rows, cols, vals) if v > 0] if want_pairs else []
        return float(vals.sum()), pairs
    if constraint is Constraint.ONE_TO_MANY:
        best = g.max(axis=1)
        pairs = [(i, int(j)) for i, j in enumerate(g.argmax(axis=1)) if best[i] > 0] if want_pairs else []
        return float(best.sum()), pairs
    if constraint is Constraint.MANY_TO_ONE:
        best = g.max(axis=0)
        pairs = [(int(i), j) for j, i in enumerate(g.argmax(axis=0)) if best[j] > 0] if want_pairs else []
        return float(best.sum()), pairs
    pairs = [(int(i), int(j)) for i, j in zip(*np.nonzero(g > 0))] if want_pairs else []
    return float(g.sum()), pairs


def discrete_stats(xs: Sequence[Any], ys: Sequence[Any], constraint: Constraint) -> tuple[float, float, float]:
    """(overlap, predicted self-overlap, reference self-overlap) of two multisets of hashable keys, no matrices.

    ``1:1`` is the multiset intersection; ``1:*`` counts predicted items present among the references, ``*:1``
    reference items present among the predictions, ``*:*`` sums products of multiplicities.
    """
    nx, ny = len(xs), len(ys)
    if constraint is Constraint.MANY_TO_MANY:
        cx, cy = Counter(xs), Counter(ys)
        xy = sum(c * cy[k] for k, c in cx.items() if k in cy)
        return float(xy), float(sum(c * c for c in cx.values())), float(sum(c * c for c in cy.values()))
    if constraint is Constraint.ONE_TO_MANY:
        sy = set(ys)
        return float(sum(1 for x in xs if x in sy)), float(nx), float(ny)
    if constraint is Constraint.MANY_TO_ONE:
        sx = set(xs)
        return float(sum(1 for y in ys if y in sx)), float(nx), float(ny)
    sx, sy = set(xs), set(ys)
    if len(sx) == nx and len(sy) == ny:
        return float(len(sx & sy)), float(nx), float(ny)
    cx, cy = Counter(xs), Counter(ys)
    return float(sum(min(c, cy[k]) for k, c in cx.items() if k in cy)), float(nx), float(ny)


def solve_binary_program(
    weights: np.ndarray, rows: list[list[int]], pair_le: Sequence[tuple[int, int]] = ()
) -> tuple[float, np.ndarray]:
    """Maximize ``weights @ z`` over binary ``z`` subject to set-packing rows and ``z[a] <= z[b]`` links.

    Args:
        weights: objective coefficient of each binary variable.
        rows: each a list of variable indices whose sum must be at most 1.
        pair_le: ``(a, b)`` meaning ``z[a] <= z[b]``.

    Returns:
        The optimum and the 0/1 solution vector. Solved exactly with ``scipy.optimize.milp`` (HiGHS).
    """
    n = len(weights)
    if n == 0:
        return 0.0, np.zeros(0)
    data: list[float] = []
    ri: list[int] = []
    ci: list[int] = []
    r = 0
    for row in rows:
        if len(row) <= 1:
            continue
        for v in row:
            ri.append(r)
            ci.append(v)
            data.append(1.0)
        r += 1
    n_pack = r
    for a, b in pair_le:
        ri += [r, r]
        ci += [a, b]
        data += [1.0, -1.0]
        r += 1
    constraints = []
    if r:
        a_mat = sparse.csr_array((data, (ri, ci)), shape=(r, n))
        lb = np.full(r, -np.inf)
        ub = np.concatenate([np.ones(n_pack), np.zeros(r - n_pack)])
        constraints.append(LinearConstraint(a_mat, lb, ub))
    res = milp(
        c=-np.asarray(weights, dtype=np.float64),
        constraints=constraints,
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
    )
    if res.x is None:  # pragma: no cover - HiGHS always finds the all-zero feasible point
        raise RuntimeError(f"integer program failed: {res.message}")
    z = np.round(res.x)
    return float(np.asarray(weights) @ z), z


def lcs_dp(g: np.ndarray) -> tuple[float, list[tuple[int, int]]]:
    """Best monotone (order-preserving) partial alignment of a Gram matrix: a weighted LCS.

    ``dp[i, j] = max(dp[i-1, j], dp[i, j-1], dp[i-1, j-1] + g[i-1, j-1])``; each row is a cumulative maximum,
    so the recurrence runs one NumPy row at a time.
    """
    n, m = g.shape
    if n == 0 or m == 0:
        return 0.0, []
    dp = np.zeros((n + 1, m + 1), dtype=np.float64)
    for i in range(1, n + 1):
        cand = np.maximum(dp[i - 1, 1:], dp[i - 1, :-1] + g[i - 1])
        dp[i, 1:] = np.maximum.accumulate(cand)
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        if dp[i, j] == dp[i - 1, j]:
            i -= 1
        elif dp[i, j] == dp[i, j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
    pairs.reverse()
    return float(dp[n, m]), [(a, b) for a, b in pairs if g[a, b] > 0]
