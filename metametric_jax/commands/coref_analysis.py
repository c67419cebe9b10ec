"""``metametric-jax analyze coref``: Kummerfeld and Klein's error categories and the gain of fixing each; buckets.

The task's file options are ``score coref``'s (``--repeated-mentions``, ``--max-repeated-mentions``,
``--check-words``; ``--metric`` picks the tested figure, the CoNLL F1 by default); the analyses are those of
:mod:`metametric_jax.tasks.coref_analysis`. The run imports NumPy and the host scorer only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _bins(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; found {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; found {value!r}")
    return n


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bins",
        type=_bins,
        default=4,
        metavar="K",
        help="the number of equal-frequency buckets of documents by length and by number of key entities (default 4)",
    )


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import coref_analysis

    if args.files or args.response is not None:
        raise ValueError(
            "analyze coref reads --references (the key) and --system files; KEY RESPONSE and --response are not "
            "accepted"
        )
    if args.per_document:
        raise ValueError("analyze coref reports per bucket of documents; --per-document is not accepted")
    return coref_analysis.analyze_files(
        args.key,
        systems,
        repeated_mentions=args.repeated_mentions,
        max_repeated_mentions=None if args.max_repeated_mentions < 0 else args.max_repeated_mentions,
        check_words=args.check_words,
        metric="conll" if args.metric == "all" else args.metric,
        bins=args.bins,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="coref",
    run=_run,
    add_arguments=_add_arguments,
    description="Analyses (documents resampled): overall (score coref's F1 of every metric and the CoNLL average), "
    "length (tokens) and entities (key entities), in equal-frequency buckets of documents; each bucket's CoNLL F1 "
    "tested (--metric picks another), each system against the first. Also Kummerfeld and Klein's (2013) error "
    "categories (span error, conflated entities, extra mention, extra entity, divided entity, missing mention, missing "
    "entity): per system, the number of errors and how much each metric's F1 rises when they are fixed, in that order.",
)
