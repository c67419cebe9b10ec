"""``analyze amr``: the fine-grained buckets are ``score amr --fine-grained``'s figures and the Smatch bucket's test
``compare amr``'s; the size buckets, the pairs that lose most and the triples missed and added by role equal direct
computations (by hand and by brute force on small graphs)."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from amr_graphs import perturb, random_graph, to_penman
from helpers import assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.normalizer import prf
from metametric_jax.tasks import amr, amr_analysis

DATA = Path(__file__).resolve().parents[2] / "metametric_jax" / "data" / "amr"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("amr_analysis")
    rng = random.Random(0)
    gold = [random_graph(rng, rng.randint(6, 16)) for _ in range(30)]
    texts = {"gold": [], "a": [], "b": []}
    for k, g in enumerate(gold):
        texts["gold"].append(f"# ::id g{k}\n{to_penman(rng, g)}")
        texts["a"].append(to_penman(rng, perturb(rng, g, 0.3)))
        texts["b"].append(to_penman(rng, perturb(rng, g, 0.1)))
    paths = {name: tmp / f"{name}.txt" for name in texts}
    for name, graphs in texts.items():
        paths[name].write_text("\n\n".join(graphs) + "\n", encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def report(corpus):
    return amr_analysis.analyze_files(corpus["gold"], [corpus["a"], corpus["b"]], samples=200, top=5)


def per_pair(capsys, corpus, name: str) -> dict:
    p = corpus
    argv = ["score", "amr", "--gold", str(p["gold"]), "--pred", str(p[name]), "--fine-grained", "--per-pair"]
    return run_json(capsys, *argv, "--format", "json")


# ---------------------------------------------------------------------------------------------------- roles
def test_roles_of_a_small_pair_by_hand() -> None:
    gold = amr.smatch_triples("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))")
    pred = amr.smatch_triples("(w / want-01 :ARG0 (g / girl) :ARG1 (x / go-01))")
    found = amr.smatch_match(pred, gold)
    assert found.matched == 5 and found.mapping == {"w": "w", "g": "b", "x": "g"}
    counts = amr_analysis.role_counts(pred, gold, found.mapping)
    assert counts == {
        "instance": {"reference": 3, "predicted": 3, "matched": 2, "missing": 1, "extra": 1},  # boy for girl
        "top": {"reference": 1, "predicted": 1, "matched": 1, "missing": 0, "extra": 0},
        "arg0": {"reference": 2, "predicted": 1, "matched": 1, "missing": 1, "extra": 0},  # go's ARG0 missing
        "arg1": {"reference": 1, "predicted": 1, "matched": 1, "missing": 0, "extra": 0},
    }
    # inverse roles and :mod read as Smatch reads them; constants compare case-insensitively
    gold = amr.smatch_triples('(c / city :name (n / name :op1 "Paris") :mod (b / big))')
    pred = amr.smatch_triples('(b / big :domain (c / city :name (n / name :op1 "paris")))')
    found = amr.smatch_match(pred, gold)
    counts = amr_analysis.role_counts(pred, gold, found.mapping)
    assert counts["domain"] == {"reference": 1, "predicted": 1, "matched": 1, "missing": 0, "extra": 0}
    assert counts["top"] == {"reference": 1, "predicted": 1, "matched": 0, "missing": 1, "extra": 1}
    assert sum(c["matched"] for c in counts.values()) == found.matched == 6


def brute_force(pred, gold) -> int:
    """The best match over every one-to-one partial mapping of predicted onto reference variables."""
    pv = list(dict.fromkeys(s for r, s, _ in pred if r == "instance"))
    gv = list(dict.fromkeys(s for r, s, _ in gold if r == "instance"))
    g = Counter(
        (r.lower(), s, ("v", t) if t in gv and r not in ("instance", "TOP") else ("c", t.lower())) for r, s, t in gold
    )
    best = 0
    for k in range(len(pv) + 1):
        for chosen in itertools.combinations(pv, k):
            for image in itertools.permutations(gv, k):
                m = dict(zip(chosen, image))
                mapped = Counter()
                for r, s, t in pred:
                    relation = t in pv and r not in ("instance", "TOP")
                    if s in m and (not relation or t in m):
                        mapped[(r.lower(), m[s], ("v", m[t]) if relation else ("c", t.lower()))] += 1
                best = max(best, sum((mapped & g).values()))
    return best


def test_roles_add_up_to_the_optimal_match_on_random_small_graphs() -> None:
    rng = random.Random(3)
    for _ in range(40):
        g = random_graph(rng, rng.randint(4, 10))
        gold = amr.smatch_triples(to_penman(rng, g))
        pred = amr.smatch_triples(to_penman(rng, perturb(rng, g, 0.4)))
        found = amr.smatch_match(pred, gold)
        assert found.matched == brute_force(pred, gold)
        counts = amr_analysis.role_counts(pred, gold, found.mapping)
        assert sum(c["matched"] for c in counts.values()) == found.matched
        assert sum(c["reference"] for c in counts.values()) == len(gold)
        assert sum(c["predicted"] for c in counts.values()) == len(pred)
        assert all(c["missing"] >= 0 and c["extra"] >= 0 for c in counts.values())


def test_roles_table_equals_the_sum_over_pairs(report, corpus) -> None:
    gold_texts = amr.read_files(predictions=corpus["gold"], references=corpus["gold"])[1]
    table = report["analyses"]["roles"]
    assert table["columns"][:2] == ["Role", "Reference"] and len(table["columns"]) == 2 + 3 * 2
    rows = {row[0]: row for row in table["rows"]}
    for s, name in enumerate(("a", "b")):
        pred, gold, _ = amr.read_files(predictions=corpus[name], references=corpus["gold"])
        assert gold == gold_texts
        total: Counter = Counter()
        matched = 0
        for p, g in zip(pred, gold):
            found = amr.smatch_match(p, g)
            matched += found.matched
            for role, c in amr_analysis.role_counts(p, g, found.mapping).items():
                for k in ("reference", "missing", "extra", "predicted", "matched"):
                    total[(role, k)] += c[k]
        roles = {role for role, _ in total}
        assert roles <= set(rows)  # a role of the other system only shows zeros here
        for role in roles:
            row = rows[role]
            assert row[1] == total[(role, "reference")]
            assert row[2 + 3 * s : 5 + 3 * s] == [total[(role, k)] for k in ("missing", "extra", "predicted")], role
        assert sum(total[(r, "matched")] for r in roles) == matched
    errors = [sum(row[2::3]) + sum(row[3::3]) for row in table["rows"]]
    assert errors == sorted(errors, reverse=True)


# ---------------------------------------------------------------------------------------------------- buckets
def test_fine_buckets_are_score_amr_fine_grained_figures(capsys, report, corpus) -> None:
    assert report["task"] == "amr" and report["unit"] == "graph pairs" and report["n"] == 30
    fine = report["analyses"]["fine"]
    assert list(fine)[:3] == ["smatch", "unlabeled", "no_wsd"]
    for s, name in enumerate(("a", "b")):
        score = per_pair(capsys, corpus, name)
        assert fine["smatch"]["figures"][s] == {k: score[k] for k in ("precision", "recall", "f1")}
        assert fine["smatch"]["count"] == score["reference"]
        for figure in amr_analysis.FIGURES[1:]:
            if figure in fine:
                assert fine[figure]["figures"][s] == score[figure], (name, figure)
            else:  # no pair has any: score amr gives 0
                assert score[figure]["f1"] == 0.0
    assert report["correction"]["figures"] == {"fine": "f1", "size": "f1"}


def test_smatch_bucket_test_is_compare_amr_s(capsys, corpus) -> None:
    p = corpus
    got = run_json(
        capsys, "analyze", "amr", "--references", str(p["gold"]), "--system", str(p["a"]), "--system", str(p["b"]),
        "--samples", "200", "--correction", "none", "--format", "json",
    )  # fmt: skip
    compare = run_json(
        capsys, "compare", "amr", "--references", str(p["gold"]), "--system", str(p["b"]), "--system", str(p["a"]),
        "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = got["analyses"]["fine"]["smatch"]["test"]
    assert test["delta"] == compare["delta"]["f1"] and test["p_value"] == compare["p_value"]["f1"]
    assert test["p_adjusted"] == test["p_value"]


def test_size_buckets_equal_direct_sums(capsys, report, corpus) -> None:
    _, gold, _ = amr.read_files(predictions=corpus["gold"], references=corpus["gold"])
    sizes = [sum(1 for r, _, _ in g if r == "instance") for g in gold]
    table = report["analyses"]["size"]
    assert 2 <= len(table) <= 4
    seen = 0
    for s, name in enumerate(("a", "b")):
        items = per_pair(capsys, corpus, name)["per_pair"]
        for bucket, entry in table.items():
            lo, _, hi = bucket.partition("-")
            inside = [i for i, n in enumerate(sizes) if int(lo) <= n <= int(hi or lo)]
            assert entry["count"] == entry["units"] == len(inside)
            sums = [sum(items[i][k] for i in inside) for k in ("matched", "predicted", "reference")]
            assert entry["figures"][s] == prf(*sums), bucket
            seen += len(inside)
    assert seen == 2 * 30


def test_lowest_losses_and_gains_equal_the_per_pair_figures(capsys, report, corpus) -> None:
    items = {name: per_pair(capsys, corpus, name)["per_pair"] for name in ("a", "b")}
    lowest = report["analyses"]["lowest"]
    for letter, name in (("A", "a"), ("B", "b")):
        rows = [r for r in lowest["rows"] if r[0] == letter]
        below = sorted(
            (i for i, x in enumerate(items[name]) if x["f1"] < 1),
            key=lambda i: (items[name][i]["f1"], items[name][i]["matched"] * 2 - items[name][i]["predicted"]
                           - items[name][i]["reference"], i),
        )  # fmt: skip
        assert [r[2] - 1 for r in rows] == below[:5] and [r[1] for r in rows] == list(range(1, len(rows) + 1))
        for r in rows:
            x = items[name][r[2] - 1]
            assert r[3:] == [
                x["id"],
                x["f1"],
                x["precision"],
                x["recall"],
                x["matched"],
                x["predicted"],
                x["reference"],
            ]
    deltas = sorted((b["f1"] - a["f1"], i) for i, (a, b) in enumerate(zip(items["a"], items["b"])))
    losses = [(d, i) for d, i in deltas if d < 0][:5]
    gains = sorted([(d, i) for d, i in deltas if d > 0], key=lambda x: (-x[0], x[1]))[:5]
    assert [(r[4], r[2] - 1) for r in report["analyses"]["losses"]["rows"]] == losses
    assert [(r[4], r[2] - 1) for r in report["analyses"]["gains"]["rows"]] == gains
    assert gains and all(r[3] == f"g{r[2] - 1}" for r in report["analyses"]["gains"]["rows"])
    assert all(r[5] == items["a"][r[2] - 1]["f1"] and r[6] == items["b"][r[2] - 1]["f1"] for r in deltas_rows(report))


def deltas_rows(report):
    return report["analyses"]["losses"]["rows"] + report["analyses"]["gains"]["rows"]


# ---------------------------------------------------------------------------------------------------- command line
def test_bundled_sample_in_every_format(capsys, tmp_path) -> None:
    gold, pred = DATA / "gold.txt", DATA / "pred.txt"
    base = ["analyze", "amr", "--references", str(gold), "--system", str(pred), "--system", str(gold)]
    got = run_json(capsys, *base, "--samples", "100", "--top", "3", "--format", "json")
    assert [r[0] for r in got["analyses"]["lowest"]["rows"]] == ["A"] * 3  # B is the reference: no pair below 1
    assert got["analyses"]["losses"]["rows"] == [] and len(got["analyses"]["gains"]["rows"]) == 3
    roles = {row[0]: row for row in got["analyses"]["roles"]["rows"]}
    assert all(row[5:] == [0, 0, row[1]] for row in roles.values())  # the reference against itself: nothing missing
    scores = run_json(capsys, "score", "amr", "--gold", str(gold), "--pred", str(pred), "--format", "json")
    missing = sum(row[2] for row in roles.values())
    extra = sum(row[3] for row in roles.values())
    assert missing == scores["reference"] - scores["matched"] and extra == scores["predicted"] - scores["matched"]
    for form in ("table", "latex"):
        code = main([*base, "--samples", "100", "--format", form])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "Missing and extra triples by role" in out and ("\\toprule" in out if form == "latex" else True)
    page = tmp_path / "report.html"
    assert main([*base, "--samples", "100", "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    cells = dict(re.findall(r'data-key="(roles/rows/[^"]+)" data-value="([^"]*)"', text))
    for i, row in enumerate(got["analyses"]["roles"]["rows"]):
        for j, value in enumerate(row[1:], start=1):
            assert int(cells[f"roles/rows/{i}/{j}"]) == value
    assert 'data-analysis="lowest"' in text and 'data-analysis="fine"' in text


def test_bad_requests_end_in_one_line(capsys, corpus, tmp_path) -> None:
    p = corpus
    broken = tmp_path / "broken.txt"
    broken.write_text("(a / b :ARG0 (c / d)\n", encoding="utf-8")
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("(a / boy)\n", encoding="utf-8")
    cases = [
        (["--references", str(p["gold"]), "--system", str(tmp_path / "missing.txt")], "missing.txt"),
        (["--references", str(p["gold"]), "--system", str(broken)], "broken.txt"),
        (["--references", str(p["gold"]), "--system", str(fewer)], "graphs"),
        (["--references", str(p["gold"]), "--system", str(p["a"]), "--pred", str(p["b"])], "--pred"),
        (["--references", str(p["gold"]), "--system", str(p["a"]), "--per-pair"], "--per-pair"),
    ]
    assert_one_line_errors(capsys, "amr", cases)
    code = main(["analyze", "amr", "--system", str(p["a"])])
    assert code == 2 and "--references is required" in capsys.readouterr().err
    code = main(["analyze", "amr", "--references", str(p["gold"]), "--system", str(p["a"]), "--top", "0"])
    assert code == 2 and "positive integer" in capsys.readouterr().err
