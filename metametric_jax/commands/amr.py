"""``metametric-jax score amr``: PENMAN files, corpus Smatch with the exact optimal variable mapping."""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Command, Progress, count_blocks, empty_warning, percent


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) file")
    parser.add_argument("--pred", metavar="FILE", help="the pred (system output) file")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import amr

    units = count_blocks(args.gold)
    with Progress("amr: scoring graph pairs", units, Progress.wanted(args.progress, units)) as bar:
        scores = amr.score_files(args.gold, args.pred, progress=bar.update if bar.enabled else False)
    return dict(scores), empty_warning(args.gold, units, "graphs")


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from rich.table import Table

    table = Table(caption="scores in %")
    for column in ("Metric", "Precision", "Recall", "F1"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    table.add_row("Smatch", percent(scores["precision"]), percent(scores["recall"]), percent(scores["f1"]))
    return table


COMMAND = Command(
    name="amr",
    help="AMR graphs: PENMAN files (corpus Smatch, exact)",
    description="Score predicted PENMAN graphs against gold graphs, in the same order: graphs separated by blank "
    "lines, '#' comment lines skipped. JSON: {precision, recall, f1}.",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "amr/gold.txt", "pred": "amr/pred.txt"},
    run=_run,
    table=_table,
)
