"""``metametric-jax score coref``: CoNLL-2012 coreference files, scored as the reference scorer v8.01 does.

The table prints what ``scorer.pl`` prints: each metric's recall and precision as ``(numerator / denominator)`` and
percentages truncated to two decimals (``int(x * 10000) / 100``, not rounded); the JSON keeps full precision.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

from metametric_jax._table import Scale
from metametric_jax.commands import Command, Progress, Resampling

_METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea")
_NAMES = {"muc": "MUC", "bcub": "B3", "ceafm": "CEAFm", "ceafe": "CEAFe", "blanc": "BLANC", "lea": "LEA"}


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="*", metavar="KEY RESPONSE", help="the key and response files, in scorer.pl's order"
    )
    parser.add_argument("--key", metavar="FILE", help="the key (reference) file")
    parser.add_argument("--response", metavar="FILE", help="the response (system output) file")
    parser.add_argument(
        "--metric",
        choices=(*_METRICS, "all"),
        default="all",
        help="the metric to print, as scorer.pl's first argument (default: all, with LEA and the CoNLL average)",
    )
    parser.add_argument("--per-document", action="store_true", help="also print the figures of each key document")
    parser.add_argument(
        "--repeated-mentions",
        choices=("scorer", "first"),
        default="scorer",
        help="count repeated spans as scorer v8.01 does (default), or keep each span once on both sides",
    )
    parser.add_argument(
        "--max-repeated-mentions",
        type=repeat_limit,
        default=10,
        metavar="N",
        help="refuse a response that gives key mentions again more than N times (scorer v8.01: 10; -1: no limit)",
    )
    parser.add_argument(
        "--check-words",
        action="store_true",
        help="refuse documents whose words differ from the key's (default: a warning; token counts always checked)",
    )


def repeat_limit(text: str) -> int | None:
    """``--max-repeated-mentions``: a count of 0 or more, or -1 for no limit (None)."""
    try:
        value = int(text)
    except ValueError:
        value = -2
    if value < -1:
        raise argparse.ArgumentTypeError(f"expected a count of 0 or more, or -1 for no limit; found {text!r}")
    return None if value == -1 else value


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    files = args.files or []
    if not files:
        return
    if args.key is not None or args.response is not None:
        parser.error("give the files as KEY RESPONSE or as --key FILE --response FILE, not both")
    if len(files) != 2:
        parser.error(f"expected two files, KEY RESPONSE; found {len(files)}")
    args.key, args.response = files


def _select(scores: dict[str, Any], metric: str) -> dict[str, Any]:
    if metric == "all":
        return scores
    return {"mentions": scores["mentions"], metric: scores[metric]}


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import coref_files
    from metametric_jax.tasks.readers.conll2012 import count_documents

    units = count_documents(args.key)
    with Progress("coref: scoring documents", units, Progress.wanted(args.progress, units)) as bar:
        report = coref_files.score_files(
            predictions=args.response,
            references=args.key,
            repeated_mentions=args.repeated_mentions,
            max_repeated_mentions=args.max_repeated_mentions,
            check_words=args.check_words,
            progress=bar.update if bar.enabled else None,
            jobs=getattr(args, "jobs", 1),
        )
    scores = _select(report.scores, args.metric)
    if args.per_document:
        documents = {
            item["id"]: _select({k: v for k, v in item.items() if k != "id"}, args.metric) for item in report.items
        }
        scores = {"all": scores, "per_document": documents}
    return scores, report.warnings


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks import coref_files
    from metametric_jax.tasks.coref_counts import count_rows, readout

    ids, counts, warnings = coref_files.count_files(
        predictions=args.response,
        references=args.key,
        repeated_mentions=args.repeated_mentions,
        max_repeated_mentions=args.max_repeated_mentions,
        check_words=args.check_words,
        jobs=getattr(args, "jobs", 1),
    )
    rows = count_rows(counts)
    return Resampling(
        rows,
        functools.partial(readout, metric=args.metric),
        unit="documents",
        ids=ids,
        warnings=tuple(warnings),
        truncated=True,
    )


#: scorer.pl's percentages: truncated, not rounded, to two decimals (every coreference table prints them so)
SCALE = Scale(100, truncated=True)


def _truncated(value: float) -> str:
    """A fraction as scorer.pl prints a percentage: truncated, not rounded, to two decimals."""
    return SCALE.cell(value)


def _count(value: float) -> str:
    """A numerator or denominator as scorer.pl (Perl) prints it: 15 significant digits."""
    return f"{value:.15g}"


def _rows(scores: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per figure: name, then recall and precision as a truncated percentage over ``(num / den)``, then F1."""
    rows: list[tuple[str, ...]] = []

    def add(name: str, f: dict[str, Any], counts: tuple[float, float, float, float] | None = None) -> None:
        nr, dr, np_, dp = counts or (f["recall_num"], f["recall_den"], f["precision_num"], f["precision_den"])
        recall = f"{_truncated(f['recall'])}\n({_count(nr)} / {_count(dr)})"
        precision = f"{_truncated(f['precision'])}\n({_count(np_)} / {_count(dp)})"
        rows.append((name, recall, precision, _truncated(f["f1"])))

    add("Mentions", scores["mentions"])
    for metric in _METRICS:
        if metric not in scores:
            continue
        f = scores[metric]
        if metric == "blanc":
            add("BLANC\ncoref links", f["coreference_links"])
            add("BLANC\nnon-coref links", f["non_coreference_links"])
            add("BLANC", f, (f["recall"], 1, f["precision"], 1))
        else:
            add(_NAMES[metric], f)
    if "conll" in scores:
        rows.append(("CoNLL", "", "", _truncated(scores["conll"]["f1"])))
    return rows


