"""``metametric-jax score coref``: CoNLL-2012 coreference files, scored as the reference scorer v8.01 does."""

from __future__ import annotations

import argparse
import re
from typing import Any

from metametric_jax.commands import Command, Progress, count_blocks, count_lines, empty_warning, percent

_BEGIN = re.compile(rb"\s*#\s*begin document")


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--key", metavar="FILE", help="the key (reference) file")
    parser.add_argument("--response", metavar="FILE", help="the response (system output) file")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import conll2012

    units = count_lines(args.key, _BEGIN)
    with Progress("coref: scoring documents", units, Progress.wanted(args.progress, units)) as bar:
        scores, warnings = conll2012.score_files(args.key, args.response, progress=bar.update if bar.enabled else False)
        bar.update(units)
    order = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "conll", "mentions")
    return {name: scores[name] for name in order}, list(warnings) + empty_warning(
        args.key, count_blocks(args.key), "documents"
    )


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from rich.table import Table

    table = Table(caption="scores in %; CoNLL = mean F1 of MUC, B3 and CEAFe")
    for column in ("Metric", "Recall", "Precision", "F1"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    names = {"muc": "MUC", "bcub": "B3", "ceafm": "CEAFm", "ceafe": "CEAFe", "blanc": "BLANC", "lea": "LEA"}
    for key, name in names.items():
        s = scores[key]
        table.add_row(name, percent(s["recall"]), percent(s["precision"]), percent(s["f1"]))
    table.add_section()
    table.add_row("CoNLL", "", "", percent(scores["conll"]["f1"]))
    s = scores["mentions"]
    table.add_row("Mentions", percent(s["recall"]), percent(s["precision"]), percent(s["f1"]))
    return table


COMMAND = Command(
    name="coref",
    help="coreference: CoNLL-2012 key and response files (MUC, B3, CEAF, BLANC, LEA, CoNLL)",
    description="Score a CoNLL-2012 response file against a key file as the reference scorer v8.01 does. Documents "
    "lie between '#begin document (NAME); part NNN' and '#end document'; the last column of a token line is the "
    "coreference column ('-', '(12', '12)', '(12)', '(3|(12)'). The full column format and the scorer's two-column "
    "test files are both read. JSON: {muc, bcub, ceafm, ceafe, blanc, lea, mentions: {recall, precision, f1}, "
    "conll: {f1}}.",
    add_arguments=_add_arguments,
    inputs=("key", "response"),
    sample={"key": "coref/sample.key", "response": "coref/sample.response"},
    run=_run,
    table=_table,
)
