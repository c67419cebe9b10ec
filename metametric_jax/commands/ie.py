"""``metametric-jax score ie``: JSON Lines documents, entity, relation, trigger and argument precision, recall, F1."""

from __future__ import annotations

import argparse
import re
from typing import Any

from metametric_jax.commands import Command, Progress, Resampling, count_lines, percent

_DOCUMENT = re.compile(rb"\s*\S")  # a non-blank line: one document

_NAMES = {
    "strict": {
        "entities": "Entities",
        "relations": "Relations",
        "triggers": "Triggers (cls.)",
        "arguments": "Arguments (cls.)",
    },
    "boundaries": {
        "entities": "Entities",
        "relations": "Relations",
        "triggers": "Triggers (id.)",
        "arguments": "Arguments (id.)",
    },
}


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) JSON Lines file")
    parser.add_argument("--pred", metavar="FILE", help="the pred (system output) JSON Lines file")
    parser.add_argument(
        "--mode",
        choices=("strict", "boundaries"),
        default="strict",
        help="strict: offsets and types must match (entity types too; trigger and argument classification); "
        "boundaries: entity types and argument roles ignored (trigger and argument identification) (default: strict)",
    )
    parser.add_argument(
        "--undirected", action="store_true", help="count a relation whose head and tail are swapped as correct"
    )
    parser.add_argument("--per-document", action="store_true", help="also give the figures of each document")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import ie

    units = count_lines(args.gold, _DOCUMENT)
    with Progress("ie: scoring documents", units, Progress.wanted(args.progress, units)) as bar:
        report = ie.score_files(
            predictions=args.pred,
            references=args.gold,
            mode=args.mode,
            directed=not args.undirected,
            progress=bar.update if bar.enabled else None,
            jobs=getattr(args, "jobs", 1),
        )
    scores = dict(report.scores)
    if args.per_document:
        scores["per_document"] = report.items
    return scores, list(report.warnings)


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    names = _NAMES[scores["mode"]]
    table = Table(caption=f"scores in %; mode {scores['mode']}; {scores['documents']} documents")
    for column in ("Figure", "Precision", "Recall", "F1", "Matched", "Predicted", "Gold"):
        table.add_column(column, justify="left" if column == "Figure" else "right")
    for figure, name in names.items():
        s = scores[figure]
        table.add_row(
            name,
            percent(s["precision"]),
            percent(s["recall"]),
            percent(s["f1"]),
            str(s["matched"]),
            str(s["predicted"]),
            str(s["reference"]),
        )
    for item in scores.get("per_document", []):
        table.add_section()
        label = f"line {item['line']}" if item["id"] is None else str(item["id"])
        for figure, name in names.items():
            s = item[figure]
            table.add_row(
                f"{label}: {name}",
                percent(s["precision"]),
                percent(s["recall"]),
                percent(s["f1"]),
                str(s["matched"]),
                str(s["predicted"]),
                str(s["reference"]),
            )
    return table


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks import ie

    _, stats, warnings = ie.count_files(
        predictions=args.pred,
        references=args.gold,
        mode=args.mode,
        directed=not args.undirected,
        jobs=getattr(args, "jobs", 1),
    )
    return Resampling(ie.document_rows(stats), ie.readout, unit="documents", warnings=tuple(warnings))


COMMAND = Command(
    name="ie",
    help="information extraction: JSON Lines documents (entities, relations, event triggers and arguments)",
    description="Score predicted documents against gold documents, one JSON object per line, the same documents in "
    "the same order: {id, entities: [{start, end, type, id}], relations: [{type, head, tail}], events: [{type, "
    "trigger: {start, end}, arguments: [{entity, role}]}]} (end exclusive; head, tail and entity name an entity by "
    "index or id; see metametric_jax.tasks.readers.ie_jsonl). With tokens: [...] (optional) every offset of both "
    "files lies within them, and a prediction gives as many as its reference. Other keys are ignored; one close to a "
    "known key is an error where that key is missing (relation for relations), otherwise a warning. JSON: {mode, "
    "documents, entities, relations, triggers, arguments}, each figure {precision, recall, f1, matched, predicted, "
    "reference}; with --per-document also per_document: [{id, line, entities, ...}].",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "ie/gold.jsonl", "pred": "ie/pred.jsonl"},
    run=_run,
    table=_table,
    resample=_resample,
)
