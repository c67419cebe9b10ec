"""``metametric-jax score amr``: PENMAN files, corpus Smatch with the exact optimal variable mapping."""

from __future__ import annotations

import argparse
import functools
from typing import Any

from metametric_jax.commands import Command, Progress, Resampling, count_blocks, percent

#: AMR pairs can take up to the work budget each: show progress from this many pairs (unless --no-progress).
_PROGRESS_FROM = 200

_FINE = (
    ("unlabeled", "Unlabeled"),
    ("no_wsd", "No WSD"),
    ("concepts", "Concepts"),
    ("named_entities", "Named Ent."),
    ("negations", "Negations"),
    ("wikification", "Wikification"),
    ("reentrancies", "Reentrancies"),
    ("srl", "SRL"),
)


def _work_limit(text: str) -> int | None:
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 < value < float("inf") and value.is_integer()):
        raise argparse.ArgumentTypeError(f"expected a positive whole number of work units or 'none', found {text!r}")
    return int(value)


def _time_limit(text: str) -> float | None:
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds or 'none', found {text!r}")
    return value


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    from metametric_jax._budget import DEFAULT_WORK_LIMIT  # standard library only: no JAX, no scipy

    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) graphs")
    parser.add_argument("--pred", metavar="FILE", help="the predicted graphs, in the same order")
    parser.add_argument("--per-pair", action="store_true", help="also give every graph pair's figures")
    parser.add_argument(
        "--fine-grained",
        action="store_true",
        help="also give the fine-grained scores of Damonte et al. (2017): unlabeled, no WSD, concepts, named "
        "entities, negations, wikification, reentrancies, SRL (with the optimal mapping)",
    )
    parser.add_argument(
        "--fine-grained-mode",
        choices=("amr-evaluation", "normalized"),
        default=None,
        help="the definitions of the fine-grained scores (implies --fine-grained): 'amr-evaluation' (default) as "
        "its scripts define them, reading each graph as written; 'normalized' on smatch 1.0.4's triples, inverse "
        "roles normalized, no TOP triple in the reentrancy and SRL subgraphs, concepts compared case-insensitively",
    )
    parser.add_argument(
        "--keep-alignments",
        action="store_true",
        help="keep alignment markers (~e.8) as part of concepts, roles and constants (default: removed)",
    )
    parser.add_argument(
        "--work-limit",
        type=_work_limit,
        default=DEFAULT_WORK_LIMIT,
        metavar="UNITS",
        help="search budget of each Smatch problem (a graph pair; with --fine-grained also each of its Smatch-based "
        f"scores) past the quick certificates of optimality, in work units counted by the solver, not seconds, so "
        f"every figure is reproducible (default {DEFAULT_WORK_LIMIT:_}, a second or two; 'none': unbounded); a pair "
        "that hits it uses the best mapping found and is not counted in pairs_optimal",
    )
    parser.add_argument(
        "--time-limit",
        type=_time_limit,
        default=None,
        metavar="SECONDS",
        help="an extra wall-clock cap per Smatch problem (default: none); figures of pairs it stops depend on the "
        "machine and its load and are NOT reproducible (counted in pairs_timed_out)",
    )


def _fine_grained(args: argparse.Namespace) -> str | bool:
    mode = getattr(args, "fine_grained_mode", None)
    return mode if mode is not None else ("amr-evaluation" if args.fine_grained else False)


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import amr

    units = count_blocks(args.gold)
    wanted = units >= _PROGRESS_FROM if args.progress is None else bool(args.progress)
    with Progress("amr: scoring graph pairs", units, wanted) as bar:
        report = amr.score_files(
            predictions=args.pred,
            references=args.gold,
            progress=bar.update if bar.enabled else False,
            fine_grained=_fine_grained(args),
            keep_alignments=args.keep_alignments,
            work_limit=args.work_limit,
            time_limit=args.time_limit,
            jobs=getattr(args, "jobs", 1),
        )
    scores = dict(report.scores)
    if args.per_pair:
        scores["per_pair"] = report.items
    return scores, list(report.warnings)


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks import amr

    scores, warnings = _run(argparse.Namespace(**{**vars(args), "per_pair": True}))  # scored as score amr scores
    items = scores["per_pair"]
    fine = bool(_fine_grained(args))
    return Resampling(
        amr.item_rows(items, fine),
        functools.partial(amr.readout, fine_grained=fine),
        unit="graph pairs",
        ids=[item["id"] for item in items],
        warnings=tuple(warnings),
    )


def _row(name: str, figures: dict[str, Any]) -> tuple[str, str, str, str]:
    return (name, percent(figures["precision"]), percent(figures["recall"]), percent(figures["f1"]))


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    caption = f"scores in %; {scores['pairs_optimal']} of {scores['pairs']} graph pairs proven optimal"
    if scores["pairs_optimal"] < scores["pairs"]:
        caption += " (* the work budget ran out: best mapping found)"
    if scores.get("pairs_timed_out"):
        caption += f"; the time limit stopped {scores['pairs_timed_out']}: their figures are not reproducible"
    table = Table(caption=caption)
    for column in ("Metric", "Precision", "Recall", "F1"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    for item in scores.get("per_pair", ()):
        table.add_row(*_row(f"Smatch {item['id']}{'' if item['optimal'] else ' *'}", item))
    if scores.get("per_pair"):
        table.add_section()
    table.add_row(*_row("Smatch", scores))
    for key, name in _FINE:
        if key in scores:
            table.add_row(*_row(name, scores[key]))
    return table


COMMAND = Command(
    name="amr",
    help="AMR graphs: PENMAN files (corpus Smatch, exact; fine-grained scores)",
    description="Score predicted PENMAN graphs against gold graphs, in the same order: graphs separated by blank "
    "lines, '#' comment lines skipped (a '# ::id' names a pair). Smatch triples as smatch 1.0.4 reads them, with "
    "the optimal variable mapping (not hill climbing) found within a work budget per pair; alignment markers "
    "(~e.8) are removed unless --keep-alignments. JSON: {precision, recall, f1, matched, predicted, reference, "
    "pairs, pairs_optimal} (and pairs_timed_out with --time-limit); with --fine-grained also {unlabeled, no_wsd, "
    "concepts, named_entities, negations, wikification, reentrancies, srl}, each {precision, recall, f1}, as "
    "amr-evaluation defines them (--fine-grained-mode normalized: on normalized triples); with "
    "--per-pair also per_pair: [{id, precision, recall, f1, matched, predicted, reference, optimal, upper_bound, "
    "...}].",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "amr/gold.txt", "pred": "amr/pred.txt"},
    run=_run,
    table=_table,
    resample=_resample,
)
