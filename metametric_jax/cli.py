r"""The ``metametric-jax`` command: score prediction files against reference files from the shell.

Usage::

    metametric-jax score coref [--key KEY --response RESPONSE] [--format table|json]
    metametric-jax score ner   [--gold GOLD --pred PRED] [--scheme IOB2] [--format table|json]
    metametric-jax score amr   [--gold GOLD --pred PRED] [--format table|json]
    metametric-jax --version

Tasks:

* ``coref``: CoNLL-2012 coreference files (full column format or the reference scorer's two-column test files),
  scored as the reference scorer v8.01 does (Pradhan et al., ACL 2014): MUC, B³, CEAF-m, CEAF-e, BLANC, LEA, mention
  identification and the CoNLL score

  .. math::

      \mathrm{CoNLL} = \tfrac{1}{3}\left(F_1^{\mathrm{MUC}} + F_1^{\mathrm{B^3}} + F_1^{\mathrm{CEAF_e}}\right).

* ``ner``: CoNLL column files (last column the tag), span-level precision, recall and
  :math:`F_1 = 2PR / (P + R)` per entity type, micro and macro averaged (Tjong Kim Sang & De Meulder, 2003).
* ``amr``: PENMAN files, corpus Smatch with the exact optimal variable mapping (Cai & Knight, 2013).

Without file arguments a task scores its bundled sample (said on standard error). ``--format json`` prints the
task's figures as fractions in [0, 1] (see :func:`main`); warnings, notes, errors and the progress bar shown for
inputs of :data:`LARGE_INPUT` units or more go to standard error.

Exit status: 0 on success, 1 on unreadable or malformed input (``metametric-jax: error: FILE:LINE: MESSAGE``), 2 on
bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

__all__ = ["PROG", "LARGE_INPUT", "TASKS", "build_parser", "main"]

PROG = "metametric-jax"

#: Inputs with at least this many documents, sentences or graphs show a progress bar (unless ``--no-progress``).
LARGE_INPUT = 1000

_CHUNK = 256  # sentences per accumulator update when the NER scorer reports progress

Scores = dict[str, Any]


# ------------------------------------------------------------------------------------------------------------ progress
class _Progress:
    """A progress bar on standard error (``rich.progress``), or nothing when disabled."""

    def __init__(self, description: str, total: int, enabled: bool) -> None:
        self.description = description
        self.total = total
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(file=sys.stderr)
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def update(self, completed: int, total: int | None = None) -> None:
        """Set the number of units done (and the total, when the scorer knows it better than the first count)."""
        if self._bar is not None:
            self._bar.update(self._task, completed=completed, total=total if total is not None else self.total)


def _progress_wanted(option: bool | None, units: int) -> bool:
    return units >= LARGE_INPUT if option is None else option


def _count_lines(path: str, pattern: re.Pattern[bytes]) -> int:
    with open(path, "rb") as handle:
        return sum(1 for line in handle if pattern.match(line))


def _empty_warning(path: str, count: int, what: str) -> list[str]:
    """A warning when the reference file holds nothing to score (every figure is then 0)."""
    return [] if count else [f"{path} holds no {what}; every figure is 0"]


def _count_blocks(path: str) -> int:
    """The number of blank-line separated blocks holding a line that is not a ``#`` comment."""
    blocks, inside = 0, False
    with open(path, "rb") as handle:
        for raw in handle:
            line = raw.strip()
            if not line:
                inside = False
            elif not line.startswith(b"#") and not inside:
                blocks, inside = blocks + 1, True
    return blocks


# --------------------------------------------------------------------------------------------------------------- tasks
def _score_coref(key: str, response: str, args: argparse.Namespace) -> tuple[Scores, list[str]]:
    from metametric_jax.tasks import conll2012

    units = _count_lines(key, re.compile(rb"\s*#\s*begin document"))
    with _Progress("coref: scoring documents", units, _progress_wanted(args.progress, units)) as bar:
        scores, warnings = conll2012.score_files(key, response, progress=bar.update if bar.enabled else False)
        bar.update(units)
    order = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "conll", "mentions")
    return {name: scores[name] for name in order}, list(warnings) + _empty_warning(key, _count_blocks(key), "documents")


def _score_ner(gold_path: str, pred_path: str, args: argparse.Namespace) -> tuple[Scores, list[str]]:
    from metametric_jax.tasks import conll_ner, ner

    scheme = args.scheme
    gold = conll_ner.read_conll(gold_path, scheme)
    pred = conll_ner.read_conll(pred_path, scheme)
    conll_ner.check_aligned(gold, pred)
    n = len(gold.tags)
    if not _progress_wanted(args.progress, n):
        return ner.ner_report(pred.tags, gold.tags, scheme), _empty_warning(gold_path, n, "sentences")
    spans = ner.extract_batch(gold.tags, scheme) + ner.extract_batch(pred.tags, scheme)
    labels = sorted({span.label for sentence in spans for span in sentence})
    if not labels:
        return ner.ner_report(pred.tags, gold.tags, scheme), []
    metric = ner.ner_metric(labels, scheme)
    state = metric.empty()
    with _Progress("ner: scoring sentences", n, True) as bar:
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            state = state.merge(metric.from_model_output(pred.tags[lo:hi], gold.tags[lo:hi]))
            bar.update(hi)
    return ner.state_report(state), []


