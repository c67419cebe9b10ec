"""``ranking``'s resampling rows and read-out: trec_eval's figures bit for bit, queries as the unit, no JAX."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.cli import build_parser, main
from metametric_jax.commands import registry
from metametric_jax.intervals import exact_totals, flatten
from metametric_jax.tasks.ranking import file_rows, query_rows, readout, score_files
from metametric_jax.tasks.trec_measures import MEASURES, family_of

DATA = Path(__file__).parents[1] / "data" / "ranking"
SAMPLE = Path(__file__).parents[2] / "metametric_jax" / "data" / "ranking"
CASES = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))
COUNTS = tuple(m for m in MEASURES if MEASURES[m].kind == "sum")  # num_q, num_ret, ..., num_nonrel_judged_ret


def resample(*argv: str):
    args = build_parser().parse_args(["score", "ranking", *argv])
    return registry()["ranking"].resample(args)


def flags(options: dict) -> list[str]:
    out: list[str] = []
    measures = options.get("measures", [])
    for m in [measures] if isinstance(measures, str) else measures:
        out += ["-m", m]
    if options.get("complete"):
        out.append("-c")
    if "level" in options:
        out += ["-l", str(options["level"])]
    if "max_retrieved" in options:
        out += ["-M", str(options["max_retrieved"])]
    return out


def same(a, b) -> bool:
    """Equal figures, NaN equal to NaN (trec_eval's Rndcg at relevance level 0)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b or (math.isnan(a) and math.isnan(b))


def assert_readout_is_the_score(res, scores: dict) -> None:
    """``scores``: the command's JSON (``{"all": {...}}``)."""
    got = flatten(res.readout(exact_totals(res.rows)))
    want = {p: v for p, v in flatten({"all": scores["all"]}).items() if p.split("/")[-1] not in COUNTS}
    assert set(got) == set(want)
    for path, value in want.items():
        assert got[path] == value or (math.isnan(got[path]) and math.isnan(value)), path  # bit for bit


def test_sample_readout_is_the_score_json(capsys) -> None:
    qrels, run = str(SAMPLE / "sample.qrels"), str(SAMPLE / "sample.run")
    assert main(["score", "ranking", "--qrels", qrels, "--run", run, "--per-query", "--format", "json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    res = resample("--qrels", qrels, "--run", run)
    assert_readout_is_the_score(res, scores)
    assert res.unit == "queries" and res.scale == 1 and res.groups is None
    assert res.ids == list(scores["per_query"])  # one row per query, in trec_eval's order


@pytest.mark.parametrize("case", sorted(CASES))
def test_trec_eval_fixtures_readout_is_the_score(case: str) -> None:
    spec = CASES[case]
    qrels, run = str(DATA / spec["qrels"]), str(DATA / spec["run"])
    res = resample("--qrels", qrels, "--run", run, *flags(spec["options"]))
    report = score_files(predictions=run, references=qrels, **spec["options"])
    assert_readout_is_the_score(res, {"all": report.scores})
    assert res.ids == [item["id"] for item in report.items]
    got = file_rows(predictions=run, references=qrels, **spec["options"])
    assert same(readout(exact_totals(got.rows), got.keys, counts=True), report.scores)  # the counts too
    # the figures are trec_eval's: its queries' values added one by one, then divided
    for k, key in enumerate(got.keys):
        running = 0.0
        for x in got.rows[:, k].tolist():
            running += x
        n = len(got.rows)
        want = math.exp(running / n) if MEASURES[family_of(key)].kind == "geometric" else running / n
        assert same(report.scores[key], int(round(running)) if key in COUNTS else want), key


def test_the_rounding_column_holds_trec_eval_s_tie() -> None:
    """P_200 of the ties fixture is 0.04875 exactly: trec_eval's running sum prints 0.0488, the exact sum 0.0487."""
    got = file_rows(predictions=DATA / "ties.run", references=DATA / "ties.qrels", measures="all")
    k = got.keys.index("P_200")
    values = got.rows[:, k]
    assert math.fsum(values) / len(values) == 0.048749999999999995
    assert got.readout(exact_totals(got.rows))["all"]["P_200"] == 0.04875000000000001
    fix = got.rows[:, len(got.keys) + k]
    assert fix[0] != 0.0 and not fix[1:].any() and abs(fix[0]) < 1e-15


def write_files(tmp_path: Path, runs: dict, judgements: dict, name: str = "run") -> tuple[str, str]:
    qrels, run = tmp_path / "q.qrels", tmp_path / f"{name}.run"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in judgements.items() for d, g in docs.items()), encoding="utf-8"
    )
    run.write_text(
        "".join(f"{q} Q0 {d} {r + 1} {s:.3f} sys\n" for q, docs in runs.items() for r, (d, s) in enumerate(docs)),
        encoding="utf-8",
    )
    return str(qrels), str(run)


def random_queries(seed: int, queries: int = 9) -> tuple[dict, dict]:
    rng = random.Random(seed)
    runs, judgements = {}, {}
    for q in range(queries):
        docs = [f"d{k}" for k in range(40)]
        judgements[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 15))}
        runs[f"q{q}"] = [(d, rng.random()) for d in rng.sample(docs, rng.randint(1, 30))]
    return runs, judgements


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [{"measures": "all"}, {"measures": "all", "level": 2, "max_retrieved": 5}, {}])
def test_generated_files_readout_is_the_score(tmp_path: Path, seed: int, options: dict) -> None:
    runs, judgements = random_queries(seed)
    qrels, run = write_files(tmp_path, runs, judgements)
    res = resample("--qrels", qrels, "--run", run, *flags(options))
    assert_readout_is_the_score(res, {"all": score_files(predictions=run, references=qrels, **options).scores})


