"""``analyze ranking``: the overall bucket is ``score ranking``'s figures and ``compare ranking``'s test; the buckets
by relevant documents are the means of ``score ranking --per-query``'s figures; wins, ties and losses are counted
here from the same per-query figures."""

from __future__ import annotations

import collections
import json
import random
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.tasks import ranking_analysis as ra
from metametric_jax.tasks.trec_measures import MEASURES, family_of

SIZES = (0, 1, 1, 2, 3, 5, 6, 9, 14, 20, 21, 30)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """60 queries with 0 to 30 relevant documents (graded 1 or 2), judged non-relevant ones, two runs with ties."""
    rng = random.Random(7)
    qrels, runs = [], {"a": [], "b": []}
    relevant = {}
    for q in range(60):
        qid = f"q{q:02d}"
        docs = [f"D{k}" for k in range(120)]
        rng.shuffle(docs)
        n = SIZES[q % len(SIZES)]
        relevant[qid] = n
        for d in docs[:n]:
            qrels.append(f"{qid} 0 {d} {rng.choice((1, 2))}")
        for d in docs[n : n + 20]:
            qrels.append(f"{qid} 0 {d} 0")
        for name, skill in (("a", 0.6), ("b", 0.75)):
            scored = [(rng.random() + (skill if k < n else 0.0) * rng.random(), d) for k, d in enumerate(docs[:80])]
            for rank, (score, d) in enumerate(sorted(scored, reverse=True)[:50], start=1):
                runs[name].append(f"{qid} Q0 {d} {rank} {round(score, 2)} run{name}")
    tmp = tmp_path_factory.mktemp("ranking_analysis")
    paths = {"qrels": tmp / "qrels.txt", "a": tmp / "a.run", "b": tmp / "b.run"}
    paths["qrels"].write_text("\n".join(qrels) + "\n", encoding="utf-8")
    for name in ("a", "b"):
        paths[name].write_text("\n".join(runs[name]) + "\n", encoding="utf-8")
    return {**paths, "relevant": relevant}


def analyze_json(capsys, files, *extra: str) -> dict:
    return analysis_json(capsys, "ranking", files["qrels"], [files["a"], files["b"]], *extra)


def per_query(capsys, files, name: str, *measures: str) -> dict:
    return run_json(capsys, "score", "ranking", "--qrels", str(files["qrels"]), "--run", str(files[name]),
                    "--per-query", "--format", "json", *measures)  # fmt: skip


