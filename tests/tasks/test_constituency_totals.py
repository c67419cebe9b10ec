"""EVALB's summary sums its per-sentence columns as integers: the same bits as the exact sum of the float rows."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.intervals import exact_totals
from metametric_jax.tasks.constituency_counts import COLLINS, EvalbParams, SentenceCounts, evalb_counts, read_params
from metametric_jax.tasks.constituency_readout import ROW_FIELDS, readout, sentence_rows, summarize
from metametric_jax.tasks.readers.ptb import read_treebank

DATA = Path(__file__).resolve().parents[1] / "data" / "constituency"


def _random_counts(rng: random.Random, n: int) -> SentenceCounts:
    def ints(hi: int) -> np.ndarray:
        return np.array([rng.randint(0, hi) for _ in range(n)], dtype=np.int64)

    gold, test = ints(30), ints(30)
    matched = np.minimum(np.minimum(gold, test), ints(30))
    words = ints(60)
    return SentenceCounts(
        status=ints(2),
        length=ints(80),
        matched=matched,
        gold=gold,
        test=test,
        crossing=ints(5),
        words=words,
        correct_tags=np.minimum(words, ints(60)),
        line=np.arange(1, n + 1),
        messages={},
    )


def _check(counts: SentenceCounts, params: EvalbParams) -> None:
    totals = exact_totals(sentence_rows(counts, params))
    summary = summarize(counts, params)
    figures = readout(totals)
    for k, part in enumerate(("all", "len40")):
        for key, value in figures[part].items():
            assert summary[part][key] == value, (part, key)  # bit for bit
        for j, key in enumerate(ROW_FIELDS):
            if isinstance(summary[part].get(key), int):  # the counts (complete_match and others are figures)
                assert summary[part][key] == totals[k * len(ROW_FIELDS) + j], (part, key)


@pytest.mark.parametrize("prm", ["COLLINS.prm", "nk.prm", "labeled.prm", "custom.prm"])
def test_fixture_summary_is_the_exact_sum_of_the_rows(prm: str) -> None:
    params = read_params(DATA / prm)
    _check(evalb_counts(read_treebank(DATA / "pred.mrg"), read_treebank(DATA / "gold.mrg"), params), params)


@pytest.mark.parametrize("seed", range(5))
def test_random_counts_summary_is_the_exact_sum_of_the_rows(seed: int) -> None:
    rng = random.Random(seed)
    for n in (0, 1, rng.randint(2, 500)):
        counts = _random_counts(rng, n)
        for cutoff in (0, 10, 40):
            _check(counts, EvalbParams(cutoff_len=cutoff) if cutoff != 40 else COLLINS)
