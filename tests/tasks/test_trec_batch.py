"""The vectorized figures of many queries equal the query-by-query figures bit for bit (trec_batch vs trec_oracle)."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from trec_oracle import query_values

from metametric_jax.tasks import ranking_queries, trec_batch
from metametric_jax.tasks.ranking import score, score_files
from metametric_jax.tasks.trec_batch import _chunks, batch_values
from metametric_jax.tasks.trec_measures import parse_measures, plan_keys

ALL = parse_measures("all_trec")
WITH_PARAMETERS = parse_measures(
    [
        "all_trec",
        "P.1,3,7,2000",
        "utility.2,-0.5,1,0.25",
        "11pt_avg.0.5,0.25,1,0",
        "iprec_at_recall.0.33,0.05",
        "Rprec_mult.0.3,3.5,0",
        "set_F.0.25",
        "unj.1,3,50",
        "ndcg_cut.1,2,3,7",
        "map_cut.1,4",
        "relative_P.2,3",
        "success.2,3",
    ]
)
WEIRD = parse_measures(["all_trec", "rbp.p=0.5", "rbp_resid.p=1", "11pt_avg.1,0.5"])


def _query(rng: random.Random) -> tuple[list[str], dict[str, int]]:
    """A query of every kind: empty, no relevant item, unjudged items, grades up to 4, long or short."""
    shape = rng.random()
    n = 0 if shape < 0.08 else rng.choice([1, 2, 3, 5, 10, 40, 150, 1200 if rng.random() < 0.1 else 60])
    pool = [f"d{i}" for i in range(max(2 * n, 8))]
    ranking = rng.sample(pool, n)  # each item once, as every path requires
    judged = rng.sample(pool, rng.randint(0, len(pool))) + [f"x{i}" for i in range(rng.randint(0, 5))]
    grades: dict[str, Any] = {}
    for doc in judged:
        if shape < 0.2:
            grades[doc] = rng.choice([0, -1])  # no relevant item
        else:
            grades[doc] = rng.choice([0, 0, 1, 1, 2, 3, 4, -1, -2])
    return ranking, grades


def _queries(seed: int, count: int) -> tuple[list[list[str]], list[dict[str, int]]]:
    rng = random.Random(seed)
    pairs = [_query(rng) for _ in range(count)]
    return [p for p, _ in pairs], [r for _, r in pairs]


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float64).view(np.int64)  # equal bits: NaNs and signed zeros included


@pytest.mark.parametrize("plan", [ALL, WITH_PARAMETERS, WEIRD], ids=["all_trec", "parameters", "persistence"])
@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("max_retrieved", [None, 0, 7])
def test_evaluate_equals_query_by_query(plan: Any, level: int, max_retrieved: int | None) -> None:
    predictions, references = _queries(level * 10 + (max_retrieved or 0), 120)
    got = ranking_queries.evaluate(predictions, references, plan, level=level, max_retrieved=max_retrieved)
    expected = np.array(
        [
            query_values(p if max_retrieved is None else p[:max_retrieved], r, plan, level)
            for p, r in zip(predictions, references)
        ]
    )
    keys = plan_keys(plan)
    assert list(got) == keys
    table = np.stack([got[k] for k in keys], axis=1)
    differ = [keys[j] for j in range(len(keys)) if not (_bits(table[:, j]) == _bits(expected[:, j])).all()]
    assert not differ
    if level == 0:  # Rndcg's NaN (relevant items, none of positive grade) is among the queries
        assert np.isnan(expected).any()


def test_batches_cover_every_query_once() -> None:
    rng = np.random.default_rng(3)
    n = rng.integers(1, 5000, 400)
    m = rng.integers(0, 300, 400)
    chunks = _chunks(n, m)
    assert sorted(np.concatenate(chunks).tolist()) == list(range(400))
    assert len(chunks) > 1
    for rows in chunks:  # the padding stays within twice the cells or the small allowance
        assert rows.size * (n[rows].max() + m[rows].max()) <= max(2 * (n[rows] + m[rows]).sum(), 1 << 16)
        assert rows.size == 1 or (n[rows] + m[rows]).sum() <= trec_batch._CELLS  # a batch's arrays stay small


@pytest.mark.parametrize("cells", [1, 3000, 1 << 62])
def test_batches_of_any_size_give_the_same_bits(monkeypatch: pytest.MonkeyPatch, cells: int) -> None:
    """Queries one per batch (cells 1), a few per batch, and all in one batch: the same figures, bit for bit."""
    predictions, references = _queries(11, 80)
    codes = ranking_queries._codes(predictions, references)
    judged = [np.array([g for g in r.values() if g >= 0], np.int64) for r in references]
    empty = [not p for p in predictions]
    expected = batch_values(codes, empty, judged, WITH_PARAMETERS)
    monkeypatch.setattr(trec_batch, "_CELLS", cells)
    sizes = np.array([len(c) for c in codes])
    grades = np.array([(j > 0).sum() for j in judged])
    batches = _chunks(sizes, grades)
    assert (len(batches) == 80) if cells == 1 else (1 < len(batches) < 80) if cells == 3000 else True
    assert (_bits(batch_values(codes, empty, judged, WITH_PARAMETERS)) == _bits(expected)).all()


def test_one_query_at_a_time_and_all_at_once_agree() -> None:
    predictions, references = _queries(7, 60)
    plan = ALL
    codes = ranking_queries._codes(predictions, references)
    judged = [np.array([g for g in r.values() if g >= 0], np.int64) for r in references]
    empty = [not p for p in predictions]
    together = batch_values(codes, empty, judged, plan)
    alone = np.concatenate(
        [batch_values(codes[i : i + 1], empty[i : i + 1], judged[i : i + 1], plan) for i in range(60)]
    )
    assert (_bits(together) == _bits(alone)).all()
    assert batch_values([], [], [], plan).shape == (0, len(plan_keys(plan)))


def test_ties_and_complete_from_files_per_query(tmp_path: Any) -> None:
    """The per-query output (-q) of files with ties, unjudged and absent queries: each figure as query_values."""
    rng = random.Random(11)
    run_lines, qrels_lines = [], []
    for q in range(40):
        docs = [f"doc{i}" for i in rng.sample(range(300), rng.choice([0, 1, 5, 50, 120]))]
        for i, doc in enumerate(docs):
            run_lines.append(f"q{q} Q0 {doc} {i} {rng.choice([0.5, 0.25, 1.0, round(rng.random(), 1)])} r")
        for doc in rng.sample([f"doc{i}" for i in range(300)], rng.randint(0, 60)):
            qrels_lines.append(f"q{q} 0 {doc} {rng.choice([-1, 0, 0, 1, 2, 3])}")
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    report = score_files(
        predictions=tmp_path / "run", references=tmp_path / "qrels", measures="all_trec", complete=True
    )
    from metametric_jax.tasks.readers.trec import read_qrels, read_run

    qrels, run = read_qrels(tmp_path / "qrels"), read_run(tmp_path / "run").rankings
    assert len(report.items) == len(qrels)
    for item in report.items:
        qid = item["id"]
        expected = dict(zip(plan_keys(ALL), query_values(run.get(qid, []), qrels[qid], ALL)))
        for key, value in item.items():
            if key != "id":
                assert json.dumps(value) == json.dumps(int(expected[key]) if isinstance(value, int) else expected[key])


def test_score_of_mappings_unchanged_by_batching() -> None:
    predictions, references = _queries(5, 30)
    got = score(dict(enumerate(predictions)), dict(enumerate(references)), measures="all_trec", complete=True)
    rows = np.array([query_values(p, r, ALL) for p, r in zip(predictions, references)])
    keys = plan_keys(ALL)
    assert got["num_q"] == 30
    assert got["num_ret"] == int(rows[:, keys.index("num_ret")].sum())
    assert got["num_rel_ret"] == int(rows[:, keys.index("num_rel_ret")].sum())
