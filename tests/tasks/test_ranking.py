"""Ranking: every trec_eval measure equal to trec_eval's output, the readers, the API and the accumulators."""

from __future__ import annotations

import decimal
import json
import math
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from metametric_jax.errors import InputFormatError
from metametric_jax.ranking import AtK, AveragePrecision, ranked_list
from metametric_jax.tasks import ranking
from metametric_jax.tasks.ranking import (
    RankingMetric,
    parse_measures,
    precision_at_k,
    query_figures,
    rank,
    recall_at_k,
    score,
    score_files,
)
from metametric_jax.tasks.readers import trec as trec_reader
from metametric_jax.tasks.readers.trec import parse_qrels, parse_run, read_run
from metametric_jax.tasks.trec_measures import MEASURES, NICKNAMES

DATA = Path(__file__).parents[1] / "data" / "ranking"
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
    if isinstance(value, float) and math.isnan(value):
        return "-nan"  # glibc's printf of trec_eval's NaN (Rndcg at relevance level 0)
    return str(int(value)) if "." not in text else f"{value:.4f}"


def _compared(family: str, version: str) -> bool:
    """trec_eval 9 turned recall levels into ranks as (long)(p R + 0.9), 10.0 as lround(p R) (see the README)."""
    return not (version == "9" and family in ("iprec_at_recall", "11pt_avg"))


# ---------------------------------------------------------------------------------------------- trec_eval parity
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_measure_equals_trec_eval(case: str) -> None:
    """Every figure trec_eval prints (per query and for the run), equal to its 4 decimals; all_trec is offered whole."""
    spec = CASES[case]
    report = score_files(predictions=DATA / spec["run"], references=DATA / spec["qrels"], **spec["options"])
    expected = _trec_output(case)
    ours = {str(item["id"]): item for item in report.items}
    assert set(ours) == set(expected) - {"all"}, "the queries evaluated differ from trec_eval's"
    compared, families = 0, set()
    for qid, measures in expected.items():
        mine = report.scores if qid == "all" else ours[qid]
        for measure, text in measures.items():
            if measure in ("runid", "relstring"):
                continue  # not numbers
            family = _family(measure)
            assert family is not None, f"{measure} is not offered"
            if not _compared(family, spec["trec_eval"]):
                continue
            families.add(family)
            assert measure in mine, f"{qid}: {measure} missing"
            assert _printed(mine[measure], text) == text, (qid, measure, mine[measure], text)
            assert mine[measure] == pytest.approx(float(text), abs=5e-5 + 1e-12, nan_ok=True)
            compared += 1
    printed = {_family(m) for figures in expected.values() for m in figures} - {None}
    wanted = {f for f, _ in parse_measures(spec["options"].get("measures"))} & printed
    assert families == {f for f in wanted if _compared(f, spec["trec_eval"])}, "every measure asked for was checked"
    assert compared >= 60


@pytest.mark.parametrize("case", sorted(p.stem for p in (DATA / "expected" / "precise").glob("*.txt")))
def test_every_figure_equals_trec_eval_to_the_last_bit(case: str) -> None:
    """trec_eval 10.0 printing every digit (%.17g, see the README): each query's figures and the run's, bit for bit."""
    spec = CASES[case]
    report = score_files(predictions=DATA / spec["run"], references=DATA / spec["qrels"], **spec["options"])
    ours = {str(item["id"]): item for item in report.items}
    compared = 0
    for line in (DATA / "expected" / "precise" / f"{case}.txt").read_text().splitlines():
        measure, qid, text = (field.strip() for field in line.split("\t"))
        if measure in ("runid", "relstring"):
            continue
        mine = report.scores[measure] if qid == "all" else ours[qid][measure]
        theirs = float(text.replace("-nan", "nan"))
        assert mine == theirs or (math.isnan(mine) and math.isnan(theirs)), (qid, measure, mine, text)
        compared += 1
    assert compared > 250


def _lround(x: float) -> int:
    return int(decimal.Decimal(x).to_integral_value(rounding=decimal.ROUND_HALF_UP))


