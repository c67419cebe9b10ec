r"""The ``metametric-jax`` command: score prediction files against reference files from the shell.

Usage::

    metametric-jax score TASK [FILE OPTIONS] [TASK OPTIONS] [--format table|json|trec] [--progress|--no-progress]
                              [--bootstrap N [--seed S] [--level 0.95]] [--jobs N]
    metametric-jax compare TASK --references REF --system A --system B [--method bootstrap|randomization]
                                [--samples N] [--seed S] [--level 0.95] [TASK OPTIONS] [--format table|json]
    metametric-jax analyze TASK --references REF --system A [--system B ...] [--samples N] [--seed S]
                                [--correction holm|bh|maxt|none] [--min-units K] [TASK OPTIONS]
                                [--format table|json|html|latex] [--out FILE]
    metametric-jax --version

The tasks are the modules of :mod:`metametric_jax.commands` (one ``COMMAND`` each; ``metametric-jax score --help``
lists them). Without file arguments a task scores its bundled sample (said on standard error). ``--format json``
prints the task's figures as fractions in [0, 1]; warnings, notes, errors and the progress bar shown for inputs of
:data:`LARGE_INPUT` units or more go to standard error. A task may declare output formats of its own
(:class:`~metametric_jax.commands.Format`, the command's ``formats``): ``score ranking --format trec`` prints
trec_eval's printout byte for byte (:mod:`metametric_jax.tasks.trec_format`); every other task, and ``compare``,
refuses such a name as an invalid ``--format`` choice, and ``--bootstrap`` refuses a task's own format.

``--bootstrap N`` adds percentile intervals from N Poisson-bootstrap replicates over the task's units (documents for
coreference and IE, NER documents where the file marks them, sentences for parsing, graph pairs for AMR, queries for
ranking): the JSON gains ``"intervals"`` (each figure as ``[low, high]``), ``"stderr"``, ``"level"``, ``"replicates"``,
``"seed"`` and ``"test"``. ``compare`` scores two systems against one reference file and tests the differences: JSON
``{"a", "b", "delta", "p_value", "p_error", ["low", "high"], "test", "warnings"}``, each figure group shaped like the
task's figures, ``"test"`` stating the method, the two-sided p-value, the samples, the unit, their number and the seed
(:mod:`metametric_jax.cli_resampling`). The figures are the task's own read-out, equal to ``score``'s bit for bit.
JSON is strict: ``null`` where a figure does not exist. ``analyze`` (tasks with an analysis hook) reads the figures per
bucket of items for one or more systems and tests each system against the first per bucket, corrected over every test
shown (:mod:`metametric_jax.cli_analysis`; the report's forms: :mod:`metametric_jax.analysis_report`).

``--jobs N`` (``score`` with or without ``--bootstrap``, ``compare`` and ``analyze``) scores the examples in N worker
processes (0: every core this process may use), chunk by chunk (:mod:`metametric_jax.parallel`): every figure comes
from the same per-example counts summed in the same order, so the output is the same for every N.

Exit status: 0 on success, 1 on unreadable or malformed input (``metametric-jax: error: FILE:LINE: MESSAGE``) or
missing optional software, 2 on bad usage. No input a user can give makes it print a Python traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from metametric_jax import cli_resampling as resampling_cli
from metametric_jax._collector import collect_rarely
from metametric_jax._table import Scale
from metametric_jax.commands import LARGE_INPUT, Command, registry, task_names
from metametric_jax.commands._blas import one_blas_thread
from metametric_jax.commands._exit import finish, silence
from metametric_jax.commands._memory import reuse_freed_memory

__all__ = ["PROG", "LARGE_INPUT", "build_parser", "main", "run"]

PROG = "metametric-jax"


def terminal_width() -> int:
    """The terminal's columns as ``shutil.get_terminal_size()`` gives them (``COLUMNS``, else the terminal, else 80).

    Asked once per parser built; ``shutil`` itself (with the compression modules it imports) is left unimported, as
    argparse would import it for every argument added.
    """
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help is as wide as argparse's own (the terminal's width less 2), asked once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "formatter_class" not in kwargs:
            kwargs["formatter_class"] = functools.partial(argparse.HelpFormatter, width=terminal_width() - 2)
        super().__init__(*args, **kwargs)


def _output_options(formats: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """Options accepted both before and after the task name (``score --format json ner`` or ``score ner --format``).

    ``formats``: the names of tasks' own output formats (:class:`~metametric_jax.commands.Format`) accepted beside
    table and json, and what to say of each in ``--help``.
    """
    formats = formats or {}
    described = "".join(f"; {name}: {text}" for name, text in formats.items())
    parent = _Parser(add_help=False)
    parent.add_argument(
        "--format",
        choices=("table", "json", *formats),
        default=argparse.SUPPRESS,
        help=f"output format (default: table{described})",
    )
    parent.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=argparse.SUPPRESS,
        help=f"show a progress bar on standard error (default: for inputs of {LARGE_INPUT} units or more)",
    )
    return parent


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, 0 for every core; found {text!r}")
    return value


def _add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="worker processes that score the examples (default 1: this process; 0: every core); every figure is "
        "the same for every N",
    )


def build_parser(
    commands: dict[str, Command] | None = None, only: tuple[str, str] | None = None
) -> argparse.ArgumentParser:
    """The argument parser of ``metametric-jax``, one ``score`` sub-command per registered task.

    ``only`` (a command and a task, as :func:`selected` finds them in the arguments): only that command and that task
    are built (building every command and task took a tenth of a short run); what it parses and prints is the full
    parser's, since the task stands first after the command.
    """
    commands = registry() if commands is None else commands

    parser = _Parser(prog=PROG, description="Structured-prediction metrics (metametric_jax) from the command line.")
    from metametric_jax import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    output = _output_options()
    if only is None or only[0] == "score":
        _add_score(subcommands, commands, output, only)
    if only is None or only[0] == "compare":
        _add_compare(subcommands, commands, output, only)
    if only is None or only[0] == "analyze":
        _add_analyze(subcommands, commands, only)
    return parser


def _add_score(subcommands: Any, commands: dict[str, Command], output: Any, only: tuple[str, str] | None) -> None:
    own: dict[str, list[str]] = {}  # the tasks' own output formats, and the tasks that have each
    for command in commands.values():
        for name in command.formats:
            own.setdefault(name, []).append(command.name)
    score = subcommands.add_parser(
        "score",
        parents=[_output_options({name: f"{', '.join(names)} only" for name, names in own.items()})],
        help="score a prediction file against a reference file",
        description="Score a prediction file against a reference file (see 'score TASK --help' for the file "
        "formats). Without file arguments, score the task's bundled sample.",
    )
    tasks = score.add_subparsers(dest="task", metavar="TASK", title="tasks")
    tasks.required = True
    for command in commands.values():
        if only is not None and only[1] != command.name:  # it stands first after the command: no message names others
            continue
        parents = [_output_options({n: f.help for n, f in command.formats.items()}) if command.formats else output]
        sub = tasks.add_parser(command.name, parents=parents, help=command.help, description=command.description)
        command.add_arguments(sub)
        _add_jobs(sub)
        if command.resample is not None:
            resampling_cli.add_bootstrap_options(sub)
        sub.set_defaults(parser_=sub)


def _add_compare(subcommands: Any, commands: dict[str, Command], output: Any, only: tuple[str, str] | None) -> None:
    compare = subcommands.add_parser(
        "compare",
        parents=[output],
        help="test whether two systems differ (paired bootstrap or approximate randomization)",
        description="Score two system files against one reference file and test each figure's difference.",
    )
    pairs = compare.add_subparsers(dest="task", metavar="TASK", title="tasks")
    pairs.required = True
    for command in commands.values():
        if command.resample is None:
            continue
        if only is not None and only[1] != command.name:  # as in _add_score
            continue
        sub = pairs.add_parser(command.name, parents=[output], help=command.help, description=command.description)
        command.add_arguments(sub)
        reference = command.inputs[0]
        try:
            sub.add_argument("--references", dest=reference, metavar="FILE", help=f"the {reference} file")
        except argparse.ArgumentError:  # the task names its reference files --references already
            pass
        resampling_cli.add_compare_options(sub)
        _add_jobs(sub)
        sub.set_defaults(parser_=sub)


def _add_analyze(subcommands: Any, commands: dict[str, Command], only: tuple[str, str] | None) -> None:
    from metametric_jax import cli_analysis as analysis_cli

    hooked = {name: c for name, c in commands.items() if c.analyze is not None}
    if hooked:
        analyze = subcommands.add_parser(
            "analyze",
            help="where systems fail and where one beats another: figures per bucket, tested and corrected",
            description="Score one or more system files against one reference file per bucket of items (entity "
            "type, length...), test each system against the first per bucket (paired bootstrap) and correct over "
            "every test shown. Output: a table, JSON, one self-contained HTML file or LaTeX.",
        )
        analyzed = analyze.add_subparsers(dest="task", metavar="TASK", title="tasks")
        analyzed.required = True
        for command in hooked.values():
            assert command.analyze is not None
            if only is not None and only[1] != command.name:  # as in _add_score
                continue
            description = f"{command.description} {command.analyze.description}".strip()
            sub = analyzed.add_parser(command.name, help=command.help, description=description)
            command.add_arguments(sub)
            reference = command.inputs[0]
            try:
                sub.add_argument("--references", dest=reference, metavar="FILE", help=f"the {reference} file")
            except argparse.ArgumentError:  # the task names its reference files --references already
                pass
            analysis_cli.add_analyze_options(sub)
            _add_jobs(sub)
            if command.analyze.add_arguments is not None:
                command.analyze.add_arguments(sub)
            sub.set_defaults(parser_=sub)


def selected(argv: Sequence[str], commands: Collection[str]) -> tuple[str, str] | None:
    """The command and task that ``argv`` names, where nothing but the output options stands between them.

    The first word that is not an option must be a command; the task follows it (for ``score`` and ``compare``, after
    ``--format VALUE``, ``--progress`` or ``--no-progress`` only). Anything else (an unknown task, ``--help``, another
    option, an abbreviation) gives ``None``: the full parser then reads the arguments and says what is wrong.
    """
    for i, word in enumerate(argv):
        if word in ("score", "compare", "analyze"):
            rest = iter(argv[i + 1 :])
            for after in rest:
                if word == "analyze":  # it has no output options before the task
                    return (word, after) if after in commands else None
                if after == "--format":
                    next(rest, None)
                elif not (after.startswith("--format=") or after in ("--progress", "--no-progress")):
                    return (word, after) if after in commands else None
            return None
        if not word.startswith("-"):
            return None
    return None


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 1


def _files(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _decode_problem(paths: Sequence[str]) -> str:
    """``FILE:LINE: message`` for the first of ``paths`` that is not UTF-8 text (the readers' own message)."""
    from metametric_jax.errors import InputFormatError
    from metametric_jax.tasks.readers.text import read_utf8

    for path in paths:
        try:
            read_utf8(path)
        except InputFormatError as err:
            return str(err)
    return "expected UTF-8 text"


def _print_json(tree: Any) -> None:
    import json  # here: a table needs none of it

    from metametric_jax.intervals import strict

    print(json.dumps(strict(tree), indent=2, allow_nan=False))


def _render(command: Command, scores: dict[str, Any], args: argparse.Namespace, title: str, scale: Scale) -> None:
    if getattr(args, "format", "table") == "json":
        _print_json(scores)
        return
    from metametric_jax._table import print_table

    table = command.table(scores, args)
    table.title = title
    print_table(table, sys.stdout)
    if "intervals" in scores:
        estimates = _estimates(scores, scores["intervals"])
        print_table(resampling_cli.interval_table(estimates, scores, scale), sys.stdout)


def _estimates(scores: dict[str, Any], intervals: dict[str, Any]) -> dict[str, Any]:
    """The task's own figures at the paths of the intervals."""
    out: dict[str, Any] = {}
    for k, v in intervals.items():
        value = scores.get(k) if isinstance(scores, dict) else None
        out[k] = _estimates(value or {}, v) if isinstance(v, dict) else (None if value is None else float(value))
    return out


@contextlib.contextmanager
def _workers(command: Command, args: argparse.Namespace, *, analysis: bool = False) -> Iterator[None]:
    """With ``--jobs`` other than 1, the worker server now and one pool for the whole command.

    The server imports the task while the input is read; every map call of the command shares the pool, which stops
    when the command ends.
    """
    jobs = getattr(args, "jobs", 1)
    if jobs == 1:
        yield
        return
    from metametric_jax import parallel

    modules = [f"metametric_jax.tasks.{command.name}", f"metametric_jax.commands.{command.name}", *command.preload]
    if analysis:
        modules.append(f"metametric_jax.tasks.{command.name}_analysis")
    parallel.prepare(jobs, modules)
    with parallel.reusing(jobs):
        yield


def _in_workers(command: Command, args: argparse.Namespace, run: Callable[[], Any], analysis: bool = False) -> Any:
    with _workers(command, args, analysis=analysis):
        return run()


def _guarded(run: Callable[[], Any], files: Sequence[str], name: str) -> tuple[int, Any]:
    """``(0, run())``, or ``(1, None)`` after one error line: the command line's one map from exceptions to messages."""
    from metametric_jax.errors import InputFormatError

    try:
        return 0, run()
    except InputFormatError as err:
        return _error(str(err)), None
    except UnicodeDecodeError:
        return _error(_decode_problem(files)), None
    except OSError as err:
        return _error(f"{err.filename or (files[0] if files else name)}: {err.strerror or err}"), None
    except ImportError as err:  # an optional extra the task needs is not installed
        return _error(f"{name} needs the Python package {err.name!r}: pip install {err.name}"), None
    except MemoryError as err:
        return _error(str(err) or f"{name}: out of memory"), None
    except ValueError as err:
        return _error(str(err)), None


def _compare(command: Command, args: argparse.Namespace, sub: argparse.ArgumentParser) -> int:
    if command.resolve is not None:
        command.resolve(args, sub)
    systems = list(args.system)
    if len(systems) != 2:
        sub.error(f"give exactly two --system files; found {len(systems)}")
    reference = command.inputs[0]
    if getattr(args, reference, None) is None:
        sub.error("--references is required: the reference file both systems are scored against")
    files = [*_files(getattr(args, reference)), *systems]
    status, done = _guarded(
        lambda: _in_workers(command, args, lambda: resampling_cli.compare(command, args, systems)), files, command.name
    )
    if status:
        return status
    result, warnings, scale = done
    _warn(warnings)
    if getattr(args, "format", "table") == "json":
        _print_json(result)
    else:
        from metametric_jax._table import print_table

        table = resampling_cli.compare_table(result, systems, scale)
        against = " ".join(_files(getattr(args, reference)))
        table.title = f"{command.name}: {systems[0]} vs {systems[1]} against {against}"
        print_table(table, sys.stdout)
    return 0


def _analyze(command: Command, args: argparse.Namespace, sub: argparse.ArgumentParser) -> int:
    from metametric_jax import cli_analysis as analysis_cli

    if command.resolve is not None:
        command.resolve(args, sub)
    systems = list(args.system)
    reference = command.inputs[0]
    if getattr(args, reference, None) is None:
        sub.error("--references is required: the reference file the systems are scored against")
    files = [*_files(getattr(args, reference)), *systems]
    status, done = _guarded(
        lambda: _in_workers(command, args, lambda: analysis_cli.analyze(command, args, systems), True),
        files,
        command.name,
    )
    if status:
        return status
    report, warnings = done
    _warn(warnings)
    status, text = _guarded(lambda: analysis_cli.render(report, args.format), files, command.name)
    if status:
        return status
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        return _error(f"{args.out}: {err.strerror or err}")
    print(f"{PROG}: wrote the {args.format} report to {args.out}", file=sys.stderr)
    return 0


def _warn(warnings: Sequence[str]) -> None:
    """Each warning on a line of standard error (``metametric-jax: warning: ...``), written at once."""
    if warnings:
        sys.stderr.write("".join(f"{PROG}: warning: {warning}\n" for warning in warnings))
        sys.stderr.flush()


def _run(command: Command, args: argparse.Namespace, sub: argparse.ArgumentParser) -> int:
    chosen = getattr(args, "format", "table")
    own = command.formats.get(chosen)  # the task's own format, which prints its report itself
    if own is None and chosen not in ("table", "json"):  # a format of another task, given before the task name
        valid = ", ".join(repr(f) for f in ("table", "json", *command.formats))
        sub.error(f"argument --format: invalid choice: {chosen!r} (choose from {valid})")
    if own is not None and getattr(args, "bootstrap", None):
        sub.error(f"--format {chosen} has no form for --bootstrap intervals; use --format table or json with them")
    one_blas_thread(args)  # before the task imports NumPy: scoring multiplies no float matrices
    if command.resolve is not None:
        command.resolve(args, sub)
    given = [dest for dest in command.inputs if getattr(args, dest, None) is not None]
    if given and len(given) != len(command.inputs):
        missing = [f"--{d.replace('_', '-')}" for d in command.inputs if d not in given]
        sub.error(
            f"--{given[0].replace('_', '-')} needs {' and '.join(missing)}: give every input file, or none to score "
            "the bundled sample"
        )
    with contextlib.ExitStack() as stack:
        if not given:
            from importlib import resources  # here: importing it takes longer than a short run's scoring

            base = resources.files("metametric_jax") / "data"

            def bundled(name: str) -> str:
                return os.fspath(stack.enter_context(resources.as_file(base.joinpath(*name.split("/")))))

            for dest, names in command.sample.items():
                setattr(args, dest, bundled(names) if isinstance(names, str) else [bundled(n) for n in names])
            shown = " ".join(f"--{d.replace('_', '-')} {' '.join(_files(getattr(args, d)))}" for d in command.inputs)
            print(f"{PROG}: no input files given; scoring the bundled {command.name} sample ({shown})", file=sys.stderr)
            names = [os.path.basename(p) for d in command.inputs for p in _files(getattr(args, d))]
            title = f"{command.name}: bundled sample {' vs '.join(reversed(names))}"
        else:
            paths = [p for d in command.inputs for p in _files(getattr(args, d))]
            title = f"{command.name}: {' vs '.join(reversed(paths))}"
        files = [p for d in command.inputs for p in _files(getattr(args, d))]

        def score() -> tuple[Any, list[str], Scale]:
            if own is not None:
                text, notes = own.run(args)
                return text, list(notes), Scale()
            scores, warnings = command.run(args)
            scale = Scale()
            if getattr(args, "bootstrap", None):
                boot, more, scale = resampling_cli.bootstrap_intervals(command, args)
                scores = {**scores, **boot}
                warnings = [*warnings, *more]
            return scores, list(warnings), scale

        status, done = _guarded(lambda: _in_workers(command, args, score), files, command.name)
        if status:
            return status
    scores, warnings, scale = done
    _warn(warnings)
    if own is not None:
        sys.stdout.write(scores)
        sys.stdout.flush()
        return 0
    _render(command, scores, args, title, scale)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``metametric-jax`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Returns:
        0 on success, 1 on a missing, unreadable or malformed input file, 2 on bad usage (argparse's status).
    """
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        only = selected(argv, task_names())
        commands = registry(None if only is None else only[1], analyses=only is None or only[0] == "analyze")
        parser = build_parser(commands, only)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        if not hasattr(args, "progress"):
            args.progress = None
        reuse_freed_memory()  # a fresh process's allocator keeps freed arrays' memory for the next ones
        if args.command == "compare":
            return _compare(commands[args.task], args, args.parser_)
        if args.command == "analyze":
            return _analyze(commands[args.task], args, args.parser_)
        return _run(commands[args.task], args, args.parser_)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    except BrokenPipeError:
        silence(sys.stdout)  # the reader of standard output went away (``| head``): stop quietly, as shell tools do
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def run() -> NoReturn:
    """The ``metametric-jax`` console script and ``python -m metametric_jax``: :func:`main`, then the process ends.

    The process ends once the output is written and the exit handlers have run, without the interpreter freeing
    every object one by one (:mod:`metametric_jax.commands._exit`); the status is :func:`main`'s. Its cycle collector
    runs rarely (:func:`metametric_jax._collector.collect_rarely`).
    """
    collect_rarely()
    finish(main())
