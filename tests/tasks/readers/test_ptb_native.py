"""The compiled tree reader (``_ptb_scan``) gives NumPy's columns, or leaves the text to NumPy.

``scan_trees`` reads well-formed text with the compiled reader where it was built and everything else with NumPy. On
generated texts (valid, with odd white space, control and non-ASCII bytes, CRLF, several trees a line, trees over
lines) and the same texts corrupted (a byte dropped, a parenthesis or word inserted, cut short), in every layout and
``lines`` setting, whatever the compiled reader returns equals NumPy's columns with their types, and it reads every
valid text but those with a tree that is a part-of-speech node alone. CI checks the reader was built
(``tests/test_compiled_readers.py``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import constituency_files
from metametric_jax.tasks.readers import ptb

DATA = Path(__file__).resolve().parents[2] / "data" / "constituency"
SPACE = [" ", "  ", "\t", " \r"]
LABELS = ["S", "NP", "VP", "", "X-1", "é"]
TAGS = ["NN", "DT", "-NONE-", "``"]
WORDS = ["a", "cat", "é", "\x00", "x\x1fy", "''"]
LAYOUTS: list[dict[str, Any]] = [{}, {"one_per_line": True}, {"one_per_line": False}]

needs_native = pytest.mark.skipif(
    ptb._ptb_scan is None, reason="the compiled tree reader was not built here (installed without a C compiler)"
)


def _tree(rng: random.Random, depth: int, lone: list[bool], top: bool = True) -> str:
    if depth <= 0 or rng.random() < 0.35:
        lone.append(top)
        return f"({rng.choice(TAGS)}{rng.choice(SPACE)}{rng.choice(WORDS)})"
    kids = rng.choice([*SPACE, ""]).join(_tree(rng, depth - 1, lone, False) for _ in range(rng.randint(1, 3)))
    return f"({rng.choice(LABELS)}{rng.choice([*SPACE, ''])}{kids})"


def _text(rng: random.Random) -> tuple[bytes, bool]:
    """A generated text, and whether it is valid with no tree that is a part of speech alone."""
    lone: list[bool] = []
    trees = []
    for _ in range(rng.randint(0, 6)):
        tree = _tree(rng, rng.randint(0, 5), lone)
        trees.append(tree.replace(" (", "\n  (") if rng.random() < 0.15 else tree)
    text = rng.choice(["", "", "\n", " "]) + rng.choice(["\n", "\n\n", " ", "\r\n"]).join(trees)
    text += rng.choice(["", "\n", "\n\n", " \n"])
    if rng.random() < 0.4 and text:
        k = rng.randrange(len(text))
        op = rng.random()
        insert = rng.choice(["(", ")", " x", "\n", "\v"])
        text = text[:k] + text[k + 1 :] if op < 0.3 else text[:k] + insert + text[k:] if op < 0.6 else text[:k]
        return text.encode(), False
    return text.encode(), not any(lone)


def _columns(bank: ptb.Treebank) -> dict[str, Any]:
    return {
        f: (getattr(bank, f).tolist(), getattr(bank, f).dtype.str)
        if isinstance(getattr(bank, f), np.ndarray)
        else getattr(bank, f)
        for f in bank._fields
    }


def _numpy(text: bytes, options: dict[str, Any]) -> Any:
    try:
        return _columns(ptb._scan_numpy(text, "t.mrg", options.get("one_per_line"), options.get("lines")))
    except (InputFormatError, ValueError) as err:
        return type(err)


@needs_native
@pytest.mark.parametrize("seed", range(4))
def test_compiled_columns_equal_numpys_or_it_leaves_the_text(seed: int) -> None:
    rng = random.Random(seed)
    read = 0
    for _ in range(1500):
        text, valid = _text(rng)
        lines = text.count(b"\n")
        settings = [*LAYOUTS, {"one_per_line": True, "lines": lines + rng.randint(-1, 2)}, {"lines": lines}]
        for options in settings:
            got = ptb._scanned(text, "t.mrg", options.get("one_per_line"), options.get("lines"))
            expected = _numpy(text, options)
            if got is None:
                # only text NumPy refuses, or a tree that is a part of speech alone, is left to it
                assert not (valid and isinstance(expected, dict)), (text, options)
                continue
            read += 1
            assert _columns(got) == expected, (text, options)
    assert read > 1500


@needs_native
def test_scan_trees_uses_the_compiled_reader_and_numpy_words_the_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    scan = ptb._ptb_scan.scan  # type: ignore[union-attr]

    def spy(*args: Any) -> Any:
        calls.append(args)
        return scan(*args)

    monkeypatch.setattr(ptb, "_ptb_scan", type("Spy", (), {"scan": staticmethod(spy)}))
    bank = ptb.scan_trees(b"(S (NP (DT a) (NN cat)))\n(S\n (NN b))\n", "t.mrg")
    assert [a[2] for a in calls] == [False, True] and bank.line.tolist() == [1, 2]
    with pytest.raises(InputFormatError, match="unbalanced") as err:
        ptb.scan_trees(b"(S (NN a))\n(S (NN b)))\n", "t.mrg")
    assert err.value.line == 2


@needs_native
@pytest.mark.parametrize("name", ["gold.mrg", "pred.mrg"])
def test_fixture_files_read_the_same(name: str) -> None:
    text = (DATA / name).read_bytes()
    for options in LAYOUTS:
        got = ptb._scanned(text, "t.mrg", options.get("one_per_line"), options.get("lines"))
        assert got is not None and _columns(got) == _numpy(text, options)


@needs_native
def test_deep_and_wide_trees() -> None:
    deep = b"(S " * 50_000 + b"(NN x)" + b")" * 50_000 + b"\n"
    wide = b"(S " + b" ".join(b"(NN w%d)" % k for k in range(20_000)) + b")\n"
    for text in (deep, wide, deep + wide, b"", b"\n\n", b" \n"):
        for options in [*LAYOUTS, {"one_per_line": True, "lines": 3}]:
            got = ptb._scanned(text, "t.mrg", options.get("one_per_line"), options.get("lines"))
            assert got is not None and _columns(got) == _numpy(text, options), (text[:20], options)


def test_file_counts_are_the_same_with_numpy_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # files of one tree per line over several of the pieces file_counts reads (a blank line: a failed parse)
    rng = random.Random(7)
    lines = [_tree(rng, rng.randint(0, 6), []).encode() if rng.random() < 0.97 else b"" for _ in range(12000)]
    gold, pred = tmp_path / "gold.mrg", tmp_path / "pred.mrg"
    gold.write_bytes(b"\n".join(lines) + b"\n")
    pred.write_bytes(b"\n".join(reversed(lines)) + b"\n")
    assert gold.stat().st_size > 2 * constituency_files.PIECE_BYTES
    for g, p in ((DATA / "gold.mrg", DATA / "pred.mrg"), (gold, pred), (gold, gold)):
        try:
            with_reader = constituency_files.file_counts(p, g)
        except InputFormatError as err:
            with_reader = str(err)  # type: ignore[assignment]
        with monkeypatch.context() as m:
            m.setattr(ptb, "_ptb_scan", None)
            try:
                alone = constituency_files.file_counts(p, g)
            except InputFormatError as err:
                alone = str(err)  # type: ignore[assignment]
        if isinstance(alone, str):
            assert with_reader == alone
            continue
        assert not isinstance(with_reader, str)
        for f in alone._fields:
            a, b = getattr(with_reader, f), getattr(alone, f)
            assert (a == b) if f == "messages" else np.array_equal(a, b), f
