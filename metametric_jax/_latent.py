r"""Exact latent matching (Smatch's problem): one solver for AMR and for derived latent metrics.

:func:`solve_latent` (reached through :mod:`metametric_jax._solvers`) serves :mod:`metametric_jax.tasks.amr` and
:class:`metametric_jax.matching.LatentSetMatching` alike: the best one-to-one partial mapping :math:`m` of
predicted onto reference variables for an objective made of terms over variable pairs,

.. math::

    \max_m \; \sum_{(u, v)} w_{uv} [m(u) = v] + \sum_{((u_1, v_1), (u_2, v_2))} w_{u_1 v_1 u_2 v_2}
    [m(u_1) = v_1][m(u_2) = v_2] + \dots

(a quadratic assignment problem, NP-hard in general), solved by a cascade that stops at the first certificate of
optimality: a linear assignment when no term links two pairs; else a depth-first branch and bound (small problems),
then again from the local optimum of a swap ascent, looking only for a better mapping (a short proof when the ascent
found the optimum; neither needs SciPy, whose import costs more than most problems); else the linear relaxation of
the integer program of Cai & Knight (2013, Section 3, tightened), whose rounding is optimal when
it reaches the relaxation's bound; else a swap local search, then the integer program (HiGHS through
``scipy.optimize.milp``). The last three steps share a budget of work units counted in their own steps, not seconds
(:mod:`metametric_jax._budget`), so a result never depends on the machine or its load: when it runs out, the best
mapping found is returned with ``optimal=False`` and the best upper bound known.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from metametric_jax._budget import (
    DEFAULT_WORK_LIMIT,
    STEP_UNITS,
    Budget,
    SolverBudgetWarning,
    charge_program,
    charge_relaxation,
    program_cost,
    program_options,
    relaxation_options,
    solver_output_captured,
)

__all__ = ["solve_latent", "LatentSolution", "SolverBudgetWarning", "DEFAULT_WORK_LIMIT"]

_BNB_NODE_LIMIT = 400
#: Nodes of the second branch and bound, which starts from a swap search's local optimum.
_PROOF_NODE_LIMIT = 1000
#: The largest ``rows * columns * min(rows, columns)`` of an assignment solved without SciPy.
_SMALL_ASSIGNMENT = 200_000
_TOL = 1e-9
#: The share of the budget the swap search may use when the integer program fits in the rest.
_SEARCH_SHARE = 0.3
#: The share of the budget the linear relaxation may use.
_RELAXATION_SHARE = 0.5
_Formulation = tuple[np.ndarray, Any, np.ndarray, int]


# ------------------------------------------------------------------------------------------------ exact latent matching
@dataclasses.dataclass(frozen=True)
class LatentSolution:
    """The result of :func:`solve_latent`.

    Attributes:
        value: the objective of ``mapping``.
        mapping: the chosen variable pairs ``{predicted variable: reference variable}``.
        optimal: whether ``value`` is proven to be the maximum.
        upper_bound: an upper bound on the maximum (``value`` itself when optimal).
        timed_out: whether the wall-clock cap (``time_limit``) stopped the search before it was proven: such a result
            depends on the machine and its load (never without a ``time_limit``).
    """

    value: float
    mapping: dict[int, int]
    optimal: bool
    upper_bound: float
    timed_out: bool = False


class _Problem:
    """Terms over variable pairs ``a = u * n_gold + v``: unary weights, pairwise links, higher-order terms."""

    def __init__(
        self,
        n_pred: int,
        n_gold: int,
        unary: Mapping[int, float],
        pairwise: Mapping[tuple[int, int], float],
        higher: Mapping[tuple[int, ...], float],
    ) -> None:
        self.n_pred, self.n_gold = n_pred, max(n_gold, 1)
        self.unary = {a: float(w) for a, w in unary.items() if w}
        self.pairwise = {(a, b) if a < b else (b, a): float(w) for (a, b), w in pairwise.items() if w}
        self.higher = {tuple(sorted(t)): float(w) for t, w in higher.items() if w}
        weights = [*self.unary.values(), *self.pairwise.values(), *self.higher.values()]
        if any(not math.isfinite(w) or w < 0 for w in weights):
            raise ValueError("latent matching: term weights must be finite and non-negative.")
        self.integral = all(w == int(w) for w in weights)
        self.pairs = sorted(set(self.unary).union(*self.pairwise, *self.higher))

    def evaluate(self, chosen: set[int]) -> float:
        total = sum(self.unary.get(a, 0.0) for a in chosen)
        total += sum(w for (a, b), w in self.pairwise.items() if a in chosen and b in chosen)
        return total + sum(w for t, w in self.higher.items() if all(a in chosen for a in t))

    def floor(self, bound: float) -> float:
        """The bound rounded down to what the objective can reach (integers when every weight is one)."""
        return float(math.floor(bound + 1e-6)) if self.integral and math.isfinite(bound) else bound

    def reaches(self, found: float, bound: float) -> bool:
        """Whether ``found`` attains the upper ``bound`` (exactly for integer weights, else up to solver tolerance)."""
        return found >= bound - (_TOL if self.integral else 1e-6 * max(1.0, abs(bound)))

    def mapping(self, chosen: set[int]) -> dict[int, int]:
        return {a // self.n_gold: a % self.n_gold for a in sorted(chosen)}


def _assignment_only(p: _Problem) -> set[int]:
    rows = sorted({a // p.n_gold for a in p.unary})
    cols = sorted({a % p.n_gold for a in p.unary})
    r_index = {u: i for i, u in enumerate(rows)}
    c_index = {v: j for j, v in enumerate(cols)}
    weights = np.zeros((len(rows), len(cols)))
    for a, w in p.unary.items():
        weights[r_index[a // p.n_gold], c_index[a % p.n_gold]] = w
    if not rows:
        return set()
    if p.integral and len(rows) * len(cols) * min(len(rows), len(cols)) <= _SMALL_ASSIGNMENT:
        pairs = _small_assignment([[int(x) for x in row] for row in weights.tolist()])
    else:
        from scipy.optimize import linear_sum_assignment  # imported on use: SciPy takes a while to import

        pairs = list(zip(*linear_sum_assignment(weights, maximize=True)))
    return {rows[i] * p.n_gold + cols[j] for i, j in pairs if weights[i, j] > 0}


def _small_assignment(weights: list[list[int]]) -> list[tuple[int, int]]:
    """A maximum-weight assignment of the smaller side of an integer matrix (Hungarian method, shortest paths).

    Exact in integers, without SciPy (whose import costs more than a small problem): the rows (or the columns, when
    fewer) are placed one by one along a shortest augmenting path under dual potentials.
    """
    flip = len(weights) > len(weights[0])
    grid = [list(col) for col in zip(*weights)] if flip else weights
    n, m = len(grid), len(grid[0])
    top = max(max(row) for row in grid)
    cost = [[0] * (m + 1)] + [[0] + [top - x for x in row] for row in grid]  # 1-based, minimized
    inf = math.inf
    u, v = [0.0] * (n + 1), [0.0] * (m + 1)
    owner, way = [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        owner[0], j0 = i, 0
        slack, used = [inf] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = owner[j0], inf, 0
            row, ui = cost[i0], u[i0]
            for j in range(1, m + 1):
                if not used[j]:
                    reduced = row[j] - ui - v[j]
                    if reduced < slack[j]:
                        slack[j], way[j] = reduced, j0
                    if slack[j] < delta:
                        delta, j1 = slack[j], j
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    slack[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    pairs = [(owner[j] - 1, j - 1) for j in range(1, m + 1) if owner[j]]
    return sorted((j, i) for i, j in pairs) if flip else sorted(pairs)


def _branch_and_bound(
    p: _Problem, limit: int, incumbent: tuple[float, set[int]] = (-1.0, set())
) -> tuple[float, set[int], bool, float]:
    """Depth-first search over predicted variables: ``(best, chosen, complete, bound)``; stops after ``limit`` nodes.

    ``bound`` is the optimistic bound of the search (each variable's best pair with its best partners). The search
    only looks for mappings better than ``incumbent`` (a value and its pairs, returned when none is), so a good one
    turns it into a short proof.
    """
    n_g = p.n_gold
    neighbours: dict[int, set[int]] = defaultdict(set)
    for t in [*p.pairwise, *p.higher]:
        us = {a // n_g for a in t}
        for u in us:
            neighbours[u] |= us - {u}
    candidates: dict[int, list[int]] = defaultdict(list)
    for a in p.pairs:
        candidates[a // n_g].append(a % n_g)
    # Visit variables breadth-first along the terms, so that their gains are counted early.
    order: list[int] = []
    seen: set[int] = set()
    for start in sorted(candidates, key=lambda u: (-len(neighbours[u]), u)):
        if start in seen:
            continue
        seen.add(start)
        queue = [start]
        while queue:
            u = queue.pop(0)
            order.append(u)
            for x in sorted(neighbours[u]):
                if x not in seen:
                    seen.add(x)
                    queue.append(x)
    position = {u: k for k, u in enumerate(order)}
    # links[a]: the terms completed when pair a is placed (their other pairs belong to earlier variables).
    links: dict[int, list[tuple[tuple[tuple[int, int], ...], float]]] = defaultdict(list)
    for t, w in [*p.pairwise.items(), *p.higher.items()]:
        last = max(t, key=lambda a: position[a // n_g])
        links[last].append((tuple((a // n_g, a % n_g) for a in t if a != last), w))
    optimistic = []
    for u in order:
        best_u = 0.0
        for v in candidates[u]:
            a = u * n_g + v
            per_var: dict[int, float] = defaultdict(float)  # one partner per other variable in a pairwise term
            extra = 0.0
            for others, w in links.get(a, ()):
                if len(others) == 1:
                    u2, v2 = others[0]
                    per_var[(u2, v2)] += w  # type: ignore[index]
                else:
                    extra += w
            grouped: dict[int, float] = defaultdict(float)
            for (u2, _), w in per_var.items():  # type: ignore[misc]
                grouped[u2] = max(grouped[u2], w)
            best_u = max(best_u, p.unary.get(a, 0.0) + sum(grouped.values()) + extra)
        optimistic.append(best_u)
    suffix = [0.0] * (len(order) + 1)
    for k in range(len(order) - 1, -1, -1):
        suffix[k] = suffix[k + 1] + optimistic[k]
    bound = p.floor(suffix[0])
    n = len(order)
    assign: dict[int, int] = {}
    used: set[int] = set()
    best: list[Any] = [incumbent[0], incumbent[1]]
    visited = [0]

    class _StopError(Exception):
        pass

    def search(k: int, current: float) -> None:
        visited[0] += 1
        if visited[0] > limit:
            raise _StopError
        if k == n:
            if current > best[0] + _TOL:
                best[0], best[1] = current, {u * n_g + v for u, v in assign.items()}
                if current >= bound - _TOL:
                    raise _StopError
            return
        u = order[k]
        rest = suffix[k + 1]
        options = []
        for v in candidates[u]:
            if v in used:
                continue
            a = u * n_g + v
            gain = p.unary.get(a, 0.0)
            for others, w in links.get(a, ()):
                if all(assign.get(u2) == v2 for u2, v2 in others):
                    gain += w
            options.append((gain, v))
        options.sort(reverse=True)
        for gain, v in options:
            if current + gain + rest <= best[0] + _TOL:
                break
            assign[u] = v
            used.add(v)
            search(k + 1, current + gain)
            del assign[u]
            used.discard(v)
        if current + rest > best[0] + _TOL:
            search(k + 1, current)

    try:
        search(0, 0.0)
        complete = True
    except _StopError:
        complete = visited[0] <= limit
    return max(best[0], 0.0), best[1], complete, bound


def _formulation(p: _Problem) -> _Formulation:
    """Cai & Knight's integer program: objective ``c`` (minimized), rows ``A z <= ub``, the number of pair variables.

    Variables: one ``y`` per variable pair (binary), one ``x`` per term in ``[0, 1]``.
    """
    from scipy import sparse

    n_g, pairs = p.n_gold, p.pairs
    col = {a: i for i, a in enumerate(pairs)}
    n_y = len(pairs)
    terms = [*p.pairwise.items(), *p.higher.items()]
    rows: list[int] = []
    cols: list[int] = []
    n_rows = 0
    by_pred: dict[int, list[int]] = defaultdict(list)
    by_gold: dict[int, list[int]] = defaultdict(list)
    for a in pairs:
        by_pred[a // n_g].append(col[a])
        by_gold[a % n_g].append(col[a])
    for group in [*by_pred.values(), *by_gold.values()]:
        if len(group) > 1:
            rows.extend([n_rows] * len(group))
            cols.extend(group)
            n_rows += 1
    n_one_to_one = n_rows
    # Given a chosen pair a and another predicted (or reference) variable, at most one pairwise term of a with that
    # variable is on (Cai & Knight's constraint, tightened); a higher-order term is on only if each of its pairs is.
    linked: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for k, (t, _) in enumerate(terms):
        if len(t) == 2:
            a, b = t
            for this, other in ((a, b), (b, a)):
                linked[(this, 0, other // n_g)].append(n_y + k)
                linked[(this, 1, other % n_g)].append(n_y + k)
        else:
            for a in t:
                linked[(a, 2, k)].append(n_y + k)
    vals = [1.0] * len(rows)
    for (a, _, _), xs in linked.items():
        rows.extend([n_rows] * (len(xs) + 1))
        cols.extend(xs)
        cols.append(col[a])
        vals.extend([1.0] * len(xs))
        vals.append(-1.0)
        n_rows += 1
    matrix = sparse.csr_array((vals, (rows, cols)), shape=(n_rows, n_y + len(terms)))
    upper = np.concatenate([np.ones(n_one_to_one), np.zeros(n_rows - n_one_to_one)])
    c = -np.concatenate([np.array([p.unary.get(a, 0.0) for a in pairs]), np.array([w for _, w in terms])])
    return c, matrix, upper, n_y


def _relaxation(form: _Formulation, budget: Budget) -> tuple[np.ndarray | None, float]:
    """The linear relaxation (HiGHS interior point): the pair variables ``y`` and the bound (``inf`` if unsolved).

    Within the iterations ``budget`` affords (half of it at most; unsolved past them).
    """
    from scipy.optimize import linprog

    c, matrix, upper, n_y = form
    part = budget.share(_RELAXATION_SHARE)
    options = relaxation_options(matrix.nnz, part)
    if options is None:
        return None, math.inf
    with solver_output_captured():
        result = linprog(c, A_ub=matrix, b_ub=upper, bounds=(0, 1), method="highs-ipm", options=options)
    charge_relaxation(part, matrix.nnz, result)
    if result.status != 0 or result.x is None:
        return None, math.inf
    return np.asarray(result.x[:n_y]), -float(result.fun)


def _program(form: _Formulation, budget: Budget) -> tuple[np.ndarray | None, float, bool]:
    """The integer program, solved by HiGHS branch and cut within the branch-and-bound nodes the budget affords.

    Returns the values of the pair variables ``y`` (``None`` without a feasible point, or when not even the root node
    fits), an upper bound on the optimum (``inf`` when none is known) and whether the program was solved to optimality.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    c, matrix, upper, n_y = form
    options = program_options(matrix.nnz, budget)
    if options is None:
        return None, math.inf, False
    options.update(presolve=False, mip_rel_gap=0.0)
    with solver_output_captured():
        result = milp(
            c,
            constraints=LinearConstraint(matrix, -np.inf, upper),
            integrality=np.concatenate([np.ones(n_y), np.zeros(len(c) - n_y)]),
            bounds=Bounds(0, 1),
            options=options,
        )
    charge_program(budget, matrix.nnz, result)
    solved = result.status == 0 and result.x is not None
    bound = -float(result.fun) if solved else math.inf
    dual = getattr(result, "mip_dual_bound", None)
    if dual is not None and math.isfinite(dual):
        bound = min(bound, -float(dual))
    return (None if result.x is None else np.asarray(result.x[:n_y])), bound, solved


def _rounded(p: _Problem, y: np.ndarray) -> set[int]:
    """A one-to-one mapping maximizing the summed ``y`` (ties broken by unary weight)."""
    from scipy.optimize import linear_sum_assignment

    weights = np.zeros((p.n_pred, p.n_gold))
    for a, value in zip(p.pairs, y):
        weights[a // p.n_gold, a % p.n_gold] = value + 1e-6 * p.unary.get(a, 0.0)
    ri, ci = linear_sum_assignment(weights, maximize=True)
    return {int(i) * p.n_gold + int(j) for i, j in zip(ri, ci) if weights[i, j] > 1e-9}


def _local_search(p: _Problem, starts: list[set[int]], budget: Budget, max_rounds: int | None) -> set[int]:
    """Iterated steepest-ascent swap search (pairwise terms only) from each start; the best mapping found.

    Both sides are padded with dummy variables so that a mapping is a permutation of ``N = n_pred + n_gold`` and every
    move is a swap of two predicted variables' images (unmapping is a swap with a dummy). Kicks of a few random swaps
    (a fixed seed) restart the ascent until ``max_rounds`` (``None``: no limit) or the end of ``budget``; a move costs
    the ``N * N`` cells it weighs plus the terms it reads (:mod:`metametric_jax._budget`).
    """
    n_p, n_g = p.n_pred, p.n_gold
    size = n_p + n_g
    unary = np.zeros((size, size))
    for a, weight in p.unary.items():
        unary[a // n_g, a % n_g] = weight
    terms = list(p.pairwise.items())
    ua = np.array([a // n_g for (a, _), _ in terms], dtype=np.int64)
    va = np.array([a % n_g for (a, _), _ in terms], dtype=np.int64)
    ub = np.array([b // n_g for (_, b), _ in terms], dtype=np.int64)
    vb = np.array([b % n_g for (_, b), _ in terms], dtype=np.int64)
    w = np.array([x for _, x in terms], dtype=np.float64)
    rows = np.arange(size)

    def value(perm: np.ndarray) -> float:
        on = (perm[ua] == va) & (perm[ub] == vb)
        return float(unary[rows, perm].sum() + w[on].sum())

    key_a, key_b = ua * size + va, ub * size + vb  # cells of the gain matrix
    key_ab, key_ba = ua * size + ub, ub * size + ua  # cells of the swap matrix
    cells = size * size
    step = cells + len(terms) + STEP_UNITS

    def ascend(perm: np.ndarray) -> np.ndarray:
        while budget.spend(step):
            on_a, on_b = perm[ua] == va, perm[ub] == vb
            gain = unary + (
                np.bincount(key_a, w * on_b, minlength=cells) + np.bincount(key_b, w * on_a, minlength=cells)
            ).reshape(size, size)
            current = gain[rows, perm]
            cross = gain[:, perm]
            delta = cross + cross.T - current[:, None] - current[None, :]
            # a term lost twice by the two swapped variables, or one the swap creates
            fix = w * ((on_a & on_b) | ((perm[ub] == va) & (perm[ua] == vb)))
            delta += (np.bincount(key_ab, fix, minlength=cells) + np.bincount(key_ba, fix, minlength=cells)).reshape(
                size, size
            )
            k = int(delta.argmax())
            if delta.flat[k] <= _TOL:
                break
            i, j = divmod(k, size)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    best_perm: np.ndarray | None = None
    best = -1.0
    for start in starts:
        perm = np.full(size, -1, dtype=np.int64)
        for a in start:
            perm[a // n_g] = a % n_g
        free = iter(sorted(set(range(size)) - set(perm[perm >= 0].tolist())))
        for u in range(size):
            if perm[u] < 0:
                perm[u] = next(free)
        perm = ascend(perm)
        score = value(perm)
        if score > best + _TOL:
            best, best_perm = score, perm.copy()
    assert best_perm is not None
    perm = best_perm.copy()
    rounds = 0
    rng = np.random.default_rng(0) if max_rounds != 0 else None  # (NumPy's random module is imported on first use)
    while rng is not None and (max_rounds is None or rounds < max_rounds) and budget.spend(step):
        rounds += 1
        trial = perm.copy()
        for _ in range(int(rng.integers(2, 5))):
            i, j = rng.integers(0, size, 2)
            trial[i], trial[j] = trial[j], trial[i]
        trial = ascend(trial)
        score = value(trial)
        if score >= best - _TOL:  # accept sideways moves to drift across plateaus
            if score > best + _TOL:
                best_perm = trial.copy()
            best, perm = max(best, score), trial
    return {u * n_g + int(best_perm[u]) for u in range(n_p) if best_perm[u] < n_g}


def solve_latent(
    n_pred: int,
    n_gold: int,
    unary: Mapping[int, float],
    pairwise: Mapping[tuple[int, int], float] | None = None,
    higher: Mapping[tuple[int, ...], float] | None = None,
    *,
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> LatentSolution:
    r"""The best one-to-one partial mapping of predicted onto reference variables (see the module docstring).

    A variable pair is coded ``a = u * n_gold + v`` (predicted variable ``u``, reference variable ``v``).

    Args:
        n_pred: the number of predicted variables.
        n_gold: the number of reference variables.
        unary: weight of each pair, gained when ``u`` is mapped to ``v``.
        pairwise: weight of each two pairs ``(a, b)`` (of different variables on both sides), gained when both are.
        higher: weight of each tuple of three or more pairs, gained when all are.
        work_limit: work units for the linear relaxation, the local search and the integer program
            (:mod:`metametric_jax._budget`; ``None``: no limit, exact however long it takes). The quick certificates
            (assignment, a branch and bound of fixed size) come first and are not counted.
        time_limit: an extra wall-clock cap in seconds (default ``None``: none). A result it stops depends on the
            machine and its load (``timed_out`` says so).

    Returns:
        A :class:`LatentSolution`; ``optimal`` is False only when the budget ran out.

    >>> s = solve_latent(2, 2, {0: 1.0, 3: 1.0, 1: 1.5}, {(0, 3): 1.0})  # pairs (0,0), (1,1), (0,1)
    >>> s.value, s.mapping, s.optimal
    (3.0, {0: 0, 1: 1}, True)
    """
    p = _Problem(n_pred, n_gold, unary, pairwise or {}, higher or {})
    if not p.pairs:
        return LatentSolution(0.0, {}, True, 0.0)
    if not p.pairwise and not p.higher:
        chosen = _assignment_only(p)
        found = p.evaluate(chosen)
        return LatentSolution(found, p.mapping(chosen), True, found)
    budget = Budget(work_limit, time_limit)
    best, chosen, complete, bound = _branch_and_bound(p, _BNB_NODE_LIMIT)
    if complete:
        return LatentSolution(best, p.mapping(chosen), True, best)
    if not p.higher:  # a swap ascent, then the branch and bound again from its mapping: often a quick proof
        searched = _local_search(p, [chosen, _assignment_only(p)], Budget(None), max_rounds=0)
        found = p.evaluate(searched)
        if found > best + _TOL:
            best, chosen = found, searched
        best, chosen, complete, _ = _branch_and_bound(p, _PROOF_NODE_LIMIT, (best, chosen))
        if complete:
            return LatentSolution(best, p.mapping(chosen), True, best)
    # The linear relaxation is usually tight on graphs that resemble each other: its rounding is then optimal.
    form = _formulation(p)
    y, relaxed = _relaxation(form, budget)
    bound = min(bound, p.floor(relaxed))
    starts = [chosen, _assignment_only(p)] if p.unary else [chosen]
    if y is not None:
        starts.insert(0, _rounded(p, y))
    for candidate in starts:
        found = p.evaluate(candidate)
        if found > best + _TOL:
            best, chosen = found, candidate
    if p.reaches(best, bound):
        return LatentSolution(best, p.mapping(chosen), True, best)
    # The integer program is tried when its root fits in the budget (always without a work limit), unless the
    # relaxation failed: then the program has no chance either, and the search takes the whole budget.
    unbounded = work_limit is None
    program = p.higher or y is not None or unbounded
    fits = program and program_cost(form[1].nnz) <= (1 - _SEARCH_SHARE) * budget.left
    if not p.higher:
        share = budget.share(_SEARCH_SHARE if fits else 1.0)
        searched = _local_search(p, starts, share, max_rounds=100 if fits or unbounded else None)
        found = p.evaluate(searched)
        if found > best + _TOL:
            best, chosen = found, searched
        if p.reaches(best, bound):
            return LatentSolution(best, p.mapping(chosen), True, best)
    if program:
        y, exact_bound, _ = _program(form, budget)
        if y is not None:
            incumbent = {a for a, value in zip(p.pairs, y) if value > 0.5}
            found = p.evaluate(incumbent)
            if found > best + _TOL:
                best, chosen = found, incumbent
        bound = min(bound, p.floor(exact_bound))
    optimal = p.reaches(best, bound)
    upper = best if optimal else max(bound, best)
    return LatentSolution(best, p.mapping(chosen), optimal, upper, budget.timed_out and not optimal)