def _score_amr(gold: str, pred: str, args: argparse.Namespace) -> tuple[Scores, list[str]]:
    from metametric_jax.tasks import amr

    units = _count_blocks(gold)
    with _Progress("amr: scoring graph pairs", units, _progress_wanted(args.progress, units)) as bar:
        scores = amr.score_files(gold, pred, progress=bar.update if bar.enabled else False)
    return dict(scores), _empty_warning(gold, units, "graphs")


def _pct(value: float) -> str:
    return f"{100.0 * value:.2f}"


def _table_coref(scores: Scores) -> Any:
    from rich.table import Table

    table = Table(caption="scores in %; CoNLL = mean F1 of MUC, B3 and CEAFe")
    for column in ("Metric", "Recall", "Precision", "F1"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    names = {"muc": "MUC", "bcub": "B3", "ceafm": "CEAFm", "ceafe": "CEAFe", "blanc": "BLANC", "lea": "LEA"}
    for key, name in names.items():
        s = scores[key]
        table.add_row(name, _pct(s["recall"]), _pct(s["precision"]), _pct(s["f1"]))
    table.add_section()
    table.add_row("CoNLL", "", "", _pct(scores["conll"]["f1"]))
    s = scores["mentions"]
    table.add_row("Mentions", _pct(s["recall"]), _pct(s["precision"]), _pct(s["f1"]))
    return table


def _table_ner(scores: Scores) -> Any:
    from rich.table import Table

    table = Table(caption="scores in %; macro = unweighted mean over types")
    for column in ("Type", "Precision", "Recall", "F1", "Support"):
        table.add_column(column, justify="left" if column == "Type" else "right")
    support = 0
    for label, s in scores["per_type"].items():
        support += int(s["support"])
        table.add_row(label, _pct(s["precision"]), _pct(s["recall"]), _pct(s["f1"]), str(s["support"]))
    table.add_section()
    for average in ("micro", "macro"):
        s = scores[average]
        table.add_row(f"{average} avg", _pct(s["precision"]), _pct(s["recall"]), _pct(s["f1"]), str(support))
    return table


def _table_amr(scores: Scores) -> Any:
    from rich.table import Table

    table = Table(caption="scores in %")
    for column in ("Metric", "Precision", "Recall", "F1"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    table.add_row("Smatch", _pct(scores["precision"]), _pct(scores["recall"]), _pct(scores["f1"]))
    return table


@dataclasses.dataclass(frozen=True)
class Task:
    """A task of ``metametric-jax score``.

    Attributes:
        name: the task name on the command line.
        help: one line for ``score --help``.
        description: the task's ``--help`` text (file formats).
        sides: the two file options, reference first (``("key", "response")``).
        sample: the bundled sample's files under ``metametric_jax/data``, in the order of ``sides``.
        score: ``score(reference, prediction, args) -> (scores, warnings)``.
        table: ``table(scores) -> rich.table.Table``.
    """

    name: str
    help: str
    description: str
    sides: tuple[str, str]
    sample: tuple[str, str]
    score: Callable[[str, str, argparse.Namespace], tuple[Scores, list[str]]]
    table: Callable[[Scores], Any]


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "coref",
            "coreference: CoNLL-2012 key and response files (MUC, B3, CEAF, BLANC, LEA, CoNLL)",
            "Score a CoNLL-2012 response file against a key file as the reference scorer v8.01 does. Documents lie "
            "between '#begin document (NAME); part NNN' and '#end document'; the last column of a token line is the "
            "coreference column ('-', '(12', '12)', '(12)', '(3|(12)'). The full column format and the scorer's "
            "two-column test files are both read. JSON: {muc, bcub, ceafm, ceafe, blanc, lea, mentions: {recall, "
            "precision, f1}, conll: {f1}}.",
            ("key", "response"),
            ("coref/sample.key", "coref/sample.response"),
            _score_coref,
            _table_coref,
        ),
        Task(
            "ner",
            "named entities: CoNLL column files (span-level P/R/F1 per type, micro, macro)",
            "Score a predicted CoNLL column file against a gold one: one token per line, the last column the tag, a "
            "blank line between sentences, '-DOCSTART-' lines ignored. JSON: {micro: {precision, recall, f1}, macro: "
            "{...}, per_type: {TYPE: {precision, recall, f1, support}}}.",
            ("gold", "pred"),
            ("ner/gold.txt", "ner/pred.txt"),
            _score_ner,
            _table_ner,
        ),
        Task(
            "amr",
            "AMR graphs: PENMAN files (corpus Smatch, exact)",
            "Score predicted PENMAN graphs against gold graphs, in the same order: graphs separated by blank lines, "
            "'#' comment lines skipped. JSON: {precision, recall, f1}.",
            ("gold", "pred"),
            ("amr/gold.txt", "amr/pred.txt"),
            _score_amr,
            _table_amr,
        ),
    )
}


