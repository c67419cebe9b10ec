"""``metametric-jax score ner``: CoNLL column files, span-level precision, recall and F1 per entity type.

Two files (``--gold G --pred P``, the tag in the last column) or ``conlleval``'s one-file layout (``--file F``, the
reference and predicted tags in the last two columns), with ``conlleval``'s ``-d``, ``-o`` and ``-r``. The counts
are ``conlleval``'s, with a warning where its reading is questionable (``-DOCSTART-`` lines counted as tokens, and as
chunks where they carry an entity tag; ``-o`` ignored without ``-r``; see
:func:`metametric_jax.tasks.ner.score_files`). The run imports NumPy and the host scorer only (no JAX).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from metametric_jax._table import Scale
from metametric_jax.commands import Command, Progress, Resampling
from metametric_jax.tasks.schemes import SCHEMES


def _scheme(value: str) -> str:
    from metametric_jax.tasks.schemes import normalize_scheme

    try:
        return normalize_scheme(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _delimiter(value: str) -> str:
    from metametric_jax.tasks.readers.conll import split_fields

    try:
        split_fields(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return value


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gold", metavar="FILE", help="the gold (reference) file, the tag in the last column")
    parser.add_argument("--pred", metavar="FILE", help="the predicted (system output) file, the tag in the last column")
    parser.add_argument(
        "--file",
        metavar="FILE",
        help="one file in conlleval's layout: the gold and the predicted tag in the last two columns ('-': standard "
        "input, as conlleval.pl reads it)",
    )
    parser.add_argument(
        "--scheme",
        type=_scheme,
        default="IOB2",
        help=f"the tag scheme, one of {', '.join(SCHEMES)} (default: IOB2)",
    )
    parser.add_argument(
        "-d",
        "--delimiter",
        type=_delimiter,
        default=None,
        metavar="DELIM",
        help="the field separator, a regular expression as conlleval -d takes it (default: any whitespace)",
    )
    parser.add_argument(
        "-o",
        "--outside",
        default=None,
        metavar="TAG",
        help="the outside tag of raw tags, read as O (default: O); as conlleval, -o applies with -r only and is "
        "ignored without it, with a warning",
    )
    parser.add_argument(
        "-r",
        "--raw",
        action="store_true",
        help="tags without prefixes: every non-outside token is a chunk (a file of one column is refused: give the "
        "token and the tag column)",
    )
    parser.add_argument(
        "--unit",
        choices=("sentence", "document"),
        default=None,
        help="what --bootstrap and compare resample: the documents the reference file's -DOCSTART- lines start "
        "(the default where it has them; asking for documents of a file without them is an error) or the sentences "
        "(the default otherwise)",
    )


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if args.file is not None:
        if args.gold is not None or args.pred is not None:
            parser.error("--file replaces --gold and --pred: give one file, or the two")
        args.gold = args.pred = args.file


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks import ner

    with contextlib.ExitStack() as stack:
        bars: list[Progress] = []

        def progress(done: int, total: int) -> None:
            if not bars:
                enabled = Progress.wanted(args.progress, total)
                bars.append(stack.enter_context(Progress("ner: scoring sentences", total, enabled)))
            bars[0].update(done, total)

        files = {"file": args.file} if args.file is not None else {"references": args.gold, "predictions": args.pred}
        report = ner.score_files(
            **files,
            scheme=args.scheme,
            delimiter=args.delimiter,
            outside=args.outside,
            raw=args.raw,
            progress=progress,
            jobs=getattr(args, "jobs", 1),
        )
    return report.scores, list(report.warnings)


#: FileRows of recently read files, by (files, options, file signatures): compare reads each system once
_ROWS: dict[tuple[Any, ...], Any] = {}


def _signature(path: str) -> tuple[Any, ...]:
    import os

    info = os.stat(path)
    return (os.path.abspath(path), info.st_mtime_ns, info.st_size)


def _file_rows(args: argparse.Namespace, pred: str) -> Any:
    from metametric_jax.tasks import ner

    options = {"scheme": args.scheme, "delimiter": args.delimiter, "outside": args.outside, "raw": args.raw}
    jobs = getattr(args, "jobs", 1)
    if args.file is not None and pred == args.file:
        files = {"file": args.file}
    else:
        files = {"references": args.gold, "predictions": pred}
    if "-" in files.values():  # standard input is read once
        return ner.file_rows(**files, **options, jobs=jobs)
    key = (tuple(sorted((k, _signature(v)) for k, v in files.items())), tuple(sorted(options.items())))
    if key not in _ROWS:
        while len(_ROWS) >= 4:
            _ROWS.pop(next(iter(_ROWS)))
        _ROWS[key] = ner.file_rows(**files, **options, jobs=jobs)
    return _ROWS[key]


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.errors import InputFormatError

    pred = args.pred if args.pred is not None else args.file  # --file: the one file holds both sides
    got = _file_rows(args, pred)
    labels = set(got.labels)
    for other in getattr(args, "system", None) or ():  # compare: every system's rows have the same columns
        if other != pred:
            labels.update(_file_rows(args, other).labels)
    got = got.with_labels(sorted(labels))
    documents = got.documents()
    unit = args.unit or ("document" if documents is not None else "sentence")
    if unit == "document" and documents is None:
        raise InputFormatError(
            got.references.path,
            None,
            "--unit document: the file has no -DOCSTART- line to start a document; give "
            "--unit sentence to resample sentences",
        )
    if unit == "sentence":
        return Resampling(got.rows, got.readout, unit="sentences", warnings=got.warnings, of_counts=True)
    return Resampling(got.rows, got.readout, unit="documents", groups=documents, warnings=got.warnings, of_counts=True)


def summary(scores: dict[str, Any]) -> str:
    """The counts line ``conlleval`` prints first, from a score dict."""
    c = scores["counts"]
    return (
        f"processed {c['tokens']} tokens with {c['phrases']} phrases; found: {c['found']} phrases; "
        f"correct: {c['correct']}."
    )


#: conlleval's percentages: ``100 * count / total`` (every NER table prints them so)
SCALE = Scale(of_counts=True)


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    percent = SCALE.cell
    accuracy = f"accuracy {percent(scores['accuracy'])}%"
    table = Table(caption=f"{summary(scores)}\n{accuracy}; scores in %; macro = unweighted mean over types")
    for column in ("Type", "Precision", "Recall", "F1", "Support", "Found"):
        table.add_column(column, justify="left" if column == "Type" else "right")
    for label, s in scores["per_type"].items():
        row = (percent(s["precision"]), percent(s["recall"]), percent(s["f1"]), str(s["support"]), str(s["predicted"]))
        table.add_row(label, *row)
    table.add_section()
    support, found = str(scores["counts"]["phrases"]), str(scores["counts"]["found"])
    for average in ("micro", "macro", "weighted"):
        s = scores[average]
        table.add_row(f"{average} avg", percent(s["precision"]), percent(s["recall"]), percent(s["f1"]), support, found)
    return table


COMMAND = Command(
    name="ner",
    help="named entities: CoNLL column files or conlleval's layout (span-level P/R/F1 per type, micro, macro)",
    description="Score named entities as conlleval does. Two files (--gold, --pred): one token per line, the last "
    "column the tag, a blank line between sentences. One file (--file): conlleval's layout, the gold and the predicted "
    "tag in the last two columns ('-X-' as first field also ends a sentence). A '-DOCSTART-' line ends a sentence "
    "and counts as a token with its tags, and as a chunk where it carries an entity tag, as conlleval counts it (a "
    "warning says so); these lines start the documents that --bootstrap and compare resample (see --unit). JSON: {f1 "
    "(micro, the headline), micro, macro, weighted: {precision, recall, f1}, accuracy, counts: {tokens, phrases, "
    "found, correct, correct_tags}, per_type: {TYPE: {precision, recall, f1, support, predicted, correct}}}.",
    add_arguments=_add_arguments,
    inputs=("gold", "pred"),
    sample={"gold": "ner/gold.txt", "pred": "ner/pred.txt"},
    run=_run,
    table=_table,
    resolve=_resolve,
    resample=_resample,
)