@pytest.mark.parametrize("case", ["empty prediction", "one query", "duplicates", "unranked"])
def test_edge_files_readout_is_the_score(tmp_path: Path, case: str) -> None:
    runs, judgements = random_queries(7)
    options: dict = {"measures": "all"}
    if case == "empty prediction":  # nothing relevant retrieved: every figure but the counts 0 (gm_map: its floor)
        runs = {q: [(f"x{k}", 1.0 - k / 10) for k in range(3)] for q in runs}
    elif case == "one query":
        runs, judgements = {"q0": runs["q0"]}, {"q0": judgements["q0"]}
    elif case == "duplicates":  # the same query under three ids
        runs = {f"q{k}": runs["q0"] for k in range(3)}
        judgements = {f"q{k}": judgements["q0"] for k in range(3)}
    else:  # judged queries absent from the run: empty rankings with -c
        runs = {q: r for q, r in runs.items() if q not in ("q1", "q4")}
        options["complete"] = True
    qrels, run = write_files(tmp_path, runs, judgements)
    res = resample("--qrels", qrels, "--run", run, *flags(options))
    scores = score_files(predictions=run, references=qrels, **options).scores
    assert_readout_is_the_score(res, {"all": scores})
    assert len(res.ids) == len(judgements)
    if case == "duplicates":
        assert np.array_equal(res.rows[0, : len(res.rows[0]) // 2], res.rows[2, : len(res.rows[0]) // 2])


def test_readout_of_weighted_totals_never_raises() -> None:
    res = resample("--qrels", str(SAMPLE / "sample.qrels"), "--run", str(SAMPLE / "sample.run"), "-m", "all")
    for totals in (np.zeros(res.rows.shape[1]), exact_totals(res.rows) * 2.5):
        assert all(v is not None and np.isfinite(v) for v in flatten(res.readout(totals)).values())
    assert flatten(res.readout(np.zeros(res.rows.shape[1])))["all/map"] == 0.0


def test_query_rows_layout() -> None:
    figures = {"map": np.array([0.25, 0.0]), "num_ret": np.array([3.0, 5.0]), "gm_bpref": np.log([0.5, 0.125])}
    rows = query_rows(figures)
    assert rows.shape == (2, 7)
    assert rows[:, 0].tolist() == [0.25, 0.0]
    assert rows[:, 1].tolist() == [3.0, 5.0] and not rows[:, 3:6].any() and rows[:, 6].tolist() == [1.0, 1.0]
    assert readout(exact_totals(rows), list(figures), counts=True) == {"map": 0.125, "num_ret": 8, "gm_bpref": 0.25}
    assert query_rows({"map": np.zeros(0)}).shape == (0, 3)
    nan = query_rows({"Rndcg": np.array([0.5, np.nan])})  # trec_eval's NaN: its mean is NaN, no rounding column
    assert math.isnan(readout(exact_totals(nan), ["Rndcg"])["Rndcg"]) and nan[0, 1] == 0.0


def test_query_rows_hold_trec_eval_s_running_sum() -> None:
    """The correction column: the sum trec_eval makes query by query, in order (not pairwise, not exact), less fsum."""
    rng = random.Random(4)
    figures = {f"m{k}": np.array([rng.random() * 10.0 ** rng.randint(-8, 2) for _ in range(301)]) for k in range(20)}
    rows = query_rows(figures)
    in_order = []
    for column in figures.values():
        running = 0.0
        for x in column.tolist():
            running += x
        in_order.append(running)
    assert rows[0, 20:40].tolist() == [r - math.fsum(c.tolist()) for r, c in zip(in_order, figures.values())]
    assert sum(r != float(np.sum(c)) for r, c in zip(in_order, figures.values())) >= 3  # pairwise sums differ here
    totals = exact_totals(rows)
    assert (totals[:20] + totals[20:40]).tolist() == in_order  # the two columns sum to trec_eval's total exactly


def test_compare_needs_the_same_queries(tmp_path: Path, capsys) -> None:
    runs, judgements = random_queries(3)
    qrels, a = write_files(tmp_path, runs, judgements, "a")
    _, b = write_files(tmp_path, {q: r for q, r in runs.items() if q != "q2"}, judgements, "b")
    argv = ["compare", "ranking", "--references", qrels, "--system", a, "--system", b, "--samples", "20"]
    assert main(argv) == 1
    assert "different queries" in capsys.readouterr().err
    assert main([*argv, "-c", "--format", "json"]) == 0  # -c: the same queries, q2 an empty ranking in b
    out = json.loads(capsys.readouterr().out)
    assert out["a"]["all"]["map"] == score_files(predictions=a, references=qrels, complete=True).scores["map"]
    assert out["test"]["unit"] == "queries" and out["test"]["n"] == len(judgements)


def test_resampling_imports_no_jax(tmp_path: Path) -> None:
    runs, judgements = random_queries(5)
    qrels, a = write_files(tmp_path, runs, judgements, "a")
    _, b = write_files(tmp_path, random_queries(6)[0], judgements, "b")
    code = f"""
import sys
from metametric_jax.cli import main
assert main(["compare", "ranking", "--references", {qrels!r}, "--system", {a!r}, "--system", {b!r},
             "--samples", "20", "--format", "json"]) == 0
assert main(["score", "ranking", "--qrels", {qrels!r}, "--run", {a!r}, "--bootstrap", "20", "--format", "json"]) == 0
print("jax" in sys.modules, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
