"""``metametric-jax analyze ie``: entity, relation, trigger and argument figures per entity, relation and event type.

The task's file options are ``score ie``'s (``--mode``, ``--undirected``); the analyses are those of
:mod:`metametric_jax.tasks.ie_analysis`.
"""

from __future__ import annotations

from metametric_jax.commands._analysis import analysis_hook

ANALYZE = analysis_hook(
    "ie",
    reference="gold",
    options=("mode",),
    custom="an item, Item(document, kind, type, role, start, end, side) of metametric_jax.tasks.ie_analysis",
    derived=lambda args: {"directed": not args.undirected},
    refused={
        "pred": "analyze ie reads --references and --system files; --pred is not accepted",
        "per_document": "analyze ie reports per bucket of items; --per-document is not accepted",
    },
    description="Analyses: overall (score ie's figures, exactly), entity_type, relation_type, event_type (triggers "
    "and arguments) and role, each where such items appear; each bucket's F1 tested (overall: the relation F1, else "
    "the argument F1, else the entity F1), each system against the first.",
)
