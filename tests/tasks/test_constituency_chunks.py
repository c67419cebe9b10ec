"""Counting in chunks of sentences (one process, ``CHUNK_WORDS``) gives the counts of the whole files, array for array.

The stored EVALB fixtures (every parameter file) and generated treebanks (empty parses, words deleted by the
parameters, unary chains, function tags, error sentences, quote words, non-ASCII words) are counted whole and in
chunks of a few words; every array and every message must be equal.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.tasks import constituency_files as files
from metametric_jax.tasks.constituency_counts import COLLINS, SentenceCounts, evalb_counts, read_params
from metametric_jax.tasks.readers.ptb import read_treebank, scan_trees

DATA = Path(__file__).resolve().parents[1] / "data" / "constituency"
PARAMS = ["COLLINS.prm", "custom.prm", "labeled.prm", "nk.prm"]
FIXTURES = [(DATA / "gold.mrg", DATA / "pred.mrg", DATA / p) for p in PARAMS]
SAMPLE = DATA / "evalb_sample"
FIXTURES.append((SAMPLE / "sample.gld", SAMPLE / "sample.tst", SAMPLE / "sample.prm"))


def assert_same(got: SentenceCounts, want: SentenceCounts) -> None:
    for field in SentenceCounts._fields:
        a, b = getattr(got, field), getattr(want, field)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field
        else:
            assert a == b, field


@pytest.mark.parametrize("words", [1, 5, 40])
@pytest.mark.parametrize(("gold", "pred", "prm"), FIXTURES, ids=[f"{f[0].parent.name}/{f[2].name}" for f in FIXTURES])
def test_fixtures_counted_in_chunks_equal_whole(monkeypatch, gold, pred, prm, words) -> None:
    params = read_params(prm)
    g, t = read_treebank(gold), read_treebank(pred)
    whole = evalb_counts(t, g, params)
    monkeypatch.setattr(files, "CHUNK_WORDS", words)
    assert len(files._bounds(g, words)) > 1
    assert_same(files.counts_in_chunks(t, g, params), whole)


def _tree(rng: random.Random, depth: int, words: list[tuple[str, str]]) -> str:
    if depth == 0 or rng.random() < 0.3:
        tag, word = rng.choice(words)
        return f"({tag} {word})"
    label = rng.choice(["NP", "VP", "S", "PP", "ADVP", "PRT", "NP-SBJ", "S=2", "-NONE-", "TOP"])
    if rng.random() < 0.2:  # a unary chain
        return f"({label} ({label} {_tree(rng, depth - 1, words)}))"
    return f"({label} {' '.join(_tree(rng, depth - 1, words) for _ in range(rng.randint(1, 3)))})"


def _changed(rng: random.Random, tree: str) -> str:
    out = tree
    # a label, a tag, one more deleted word, a word (an error), one more word (an error)
    for old, new in [
        ("NP", "VP"),
        ("(DT", "(NN"),
        ("(, ,)", "(, ,) (. .)"),
        ("(X é)", "(X e)"),
        ("(NN b)", "(NN b) (NN c)"),
    ]:
        if rng.random() < 0.15:
            out = out.replace(old, new, 1)
    return out


WORDS = [("DT", "a"), ("NN", "b"), (",", ","), (".", "."), ("-NONE-", "*T*"), ("''", "'"), ("POS", "'"), ("X", "é")]


@pytest.mark.parametrize("seed", range(6))
def test_generated_treebanks_counted_in_chunks_equal_whole(monkeypatch, seed) -> None:
    rng = random.Random(seed)
    gold, pred = [], []
    statuses: set[int] = set()
    for _ in range(rng.randint(2, 60)):
        tree = f"( {_tree(rng, rng.randint(1, 4), WORDS)})" if rng.random() < 0.5 else _tree(rng, 4, WORDS)
        gold.append(tree)
        pred.append("" if rng.random() < 0.1 else _changed(rng, tree))
    pred[-1] = pred[-1] or gold[-1]  # (a file ends at its last tree)
    g = scan_trees("\n".join(gold).encode() + b"\n", "gold", one_per_line=True)
    t = scan_trees("\n".join(pred).encode() + b"\n", "pred", one_per_line=True)
    assert t.sentences == g.sentences
    for params in (COLLINS, read_params(DATA / "nk.prm"), read_params(DATA / "labeled.prm")):
        whole = evalb_counts(t, g, params)
        statuses.update(whole.status.tolist())
        for words in (1, 3, 17):
            monkeypatch.setattr(files, "CHUNK_WORDS", words)
            assert_same(files.counts_in_chunks(t, g, params), whole)
    assert statuses == {0, 1, 2}  # valid, error and skipped sentences were all counted


def _whole(pred: Path, gold: Path, params=COLLINS) -> SentenceCounts | str:
    """The counts of the files read whole (as before pieces), or the error's message."""
    try:
        return evalb_counts(read_treebank(pred), read_treebank(gold), params)
    except Exception as err:  # noqa: BLE001 - the message is compared
        return f"{type(err).__name__}: {err}"


