"""The ``metametric-jax analyze TASK`` hooks, built from a few parts of each task (:func:`analysis_hook`).

Every hook runs the same way: it refuses the ``score`` options an analysis has no use for (left out of its help), then
passes the reference file (the command's first input), the ``--system`` files, the task's file options, the tests'
settings (:data:`SETTINGS`) and ``--jobs`` (``jobs``: the worker processes that count, as ``score --jobs``) to
``analyze_files`` of the task's analysis module, ``metametric_jax.tasks.<task>_analysis``, imported when the command
runs (NumPy and the host scorer only, no JAX). A hook module declares the parts:
``ANALYZE = analysis_hook("ner", reference="gold", options=(...), refused={...}, description=...)``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from metametric_jax.cli_analysis import integer
from metametric_jax.commands import Analyze

__all__ = ["SETTINGS", "analysis_hook", "hide_refused", "positive", "add_bins", "add_bucket"]

#: the options of ``analyze`` every task's ``analyze_files`` takes under the same names: the tests' settings
SETTINGS = ("samples", "seed", "correction", "statistic", "min_units")

#: the type of an option taking a positive integer (``--bins``, ``--top``)
positive = integer(1, "a positive integer")


def add_bins(parser: argparse.ArgumentParser, of: str) -> None:
    """``--bins K``: the number of equal-frequency buckets ``of`` what (4 by default)."""
    parser.add_argument(
        "--bins",
        type=positive,
        default=4,
        metavar="K",
        help=f"the number of equal-frequency buckets of {of} (default 4)",
    )


def add_bucket(parser: argparse.ArgumentParser, item: str) -> None:
    """``--bucket [NAME=]MODULE:FUNCTION``: a user's bucketing of ``item`` (:mod:`metametric_jax.analysis_custom`)."""

    def parse(text: str) -> Any:  # imported when the option is given, not at every start (hashlib)
        from metametric_jax.analysis_custom import parse as parse_bucket

        return parse_bucket(text)

    parser.add_argument(
        "--bucket",
        action="append",
        type=parse,
        default=None,
        metavar="[NAME=]MODULE:FUNCTION",
        help=f"add the analysis NAME: FUNCTION maps {item} to its bucket's name (a non-empty string); FUNCTION is "
        "found in MODULE (imported; the current directory first) or in a file, FILE.py:FUNCTION; NAME defaults to "
        "the function's name; repeat for several bucketings",
    )


def _given(value: Any) -> bool:
    """Whether an option holds a value other than its default when absent (None, False or no files)."""
    return value is not None and value is not False and value != []


def analysis_hook(
    task: str,
    *,
    reference: str,
    description: str,
    options: Sequence[str] = (),
    derived: Callable[[argparse.Namespace], Mapping[str, Any]] | None = None,
    refused: Mapping[str, str] | None = None,
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
    custom: str | None = None,
) -> Analyze:
    """The :class:`~metametric_jax.commands.Analyze` hook of a task.

    Args:
        task: the task's command name; its analyses are ``metametric_jax.tasks.<task>_analysis.analyze_files``.
        reference: the argparse dest of the command's reference file (its first input).
        description: what the task's analyses are, for ``analyze TASK --help``.
        options: dests of the command's options passed to ``analyze_files`` under the same names.
        derived: more keyword arguments of ``analyze_files``, computed from the parsed options.
        refused: ``{dest: message}``: options of ``score`` an analysis refuses (``ValueError(message)`` when given),
            checked in order; they are left out of ``analyze TASK --help`` (:func:`hide_refused`).
        add_arguments: adds the options only ``analyze`` takes.
        custom: what a user's bucket function is given (``"an entity: Entity(sentence, ...)"``), where the task's
            ``analyze_files`` takes ``buckets=``: adds ``--bucket [NAME=]MODULE:FUNCTION`` (:func:`add_bucket`).
    """
    refusals = dict(refused or {})

    def run(args: argparse.Namespace, systems: list[str]) -> dict[str, Any]:
        module = importlib.import_module(f"metametric_jax.tasks.{task}_analysis")
        for dest, message in refusals.items():
            if _given(getattr(args, dest, None)):
                raise ValueError(message)
        passed = {name: getattr(args, name) for name in (*options, *SETTINGS)}
        passed["jobs"] = getattr(args, "jobs", 1)
        if derived is not None:
            passed.update(derived(args))
        if custom is not None:
            from metametric_jax import analysis_custom

            passed["buckets"] = analysis_custom.load_all(args.bucket)
        result: dict[str, Any] = module.analyze_files(getattr(args, reference), systems, **passed)
        return result

    def arguments(parser: argparse.ArgumentParser) -> None:
        hide_refused(parser, refusals)
        if add_arguments is not None:
            add_arguments(parser)
        if custom is not None:
            add_bucket(parser, custom)

    adds = arguments if refusals or add_arguments is not None or custom is not None else None
    return Analyze(task=task, run=run, add_arguments=adds, description=description)


def hide_refused(parser: argparse.ArgumentParser, refused: Collection[str]) -> None:
    """Leave the options (and positional arguments) whose dest is in ``refused`` out of ``parser``'s usage and help.

    The parser still reads them, so that the hook's run refuses them with its message rather than argparse with
    "unrecognized arguments".
    """
    for action in parser._actions:
        if action.dest in refused:
            action.help = argparse.SUPPRESS
