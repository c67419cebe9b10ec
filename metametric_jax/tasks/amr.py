r"""Smatch for AMR graphs, solved exactly, as a JAX accumulator.

Smatch (Cai & Knight, 2013, *Smatch: an Evaluation Metric for Semantic Feature Structures*, ACL) compares two AMR
graphs through their triples under the best one-to-one (partial) mapping :math:`m` of the predicted variables onto
the gold variables:

.. math::

    \mathrm{match}(P, G) = \max_{m} \bigl| m(T(P)) \cap T(G) \bigr|, \qquad
    \mathrm{precision} = \frac{\mathrm{match}}{|T(P)|}, \quad \mathrm{recall} = \frac{\mathrm{match}}{|T(G)|}, \quad
    F_1 = \frac{2\,\mathrm{match}}{|T(P)| + |T(G)|}.

The triples :math:`T` are those of the ``smatch`` package (version 1.0.4):

* instance triples ``("instance", var, concept)``, one per variable;
* attribute triples ``(role, var, constant)``, quotes removed, plus ``("TOP", root, "top")``;
* relation triples ``(role, var1, var2)``; an inverse role ``:X-of`` is stored as ``(X, var2, var1)`` (except
  ``:consist-of``, ``:prep-on-behalf-of``, ``:prep-out-of``), and ``:mod`` as ``("domain", var2, var1)``.

Roles, concepts and constants are compared case-insensitively. Over a corpus the counts are summed first (micro
average), as the ``smatch`` tool does for a file of graph pairs.

The ``smatch`` package searches the mapping by hill climbing with random restarts, which may stop at a local optimum.
Here the maximum is exact: an integer linear program (the formulation of Cai & Knight's Section 3, tightened)

.. math::

    \max \sum_{(u,v)} w_{uv}\, y_{uv} + \sum_{e} w_e\, x_e \quad \text{s.t.} \quad
    \sum_v y_{uv} \le 1, \ \sum_u y_{uv} \le 1, \
    \sum_{v_2} x_{(u_1 v_1)(u_2 v_2)} \le y_{u_1 v_1}, \ \sum_{u_2} x_{(u_1 v_1)(u_2 v_2)} \le y_{u_1 v_1},

with binary :math:`y_{uv}` (predicted variable :math:`u` mapped to gold variable :math:`v`), :math:`w_{uv}` the
instance and attribute triples that the pair alone matches, and one :math:`x_e \in [0, 1]` per pair of variable pairs
whose relation triples match (weight :math:`w_e`). Variable pairs that match nothing are pruned. Small problems are
solved by a depth-first branch and bound, problems without relation matches by a linear assignment, and the rest by
``scipy.optimize.milp`` (HiGHS).

Identical triples are matched at most once each (a multiset intersection); on graphs without repeated triples this is
the ``smatch`` objective.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metametric_jax.accumulate import stats_metric
from metametric_jax.errors import InputFormatError

__all__ = ["Smatch", "smatch_triples", "smatch_match", "score_files", "read_penman"]

Triple = tuple[str, str, str]

INSTANCE = "instance"
TOP = "TOP"
_NOT_INVERTED = frozenset({"consist-of", "prep-on-behalf-of", "prep-out-of"})
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_BNB_NODE_LIMIT = 400


# ------------------------------------------------------------------------------------------------------------ reading
def _penman() -> Any:
    try:
        import penman
    except ImportError:
        raise ImportError(
            "Reading PENMAN graphs needs the optional dependency `penman`; install it with "
            "`pip install metametric-jax[formats]` (or `pip install penman`)."
        ) from None
    return penman


def _parse_tree(text: str, path: str, line: int | None) -> Any:
    """One PENMAN graph (``#`` comment lines allowed) as a ``penman.Tree``; :class:`InputFormatError` otherwise."""
    penman = _penman()
    body = "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.splitlines())
    stripped = body.strip()
    if not stripped.startswith("("):
        raise InputFormatError(path, line, f"expected a PENMAN graph starting with '(', found {stripped[:40]!r}")
    unquoted = _QUOTED.sub('""', stripped)
    opened, closed = unquoted.count("("), unquoted.count(")")
    if opened != closed:
        raise InputFormatError(path, line, f"unbalanced parentheses in the PENMAN graph: {opened} '(' but {closed} ')'")
    try:
        trees = list(penman.iterparse(body))
    except penman.DecodeError as err:
        where = f" (line {err.lineno} of the graph)" if err.lineno is not None else ""
        raise InputFormatError(path, line, f"invalid PENMAN graph{where}: {err.message}") from None
    if len(trees) != 1:
        raise InputFormatError(
            path, line, f"expected one PENMAN graph per blank-line separated block, found {len(trees)}"
        )
    return trees[0]


def read_penman(path: str | Path) -> list[tuple[int, Any]]:
    """The graphs of a PENMAN file as ``(line, penman.Tree)`` pairs.

    Graphs are separated by blank lines; lines starting with ``#`` (such as ``# ::snt``) are skipped. ``line`` is the
    1-based line of the graph's first non-comment line.

    Raises:
        InputFormatError: a block is not exactly one well-formed PENMAN graph.
    """
    path = str(path)
    blocks: list[tuple[int, list[str]]] = []
    start: int | None = None
    lines: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.rstrip("\n")
            if not text.strip():
                if start is not None:
                    blocks.append((start, lines))
                start, lines = None, []
                continue
            if text.lstrip().startswith("#"):
                continue
            if start is None:
                start = number
            lines.append(text)
    if start is not None:
        blocks.append((start, lines))
    return [(start, _parse_tree("\n".join(body), path, start)) for start, body in blocks]


# ------------------------------------------------------------------------------------------------------------ triples
def _preorder(tree: Any) -> list[tuple[str, list[tuple[str, Any]]]]:
    out = []
    stack = [tree.node]
    while stack:
        var, branches = stack.pop()
        out.append((var, branches))
        stack.extend(t for _, t in reversed(branches) if isinstance(t, tuple))
    return out


def _relation(role: str, source: str, target: str) -> Triple:
    if role.endswith("-of") and role not in _NOT_INVERTED:
        return (role[:-3], target, source)
    if role == "mod":
        return ("domain", target, source)
    return (role, source, target)


def _tree_triples(tree: Any, path: str, line: int | None) -> list[Triple]:
    nodes = _preorder(tree)
    concepts: dict[str, str] = {}
    for var, branches in nodes:
        if var in concepts:
            raise InputFormatError(path, line, f"variable {var!r} is defined twice; each variable needs one concept")
        concept = next((t for role, t in branches if role == "/"), None)
        if concept is None:
            raise InputFormatError(path, line, f"variable {var!r} has no concept; expected '({var} / concept ...)'")
        concepts[var] = concept
    triples: list[Triple] = [(INSTANCE, var, concepts[var]) for var, _ in nodes]
    triples.append((TOP, nodes[0][0], "top"))
    for var, branches in nodes:
        for role, target in branches:
            if role == "/":
                continue
            name = role[1:] if role.startswith(":") else role
            if isinstance(target, tuple):
                triples.append(_relation(name, var, target[0]))
            elif target is None:
                raise InputFormatError(path, line, f"role {role!r} of variable {var!r} has no value")
            elif len(target) >= 2 and target[0] == '"' and target[-1] == '"':
                triples.append((name, var, target[1:-1]))
            elif target in concepts:
                triples.append(_relation(name, var, target))
            else:
                triples.append((name, var, target))
    return triples


def _check_triples(graph: Sequence[Any], label: str) -> list[Triple]:
    out = []
    for k, t in enumerate(graph):
        if not (isinstance(t, (tuple, list)) and len(t) == 3 and all(isinstance(x, str) for x in t)):
            raise TypeError(
                f"{label}: a triple list must hold (role, source, target) string triples; item {k} is {t!r}."
            )
        out.append((t[0], t[1], t[2]))
    return out


def smatch_triples(graph: Any, *, label: str = "<graph>") -> list[Triple]:
    """The triples Smatch compares, with the graph's own variable names.

    Args:
        graph: a PENMAN string, a ``penman.Tree``, a ``penman.Graph``, or a list of ``(role, source, target)`` triples
            (returned as a list of tuples).
        label: names the graph in error messages (the ``path`` of an :class:`InputFormatError`).

    Returns:
        Instance triples in the order the variables appear, then ``("TOP", root, "top")``, then relation and attribute
        triples in the order they appear.

    Raises:
        InputFormatError: an unparsable PENMAN string.
        TypeError: any other type of graph.

    >>> smatch_triples("(w / want-01 :ARG0 (b / boy) :ARG1-of (g / go-02))")
    [('instance', 'w', 'want-01'), ('instance', 'b', 'boy'), ('instance', 'g', 'go-02'), ('TOP', 'w', 'top'), \
('ARG0', 'w', 'b'), ('ARG1', 'g', 'w')]
    """
    if isinstance(graph, str):
        return _tree_triples(_parse_tree(graph, label, 1), label, 1)
    if isinstance(graph, (list, tuple)):
        return _check_triples(graph, label)
    module = type(graph).__module__ or ""
    if module.startswith("penman"):
        penman = _penman()
        if isinstance(graph, penman.Tree):
            return _tree_triples(graph, label, None)
        if isinstance(graph, penman.Graph):
            try:
                tree = penman.configure(graph)
            except penman.PenmanError as err:
                raise ValueError(f"{label}: cannot lay out the penman.Graph as a tree: {err}") from None
            return _tree_triples(tree, label, None)
    raise TypeError(
        f"{label}: expected a PENMAN string, a penman.Tree, a penman.Graph or a list of (role, source, target) "
        f"triples; found {type(graph).__name__}."
    )


# ------------------------------------------------------------------------------------------------------------ problem
class _Side:
    """One graph's triples indexed for matching: variables, per-variable unary keys, relation counts."""

    def __init__(self, triples: Sequence[Triple]) -> None:
        self.n_triples = len(triples)
        index: dict[str, int] = {}
        for role, source, _ in triples:
            if source not in index and role.lower() == INSTANCE:
                index[source] = len(index)
        defined = set(index)
        for _, source, _ in triples:
            if source not in index:
                index[source] = len(index)
        self.names = list(index)
        unary: list[dict[tuple[str, str | None], int]] = [{} for _ in self.names]
        relations: dict[tuple[str, int, int], int] = {}
        for role, source, target in triples:
            r = role.lower()
            u = index[source]
            if target in defined and r != INSTANCE and r != "top":
                v = index[target]
                if u == v:
                    key: Any = (r, None)
                    unary[u][key] = unary[u].get(key, 0) + 1
                else:
                    key = (r, u, v)
                    relations[key] = relations.get(key, 0) + 1
            else:
                key = (r, target.lower())
                unary[u][key] = unary[u].get(key, 0) + 1
        self.unary = unary
        self.relations = relations


def _problem(pred: _Side, gold: _Side) -> tuple[dict[int, int], dict[tuple[int, int], int], int]:
    """Pair weights ``w[a]`` (``a = u * n_gold + v``), edge weights ``w[(a, b)]`` (``a < b``), and an upper bound."""
    n_g = len(gold.names)
    by_key: dict[Any, list[tuple[int, int]]] = defaultdict(list)
    gold_key_total: Counter = Counter()
    for v, keys in enumerate(gold.unary):
        for key, count in keys.items():
            by_key[key].append((v, count))
            gold_key_total[key] += count
    unary: dict[int, int] = defaultdict(int)
    pred_key_total: Counter = Counter()
    for u, keys in enumerate(pred.unary):
        base = u * n_g
        for key, count in keys.items():
            pred_key_total[key] += count
            for v, other in by_key.get(key, ()):
                unary[base + v] += count if count < other else other
    by_label: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    gold_label_total: Counter = Counter()
    for (r, v1, v2), count in gold.relations.items():
        by_label[r].append((v1, v2, count))
        gold_label_total[r] += count
    edges: dict[tuple[int, int], int] = defaultdict(int)
    pred_label_total: Counter = Counter()
    for (r, u1, u2), count in pred.relations.items():
        pred_label_total[r] += count
        for v1, v2, other in by_label.get(r, ()):
            a, b = u1 * n_g + v1, u2 * n_g + v2
            edges[(a, b) if a < b else (b, a)] += count if count < other else other
    bound = sum(min(c, gold_key_total[k]) for k, c in pred_key_total.items())
    bound += sum(min(c, gold_label_total[r]) for r, c in pred_label_total.items())
    return dict(unary), dict(edges), bound


def _evaluate(chosen: set[int], unary: dict[int, int], edges: dict[tuple[int, int], int]) -> int:
    total = sum(unary.get(a, 0) for a in chosen)
    return total + sum(w for (a, b), w in edges.items() if a in chosen and b in chosen)


class _BudgetExceededError(Exception):
    pass


class _ReachedBoundError(Exception):
    pass


def _assignment(n_g: int, unary: dict[int, int]) -> set[int]:
    from scipy.optimize import linear_sum_assignment

    rows = sorted({a // n_g for a in unary})
    cols = sorted({a % n_g for a in unary})
    r_index = {u: i for i, u in enumerate(rows)}
    c_index = {v: j for j, v in enumerate(cols)}
    weights = np.zeros((len(rows), len(cols)))
    for a, w in unary.items():
        weights[r_index[a // n_g], c_index[a % n_g]] = w
    ri, ci = linear_sum_assignment(weights, maximize=True)
    return {rows[i] * n_g + cols[j] for i, j in zip(ri, ci) if weights[i, j] > 0}


def _branch_and_bound(
    n_g: int, unary: dict[int, int], edges: dict[tuple[int, int], int], bound: int, limit: int
) -> set[int]:
    """Exact depth-first search over predicted variables; raises :class:`_BudgetExceededError` after ``limit`` nodes."""
    pairs = set(unary)
    neighbours: dict[int, set[int]] = defaultdict(set)
    for a, b in edges:
        pairs.add(a)
        pairs.add(b)
        ua, ub = a // n_g, b // n_g
        neighbours[ua].add(ub)
        neighbours[ub].add(ua)
    candidates: dict[int, list[int]] = defaultdict(list)
    for a in sorted(pairs):
        candidates[a // n_g].append(a % n_g)
    # Visit variables breadth-first along relations, so that relation gains are counted early.
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
    # links[a]: relation gains of pair a with pairs of variables placed earlier in the order.
    links: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for (a, b), w in edges.items():
        if position[a // n_g] < position[b // n_g]:
            a, b = b, a
        links[a].append((b // n_g, b % n_g, w))
    optimistic = []
    for u in order:
        best_u = 0
        for v in candidates[u]:
            a = u * n_g + v
            per_var: dict[tuple[int, int], int] = defaultdict(int)
            for u2, v2, w in links.get(a, ()):
                per_var[(u2, v2)] += w
            grouped: dict[int, int] = defaultdict(int)
            for (u2, _), w in per_var.items():
                grouped[u2] = max(grouped[u2], w)
            best_u = max(best_u, unary.get(a, 0) + sum(grouped.values()))
        optimistic.append(best_u)
    suffix = [0] * (len(order) + 1)
    for k in range(len(order) - 1, -1, -1):
        suffix[k] = suffix[k + 1] + optimistic[k]
    bound = min(bound, suffix[0])

    n = len(order)
    assign: dict[int, int] = {}
    used: set[int] = set()
    best: list[Any] = [-1, set()]
    visited = [0]

    def search(k: int, current: int) -> None:
        visited[0] += 1
        if visited[0] > limit:
            raise _BudgetExceededError
        if k == n:
            if current > best[0]:
                best[0] = current
                best[1] = {u * n_g + v for u, v in assign.items()}
                if current >= bound:
                    raise _ReachedBoundError
            return
        u = order[k]
        rest = suffix[k + 1]
        options = []
        for v in candidates[u]:
            if v in used:
                continue
            a = u * n_g + v
            gain = unary.get(a, 0)
            for u2, v2, w in links.get(a, ()):
                if assign.get(u2) == v2:
                    gain += w
            options.append((gain, v))
        options.sort(reverse=True)
        for gain, v in options:
            if current + gain + rest <= best[0]:
                break
            assign[u] = v
            used.add(v)
            search(k + 1, current + gain)
            del assign[u]
            used.discard(v)
        if current + rest > best[0]:
            search(k + 1, current)

    try:
        search(0, 0)
    except _ReachedBoundError:
        pass
    return best[1]


def _highs(n_g: int, unary: dict[int, int], edges: dict[tuple[int, int], int], integer: bool) -> tuple[set[int], float]:
    """The integer program (``integer=True``) or its linear relaxation, solved by HiGHS.

    Returns the pairs whose ``y`` exceeds 1/2 (a one-to-one mapping, since each variable's ``y`` sum to at most 1)
    and the optimal objective value (an upper bound on the match when ``integer`` is false).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

    pairs = sorted(set(unary).union(*edges))
    col = {a: i for i, a in enumerate(pairs)}
    n_y, edge_list = len(pairs), list(edges.items())
    n_x = len(edge_list)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    n_rows = 0
    # One-to-one: each predicted and each gold variable in at most one chosen pair.
    by_pred: dict[int, list[int]] = defaultdict(list)
    by_gold: dict[int, list[int]] = defaultdict(list)
    for a in pairs:
        by_pred[a // n_g].append(col[a])
        by_gold[a % n_g].append(col[a])
    for group in list(by_pred.values()) + list(by_gold.values()):
        if len(group) > 1:
            rows.extend([n_rows] * len(group))
            cols.extend(group)
            vals.extend([1.0] * len(group))
            n_rows += 1
    n_one_to_one = n_rows
    # Relation pairs: given a chosen pair a and another predicted (or gold) variable, at most one x_e with a is on.
    linked: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for k, ((a, b), _) in enumerate(edge_list):
        for this, other in ((a, b), (b, a)):
            linked[(this, 0, other // n_g)].append(n_y + k)
            linked[(this, 1, other % n_g)].append(n_y + k)
    for (a, _, _), xs in linked.items():
        rows.extend([n_rows] * (len(xs) + 1))
        cols.extend(xs)
        cols.append(col[a])
        vals.extend([1.0] * len(xs))
        vals.append(-1.0)
        n_rows += 1
    matrix = csr_array((vals, (rows, cols)), shape=(n_rows, n_y + n_x))
    upper = np.concatenate([np.ones(n_one_to_one), np.zeros(n_rows - n_one_to_one)])
    c = -np.concatenate([np.array([unary.get(a, 0) for a in pairs], float), np.array([w for _, w in edge_list], float)])
    integrality = np.concatenate([np.full(n_y, 1 if integer else 0), np.zeros(n_x)])
    options: dict[str, Any] = {"presolve": False}
    if integer:
        options["mip_rel_gap"] = 0.0
    result = milp(
        c,
        constraints=LinearConstraint(matrix, -np.inf, upper),
        integrality=integrality,
        bounds=Bounds(0, 1),
        options=options,
    )
    if result.x is None or result.status != 0:
        raise RuntimeError(f"smatch: HiGHS did not solve the matching problem to optimality ({result.message}).")
    return {a for a, value in zip(pairs, result.x[:n_y]) if value > 0.5}, -float(result.fun)


def _solve(pred: _Side, gold: _Side) -> tuple[int, set[int]]:
    n_g = max(len(gold.names), 1)
    unary, edges, bound = _problem(pred, gold)
    if not unary and not edges:
        return 0, set()
    if not edges:
        chosen = _assignment(n_g, unary)
    else:
        try:
            chosen = _branch_and_bound(n_g, unary, edges, bound, _BNB_NODE_LIMIT)
        except _BudgetExceededError:
            # The linear relaxation is usually integral; its rounding is optimal when it reaches the LP bound.
            chosen, relaxed = _highs(n_g, unary, edges, integer=False)
            if _evaluate(chosen, unary, edges) < int(relaxed + 1e-6):
                chosen, _ = _highs(n_g, unary, edges, integer=True)
    return _evaluate(chosen, unary, edges), chosen


def smatch_match(
    pred_triples: Sequence[Triple], gold_triples: Sequence[Triple]
) -> tuple[int, int, int, dict[str, str]]:
    """The exact Smatch match between two triple lists.

    A triple ``(role, source, target)`` is an instance triple when ``role`` is ``instance``; its ``source`` is a
    variable. Any other triple whose target is a variable (and whose role is not ``TOP``) is a relation triple; the
    rest are attribute triples. Roles and constants compare case-insensitively.

    Args:
        pred_triples: the predicted graph's triples (see :func:`smatch_triples`).
        gold_triples: the gold graph's triples.

    Returns:
        ``(matched, n_pred, n_gold, mapping)``: the maximum number of matched triples over one-to-one variable
        mappings, the triple counts, and an optimal mapping ``{predicted variable: gold variable}`` (unmapped
        predicted variables are absent).

    >>> p = [("instance", "a", "dog"), ("TOP", "a", "top")]
    >>> g = [("instance", "x", "cat"), ("instance", "y", "dog"), ("TOP", "y", "top")]
    >>> smatch_match(p, g)
    (2, 2, 3, {'a': 'y'})
    """
    pred, gold = _Side(pred_triples), _Side(gold_triples)
    matched, chosen = _solve(pred, gold)
    n_g = max(len(gold.names), 1)
    mapping = {pred.names[a // n_g]: gold.names[a % n_g] for a in sorted(chosen)}
    return matched, pred.n_triples, gold.n_triples, mapping


# ------------------------------------------------------------------------------------------------------------ metric
def _pair_stats(prediction: Any, reference: Any, label: str = "") -> tuple[int, int, int]:
    pred = smatch_triples(prediction, label=f"<prediction{label}>")
    gold = smatch_triples(reference, label=f"<reference{label}>")
    matched, n_pred, n_gold, _ = smatch_match(pred, gold)
    return matched, n_pred, n_gold


def _batch_stats(predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
    rows = [_pair_stats(p, r, f"[{i}]") for i, (p, r) in enumerate(zip(predictions, references))]
    return np.asarray(rows, dtype=np.float64).reshape(-1, 3)


Smatch = stats_metric(
    batch_stats=_batch_stats,
    normalizer="f1",
    name="smatch",
    doc=(
        "Smatch (Cai & Knight, 2013) with the exact optimal variable mapping.\n\n"
        "Per pair the statistics are (matched triples, predicted triples, gold triples), so ``precision`` = "
        "matched / predicted, ``recall`` = matched / gold and ``f1`` = 2 matched / (predicted + gold) over the summed "
        "counts (micro, as the smatch tool scores a file); ``macro_f1`` averages the per-pair F1. Predictions and "
        "references are PENMAN strings, ``penman.Tree`` / ``penman.Graph`` objects or triple lists."
    ),
)
Smatch.__name__ = Smatch.__qualname__ = "Smatch"
Smatch.__module__ = __name__


def score_files(
    gold_path: str | Path, pred_path: str | Path, progress: bool | Callable[[int, int], None] = False
) -> dict[str, float]:
    """Corpus Smatch of two PENMAN files, graph by graph, micro-averaged as the ``smatch`` tool does.

    Args:
        gold_path: the gold graphs (blank-line separated, ``#`` comment lines skipped).
        pred_path: the predicted graphs, in the same order.
        progress: print a progress count to standard error, or a callback ``(done, total)``.

    Returns:
        ``{"precision", "recall", "f1"}`` as floats (0.0 when either file has no triples).

    Raises:
        InputFormatError: an unparsable graph, or files with different numbers of graphs.
    """
    gold = read_penman(gold_path)
    pred = read_penman(pred_path)
    if len(gold) != len(pred):
        raise InputFormatError(
            str(pred_path),
            None,
            f"the predicted file has {len(pred)} graphs but the gold file {gold_path} has {len(gold)}; "
            "expected one predicted graph per gold graph, in the same order",
        )
    matched = n_pred = n_gold = 0
    for k, ((p_line, p_tree), (g_line, g_tree)) in enumerate(zip(pred, gold), start=1):
        m, p, g, _ = smatch_match(
            _tree_triples(p_tree, str(pred_path), p_line), _tree_triples(g_tree, str(gold_path), g_line)
        )
        matched, n_pred, n_gold = matched + m, n_pred + p, n_gold + g
        if callable(progress) and (k % 100 == 0 or k == len(gold)):
            progress(k, len(gold))
        elif progress and (k % 100 == 0 or k == len(gold)):
            print(f"smatch: {k}/{len(gold)} graph pairs", file=sys.stderr)
    if n_pred == 0 or n_gold == 0:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    precision, recall = matched / n_pred, matched / n_gold
    f1 = 2 * matched / (n_pred + n_gold)
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}
