"""``metametric-jax score constituency``: bracketed trees scored as EVALB scores them (COLLINS.prm by default)."""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax._table import Scale
from metametric_jax.commands import Command, Resampling, empty_warning

#: The rows of EVALB's summary: (label, key, kind) with kind "count", "percent" or "number".
SUMMARY = (
    ("Number of sentence", "sentences", "count"),
    ("Number of Error sentence", "error_sentences", "count"),
    ("Number of Skip sentence", "skipped_sentences", "count"),
    ("Number of Valid sentence", "valid_sentences", "count"),
    ("Bracketing Recall", "recall", "percent"),
    ("Bracketing Precision", "precision", "percent"),
    ("Bracketing FMeasure", "f1", "percent"),
    ("Complete match", "complete_match", "percent"),
    ("Average crossing", "average_crossing", "number"),
    ("No crossing", "no_crossing", "percent"),
    ("2 or less crossing", "two_or_less_crossing", "percent"),
    ("Tagging accuracy", "tagging_accuracy", "percent"),
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) trees")
    parser.add_argument("--pred", metavar="FILE", help="the pred (parser output) trees, in the same order")
    parser.add_argument(
        "--params",
        metavar="FILE.prm",
        help="an EVALB parameter file (DELETE_LABEL, DELETE_LABEL_FOR_LENGTH, EQ_LABEL, EQ_WORD, LABELED, "
        "CUTOFF_LEN, MAX_ERROR); default: COLLINS.prm",
    )


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    # the files' module alone (not the accumulators' facade) and the summary only: no per-sentence items to build
    from metametric_jax.tasks.constituency_files import summary_files

    summary, warnings = summary_files(
        predictions=args.pred, references=args.gold, params=args.params, jobs=getattr(args, "jobs", 1)
    )
    scores = {"all": summary["all"], "len40": summary["len40"]}
    return scores, empty_warning(args.gold, scores["all"]["sentences"], "trees") + warnings


#: EVALB's percentages: ``100.0 * count / total`` (every constituency table prints them so)
SCALE = Scale(of_counts=True, numbers=("average_crossing",))


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    table = Table(caption="as EVALB's summary: percentages, average crossing in brackets per sentence")
    table.add_column("")
    table.add_column("All", justify="right")
    table.add_column(f"len<={scores['len40'].get('max_length', 40)}", justify="right")
    for label, key, kind in SUMMARY:
        cells = []
        for part in ("all", "len40"):
            value = scores[part][key]
            cells.append(str(value) if kind == "count" else SCALE.cell(value) if kind == "percent" else f"{value:.2f}")
        table.add_row(label, *cells)
    return table


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks import constituency
    from metametric_jax.tasks.readers.ptb import read_treebank

    params = constituency.COLLINS if args.params is None else constituency.read_params(args.params)
    jobs = getattr(args, "jobs", 1)
    counts = constituency.counts_in_chunks(read_treebank(args.pred), read_treebank(args.gold), params, jobs=jobs)
    rows = constituency.sentence_rows(counts, params)
    warnings = empty_warning(args.gold, rows.shape[0], "trees") + constituency.file_warnings(counts, params, args.pred)
    return Resampling(
        rows, constituency.readout, unit="sentences", warnings=tuple(warnings), of_counts=True, numbers=SCALE.numbers
    )


COMMAND = Command(
    name="constituency",
    help="constituency trees: bracketed (Penn Treebank) files, EVALB's figures (COLLINS.prm or --params)",
    description="Score predicted trees against gold trees as EVALB does (evalb -p PARAMS GOLD PRED): bracketed "
    "trees, one per line (a blank line is a failed parse, skipped) or over several lines; a sentence whose words "
    "differ is an error, reported and left out. JSON: {all: {...}, len40: {...}} with recall, precision, f1, "
    "complete_match, average_crossing, no_crossing, two_or_less_crossing, tagging_accuracy (fractions), sentences, "
    "error_sentences, skipped_sentences, valid_sentences and the bracket, word and tag counts. --bootstrap and compare "
    "resample the sentences.",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "parsing/gold.mrg", "pred": "parsing/pred.mrg"},
    run=_run,
    table=_table,
    resample=_resample,
)
