"""``metametric-jax analyze dependency``: UAS and LAS per relation, arc length, direction and depth; a confusion matrix.

The task's file options are ``score dependency``'s (``--no-check-trees``, ``--exclude-punct``, ``--keep-subtypes``,
``--unit``); the analyses are those of :mod:`metametric_jax.tasks.dependency_analysis`. NumPy only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import dependency_analysis

    if getattr(args, "pred", None) is not None:
        raise ValueError("analyze dependency reads --references and --system files; --pred is not accepted")
    if getattr(args, "counts", False):
        raise ValueError("analyze dependency gives figures per bucket; --counts is a score option")
    return dependency_analysis.analyze_files(
        args.gold,
        systems,
        unit=args.unit,
        check_trees=args.check_trees,
        exclude_punct=args.exclude_punct,
        strip_subtypes=args.strip_subtypes,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="dependency",
    run=_run,
    description="Analyses (MaltEval's groupings): overall (score dependency's UAS and LAS, exactly), deprel, "
    "arc_length (root, 1, 2, 3-6, 7+), direction (left, right, root) and depth (arcs from the root); precision by the "
    "predicted word's own attribute, recall by the reference word's; each bucket's LAS F1 tested, each system "
    "against the first. Also a gold x predicted relation confusion matrix of the aligned words.",
)
