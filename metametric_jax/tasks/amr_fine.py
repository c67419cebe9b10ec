r"""The fine-grained AMR scores of Damonte, Cohen and Satta (2017), computed exactly.

Damonte, Cohen and Satta, "An Incremental Parser for Abstract Meaning Representation" (EACL 2017) break Smatch into
figures that each look at one aspect of a parse; their ``amr-evaluation`` scripts (github.com/mdtux89/amr-evaluation,
``evaluation.sh``) compute them. Each figure is a precision / recall / F1 over counts summed across the corpus,

.. math::

    P = \frac{\sum_i \mathrm{match}_i}{\sum_i |A(P_i)|}, \quad R = \frac{\sum_i \mathrm{match}_i}{\sum_i |A(G_i)|},
    \quad F_1 = \frac{2 \sum_i \mathrm{match}_i}{\sum_i |A(P_i)| + \sum_i |A(G_i)|},

where :math:`A` extracts the aspect from a graph and :math:`\mathrm{match}` is either the multiset intersection of
strings (no variables involved) or the Smatch match of two triple sets under the best one-to-one variable mapping,
solved exactly (within the work budget of :func:`metametric_jax.tasks.amr.smatch_match`):

* ``unlabeled`` — Smatch with every role replaced by one label;
* ``no_wsd`` — Smatch with the sense suffix of concepts made equal (``go-02`` reads ``go-01``);
* ``concepts`` — the multiset of concepts;
* ``named_entities`` — the concepts of variables with a ``:name`` role;
* ``negations`` — the concepts of variables with a ``:polarity`` role;
* ``wikification`` — the ``:wiki`` values;
* ``reentrancies`` — Smatch of the subgraphs made of the relations into reentrant variables (two or more incoming
  relations) and the variables they touch;
* ``srl`` — Smatch of the subgraphs made of the ``:ARGn`` roles and the variables they touch.

Two readings of these definitions are offered (``fine_grained=`` of :func:`metametric_jax.tasks.amr.score`,
``--fine-grained-mode`` of ``score amr``).

**"amr-evaluation" (the default)** reproduces the definitions of the amr-evaluation scripts (commit 8bc6b2e), with the
exact optimum where they hill-climb (5 starts): wherever their search reaches the optimum, every count is theirs. A
graph is read as their (older) Smatch reader reads its text (:func:`evaluation_graph`):

* triples are ``("instance", var, concept)``, then attributes ``(role, var, constant)`` with
  ``("TOP", root, root's concept)`` among them, then relations ``(role, var1, var2)``;
* an inverse role ``:X-of`` leading to a nested node, or written last in its node (before ``)``) with a variable, is
  stored as ``(X, var2, var1)`` (``:consist-of`` too); written before another role of its node, it is kept as
  written (``(X-of, var1, var2)``); ``:mod`` is kept as it is (no ``:domain``);
* a quoted constant reads as its first word with ``_`` where its closing quote was (``"Paris"`` is ``Paris_``,
  ``"New York"`` is ``New``); concepts and constants compare case-insensitively with trailing ``_`` removed in the
  Smatch-based figures; a triple repeated within a graph matches once per copy on the other side (so a match may
  exceed the number of triples, as in the scripts);
* ``unlabeled`` rewrites every ``:word`` of the text as ``:label`` (so ``:ARG0-of`` keeps its written direction);
  ``no_wsd`` rewrites ``/ concept-NN`` as ``/ concept-01``; both keep the TOP triple with the root's concept;
* ``concepts``, ``named_entities``, ``negations``, ``wikification`` compare strings exactly (case-sensitively, as read
  above); the roles are those of the triples after every ``-of`` role is inverted (``:name``, ``:polarity``, ``:wiki``
  exactly);
* ``reentrancies``: per variable (in the order of the graph) with two or more incoming triples (after inverting ``-of``
  roles; attributes count when their value is the variable's name), those triples; ``srl``: the triples whose role
  starts with ``ARG``; each subgraph is read back with its variables' concepts and a ``("TOP", first variable,
  its concept)`` triple, as the scripts read it.

Alignment markers (``~e.8``) are removed first unless ``keep_alignments`` (amr-evaluation keeps them as part of the
strings). The differences from ``amr-evaluation`` left are of text layout: the scripts read a file's text and the
rewrites of ``unlabeled`` and ``no_wsd`` are textual, where we read the graph (a ``/`` followed by other than exactly
one space, or a role split across lines, reads the same here and not there); and they stop on graphs their reader
cannot read.

**"normalized"** reads the graph rather than its layout: triples are smatch 1.0.4's
(:func:`metametric_jax.tasks.amr.smatch_triples`); ``unlabeled`` replaces every role of the normalized triples (so
``:ARG0`` and ``:ARG0-of`` the other way round match); ``reentrancies`` and ``srl`` add no TOP triple; concepts compare
case-insensitively; repeated triples match at most once per copy (the functions :func:`unlabeled`, :func:`no_wsd`,
:func:`concepts`, :func:`named_entities`, :func:`negations`, :func:`wikification`, :func:`reentrancies`, :func:`srl`
and :func:`fine_grained_counts`).

>>> pred = [("instance", "g", "go-02"), ("instance", "b", "boy"), ("TOP", "g", "top"), ("ARG0", "g", "b")]
>>> [t for t in unlabeled(pred) if t[0] == "label"]
[('label', 'g', 'b')]
>>> sorted(concepts(no_wsd(pred)))
['boy', 'go-01']
>>> graph = evaluation_graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))")
>>> graph.attributes, graph.relations
([('TOP', 'w', 'want-01')], [('ARG0', 'w', 'b'), ('ARG1', 'w', 'g'), ('ARG0', 'g', 'b')])
>>> evaluation_reentrancies(graph).triples()  # doctest: +NORMALIZE_WHITESPACE
[('instance', 'w', 'want-01'), ('instance', 'b', 'boy'), ('instance', 'g', 'go-02'), ('TOP', 'w', 'want-01'),
 ('ARG0', 'w', 'b'), ('ARG0', 'g', 'b')]
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

__all__ = [
    "NAMES",
    "MODES",
    "fine_grained_mode",
    "unlabeled",
    "no_wsd",
    "concepts",
    "named_entities",
    "negations",
    "wikification",
    "reentrancies",
    "srl",
    "fine_grained_counts",
    "EvaluationGraph",
    "evaluation_graph",
    "evaluation_reentrancies",
    "evaluation_srl",
    "evaluation_match",
    "amr_evaluation_counts",
]

Triple = tuple[str, str, str]
Match = Callable[[list[Triple], list[Triple]], tuple[int, int, int, bool]]
#: ``solve(n_pred, n_gold, unary, pairwise) -> (value, optimal)``: the best one-to-one partial mapping of predicted
#: onto reference variables (pair ``a = u * n_gold + v``), as :func:`metametric_jax.matching.solve_latent` finds it.
Solve = Callable[[int, int, dict[int, int], dict[tuple[int, int], int]], tuple[int, bool]]

#: The fine-grained scores, in the order amr-evaluation prints them.
NAMES = (
    "unlabeled",
    "no_wsd",
    "concepts",
    "named_entities",
    "negations",
    "wikification",
    "reentrancies",
    "srl",
)

#: The readings of the definitions: amr-evaluation's (the default) and the graph-normalized one.
MODES = ("amr-evaluation", "normalized")


def fine_grained_mode(value: Any, where: str = "fine_grained") -> str | None:
    """The reading asked for by ``fine_grained=``: ``None`` (off), ``"amr-evaluation"`` or ``"normalized"``.

    ``False`` / ``None`` turn the scores off; ``True`` is the default reading, ``"amr-evaluation"``.

    >>> fine_grained_mode(True), fine_grained_mode("normalized"), fine_grained_mode(False)
    ('amr-evaluation', 'normalized', None)
    """
    if value is None or value is False:
        return None
    if value is True:
        return MODES[0]
    if isinstance(value, str) and value in MODES:
        return value
    raise ValueError(
        f"{where}: fine_grained must be True, False, or one of {', '.join(map(repr, MODES))}; found {value!r}."
    )


# ------------------------------------------------------------------------------------------------ normalized reading
_SENSE = re.compile(r"^([A-Za-z0-9-]*[A-Za-z0-9])-\d+$")


def _is_instance(t: Triple) -> bool:
    return t[0].lower() == "instance"


def _is_top(t: Triple) -> bool:
    return t[0].lower() == "top"


def _concept_of(triples: Sequence[Triple]) -> dict[str, str]:
    return {s: c for r, s, c in triples if r.lower() == "instance"}


def unlabeled(triples: Sequence[Triple]) -> list[Triple]:
    """Every relation and attribute role replaced by ``label`` (instance and TOP triples kept)."""
    return [t if _is_instance(t) or _is_top(t) else ("label", t[1], t[2]) for t in triples]


def no_wsd(triples: Sequence[Triple]) -> list[Triple]:
    """Concepts with a sense suffix (``-NN``) read with sense ``-01``."""
    return [(r, s, _SENSE.sub(r"\1-01", c)) if r.lower() == "instance" else (r, s, c) for r, s, c in triples]


def concepts(triples: Sequence[Triple]) -> list[str]:
    """The concepts of the graph's variables (lower-cased)."""
    return [c.lower() for r, _, c in triples if r.lower() == "instance"]


