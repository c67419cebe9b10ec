r"""Matching similarities: sets, sequences, graphs, latent variables, max-pair.

For collections :math:`X = \{x_i\}` (predicted) and :math:`Y = \{y_j\}` (reference) with inner similarity
:math:`\phi`, a matching similarity is

.. math::

    \Phi(X, Y) = \max_{M \in \mathcal{M}} \sum_{(i, j) \in M} \phi(x_i, y_j)

over the alignments :math:`\mathcal{M}` the constraint allows (Chen et al., "A Unified View of Evaluation Metrics for
Structured Prediction", EMNLP 2023). The solver follows from the constraint and the inner similarity: a discrete
inner similarity under ``1:1`` is a multiset intersection; ``1:*`` / ``*:1`` are row / column maxima; ``*:*`` is a
sum; any other ``1:1`` problem is an assignment problem (``scipy.optimize.linear_sum_assignment``); sequences take
the best monotone alignment; graphs and latent variables are exact integer programs (``scipy.optimize.milp``).

Task modules that set up a latent matching themselves (AMR's Smatch) call its solver here: :func:`solve_latent` (the
best one-to-one mapping of variables under unary and pairwise weights, within :data:`DEFAULT_WORK_LIMIT` work units;
:func:`check_limits` validates a budget, :func:`budget_message` words the :class:`SolverBudgetWarning` when it runs
out).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._budget import check_limits
from metametric_jax._solvers import (
    DEFAULT_WORK_LIMIT,
    LatentSolution,
    SolverBudgetWarning,
    budget_message,
    discrete_stats,
    lcs_dp,
    solve_binary_program,
    solve_gram,
    solve_latent,
    solve_latent_elements,
)
from metametric_jax.composite import Product
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.explain import Match
from metametric_jax.similarity import IDENTITY, Mode, Similarity

__all__ = ["SetMatching", "SequenceMatching", "GraphMatching", "LatentSetMatching", "MaxPair", "as_list"]
# the exact latent matching and its work budget, for task modules that set up the problem themselves (AMR's Smatch)
__all__ += ["solve_latent", "LatentSolution", "DEFAULT_WORK_LIMIT", "check_limits", "budget_message"]
__all__ += ["SolverBudgetWarning"]


def as_list(x: Any, what: str) -> list[Any]:
    """A collection as a list; strings, bytes and non-collections raise TypeError."""
    if isinstance(x, (str, bytes, Mapping)) or not isinstance(x, Collection):
        raise TypeError(
            f"{what} expects a collection of items (list, tuple, set, frozenset, ...); found {type(x).__name__}."
        )
    return list(x)


def _children(inner: Similarity, xs: list, ys: list, pairs: list, g: np.ndarray, px: str, py: str, mode: Mode):
    out: list[Match] = []
    for i, j in pairs:
        qx, qy = f"{px}[{i}]", f"{py}[{j}]"
        out.append(Match(qx, qy, xs[i], ys[j], float(g[i, j])))
        out.extend(inner.explain_matches(xs[i], ys[j], qx, qy, mode))
    return out


class SetMatching(Similarity):
    """Matching of two collections under a constraint (see module docstring).

    Args:
        inner: the similarity of elements.
        constraint: ``<->``/``1:1`` (default), ``->``/``1:*``, ``<-``/``*:1`` or ``~``/``*:*``.
    """

    def __init__(self, inner: Similarity, constraint: str | Constraint = "<->") -> None:
        self.inner = inner
        self.constraint = parse_constraint(constraint)
        self.name = f"set[{inner.name}, {self.constraint.value}]"

    def _keys(self, *sides: list) -> list[list] | None:
        """Hashable keys of the items of every side (one key function for all sides), or ``None``."""
        key = self.inner.discrete_key
        if key is None:
            return None
        for xs in sides:
            self.inner.check(xs)
        if isinstance(self.inner, Product):
            if key is IDENTITY and any(type(x) is not self.inner.cls for xs in sides for x in xs):
                key = self.inner.field_key  # subclass instances: dataclass equality would demand the exact class
        out = [xs if key is IDENTITY else [key(x) for x in xs] for xs in sides]
        try:
            for keys in out:
                for k in keys:
                    hash(k)
        except TypeError:
            return None
        return out

    def _stats(self, xs: list, ys: list, with_self: bool) -> tuple[float, float, float]:
        keys = self._keys(xs, ys)
        if keys is not None:
            return discrete_stats(keys[0], keys[1], self.constraint)
        xy, _ = solve_gram(self.inner.gram(xs, ys, "pr"), self.constraint)
        if not with_self:
            return xy, 0.0, 0.0
        return xy, self._self(xs, "p"), self._self(ys, "r")

    def _self(self, xs: list, side: str) -> float:
        if self.constraint is Constraint.MANY_TO_MANY:
            return float(self.inner.gram(xs, xs, side + side).sum())
        keys = self._keys(xs)
        if keys is not None:
            return discrete_stats(keys[0], keys[0], self.constraint)[1]
        if self.inner.self_bounded:  # the identity alignment is optimal (see Similarity.self_bounded)
            return float(self.inner.self_scores(xs, side).sum())
        return solve_gram(self.inner.gram(xs, xs, side + side), self.constraint)[0]

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        if mode == "pr":
            return self._stats(xs, ys, False)[0]
        keys = self._keys(xs, ys)
        if keys is not None:
            return discrete_stats(keys[0], keys[1], self.constraint)[0]
        return solve_gram(self.inner.gram(xs, ys, mode), self.constraint)[0]

    def self_score(self, x: Any, side: str = "p") -> float:
        return self._self(as_list(x, self.name), side)

    def check(self, values: Sequence[Any]) -> None:
        self.inner.check([item for v in values for item in as_list(v, self.name)])

    @property
    def self_bounded(self) -> bool:
        # under 1:1 a matching of X with Y is at most the identity self-matching of either side
        return self.constraint is Constraint.ONE_TO_ONE and self.inner.self_bounded

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        if self.inner.discrete_key is IDENTITY and self.constraint is Constraint.ONE_TO_ONE:
            fast = self._identity_batch_stats(predictions, references)
            if fast is not None:
                return fast
        out = np.empty((len(predictions), 3), dtype=np.float64)
        for i, (p, r) in enumerate(zip(predictions, references)):
            out[i] = self._stats(as_list(p, self.name), as_list(r, self.name), True)
        return out

    def _identity_batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray | None:
        """1:1 matching of hashable items compared by equality: set intersections, no matrices (``None``: not so)."""
        cls = self.inner.cls if isinstance(self.inner, Product) else None
        try:
            containers = set(map(type, predictions)) | set(map(type, references))
            if any(issubclass(t, (str, bytes, Mapping)) for t in containers):
                return None
            items = list(itertools.chain.from_iterable(predictions))
            items.extend(itertools.chain.from_iterable(references))
            if cls is not None:
                if not set(map(type, items)) <= {cls}:
                    return None  # subclass instances (or wrong types): the general path compares or refuses them
                if self.inner.unchecked(items):  # type: ignore[attr-defined]  # checked when built: marks, if any
                    self.inner.check_fields(items)  # type: ignore[attr-defined]  # leaf types, as every path checks
            else:
                self.inner.check(items)
            rows: list[tuple[float, float, float]] = []
            for p, r in zip(predictions, references):
                sp, sr = set(p), set(r)
                np_, nr = len(p), len(r)
                if len(sp) == np_ and len(sr) == nr:
                    rows.append((len(sp & sr), np_, nr))
                else:
                    rows.append(discrete_stats(list(p), list(r), self.constraint))
        except TypeError:  # unhashable items or not collections: the general path raises a clear error if needed
            return None
        return np.array(rows, dtype=np.float64).reshape(-1, 3)

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        g = self.inner.gram(xs, ys, mode)
        _, pairs = solve_gram(g, self.constraint, want_pairs=True)
        return _children(self.inner, xs, ys, pairs, g, px, py, mode)


class SequenceMatching(Similarity):
    """Best monotone (order-preserving, one-to-one) alignment of two sequences.

    With a discrete inner similarity this is the length of the longest common subsequence.

    Args:
        inner: the similarity of elements.
    """

    def __init__(self, inner: Similarity) -> None:
        self.inner = inner
        self.name = f"sequence[{inner.name}]"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        return lcs_dp(self.inner.gram(xs, ys, mode))[0]

    @property
    def self_bounded(self) -> bool:
        return self.inner.self_bounded

    def self_score(self, x: Any, side: str = "p") -> float:
        xs = as_list(x, self.name)
        if self.inner.discrete_key is not None:
            self.inner.check(xs)
            return float(len(xs))
        if self.inner.self_bounded:
            return float(self.inner.self_scores(xs, side).sum())
        return lcs_dp(self.inner.gram(xs, xs, side + side))[0]

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        g = self.inner.gram(xs, ys, mode)
        return _children(self.inner, xs, ys, lcs_dp(g)[1], g, px, py, mode)


def _graph_parts(g: Any, what: str) -> tuple[list[Any], np.ndarray]:
    """Nodes and the reachability matrix of a graph.

    A graph is an object with ``nodes`` (a sequence, or a method returning one) and either ``edges`` (pairs of node
    indices) or a ``successors(node)`` method.
    """
    nodes_attr = getattr(g, "nodes", None)
    if nodes_attr is None:
        raise TypeError(f"{what} expects a graph with `nodes` and `edges` (or `successors`); found {type(g).__name__}.")
    nodes = list(nodes_attr() if callable(nodes_attr) else nodes_attr)
    n = len(nodes)
    adj = np.zeros((n, n), dtype=bool)
    edges = getattr(g, "edges", None)
    if edges is not None:
        for a, b in edges() if callable(edges) else edges:
            adj[int(a), int(b)] = True
    elif hasattr(g, "successors"):
        index = {id(v): i for i, v in enumerate(nodes)}
        for i, v in enumerate(nodes):
            for w in g.successors(v):
                adj[i, index[id(w)]] = True
    else:
        raise TypeError(f"{what} expects a graph with `edges` or `successors`; found {type(g).__name__}.")
    reach = adj.copy()
    for k in range(n):  # transitive closure (Warshall), one NumPy outer product per node
        reach |= reach[:, k : k + 1] & reach[k : k + 1, :]
    return nodes, reach


class GraphMatching(Similarity):
    """Matching of the nodes of two graphs that preserves reachability.

    For matched pairs ``(u, v)`` and ``(u', v')``, ``u`` reaches ``u'`` iff ``v`` reaches ``v'``. Solved exactly as
    an integer program within a budget of ``work_limit`` work units per pair of graphs, counted in the solver's own
    steps (branch-and-bound nodes), not seconds, so a score never depends on the machine or its load; when the budget
    runs out, the best matching found is used and a ``SolverBudgetWarning`` is issued.

    Args:
        inner: the similarity of nodes.
        constraint: the node matching constraint (default ``1:1``).
        work_limit: work units per pair of graphs (``None``: exact however long it takes; see
            :mod:`metametric_jax._budget`).
        time_limit: an extra wall-clock cap in seconds per pair (default ``None``); a score it stops depends on the
            machine and its load, and the warning says so.
    """

    def __init__(
        self,
        inner: Similarity,
        constraint: str | Constraint = "<->",
        *,
        work_limit: int | None = DEFAULT_WORK_LIMIT,
        time_limit: float | None = None,
    ) -> None:
        self.inner = inner
        self.constraint = parse_constraint(constraint)
        self.work_limit, self.time_limit = check_limits(work_limit, time_limit, "GraphMatching")
        self.name = f"graph[{inner.name}, {self.constraint.value}]"

    def _solve(self, x: Any, y: Any, mode: Mode) -> tuple[float, list[tuple[int, int]], np.ndarray, list, list]:
        xs, rx = _graph_parts(x, self.name)
        ys, ry = _graph_parts(y, self.name)
        g = self.inner.gram(xs, ys, mode)
        cand = [(int(i), int(j)) for i, j in zip(*np.nonzero(g > 0))]
        w = np.array([g[i, j] for i, j in cand], dtype=np.float64)
        rows: list[list[int]] = []
        if self.constraint in (Constraint.ONE_TO_ONE, Constraint.ONE_TO_MANY):
            by_i: dict[int, list[int]] = {}
            for k, (i, _) in enumerate(cand):
                by_i.setdefault(i, []).append(k)
            rows += list(by_i.values())
        if self.constraint in (Constraint.ONE_TO_ONE, Constraint.MANY_TO_ONE):
            by_j: dict[int, list[int]] = {}
            for k, (_, j) in enumerate(cand):
                by_j.setdefault(j, []).append(k)
            rows += list(by_j.values())
        for a in range(len(cand)):
            i0, j0 = cand[a]
            for b in range(a + 1, len(cand)):
                i1, j1 = cand[b]
                if i0 == i1 or j0 == j1:
                    continue
                if rx[i0, i1] != ry[j0, j1] or rx[i1, i0] != ry[j1, j0]:
                    rows.append([a, b])
        total, z, _, _ = solve_binary_program(
            w, rows, work_limit=self.work_limit, time_limit=self.time_limit, what="graph matching"
        )
        pairs = [cand[k] for k in np.nonzero(z > 0.5)[0]]
        return total, pairs, g, xs, ys

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self._solve(x, y, mode)[0]

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        _, pairs, g, xs, ys = self._solve(x, y, mode)
        return _children(
            self.inner, xs, ys, pairs, g, f"{px}.nodes" if px else "nodes", f"{py}.nodes" if py else "nodes", mode
        )


class LatentSetMatching(Similarity):
    r"""Matching of collections whose elements carry latent :class:`~metametric_jax.Variable` s (Smatch-style).

    Elements and variables are matched jointly: a predicted element may be aligned to a reference element only if
    their variables are aligned too, and variables are aligned one-to-one:

    .. math::

        \max \sum_{ij} \phi(x_i, y_j) z_{ij} \quad \text{s.t.} \quad z_{ij} \le b_{uv} \ \forall (u, v) \in
        B(x_i, y_j), \quad \sum_v b_{uv} \le 1, \quad \sum_u b_{uv} \le 1

    plus the element constraint. Element similarities treat variables as equal; :math:`B(x, y)` are the variable
    pairs the alignment of ``x`` with ``y`` requires (Cai and Knight, "Smatch", ACL 2013). When elements equal up to
    their variables match with one weight (discrete fields, as Smatch's triples), this is the problem AMR's Smatch
    solves, by the same exact solver and budget (:func:`metametric_jax._solvers.solve_latent_elements`). Other
    similarities are solved as an integer program over element and variable pairs, within the same budget. The budget
    counts work (search moves, branch-and-bound nodes), not seconds, so a score never depends on the machine or its
    load. When it runs out, the best mapping found is used and a ``SolverBudgetWarning`` is issued.

    Args:
        inner: the similarity of elements (with variable fields).
        constraint: the element matching constraint (default ``1:1``).
        work_limit: work units per problem past the solver's quick certificates of optimality (``None``: unbounded;
            see :mod:`metametric_jax._budget`).
        time_limit: an extra wall-clock cap in seconds per problem (default ``None``); a score it stops depends on
            the machine and its load, and the warning says so.
    """

    def __init__(
        self,
        inner: Similarity,
        constraint: str | Constraint = "<->",
        *,
        work_limit: int | None = DEFAULT_WORK_LIMIT,
        time_limit: float | None = None,
    ) -> None:
        self.inner = inner
        self.constraint = parse_constraint(constraint)
        self.work_limit, self.time_limit = check_limits(work_limit, time_limit, "LatentSetMatching")
        self.name = f"latent[{inner.name}, {self.constraint.value}]"

    def _solve(
        self, xs: list, ys: list, mode: Mode, g: np.ndarray | None = None
    ) -> tuple[float, list[tuple[int, int]], np.ndarray]:
        g = self.inner.gram(xs, ys, mode) if g is None else g
        total, pairs, _ = solve_latent_elements(
            g,
            lambda i, j: self.inner.bindings(xs[i], ys[j]),
            self.constraint,
            work_limit=self.work_limit,
            time_limit=self.time_limit,
        )
        return total, pairs, g

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self._solve(as_list(x, self.name), as_list(y, self.name), mode)[0]

    def self_score(self, x: Any, side: str = "p") -> float:
        xs = as_list(x, self.name)
        g = self.inner.gram(xs, xs, side + side)
        diag = np.diag(g) if g.size else np.zeros(0)
        if g.size == 0 or (self.constraint is Constraint.ONE_TO_ONE and np.all(diag >= g.max(axis=1))):
            return float(diag.sum())  # the identity alignment reaches the row-maximum bound
        # the identity alignment is feasible: a search stopped by the budget never scores below it
        return max(self._solve(xs, xs, side + side, g)[0], float(diag.sum()))

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        _, pairs, g = self._solve(xs, ys, mode)
        return _children(self.inner, xs, ys, pairs, g, px, py, mode)


class MaxPair(Similarity):
    r"""The best single pair: :math:`\max_{i,j} \phi(x_i, y_j)` (0 if either collection is empty).

    Args:
        inner: the similarity of elements.
    """

    def __init__(self, inner: Similarity) -> None:
        self.inner = inner
        self.name = f"max_pair[{inner.name}]"

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        g = self.inner.gram(as_list(x, self.name), as_list(y, self.name), mode)
        return float(g.max()) if g.size else 0.0

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        xs, ys = as_list(x, self.name), as_list(y, self.name)
        g = self.inner.gram(xs, ys, mode)
        if g.size == 0 or g.max() <= 0:
            return []
        i, j = np.unravel_index(int(g.argmax()), g.shape)
        return _children(self.inner, xs, ys, [(int(i), int(j))], g, px, py, mode)
