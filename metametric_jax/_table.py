"""The command line's tables: drawn as plain text where that is what rich would print, else by rich.

A task's table is a :class:`Table` (a title, columns justified left or right, rows of text, sections, a caption). Into
a file or a pipe (no terminal, no colour forced, a UTF-8 stream) rich prints such a table as plain text: a heavy
header box, each column as wide as its widest cell plus one space each side, the title and the caption wrapped at
the table's width and centred. :func:`plain` draws exactly that without importing rich (about a tenth of a short
command's time), and returns ``None`` wherever its drawing might differ from rich's: a table wider than the console,
text that rich would read as markup or emoji codes, or characters other than printable ASCII, Latin-1 and a few
signs (``±``, dashes, ``≤``), all one cell wide. Then :meth:`Table.to_rich`
hands the same table to rich. The tests compare both drawings on generated tables and on every task's table.

No cell is cut short: into a file or a pipe a table is drawn whole, as wide as it is, whatever the console's width
(``COLUMNS``); on a terminal narrower than the table, a cell folds onto more lines.
"""

from __future__ import annotations

import builtins
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import IO, Any, NamedTuple

__all__ = ["Scale", "Table", "closest_ratio", "plain", "print_table"]

# one cell wide each, nothing rich reads as markup ("["): printable ASCII, Latin-1 letters and signs, a few others
_SAFE = "[ -Z\\\\\\]^_`a-z{|}~\u00a1-\u00ff\u2013\u2014\u2026\u2264\u2265]*"
_EMOJI = re.compile(r":\S+:")  # what might be an emoji code such as :smile:


def closest_ratio(value: float, limit: int) -> tuple[int, int]:
    """``(a, b)``: the ratio ``a / b`` closest to ``value`` with ``0 < b <= limit`` (the smaller ``b`` on a tie).

    The continued fraction of ``value`` (exact: a float is a ratio of integers) cut at the last convergent whose
    denominator fits, or the largest semiconvergent after it where that is closer; as
    ``fractions.Fraction(value).limit_denominator(limit)``, without importing ``fractions`` (and ``decimal``) into a
    command's start.
    """
    n, d = value.as_integer_ratio()
    if d <= limit:
        return n, d
    p0, q0, p1, q1 = 0, 1, 1, 0  # the convergents before the current one
    num, den = n, d
    while True:
        a = num // den
        q2 = q0 + a * q1
        if q2 > limit:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        num, den = den, num - a * den
    k = (limit - q0) // q1
    ps, qs = p0 + k * p1, q0 + k * q1  # the semiconvergent
    # |p1/q1 - n/d| <= |ps/qs - n/d|, in integers: the convergent (smaller denominator) wins a tie
    if abs(p1 * d - n * q1) * qs <= abs(ps * d - n * qs) * q1:
        return p1, q1
    return ps, qs