def _concepts_with_role(triples: Sequence[Triple], role: str) -> list[str]:
    concept = _concept_of(triples)
    return [concept[s].lower() for r, s, _ in triples if r.lower() == role and s in concept]


def named_entities(triples: Sequence[Triple]) -> list[str]:
    """The concepts of variables with a ``:name`` role, once per such role."""
    return _concepts_with_role(triples, "name")


def negations(triples: Sequence[Triple]) -> list[str]:
    """The concepts of variables with a ``:polarity`` role, once per such role."""
    return _concepts_with_role(triples, "polarity")


def wikification(triples: Sequence[Triple]) -> list[str]:
    """The values of ``:wiki`` roles (lower-cased)."""
    return [t.lower() for r, _, t in triples if r.lower() == "wiki"]


def _with_instances(triples: Sequence[Triple], chosen: list[Triple]) -> list[Triple]:
    concept = _concept_of(triples)
    involved = {x for _, s, t in chosen for x in (s, t) if x in concept}
    return [t for t in triples if _is_instance(t) and t[1] in involved] + chosen


def reentrancies(triples: Sequence[Triple]) -> list[Triple]:
    """The relations into variables with two or more incoming relations, with the instances of their variables."""
    concept = _concept_of(triples)
    relations = [t for t in triples if not _is_instance(t) and not _is_top(t) and t[2] in concept]
    incoming = Counter(t[2] for t in relations)
    return _with_instances(triples, [t for t in relations if incoming[t[2]] > 1])


