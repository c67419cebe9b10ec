"""Ranking: every trec_eval measure we offer equal to trec_eval's output, the readers, the API and the accumulators."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from metametric_jax.errors import InputFormatError
from metametric_jax.ranking import MEASURES, AtK, AveragePrecision, query_statistics, ranked_list
from metametric_jax.tasks import ranking
from metametric_jax.tasks.ranking import (
    RankingMetric,
    parse_measures,
    precision_at_k,
    rank,
    recall_at_k,
    score,
    score_files,
)
from metametric_jax.tasks.readers.trec import parse_qrels, parse_run, read_run

DATA = Path(__file__).parent / "data" / "ranking"
CASES = json.loads((DATA / "cases.json").read_text())
PRED = ["a", "b", "c", "d"]
REF = {"c", "d", "e"}


def _family(name: str) -> str | None:
    if name in MEASURES:
        return name
    head = name.rsplit("_", 1)[0]
    return head if head in MEASURES and MEASURES[head].params is not None else None


def _trec_output(name: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in (DATA / "expected" / f"{name}.txt").read_text().splitlines():
        measure, qid, value = line.split()
        out.setdefault(qid, {})[measure] = value
    return out


def _printed(value: float | int, text: str) -> str:
    return str(int(value)) if "." not in text else f"{value:.4f}"


# ---------------------------------------------------------------------------------------------- trec_eval parity
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_measure_equals_trec_eval(case: str) -> None:
    """Every figure trec_eval prints (per query and for the run) for a measure we offer, equal to its 4 decimals."""
    spec = CASES[case]
    report = score_files(predictions=DATA / spec["run"], references=DATA / spec["qrels"], **spec["options"])
    expected = _trec_output(case)
    ours = {str(item["id"]): item for item in report.items}
    assert set(ours) == set(expected) - {"all"}, "the queries evaluated differ from trec_eval's"
    compared, families = 0, set()
    for qid, measures in expected.items():
        mine = report.scores if qid == "all" else ours[qid]
        for measure, text in measures.items():
            family = _family(measure)
            if family is None or (family == "iprec_at_recall" and spec["trec_eval"] == "9"):
                continue  # not offered; trec_eval 9 turned recall levels into ranks differently (see README)
            families.add(family)
            assert measure in mine, f"{qid}: {measure} missing"
            assert _printed(mine[measure], text) == text, (qid, measure, mine[measure], text)
            assert mine[measure] == pytest.approx(float(text), abs=5e-5 + 1e-12)
            compared += 1
    wanted = {f for f, _ in parse_measures(spec["options"].get("measures"))} - (
        {"iprec_at_recall"} if spec["trec_eval"] == "9" else set()
    )
    assert families == wanted, "every measure asked for was checked against trec_eval"
    assert compared >= 60


def test_trec_eval_official_set_is_the_default() -> None:
    expected = _trec_output("test-official")["all"]
    scores = score_files(predictions=DATA / "trec_eval/results.test", references=DATA / "trec_eval/qrels.test").scores
    assert set(expected) - {"runid"} == set(scores)
    assert list(scores)[:6] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map"]


def test_left_out_queries_are_reported() -> None:
    report = score_files(predictions=DATA / "ties.run", references=DATA / "ties-complete.qrels", measures="map")
    assert len(report.warnings) == 2
    assert "q13" in report.warnings[0] and "not judged" in report.warnings[0]
    assert "q12" in report.warnings[1] and "-c" in report.warnings[1]
    complete = score_files(
        predictions=DATA / "ties.run",
        references=DATA / "ties-complete.qrels",
        measures=["map", "num_ret", "num_rel"],
        complete=True,
    )
    assert [w for w in complete.warnings if "q12" in w] == []
    assert {item["id"] for item in complete.items} - {item["id"] for item in report.items} == {"q12"}
    q12 = next(item for item in complete.items if item["id"] == "q12")
    assert q12["map"] == 0.0 and q12["num_ret"] == 0 and q12["num_rel"] > 0


def test_queries_without_relevant_documents_are_kept() -> None:
    """trec_eval keeps a judged query with no relevant document: it counts in num_q and scores 0 (MAP falls)."""
    report = score_files(predictions=DATA / "ties.run", references=DATA / "ties.qrels", measures="all")
    q05 = next(item for item in report.items if item["id"] == "q05")
    assert q05["num_rel"] == 0
    assert all(q05[k] == 0 for k in q05 if k not in ("id", "num_ret"))
    kept = [item["map"] for item in report.items]
    assert report.scores["num_q"] == len(kept) == 12  # q01-q14 less q12 (never ranked) and q13 (never judged)
    assert report.scores["map"] == pytest.approx(sum(kept) / 12, abs=1e-12)
    assert report.scores["map"] < sum(kept) / 11  # dropping q05 would raise MAP


# ---------------------------------------------------------------------------------------------- tie-breaking, order
def test_ties_break_by_document_id_descending() -> None:
    run = parse_run("q Q0 d1 1 2.0 r\nq Q0 d3 2 2 r\nq Q0 d20 3 2e0 r\nq Q0 d9 4 3 r\nq Q0 z 5 -0.0 r\nq Q0 y 6 0 r\n")
    assert run.rankings == {"q": ["d9", "d3", "d20", "d1", "z", "y"]}
    assert run.run_id == "r"
    assert rank({"d1": 2.0, "d3": 2.0, "d20": 2.0, "d9": 3.0}) == ["d9", "d3", "d20", "d1"]
    assert rank({("b", 1), ("a", 1), ("c", 0)}) == ["b", "a", "c"]  # a set of pairs: the same order every time


def test_a_set_as_a_ranking_is_a_type_error() -> None:
    for unordered in ({"a", "b"}, frozenset({"a"}), {"a": 1}.keys(), {"a": 1}.values(), {"a": 1}.items()):
        with pytest.raises(TypeError, match="ordered sequence.*found"):
            ranked_list(unordered)
        with pytest.raises(TypeError, match="ordered sequence"):
            AveragePrecision().score(unordered, {"a"})
        with pytest.raises(TypeError, match="ordered sequence"):
            AtK(1).batch_stats([unordered], [{"a"}])
        with pytest.raises(TypeError, match="query 0: prediction: expected an ordered sequence"):
            score([unordered], [{"a"}])
    with pytest.raises(TypeError, match="ordered sequence"):
        precision_at_k(2).score({"a", "b"}, {"a"})
    with pytest.raises(TypeError, match="ordered sequence"):
        RankingMetric("map").from_model_output([{"a", "b"}], [{"a"}])
    with pytest.raises(TypeError, match="found str"):
        score(["abc"], [{"a"}])
    assert ranked_list(np.array(["b", "a"])) == ["b", "a"]


@pytest.mark.slow
def test_results_do_not_depend_on_the_hash_seed() -> None:
    code = (
        "from metametric_jax.tasks.ranking import score, rank;"
        "print(score([rank({(f'd{i}', i % 3) for i in range(40)})], [{f'd{i}' for i in range(0, 40, 7)}],"
        " measures='all'))"
    )
    outs = set()
    for seed in ("0", "1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout)
    assert len(outs) == 1 and "map" in outs.pop()


# ---------------------------------------------------------------------------------------------- readers
@pytest.mark.parametrize(
    "text, message",
    [
        ("q 0 d\n", "q.txt:1: expected 4 fields"),
        ("q 0 d 1\nq 0 d 1 extra\n", "q.txt:2: expected 4 fields"),
        ("q 0 d one\n", "q.txt:1: expected an integer grade in field 4, found 'one'"),
        ("q 0 d 1.5\n", "integer grade"),
        ("q 0 d 1\n\nq 0 d 0\n", "q.txt:3: document 'd' is judged twice"),
    ],
)
def test_qrels_errors(text: str, message: str) -> None:
    with pytest.raises(InputFormatError, match=message):
        parse_qrels(text, "q.txt")


@pytest.mark.parametrize(
    "text, message",
    [
        ("q Q0 d 1 0.5\n", "r.txt:1: expected 6 fields"),
        ("q Q0 d 1 x r\n", "r.txt:1: expected a number in field 5 \\(score\\), found 'x'"),
        ("q Q0 d 1 nan r\n", "found 'nan'"),
        ("q Q0 d 1 inf r\n", "found 'inf'"),
        ("# c\nq Q0 d 1 1 r\nq Q0 d 2 0 r\n", "r.txt:3: document 'd' is ranked twice"),
    ],
)
def test_run_errors(text: str, message: str) -> None:
    with pytest.raises(InputFormatError, match=message):
        parse_run(text, "r.txt")


def test_bom_crlf_comments_and_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"\xef\xbb\xbfq Q0 d1 1 1 r junk at end\r\n# comment\r\n\r\nq\tQ0\td2\t2\t2\tr\r\n")
    assert read_run(path).rankings == {"q": ["d2", "d1"]}
    assert parse_qrels("\ufeff# c\r\nq 0 d 2\r\n") == {"q": {"d": 2}}
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"q Q0 d 1 1 r\nq Q0 \xff 2 1 r\n")
    with pytest.raises(InputFormatError, match="bad.txt:2: expected UTF-8"):
        read_run(bad)


def test_no_common_query_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("a 0 d 1\n")
    (tmp_path / "r").write_text("b Q0 d 1 1 r\n")
    with pytest.raises(InputFormatError, match="no query of the run has judgements"):
        score_files(predictions=tmp_path / "r", references=tmp_path / "q")


# ---------------------------------------------------------------------------------------------- API
def test_metametric_documentation_example() -> None:
    ap = ranking.AveragePrecisionMetric
    assert ap.score(PRED, REF) == pytest.approx((1 / 3 + 2 / 4) / 3)
    for k, p, r in ((1, 0.0, 0.0), (2, 0.0, 0.0), (3, 1 / 3, 1 / 3), (4, 0.5, 2 / 3)):
        assert precision_at_k(k).score(PRED, REF) == pytest.approx(p)
        assert recall_at_k(k).score(PRED, REF) == pytest.approx(r)
    assert precision_at_k(5).score(PRED, REF) == pytest.approx(2 / 5)  # trec_eval divides by k
    assert score([PRED], [REF], measures=["map", "P.5"]) == pytest.approx({"map": 0.2777777777777778, "P_5": 0.4})


def test_one_average_precision_class() -> None:
    a = ranking.AveragePrecisionMetric
    assert a is ranking.AveragePrecisionMetric and precision_at_k(3) is precision_at_k(3)
    state = a.from_model_output([PRED], [REF]).merge(ranking.AveragePrecisionMetric.from_model_output([PRED], [REF]))
    assert float(state.compute()["macro_recall"]) == pytest.approx(0.2778, abs=1e-4)
    assert "AP" in a.__doc__ and ".. math::" in a.__doc__
    assert "AveragePrecisionMetric" in dir(ranking)


def test_score_options_and_errors() -> None:
    preds = {"q1": {"a": 0.3, "b": 0.9}, "q2": ["x"], "q3": ["y"]}
    refs = {"q1": {"a": 2, "b": 0}, "q2": {"z": 1}, "q9": {"w": 1}}
    out = score(preds, refs, measures=["recip_rank", "ndcg"])
    assert out == {"map": 0.25, "recip_rank": 0.25, "ndcg": pytest.approx(0.5 / np.log2(3))}
    assert list(out)[0] == "map"
    assert score(preds, refs, measures="num_q", complete=True)["num_q"] == 3
    assert score(preds, refs, measures="P.1", level=2)["P_1"] == 0.0
    assert score(preds, refs, measures="num_ret", max_retrieved=1)["num_ret"] == 2
    with pytest.raises(TypeError, match="both as mappings"):
        score(preds, [{"a"}])
    with pytest.raises(ValueError, match="unknown measure 'mapp'"):
        score([PRED], [REF], measures="mapp")
    with pytest.raises(ValueError, match="positive integers"):
        parse_measures("P.0")
    with pytest.raises(ValueError, match="takes no parameters"):
        parse_measures("map.5")
    with pytest.raises(ValueError, match="level"):
        score([PRED], [REF], level=-1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        score([PRED], [REF], measure="map")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="grade of 'a' must be an integer"):
        score([PRED], [{"a": 0.5}])
    with pytest.raises(TypeError):
        score_files("run", "qrels")  # type: ignore[misc]


def test_parse_measures_spellings() -> None:
    assert parse_measures(["P_5", "P.10", "P.5"]) == (("P", 5), ("P", 10))
    assert parse_measures("iprec_at_recall_0.10") == (("iprec_at_recall", 0.1),)
    assert parse_measures("iprec_at_recall..10,.5") == (("iprec_at_recall", 0.1), ("iprec_at_recall", 0.5))
    assert len(parse_measures("all")) == sum(max(1, len(m.default)) for m in MEASURES.values())


def test_query_statistics_by_hand() -> None:
    # ranking d1 (grade 0), d2 (1), d3 (2); d9 (1) judged, never ranked; level 1: R = 3
    s = query_statistics(["d1", "d2", "d3"], {"d1": 0, "d2": 1, "d3": 2, "d9": 1}, parse_measures("all"))
    assert s["map"] == (pytest.approx(1 / 2 + 2 / 3), 2.0, 3.0)
    assert s["recip_rank"] == (1.0, 2.0, 1.0)
    assert s["Rprec"][0] == 2.0
    assert s["bpref"][0] == pytest.approx(2 * (1 - 1 / 1))  # one non-relevant above both: 1 - min(1, 3) / min(1, 3)
    dcg = 1 / np.log2(3) + 2 / np.log2(4)
    idcg = 2 + 1 / np.log2(3) + 1 / np.log2(4)
    assert s["ndcg"][0] / s["ndcg"][2] == pytest.approx(dcg / idcg)
    assert s["success_1"][0] == 0.0 and s["success_5"][0] == 1.0
    # a repeated document counts once, at its first rank
    assert query_statistics(["d2", "d2", "d3"], {"d2": 1, "d3": 1}, [("P", 3)])["P_3"][0] == 2.0


# ---------------------------------------------------------------------------------------------- accumulators
def _queries(seed: int, n: int) -> tuple[list[list[int]], list[set[int]], list[tuple[np.ndarray, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    preds, refs, scores = [], [], []
    for _ in range(n):
        size = int(rng.integers(2, 25))
        s = rng.random(size)
        labels = rng.random(size) < 0.3
        labels[int(rng.integers(size))] = True
        preds.append([int(i) for i in np.argsort(-s)])
        refs.append({int(i) for i in np.flatnonzero(labels)})
        scores.append((labels.astype(int), s))
    return preds, refs, scores


def test_average_precision_equals_scikit_learn() -> None:
    preds, refs, scores = _queries(0, 60)
    ours = [ranking.AveragePrecisionMetric.score(p, r) for p, r in zip(preds, refs)]
    np.testing.assert_allclose(ours, [average_precision_score(y, s) for y, s in scores], atol=1e-12)


@pytest.mark.slow
def test_suite_equals_score_and_members() -> None:
    rng = random.Random(1)
    preds = [list(dict.fromkeys(rng.randrange(30) for _ in range(rng.randint(0, 15)))) for _ in range(40)]
    refs = [{rng.randrange(30): rng.randrange(-1, 4) for _ in range(rng.randint(0, 8))} for _ in range(40)]
    suite = RankingMetric("all", level=2)
    state = suite.from_model_output(preds[:25], refs[:25]).merge(suite.from_model_output(preds[25:], refs[25:]))
    figures = state.compute()["all"]
    expected = score(preds, refs, measures="all", level=2)
    assert set(figures) == set(expected)
    for key, value in expected.items():
        assert float(figures[key]) == pytest.approx(value, rel=1e-5, abs=1e-6), key
    binary = [{d for d, g in r.items() if g >= 1} for r in refs]
    ap = ranking.AveragePrecisionMetric.from_model_output(preds, binary).compute()["macro_recall"]
    assert float(ap) == pytest.approx(score(preds, binary, measures="map")["map"], abs=1e-6)
    p3 = precision_at_k(3).from_model_output(preds, binary).compute()["macro_precision"]
    assert float(p3) == pytest.approx(score(preds, binary, measures="P.3")["P_3"], abs=1e-6)
    assert RankingMetric("all", level=2) is suite


@pytest.mark.slow
def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    preds, refs, _ = _queries(2, 12)
    check_accumulator_laws(RankingMetric(["map", "P.1,3", "ndcg_cut.3", "gm_map", "num_rel"]), preds, refs)
    check_accumulator_laws(ranking.AveragePrecisionMetric, preds, refs)


# ---------------------------------------------------------------------------------------------- every path agrees
_docs = st.sampled_from(["d1", "d2", "d3", "d10", "é", "ß", "D1", "x"])
_rankings = st.lists(_docs, max_size=8)  # duplicates included: a repeat counts at its first rank only
_qrels = st.dictionaries(_docs, st.integers(-1, 3), max_size=8)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_rankings, _qrels), min_size=1, max_size=6), st.integers(0, 3))
def test_every_path_gives_the_same_figures(queries, level) -> None:
    preds, refs = [p for p, _ in queries], [r for _, r in queries]
    expected = score(preds, refs, measures="all", level=level)
    suite = RankingMetric("all", level=level)
    figures = suite.from_model_output(preds, refs).compute()["all"]
    for key, value in expected.items():
        assert float(figures[key]) == pytest.approx(value, rel=1e-5, abs=1e-6), key
    if level == 1:
        ap = ranking.AveragePrecisionMetric.from_model_output(preds, refs).compute()["macro_recall"]
        assert float(ap) == pytest.approx(expected["map"], abs=1e-6)
        p5 = precision_at_k(5).from_model_output(preds, refs).compute()["macro_precision"]
        assert float(p5) == pytest.approx(expected["P_5"], abs=1e-6)
        r10 = recall_at_k(10).from_model_output(preds, refs).compute()["macro_recall"]
        assert float(r10) == pytest.approx(expected["recall_10"], abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(_docs, unique=True, max_size=8), _qrels), min_size=1, max_size=5))
def test_files_and_mappings_give_the_same_figures(tmp_path_factory, queries) -> None:
    where = tmp_path_factory.mktemp("trec")
    run = {f"q{i}": {d: float(len(p) - r) for r, d in enumerate(p)} for i, (p, _) in enumerate(queries) if p}
    qrels = {f"q{i}": q for i, (_, q) in enumerate(queries) if q}
    (where / "run").write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    (where / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    if not set(run) & set(qrels):
        with pytest.raises(InputFormatError, match="no query"):
            score_files(predictions=where / "run", references=where / "qrels")
        return
    report = score_files(predictions=where / "run", references=where / "qrels", measures="all")
    assert report.scores == pytest.approx(score(run, qrels, measures="all"), abs=1e-12)


def test_callback_path_inside_jit() -> None:
    import jax
    import jax.numpy as jnp

    preds = [[0, 3, 1], [2, 2, 5], [4]]
    refs = [{3: 2, 1: 0}, {5: 1}, {0: 1}]
    width = 3
    p_arr = jnp.array([p + [-1] * (width - len(p)) for p in preds])
    r_arr = jnp.array([[g for _, g in sorted(r.items())] + [-9] * (width - len(r)) for r in refs])
    r_ids = jnp.array([[d for d, _ in sorted(r.items())] + [-1] * (width - len(r)) for r in refs])

    def decode_pred(row):
        return [int(x) for x in row if x >= 0]

    def decode_ref(pair):
        ids, grades = pair
        return {int(d): int(g) for d, g in zip(ids, grades) if d >= 0}

    suite = RankingMetric(["map", "ndcg_cut.3", "P.1"])

    @jax.jit
    def step(p, ids, grades):
        return suite.from_model_output(p, (ids, grades), decode=decode_pred, decode_references=decode_ref)

    figures = step(p_arr, r_ids, r_arr).compute()["all"]
    expected = score(preds, refs, measures=["map", "ndcg_cut.3", "P.1"])
    for key, value in expected.items():
        assert float(figures[key]) == pytest.approx(value, abs=1e-6), key
