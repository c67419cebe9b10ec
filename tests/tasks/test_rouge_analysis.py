"""``analyze rouge``: the overall bucket is ``score rouge``'s figures and ``compare rouge``'s test; each reference
length bucket is ``score rouge`` of the examples in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.tasks import rouge
from metametric_jax.tasks import rouge_analysis as ra

DATA = Path(__file__).parents[1] / "data" / "rouge" / "gum_summaries.jsonl"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """GUM's summaries: references of 1 to 8 human summaries (up to 250 tokens); a model's summaries and lead-3."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    n = len(rows)
    human = [r["summaries"][0]["text"] for r in rows]
    model = [r["summaries"][-1]["text"] for r in rows]
    sides: dict[str, list[str]] = {"gold": [], "second": [], "a": [], "b": []}
    for k in range(n):
        span = [(k + j) % n for j in range(1 + k % 8)]
        sides["gold"].append(" ".join(human[j] for j in span))
        sides["second"].append(" ".join(r["summaries"][1]["text"] for r in (rows[j] for j in span)))
        sides["a"].append(" ".join(model[j] for j in span))
        sides["b"].append(rows[k]["lead3"])
    tmp = tmp_path_factory.mktemp("rouge_analysis")
    paths = {}
    for name, texts in sides.items():
        paths[name] = tmp / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    return {"texts": sides, "paths": paths}


def analyze_json(capsys, corpus, *extra: str) -> dict:
    p = corpus["paths"]
    return analysis_json(capsys, "rouge", p["gold"], [p["a"], p["b"]], *extra)


def test_overall_is_score_rouge_and_buckets_are_score_rouge_of_their_examples(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus, "--use-stemmer")
    p, texts = corpus["paths"], corpus["texts"]
    lengths = [len(rouge.tokenize(t)) for t in texts["gold"]]
    assert {ra.length_bucket(x) for x in lengths} == set(ra.LENGTHS)
    for s, name in enumerate(("a", "b")):
        score = run_json(capsys, "score", "rouge", "--references", str(p["gold"]), "--predictions", str(p[name]),
                         "--use-stemmer", "--format", "json")  # fmt: skip
        assert report["analyses"]["overall"]["all"]["figures"][s] == score
        for bucket in ra.LENGTHS:
            keep = [k for k, x in enumerate(lengths) if ra.length_bucket(x) == bucket]
            expected = rouge.score([texts[name][k] for k in keep], [texts["gold"][k] for k in keep], use_stemmer=True)
            got = report["analyses"]["reference_length"][bucket]
            assert got["count"] == len(keep)
            for kind, figures in expected.items():
                assert got["figures"][s][kind] == pytest.approx(figures, rel=1e-14, abs=1e-15), (bucket, kind)
    assert list(report["analyses"]["reference_length"]) == list(ra.LENGTHS)
    assert report["correction"]["figures"] == {"overall": "rouge1/f1", "reference_length": "rouge1/f1"}
    assert report["unit"] == "examples" and report["n"] == 60


def test_overall_test_is_compare_s_test_and_types(capsys, corpus) -> None:
    p = corpus["paths"]
    report = analyze_json(capsys, corpus, "--types", "rougeL,rouge2", "--correction", "none")
    compare = run_json(
        capsys, "compare", "rouge", "--references", str(p["gold"]), "--system", str(p["b"]), "--system", str(p["a"]),
        "--types", "rougeL,rouge2", "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["rougeL"]["f1"]
    assert test["p_value"] == compare["p_value"]["rougeL"]["f1"] == test["p_adjusted"]
    assert list(report["analyses"]["overall"]["all"]["figures"][0]) == ["rougeL", "rouge2"]


def test_several_reference_files_bucket_by_the_first(capsys, corpus) -> None:
    p, texts = corpus["paths"], corpus["texts"]
    report = analyze_json(capsys, corpus, "--references", str(p["second"]))
    assert report["references"] == f"{p['gold']} {p['second']}"
    score = run_json(capsys, "score", "rouge", "--references", str(p["gold"]), "--references", str(p["second"]),
                     "--predictions", str(p["a"]), "--format", "json")  # fmt: skip
    assert report["analyses"]["overall"]["all"]["figures"][0] == score
    lengths = [ra.length_bucket(len(rouge.tokenize(t))) for t in texts["gold"]]
    for bucket, entry in report["analyses"]["reference_length"].items():
        assert entry["count"] == lengths.count(bucket)


def test_in_memory_custom_buckets_and_three_systems(corpus) -> None:
    texts = corpus["texts"]
    got = ra.analyze(texts["gold"], [texts["a"], texts["b"], texts["gold"]], types="rouge1", samples=50,
                     buckets={"parity": lambda e: e.position % 2})  # fmt: skip
    json.dumps(got, allow_nan=False)
    entry = got["analyses"]["parity"]["0"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2 and entry["count"] == 30
    assert entry["figures"][2]["rouge1"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    even = list(range(0, 60, 2))
    expected = rouge.score([texts["a"][k] for k in even], [texts["gold"][k] for k in even], types="rouge1")
    assert entry["figures"][0]["rouge1"] == pytest.approx(expected["rouge1"], rel=1e-14)


def test_formats_render(capsys, corpus, tmp_path) -> None:
    p = corpus["paths"]
    base = ["analyze", "rouge", "--references", str(p["gold"]), "--system", str(p["a"]), "--system", str(p["b"])]
    base += ["--samples", "50"]
    assert main([*base, "--format", "table"]) == 0
    assert "Reference length" in capsys.readouterr().out
    assert main([*base, "--format", "latex"]) == 0
    assert "\\bottomrule" in capsys.readouterr().out
    page = tmp_path / "r.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    assert 'data-key="reference_length/201+/figures/1/rougeLsum/f1"' in page.read_text(encoding="utf-8")


def test_bad_requests_end_in_one_line(capsys, corpus, tmp_path) -> None:
    p = corpus["paths"]
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n" * 60, encoding="utf-8")
    cases = [
        (["--references", str(p["gold"]), "--system", str(tmp_path / "missing.txt")], "missing.txt"),
        (["--references", str(p["gold"]), "--system", str(short)], "examples"),
        (["--references", str(p["gold"]), "--system", str(bad)], "bad.jsonl"),
        (["--references", str(p["gold"]), "--system", str(p["a"]), "--predictions", str(p["a"])], "--predictions"),
    ]
    assert_one_line_errors(capsys, "rouge", cases)
    code = main(["analyze", "rouge", "--references", str(p["gold"]), "--system", str(p["a"]), "--types", "rougeX"])
    assert code == 2 and "--types" in capsys.readouterr().err
