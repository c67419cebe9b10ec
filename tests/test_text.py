"""ROUGE-N / ROUGE-L / multiset F-score against Google's rouge-score and hand-worked examples."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from metametric_jax import dsl
from metametric_jax.tasks.text import (
    MultisetF1,
    Rouge1,
    Rouge2,
    RougeL,
    lcs_length,
    rouge_l_stats,
    rouge_n,
    rouge_n_stats,
)


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


def _reference_scores(preds: list[list[str]], refs: list[list[str]], kinds: list[str]) -> dict[str, np.ndarray]:
    scorer = rouge_scorer.RougeScorer(kinds, tokenizer=_WhitespaceTokenizer())
    rows = [scorer.score(" ".join(r), " ".join(p)) for p, r in zip(preds, refs)]
    return {k: np.array([[s[k].precision, s[k].recall, s[k].fmeasure] for s in rows], dtype=np.float64) for k in kinds}


def _random_pairs(seed: int, n: int, vocab: int, lo: int = 0, hi: int = 30) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    preds = [[rng.choice(words) for _ in range(rng.randint(lo, hi))] for _ in range(n)]
    refs = [[rng.choice(words) for _ in range(rng.randint(lo, hi))] for _ in range(n)]
    return preds, refs


@pytest.mark.parametrize("seed,vocab", [(0, 4), (1, 12), (2, 50)])
def test_rouge_equals_rouge_score_per_example_and_macro(seed: int, vocab: int) -> None:
    preds, refs = _random_pairs(seed, 150, vocab)
    preds.append([])  # both empty: rouge-score gives 0
    refs.append([])
    preds.append(["w0"])
    refs.append([])
    ref = _reference_scores(preds, refs, ["rouge1", "rouge2", "rouge3", "rougeL"])
    for kind, metric in (("rouge1", Rouge1), ("rouge2", Rouge2), ("rouge3", rouge_n(3)), ("rougeL", RougeL)):
        per_example = np.array([metric.score(p, r) for p, r in zip(preds, refs)])
        np.testing.assert_allclose(per_example, ref[kind][:, 2], atol=1e-12)
        result = metric.from_model_output(preds, refs).compute()
        for j, name in enumerate(("macro_precision", "macro_recall", "macro_f1")):
            assert float(result[name]) == pytest.approx(ref[kind][:, j].mean(), abs=1e-6), (kind, name)


def test_rouge_micro_from_totals() -> None:
    preds, refs = _random_pairs(3, 80, 8, lo=1)
    for metric, stats in ((Rouge2, rouge_n_stats(preds, refs, 2)), (RougeL, rouge_l_stats(preds, refs))):
        hit, np_, nr = stats.sum(0)
        result = metric.from_model_output(preds, refs).compute()
        assert float(result["precision"]) == pytest.approx(hit / np_, abs=1e-6)
        assert float(result["recall"]) == pytest.approx(hit / nr, abs=1e-6)
        assert float(result["f1"]) == pytest.approx(2 * hit / (np_ + nr), abs=1e-6)


def test_rouge_batches_merge_like_one_batch() -> None:
    preds, refs = _random_pairs(4, 60, 6)
    whole = RougeL.from_model_output(preds, refs).compute()
    state = RougeL.empty()
    for i in range(0, 60, 7):
        state = state.merge(RougeL.from_model_output(preds[i : i + 7], refs[i : i + 7]))
    for k, v in whole.items():
        assert float(state.compute()[k]) == pytest.approx(float(v), abs=1e-6)


def _lcs_table(a: list, b: list) -> int:
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            t[i + 1][j + 1] = t[i][j] + 1 if x == y else max(t[i][j + 1], t[i + 1][j])
    return t[-1][-1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=90), st.lists(st.integers(0, 5), max_size=90))
def test_bit_parallel_lcs_equals_table_dp_and_library_sequence_matching(a: list[int], b: list[int]) -> None:
    expected = _lcs_table(a, b)
    assert lcs_length(a, b) == expected
    assert lcs_length(b, a) == expected
    assert dsl.sequence_matching(dsl.discrete()).score(a, b) == expected


def test_rouge_l_is_the_library_sequence_matching_metric() -> None:
    preds, refs = _random_pairs(5, 40, 5)
    generic = dsl.metric(dsl.sequence_matching(dsl.discrete()), normalizer="f1", empty_score=0.0)
    np.testing.assert_array_equal(RougeL.batch_stats(preds, refs), generic.batch_stats(preds, refs))
    explained = RougeL.explain(["a", "b", "c", "d"], ["a", "c", "b", "d"])
    assert explained.score == 3


def test_rouge_n_is_the_library_set_matching_over_ngrams() -> None:
    preds, refs = _random_pairs(6, 40, 4)
    generic = dsl.metric(
        dsl.preprocess(dsl.set_matching(dsl.discrete()), pred=lambda t: list(zip(t, t[1:]))), normalizer="f1"
    )
    np.testing.assert_array_equal(Rouge2.batch_stats(preds, refs), generic.batch_stats(preds, refs))


def test_strings_are_whitespace_tokenized() -> None:
    assert RougeL.stats("a b  c d", "a c b d") == (3.0, 4.0, 4.0)
    assert Rouge1.stats("x y", ["x", "z"]) == (1.0, 2.0, 2.0)


def test_bad_input_is_rejected() -> None:
    with pytest.raises(TypeError, match="token sequence"):
        RougeL.stats(3, ["a"])
    with pytest.raises(ValueError, match="positive integer"):
        rouge_n(0)
    with pytest.raises(ValueError, match="same length"):
        Rouge1.from_model_output([["a"]], [])


def test_multiset_f_score_sentence_example() -> None:
    pred = "a mouse and a cat chase the mouse".split()
    ref = "the mouse and the cat chase a second mouse".split()
    result = MultisetF1.from_model_output([pred], [ref]).compute()
    assert float(result["precision"]) == pytest.approx(7 / 8, abs=1e-6)
    assert float(result["recall"]) == pytest.approx(7 / 9, abs=1e-6)
    assert float(result["f1"]) == pytest.approx(2 * 7 / 17, abs=1e-6)
    assert float(result["f1"]) == pytest.approx(0.82, abs=0.005)


def test_multiset_f_score_is_micro_over_a_corpus() -> None:
    preds = [["a", "a", "b"], ["c"], ["d", "e"]]
    refs = [["a", "b", "b"], ["c", "c", "c", "c"], ["x"]]
    result = MultisetF1.from_model_output(preds, refs).compute()
    # hits 2 + 1 + 0 = 3, predicted 3 + 1 + 2 = 6, reference 3 + 4 + 1 = 8
    assert float(result["precision"]) == pytest.approx(3 / 6, abs=1e-6)
    assert float(result["recall"]) == pytest.approx(3 / 8, abs=1e-6)
    assert float(result["macro_precision"]) == pytest.approx((2 / 3 + 1 + 0) / 3, abs=1e-6)


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    preds, refs = _random_pairs(8, 12, 5)
    for metric in (Rouge1, Rouge2, RougeL, MultisetF1):
        check_accumulator_laws(metric, preds, refs)