def test_overall_is_score_ranking_and_buckets_are_means_over_their_queries(capsys, files) -> None:
    measures = ["-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "gm_map"]
    report = analyze_json(capsys, files, *measures)
    assert report["unit"] == "queries" and report["n"] == 60 and report["scale"] == 1
    for s, name in enumerate(("a", "b")):
        score = per_query(capsys, files, name, *measures)
        figures = report["analyses"]["overall"]["all"]["figures"][s]
        assert figures == {k: v for k, v in score["all"].items() if MEASURES[family_of(k)].kind != "sum"}
        buckets = collections.defaultdict(list)
        for qid, values in score["per_query"].items():
            buckets[ra.relevant_bucket(files["relevant"][qid])].append(values)
        assert list(report["analyses"]["relevant"]) == list(ra.RELEVANT)
        for bucket, queries in buckets.items():
            entry = report["analyses"]["relevant"][bucket]
            assert entry["count"] == len(queries)
            for key in ("map", "P_5", "P_10", "ndcg_cut_10", "recip_rank"):
                mean = sum(q[key] for q in queries) / len(queries)
                assert entry["figures"][s][key] == pytest.approx(mean, rel=1e-13, abs=1e-15), (bucket, key)
    assert report["correction"]["figures"] == {"overall": "map", "relevant": "map"}


def test_wins_ties_and_losses_equal_the_per_query_figures(capsys, files) -> None:
    report = analyze_json(capsys, files)  # trec_eval's official measures
    table = report["analyses"]["wins"]
    assert table["columns"] == ["measure", "system", "wins", "ties", "losses"]
    a, b = per_query(capsys, files, "a")["per_query"], per_query(capsys, files, "b")["per_query"]
    rows = {row[0]: row for row in table["rows"]}
    assert "num_ret" not in rows and "map" in rows and "P_10" in rows
    checked = 0
    for key, row in rows.items():
        if key not in a["q00"]:  # the geometric means are the run's only (trec_eval -q leaves them out)
            continue
        pairs = [(a[q][key], b[q][key]) for q in a]
        assert row[1:] == ["B", sum(y > x for x, y in pairs), sum(y == x for x, y in pairs),
                           sum(y < x for x, y in pairs)], key  # fmt: skip
        checked += 1
    assert checked > 20 and sum(rows["map"][2:]) == 60


def test_overall_test_is_compare_s_test(capsys, files) -> None:
    report = analyze_json(capsys, files, "-m", "map", "--correction", "none")
    compare = run_json(
        capsys, "compare", "ranking", "--references", str(files["qrels"]), "--system", str(files["b"]), "--system",
        str(files["a"]), "-m", "map", "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["all"]["map"]
    assert test["p_value"] == compare["p_value"]["all"]["map"] == test["p_adjusted"]


def test_runs_on_other_queries_are_refused_unless_complete(capsys, files, tmp_path) -> None:
    partial = tmp_path / "partial.run"
    lines = files["b"].read_text(encoding="utf-8").splitlines()
    partial.write_text("\n".join(x for x in lines if not x.startswith("q07 ")) + "\n", encoding="utf-8")
    argv = ["analyze", "ranking", "--references", str(files["qrels"]), "--system", str(files["a"]), "--system",
            str(partial), "--samples", "20", "-m", "map"]  # fmt: skip
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "q07" in err and "-c" in err
    report = run_json(capsys, *argv, "-c", "--format", "json")
    assert report["n"] == 60
    q07 = [r for r in report["analyses"]["wins"]["rows"] if r[0] == "map"][0]
    assert q07[4] >= 1  # the empty ranking loses query q07


def test_custom_buckets_and_formats(capsys, files, tmp_path) -> None:
    got = ra.analyze_files(files["qrels"], [files["a"], files["b"], files["a"]], measures=["map"], samples=50,
                           buckets={"parity": lambda q: int(q.id[1:]) % 2})  # fmt: skip
    json.dumps(got, allow_nan=False)
    entry = got["analyses"]["parity"]["0"]
    assert entry["count"] == 30 and len(entry["tests"]) == 2 and entry["tests"][1]["delta"] == 0.0
    assert [r[:2] for r in got["analyses"]["wins"]["rows"]] == [["map", "B"], ["map", "C"]]
    assert got["analyses"]["wins"]["rows"][1][2:] == [0, 60, 0]
    base = ["analyze", "ranking", "--references", str(files["qrels"]), "--system", str(files["a"]), "--system",
            str(files["b"]), "--samples", "50", "-m", "map", "-m", "P.5"]  # fmt: skip
    assert main([*base, "--format", "table"]) == 0
    assert "Per-query wins" in capsys.readouterr().out
    assert main([*base, "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert "measure & system & wins & ties & losses" in out
    page = tmp_path / "r.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    assert 'data-key="wins/rows/1/4"' in page.read_text(encoding="utf-8")


def test_bad_requests_end_in_one_line(capsys, files, tmp_path) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("q01 Q0 D1\n", encoding="utf-8")
    cases = [
        (["--references", str(files["qrels"]), "--system", str(tmp_path / "missing.run")], "missing.run"),
        (["--references", str(files["qrels"]), "--system", str(bad)], "bad.run"),
        (["--references", str(files["qrels"]), "--system", str(files["a"]), "--run", str(files["a"])], "--run"),
    ]
    assert_one_line_errors(capsys, "ranking", cases)
    code = main(["analyze", "ranking", "--references", str(files["qrels"]), "--system", str(files["a"]), "-m", "nope"])
    assert code == 2 and "nope" in capsys.readouterr().err