def _pytrec_eval_cases() -> list[tuple[str, dict, dict, int]]:
    """(name, run {query: {doc: score}}, qrels, level): the fixtures trec_eval scores without -c / -M, and generated
    runs (scores with ties, unjudged and negatively graded documents, graded judgements, queries with nothing
    relevant) at relevance levels 1 to 3."""
    cases = []
    for name, spec in sorted(CASES.items()):
        options = spec["options"]
        if spec["trec_eval"] != "10" or options.get("complete") or "max_retrieved" in options:
            continue
        if options.get("level", 1) < 1:
            continue  # pytrec_eval wants a positive relevance level
        run: dict[str, dict[str, float]] = {}
        for line in (DATA / spec["run"]).read_text().splitlines():
            fields = line.split()
            if fields and not line.startswith("#"):
                run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
        cases.append((name, run, parse_qrels((DATA / spec["qrels"]).read_text()), options.get("level", 1)))
    for seed in range(24):
        rng = random.Random(seed)
        run, qrels = {}, {}
        for q in range(rng.randint(1, 8)):
            pool = [f"d{k}" for k in range(rng.randint(1, 60))]
            grades = [-1, 0, 0, 0, 1, 1, 2, 3, 4] if rng.random() < 0.6 else [0, 0, 1]
            if rng.random() < 0.15:
                grades = [-1, 0]  # nothing relevant
            qrels[f"q{q}"] = {d: rng.choice(grades) for d in rng.sample(pool, rng.randint(1, len(pool)))}
            qrels[f"q{q}"]["judged"] = 0  # every query has a grade of 0 or more (trec_eval stops on the first without)
            ranked = rng.sample(pool + [f"x{k}" for k in range(10)], rng.randint(1, len(pool) + 5))
            run[f"q{q}"] = {
                d: rng.choice([round(rng.random(), 1), rng.randint(0, 3), round(rng.random(), 3)]) for d in ranked
            }
        cases.append((f"generated-{seed}", run, qrels, 1 + seed % 3))
    return cases


def test_every_query_figure_equals_pytrec_eval() -> None:
    """pytrec_eval (trec_eval 9's C code) per query, to 1e-12, for every measure it has (all but rbp, rbp_resid, unj).

    trec_eval 9 turned a recall level p into a number of relevant documents as (long)(p R + 0.9), 10.0 as lround(p R):
    iprec_at_recall and 11pt_avg are compared on the queries whose R gives both the same numbers."""
    import pytrec_eval

    families = sorted(set(pytrec_eval.supported_measures) - {"runid", "relstring"})
    assert set(MEASURES) - set(families) == {"rbp", "rbp_resid", "unj"}
    plan = parse_measures(families)
    levels = MEASURES["iprec_at_recall"].default
    compared = skipped = 0
    for name, run, qrels, level in _pytrec_eval_cases():
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(families), relevance_level=level).evaluate(run)
        assert theirs, name
        for qid, figures in theirs.items():
            grades = qrels[qid]
            mine = query_figures(rank(run[qid]), grades, plan, level)
            R = sum(g >= level for g in grades.values())
            same_cuts = all(_lround(p * R) == int(p * R + 0.9) for p in levels)
            for key, value in figures.items():
                if key.startswith(("iprec_at_recall", "11pt_avg")) and not same_cuts:
                    skipped += 1
                    continue
                ours = mine[key]
                close = abs(ours - value) <= 1e-12 * max(1.0, abs(value))
                assert close or (math.isnan(ours) and math.isnan(value)), (name, qid, key, ours, value)
                compared += 1
    assert compared > 10000 and skipped < compared / 10, (compared, skipped)


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
    unjudged = ("num_ret", "num_nonrel_judged_ret", "utility", "rbp_resid", "unj_5", "unj_10", "unj_20")
    assert all(q05[k] == 0 for k in q05 if k not in ("id", *unjudged))
    assert q05["utility"] == -q05["num_ret"] and q05["unj_20"] > 0  # every document ranked counts against it
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


def _line_by_line(monkeypatch: pytest.MonkeyPatch, parse: Any, text: str) -> Any:
    with monkeypatch.context() as patched:
        patched.setattr(trec_reader, "_bulk_run", lambda text: None)
        patched.setattr(trec_reader, "_bulk_qrels", lambda text: None)
        return parse(text)


