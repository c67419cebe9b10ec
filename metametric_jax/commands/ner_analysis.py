"""``metametric-jax analyze ner``: NER figures per entity type, length and training frequency; error categories.

The task's file options are ``score ner``'s (``--scheme``, ``-d``, ``-o``, ``-r``, ``--unit``); the analyses are
those of :mod:`metametric_jax.tasks.ner_analysis`. The run imports NumPy and the host scorer only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--frequency-from",
        metavar="TRAIN",
        default=None,
        help="a training file in the same column format (tokens in the first column): adds the analysis by how often "
        "the entity's surface form is an entity there (0, 1-2, 3-9, 10+)",
    )


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import ner_analysis

    if getattr(args, "file", None) is not None:
        raise ValueError("analyze ner reads --references and --system files (two-file layout); --file is not accepted")
    return ner_analysis.analyze_files(
        args.gold,
        systems,
        scheme=args.scheme,
        delimiter=args.delimiter,
        outside=args.outside,
        raw=args.raw,
        unit=args.unit,
        frequency_from=args.frequency_from,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="ner",
    run=_run,
    add_arguments=_add_arguments,
    description="Analyses: overall (score ner's micro figures), type (score ner's per-type figures, exactly), length "
    "(1, 2, 3, 4+ tokens), frequency (with --frequency-from); each bucket's F1 tested, each system against the first. "
    "Also nervaluate's error categories (strict, exact, partial, type) and a gold x predicted type confusion matrix.",
)
