"""The command line's plain tables are what rich prints: generated tables, the fallbacks, every task's table."""

from __future__ import annotations

import io
import random
import string
from fractions import Fraction
from importlib import resources

import pytest
from helpers import run
from rich.cells import cell_len
from rich.console import Console

from metametric_jax import _table
from metametric_jax._table import Table, plain
from metametric_jax.commands import registry

_CHARS = string.ascii_letters + string.digits + "/._-=<>%'(),;*+#`\u00b1\u00e9\u2264\u2014"


def _text(rng: random.Random, words: int, long: bool = False, lines: bool = True) -> str:
    out = []
    for _ in range(words):
        size = rng.choice([1, 5, 30, 70]) if long else rng.choice([1, 2, 3, 5, 8, 13])
        out.append("".join(rng.choice(_CHARS) for _ in range(size)))
    gaps = [rng.choice([" ", " ", "  ", "\n" if lines else " "]) for _ in out]
    return "".join(w + g for w, g in zip(out, gaps)).strip(" ")


def _generated(seed: int) -> Table:
    rng = random.Random(seed)
    title = _text(rng, rng.randint(0, 12), rng.random() < 0.3) if rng.random() < 0.7 else None
    caption = _text(rng, rng.randint(0, 20), rng.random() < 0.3) if rng.random() < 0.7 else None
    table = Table(title=title, caption=caption)
    for _ in range(rng.randint(1, 5)):
        table.add_column(_text(rng, rng.randint(0, 2), lines=False).strip(), justify=rng.choice(["left", "right"]))
    for _ in range(rng.randint(0, 6)):
        table.add_row(*[_text(rng, rng.randint(0, 3), lines=False).strip() for _ in table.headers])
        if rng.random() < 0.2:
            table.add_section()
    return table


def _rich(table: Table, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width).print(table.to_rich())
    return out.getvalue()


def _natural(table: Table) -> int:
    return sum(max(map(len, column)) + 3 for column in zip(table.headers, *table.rows)) + 1


@pytest.mark.parametrize("block", range(4))
def test_plain_tables_are_rich_s(block: int) -> None:
    drawn = 0
    for seed in range(250 * block, 250 * (block + 1)):
        table = _generated(seed)
        rng = random.Random(-seed)
        for width in (_natural(table) + rng.choice([0, 0, 1, 7, 40]), rng.randint(10, 120)):
            ours = plain(table, width)
            assert ours is None or ours == _rich(table, width), (seed, width)
            drawn += ours is not None
    assert drawn >= 250  # the plain drawing is used for every table that fits


@pytest.mark.parametrize(
    "title, cell",
    [
        ("[bold]a[/bold]", "x"),
        ("a", "[red]x"),
        ("\u4e2d\u6587", "x"),
        ("a", "\u0301 1"),
        ("a :smile: b", "x"),
        ("a", " x"),
    ],
)
def test_plain_leaves_to_rich_what_rich_would_read_otherwise(title: str, cell: str) -> None:
    table = Table(title=title)
    table.add_column("h")
    table.add_row(cell)
    assert plain(table, 80) is None
    wide = Table()
    wide.add_column("h" * 90)
    assert plain(wide, 80) is None and plain(wide, 100) is not None


def _sample_runs() -> list[list[str]]:
    data = resources.files("metametric_jax") / "data"
    runs = []
    for name, command in registry().items():
        runs.append(["score", name])
        if command.resample is None:
            continue
        runs.append(["score", name, "--bootstrap", "20"])
        files = {dest: command.sample[dest] for dest in command.inputs}
        reference = [str(data.joinpath(*f.split("/"))) for f in _listed(files[command.inputs[0]])]
        system = str(data.joinpath(*_listed(files[command.inputs[1]])[0].split("/")))
        pair = ["--system", system, "--system", system]
        runs.append(["compare", name, *(a for r in reference for a in ("--references", r)), *pair, "--samples", "20"])
    return runs


def _listed(files: str | list[str]) -> list[str]:
    return [files] if isinstance(files, str) else list(files)


