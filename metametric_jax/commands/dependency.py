"""``metametric-jax score dependency``: CoNLL-U files, every figure of the CoNLL 2018 evaluation script."""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Command, Resampling, percent

#: The figures as the CoNLL 2018 script names them, in its order (the JSON keys are these in lower case).
FIGURES: tuple[str, ...] = (
    *("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"),
    *("UAS", "LAS", "CLAS", "MLAS", "BLEX"),
)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) CoNLL-U file")
    parser.add_argument("--pred", metavar="FILE", help="the predicted (system) CoNLL-U file")
    parser.add_argument(
        "files",
        nargs="*",
        metavar="GOLD PRED",
        help="the gold and predicted files as positional arguments, as conll18_ud_eval.py takes them",
    )
    parser.add_argument(
        "--no-check-trees",
        dest="check_trees",
        action="store_false",
        help="score sentences that are not trees (a cycle, no root or several) instead of refusing them",
    )
    parser.add_argument(
        "--exclude-punct",
        action="store_true",
        help="leave out words whose gold UPOS is PUNCT from the word-level figures (not in the CoNLL 2018 script)",
    )
    parser.add_argument(
        "--counts",
        "-c",
        action="store_true",
        help="print the counts (correct, gold, predicted, aligned) instead of the figures, as the script's -c",
    )
    parser.add_argument(
        "--keep-subtypes",
        dest="strip_subtypes",
        action="store_false",
        help="compare relations with their subtypes (nsubj:pass != nsubj; the script ignores subtypes)",
    )
    parser.add_argument(
        "--unit",
        choices=("sentence", "document"),
        default=None,
        help="what --bootstrap and compare resample: the documents the gold file's '# newdoc' comments start (the "
        "default where it has them; asking for documents of a file without them is an error) or the gold sentences "
        "(the default otherwise)",
    )


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    files = args.files or []
    if not files:
        return
    if args.gold is not None or args.pred is not None:
        parser.error("give the files as GOLD PRED or as --gold FILE --pred FILE, not both")
    if len(files) != 2:
        parser.error(f"expected two files, GOLD PRED; found {len(files)}")
    args.gold, args.pred = files


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    # the files' modules alone: not the accumulators' facade (tasks.dependency), which imports what portable metric
    # classes need
    from metametric_jax.tasks.dependency_counts import METRICS
    from metametric_jax.tasks.dependency_files import counts_in_chunks, summary_files
    from metametric_jax.tasks.readers.conllu import read_conllu

    options = {"check_trees": args.check_trees, "exclude_punct": args.exclude_punct}
    options["strip_subtypes"] = args.strip_subtypes
    jobs = getattr(args, "jobs", 1)
    if args.counts:
        gold = read_conllu(args.gold)
        counts = counts_in_chunks(read_conllu(args.pred), gold, jobs=jobs, **options).sum(axis=0)
        out = {}
        for name, (correct, predicted, reference, aligned) in zip(METRICS, counts.tolist()):
            out[name] = {"correct": correct, "gold": reference, "predicted": predicted}
            out[name]["aligned"] = None if name in ("tokens", "sentences") else aligned
        return out, [] if gold else [f"{args.gold} holds no sentences; every count is 0"]
    # the summary only: no per-sentence items to build
    return summary_files(predictions=args.pred, references=args.gold, jobs=jobs, **options)


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    if getattr(args, "counts", False):
        table = Table(caption="counts of items (words for the word-level figures)")
        for column in ("Metric", "Correct", "Gold", "Predicted", "Aligned"):
            table.add_column(column, justify="left" if column == "Metric" else "right")
        for name in FIGURES:
            c = scores[name.lower()]
            table.add_row(name, str(c["correct"]), str(c["gold"]), str(c["predicted"]), str(c["aligned"] or ""))
        return table
    table = Table(caption="scores in %; LAS F1 is the headline (CoNLL 2018)")
    for column in ("Metric", "Precision", "Recall", "F1 Score", "AligndAcc"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    for name in FIGURES:
        s = scores[name.lower()]
        aligned = "" if s["aligned_accuracy"] is None else percent(s["aligned_accuracy"])
        table.add_row(name, percent(s["precision"]), percent(s["recall"]), percent(s["f1"]), aligned)
    return table


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.errors import InputFormatError
    from metametric_jax.tasks import dependency
    from metametric_jax.tasks.readers.conllu import documents

    options = {"check_trees": args.check_trees, "exclude_punct": args.exclude_punct}
    options["strip_subtypes"] = args.strip_subtypes
    gold = dependency.read_conllu(args.gold)
    counts = dependency.counts_in_chunks(
        dependency.read_conllu(args.pred), gold, jobs=getattr(args, "jobs", 1), **options
    )
    rows = dependency.sentence_rows(counts)
    warnings = () if gold else (f"{args.gold} holds no sentences; every figure is 0",)
    groups = documents(gold)
    unit = args.unit or ("document" if groups is not None else "sentence")
    if unit == "document" and groups is None:
        raise InputFormatError(
            args.gold,
            None,
            "--unit document: the file has no '# newdoc' comment to start a document; give --unit sentence to "
            "resample sentences",
        )
    if unit == "sentence":
        return Resampling(rows, dependency.readout, unit="sentences", warnings=warnings)
    return Resampling(rows, dependency.readout, unit="documents", groups=groups, warnings=warnings)


COMMAND = Command(
    name="dependency",
    help="dependency parsing: CoNLL-U files (the CoNLL 2018 figures: tokens, words, tags, UAS, LAS, CLAS, MLAS, BLEX)",
    description="Score a predicted CoNLL-U file against a gold one as conll18_ud_eval.py v1.2 does: the prediction "
    "may tokenize and split sentences differently (words are aligned on the characters of the text), every sentence "
    "must be a tree. JSON: {tokens|sentences|words|upos|xpos|ufeats|alltags|lemmas|uas|las|clas|mlas|blex: "
    "{precision, recall, f1, aligned_accuracy}} (aligned_accuracy null for tokens, sentences and words); with "
    "--counts, each {correct, gold, predicted, aligned} (aligned null for tokens and sentences). --bootstrap and "
    "compare resample the gold file's sentences, or its documents where '# newdoc' comments start them (see --unit); "
    "the counts of a predicted item go to the gold sentence where it starts.",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "parsing/gold.conllu", "pred": "parsing/pred.conllu"},
    run=_run,
    table=_table,
    resolve=_resolve,
    resample=_resample,
)