def srl(triples: Sequence[Triple]) -> list[Triple]:
    """The ``:ARGn`` roles (relations and attributes), with the instances of the variables they touch."""
    return _with_instances(triples, [t for t in triples if t[0].lower().startswith("arg")])


_MATCHED = {"unlabeled": unlabeled, "no_wsd": no_wsd, "reentrancies": reentrancies, "srl": srl}
_COUNTED = {
    "concepts": concepts,
    "named_entities": named_entities,
    "negations": negations,
    "wikification": wikification,
}


def _intersection(pred: Sequence[str], gold: Sequence[str]) -> tuple[int, int, int, bool]:
    p, g = Counter(pred), Counter(gold)
    return sum((p & g).values()), len(pred), len(gold), True


def fine_grained_counts(
    predicted: Sequence[Triple], reference: Sequence[Triple], match: Match
) -> dict[str, tuple[int, int, int, bool]]:
    """``{name: (matched, predicted, reference, optimal)}`` for every name of :data:`NAMES`, normalized reading.

    Args:
        predicted: the predicted graph's Smatch triples.
        reference: the reference graph's Smatch triples.
        match: ``match(pred_triples, gold_triples) -> (matched, n_pred, n_gold, optimal)``, the Smatch matcher.
    """
    out: dict[str, tuple[int, int, int, bool]] = {}
    for name in NAMES:
        if name in _MATCHED:
            view = _MATCHED[name]
            out[name] = match(view(predicted), view(reference))
        else:
            out[name] = _intersection(_COUNTED[name](predicted), _COUNTED[name](reference))
    return out


# -------------------------------------------------------------------------------------------- amr-evaluation reading
_RELABEL = re.compile(r":[a-zA-Z0-9-]*")
_SENSE_TEXT = re.compile(r"(/ [a-zA-Z0-9\-][a-zA-Z0-9\-]*)-[0-9][0-9]*")