@pytest.mark.parametrize("seed", range(6))
def test_files_read_in_bulk_as_line_by_line(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    numbers = ["0", "-0", "+1.5", "2.50", "-.25", "7.", "1e-3", "3E2", "0.1", "123456789012345.6", "-9.999"]
    names = [f"d{n}" for n in range(60)] + ["D7", "d7x", "x" * 20, "a" * 9, "a" * 8, "a" * 10]
    run_lines, qrels_lines = [], []
    for q in rng.sample(range(40), 12):  # queries out of order, interleaved below
        docs = rng.sample(names, rng.randint(1, 40))
        for i, d in enumerate(docs):
            score = rng.choice(numbers) if rng.random() < 0.3 else f"{rng.randint(-30, 30) / rng.choice([1, 4, 8]):g}"
            run_lines.append(f"q{q}{rng.choice(' ' * 4 + chr(9))}Q0 {d} {i} {score} run{seed}")
        qrels_lines += [f"q{q} 0 {d} {rng.choice(['-1', '0', '1', '+2', '03'])}" for d in rng.sample(names, 8)]
    rng.shuffle(run_lines)
    run_text = "\n".join(run_lines) + rng.choice(["", "\n", "\n\n  \n"])
    qrels_text = "\r\n".join(qrels_lines)
    assert trec_reader._bulk_run(run_text) is not None and trec_reader._bulk_qrels(qrels_text) is not None
    line_run = _line_by_line(monkeypatch, parse_run, run_text)
    assert parse_run(run_text) == line_run
    line_qrels = _line_by_line(monkeypatch, parse_qrels, qrels_text)
    bulk_qrels = parse_qrels(qrels_text)
    assert bulk_qrels == line_qrels and list(bulk_qrels) == list(line_qrels)
    assert all(list(bulk_qrels[q]) == list(line_qrels[q]) for q in bulk_qrels)


@pytest.mark.parametrize(
    "text",
    [
        "# c\nq Q0 d 1 1 r\n",  # a comment
        "q Q0 d 1 1 r\n\n# c\n",  # a comment after a blank line
        "q Q0 d 1 1 r\n#c",  # a comment closing the text
        "q Q0 d 1 1 r\n#q Q0 e 2 1 r\n",  # a comment of six fields
        "q Q0 d 1 1 r\n#q Q0 e 2 1 r",
        "q\tQ0\td\t1\t1\tr\x07\n",  # white space other than newlines, and a control character
        "q Q0 d 1 1 r\r\nq Q0 e 2 1 r\x0e\r\n",
        "q Q0 d 1 1 r extra\n",  # a seventh field
        "q Q0 d 1 1 r\nq Q0 e 1 1\nq Q0 f 1 1 r r\n",  # 18 fields, not 6 on each line
        "q Q0 d\u00e9 1 1 r\n",  # not ASCII
        "q Q0 d 1 1 r\x07\n",  # a control character that is not white space
        "q Q0 " + "d" * 100 + " 1 1 r\n",  # a long field
        "q Q0 d 1 nan r\n",
        "q Q0 d 1 1 r\nq Q0 d 2 3 r\n",  # ranked twice
        "q Q0 d 1 x r\n",  # not a number
        "q Q0 d 1 inf r\n",
    ],
)
def test_files_that_are_not_plain_are_read_line_by_line(text: str) -> None:
    assert trec_reader._bulk_run(text) is None


def test_scores_of_every_length_are_read_in_bulk_as_float_parses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    scores = [repr(rng.random() * 10.0 ** rng.randint(-3, 3)) for _ in range(200)]  # mostly 16-17 digits
    scores += ["0.5", "-0.25", "+3", "1e3", "7.", ".5", "0.12345678901234567890123", "123456789012345.6", "-0.0"]
    text = "".join(f"q Q0 d{i} {i} {s} r\n" for i, s in enumerate(scores))
    got = trec_reader._bulk_run(text)
    assert got is not None and got == _line_by_line(monkeypatch, parse_run, text)
    fields = trec_reader._fields(text, 6)
    assert fields is not None
    values = fields.numbers(4)
    assert [v.hex() for v in values.tolist()] == [float(s).hex() for s in scores]
    for kept in ([s for s in scores if len(s) <= 17], [s for s in scores if len(s) > 17]):  # short or long alone
        assert kept
        alone = trec_reader._fields("".join(f"q Q0 d{i} {i} {s} r\n" for i, s in enumerate(kept)), 6)
        assert alone is not None
        assert [v.hex() for v in alone.numbers(4).tolist()] == [float(s).hex() for s in kept]


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
    assert float(state.compute()["macro_average_precision"]) == pytest.approx(0.2778, abs=1e-4)
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
    assert parse_measures("Rprec_mult_0.20") == (("Rprec_mult", 0.2),)
    assert parse_measures(["utility.2,-1,0,0", "utility.1,-1,0,0"]) == (("utility", "2,-1,0,0"),)  # the first
    assert parse_measures(["all_trec", "rbp.p=0.5"])[-5:-3] == (("rbp", "p=0.5"), ("rbp_resid", None))
    assert parse_measures("rbp_resid_p=0.8") == (("rbp_resid", "p=0.8"),)
    assert parse_measures(["set_F.0.5", "11pt_avg"]) == (("11pt_avg", None), ("set_F", "0.5"))
    every = parse_measures("all_trec")
    assert every == parse_measures("all")
    assert len(every) == 98 == sum(len(m.default) if m.params in (int, float) else 1 for m in MEASURES.values())
    assert [f for f, _ in parse_measures("set")] == [f for f in MEASURES if f in NICKNAMES["set"]]  # trec_eval's order
    for bad, message in [
        ("utility.1,2", "4 weights"),
        ("rbp.0.95", "persistence"),
        ("rbp.p=2", "in \\[0, 1\\]"),
        ("11pt_avg.0.5,1.5", "recall levels"),
        ("set_F.x", "numbers"),
        ("Rprec_mult.-1", "non-negative"),
        ("unj.0", "positive integers"),
        ("G.1=3", "takes no parameters"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_measures(bad)


def test_query_figures_by_hand() -> None:
    # ranking d1 (grade 0), d2 (1), d3 (2), x (not judged), u (grade -1); d9 (1) judged, never ranked; level 1: R = 3
    grades = {"d1": 0, "d2": 1, "d3": 2, "d9": 1, "u": -1}
    s = query_figures(["d1", "d2", "d3", "x", "u"], grades, parse_measures("all"))
    assert s["map"] == pytest.approx((1 / 2 + 2 / 3) / 3)
    assert s["recip_rank"] == 0.5
    assert s["Rprec"] == 2 / 3
    assert s["bpref"] == pytest.approx(2 * (1 - 1 / 1) / 3)  # one non-relevant above both: 1 - min(1, 3) / min(1, 3)
    dcg = 1 / np.log2(3) + 2 / np.log2(4)
    idcg = 2 + 1 / np.log2(3) + 1 / np.log2(4)
    assert s["ndcg"] == pytest.approx(dcg / idcg)
    assert s["success_1"] == 0.0 and s["success_5"] == 1.0
    assert s["set_P"] == 2 / 5 and s["set_recall"] == 2 / 3 and s["set_map"] == 4 / 15
    assert s["set_F"] == pytest.approx(2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3))
    assert s["utility"] == 2 - 3 and s["num_nonrel_judged_ret"] == 1
    assert s["relative_P_5"] == 2 / 3 and s["Rprec_mult_0.20"] == 0.0 and s["Rprec_mult_2.00"] == 2 / 6
    assert s["unj_5"] == 2 / 5 and s["unj_10"] == 2 / 10
    assert s["binG"] == pytest.approx((1 / np.log2(3) + 1 / np.log2(3)) / 3)  # one non-relevant above each
    assert s["rbp"] == pytest.approx(0.1 * (0.5 * 0.9 + 1.0 * 0.81))  # grades over the highest (2)
    assert s["rbp_resid"] == pytest.approx(0.9**5 + 0.1 * (0.9**3 + 0.9**4))
    # infAP: d2 at j = 1 (one judged non-relevant above), d3 at j = 2 (and one relevant above)
    second, third = 1 / 2 + 1 / 2 * 1 * (1e-5 / (1 + 2e-5)), 1 / 3 + 2 / 3 * 1 * ((1 + 1e-5) / (2 + 2e-5))
    assert s["infAP"] == pytest.approx((second + third) / 3)
    assert s["gm_map"] == np.log(s["map"]) and s["gm_bpref"] == np.log(1e-5)
    # a document ranked twice is refused, as trec_eval refuses it
    with pytest.raises(ValueError, match="document 'd2' is ranked twice"):
        query_figures(["d2", "d2", "d3"], {"d2": 1, "d3": 1}, (("P", 3),))
    # Rndcg is NaN where relevant documents have no positive grade (level 0), as in trec_eval
    assert math.isnan(query_figures(["a"], {"a": 0}, (("Rndcg", None),), level=0)["Rndcg"])


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
    ap = ranking.AveragePrecisionMetric.from_model_output(preds, binary).compute()["macro_average_precision"]
    assert float(ap) == pytest.approx(score(preds, binary, measures="map")["map"], abs=1e-6)
    p3 = precision_at_k(3).from_model_output(preds, binary).compute()["macro_precision"]
    assert float(p3) == pytest.approx(score(preds, binary, measures="P.3")["P_3"], abs=1e-6)
    assert RankingMetric("all", level=2) is suite
    # negative figures (utility) and trec_eval's NaN (Rndcg at level 0 where no relevant grade is positive)
    few = RankingMetric(["Rndcg", "utility", "gm_bpref"], level=0)
    for judged in ({"a": 1}, {"a": 0}):
        preds, refs = [["x", "y"], ["b"]], [judged, {"b": 2}]
        got = few.from_model_output(preds, refs).compute()["all"]
        expected = score(preds, refs, measures=["Rndcg", "utility", "gm_bpref"], level=0)
        for key in got:
            assert float(got[key]) == pytest.approx(expected[key], rel=1e-5, nan_ok=True), key
        assert expected["utility"] == -0.5 and math.isnan(expected["Rndcg"]) == (judged == {"a": 0})


@pytest.mark.slow
def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    preds, refs, _ = _queries(2, 12)
    check_accumulator_laws(RankingMetric(["map", "P.1,3", "ndcg_cut.3", "gm_map", "num_rel"]), preds, refs)
    check_accumulator_laws(ranking.AveragePrecisionMetric, preds, refs)


# ---------------------------------------------------------------------------------------------- every path agrees
_docs = st.sampled_from(["d1", "d2", "d3", "d10", "é", "ß", "D1", "x"])
_rankings = st.lists(_docs, max_size=8, unique=True)  # a document ranked twice is refused (as trec_eval does)
_qrels = st.dictionaries(_docs, st.integers(-1, 3), max_size=8)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_rankings, _qrels), min_size=1, max_size=6), st.sampled_from([0, 2]))
def test_every_path_gives_the_same_figures(queries, level) -> None:
    preds, refs = [p for p, _ in queries], [r for _, r in queries]
    expected = score(preds, refs, measures="all", level=level)
    suite = RankingMetric("all", level=level)
    figures = suite.from_model_output(preds, refs).compute()["all"]
    for key, value in expected.items():
        assert float(figures[key]) == pytest.approx(value, rel=1e-5, abs=1e-6, nan_ok=True), key
    if level == 2:
        refs = [{d: g - 1 for d, g in r.items()} for r in refs]  # grades 1 apart: the same documents relevant at 1
        ap = ranking.AveragePrecisionMetric.from_model_output(preds, refs).compute()["macro_average_precision"]
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
    # The command's path without per-query items: the same figures, bit for bit, and the same warnings.
    summary = score_files(predictions=where / "run", references=where / "qrels", measures="all", items=False)
    assert json.dumps(summary.scores) == json.dumps(report.scores) and summary.warnings == report.warnings
    assert summary.items == []
    assert [item["id"] for item in report.items] == [q for q in sorted(qrels) if q in run]


