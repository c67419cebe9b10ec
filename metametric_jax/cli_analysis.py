r"""``metametric-jax analyze TASK``: where systems fail and where one beats another, per bucket, tested.

``analyze TASK --references R --system A [--system B ...]`` reads the files with the task's reader options (those of
``score TASK``), builds the task's analyses through its :class:`~metametric_jax.commands.Analyze` hook and renders the
report: ``--format table`` (default), ``json`` (the versioned source every other form is rendered from), ``html``
(one self-contained file with charts) or ``latex`` (booktabs tables); ``--out FILE`` writes it to a file.

Every bucket's tested figure is compared between each system and the first (the baseline) by the paired bootstrap over
the task's units (``--samples`` replicates, ``--seed``), and the p-values are corrected over all the tests shown
(``--correction holm|bh|maxt|none``, Holm by default; ``--statistic studentized|raw`` for max-T). A bucket with items in
fewer than ``--min-units`` units is not tested and is flagged (:mod:`metametric_jax.analysis`). ``--jobs N`` counts the
items in N worker processes as ``score --jobs`` does (0: every core): the report is the same for every N.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from metametric_jax.commands import Command

__all__ = ["FORMATS", "add_analyze_options", "integer", "analyze", "render"]

FORMATS = ("table", "json", "html", "latex")


def integer(least: int, expected: str | None = None) -> Callable[[str], int]:
    """An option's type: an integer of at least ``least``; ``expected`` names it in messages (default: "an integer").

    >>> integer(2)("1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected an integer >= 2; found '1'
    """

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected or 'an integer'}; found {value!r}") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"expected {expected or f'an integer >= {least}'}; found {value!r}")
        return n

    return parse


def add_analyze_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``analyze TASK``: systems, resampling, correction and output."""
    parser.add_argument(
        "--system",
        action="append",
        metavar="FILE",
        required=True,
        help="a system's output file; repeat for several systems: each is tested against the first (the baseline)",
    )
    parser.add_argument(
        "--samples",
        type=integer(2),
        default=1000,
        metavar="N",
        help="paired bootstrap replicates over the task's units (default 1000; p-values are at least 1/(N+1))",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap weights (default: 0)")
    parser.add_argument(
        "--correction",
        choices=("holm", "bh", "maxt", "none"),
        default="holm",
        help="correction for testing every bucket: Holm's step-down (default), Benjamini-Hochberg (false discovery "
        "rate), Westfall-Young step-down max-T over the joint replicates, or none",
    )
    parser.add_argument(
        "--statistic",
        choices=("studentized", "raw"),
        default="studentized",
        help="what max-T compares across buckets: deltas over their bootstrap standard deviation (default) or raw",
    )
    parser.add_argument(
        "--min-units",
        type=integer(1),
        default=10,
        metavar="K",
        help="test a bucket only if its items are in at least K units (default 10); smaller buckets are flagged",
    )
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--out", metavar="FILE", default=None, help="write the report to FILE (default: stdout)")


def analyze(command: Command, args: argparse.Namespace, systems: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The report of the task's analyses of ``systems`` against the reference of ``args``, and its warnings.

    Raises:
        ValueError: when the task refuses the request, the systems are not on the same units, or the reference holds
            no unit (nothing to analyze, as ``compare`` has nothing to compare).
        InputFormatError: on malformed input.
    """
    assert command.analyze is not None
    report = command.analyze.run(args, systems)
    if not report.get("n"):
        raise ValueError(f"{report.get('references')} holds no {report.get('unit')}: there is nothing to analyze")
    warnings = [*report.get("warnings", []), *report.get("notes", [])]
    return report, warnings


def render(report: dict[str, Any], form: str) -> str:
    """The report in one of :data:`FORMATS` (rendered from its JSON; :mod:`metametric_jax.analysis_report`)."""
    from metametric_jax import analysis_report

    if form == "json":
        return analysis_report.dumps(report)
    if form == "html":
        from metametric_jax.analysis_html import html

        return html(report)
    if form == "latex":
        from metametric_jax.analysis_latex import latex

        return latex(report)
    return analysis_report.text(report)
