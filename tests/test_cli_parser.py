"""The command line builds only the sub-command it runs; what it parses and prints is the full parser's."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from metametric_jax.cli import build_parser, selected
from metametric_jax.commands import registry, task_names

COMMANDS = registry()


def _argv() -> list[list[str]]:
    out = []
    for name, command in COMMANDS.items():
        files = [a for dest in command.inputs for a in (f"--{dest.replace('_', '-')}", "x.txt")]
        out.append(["score", name, *files, "--format", "json", "--jobs", "2"])
        out.append(["score", "--format", "json", name, "--bootstrap", "10"] if command.resample else ["score", name])
        if command.resample is not None:
            out.append(["compare", name, "--references", "r.txt", "--system", "a", "--system", "b", "--samples", "9"])
        if command.analyze is not None:
            out.append(["analyze", name, "--references", "r.txt", "--system", "a", "--format", "json"])
    return out


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, object]:
    out = vars(parser.parse_args(argv))
    out.pop("parser_", None)
    return out


@pytest.mark.parametrize("argv", _argv(), ids=" ".join)
def test_the_selected_parser_parses_as_the_full_one(argv: list[str]) -> None:
    only = selected(argv, task_names())
    assert only == (argv[0], next(w for w in argv[1:] if w in COMMANDS))
    assert _parsed(build_parser(registry(only[1]), only), argv) == _parsed(build_parser(COMMANDS), argv)


def test_a_task_s_registry_is_its_command_alone() -> None:
    """``registry(task)`` (what the command line imports) gives the task's command as the full registry has it."""
    assert task_names() == list(COMMANDS)
    for name, command in COMMANDS.items():
        assert registry(name) == {name: command}
    assert registry("no-such-task") == {}


@pytest.mark.parametrize(
    "argv",
    [["score", "--help"], ["compare", "--help"], ["analyze", "--help"], ["--help"], ["score", "ranking", "--help"]],
)
def test_help_is_the_full_parser_s(argv: list[str]) -> None:
    printed = []
    for only in (selected(argv, COMMANDS), None):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            build_parser(COMMANDS, only).parse_args(argv)
        printed.append(out.getvalue())
    assert printed[0] == printed[1] and "usage:" in printed[0]


def test_selected() -> None:
    assert selected(["score", "ner"], COMMANDS) == ("score", "ner")
    assert selected(["score", "--format", "json", "coref", "--key", "ner"], COMMANDS) == ("score", "coref")
    assert selected(["--version"], COMMANDS) is None
    assert selected(["score", "--help"], COMMANDS) is None
    assert selected(["nerd", "score", "ner"], COMMANDS) is None  # an unknown command: the full parser's error
    assert selected(["score", "nre"], COMMANDS) is None
    assert selected(["score", "foo", "ranking"], COMMANDS) is None  # not the task first: the full parser's error
    assert selected(["score", "--form", "json", "ner"], COMMANDS) is None  # an abbreviation: the full parser reads it
    assert selected(["score", "--format=json", "--no-progress", "ner"], COMMANDS) == ("score", "ner")
    assert selected(["analyze", "--format", "json", "ner"], COMMANDS) is None  # analyze has no options there
    assert selected(["compare", "--format", "json", "ner"], COMMANDS) == ("compare", "ner")


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "foo", "ranking"],
        ["score", "ranking", "--bogus"],
        ["score", "--format", "xml", "ranking"],
        ["score", "ranking", "-M"],
        ["compare", "ner", "--samples", "x"],
        ["compare", "coref", "--method", "coin"],
        ["analyze", "ner", "--correction", "none", "--format", "pdf"],
        ["--bogus", "score", "ner"],
        ["score", "ner", "--jobs", "-1"],
        ["analyze", "--format", "json", "ner"],
        ["compare", "--progress", "rouge", "--samples", "0.5"],
    ],
    ids=" ".join,
)
def test_errors_are_the_full_parser_s(argv: list[str]) -> None:
    """Where the arguments are wrong, the parser built for the selected command says what the full parser says."""
    said = []
    for only in (selected(argv, COMMANDS), None):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
            build_parser(COMMANDS, only).parse_args(argv)
        said.append((stop.value.code, err.getvalue()))
    assert said[0] == said[1] and said[0][0] == 2 and "error:" in said[0][1]


def test_a_command_named_otherwise_than_its_module_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:

    from metametric_jax.commands import ner

    monkeypatch.setattr(ner, "COMMAND", ner.COMMAND._replace(name="entities"))
    for only in (None, "ner"):
        with pytest.raises(ValueError, match="metametric_jax.commands.ner defines the command 'entities'"):
            registry(only)


@pytest.mark.parametrize("columns", [None, "0", "-3", "x", "50", "200"])
def test_terminal_width_is_shutil_s(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    import shutil

    from metametric_jax.cli import terminal_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_width() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("argv", [["--help"], ["score", "--help"], ["score", "ranking", "--help"]], ids=" ".join)
def test_help_is_as_wide_as_argparse_s_own(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    from metametric_jax import cli

    def printed(parser: argparse.ArgumentParser) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            parser.parse_args(argv)
        return out.getvalue()

    ours = {}
    for columns in ("40", "79", "132"):
        monkeypatch.setenv("COLUMNS", columns)
        ours[columns] = printed(build_parser(COMMANDS))
        with monkeypatch.context() as patched:  # argparse's own formatter, which asks shutil for every argument
            patched.setattr(cli, "_Parser", argparse.ArgumentParser)
            assert ours[columns] == printed(build_parser(COMMANDS))
    assert len(set(ours.values())) == 3  # the width is the terminal's


def test_the_task_modules_are_pkgutil_s() -> None:
    import pkgutil

    from metametric_jax import commands

    listed = sorted(m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_"))
    assert commands._modules() == listed and "ranking" in listed and "ranking_analysis" in listed
