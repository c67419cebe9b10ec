"""The tasks of ``metametric-jax score``: one module per task, each defining ``COMMAND = Command(...)``.

The command line is generated from the modules of this package (:func:`registry`), so adding a task means adding a
module here, not editing :mod:`metametric_jax.cli`. A command module imports only the standard library at module level
(``metametric-jax --help`` reads every module); the scorer is imported inside ``run``.

A task gets ``metametric-jax analyze TASK`` from an :class:`Analyze` hook: its command's ``analyze`` field, or an
``ANALYZE = Analyze(task=..., ...)`` in a module of this package (attached to the command of that name), built from
the task's parts by :func:`metametric_jax.commands._analysis.analysis_hook`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = [
    "Command",
    "Format",
    "Analyze",
    "Resampling",
    "Progress",
    "registry",
    "task_names",
    "count_blocks",
    "count_lines",
    "empty_warning",
    "percent",
    "LARGE_INPUT",
]

#: Inputs with at least this many documents, sentences or graphs show a progress bar (unless ``--no-progress``).
LARGE_INPUT = 1000


class Progress:
    """A progress bar on standard error (``rich.progress``), or nothing when disabled.

    ``with Progress("coref: scoring documents", total, enabled) as bar: bar.update(done)``.
    """

    def __init__(self, description: str, total: int, enabled: bool) -> None:
        self.description = description
        self.total = total
        self.enabled = enabled
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr, markup=False, emoji=False),
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

    @staticmethod
    def wanted(option: bool | None, units: int) -> bool:
        """Whether to show progress: ``--progress`` / ``--no-progress``, else for inputs of LARGE_INPUT units or more.

        Args:
            option: the ``--progress`` option (``None`` when not given).
            units: the number of documents, sentences or graphs of the input.
        """
        return units >= LARGE_INPUT if option is None else bool(option)


class Resampling(NamedTuple):
    """What ``score --bootstrap`` and ``compare`` resample: one system's examples as additive rows, and the read-out.

    A task's figures are one float64 function of its summed statistics (its read-out), so ``score``, the estimate
    beside an interval, ``compare``'s figures and every bootstrap replicate are the same computation
    (:mod:`metametric_jax.intervals`).

    Attributes:
        rows: float64 ``(n, D)``: example ``i``'s additive contribution to the task's totals (counts, sums of
            per-example scores, and a column of ones where the read-out averages over examples).
        readout: the task's figures from totals ``(D,)`` (float64; any non-negative real totals, as the bootstrap
            weights rows): a nested dict of floats shaped like the figures of the task's JSON output (counts left
            out), ``None`` where a figure does not exist. ``readout(exact_totals(rows))`` equals the task's ``score``
            JSON bit for bit at the same paths: the task's scorer computes its figures with this same function.
        unit: what an example is, plural, for messages and the JSON (``"documents"``, ``"sentences"``...).
        ids: the examples' names (document ids, query ids), to check that two systems are paired; ``None``: by
            position.
        groups: ``None``, or one label per row naming the unit resampled (rows of a unit are summed first: the
            sentences of a document); ``unit`` then names those units.
        warnings: what the task's ``score`` warns about the same input (reading, alignment), repeated by ``compare``.
        scale: how the task's table prints figures: ``100`` (percentages, 2 decimals) or ``1`` (fractions, 4
            decimals, as trec_eval prints them).
        truncated: whether the task's table cuts the last digit rather than rounding it (coreference, as scorer.pl);
            the intervals, ``compare`` and ``analyze`` print its figures alike (:class:`metametric_jax._table.Scale`).
        of_counts: whether the task's table prints a percentage as ``100.0 * a / b`` of its counts (EVALB, conlleval)
            rather than 100 times the fraction (:class:`metametric_jax._table.Scale`).
        numbers: the figures (a path's last name) that are no fractions: every table prints them as they are.
    """

    rows: Any
    readout: Callable[[Any], dict[str, Any]]
    unit: str = "examples"
    ids: list[Any] | None = None
    groups: Any = None
    warnings: tuple[str, ...] = ()
    scale: float = 100.0
    truncated: bool = False
    of_counts: bool = False
    numbers: tuple[str, ...] = ()


class Analyze(NamedTuple):
    """A task's ``metametric-jax analyze TASK``: figures per bucket of items and paired tests of several systems.

    The command line reads the task's file options (the command's ``add_arguments``), ``--references`` (the
    command's first input) and ``--system FILE`` (once per system, the first the baseline), the resampling and
    correction options (``--samples``, ``--seed``, ``--correction``, ``--statistic``, ``--min-units``) and the
    output options; ``run`` builds the report, :mod:`metametric_jax.analysis_report` renders it.

    Attributes:
        task: the name of the task's command.
        run: ``run(args, systems) -> report``: the versioned JSON report (a dict; see
            :mod:`metametric_jax.analysis` for its ``correction`` and ``analyses``); ``args`` carries the reference
            file at the command's first input dest and ``samples``, ``seed``, ``correction``, ``statistic``,
            ``min_units``. Raises ``InputFormatError`` on malformed input, ``ValueError`` on a bad request.
        add_arguments: adds the options only ``analyze`` takes (``--frequency-from`` for NER), or None.
        description: what the task's analyses are, for ``analyze TASK --help``.
    """

    task: str
    run: Callable[[argparse.Namespace, list[str]], dict[str, Any]]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    description: str = ""


class Format(NamedTuple):
    """An output format of one task, beside ``table`` and ``json``: ``score TASK --format NAME``.

    The format prints the task's own report in place of the table or JSON (``trec`` for ranking: trec_eval's
    printout). Other tasks refuse the name as an invalid ``--format`` choice; ``score TASK --bootstrap`` refuses it
    (a task's own format has no form for intervals); ``--jobs`` works as for the other formats.

    Attributes:
        help: what the format prints, for the task's ``--help``.
        run: ``run(args) -> (text, warnings)``: reads and scores the input files of ``args`` (as the command's
            ``run``) and returns the whole of standard output (every line ending in a newline) and the warnings.
            Raises as the command's ``run``.
    """

    help: str
    run: Callable[[argparse.Namespace], tuple[str, list[str]]]


class Command(NamedTuple):
    """A task of ``metametric-jax score``.

    Attributes:
        name: the task name on the command line.
        help: one line for ``score --help``.
        description: the task's ``--help`` text (file formats, the JSON it prints).
        add_arguments: adds the task's file options and task options to its parser. File options default to None.
        inputs: the argparse ``dest`` of each input file option, reference side first (for messages and samples).
        sample: ``dest -> file`` (or a list of files, for an option that takes several) under ``metametric_jax/data``,
            scored when no input file is given.
        run: ``run(args) -> (scores, warnings)``; ``args.progress`` is ``True``, ``False`` or ``None`` (decide with
            :meth:`Progress.wanted`). Raises ``InputFormatError`` on malformed input.
        table: ``table(scores, args)`` for ``--format table``: a :class:`metametric_jax._table.Table` or any rich
            renderable.
        resolve: optional ``resolve(args, parser)`` run after parsing and before the inputs are checked (to fold
            positional file arguments into the ``inputs`` dests, or to reject option combinations with
            ``parser.error``).
        resample: optional ``resample(args) -> Resampling`` for the input files in ``args``: what ``score
            --bootstrap`` and ``compare`` need (``inputs[0]`` is the reference side, ``inputs[1]`` the system).
        analyze: optional :class:`Analyze` hook: ``metametric-jax analyze TASK``.
        preload: modules, beyond the task's own, that ``--jobs`` workers use (a library the task imports only when
            it needs it, such as SciPy): the worker server imports them once and every worker shares them.
        formats: the task's own output formats of ``score``, by name (:class:`Format`), beside ``table`` and
            ``json``.
    """

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    inputs: tuple[str, ...]
    sample: Mapping[str, str | list[str]]
    run: Callable[[argparse.Namespace], tuple[dict[str, Any], list[str]]]
    table: Callable[[dict[str, Any], argparse.Namespace], Any]
    resolve: Callable[[argparse.Namespace, argparse.ArgumentParser], None] | None = None
    resample: Callable[[argparse.Namespace], Resampling] | None = None
    analyze: Analyze | None = None
    preload: tuple[str, ...] = ()
    formats: Mapping[str, Format] = MappingProxyType({})


def _modules() -> list[str]:
    """The modules of this package but the private ones, as their file names say.

    ``pkgutil.iter_modules`` would import ``inspect`` (several milliseconds of a command line's start-up).
    """
    return sorted(
        {name[:-3] for path in __path__ for name in os.listdir(path) if name.endswith(".py") and name[0] != "_"}
    )


def task_names() -> list[str]:
    """The tasks' names, without importing their modules: a task's command lives in the module of its name."""
    return [name for name in _modules() if not name.endswith("_analysis")]


def registry(only: str | None = None, analyses: bool = True) -> dict[str, Command]:
    """Every command of this package, by name, in alphabetical order of module, with its :class:`Analyze` hook.

    ``only``: that task's command alone (its module and its ``_analysis`` module are the only ones imported).
    ``analyses``: False to leave the ``_analysis`` modules unimported and the commands without their hooks (what
    ``score`` and ``compare`` need: the analysis machinery is a millisecond of a short run's start-up).

    Raises:
        ValueError: a module defines a command named otherwise (a task's command lives in the module of its name,
            which ``only`` and the ``--jobs`` workers rely on).
    """
    out: dict[str, Command] = {}
    hooks: list[Analyze] = []
    names = _modules()
    wanted = names if only is None else [n for n in (only, f"{only}_analysis") if n in names]
    for name in wanted if analyses else [n for n in wanted if not n.endswith("_analysis")]:
        module = importlib.import_module(f"{__name__}.{name}")
        command = getattr(module, "COMMAND", None)
        if isinstance(command, Command):
            if command.name != name:
                raise ValueError(f"{module.__name__} defines the command {command.name!r}: rename one of the two")
            out[command.name] = command
        hook = getattr(module, "ANALYZE", None)
        if isinstance(hook, Analyze):
            hooks.append(hook)
    for hook in hooks:
        command = out.get(hook.task)
        if command is not None and command.analyze is None:
            out[hook.task] = command._replace(analyze=hook)
    return out


def count_lines(path: str, pattern: re.Pattern[bytes]) -> int:
    """The number of lines of ``path`` that match ``pattern`` (bytes)."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if pattern.match(line))


def count_blocks(path: str) -> int:
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


def empty_warning(path: str, count: int, what: str) -> list[str]:
    """A warning when the reference file holds nothing to score (every figure is then 0)."""
    return [] if count else [f"{path} holds no {what}; every figure is 0"]


def percent(value: float) -> str:
    """A fraction as a percentage with two decimals (``0.5 -> '50.00'``), as every table prints one by default."""
    from metametric_jax._table import Scale

    return Scale().cell(value)
