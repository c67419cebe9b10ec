"""The compiled field reader of TREC files (``_trec_scan``) gives NumPy's fields, ids and scores, or leaves the text.

On generated texts (white space of every kind, control characters, comments, blank lines, lines of other numbers of
fields, fields up to and past 64 bytes, scores in every written form) the compiled reader refuses exactly the texts
the NumPy reader refuses and otherwise gives the same offsets, NUL-padded field bytes and ``float()`` values bit for
bit (or refuses the same score fields); run and qrels files score the same with and without it. CI checks the
reader was built (``tests/test_compiled_readers.py``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import ranking_files
from metametric_jax.tasks.readers import trec

needs_native = pytest.mark.skipif(
    trec._trec_scan is None, reason="the compiled field reader was not built here (installed without a C compiler)"
)
SPACE = [" ", "  ", "\t", "\r", "\x0b", "\x1c", " \x1f "]
SCORES = [
    "0.5",
    "-2.25",
    "1e3",
    "1E-3",
    "+.5",
    "5.",
    ".",
    "1_0",
    "inf",
    "nan",
    "0x1p3",
    "1e999",
    "-0",
    "12345678901234567890.123456789",
    "4.9e-324",
    "1e",
    "--1",
    "٣",
]


def _field(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(SCORES)
    if kind < 0.35:
        return "x" * rng.choice([63, 64, 65])
    if kind < 0.38:
        return rng.choice(["#c", "a\x01b", "a\x7fb", "é"])
    return "".join(rng.choice("abQ0-_.#19") for _ in range(rng.randint(1, 12)))


def _text(rng: random.Random, width: int) -> str:
    lines = []
    for _ in range(rng.randint(0, 30)):
        k = width if rng.random() < 0.93 else rng.choice([0, width - 1, width + 1])
        fields = [_field(rng) if rng.random() < 0.5 else str(rng.random()) for _ in range(k)]
        lines.append(rng.choice(["", " "]) + "".join(f + rng.choice(SPACE) for f in fields).rstrip(" "))
    return "\n".join(lines) + rng.choice(["", "\n", "\n\n"])


def _read(fields: trec._Fields | None, width: int) -> Any:
    if fields is None:
        return None
    out: dict[str, Any] = {"start": fields.start.tolist(), "end": fields.end.tolist()}
    for k in range(width):
        for multiple in (1, 8):
            chars = fields.chars(k, multiple)
            out[f"chars{k},{multiple}"] = (chars.dtype.str, chars.shape, chars.tolist())
        strings = fields.strings(k)
        out[f"strings{k}"] = (strings.dtype.str, strings.tolist())
        try:
            values = fields.numbers(k)
            out[f"numbers{k}"] = (values.dtype.str, [v.hex() for v in values.tolist()])
        except ValueError:
            out[f"numbers{k}"] = ValueError
    return out


@needs_native
@pytest.mark.parametrize("seed", range(3))
def test_compiled_fields_equal_numpys(seed: int) -> None:
    rng = random.Random(seed)
    read = 0
    for _ in range(700):
        width = rng.choice([1, 4, 6])
        text = _text(rng, width)
        compiled = trec._fields(text, width)
        numpy_only = (
            trec._fields_numpy(text, np.frombuffer(text.encode("ascii"), np.uint8), width) if text.isascii() else None
        )
        assert _read(compiled, width) == _read(numpy_only, width), text
        read += compiled is not None and compiled.start.size > 0
    assert read > 100


@needs_native
def test_bad_arguments_are_refused() -> None:
    assert trec._trec_scan is not None
    found = trec._trec_scan.fields(b"a b\n", 2)
    assert found is not None
    buffer, count, capacity = found
    with pytest.raises(ValueError, match="out of range"):
        trec._trec_scan.chars(b"a b\n", buffer, count, capacity, 2, 2, 1)
    with pytest.raises(ValueError, match="outside the data"):
        trec._trec_scan.numbers(b"a", buffer, count, capacity, 2, 1)
    with pytest.raises(ValueError):
        trec._trec_scan.fields(b"a", 0)
    with pytest.raises(TypeError):
        trec._trec_scan.fields("a b", 2)


def _score(run: Path, qrels: Path) -> str:
    try:
        report = ranking_files.score_files(predictions=run, references=qrels, measures="all_trec")
    except InputFormatError as err:
        return str(err)
    return json.dumps((report.scores, report.items, report.warnings))


@pytest.mark.parametrize("seed", range(3))
def test_files_score_the_same_without_the_compiled_reader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    docs = [f"d{n}" for n in range(50)] + ["msmarco_v2.1_doc_19_4624301049#19_3195777577", "z" * 17]
    run, qrels = [], []
    for q in [f"q{n}" for n in range(8)]:
        for rank, d in enumerate(rng.sample(docs, 30), 1):
            run.append(f"{q} Q0 {d} {rank} {rng.choice(SCORES[:5] + [repr(rng.random())])} r{seed}")
        qrels += [f"{q} 0 {d} {rng.choice([-1, 0, 1, 2])}" for d in rng.sample(docs, 20)]
    if seed == 2:
        run[5] = run[5].rsplit(" ", 2)[0] + " 1_0 r"  # a score trec_eval reads otherwise: every path refuses it
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    run_path.write_text("\n".join(run) + "\n")
    qrels_path.write_text("\n".join(qrels) + "\n")
    compiled = _score(run_path, qrels_path)
    monkeypatch.setattr(trec, "_trec_scan", None)
    assert compiled == _score(run_path, qrels_path)
    assert (seed == 2) == compiled.startswith(str(run_path))
