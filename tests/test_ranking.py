"""precision@k, recall@k and average precision: metametric's example, scikit-learn's AP, plain definitions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from metametric_jax.tasks.ranking import AveragePrecisionMetric, precision_at_k, rank, ranking_metric, recall_at_k

PRED = ["a", "b", "c", "d"]
REF = {"c", "d", "e"}


def test_metametric_documentation_example() -> None:
    assert AveragePrecisionMetric.score(PRED, REF) == pytest.approx((1 / 3 + 2 / 4) / 3)
    assert AveragePrecisionMetric.score(PRED, REF) == pytest.approx(0.2778, abs=1e-4)
    # metametric's test values for k <= 4 (beyond the ranking's length it divides by the length, trec_eval by k)
    for k, p, r in ((1, 0.0, 0.0), (2, 0.0, 0.0), (3, 1 / 3, 1 / 3), (4, 0.5, 2 / 3)):
        assert precision_at_k(k).score(PRED, REF) == pytest.approx(p)
        assert recall_at_k(k).score(PRED, REF) == pytest.approx(r)
    assert precision_at_k(5).score(PRED, REF) == pytest.approx(2 / 5)
    assert recall_at_k(10).score(PRED, REF) == pytest.approx(2 / 3)


def test_rank_sorts_scored_items() -> None:
    assert rank([("a", 0.4), ("b", 0.3), ("c", 0.2), ("d", 0.1)]) == PRED
    assert rank({"x": 0.1, "y": 0.9}) == ["y", "x"]
    with pytest.raises(TypeError, match="pairs"):
        rank(["a", "b"])


def _queries(seed: int, n: int) -> tuple[list[list[int]], list[set[int]], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    preds, refs, scores = [], [], []
    for _ in range(n):
        size = int(rng.integers(2, 25))
        s = rng.random(size)
        labels = rng.random(size) < 0.3
        labels[int(rng.integers(size))] = True  # at least one relevant item
        order = np.argsort(-s)
        preds.append([int(i) for i in order])
        refs.append({int(i) for i in np.flatnonzero(labels)})
        scores.append((labels.astype(int), s))
    return preds, refs, scores


def test_average_precision_equals_scikit_learn_on_full_rankings() -> None:
    preds, refs, scores = _queries(0, 60)
    ours = [AveragePrecisionMetric.score(p, r) for p, r in zip(preds, refs)]
    theirs = [average_precision_score(y, s) for y, s in scores]
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    result = AveragePrecisionMetric.from_model_output(preds, refs).compute()
    assert float(result["macro_recall"]) == pytest.approx(np.mean(theirs), abs=1e-6)


def _plain_at_k(ranking: list, relevant: set, k: int) -> tuple[float, float]:
    hits = len(set(ranking[:k]) & relevant)
    return hits / k, (hits / len(relevant) if relevant else 0.0)


def test_suite_matches_plain_definitions_and_members() -> None:
    rng = random.Random(1)
    preds = [[rng.randrange(30) for _ in range(rng.randint(0, 15))] for _ in range(50)]
    preds = [list(dict.fromkeys(p)) for p in preds]  # rankings without repeats
    refs = [{rng.randrange(30) for _ in range(rng.randint(1, 8))} for _ in range(50)]
    ks = (1, 3, 10)
    out = ranking_metric(ks).from_model_output(preds, refs).compute()
    for k in ks:
        plain = np.array([_plain_at_k(p, r, k) for p, r in zip(preds, refs)])
        assert float(out["mean"][f"P@{k}"]) == pytest.approx(plain[:, 0].mean(), abs=1e-6)
        assert float(out["mean"][f"R@{k}"]) == pytest.approx(plain[:, 1].mean(), abs=1e-6)
        alone = precision_at_k(k).from_model_output(preds, refs).compute()
        for key, v in alone.items():
            assert float(out[f"precision@{k}"][key]) == pytest.approx(float(v), abs=1e-6)
        alone = recall_at_k(k).from_model_output(preds, refs).compute()
        for key, v in alone.items():
            assert float(out[f"recall@{k}"][key]) == pytest.approx(float(v), abs=1e-6)
    alone = AveragePrecisionMetric.from_model_output(preds, refs).compute()
    for key, v in alone.items():
        assert float(out["ap"][key]) == pytest.approx(float(v), abs=1e-6)
    assert float(out["mean"]["MAP"]) == pytest.approx(float(alone["macro_recall"]), abs=1e-6)


def test_repeated_items_count_once() -> None:
    assert precision_at_k(3).score(["c", "c", "c"], REF) == pytest.approx(1 / 3)
    assert AveragePrecisionMetric.score(["c", "c", "d"], REF) == pytest.approx((1 + 2 / 3) / 3)
    out = ranking_metric((3,)).from_model_output([["c", "c", "d"]], [REF]).compute()
    assert float(out["mean"]["MAP"]) == pytest.approx((1 + 2 / 3) / 3, abs=1e-6)
    assert float(out["mean"]["P@3"]) == pytest.approx(2 / 3, abs=1e-6)


def test_bad_cutoffs() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            precision_at_k(bad)
    with pytest.raises(ValueError, match="repeated"):
        ranking_metric((5, 5))
    with pytest.raises(ValueError, match="at least one"):
        ranking_metric(())
    with pytest.raises(TypeError, match="not strings"):
        ranking_metric((1,)).from_model_output(["abc"], [{"a"}])


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    preds, refs, _ = _queries(2, 12)
    check_accumulator_laws(ranking_metric((1, 3)), preds, refs)
    check_accumulator_laws(AveragePrecisionMetric, preds, refs)