class EvaluationGraph(NamedTuple):
    """A graph as amr-evaluation reads it (see the module docstring).

    Attributes:
        variables: the variables, in the order they appear (the first is the root).
        concepts: ``{variable: concept}``.
        attributes: ``(role, variable, constant)`` triples, ``("TOP", root, root's concept)`` among them.
        relations: ``(role, variable, variable)`` triples.
    """

    variables: list[str]
    concepts: dict[str, str]
    attributes: list[Triple]
    relations: list[Triple]

    def triples(self) -> list[Triple]:
        """Instance triples, then attributes, then relations: the triples Smatch compares."""
        return [("instance", v, self.concepts[v]) for v in self.variables] + self.attributes + self.relations


def _quoted_text(raw: str, keep_spaces: bool) -> str:
    # The reader drops quotes and marks a closing quote with "_"; it skips spaces except after a role.
    out, quoted = [], False
    for c in raw:
        if c == '"':
            if quoted:
                out.append("_")
            quoted = not quoted
        elif keep_spaces or c != " ":
            out.append(c)
    return "".join(out)


def _constant(raw: str) -> str:
    words = _quoted_text(raw, True).split()
    return words[0] if words else ""


def _tree_node(graph: Any) -> tuple[str, list[tuple[str, Any]]]:
    if isinstance(graph, str):
        from metametric_jax.tasks.readers.penman import parse_tree

        return parse_tree(graph, "<graph>", 1).node
    node = getattr(graph, "node", graph)
    if not (isinstance(node, tuple) and len(node) == 2 and isinstance(node[0], str)):
        raise TypeError(f"expected a PENMAN string or a penman.Tree; found {type(graph).__name__}.")
    return node


def evaluation_graph(graph: Any, *, relabel: bool = False, no_sense: bool = False) -> EvaluationGraph:
    """A graph (PENMAN string or ``penman.Tree``) as amr-evaluation reads its text.

    Args:
        graph: the graph, as written (branch order and ``-of`` roles matter).
        relabel: read it after rewriting every ``:word`` as ``:label`` (the ``unlabeled`` score).
        no_sense: read it after rewriting ``/ concept-NN`` as ``/ concept-01`` (the ``no_wsd`` score).

    >>> graph = evaluation_graph('(a / and :op1 (p / person :ARG0-of b :mod (b / big)) :op2 p :op3 "New York")')
    >>> graph.attributes
    [('op3', 'a', 'New'), ('TOP', 'a', 'and')]
    >>> graph.relations
    [('op1', 'a', 'p'), ('op2', 'a', 'p'), ('mod', 'p', 'b'), ('ARG0-of', 'p', 'b')]
    """

    def text(raw: str) -> str:
        if relabel:
            raw = _RELABEL.sub(":label", raw)
        if no_sense:
            raw = _SENSE_TEXT.sub(r"\1-01", raw)
        return raw

    root, root_branches = _tree_node(graph)
    order, seen = [root], {root}
    concept: dict[str, str] = {}
    first: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)  # relations known when read
    later: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)  # constants or variables not yet seen
    stack: list[tuple[str, list[tuple[str, Any]], int]] = [(root, root_branches, 0)]
    while stack:
        var, branches, k = stack.pop()
        if k == len(branches):
            continue
        stack.append((var, branches, k + 1))
        role, target = branches[k]
        if role == "/":
            concept[var] = _quoted_text(text("/ " + target)[2:] if no_sense else text(target), False)
            continue
        name = text(role if role.startswith(":") else ":" + role)[1:].strip()
        if isinstance(target, tuple):
            child, child_branches = target
            order.append(child)
            seen.add(child)
            if name.endswith("-of"):
                first[child].append((name[:-3], var))
            else:
                first[var].append((name, child))
            stack.append((child, child_branches, 0))
            continue
        value = _constant(text(target))
        if k == len(branches) - 1 and name.endswith("-of"):
            first[value].append((name[:-3], var))  # kept only where the value is a variable
        elif value in seen:
            first[var].append((name, value))
        else:
            later[var].append((name, value))
    variables = set(order)
    attributes: list[Triple] = []
    relations: list[Triple] = []
    for var in order:
        relations.extend((name, var, value) for name, value in first.get(var, ()))
        relations.extend((name, var, value) for name, value in later.get(var, ()) if value in variables)
        attributes.extend((name, var, value) for name, value in later.get(var, ()) if value not in variables)
        if var == root:
            attributes.append(("TOP", root, concept.get(root, "")))
    return EvaluationGraph(order, {v: concept.get(v, "") for v in order}, attributes, relations)