def _pieces(pred: Path, gold: Path, params=COLLINS) -> SentenceCounts | str:
    try:
        return files.file_counts(pred, gold, params)
    except Exception as err:  # noqa: BLE001 - the message is compared
        return f"{type(err).__name__}: {err}"


def _check(monkeypatch, pred: Path, gold: Path, params=COLLINS, sizes=(16, 64, 300)) -> SentenceCounts | str:
    want = _whole(pred, gold, params)
    for size in sizes:
        monkeypatch.setattr(files, "PIECE_BYTES", size)
        got = _pieces(pred, gold, params)
        if isinstance(want, str):
            assert got == want
        else:
            assert not isinstance(got, str), got
            assert_same(got, want)
    return want


@pytest.mark.parametrize(("gold", "pred", "prm"), FIXTURES, ids=[f"{f[0].parent.name}/{f[2].name}" for f in FIXTURES])
def test_fixtures_read_in_pieces_equal_whole(monkeypatch, gold, pred, prm) -> None:
    params = read_params(prm)
    one_per_line = read_treebank(gold).sentences == gold.read_bytes().rstrip(b"\n").count(b"\n") + 1
    n = read_treebank(gold).sentences
    assert files._in_pieces(pred.read_bytes(), gold.read_bytes(), params) is None  # one piece: the files read whole
    monkeypatch.setattr(files, "PIECE_BYTES", 100)
    pieces = files._in_pieces(pred.read_bytes(), gold.read_bytes(), params)
    assert (pieces is not None) == one_per_line and n > 1
    assert not isinstance(_check(monkeypatch, pred, gold, params, sizes=(16, 300)), str)  # a sentence a piece; several


#: Changes of one file's bytes: a tree over two lines, malformed brackets, a byte-order mark inside the file, a
#: part-of-speech node of two words, one more sentence, one more (blank) line, a byte that is not UTF-8.
CHANGES = [
    (b") (", b")\n("),
    (b")", b""),
    (b"(", b"(("),
    (b"\n(", b"\n\xef\xbb\xbf("),
    (b"(DT a)", b"(DT a b)"),
    (b"\n", b"\n(S (DT a))\n"),
    (b"\n", b"\n\n"),
    (b"a", b"\xff"),
]


@pytest.mark.parametrize("seed", range(8))
def test_generated_files_read_in_pieces_equal_whole(monkeypatch, tmp_path: Path, seed) -> None:
    rng = random.Random(100 + seed)
    gold, pred = [], []
    for _ in range(rng.randint(3, 50)):
        tree = _tree(rng, rng.randint(1, 4), WORDS)
        gold.append(tree)
        pred.append("" if rng.random() < 0.15 else _changed(rng, tree))  # empty parses
    pred[-1] = pred[-1] or gold[-1]  # (a file ends at its last tree)
    end = rng.choice(["\n", "\n\n\n", "", "\r\n"])  # blank lines after the last tree, CRLF
    sep = "\r\n" if end == "\r\n" else "\n"
    gold_path, pred_path = tmp_path / "gold.mrg", tmp_path / "pred.mrg"
    gold_path.write_bytes((sep.join(gold) + end).encode())
    pred_path.write_bytes(("\ufeff" if seed % 2 else "").encode() + (sep.join(pred) + end).encode())
    monkeypatch.setattr(files, "PIECE_BYTES", 40)
    assert files._in_pieces(pred_path.read_bytes(), gold_path.read_bytes(), COLLINS) is not None
    for params in (COLLINS, read_params(DATA / "nk.prm")):
        assert not isinstance(_check(monkeypatch, pred_path, gold_path, params), str)
    # each change of either file: read whole, the same error or the same counts
    for path in (pred_path, gold_path):
        original = path.read_bytes()
        for old, new in CHANGES:
            at = original.find(old, rng.randrange(len(original)))
            at = original.find(old) if at < 0 else at
            path.write_bytes(original[:at] + new + original[at + len(old) :])
            _check(monkeypatch, pred_path, gold_path)
        for tail in (b"x\n", b"\n\n(\n", b" )"):  # text after the last tree
            path.write_bytes(original + tail)
            assert isinstance(_check(monkeypatch, pred_path, gold_path), str)
        path.write_bytes(original)


def test_unreadable_reference_after_the_predictions_errors(monkeypatch, tmp_path: Path) -> None:
    pred = tmp_path / "pred.mrg"
    pred.write_text("(S (DT a)\n")
    missing = tmp_path / "missing.mrg"
    monkeypatch.setattr(files, "PIECE_BYTES", 4)
    got = _pieces(pred, missing)
    assert got == _whole(pred, missing)
    assert isinstance(got, str) and "pred.mrg" in got  # the predictions' error comes first, as when read whole
    pred.write_text("(S (DT a))\n(S (DT b))\n")
    got = _pieces(pred, missing)
    assert got == _whole(pred, missing) and isinstance(got, str) and "missing.mrg" in got
