r"""The fine-grained AMR scores of Damonte, Cohen and Satta (2017), computed exactly.

Damonte, Cohen and Satta, "An Incremental Parser for Abstract Meaning Representation" (EACL 2017) break Smatch into
figures that each look at one aspect of a parse; their ``amr-evaluation`` scripts (github.com/mdtux89/amr-evaluation)
compute them. Each figure is a precision / recall / F1 over counts summed across the corpus,

.. math::

    P = \frac{\sum_i \mathrm{match}_i}{\sum_i |A(P_i)|}, \quad R = \frac{\sum_i \mathrm{match}_i}{\sum_i |A(G_i)|},
    \quad F_1 = \frac{2 \sum_i \mathrm{match}_i}{\sum_i |A(P_i)| + \sum_i |A(G_i)|},

where :math:`A` extracts the aspect from a graph's Smatch triples (see :mod:`metametric_jax.tasks.amr`) and
:math:`\mathrm{match}` is either the multiset intersection of labels (no variables involved) or the Smatch match of
two triple sets under the best one-to-one variable mapping, solved exactly (within the work budget of
:func:`metametric_jax.tasks.amr.smatch_match`):

* ``unlabeled`` — Smatch with every role (relations and attributes) replaced by one label;
* ``no_wsd`` — Smatch with the sense suffix of concepts made equal (``go-02`` reads ``go-01``);
* ``concepts`` — the multiset of concepts;
* ``named_entities`` — the multiset of concepts of variables with a ``:name`` role;
* ``negations`` — the multiset of concepts of variables with a ``:polarity`` role;
* ``wikification`` — the multiset of ``:wiki`` values;
* ``reentrancies`` — Smatch of the subgraphs made of the relations into reentrant variables (two or more incoming
  relations) and the instance triples of the variables they touch;
* ``srl`` — Smatch of the subgraphs made of the ``:ARGn`` roles and the instance triples of the variables they touch.

Where ``amr-evaluation`` gives other figures:

* it searches the Smatch-based figures (``unlabeled``, ``no_wsd``, ``reentrancies``, ``srl``) by hill climbing, which
  may stop below the optimum; here they are exact;
* ``unlabeled``: it relabels the text (``:ARG0-of`` becomes ``:label``, keeping the written direction), so the same
  edge written as ``:ARG0`` on one side and ``:ARG0-of`` on the other does not match; here inverse roles are normalized
  first (the graph, not its layout, is compared);
* ``reentrancies`` and ``srl``: it adds to each subgraph a triple ``(TOP, first variable, its concept)``; here no TOP
  triple is added;
* ``concepts``, ``named_entities``, ``negations``: it compares concepts case-sensitively; here case-insensitively, as
  Smatch compares them; alignment markers are removed first (see :mod:`metametric_jax.tasks.amr`);
* it truncates a quoted constant with spaces to its first word and drops ``:mod`` with a constant, as smatch 1.0.4
  reads graphs (see :mod:`metametric_jax.tasks.amr`).

>>> pred = [("instance", "g", "go-02"), ("instance", "b", "boy"), ("TOP", "g", "top"), ("ARG0", "g", "b")]
>>> gold = [("instance", "x", "go-01"), ("instance", "y", "boy"), ("TOP", "x", "top"), ("ARG1", "x", "y")]
>>> [t for t in unlabeled(pred) if t[0] == "label"]
[('label', 'g', 'b')]
>>> sorted(concepts(no_wsd(pred)))
['boy', 'go-01']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

__all__ = [
    "NAMES",
    "unlabeled",
    "no_wsd",
    "concepts",
    "named_entities",
    "negations",
    "wikification",
    "reentrancies",
    "srl",
    "fine_grained_counts",
]

Triple = tuple[str, str, str]
Match = Callable[[list[Triple], list[Triple]], tuple[int, int, int, bool]]

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


def fine_grained_counts(
    predicted: Sequence[Triple], reference: Sequence[Triple], match: Match
) -> dict[str, tuple[int, int, int, bool]]:
    """``{name: (matched, predicted, reference, optimal)}`` for every name of :data:`NAMES`, for one graph pair.

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
            pred, gold = Counter(_COUNTED[name](predicted)), Counter(_COUNTED[name](reference))
            out[name] = (sum((pred & gold).values()), sum(pred.values()), sum(gold.values()), True)
    return out
