"""Matching solvers behind :mod:`metametric_jax.matching`: assignment, row/column maxima, integer programs.

Each solver lives here once; the exact latent matching (Smatch's problem, used by :mod:`metametric_jax.tasks.amr` and
:class:`metametric_jax.matching.LatentSetMatching` alike) is :func:`solve_latent`, from :mod:`metametric_jax._latent`.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from metametric_jax._budget import (
    DEFAULT_WORK_LIMIT,
    SEARCH_OP_UNITS,
    STEP_UNITS,
    Budget,
    SolverBudgetWarning,
    budget_message,
    charge_program,
    program_options,
    solver_output_captured,
    warn_budget,
)
from metametric_jax._latent import LatentSolution, solve_latent
from metametric_jax.constraint import Constraint
from metametric_jax.lcs import weighted_lcs

__all__ = [
    "solve_latent_elements",
    "solve_gram",
    "discrete_stats",
    "solve_binary_program",
    "lcs_dp",
    "solve_latent",
    "LatentSolution",
    "SolverBudgetWarning",
    "DEFAULT_WORK_LIMIT",
    "budget_message",
]

#: The share of its budget the integer program of soft latent matching may use; a local search gets the rest.
_PROGRAM_SHARE = 0.6
#: Kicks without a better point after which the local search of a set-packing program stops (``2 n`` when larger).
_STALE_KICKS = 500


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
        from scipy.optimize import linear_sum_assignment  # imported on use: SciPy takes a while to import

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
    weights: np.ndarray,
    rows: list[list[int]],
    pair_le: Sequence[tuple[int, int]] = (),
    *,
    work_limit: int | None = None,
    time_limit: float | None = None,
    what: str | None = "integer program",
    budget: Budget | None = None,
) -> tuple[float, np.ndarray, bool, float]:
    """Maximize ``weights @ z`` over binary ``z`` subject to set-packing rows and ``z[a] <= z[b]`` links.

    Args:
        weights: objective coefficient of each binary variable.
        rows: each a list of variable indices whose sum must be at most 1.
        pair_le: ``(a, b)`` meaning ``z[a] <= z[b]``.
        work_limit: work units for the solver (``None``: exact, however long it takes): the branch-and-bound nodes it
            may use, each charged by the nonzeros of the program (:mod:`metametric_jax._budget`).
        time_limit: an extra wall-clock cap in seconds (``None``: none); a result it stops is not reproducible.
        what: the problem's name in the warning issued when the budget runs out (``None``: the caller warns).
        budget: the caller's budget to draw from, instead of ``work_limit`` and ``time_limit``.

    Returns:
        The best value found, its 0/1 solution vector, whether it is proven optimal, and an upper bound on the
        optimum (``inf`` when none is proven). Solved with ``scipy.optimize.milp`` (HiGHS); its output is kept off
        standard output. When the budget runs out (or does not afford the root node), the best solution HiGHS found
        is used (all zeros, a feasible point, if none; for a set-packing program the best point a local search finds
        from it and from a greedy packing, :func:`_packing_search`, with a work budget of its own the size of the
        one given, so never worse than greedy) and a :class:`SolverBudgetWarning` gives its value and the bound.
    """
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(weights)
    if n == 0:
        return 0.0, np.zeros(0), True, 0.0
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
    budget = Budget(work_limit, time_limit) if budget is None else budget
    search_units = None if math.isinf(budget.left) else budget.left
    nonzeros = len(data)
    options = program_options(nonzeros, budget)
    res: Any = None
    if options is not None:
        with solver_output_captured():
            res = milp(
                c=-np.asarray(weights, dtype=np.float64),
                constraints=constraints,
                integrality=np.ones(n),
                bounds=Bounds(0, 1),
                options=options,
            )
        charge_program(budget, nonzeros, res)
    optimal = res is not None and res.status == 0
    if res is not None and res.x is None and optimal:  # pragma: no cover - HiGHS always finds the all-zero point
        raise RuntimeError(f"integer program failed: {res.message}")
    z = np.zeros(n) if res is None or res.x is None else np.round(res.x)
    value = _objective(weights, z)
    if not optimal and not pair_le:  # a set-packing program: a local search may beat the solver's incumbent
        search = Budget(search_units)
        seconds = budget.seconds_left()
        search.deadline = None if seconds is None else time.monotonic() + seconds
        found = _packing_search(np.asarray(weights, dtype=np.float64), rows, z, search)
        if _objective(weights, found) > value:
            z, value = found, _objective(weights, found)
        budget.timed_out = budget.timed_out or search.timed_out
    dual = getattr(res, "mip_dual_bound", None)
    bound = value if optimal else (-float(dual) if dual is not None and np.isfinite(dual) else math.inf)
    if not optimal and what is not None:
        warn_budget(what, "solution", value, bound, work_limit, time_limit, budget.timed_out)
    return value, z, optimal, bound


def _objective(weights: Any, z: np.ndarray) -> float:
    """The weights of the chosen variables, summed and rounded once (a BLAS dot product adds in an order of its own)."""
    return math.fsum(np.asarray(weights, np.float64)[np.asarray(z) > 0.5].tolist())


def _packing_search(weights: np.ndarray, rows: list[list[int]], start: np.ndarray, budget: Budget) -> np.ndarray:
    """The best feasible point of a set-packing program an iterated local search finds from ``start`` and a greedy one.

    A feasible point is an independent set of the conflict graph (two variables conflict when they share a row). The
    greedy packing (variables by decreasing weight, each kept if its rows are free) and ``start`` (the solver's
    incumbent) are each improved to a local optimum of two moves: put a variable in, taking out the chosen ones it
    conflicts with, when it outweighs them; take one out for two that conflict only with it and outweigh it. Then
    kicks force a variable in (drawn by a generator of fixed seed) and improve again, accepting any point not worse,
    until :data:`_STALE_KICKS` kicks (at least, more on larger programs) bring no better point or ``budget`` ends. A
    move is charged :data:`SEARCH_OP_UNITS` per variable it reads, so the result is a pure function of the input.
    """
    n = len(weights)
    w = [float(x) for x in weights]
    near: list[set[int]] = [set() for _ in range(n)]
    for row in rows:
        if len(row) > 1:
            for v in row:
                near[v].update(row)
    adj = [sorted(s - {v}) for v, s in enumerate(near)]
    tol = 1e-9 * max(1.0, max(map(abs, w), default=1.0))
    chosen = [False] * n
    tight = [0] * n  # chosen variables each conflicts with
    against = [0.0] * n  # their summed weight
    ops = [sum(map(len, adj)) + n]

    def put(v: int) -> None:
        chosen[v] = True
        for u in adj[v]:
            tight[u] += 1
            against[u] += w[v]
        ops[0] += len(adj[v])

    def drop(v: int) -> None:
        chosen[v] = False
        for u in adj[v]:
            tight[u] -= 1
            against[u] -= w[v]
        ops[0] += len(adj[v])

    def force(v: int) -> None:
        for u in adj[v]:
            if chosen[u]:
                drop(u)
        put(v)

    def improve() -> None:
        changed = True
        while changed:
            changed = False
            ops[0] += n
            for v in range(n):
                if not chosen[v] and w[v] > against[v] + tol:
                    force(v)
                    changed = True
            for u in range(n):
                if not chosen[u]:
                    continue
                alone = [v for v in adj[u] if not chosen[v] and tight[v] == 1]
                ops[0] += len(adj[u]) + len(alone) ** 2
                pair = max(
                    ((w[a] + w[b], a, b) for k, a in enumerate(alone) for b in alone[k + 1 :] if b not in near[a]),
                    default=None,
                )
                if pair is not None and pair[0] > w[u] + tol:
                    drop(u)
                    put(pair[1])
                    put(pair[2])
                    changed = True

    def total() -> float:
        return sum(x for x, on in zip(w, chosen) if on)

    best_total, best = -1.0, [False] * n
    greedy = [v for v in np.argsort(-np.asarray(weights), kind="stable").tolist() if w[v] > 0]
    for begin in (sorted(int(v) for v in np.nonzero(start > 0.5)[0]), greedy):
        for v in range(n):
            if chosen[v]:
                drop(v)
        for v in begin:
            if not chosen[v] and tight[v] == 0 and w[v] > 0:
                put(v)
        improve()
        if total() > best_total + tol:
            best_total, best = total(), chosen[:]
    if not budget.spend(SEARCH_OP_UNITS * ops[0]):
        return np.array(best, dtype=np.float64)
    for v in range(n):  # the kicks start from the best local optimum
        if chosen[v] != best[v]:
            (put if best[v] else drop)(v)
    current = best_total
    rng = random.Random(0)
    stale = 0
    while stale < max(_STALE_KICKS, 2 * n):
        outside = [v for v in range(n) if not chosen[v] and w[v] > 0]
        if not outside:
            break
        ops[0] = 3 * n
        saved = chosen[:], tight[:], against[:]
        force(outside[rng.randrange(len(outside))])
        improve()
        found = total()
        stale += 1
        if found > best_total + tol:
            best_total, best, stale = found, chosen[:], 0
        if found >= current - tol:
            current = found
        else:
            chosen[:], tight[:], against[:] = saved
        if not budget.spend(SEARCH_OP_UNITS * ops[0] + STEP_UNITS):
            break
    return np.array(best, dtype=np.float64)


def lcs_dp(g: np.ndarray) -> tuple[float, list[tuple[int, int]]]:
    """Best monotone (order-preserving) partial alignment of a Gram matrix: a weighted LCS.

    :func:`metametric_jax.lcs.weighted_lcs` with ``ties="skip"`` (the alignment sequence matching explains).
    """
    return weighted_lcs(g, ties="skip")


def _element_factor(constraint: Constraint, n_pred: int, n_ref: int) -> int:
    """Matches between ``n_pred`` predicted and ``n_ref`` reference copies of one element under ``constraint``."""
    if constraint is Constraint.ONE_TO_ONE:
        return min(n_pred, n_ref)
    if constraint is Constraint.ONE_TO_MANY:
        return n_pred
    if constraint is Constraint.MANY_TO_ONE:
        return n_ref
    return n_pred * n_ref


def solve_latent_elements(
    g: np.ndarray,
    bindings: Callable[[int, int], Sequence[tuple[Any, Any]]],
    constraint: Constraint,
    *,
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> tuple[float, list[tuple[int, int]], bool]:
    r"""Joint matching of elements and their latent variables: ``(total, matched element pairs, optimal)``.

    Element ``i`` (predicted) may match element ``j`` (reference), gaining ``g[i, j]``, only if every variable pair
    ``bindings(i, j)`` is in the one-to-one variable mapping; elements match under ``constraint``.

    When the elements compatible with each other form complete blocks of equal weight (elements equal up to their
    variables, the case of Smatch's triples), the problem is one of :func:`solve_latent`: for a fixed mapping, the
    predicted copies of a block with variable tuple :math:`T` match the reference copies with tuple :math:`m(T)`,
    :math:`\min(c_T, c_{m(T)})` of them under ``1:1``, so each pair of tuples is one term over the variable pairs it
    requires. Otherwise it is solved as an integer program over element and variable pairs
    (:func:`solve_binary_program`) within the same budget: ``work_limit`` work units (``None``: exact, unbounded),
    and the optional wall-clock cap ``time_limit`` (its results are not reproducible; see
    :mod:`metametric_jax._budget`).
    """
    n_x, n_y = g.shape
    cand = [(int(i), int(j)) for i, j in zip(*np.nonzero(g > 0))]
    if not cand:
        return 0.0, [], True
    blocks = _blocks(g, cand)
    if blocks is None:
        return _latent_program(g, cand, bindings, constraint, work_limit, time_limit)
    pred_vars: dict[Any, int] = {}
    gold_vars: dict[Any, int] = {}
    groups = []  # per block: weight, {pred tuple: [i]}, {gold tuple: [j]}
    for rows, cols, weight in blocks:
        left: dict[tuple, list[int]] = defaultdict(list)
        right: dict[tuple, list[int]] = defaultdict(list)
        for i in rows:
            left[tuple(pred_vars.setdefault(u, len(pred_vars)) for u, _ in bindings(i, cols[0]))].append(i)
        for j in cols:
            right[tuple(gold_vars.setdefault(v, len(gold_vars)) for _, v in bindings(rows[0], j))].append(j)
        groups.append((weight, left, right))
    n_g = max(len(gold_vars), 1)
    constant = 0.0
    unary: dict[int, float] = defaultdict(float)
    pairwise: dict[tuple[int, int], float] = defaultdict(float)
    higher: dict[tuple[int, ...], float] = defaultdict(float)
    requirements = []
    for weight, left, right in groups:
        for t_pred, items in left.items():
            for t_gold, others in right.items():
                if len(t_pred) != len(t_gold):
                    continue
                needed = dict.fromkeys(zip(t_pred, t_gold))
                if len({u for u, _ in needed}) != len(needed) or len({v for _, v in needed}) != len(needed):
                    continue  # a variable would be mapped twice
                gain = weight * _element_factor(constraint, len(items), len(others))
                pairs = tuple(sorted(u * n_g + v for u, v in needed))
                requirements.append((pairs, items, others))
                if not pairs:
                    constant += gain
                elif len(pairs) == 1:
                    unary[pairs[0]] += gain
                elif len(pairs) == 2:
                    pairwise[(pairs[0], pairs[1])] += gain
                else:
                    higher[pairs] += gain
    solution = solve_latent(
        len(pred_vars), len(gold_vars), unary, pairwise, higher, work_limit=work_limit, time_limit=time_limit
    )
    if not solution.optimal:
        value, bound = solution.value + constant, solution.upper_bound + constant
        warn_budget("latent matching", "variable mapping", value, bound, work_limit, time_limit, solution.timed_out)
    chosen = {u * n_g + v for u, v in solution.mapping.items()}
    matched: list[tuple[int, int]] = []
    for pairs, items, others in requirements:
        if all(a in chosen for a in pairs):
            if constraint is Constraint.ONE_TO_ONE:
                matched.extend(zip(items, others))
            elif constraint is Constraint.ONE_TO_MANY:
                matched.extend((i, others[0]) for i in items)
            elif constraint is Constraint.MANY_TO_ONE:
                matched.extend((items[0], j) for j in others)
            else:
                matched.extend((i, j) for i in items for j in others)
    total = float(sum(g[i, j] for i, j in matched))
    return total, sorted(matched), solution.optimal


def _blocks(g: np.ndarray, cand: list[tuple[int, int]]) -> list[tuple[list[int], list[int], float]] | None:
    """The connected components of the candidate pairs, if each is complete with one weight (else ``None``)."""
    n_x = g.shape[0]
    parent = list(range(n_x + g.shape[1]))  # predicted elements, then reference elements

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in cand:
        a, b = find(i), find(n_x + j)
        if a != b:
            parent[a] = b
    members: dict[int, tuple[set[int], set[int], list[float]]] = defaultdict(lambda: (set(), set(), []))
    for i, j in cand:
        rows, cols, weights = members[find(i)]
        rows.add(i)
        cols.add(j)
        weights.append(float(g[i, j]))
    out = []
    for rows, cols, weights in members.values():
        if len(weights) != len(rows) * len(cols) or min(weights) != max(weights):
            return None
        out.append((sorted(rows), sorted(cols), weights[0]))
    return out


def _latent_program(
    g: np.ndarray,
    cand: list[tuple[int, int]],
    bindings: Callable[[int, int], Sequence[tuple[Any, Any]]],
    constraint: Constraint,
    work_limit: int | None = None,
    time_limit: float | None = None,
) -> tuple[float, list[tuple[int, int]], bool]:
    """The integer program over element pairs ``z`` and variable pairs ``b``: ``z <= b`` for each binding.

    Within ``work_limit`` work units (``None``: exact, unbounded; see :func:`solve_binary_program`); past it, a local
    search from the program's best point takes what the program left.
    """
    var_index: dict[tuple[Any, Any], int] = {}
    links: list[tuple[int, int]] = []
    n = len(cand)
    for k, (i, j) in enumerate(cand):
        for u, v in bindings(i, j):
            idx = var_index.get((u, v))
            if idx is None:
                idx = var_index[(u, v)] = n + len(var_index)
            links.append((k, idx))
    w = np.concatenate([np.array([g[i, j] for i, j in cand]), np.zeros(len(var_index))])
    groups: dict[tuple[str, Any], list[int]] = {}
    if constraint in (Constraint.ONE_TO_ONE, Constraint.ONE_TO_MANY):
        for k, (i, _) in enumerate(cand):
            groups.setdefault(("i", i), []).append(k)
    if constraint in (Constraint.ONE_TO_ONE, Constraint.MANY_TO_ONE):
        for k, (_, j) in enumerate(cand):
            groups.setdefault(("j", j), []).append(k)
    for (u, v), idx in var_index.items():
        groups.setdefault(("u", u), []).append(idx)
        groups.setdefault(("v", v), []).append(idx)
    budget = Budget(work_limit, time_limit)
    total, z, optimal, bound = solve_binary_program(
        w, list(groups.values()), links, what=None, budget=budget.share(_PROGRAM_SHARE)
    )
    chosen = [cand[k] for k in range(n) if z[k] > 0.5]
    if not optimal:
        searched = _local_latent_search(g, cand, bindings, constraint, chosen, budget)
        value = float(sum(g[i, j] for i, j in searched))
        if value > total:
            total, chosen = value, searched
        warn_budget("latent matching", "solution", total, bound, work_limit, time_limit, budget.timed_out)
    return total, chosen, optimal


def _local_latent_search(
    g: np.ndarray,
    cand: list[tuple[int, int]],
    bindings: Callable[[int, int], Sequence[tuple[Any, Any]]],
    constraint: Constraint,
    start: list[tuple[int, int]],
    budget: Budget,
) -> list[tuple[int, int]]:
    """Hill climbing over variable mappings from the better of ``start`` and a greedy matching, until ``budget`` ends.

    For a mapping, the best element matching is :func:`solve_gram` over the element pairs whose variables it maps
    alike; moves re-map one predicted variable (to a free reference variable, or by swapping with another). An
    evaluation costs the cells of the Gram matrix times its smaller side, plus the bindings it reads.
    """
    needs = [tuple(bindings(i, j)) for i, j in cand]
    evaluation = g.size * max(1, min(g.shape)) + sum(len(need) for need in needs)

    def mapping_of(pairs: list[tuple[int, int]]) -> dict[Any, Any]:
        index = {c: k for k, c in enumerate(cand)}
        return {u: v for pair in pairs for u, v in needs[index[pair]]}

    def evaluate(m: dict[Any, Any]) -> tuple[float, list[tuple[int, int]]]:
        masked = np.zeros_like(g)
        for (i, j), need in zip(cand, needs):
            if all(m.get(u) == v for u, v in need):
                masked[i, j] = g[i, j]
        return solve_gram(masked, constraint, want_pairs=True)

    pred_vars = sorted({u for need in needs for u, _ in need}, key=repr)
    gold_vars = sorted({v for need in needs for _, v in need}, key=repr)
    rng = np.random.default_rng(0)
    greedy = _greedy_latent(g, cand, needs, constraint)
    mapping = mapping_of(max((start, greedy), key=lambda pairs: sum(g[i, j] for i, j in pairs)))
    value, pairs = evaluate(mapping)
    best, best_pairs = value, pairs
    while budget.spend(evaluation):  # hill climbing, then random restarts while the budget lasts
        improved = True
        while improved and budget.spend(0):
            improved = False
            for a, u in enumerate(pred_vars):
                free = [v for v in gold_vars if v not in mapping.values()]
                moves = [{**mapping, u: v} for v in free]
                moves += [
                    {**mapping, u: mapping[w], w: mapping[u]}
                    for w in pred_vars[a + 1 :]
                    if w in mapping and u in mapping
                ]
                for m in moves:
                    if not budget.spend(evaluation):
                        break
                    found_value, found = evaluate(m)
                    if found_value > value + 1e-12:
                        value, pairs, mapping, improved = found_value, found, m, True
                        break
                if improved:
                    break
        if value > best:
            best, best_pairs = value, pairs
        if math.isinf(budget.left):
            break  # no work limit: one climb, not endless restarts
        shuffled = rng.permutation(len(gold_vars))
        mapping = {u: gold_vars[k] for u, k in zip(pred_vars, shuffled)}
        value, pairs = evaluate(mapping)
    return sorted(best_pairs)


def _greedy_latent(
    g: np.ndarray, cand: list[tuple[int, int]], needs: list[tuple[tuple[Any, Any], ...]], constraint: Constraint
) -> list[tuple[int, int]]:
    """A feasible joint matching: element pairs by decreasing weight, each kept if its variables fit the mapping."""
    forward: dict[Any, Any] = {}
    backward: dict[Any, Any] = {}
    used_i: set[int] = set()
    used_j: set[int] = set()
    one_i = constraint in (Constraint.ONE_TO_ONE, Constraint.ONE_TO_MANY)
    one_j = constraint in (Constraint.ONE_TO_ONE, Constraint.MANY_TO_ONE)
    out = []
    for k in sorted(range(len(cand)), key=lambda k: -g[cand[k]]):
        i, j = cand[k]
        if (one_i and i in used_i) or (one_j and j in used_j):
            continue
        fwd, bwd = dict(forward), dict(backward)
        if any(fwd.setdefault(u, v) != v or bwd.setdefault(v, u) != u for u, v in needs[k]):
            continue  # a variable would be mapped twice
        forward, backward = fwd, bwd
        used_i.add(i)
        used_j.add(j)
        out.append((i, j))
    return sorted(out)
