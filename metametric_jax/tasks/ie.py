r"""Information extraction: mentions, relations and events, with their standard metrics as JAX accumulators.

Structures (frozen dataclasses decorated with :func:`~metametric_jax.metametric`, so each has a derived ``.metric``):
:class:`Mention` (a span, optionally typed), :class:`Entity` (a set of coreferent mentions), :class:`Relation`,
:class:`Trigger`, :class:`Argument` and :class:`Event`. An example's prediction and reference are *collections* of
relations or events (one collection per sentence or document).

Every metric is a one-to-one matching of the predicted and reference items (Chen et al., "A Unified View of
Evaluation Metrics for Structured Prediction", EMNLP 2023): with :math:`\phi(P_i, R_i)` the matched items of example
:math:`i`,

.. math::

    \mathrm{P} = \frac{\sum_i \phi(P_i, R_i)}{\sum_i \phi(P_i, P_i)}, \quad
    \mathrm{R} = \frac{\sum_i \phi(P_i, R_i)}{\sum_i \phi(R_i, R_i)}, \quad F_1 = \frac{2PR}{P + R}

micro-averaged (the plain names of ``compute()``), the per-example means under ``macro_*``.

Relation extraction (the "boundaries" and "strict" evaluations of Bekoulis et al., "Adversarial training for
multi-context joint entity and relation extraction", EMNLP 2018; Taillé et al., "Let's Stop Incorrect Comparisons in
End-to-end Relation Extraction!", EMNLP 2020):

* :data:`RelationStrict` — a predicted relation is correct if its type and both arguments (span *and* entity type,
  :attr:`Mention.type`) equal a reference relation's: the metric derived from :class:`Relation`;
* :data:`RelationBoundaries` — the relation type and the argument spans must match; entity types are ignored.

Event extraction (Li, Ji and Huang, "Joint Event Extraction via Structured Prediction with Global Features", ACL 2013;
metametric's ``event_extraction`` metrics): events are matched one-to-one, and

* :data:`TriggerIdentification` — an event counts if its trigger span matches;
* :data:`TriggerClassification` — trigger span and event type (the whole :class:`Trigger`) match;
* :data:`ArgumentIdentification` — arguments are counted inside matched events (same :class:`Trigger`); an argument
  counts if its span matches: :math:`\phi(e, e') = [t = t'] \cdot |\mathrm{spans}(e) \cap \mathrm{spans}(e')|`;
* :data:`ArgumentClassification` — the same with span and role (the whole :class:`Argument`): the metric derived
  from :class:`Event`.

For arguments the self-similarities are the numbers of arguments, so P and R are over arguments, and the one-to-one
event matching maximizes the number of matched arguments. :data:`EventExtraction` and :data:`RelationExtraction` are
suites holding all of them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from metametric_jax import dsl
from metametric_jax.accumulate import Metric
from metametric_jax.derive import metametric
from metametric_jax.suite import Suite, make_suite

__all__ = [
    "Mention",
    "Entity",
    "Relation",
    "Trigger",
    "Argument",
    "Event",
    "RelationStrict",
    "RelationBoundaries",
    "RelationExtraction",
    "TriggerIdentification",
    "TriggerClassification",
    "ArgumentIdentification",
    "ArgumentClassification",
    "EventExtraction",
    "span",
]


@metametric
@dataclass(frozen=True)
class Mention:
    """A span of text, ``[left, right)`` by convention (the metrics only compare the two ends).

    Attributes:
        left: start offset.
        right: end offset (exclusive by convention).
        type: optional entity type; :data:`RelationStrict` compares it, the identification metrics ignore it.
    """

    left: int
    right: int
    type: str | None = None


@metametric
@dataclass(frozen=True)
class Entity:
    """An entity: the set of mentions that refer to it (coreference). Its metric counts shared mentions.

    Attributes:
        mentions: the mentions.
    """

    mentions: frozenset[Mention]


@metametric
@dataclass(frozen=True)
class Relation:
    """A typed binary relation between two mentions.

    Attributes:
        type: the relation type.
        subj: the subject (head) argument.
        obj: the object (tail) argument.
    """

    type: str
    subj: Mention
    obj: Mention


@metametric
@dataclass(frozen=True)
class Trigger:
    """The event-denoting mention of an event.

    Attributes:
        mention: the trigger span.
        type: the event type (or subtype).
    """

    mention: Mention
    type: str


@metametric
@dataclass(frozen=True)
class Argument:
    """A participant of an event.

    Attributes:
        mention: the argument span.
        role: the argument's role in the event.
    """

    mention: Mention
    role: str


@metametric
@dataclass(frozen=True)
class Event:
    r"""An event: a trigger and its arguments.

    The derived metric, ``Event.metric``, is :math:`[t = t'] \cdot |\mathrm{args} \cap \mathrm{args}'|` (raw), the
    argument-classification similarity.

    Attributes:
        trigger: the trigger.
        args: the arguments (any collection: a tuple keeps the event hashable).
    """

    trigger: Trigger
    args: Collection[Argument] = ()


def span(m: Mention) -> tuple[int, int]:
    """The offsets of a mention, ``(left, right)``."""
    return (m.left, m.right)


def _trigger(e: Event) -> Trigger:
    return e.trigger


def _trigger_span(e: Event) -> tuple[int, int]:
    return span(e.trigger.mention)


def _argument_span(a: Argument) -> tuple[int, int]:
    return span(a.mention)


_SPAN = dsl.preprocess(dsl.discrete(), pred=span)


def _metric(sim: Any, name: str, doc: str) -> type[Metric]:
    cls = dsl.metric(sim, normalizer="f1", name=name)
    cls.__doc__ = doc
    return cls


RelationStrict = _metric(
    dsl.set_matching(dsl.auto(Relation)),
    "relation_strict",
    r"""Strict relation extraction: relation type and both arguments (span and entity type) must match.

    .. math::

        \phi(P, R) = |P \cap R| \text{ over (type, subj, obj)}, \quad
        F_1 = \frac{2 \sum_i |P_i \cap R_i|}{\sum_i |P_i| + \sum_i |R_i|}

    (Bekoulis et al. 2018; Taillé et al. 2020). Inputs: collections of :class:`Relation` per example.
    """,
)

RelationBoundaries = _metric(
    dsl.set_matching(dsl.dataclass(Relation, subj=_SPAN, obj=_SPAN)),
    "relation_boundaries",
    r"""Boundaries relation extraction: relation type and argument spans must match; entity types are ignored.

    .. math::

        \phi(P, R) = |P \cap R| \text{ over (type, span(subj), span(obj))}

    (Bekoulis et al. 2018; Taillé et al. 2020). Inputs: collections of :class:`Relation` per example.
    """,
)

TriggerIdentification = _metric(
    dsl.set_matching(dsl.preprocess(dsl.discrete(), pred=_trigger_span)),
    "trigger_identification",
    r"""Trigger identification (Li, Ji and Huang 2013): events are matched on their trigger spans.

    .. math::

        \phi(P, R) = |\{\mathrm{span}(t_e)\}_{e \in P} \cap \{\mathrm{span}(t_e)\}_{e \in R}| \text{ (multisets)}

    Inputs: collections of :class:`Event` per example.
    """,
)

TriggerClassification = _metric(
    dsl.set_matching(dsl.preprocess(Trigger, pred=_trigger)),
    "trigger_classification",
    r"""Trigger classification (Li, Ji and Huang 2013): trigger span and event type must match.

    .. math::

        \phi(P, R) = |\{t_e\}_{e \in P} \cap \{t_e\}_{e \in R}| \text{ (multisets of triggers)}

    Inputs: collections of :class:`Event` per example.
    """,
)

ArgumentIdentification = _metric(
    dsl.set_matching(dsl.dataclass(Event, args=dsl.set_matching(dsl.preprocess(dsl.discrete(), pred=_argument_span)))),
    "argument_identification",
    r"""Argument identification (Li, Ji and Huang 2013): argument spans, inside events with matching triggers.

    .. math::

        \phi(P, R) = \max_{M} \sum_{(e, e') \in M} [t_e = t_{e'}] \cdot |\mathrm{spans}(e) \cap \mathrm{spans}(e')|,
        \quad \phi(P, P) = \sum_{e \in P} |\mathrm{args}(e)|

    over one-to-one event matchings :math:`M`. Inputs: collections of :class:`Event` per example.
    """,
)

ArgumentClassification = _metric(
    dsl.set_matching(dsl.auto(Event)),
    "argument_classification",
    r"""Argument classification (Li, Ji and Huang 2013): argument span and role, inside events with matching triggers.

    .. math::

        \phi(P, R) = \max_{M} \sum_{(e, e') \in M} [t_e = t_{e'}] \cdot |\mathrm{args}(e) \cap \mathrm{args}(e')|

    (the metric derived from :class:`Event`). Inputs: collections of :class:`Event` per example.
    """,
)

EventExtraction: type[Suite] = make_suite(
    "event_extraction",
    {
        "trigger_identification": TriggerIdentification,
        "trigger_classification": TriggerClassification,
        "argument_identification": ArgumentIdentification,
        "argument_classification": ArgumentClassification,
    },
    doc=(
        "Event extraction report (Li, Ji and Huang 2013): trigger identification / classification and argument "
        "identification / classification, each with micro and ``macro_`` precision, recall and F1."
    ),
)

RelationExtraction: type[Suite] = make_suite(
    "relation_extraction",
    {"strict": RelationStrict, "boundaries": RelationBoundaries},
    doc="Relation extraction report: strict and boundaries evaluation, each with micro and ``macro_`` P / R / F1.",
)
