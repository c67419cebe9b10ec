"""``metametric-jax analyze constituency``: bracket figures per label and sentence length; EVALB's sentence table.

The task's file options are ``score constituency``'s (``--params``); the analyses are those of
:mod:`metametric_jax.tasks.constituency_analysis`. NumPy only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import constituency_analysis

    if getattr(args, "pred", None) is not None:
        raise ValueError("analyze constituency reads --references and --system files; --pred is not accepted")
    return constituency_analysis.analyze_files(
        args.gold,
        systems,
        params=args.params,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="constituency",
    run=_run,
    description="Analyses: overall (score constituency's bracket recall, precision and F1, all and len<=40, "
    "exactly), label (per phrase label), length (1-10, 11-20, 21-30, 31-40, 41+ words); each bucket's F1 tested, each "
    "system against the first. Also EVALB's per-sentence table of each system.",
)
