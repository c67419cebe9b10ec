"""Counting in chunks of sentences (one process, ``CHUNK_WORDS``) gives the counts of the whole files, array for array.

The stored EVALB fixtures (every parameter file) and generated treebanks (empty parses, words deleted by the
parameters, unary chains, function tags, error sentences, quote words, non-ASCII words) are counted whole and in
chunks of a few words; every array and every message must be equal.
"""

from __future__ import annotations

import dataclasses
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
    for field in dataclasses.fields(SentenceCounts):
        a, b = getattr(got, field.name), getattr(want, field.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


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