def test_callback_path_inside_jit() -> None:
    import jax
    import jax.numpy as jnp

    preds = [[0, 3, 1], [2, 6, 5], [4]]
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


@pytest.mark.parametrize("seed", range(4))
def test_queries_evaluated_together_equal_each_alone(seed: int) -> None:
    """evaluate's figures of many queries, batched by length (empty rankings, unjudged and absent items, queries
    without judgements), equal query_figures' of each query alone, bit for bit."""
    from metametric_jax.tasks.ranking_queries import evaluate
    from metametric_jax.tasks.trec_measures import parse_measures, plan_keys

    rng = random.Random(seed)
    plan = parse_measures("all_trec")
    rankings, graded = [], []
    for _ in range(40):
        docs = [f"d{d}" for d in rng.sample(range(80), rng.choice([0, 1, 5, 20, 60]))]  # some empty
        rankings.append(docs)
        graded.append({f"d{d}": rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(range(40), rng.randint(0, 25))})
    level = 1 + seed % 2
    together = evaluate(rankings, graded, plan, level=level)
    assert list(together) == plan_keys(plan)
    for q, (docs, grades) in enumerate(zip(rankings, graded)):
        alone = query_figures(docs, grades, plan, level)
        row = {k: float(v[q]) for k, v in together.items()}
        assert row.keys() == alone.keys()
        for key, value in alone.items():
            assert row[key] == value or (math.isnan(row[key]) and math.isnan(value)), (q, key)
    assert any(not d for d in rankings)
    assert all(evaluate([], [], plan)[k].shape == (0,) for k in plan_keys(plan))


