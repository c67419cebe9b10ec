"""``metametric-jax analyze amr``: Smatch and the fine-grained figures tested, the pairs that lose most, roles missed.

The task's file options are ``score amr``'s (``--keep-alignments``, ``--work-limit``, ``--time-limit``; the
fine-grained figures are always given); the analyses are those of :mod:`metametric_jax.tasks.amr_analysis`. NumPy and
the host scorer only (no JAX).
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Analyze


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; found {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; found {value!r}")
    return n


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top",
        type=_positive,
        default=10,
        metavar="K",
        help="how many graph pairs the tables of the lowest Smatch F1 and of the largest losses and gains against the "
        "baseline list per system (default 10)",
    )
    parser.add_argument(
        "--bins",
        type=_positive,
        default=4,
        metavar="K",
        help="the number of equal-frequency buckets of graph pairs by the reference graph's size (default 4)",
    )


def _run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
    from metametric_jax.tasks import amr_analysis

    if getattr(args, "pred", None) is not None:
        raise ValueError("analyze amr reads --references and --system files; --pred is not accepted")
    if getattr(args, "per_pair", False):
        raise ValueError("analyze amr lists the pairs that lose most (--top); --per-pair is a score option")
    return amr_analysis.analyze_files(
        args.gold,
        systems,
        keep_alignments=args.keep_alignments,
        work_limit=args.work_limit,
        time_limit=args.time_limit,
        fine_grained=getattr(args, "fine_grained_mode", None) or True,
        top=args.top,
        bins=args.bins,
        samples=args.samples,
        seed=args.seed,
        correction=args.correction,
        statistic=args.statistic,
        min_units=args.min_units,
    )


ANALYZE = Analyze(
    task="amr",
    run=_run,
    add_arguments=_add_arguments,
    description="Analyses (graph pairs resampled): fine (Smatch and the fine-grained figures of Damonte et al. 2017, "
    "score amr --fine-grained's exactly) and size (the reference graph's variables, in equal-frequency buckets); each "
    "bucket's F1 tested, each system against the first. Also the pairs with the lowest Smatch F1, the pairs where "
    "each system loses and gains most against the first, and the reference triples missed and predicted triples "
    "added per role under the Smatch alignment.",
)
