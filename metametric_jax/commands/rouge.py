"""``metametric-jax score rouge``: summaries, one per line, scored as rouge-score 0.1.2 scores them."""

from __future__ import annotations

import argparse
import functools
from typing import Any

from metametric_jax.commands import Command, Progress, Resampling, percent

_DEFAULT_TYPES = "rouge1,rouge2,rougeL,rougeLsum"
_CHUNK = 512  # examples per progress update


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--references",
        metavar="FILE",
        action="append",
        help="a reference file; repeat for several references per example (each type keeps the best F1)",
    )
    parser.add_argument("--predictions", metavar="FILE", help="the predicted summaries")
    parser.add_argument(
        "--use-stemmer",
        action="store_true",
        help="Porter-stem tokens longer than 3 characters (rouge-score's use_stemmer=True)",
    )
    parser.add_argument(
        "--types",
        default=_DEFAULT_TYPES,
        metavar="LIST",
        help=f"comma-separated ROUGE types: rougeN for any N, rougeL, rougeLsum (default: {_DEFAULT_TYPES})",
    )


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    from metametric_jax.tasks.rouge import parse_types

    try:
        args.types = parse_types(args.types)
    except ValueError as err:
        parser.error(f"argument --types: {err}")


def _stats(args: argparse.Namespace, preds: list[str], refs: list[Any], progress: Any = None) -> Any:
    """Each example's statistics per type, in ``--jobs`` worker processes: the same arrays for every number."""
    from metametric_jax.tasks import rouge

    jobs = getattr(args, "jobs", 1)
    return rouge.stats_in_chunks(preds, refs, args.types, use_stemmer=args.use_stemmer, jobs=jobs, progress=progress)


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import rouge

    preds, refs = rouge.read_pairs(args.predictions, args.references)
    n = len(preds)
    warnings = _warnings(args, n)
    if getattr(args, "jobs", 1) != 1:
        with Progress("rouge: scoring examples", n, Progress.wanted(args.progress, n)) as bar:
            stats = _stats(args, preds, refs, bar.update if bar.enabled else None)
        return rouge.mean_figures(stats), warnings
    if not Progress.wanted(args.progress, n):
        return rouge.score(preds, refs, types=args.types, use_stemmer=args.use_stemmer, multi_reference=True), warnings
    parts: list[dict[str, Any]] = []
    with Progress("rouge: scoring examples", n, True) as bar:
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            parts.append(
                rouge.rouge_stats(
                    preds[lo:hi], refs[lo:hi], args.types, use_stemmer=args.use_stemmer, multi_reference=True
                )
            )
            bar.update(hi)
    import numpy as np

    stats = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros((0, 3)) for k in args.types}
    return rouge.mean_figures(stats), warnings


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    caption = "scores in %; mean over examples" + ("; Porter-stemmed" if getattr(args, "use_stemmer", False) else "")
    table = Table(caption=caption)
    for column in ("Type", "Precision", "Recall", "F1"):
        table.add_column(column, justify="left" if column == "Type" else "right")
    for kind, s in scores.items():
        if isinstance(s, dict) and "precision" in s:  # the ROUGE types (not --bootstrap's intervals beside them)
            table.add_row(kind, percent(s["precision"]), percent(s["recall"]), percent(s["f1"]))
    return table


def _warnings(args: argparse.Namespace, n: int) -> list[str]:
    return [] if n else [f"{args.predictions} holds no examples; every figure is 0"]


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks import rouge

    preds, refs = rouge.read_pairs(args.predictions, args.references)
    stats = _stats(args, preds, refs)
    return Resampling(
        rouge.example_rows(stats),
        functools.partial(rouge.readout, types=tuple(args.types)),
        unit="examples",
        warnings=tuple(_warnings(args, len(preds))),
    )


COMMAND = Command(
    name="rouge",
    help="summaries: ROUGE-N, ROUGE-L, ROUGE-Lsum as rouge-score computes them",
    description="Score predicted summaries against one or more reference files, example by example (line i of each "
    "file): a .jsonl file holds one JSON string per line (sentences separated by \\n, for rougeLsum), any other file "
    "one summary per line. Tokens as rouge-score's: lower-cased, runs of [a-z0-9]. With several --references, each "
    'ROUGE type keeps the reference of highest F1 (rouge-score\'s score_multi). JSON: {"rouge1": {"precision", '
    '"recall", "f1"}, ...}, the means over examples.',
    add_arguments=_add_arguments,
    inputs=("references", "predictions"),
    sample={"references": ["rouge/references.txt"], "predictions": "rouge/predictions.txt"},
    run=_run,
    table=_table,
    resolve=_resolve,
    resample=_resample,
)