def test_a_document_ranked_twice_is_refused_on_every_path() -> None:
    # trec_eval stops on such a run and the file readers refuse it; so do the Python paths
    from metametric_jax.tasks.ranking import RankingMetric, score

    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 0"):
        score([["a", "a", "b"]], [{"a": 1}])
    with pytest.raises(ValueError, match="document 'x' is ranked twice for query 'q2'"):
        score({"q1": ["x", "y"], "q2": ["x", "y", "x"]}, {"q1": {"x": 1}, "q2": {"x": 1}})
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 1"):
        RankingMetric().from_model_output([["b"], ["a", "b", "a"]], [{"b": 1}, {"a": 1}])
    assert score([["a", "b"]], [{"a": 1}])["num_ret"] == 2
    assert score([{"a": 0.5, "b": 0.7}], [{"a": 1}])["num_ret"] == 2  # scores by document: each once


class _Ranked(Sequence):
    """A ranking given as a sequence that is neither a list nor a tuple."""

    def __init__(self, items: list[str]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def test_a_document_ranked_twice_is_refused_by_every_entry_point() -> None:
    from metametric_jax.tasks.ranking_queries import evaluate, evaluate_queries
    from metametric_jax.tasks.trec_format import relstring
    from metametric_jax.tasks.trec_measures import parse_measures

    plan = parse_measures(["num_ret", "map"])
    # every kind of sequence a ranking may be, and a repeat past max_retrieved (the TREC readers refuse it too)
    for twice in (np.array(["a", "b", "a"]), _Ranked(["a", "b", "a"]), ("a", "b", "a")):
        with pytest.raises(ValueError, match="document 'a' is ranked twice for query 'q7'"):
            score({"q1": ["a"], "q7": twice}, {"q1": {"a": 1}, "q7": {"a": 1}})
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 'q7'"):
        score({"q7": ["a", "b", "a"]}, {"q7": {"a": 1}}, max_retrieved=2)
    # evaluate names positions, or the ids given; in worker processes the ids too, before any worker starts
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 1"):
        evaluate([["b"], ["a", "b", "a"]], [{"b": 1}, {"a": 1}], plan)
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 'y'"):
        evaluate([["b"], ["a", "b", "a"]], [{"b": 1}, {"a": 1}], plan, ids=["x", "y"])
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 'y'"):
        evaluate_queries([["b"], ["a", "b", "a"]], [{"b": 1}, {"a": 1}], plan, ids=["x", "y"], jobs=2)
    with pytest.raises(ValueError, match="document 'd' is ranked twice"):
        query_figures(["d", "e", "d"], {"d": 1}, plan)
    with pytest.raises(ValueError, match="document 'd' is ranked twice"):
        relstring(["d", "d"], {"d": 1})
    # the accumulators of one measure, by one pair and by batch (the query's position named)
    for metric in (ranking.AveragePrecisionMetric, precision_at_k(2), recall_at_k(2)):
        with pytest.raises(ValueError, match="document 'a' is ranked twice"):
            metric.score(["a", "a", "b"], {"a": 1})
        with pytest.raises(ValueError, match="document 'a' is ranked twice for query 1"):
            metric.from_model_output([["a"], np.array(["b", "a", "a"])], [{"a": 1}, {"a": 1}])
    with pytest.raises(ValueError, match="document 'a' is ranked twice for query 0"):
        RankingMetric("map").from_model_output([np.array(["a", "a"])], [{"a": 1}])
    # each document once: scored as before; a mapping of scores holds each document once
    assert score({"q7": np.array(["a", "b"])}, {"q7": {"a": 1}}, measures="num_ret")["num_ret"] == 2
    assert evaluate_queries([["b"], ["a", "c"]], [{"b": 1}, {"a": 1}], plan, jobs=2)["num_ret"].tolist() == [1, 2]
    assert float(precision_at_k(2).score(["a", "b", "c"], {"a": 1})) == 0.5
    assert relstring(["d", "e"], {"d": 1}) == "'1-'"
    # the refined similarities give the signatures of the classes they refine (what a saved state carries)
    signatures = [m.metric_config.signature for m in (ranking.AveragePrecisionMetric, precision_at_k(3))]
    assert signatures == [470030132, 1077135417]
