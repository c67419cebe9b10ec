"""``metametric-jax analyze rouge``: ROUGE by the length of the reference.

The task's file options are ``score rouge``'s (``--references``, repeatable; ``--types``, ``--use-stemmer``); the
analyses are those of :mod:`metametric_jax.tasks.rouge_analysis`. NumPy only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import rouge_analysis

    if getattr(args, "predictions", None) is not None:
        raise ValueError("analyze rouge reads --references and --system files; --predictions is not accepted")
    return rouge_analysis.analyze_files(
        args.references,
        systems,
        types=args.types,
        use_stemmer=args.use_stemmer,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="rouge",
    run=_run,
    description="Analyses: overall (score rouge's figures, exactly) and reference_length (0-50, 51-100, 101-200, "
    "201+ tokens of the first reference); each bucket's F1 of the first --types type tested, each system against the "
    "first.",
)
