"""Every reader reads text one way: a byte that is not UTF-8 is one message naming the file, the line and the byte,
from the reader and from ``metametric-jax score TASK`` alike (exit status 1, one line)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from helpers import run

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.constituency import read_params
from metametric_jax.tasks.ie import read_documents
from metametric_jax.tasks.readers.conll import read_conll, read_conlleval
from metametric_jax.tasks.readers.conll2012 import read_conll2012
from metametric_jax.tasks.readers.conllu import read_conllu
from metametric_jax.tasks.readers.jsonl import read_jsonl
from metametric_jax.tasks.readers.penman import read_penman
from metametric_jax.tasks.readers.ptb import read_treebank, read_trees
from metametric_jax.tasks.readers.text import decode_text, read_text, read_utf8, split_lines
from metametric_jax.tasks.readers.trec import read_qrels, read_run
from metametric_jax.tasks.rouge import read_texts

DATA = resources.files("metametric_jax") / "data"

#: task -> (its two input options, reference sample, predicted sample)
SAMPLES = {
    "ner": (("--gold", "--pred"), "ner/gold.txt", "ner/pred.txt"),
    "coref": (("--key", "--response"), "coref/sample.key", "coref/sample.response"),
    "amr": (("--gold", "--pred"), "amr/gold.txt", "amr/pred.txt"),
    "ie": (("--gold", "--pred"), "ie/gold.jsonl", "ie/pred.jsonl"),
    "dependency": (("--gold", "--pred"), "parsing/gold.conllu", "parsing/pred.conllu"),
    "constituency": (("--gold", "--pred"), "parsing/gold.mrg", "parsing/pred.mrg"),
    "ranking": (("--qrels", "--run"), "ranking/sample.qrels", "ranking/sample.run"),
    "rouge": (("--references", "--predictions"), "rouge/references.txt", "rouge/predictions.txt"),
}

#: every reader of a file, with the sample it can read
READERS: list[tuple[str, Callable[[Path], Any], str]] = [
    ("read_conll", read_conll, "ner/pred.txt"),
    ("read_conlleval", read_conlleval, "ner/pred.txt"),
    ("read_conll2012", read_conll2012, "coref/sample.key"),
    ("read_penman", read_penman, "amr/gold.txt"),
    ("read_jsonl", read_jsonl, "ie/gold.jsonl"),
    ("read_documents", read_documents, "ie/gold.jsonl"),
    ("read_conllu", read_conllu, "parsing/gold.conllu"),
    ("read_treebank", read_treebank, "parsing/gold.mrg"),
    ("read_trees", read_trees, "parsing/gold.mrg"),
    ("read_params", read_params, None),
    ("read_qrels", read_qrels, "ranking/sample.qrels"),
    ("read_run", read_run, "ranking/sample.run"),
    ("read_texts", read_texts, "rouge/references.txt"),
    ("read_texts (.jsonl)", read_texts, None),
    ("read_text", read_text, "ner/gold.txt"),
    ("read_utf8", read_utf8, "ner/gold.txt"),
]


def _message(path: Path, line: int) -> str:
    return f"{path}:{line}: expected UTF-8 text; found the byte 0xff, which is not valid UTF-8"


def _spoil(source: bytes, dest: Path, line: int = 2) -> Path:
    """``source`` with a byte 0xff at the start of ``line``, written to ``dest``."""
    lines = source.split(b"\n")
    assert len(lines) > line
    lines[line - 1] = b"\xff" + lines[line - 1]
    dest.write_bytes(b"\n".join(lines))
    return dest


def _sample(name: str | None, label: str) -> bytes:
    if name is not None:
        return (DATA / name).read_bytes()
    if label == "read_params":
        return b"DELETE_LABEL TOP\nDELETE_LABEL -NONE-\nEQ_LABEL ADVP PRT\n"
    return b'"a summary"\n"another one"\n"a third"\n'


@pytest.mark.parametrize("label, reader, sample", READERS, ids=[r[0] for r in READERS])
def test_every_reader_names_file_line_and_byte(tmp_path: Path, label: str, reader: Callable, sample: str) -> None:
    suffix = ".jsonl" if label.endswith("(.jsonl)") else Path(sample or "params.prm").suffix
    good = tmp_path / f"good{suffix}"
    good.write_bytes(_sample(sample, label))
    reader(good)  # the sample itself reads
    for line in (1, 3):
        bad = _spoil(_sample(sample, label), tmp_path / f"bad{line}{suffix}", line)
        with pytest.raises(InputFormatError) as info:
            reader(bad)
        assert str(info.value) == _message(bad, line)
        assert (info.value.path, info.value.line) == (str(bad), line)


def test_bad_byte_with_a_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc\xff\r\n")
    with pytest.raises(InputFormatError) as info:
        read_text(path)
    assert str(info.value) == _message(path, 3)
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert read_text(path) == "a\r\nb\r\n" and read_utf8(path) == b"\xef\xbb\xbfa\r\nb\r\n"
    assert decode_text(b"\xef\xbb\xbf", "x") == "" and split_lines("a\r\n\nb\n") == ["a\r", "", "b"]


@pytest.mark.parametrize("side", [0, 1], ids=["reference", "prediction"])
@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_every_task_on_the_command_line(capsys, tmp_path: Path, task: str, side: int) -> None:
    options, *samples = SAMPLES[task]
    files = [tmp_path / Path(s).name for s in samples]
    for s, f in zip(samples, files):
        f.write_bytes((DATA / s).read_bytes())
    bad = _spoil((DATA / samples[side]).read_bytes(), files[side], 2)
    code, out, err = run(capsys, "score", task, options[0], str(files[0]), options[1], str(files[1]))
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [f"metametric-jax: error: {_message(bad, 2)}"]


def test_constituency_parameter_file_on_the_command_line(capsys, tmp_path: Path) -> None:
    prm = _spoil(b"DELETE_LABEL TOP\nDELETE_LABEL -NONE-\n", tmp_path / "bad.prm", 2)
    gold, pred = (str(DATA / "parsing" / n) for n in ("gold.mrg", "pred.mrg"))
    code, _, err = run(capsys, "score", "constituency", "--gold", gold, "--pred", pred, "--params", prm.as_posix())
    assert code == 1
    assert err.strip().splitlines() == [f"metametric-jax: error: {_message(prm, 2)}"]


def test_utf8_checked_from_the_runs_of_non_ascii_bytes_as_decoding_the_whole(tmp_path: Path) -> None:
    """check_utf8 decodes only the runs of non-ASCII bytes: it accepts and refuses what bytes.decode does."""
    import random

    from metametric_jax.tasks.readers.text import check_utf8

    rng = random.Random(3)
    pieces = [b"A", b"\n", b" ", b"\xc3", b"\xa9", b"\xe2\x82\xac", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80"]
    pieces += [b"\xff", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\x80", b"\xef\xbb\xbf", b"\xf0\x9f"]
    refused = 0
    for _ in range(5000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            refused += 1
            with pytest.raises(InputFormatError) as got:
                check_utf8(data, "f.txt")
            line, byte = data.count(b"\n", 0, err.start) + 1, data[err.start]
            assert str(got.value).startswith(f"f.txt:{line}: expected UTF-8 text; found the byte 0x{byte:02x}")
        else:
            check_utf8(data, "f.txt")
    assert 1000 < refused < 4500
    path = tmp_path / "t.mrg"
    path.write_bytes("(S (NP café) (VP naïve))\n".encode() * 1000 + b"(S (X \xe9t\xe9))\n")
    with pytest.raises(InputFormatError, match=r"t\.mrg:1001: expected UTF-8 text; found the byte 0xe9"):
        read_utf8(path)