class _Tables:
    """Tables printed one after the other, the run's ``title`` (set by the command line) above them."""

    def __init__(self, tables: list[Any]) -> None:
        self.tables = tables
        self.title: str | None = None

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        if self.title:
            yield Text(self.title, style="italic", justify="center")
        yield from self.tables


def _one_table(scores: dict[str, Any], title: str | None = None, caption: bool = True) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(box=box.MINIMAL, show_lines=True, title=title, title_justify="left")
    if caption:
        table.caption = "% truncated to two decimals over (numerator / denominator), as scorer.pl prints them"
        if "conll" in scores:
            table.caption += "; CoNLL = mean F1 of MUC, B3, CEAFe"
    for column in ("Metric", "Recall", "Precision", "F1"):
        table.add_column(column, justify="right" if column == "F1" else "left", no_wrap=column != "Metric")
    for row in _rows(scores):
        table.add_row(*row)
    return table


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    if not args.per_document:
        return _one_table(scores)
    tables = [_one_table(figures, doc_id, caption=False) for doc_id, figures in scores["per_document"].items()]
    return _Tables([*tables, _one_table(scores["all"], "TOTAL")])


COMMAND = Command(
    name="coref",
    help="coreference: CoNLL-2012 key and response files (MUC, B3, CEAF, BLANC, LEA, CoNLL)",
    description="Score a CoNLL-2012 response file against a key file as the reference scorer v8.01 (scorer.pl) "
    "does. Documents lie between '#begin document (NAME); part NNN' and '#end document'; the last column of a token "
    "line is the coreference column ('-', '(12', '12)', '(12)', '(3|(12)'). The full column format and the scorer's "
    "two-column test files are both read; key and response documents must hold the same tokens. The table prints "
    "numerators, denominators and truncated percentages as scorer.pl does. JSON (full precision): {mentions, muc, "
    "bcub, ceafm, ceafe, lea: {recall, precision, f1, recall_num, recall_den, precision_num, precision_den}, blanc: "
    "{recall, precision, f1, coreference_links, non_coreference_links}, conll: {f1}}; with --metric, the mentions and "
    "that metric; with --per-document, {all: ..., per_document: {document: ...}}.",
    add_arguments=_add_arguments,
    inputs=("key", "response"),
    sample={"key": "coref/sample.key", "response": "coref/sample.response"},
    run=_run,
    table=_table,
    resolve=_resolve,
    resample=_resample,
    preload=("scipy.optimize",),  # CEAF's blocks of more than 8 entities
)
