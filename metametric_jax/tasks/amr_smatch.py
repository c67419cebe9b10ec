r"""Smatch's triples of an AMR graph and their exact best match: the problem behind :mod:`metametric_jax.tasks.amr`.

:func:`smatch_triples` reads a graph (PENMAN text, ``penman.Tree`` / ``penman.Graph``, or a triple list) into the
triples of the ``smatch`` package (version 1.0.4, with the differences :mod:`metametric_jax.tasks.amr` lists);
:func:`smatch_match` finds the best one-to-one mapping of predicted onto reference variables
(:func:`metametric_jax.matching.solve_latent`, within a work budget) and returns a :class:`SmatchAlignment`. Both are
re-exported by :mod:`metametric_jax.tasks.amr`, whose accumulator, scorers and readers use them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

import penman

from metametric_jax.errors import InputFormatError
from metametric_jax.matching import DEFAULT_WORK_LIMIT, solve_latent
from metametric_jax.tasks.readers.penman import parse_tree, strip_alignments

__all__ = ["INSTANCE", "TOP", "Triple", "SmatchAlignment", "smatch_triples", "smatch_match"]

Triple = tuple[str, str, str]

INSTANCE = "instance"
TOP = "TOP"
_NOT_INVERTED = frozenset({"consist-of", "prep-on-behalf-of", "prep-out-of"})


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


def _tree_triples(tree: Any, path: str, line: int | None, keep_alignments: bool = False) -> list[Triple]:
    if not keep_alignments:
        tree = strip_alignments(tree)
    nodes = _preorder(tree)
    concepts: dict[str, str] = {}
    for var, branches in nodes:
        if var is None:  # penman reads '()' as a node without a variable or branches
            raise InputFormatError(path, line, _empty_node(nodes, branches))
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


def _empty_node(nodes: list[tuple[str, list[tuple[str, Any]]]], branches: list[tuple[str, Any]]) -> str:
    """The message for the empty node ``()`` whose branches list is ``branches``: the graph itself or a role's value."""
    expected = "expected '(variable / concept ...)'"
    if branches is nodes[0][1]:
        return f"{expected}; found an empty graph '()'"
    for var, outer in nodes:
        for role, target in outer:
            if isinstance(target, tuple) and target[1] is branches:
                return f"{expected} as the value of role {role!r} of variable {var!r}; found an empty node '()'"
    return f"{expected}; found an empty node '()'"


def _check_triples(graph: Sequence[Any], label: str) -> list[Triple]:
    out = []
    for k, t in enumerate(graph):
        if not (isinstance(t, (tuple, list)) and len(t) == 3 and all(isinstance(x, str) for x in t)):
            raise TypeError(
                f"{label}: a triple list must hold (role, source, target) string triples; item {k} is {t!r}."
            )
        out.append((t[0], t[1], t[2]))
    return out


def smatch_triples(graph: Any, *, label: str = "<graph>", keep_alignments: bool = False) -> list[Triple]:
    """The triples Smatch compares, with the graph's own variable names.

    Args:
        graph: a PENMAN string, a ``penman.Tree``, a ``penman.Graph``, or a list of ``(role, source, target)`` triples
            (returned as a list of tuples).
        label: names the graph in error messages (the ``path`` of an :class:`InputFormatError`).
        keep_alignments: keep alignment markers (``~e.8``) as part of concepts, roles and constants; by default
            they are removed (triple lists are returned as given).

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
        return _tree_triples(parse_tree(graph, label, 1), label, 1, keep_alignments)
    if isinstance(graph, (list, tuple)):
        return _check_triples(graph, label)
    module = type(graph).__module__ or ""
    if module.startswith("penman"):
        if isinstance(graph, penman.Tree):
            return _tree_triples(graph, label, None, keep_alignments)
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


class SmatchAlignment(NamedTuple):
    """The result of :func:`smatch_match`.

    Attributes:
        matched: the number of matched triples under ``mapping``.
        predicted: the number of predicted triples.
        reference: the number of reference triples.
        mapping: ``{predicted variable: reference variable}`` (unmapped predicted variables are absent).
        optimal: whether ``matched`` is proven to be the maximum (False only when the budget ran out).
        upper_bound: an upper bound on the maximum (``matched`` when optimal).
        timed_out: whether the wall-clock cap stopped the search (then ``matched`` depends on the machine).
    """

    matched: int
    predicted: int
    reference: int
    mapping: dict[str, str]
    optimal: bool
    upper_bound: int
    timed_out: bool = False


def smatch_match(
    predicted: Sequence[Triple],
    reference: Sequence[Triple],
    *,
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> SmatchAlignment:
    """The Smatch match between two triple lists, exact unless the work budget runs out.

    A triple ``(role, source, target)`` is an instance triple when ``role`` is ``instance``; its ``source`` is a
    variable. Any other triple whose target is a variable (and whose role is not ``TOP``) is a relation triple; the
    rest are attribute triples. Roles and constants compare case-insensitively; identical triples match at most once
    per copy.

    Args:
        predicted: the predicted graph's triples (see :func:`smatch_triples`).
        reference: the reference graph's triples.
        work_limit: work units for the search past the quick certificates of optimality (``None``: unbounded).
        time_limit: an extra wall-clock cap in seconds (default ``None``); a result it stops is not reproducible.

    Returns:
        A :class:`SmatchAlignment` (a named tuple starting ``matched, predicted, reference, mapping``).

    >>> p = [("instance", "a", "dog"), ("TOP", "a", "top")]
    >>> g = [("instance", "x", "cat"), ("instance", "y", "dog"), ("TOP", "y", "top")]
    >>> smatch_match(p, g)[:4]
    (2, 2, 3, {'a': 'y'})
    """
    pred, gold = _Side(predicted), _Side(reference)
    unary, edges, _ = _problem(pred, gold)
    solution = solve_latent(
        len(pred.names), len(gold.names), unary, edges, work_limit=work_limit, time_limit=time_limit
    )
    mapping = {pred.names[u]: gold.names[v] for u, v in solution.mapping.items()}
    matched, bound = int(round(solution.value)), int(round(solution.upper_bound))
    return SmatchAlignment(
        matched, pred.n_triples, gold.n_triples, mapping, solution.optimal, bound, solution.timed_out
    )