def _inverted(graph: EvaluationGraph) -> list[Triple]:
    """Attributes then relations, every ``X-of`` role read as ``X`` the other way round (the scores' triples)."""
    return [(r[:-3], t, s) if r.endswith("-of") else (r, s, t) for r, s, t in graph.attributes + graph.relations]


def _subgraph(chosen: list[Triple], concept: dict[str, str]) -> EvaluationGraph:
    """Triples read back as a graph over the variables they touch, with a TOP triple on the first variable."""
    order: list[str] = []
    relations: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    attributes: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for role, source, target in chosen:
        if source not in order and source != "TOP" and source in concept:
            order.append(source)
        if target not in order and target in concept:
            order.append(target)
        if target not in concept:
            attributes[source].append((role, target))
        elif source != "TOP":
            relations[source].append((role, target))
    if order:
        attributes[order[0]].append(("TOP", concept[order[0]]))
    return EvaluationGraph(
        order,
        {v: concept[v] for v in order},
        [(r, v, t) for v in order for r, t in attributes.get(v, ())],
        [(r, v, t) for v in order for r, t in relations.get(v, ())],
    )


def _touched(graph: EvaluationGraph, chosen: list[Triple]) -> dict[str, str]:
    involved = {x for _, s, t in chosen for x in (s, t)}
    return {v: graph.concepts[v] for v in graph.variables if v in involved}


def evaluation_reentrancies(graph: EvaluationGraph) -> EvaluationGraph:
    """The triples into variables with two or more of them (instances apart), as amr-evaluation's subgraph."""
    triples = _inverted(graph)
    incoming: defaultdict[str, list[Triple]] = defaultdict(list)
    for t in triples:
        incoming[t[2]].append(t)
    chosen = [t for var in graph.variables if len(incoming.get(var, ())) > 1 for t in incoming[var]]
    return _subgraph(chosen, _touched(graph, chosen))


def evaluation_srl(graph: EvaluationGraph) -> EvaluationGraph:
    """The triples whose role starts with ``ARG`` (an ``-of`` left is inverted), as amr-evaluation's subgraph."""
    chosen = [(r[:-3], t, s) if r.endswith("of") else (r, s, t) for r, s, t in _inverted(graph) if r.startswith("ARG")]
    touched = {x for r, s, t in _inverted(graph) if r.startswith("ARG") for x in (s, t)}
    return _subgraph(chosen, {v: graph.concepts[v] for v in graph.variables if v in touched})


def _norm(text: str) -> str:
    return text.lower().rstrip("_")


def _indexed(graph: EvaluationGraph) -> tuple[list[Counter], Counter]:
    index = {v: i for i, v in enumerate(graph.variables)}
    unary: list[Counter] = [Counter({("instance", _norm(graph.concepts[v])): 1}) for v in graph.variables]
    for role, source, value in graph.attributes:
        unary[index[source]][("attribute", _norm(role), _norm(value))] += 1
    relations: Counter = Counter((_norm(r), index[s], index[t]) for r, s, t in graph.relations)
    return unary, relations


def _solve_latent(n_pred: int, n_gold: int, unary: dict[int, int], pairwise: dict[tuple[int, int], int]) -> Any:
    from metametric_jax.matching import solve_latent

    found = solve_latent(n_pred, n_gold, unary, pairwise)
    return int(round(found.value)), found.optimal


