"""``analyze ie``: the overall bucket is ``score ie``'s figures and ``compare ie``'s test; the buckets per entity,
relation and event type and per role equal matches counted here, key by key."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.normalizer import prf
from metametric_jax.tasks import ie
from metametric_jax.tasks import ie_analysis as ia
from metametric_jax.tasks.ner import Span

DATA = Path(__file__).parents[1] / "data" / "ie"
GOLD = DATA / "gold.jsonl"
PRED = DATA / "pred.jsonl"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A second system: the reference with every third relation dropped, every fourth entity and event retyped."""
    tmp = tmp_path_factory.mktemp("ie_analysis")
    out = []
    for k, line in enumerate(GOLD.read_text(encoding="utf-8").splitlines()):
        doc = json.loads(line)
        for j, e in enumerate(doc.get("entities", [])):
            if (j + k) % 4 == 0:
                e["type"] = "Method" if e["type"] != "Method" else "Task"
        doc["relations"] = [r for j, r in enumerate(doc.get("relations", [])) if (j + k) % 3]
        for j, e in enumerate(doc.get("events", [])):
            if (j + k) % 4 == 1:
                e["type"] = "Use"
        out.append(json.dumps(doc))
    other = tmp / "other.jsonl"
    other.write_text("\n".join(out) + "\n", encoding="utf-8")
    return {"gold": GOLD, "a": PRED, "b": other}


def analyze_json(capsys, files, *extra: str) -> dict:
    return analysis_json(capsys, "ie", files["gold"], [files["a"], files["b"]], *extra)


def test_overall_is_score_ie_exactly(capsys, files) -> None:
    for mode in ("strict", "boundaries"):
        report = analyze_json(capsys, files, "--mode", mode)
        for s, name in enumerate(("a", "b")):
            score = run_json(capsys, "score", "ie", "--gold", str(GOLD), "--pred", str(files[name]), "--mode", mode,
                             "--format", "json")  # fmt: skip
            figures = report["analyses"]["overall"]["all"]["figures"][s]
            for kind in ie.FIGURES:
                assert figures[kind] == {k: score[kind][k] for k in ("precision", "recall", "f1")}, (mode, kind)
            if s == 0:
                assert report["analyses"]["overall"]["all"]["count"] == score["relations"]["reference"]
        assert report["correction"]["figures"]["overall"] == "relations/f1"
        assert report["unit"] == "documents" and report["n"] == 30
    assert set(report["analyses"]) == {"overall", "entity_type", "relation_type", "event_type", "role"}


def direct(files, name: str, kind: str, attribute, key) -> dict:
    """{bucket: (matched, predicted, reference)} counted here (strict mode, where the key holds the attribute)."""
    gold = [d for _, d in ie.read_documents(files["gold"])]
    pred = [d for _, d in ie.read_documents(files[name])]
    out: dict = collections.defaultdict(lambda: [0, 0, 0])
    for g, p in zip(gold, pred):
        g_items, p_items = ia.items(g, 0, "reference")[kind], ia.items(p, 0, "predicted")[kind]
        g_keys = collections.Counter((attribute(x), key(x)) for x in g_items)
        p_keys = collections.Counter((attribute(x), key(x)) for x in p_items)
        for (bucket, _), n in g_keys.items():
            out[bucket][2] += n
        for both, n in p_keys.items():
            out[both[0]][1] += n
            out[both[0]][0] += min(n, g_keys.get(both, 0))
    return out


def test_strict_buckets_equal_matches_counted_here(capsys, files) -> None:
    """Relations are keyed here by their type and head (the fixtures repeat no key), so a direct count is exact."""
    report = analyze_json(capsys, files)
    docs = {name: [d for _, d in ie.read_documents(files[name])] for name in ("gold", "a", "b")}

    def relation_keys(doc):
        return [(r.type, r.head, r.tail) for r in doc.relations]

    cases = [
        ("entity_type", "entities", lambda x: x.type, lambda x: (x.start, x.end), None),
        ("role", "arguments", lambda x: x.role, lambda x: (x.start, x.end, x.type), None),
        ("event_type", "triggers", lambda x: x.type, lambda x: (x.start, x.end), "triggers"),
        ("event_type", "arguments", lambda x: x.type, lambda x: (x.start, x.end, x.role), "arguments"),
    ]
    for s, name in enumerate(("a", "b")):
        for analysis, kind, attribute, key, part in cases:
            for bucket, (m, t, g) in direct(files, name, kind, attribute, key).items():
                figures = report["analyses"][analysis][bucket]["figures"][s]
                assert (figures[part] if part else figures) == prf(m, t, g), (name, analysis, bucket)
        relations: dict = collections.defaultdict(lambda: [0, 0, 0])
        for g, p in zip(docs["gold"], docs[name]):
            gk, pk = collections.Counter(relation_keys(g)), collections.Counter(relation_keys(p))
            for k, n in gk.items():
                relations[k[0]][2] += n
            for k, n in pk.items():
                relations[k[0]][1] += n
                relations[k[0]][0] += min(n, gk.get(k, 0))
        for bucket, counts in relations.items():
            assert report["analyses"]["relation_type"][bucket]["figures"][s] == prf(*counts), bucket
    assert list(report["analyses"]["entity_type"]) == sorted(report["analyses"]["entity_type"])
    assert report["correction"]["figures"]["event_type"] == "arguments/f1"