class Scale(NamedTuple):
    """How a task's tables print its figures, alike in each (``score``, its intervals, ``compare``, ``analyze``).

    Attributes:
        factor: ``100``: percentages with two decimals; ``1``: fractions with four (as trec_eval prints them).
        truncated: the digits cut, not rounded (as the CoNLL-2012 scorer prints its percentages).
        of_counts: a percentage computed from the counts, ``100.0 * a / b`` in doubles, as EVALB and conlleval
            compute theirs, rather than 100 times the fraction ``a / b`` (as the CoNLL 2018 script does): the two
            round apart where the percentage is a tie (EVALB prints 23 of 160 as 14.38, ``100 * 0.14375`` as 14.37).
            The counts are the fraction's, recovered exactly (the closest ratio of integers up to 2**26 to it).
        numbers: the figures (a path's last name) that are no fractions, printed as they are with two decimals
            (EVALB's average crossing, brackets per sentence).
    """

    factor: float = 100.0
    truncated: bool = False
    of_counts: bool = False
    numbers: tuple[str, ...] = ()

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> Scale:
        """The scale an ``analyze`` report names (``scale``, ``truncated`` and ``of_counts``)."""
        return cls(float(report.get("scale", 100)), bool(report.get("truncated", False)), bool(report.get("of_counts")))

    @property
    def percent(self) -> bool:
        """Whether figures print as percentages."""
        return self.factor == 100

    def cell(self, value: Any, signed: bool = False, missing: str = "-", path: str = "") -> str:
        """A figure (a fraction, or one of :attr:`numbers` at ``path``) as printed; ``missing`` for None and NaN."""
        if value is None or not math.isfinite(value):
            return missing
        if path.rsplit("/", 1)[-1] in self.numbers:
            return f"{value:{'+' if signed else ''}.2f}"
        digits = 2 if self.percent else 4
        if self.of_counts and self.percent and not signed and 0 <= value <= 1 << 26:
            a, b = closest_ratio(value, 1 << 26)
            return f"{100.0 * a / b:.{digits}f}"
        if self.truncated:  # toward zero at the last digit: int(x * 10000) / 100 for percentages
            value = math.trunc(value * (self.factor * 10**digits)) / 10**digits
            return f"{value:{'+' if signed else ''}.{digits}f}"
        return f"{self.factor * value:{'+' if signed else ''}.{digits}f}"