# -------------------------------------------------------------------------------------------------------------- parser
def _scheme(value: str) -> str:
    from metametric_jax.tasks.ner import normalize_scheme

    try:
        return normalize_scheme(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _output_options() -> argparse.ArgumentParser:
    """Options accepted both before and after the task name (``score --format json ner`` or ``score ner --format``)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--format", choices=("table", "json"), default=argparse.SUPPRESS, help="output format (default: table)"
    )
    parent.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help=f"show a progress bar on standard error (default: for inputs of {LARGE_INPUT} units or more)",
    )
    return parent


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``metametric-jax``."""
    from metametric_jax import __version__

    parser = argparse.ArgumentParser(
        prog=PROG, description="Structured-prediction metrics (metametric_jax) from the command line."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    output = _output_options()
    score = commands.add_parser(
        "score",
        parents=[output],
        help="score a prediction file against a reference file",
        description="Score a prediction file against a reference file (see 'score TASK --help' for the file "
        "formats). Without file arguments, score the task's bundled sample.",
    )
    tasks = score.add_subparsers(dest="task", metavar="TASK", title="tasks")
    tasks.required = True
    for task in TASKS.values():
        sub = tasks.add_parser(task.name, parents=[output], help=task.help, description=task.description)
        reference, prediction = task.sides
        sub.add_argument(f"--{reference}", metavar="FILE", help=f"the {reference} (reference) file")
        sub.add_argument(f"--{prediction}", metavar="FILE", help=f"the {prediction} (system output) file")
        if task.name == "ner":
            from metametric_jax.tasks.ner import SCHEMES

            sub.add_argument(
                "--scheme",
                type=_scheme,
                default="IOB2",
                help=f"the tag scheme of both files, one of {', '.join(SCHEMES)} (default: IOB2)",
            )
        sub.set_defaults(parser_=sub)
    return parser


# ---------------------------------------------------------------------------------------------------------------- main
def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def _decode_problem(paths: Sequence[str]) -> str:
    """``FILE:LINE: message`` for the first of ``paths`` that is not UTF-8 text."""
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            return (
                f"{path}:{line}: expected UTF-8 text; found the byte 0x{data[err.start]:02x}, which is not valid UTF-8"
            )
    return "expected UTF-8 text"


def _render(task: Task, scores: Scores, title: str, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(scores, indent=2))
        return
    from rich.console import Console

    table = task.table(scores)
    table.title = title
    Console(file=sys.stdout).print(table)


def _run(task: Task, args: argparse.Namespace, sub: argparse.ArgumentParser) -> int:
    reference_side, prediction_side = task.sides
    reference, prediction = getattr(args, reference_side), getattr(args, prediction_side)
    if (reference is None) != (prediction is None):
        missing = prediction_side if prediction is None else reference_side
        given = reference_side if prediction is None else prediction_side
        sub.error(f"--{given} needs --{missing}: give both files, or neither to score the bundled sample")
    with contextlib.ExitStack() as stack:
        if reference is None:
            base = resources.files("metametric_jax") / "data"
            reference, prediction = (
                os.fspath(stack.enter_context(resources.as_file(base.joinpath(*name.split("/")))))
                for name in task.sample
            )
            print(
                f"{PROG}: no input files given; scoring the bundled {task.name} sample "
                f"(--{reference_side} {reference} --{prediction_side} {prediction})",
                file=sys.stderr,
            )
            title = f"{task.name}: bundled sample {os.path.basename(reference)} vs {os.path.basename(prediction)}"
        else:
            title = f"{task.name}: {prediction} vs {reference}"
        from metametric_jax.errors import InputFormatError

        try:
            scores, warnings = task.score(reference, prediction, args)
        except InputFormatError as err:
            return _error(str(err))
        except UnicodeDecodeError:
            return _error(_decode_problem([reference, prediction]))
        except OSError as err:
            return _error(f"{err.filename or reference}: {err.strerror or err}")
    for warning in warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    _render(task, scores, title, getattr(args, "format", "table"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``metametric-jax`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    ``--format json`` prints, with values in [0, 1]:

    * ``coref``: ``{"muc": {"recall", "precision", "f1"}, "bcub", "ceafm", "ceafe", "blanc", "lea": {...},
      "conll": {"f1"}, "mentions": {...}}``;
    * ``ner``: ``{"micro": {"precision", "recall", "f1"}, "macro": {...}, "per_type": {TYPE: {"precision",
      "recall", "f1", "support"}}}``;
    * ``amr``: ``{"precision", "recall", "f1"}``.

    Returns:
        0 on success, 1 on a missing, unreadable or malformed input file, 2 on bad usage (argparse's status).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        if not hasattr(args, "progress"):
            args.progress = None
        return _run(TASKS[args.task], args, args.parser_)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    except BrokenPipeError:
        # The reader of standard output went away (``| head``): stop quietly, as shell tools do.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