def test_boundaries_mode_splits_a_match_between_the_two_types() -> None:
    gold = [ie.Document(entities=(Span(0, 2, "PER"), Span(3, 4, "ORG")))] * 12
    pred = [ie.Document(entities=(Span(0, 2, "ORG"), Span(3, 4, "ORG"), Span(5, 6, "LOC")))] * 12
    strict = ia.analyze(gold, [pred], samples=20, min_units=1)["analyses"]["entity_type"]
    assert strict["PER"]["figures"][0] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert strict["ORG"]["figures"][0] == prf(12, 24, 12)
    loose = ia.analyze(gold, [pred], mode="boundaries", samples=20, min_units=1)["analyses"]["entity_type"]
    assert loose["PER"]["figures"][0] == {"precision": 0.0, "recall": 1.0, "f1": 0.0}  # matched as ORG
    assert loose["ORG"]["figures"][0] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert loose["LOC"]["figures"][0] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert "relation_type" not in loose and set(ia.analyze(gold, [pred], samples=5)["analyses"]) == {
        "overall", "entity_type"
    }  # fmt: skip


def test_overall_test_is_compare_s_test(capsys, files) -> None:
    report = analyze_json(capsys, files, "--correction", "none", "--undirected")
    compare = run_json(
        capsys, "compare", "ie", "--references", str(GOLD), "--system", str(files["b"]), "--system", str(files["a"]),
        "--undirected", "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["relations"]["f1"]
    assert test["p_value"] == compare["p_value"]["relations"]["f1"] == test["p_adjusted"]


def test_custom_buckets_and_three_systems_in_memory(files) -> None:
    gold = [d for _, d in ie.read_documents(GOLD)]
    pred = [d for _, d in ie.read_documents(PRED)]
    got = ia.analyze(gold, [pred, gold, pred], samples=50, buckets={"width": lambda x: min(x.end - x.start, 3)})
    json.dumps(got, allow_nan=False)
    entry = got["analyses"]["width"]["1"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2 and entry["tests"][1]["delta"] == 0.0
    assert all(f == {"precision": 1.0, "recall": 1.0, "f1": 1.0} for f in entry["figures"][1].values())
    union = ie.score(pred, gold)
    totals = {k: [0, 0, 0] for k in ie.FIGURES}
    for kind in ie.FIGURES:
        for g, p in zip(gold, pred):
            totals[kind][1] += len(ia.items(p, 0, "p")[kind])
            totals[kind][2] += len(ia.items(g, 0, "g")[kind])
        assert totals[kind][1:] == [union[kind]["predicted"], union[kind]["reference"]]
    assert sum(e["count"] for e in got["analyses"]["width"].values()) == union["relations"]["reference"]


def test_formats_render(capsys, files, tmp_path) -> None:
    base = ["analyze", "ie", "--references", str(GOLD), "--system", str(files["a"]), "--system", str(files["b"])]
    base += ["--samples", "50"]
    assert main([*base, "--format", "table"]) == 0
    assert "Relation type" in capsys.readouterr().out
    assert main([*base, "--format", "latex"]) == 0
    assert "\\toprule" in capsys.readouterr().out
    page = tmp_path / "r.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    assert 'data-key="event_type/Use/figures/1/triggers/f1"' in page.read_text(encoding="utf-8")


def test_bad_requests_end_in_one_line(capsys, tmp_path) -> None:
    short = tmp_path / "short.jsonl"
    short.write_text(GOLD.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    cases = [
        (["--references", str(GOLD), "--system", str(tmp_path / "missing.jsonl")], "missing.jsonl"),
        (["--references", str(GOLD), "--system", str(short)], "documents"),
        (["--references", str(GOLD), "--system", str(bad)], "bad.jsonl"),
        (["--references", str(GOLD), "--system", str(PRED), "--pred", str(PRED)], "--pred"),
    ]
    assert_one_line_errors(capsys, "ie", cases)