class Table:
    """A table of text cells with an optional title and caption (the subset of ``rich.table.Table`` used here)."""

    def __init__(self, title: str | None = None, caption: str | None = None) -> None:
        self.title = title
        self.caption = caption
        self.headers: list[str] = []
        self.justify: list[str] = []
        self.rows: list[list[str]] = []
        self.sections: set[int] = set()  # rows after which a section ends

    def add_column(self, header: str, justify: str = "left") -> None:
        """A column with its header, its cells justified ``"left"`` or ``"right"``."""
        self.headers.append(header)
        self.justify.append(justify)

    def add_row(self, *cells: str) -> None:
        """A row of text cells, one a column (missing cells are empty)."""
        self.rows.append([*cells, *[""] * (len(self.headers) - len(cells))])

    def add_section(self) -> None:
        """End a section after the last row added: a line before the next row."""
        if self.rows:
            self.sections.add(len(self.rows) - 1)

    def width(self) -> int:
        """The width of the table drawn whole: each column as wide as its widest line, one space each side, rules.

        A line that is not ASCII counts two cells a character (a wide character's), never too few.
        """
        columns = [
            max(len(line) * (1 if line.isascii() else 2) for text in column for line in text.split("\n"))
            for column in zip(self.headers, *self.rows)
        ]
        return sum(columns) + 3 * len(columns) + 1

    def to_rich(self) -> Any:
        """The same table as a ``rich.table.Table`` (a cell too wide for the console folds; none is cut short)."""
        from rich.table import Table as RichTable

        table = RichTable(title=self.title, caption=self.caption)
        for header, justify in zip(self.headers, self.justify):
            table.add_column(header, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for i, row in enumerate(self.rows):
            table.add_row(*row, end_section=i in self.sections)
        return table


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters (trailing spaces dropped), as rich wraps a title.

    Each paragraph word by word (a word keeps the spaces after it): a word goes on the current line if it fits there
    without its spaces, else starts the next line; a word longer than a line is cut into pieces of ``width``
    characters (its spaces included), each piece starting a line.
    """
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for match in re.finditer(r"\s*\S+\s*", paragraph):
            word = match.group(0)
            size = len(word.rstrip())
            if size <= width - len(line):
                line += word
            elif size > width:
                if match.start():
                    lines.append(line)
                    line = ""
                pieces = [word[k : k + width] for k in range(0, len(word), width)]
                for piece in pieces[:-1]:
                    lines.append(line + piece)
                    line = ""
                line += pieces[-1]
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return [line.rstrip() for line in lines]


def _centred(text: str, width: int) -> list[str]:
    out = []
    for line in _wrapped(text, width):
        left = (width - len(line)) // 2
        out.append(" " * left + line + " " * (width - len(line) - left))
    return out


def _printable(texts: list[str]) -> bool:
    # ASCII text by str's own tests (the pattern's Unicode ranges take a millisecond to compile, a command's start)
    if not all(t.isascii() and t.isprintable() and "[" not in t or re.fullmatch(_SAFE, t) for t in texts):
        return False
    return not any(":" in t and _EMOJI.search(t) for t in texts)


def plain(table: Table, width: int) -> str | None:
    """The table as rich prints it on a console ``width`` characters wide without a terminal, or ``None``."""
    texts = [*table.headers, *(cell for row in table.rows for cell in row)]
    notes = [t for t in (table.title, table.caption) if t is not None]
    if not table.headers or any(j not in ("left", "right") for j in table.justify):
        return None
    if any(len(row) != len(table.headers) for row in table.rows):
        return None
    if not _printable(texts) or not _printable([line for note in notes for line in note.split("\n")]):
        return None
    if any(text != text.strip() for text in texts):  # rich trims a cell's outer spaces before justifying it
        return None
    widths = [max(len(text) for text in column) for column in zip(table.headers, *table.rows)]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width:
        return None

    def line(cells: list[str], edge: str, inner: str) -> str:
        padded = [
            " " + (text.rjust(w) if justify == "right" else text.ljust(w)) + " "
            for text, w, justify in zip(cells, widths, table.justify)
        ]
        return edge + inner.join(padded) + edge

    def rule(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + right

    out: list[str] = []
    if table.title:  # rich leaves an empty title and caption out
        out += _centred(table.title, total)
    out.append(rule("┏", "━", "┳", "┓"))
    out.append(line(table.headers, "┃", "┃"))
    out.append(rule("┡", "━", "╇", "┩"))
    for i, row in enumerate(table.rows):
        out.append(line(row, "│", "│"))
        if i in table.sections and i + 1 < len(table.rows):
            out.append(rule("├", "─", "┼", "┤"))
    out.append(rule("└", "─", "┴", "┘"))
    if table.caption:
        out += _centred(table.caption, total)
    return "\n".join(out) + "\n"


def _console_width(file: IO[str]) -> int | None:
    """The width rich gives a console on ``file`` when it is no terminal; ``None`` where rich would style its output.

    rich styles (and may size) its output for a terminal, for Jupyter, where ``FORCE_COLOR`` or ``TTY_COMPATIBLE`` is
    set, on Windows consoles and for streams that are not UTF-8 (it draws ASCII boxes there).
    """
    environ = os.environ
    if sys.platform == "win32" or hasattr(builtins, "get_ipython") or "FORCE_COLOR" in environ:
        return None  # Windows consoles, IPython and Jupyter, forced colour: rich's own
    if "DATABRICKS_RUNTIME_VERSION" in environ:
        return None
    if environ.get("TTY_COMPATIBLE", "") not in ("", "0") or environ.get("TTY_INTERACTIVE", "") not in ("", "0"):
        return None
    isatty = getattr(file, "isatty", None)
    try:
        if isatty is None or isatty():
            return None
    except ValueError:
        return None
    if not str(getattr(file, "encoding", "") or "").lower().startswith("utf"):
        return None
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def print_table(table: Any, file: IO[str] | None = None) -> None:
    """Print a :class:`Table` (plain text where rich would print the same) or any rich renderable on ``file``."""
    file = sys.stdout if file is None else file
    width = None
    if isinstance(table, Table):
        width = _console_width(file)
        if width is not None and table.headers:  # into a file or a pipe: the whole table, however wide
            width = max(width, table.width())
        text = None if width is None else plain(table, width)
        if text is not None:
            file.write(text)
            return
        table = table.to_rich()
    from rich.console import Console

    Console(file=file, width=width, markup=False, emoji=False).print(table)  # text as it is: "[/x]", ":bug:"
