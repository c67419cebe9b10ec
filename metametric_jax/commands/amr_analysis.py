"""``metametric-jax analyze amr``: Smatch and the fine-grained figures tested, the pairs that lose most, roles missed.

The task's file options are ``score amr``'s (``--keep-alignments``, ``--work-limit``, ``--time-limit``; the
fine-grained figures are always given); the analyses are those of :mod:`metametric_jax.tasks.amr_analysis`.
"""

from __future__ import annotations

import argparse

from metametric_jax.commands._analysis import add_bins, analysis_hook, positive


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top",
        type=positive,
        default=10,
        metavar="K",
        help="how many graph pairs the tables of the lowest Smatch F1 and of the largest losses and gains against the "
        "baseline list per system (default 10)",
    )
    add_bins(parser, "graph pairs by the reference graph's size")


ANALYZE = analysis_hook(
    "amr",
    reference="gold",
    options=("keep_alignments", "work_limit", "time_limit", "top", "bins"),
    derived=lambda args: {"fine_grained": getattr(args, "fine_grained_mode", None) or True},
    refused={
        "pred": "analyze amr reads --references and --system files; --pred is not accepted",
        "per_pair": "analyze amr lists the pairs that lose most (--top); --per-pair is a score option",
    },
    add_arguments=_add_arguments,
    custom="a graph pair, Pair(position, id, variables, reference) of metametric_jax.tasks.amr_analysis",
    description="Analyses (graph pairs resampled): fine (Smatch and the fine-grained figures of Damonte et al. 2017, "
    "score amr --fine-grained's exactly) and size (the reference graph's variables, in equal-frequency buckets); each "
    "bucket's F1 tested, each system against the first. Also the pairs with the lowest Smatch F1, the pairs where "
    "each system loses and gains most against the first, and the reference triples missed and predicted triples "
    "added per role under the Smatch alignment.",
)
