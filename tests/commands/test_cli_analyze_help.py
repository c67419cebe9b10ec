"""``analyze TASK --help`` lists the ``score`` options an analysis takes, and none of those it refuses."""

from __future__ import annotations

import argparse
import re
from importlib import resources

import pytest
from helpers import run

from metametric_jax.cli import build_parser
from metametric_jax.commands import registry

COMMANDS = registry()
ANALYZED = [name for name, command in COMMANDS.items() if command.analyze is not None]


def _analyze_parser(task: str) -> argparse.ArgumentParser:
    root = build_parser(COMMANDS)
    analyze = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices["analyze"]
    tasks = next(a for a in analyze._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = tasks.choices[task]
    return parser


def _given(action: argparse.Action) -> list[list[str]]:
    """Ways to give ``action`` a value other than its default (files that do not exist where a file is read)."""
    if not action.option_strings:
        return [["missing-a.txt", "missing-b.txt"]]
    option = action.option_strings[-1]
    if action.nargs == 0:
        return [[option]]
    if action.choices is not None:
        return [[option, next(str(c) for c in action.choices if c != action.default)]]
    # a number, a ranking measure, a ROUGE type, a tag scheme
    return [[option, value] for value in ("2", "map", "rouge1", "IOB2")]


def _refusal(task: str, action: argparse.Action) -> str | None:
    """The message with which ``analyze TASK`` refuses ``action`` before it reads a file; None when it goes on."""
    command = COMMANDS[task]
    assert command.analyze is not None
    parser = _analyze_parser(task)
    for given in _given(action):
        for reference in (["--references", "missing-ref.txt"], []):  # an input given twice is a usage error
            try:
                args = parser.parse_args([*reference, "--system", "missing-sys.txt", *given])
                if command.resolve is not None:
                    command.resolve(args, parser)
            except SystemExit:
                continue
            try:
                command.analyze.run(args, args.system)
            except (OSError, ValueError) as err:  # a refusal: a plain ValueError; reading the missing files: another
                return str(err) if type(err) is ValueError else None
            raise AssertionError(f"analyze {task} {given} read files that do not exist")
    raise AssertionError(f"analyze {task}: no arguments given to {action.option_strings or action.metavar} parse")


def _score_actions(task: str) -> list[argparse.Action]:
    """The actions of ``analyze TASK`` that come from ``score TASK`` (its file and scoring options)."""
    scratch = argparse.ArgumentParser(add_help=False)
    COMMANDS[task].add_arguments(scratch)
    dests = {a.dest for a in scratch._actions}
    return [a for a in _analyze_parser(task)._actions if a.dest in dests and a.dest != COMMANDS[task].inputs[0]]


@pytest.mark.parametrize("task", ANALYZED)
def test_an_option_in_analyze_help_is_one_analyze_takes(task: str) -> None:
    parser = _analyze_parser(task)
    shown = parser.format_usage() + parser.format_help().split("\noptions:\n", 1)[1]
    hidden = 0
    for action in _score_actions(task):
        refusal = _refusal(task, action)
        names = action.option_strings or [str(action.metavar)]
        listed = action.help is not argparse.SUPPRESS
        if refusal is None:
            assert listed, (task, names)
        else:
            hidden += 1
            assert not listed, (task, names, refusal)
            for name in names:  # nor in the usage line or the list of options
                assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", shown), (task, name, shown)
    assert hidden >= 1  # every task refuses at least its second input file (the systems are --system files)


def test_analyze_dependency_help_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", "dependency", "--help")
    assert code == 0
    usage_and_options = out.split("\n\n", 1)[0] + out.split("\noptions:\n", 1)[1]
    listed = set(re.findall(r"(?<![\w-])(-[\w-]+|GOLD PRED)", usage_and_options))
    assert not listed & {"--counts", "-c", "--pred", "GOLD PRED"}, listed
    assert {"--no-check-trees", "--exclude-punct", "--keep-subtypes", "--unit", "--gold", "--references"} <= listed
    gold = str(resources.files("metametric_jax") / "data" / "parsing" / "gold.conllu")
    base = ["analyze", "dependency", "--references", gold, "--system", gold, "--samples", "20"]
    for extra, message in (
        (["--counts"], "analyze dependency gives figures per bucket; --counts is a score option"),
        (["-c"], "analyze dependency gives figures per bucket; --counts is a score option"),
        (["--pred", gold], "analyze dependency reads --references and --system files; --pred is not accepted"),
    ):
        code, out, err = run(capsys, *base, *extra)
        assert (code, out, err) == (1, "", f"metametric-jax: error: {message}\n"), extra
    code, out, err = run(capsys, "analyze", "dependency", gold, gold, "--system", gold, "--samples", "20")
    assert code == 1 and out == "" and err.count("\n") == 1 and "GOLD PRED are not accepted" in err


@pytest.mark.parametrize("task", ANALYZED)
def test_the_system_side_and_per_item_options_of_score_are_refused(task: str) -> None:
    # the systems are --system files: score's own system option is refused, never read and ignored; so is a
    # per-item report, which analyze gives per bucket
    actions = {a.dest: a for a in _score_actions(task)}
    for dest in (COMMANDS[task].inputs[1], "per_document", "per_pair"):
        if dest in actions:
            assert _refusal(task, actions[dest]) is not None, (task, dest)
