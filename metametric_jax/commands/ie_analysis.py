"""``metametric-jax analyze ie``: entity, relation, trigger and argument figures per entity, relation and event type.

The task's file options are ``score ie``'s (``--mode``, ``--undirected``); the analyses are those of
:mod:`metametric_jax.tasks.ie_analysis`. NumPy only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import ie_analysis

    if getattr(args, "pred", None) is not None:
        raise ValueError("analyze ie reads --references and --system files; --pred is not accepted")
    return ie_analysis.analyze_files(
        args.gold,
        systems,
        mode=args.mode,
        directed=not args.undirected,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="ie",
    run=_run,
    description="Analyses: overall (score ie's figures, exactly), entity_type, relation_type, event_type (triggers "
    "and arguments) and role, each where such items appear; each bucket's F1 tested (overall: the relation F1, else "
    "the argument F1, else the entity F1), each system against the first.",
)
