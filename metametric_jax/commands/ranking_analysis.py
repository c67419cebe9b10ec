"""``metametric-jax analyze ranking``: trec_eval's measures by the number of relevant documents; per-query wins.

The task's file options are ``score ranking``'s (``-m``, ``-l``, ``-c``, ``-M``); the analyses are those of
:mod:`metametric_jax.tasks.ranking_analysis`. NumPy only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import ranking_analysis

    if getattr(args, "run", None) is not None:
        raise ValueError("analyze ranking reads --references (the qrels) and --system run files; --run is not accepted")
    if getattr(args, "per_query", False):
        raise ValueError("analyze ranking compares queries in its wins table; --per-query is a score option")
    return ranking_analysis.analyze_files(
        args.qrels,
        systems,
        measures=args.measures,
        level=args.level,
        complete=args.complete,
        max_retrieved=args.max_retrieved,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="ranking",
    run=_run,
    description="Analyses: overall (score ranking's figures, exactly, counts left out) and relevant (queries with 0, "
    "1, 2-5, 6-20, 21+ relevant documents); each bucket's MAP tested, each system against the first. Also the "
    "per-query wins, ties and losses of each system against the first for each measure.",
)