def evaluation_match(
    predicted: EvaluationGraph, reference: EvaluationGraph, solve: Solve | None = None
) -> tuple[int, int, int, bool]:
    """``(matched, predicted triples, reference triples, optimal)``: the Smatch of amr-evaluation, exactly.

    Every pair of equal triples (role and value lower-cased, trailing ``_`` removed) counts once under the mapping,
    as amr-evaluation weighs them; the mapping is the best one (``solve``, default
    :func:`metametric_jax.matching.solve_latent` with its default budget) where amr-evaluation hill-climbs.
    """
    pred_unary, pred_rel = _indexed(predicted)
    gold_unary, gold_rel = _indexed(reference)
    n_gold = len(reference.variables)
    by_key: defaultdict[Any, list[tuple[int, int]]] = defaultdict(list)
    for v, keys in enumerate(gold_unary):
        for key, count in keys.items():
            by_key[key].append((v, count))
    unary: defaultdict[int, int] = defaultdict(int)
    for u, keys in enumerate(pred_unary):
        for key, count in keys.items():
            for v, other in by_key.get(key, ()):
                unary[u * n_gold + v] += count * other
    by_label: defaultdict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for (role, v1, v2), count in gold_rel.items():
        by_label[role].append((v1, v2, count))
    pairwise: defaultdict[tuple[int, int], int] = defaultdict(int)
    for (role, u1, u2), count in pred_rel.items():
        for v1, v2, other in by_label.get(role, ()):
            if (u1 == u2) != (v1 == v2):
                continue  # a loop matches a loop only
            a, b = u1 * n_gold + v1, u2 * n_gold + v2
            if a == b:
                unary[a] += count * other
            else:
                pairwise[(a, b) if a < b else (b, a)] += count * other
    n_pred = len(predicted.triples())
    n_ref = len(reference.triples())
    if not unary and not pairwise:
        return 0, n_pred, n_ref, True
    matched, optimal = (solve or _solve_latent)(len(predicted.variables), n_gold, dict(unary), dict(pairwise))
    return matched, n_pred, n_ref, optimal


def amr_evaluation_counts(
    predicted: Any,
    reference: Any,
    solve: Solve | None = None,
    *,
    keep_alignments: bool = False,
    smatch: bool = False,
) -> dict[str, tuple[int, int, int, bool]]:
    """``{name: (matched, predicted, reference, optimal)}`` for every name of :data:`NAMES`, amr-evaluation's reading.

    Args:
        predicted: the predicted graph, a PENMAN string or a ``penman.Tree`` (as written: its layout matters).
        reference: the reference graph.
        solve: the solver of the Smatch-based scores (default: :func:`metametric_jax.matching.solve_latent`).
        keep_alignments: keep alignment markers (``~e.8``) as part of the strings (default: removed).
        smatch: also give ``"smatch"``, the Smatch line of amr-evaluation (its reader, TOP with the root's concept).
    """
    from metametric_jax.tasks.readers.penman import strip_alignments

    def tree(graph: Any) -> Any:
        node = _tree_node(graph)
        if keep_alignments:
            return node
        import penman

        return strip_alignments(penman.Tree(node)).node

    pred_tree, gold_tree = tree(predicted), tree(reference)
    pred, gold = evaluation_graph(pred_tree), evaluation_graph(gold_tree)
    pred_t, gold_t = _inverted(pred), _inverted(gold)
    out: dict[str, tuple[int, int, int, bool]] = {}
    if smatch:
        out["smatch"] = evaluation_match(pred, gold, solve)
    out["unlabeled"] = evaluation_match(
        evaluation_graph(pred_tree, relabel=True), evaluation_graph(gold_tree, relabel=True), solve
    )
    out["no_wsd"] = evaluation_match(
        evaluation_graph(pred_tree, no_sense=True), evaluation_graph(gold_tree, no_sense=True), solve
    )
    out["concepts"] = _intersection(
        [pred.concepts[v] for v in pred.variables], [gold.concepts[v] for v in gold.variables]
    )
    for name, role in (("named_entities", "name"), ("negations", "polarity")):
        out[name] = _intersection(
            [pred.concepts[s] for r, s, _ in pred_t if r == role and s in pred.concepts],
            [gold.concepts[s] for r, s, _ in gold_t if r == role and s in gold.concepts],
        )
    out["wikification"] = _intersection(
        [t for r, _, t in pred_t if r == "wiki"], [t for r, _, t in gold_t if r == "wiki"]
    )
    out["reentrancies"] = evaluation_match(evaluation_reentrancies(pred), evaluation_reentrancies(gold), solve)
    out["srl"] = evaluation_match(evaluation_srl(pred), evaluation_srl(gold), solve)
    return out