@pytest.mark.parametrize("argv", _sample_runs(), ids=lambda argv: " ".join(argv[:2] + argv[2:][-2:]))
@pytest.mark.parametrize("columns", ["80", "140"])
def test_every_task_s_table_is_rich_s(capsys, monkeypatch, argv: list[str], columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    drawn = []
    original = _table.plain

    def spy(table: Table, width: int) -> str | None:
        drawn.append(original(table, width))
        return drawn[-1]

    monkeypatch.setattr(_table, "plain", spy)
    code, ours, err = run(capsys, *argv)
    assert code == 0, err
    monkeypatch.setattr(_table, "plain", lambda table, width: None)  # every table by rich
    code, theirs, err = run(capsys, *argv)
    assert code == 0, err
    assert ours == theirs
    if argv[1] != "coref" and argv[0] == "score":  # coreference's tables are rich's own (a minimal box, its title)
        assert drawn and all(text is not None for text in drawn[:1]), argv


@pytest.mark.parametrize(
    "cell",
    [
        "per_type/" + "VERY_LONG_ENTITY_TYPE_NAME_" * 6 + "/f1",
        "ÿ" + "é" * 150 + "ÿ",
        "類型" * 40,
        "[bold]x[/bold]" * 20,
        "[/x] :bug: " * 12,
    ],
)
@pytest.mark.parametrize("columns", ["40", "80", "1000"])
def test_no_cell_is_cut_short_into_a_file(tmp_path, monkeypatch, cell: str, columns: str) -> None:
    # into a file or a pipe the table is drawn whole, however narrow COLUMNS says the console is (plain text for
    # ASCII, rich for other characters and for what rich would read as markup, printed as it is): each cell on one
    # line, nothing cut to an ellipsis
    monkeypatch.setenv("COLUMNS", columns)
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)
    table = Table(title="figures", caption="a caption")
    table.add_column("Figure")
    table.add_column("Value", justify="right")
    table.add_row(cell, "12.34")
    table.add_row("short", "5.00")
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as file:
        _table.print_table(table, file)
    text = path.read_text(encoding="utf-8")
    assert "…" not in text and any(cell in line and "12.34" in line for line in text.splitlines()), text
    assert len({cell_len(line) for line in text.splitlines() if line.startswith(("┏", "│", "└"))}) == 1


def test_analyze_tables_cut_no_cell(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    data = resources.files("metametric_jax") / "data" / "ie"
    gold, pred = str(data / "gold.jsonl"), str(data / "pred.jsonl")
    code, out, err = run(
        capsys, "analyze", "ie", "--references", gold, "--system", pred, "--system", gold, "--samples", "20"
    )
    assert code == 0, err
    assert "…" not in out and "Start-Position" in out and "+100.00" in out


def test_closest_ratio_is_fractions_limit_denominator() -> None:
    rng = random.Random(7)
    values = [rng.random() for _ in range(3000)] + [rng.randint(0, 10**7) / rng.randint(1, 10**7) for _ in range(3000)]
    values += [a / b for b in range(1, 120) for a in range(b + 1)]
    values += [0.0, 1.0, 5e-324, 2.0**-30, 1 - 2**-53, (2**26 - 1) / 2**26, 1 / (2**26 + 1), 23 / 160]
    for value in values:
        for limit in (1, 10, 1000, 1 << 26):
            share = Fraction(value).limit_denominator(limit)
            assert _table.closest_ratio(value, limit) == (share.numerator, share.denominator), (value, limit)


def test_printable_text_is_the_pattern_s() -> None:
    """The ASCII shortcut of ``_printable`` lets through exactly what the pattern does."""
    import re

    rng = random.Random(3)
    alphabet = [chr(c) for c in range(0, 0x100)] + ["\u2013", "\u2026", "\u2264", "\u2022", "\u4e00", ":", "["]
    for _ in range(4000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        want = re.fullmatch(_table._SAFE, text) is not None and _table._EMOJI.search(text) is None
        assert _table._printable([text]) == want, repr(text)
    for c in map(chr, range(0x80)):
        assert _table._printable([c]) == (c.isprintable() and c != "["), repr(c)
