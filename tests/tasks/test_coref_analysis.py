"""``analyze coref``: Kummerfeld and Klein's error categories counted by hand on small cases and on the bundled sample,
each category's gain equal to rescoring the corrected corpus, and the bucketed figures equal to ``score coref``'s and
``compare coref``'s."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.tasks import coref, coref_analysis
from metametric_jax.tasks.coref import CorefDocument, Mention

DATA = Path(__file__).resolve().parents[2] / "metametric_jax" / "data" / "coref"
SAMPLE_KEY, SAMPLE_RESPONSE = DATA / "sample.key", DATA / "sample.response"


# ---------------------------------------------------------------------------------------------------- corpora
def column(n_tokens: int, clusters) -> list[str]:
    """The coreference column of a document whose mentions (inclusive spans) do not overlap on one side."""
    parts: list[list[str]] = [[] for _ in range(n_tokens)]
    for k, cluster in enumerate(clusters):
        for a, b in cluster:
            if a == b:
                parts[a].append(f"({k})")
            else:
                parts[a].append(f"({k}")
                parts[b].append(f"{k})")
    return ["|".join(p) if p else "-" for p in parts]


def write(path: Path, docs) -> None:
    """A CoNLL-2012 file of ``(name, n_tokens, clusters)`` documents (name, part, index, word, coreference)."""
    lines = []
    for name, n, clusters in docs:
        lines.append(f"#begin document ({name}); part 000")
        lines += [f"{name} 0 {i} w{i} {c}" for i, c in enumerate(column(n, clusters))]
        lines += ["", "#end document"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_key(rng: random.Random, name: str) -> tuple[str, int, list[list[tuple[int, int]]]]:
    """A key document: non-overlapping mentions of 1-3 tokens, some tokens left free, grouped into entities."""
    n = rng.randint(30, 120)
    mentions, i = [], 0
    while i < n:
        if rng.random() < 0.3:
            size = min(rng.choice((1, 1, 2, 3)), n - i)
            mentions.append((i, i + size - 1))
            i += size + 1
        else:
            i += 1
    entities = max(1, len(mentions) // 3)
    clusters: list[list[tuple[int, int]]] = [[] for _ in range(entities)]
    for m in mentions:
        clusters[rng.randrange(entities)].append(m)
    return name, n, [c for c in clusters if c]


def perturb(rng: random.Random, doc, rate: float):
    """A response: merged and split entities, dropped, added and shifted mentions, dropped and extra entities."""
    name, n, clusters = doc
    clusters = [list(c) for c in clusters]
    taken = {t for c in clusters for a, b in c for t in range(a, b + 1)}
    out = []
    for c in clusters:
        r = rng.random()
        if r < rate:  # missing entity
            continue
        if r < 2 * rate and len(c) > 2:  # divided entity
            cut = rng.randint(1, len(c) - 1)
            out += [c[:cut], c[cut:]]
            continue
        c = [m for m in c if rng.random() > rate] or c[:1]  # missing mentions
        shifted = []
        for a, b in c:  # span errors: one token more, where free
            if rng.random() < rate and b + 1 < n and b + 1 not in taken:
                taken.add(b + 1)
                b += 1
            shifted.append((a, b))
        out.append(shifted)
    if len(out) > 1 and rng.random() < 3 * rate:  # conflated entities
        j = rng.randrange(1, len(out))
        out[0] += out.pop(j)
    free = [t for t in range(n) if t not in taken]
    rng.shuffle(free)
    for t in free[: int(rate * len(free))]:  # extra mentions and extra entities
        if out and rng.random() < 0.5:
            out[rng.randrange(len(out))].append((t, t))
        else:
            out.append([(t, t)])
    return name, n, out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("coref_analysis")
    rng = random.Random(0)
    keys = [make_key(rng, f"doc{k:02d}") for k in range(40)]
    systems = {"a": [perturb(rng, d, 0.15) for d in keys], "b": [perturb(rng, d, 0.06) for d in keys]}
    paths = {"key": tmp / "key.conll", "a": tmp / "a.conll", "b": tmp / "b.conll"}
    write(paths["key"], keys)
    for name, docs in systems.items():
        write(paths[name], docs)
    return {"paths": paths, "keys": keys, **systems}


def analyze_json(capsys, corpus, *extra: str) -> dict:
    p = corpus["paths"]
    return analysis_json(capsys, "coref", p["key"], [p["a"], p["b"]], *extra)


def documents(docs) -> list[CorefDocument]:
    return [CorefDocument.from_clusters(clusters) for _, _, clusters in docs]


# ---------------------------------------------------------------------------------------------------- by hand
@pytest.mark.parametrize(
    "key,response,expected",
    [
        # one key entity split in two clusters
        ([[0, 1, 2, 3]], [[0, 1], [2, 3]], {"divided_entity": 1}),
        # two key entities merged into one cluster
        ([[0, 1], [2, 3]], [[0, 1, 2, 3]], {"conflated_entities": 1}),
        # a singleton key entity missing, and a key mention missing from its entity
        ([[0, 1], [5]], [[0, 1]], {"missing_entity": 1}),
        ([[0, 1, 5]], [[0, 1]], {"missing_mention": 1}),
        # a wrong span boundary: (0, 2) for the key's (0, 1)
        ([[(0, 1), 5]], [[(0, 2), 5]], {"span_error": 1}),
        # a mention outside the key in a right cluster, and a cluster of mentions outside the key
        ([[0, 1]], [[0, 1, 7]], {"extra_mention": 1}),
        ([[0, 1]], [[0, 1], [7, 8]], {"extra_entity": 1}),
        # a wrong boundary that makes the mention join another entity's cluster: a span error, then a conflation
        (
            [[(0, 1), 6], [(3, 4), 8]],
            [[(0, 1), 6, (3, 5)], [8]],
            {"span_error": 1, "conflated_entities": 1, "divided_entity": 1},
        ),
        # three key entities in one cluster with an extra mention, one of them also split off with another
        (
            [[0, 1, 2], [3, 4], [5, 6]],
            [[0, 1, 3, 5, 9], [2, 4], [10]],
            {"conflated_entities": 3, "extra_mention": 1, "extra_entity": 1, "divided_entity": 2, "missing_mention": 1},
        ),
        # nothing wrong
        ([[0, 1], [(3, 4)]], [[(3, 4)], [1, 0]], {}),
    ],
)
def test_categories_of_small_cases(key, response, expected) -> None:
    t = coref_analysis.transform(response, key)
    assert t.counts == {c: expected.get(c, 0) for c in coref_analysis.CATEGORIES}
    canonical = lambda doc: sorted(sorted(c) for c in doc.clusters())  # noqa: E731
    assert canonical(t.stages[-1]) == canonical(CorefDocument.from_clusters(key))
    for j, category in enumerate(coref_analysis.CATEGORIES, start=1):  # a step without errors changes nothing
        assert (canonical(t.stages[j]) == canonical(t.stages[j - 1])) == (t.counts[category] == 0), category


def test_span_errors_pair_overlapping_mentions_one_to_one() -> None:
    m = Mention
    # (2, 4) overlaps both lone key mentions; it takes the one it shares more of; (9, 9) has an exact twin
    pairs = coref_analysis.span_pairs([m(2, 4), m(6, 7), m(9, 9)], [m(1, 2), m(3, 4), m(9, 9), m(7, 8)])
    assert pairs == [(m(2, 4), m(3, 4)), (m(6, 7), m(7, 8))]
    assert coref_analysis.span_pairs([m(0, 0)], [m(1, 1)]) == []


def test_gains_of_a_divided_entity_by_hand() -> None:
    # key {0, 1, 2, 3}; response {0, 1} {2, 3}: MUC recall 2/3, precision 1 -> F1 0.8; merged: 1
    out = coref_analysis.error_analysis([[[0, 1], [2, 3]]], [[[0, 1, 2, 3]]])
    assert out["divided_entity"]["count"] == 1
    assert out["divided_entity"]["gain"]["muc"] == pytest.approx(0.2, abs=1e-15)
    before = coref.score([[[0, 1], [2, 3]]], [[[0, 1, 2, 3]]])
    for f in coref_analysis.FIGURES:
        expected = 1.0 - before[f]["f1"] if f != "mentions" else 0.0
        assert out["divided_entity"]["gain"][f] == pytest.approx(expected, abs=1e-15), f
        assert all(out[c]["gain"][f] == 0.0 for c in coref_analysis.CATEGORIES if c != "divided_entity")


def test_bundled_sample_counted_by_hand() -> None:
    # doc 1: (15,16) is a cluster outside the key (extra entity); Smith (18) and it (20) are in the museum's cluster
    #   (2 conflations); Mary's cluster lost Smith (a divided entity); (12,14) "its new wing" is missing (a mention)
    # doc 2 part 0: "it" (9) joins the council's cluster (a conflation), leaving the budget divided (one merge)
    # doc 2 part 1: (6,7) for the key's (6,10) (a span error); two clusters conflate two entities each (2); the key
    #   entity of (6,10) ends in 3 clusters, that of (19,20) in 2 (3 merges)
    report = coref_analysis.analyze_files(SAMPLE_KEY, [SAMPLE_RESPONSE], samples=50, min_units=1)
    counts = {c: e["count"] for c, e in report["analyses"]["errors"][0].items()}
    assert counts == {
        "span_error": 1,
        "conflated_entities": 5,
        "extra_mention": 0,
        "extra_entity": 1,
        "divided_entity": 5,
        "missing_mention": 1,
        "missing_entity": 0,
    }
    scores = coref.score_files(predictions=SAMPLE_RESPONSE, references=SAMPLE_KEY).scores
    overall = report["analyses"]["overall"]["all"]["figures"][0]
    assert overall == {f: scores[f]["f1"] for f in coref_analysis.BUCKET_FIGURES}
    gains = report["analyses"]["errors"][0]
    for f in coref_analysis.FIGURES:  # the fixes turn the response into the key: every F1 ends at 1
        total = sum(gains[c]["gain"][f] for c in coref_analysis.CATEGORIES)
        assert scores[f]["f1"] + total == pytest.approx(1.0, abs=1e-12), f


# ---------------------------------------------------------------------------------------------------- corpus
def test_gains_equal_rescoring_each_corrected_corpus(corpus) -> None:
    keys = documents(corpus["keys"])
    for name in ("a", "b"):
        responses = documents(corpus[name])
        out = coref_analysis.error_analysis(responses, keys)
        stages = [coref_analysis.transform(r, k) for r, k in zip(responses, keys)]
        firsts = [k.first_occurrences() for k in keys]
        scores = [coref.score([t.stages[j] for t in stages], firsts) for j in range(8)]
        assert scores[0] == coref.score(responses, keys)  # no repeated span: score coref's figures
        for j, c in enumerate(coref_analysis.CATEGORIES, start=1):
            assert out[c]["count"] == sum(t.counts[c] for t in stages)
            for f in coref_analysis.FIGURES:
                assert out[c]["gain"][f] == scores[j][f]["f1"] - scores[j - 1][f]["f1"], (name, c, f)
        assert all(scores[-1][f]["f1"] == 1.0 for f in ("muc", "bcub", "ceafe", "lea", "conll"))
        assert all(out[c]["count"] > 0 for c in coref_analysis.CATEGORIES), name


def test_overall_is_score_coref_and_its_test_compare_coref_s(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus, "--correction", "none")
    assert report["task"] == "coref" and report["unit"] == "documents" and report["n"] == 40
    p = corpus["paths"]
    for s, name in enumerate(("a", "b")):
        score = run_json(capsys, "score", "coref", str(p["key"]), str(p[name]), "--format", "json")
        assert report["analyses"]["overall"]["all"]["figures"][s] == {
            f: score[f]["f1"] for f in coref_analysis.BUCKET_FIGURES
        }
    compare = run_json(
        capsys, "compare", "coref", "--references", str(p["key"]), "--system", str(p["b"]), "--system", str(p["a"]),
        "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["conll"]["f1"]
    assert test["p_value"] == compare["p_value"]["conll"]["f1"]
    assert test["p_adjusted"] == test["p_value"]
    assert report["correction"]["figures"] == {"overall": "conll", "length": "conll", "entities": "conll"}


def test_length_and_entity_buckets_equal_scores_of_their_documents(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus, "--metric", "ceafm")
    assert report["correction"]["figures"]["length"] == "ceafm"
    p = corpus["paths"]
    read = {name: coref.read_files(predictions=p[name], references=p["key"]) for name in ("a", "b")}
    lengths = [n for _, n, _ in corpus["keys"]]
    entities = [len(c) for _, _, c in corpus["keys"]]
    for name, values in (("length", lengths), ("entities", entities)):
        table = report["analyses"][name]
        seen = 0
        for bucket, entry in table.items():
            lo, _, hi = bucket.partition("-")
            inside = [k for k, v in enumerate(values) if int(lo) <= v <= int(hi or lo)]
            assert entry["count"] == entry["units"] == len(inside)
            seen += len(inside)
            for s, system in enumerate(("a", "b")):  # the documents as the files give them (entities in order)
                responses, keys, _, _ = read[system]
                scores = coref.score([responses[k] for k in inside], [keys[k] for k in inside])
                figures = ("muc", "bcub", "ceafe", "lea", "ceafm", "conll")
                assert entry["figures"][s] == {f: scores[f]["f1"] for f in figures}, (name, bucket)
        assert seen == 40 and 3 <= len(table) <= 4, (name, list(table))


def test_three_systems_in_memory_and_strict_json(corpus) -> None:
    keys = documents(corpus["keys"])
    report = coref_analysis.analyze(
        keys, [documents(corpus["a"]), documents(corpus["b"]), keys], names=["a", "b", "key"], samples=100, bins=2
    )
    entry = report["analyses"]["overall"]["all"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2 and "test" not in entry
    assert entry["figures"][2] == dict.fromkeys(coref_analysis.BUCKET_FIGURES, 1.0)
    assert "length" not in report["analyses"] and len(report["analyses"]["entities"]) == 2
    assert all(e["count"] == 0 and not any(e["gain"].values()) for e in report["analyses"]["errors"][2].values())
    json.dumps(report, allow_nan=False)


def test_formats_render_the_errors(capsys, corpus, tmp_path) -> None:
    report = analyze_json(capsys, corpus)
    p = corpus["paths"]
    base = ["analyze", "coref", "--references", str(p["key"]), "--system", str(p["a"]), "--system", str(p["b"])]
    for form in ("table", "latex"):
        code = main([*base, "--samples", "200", "--format", form])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "Conflated entities" in out and "Missing entity" in out
        if form == "latex":
            assert "\\toprule" in out and "count = documents" in out
    page = tmp_path / "report.html"
    assert main([*base, "--samples", "200", "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    cells = dict(re.findall(r'data-key="(errors/[^"]+)" data-value="([^"]*)"', text))
    errors = report["analyses"]["errors"]
    assert len(cells) == 2 * 7 * (1 + len(coref_analysis.FIGURES))
    for s, per in enumerate(errors):
        for c, e in per.items():
            assert int(cells[f"errors/{s}/{c}/count"]) == e["count"]
            for f, gain in e["gain"].items():
                assert float(cells[f"errors/{s}/{c}/gain/{f}"]) == gain
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text


def test_bad_requests_end_in_one_line(capsys, corpus, tmp_path) -> None:
    p = corpus["paths"]
    broken = tmp_path / "broken.conll"
    broken.write_text("#begin document (doc00); part 000\ndoc00 0 0 w0 (1\n#end document\n", encoding="utf-8")
    shorter = tmp_path / "shorter.conll"
    write(shorter, [(name, n - 1, []) for name, n, _ in corpus["keys"]])
    cases = [
        (["--references", str(p["key"]), "--system", str(tmp_path / "missing.conll")], "missing.conll"),
        (["--references", str(p["key"]), "--system", str(broken)], "broken.conll"),
        (["--references", str(p["key"]), "--system", str(shorter)], "token"),
        (["--references", str(p["key"]), "--system", str(p["a"]), "--response", str(p["b"])], "--system"),
        (["--references", str(p["key"]), "--system", str(p["a"]), "--per-document"], "--per-document"),
    ]
    assert_one_line_errors(capsys, "coref", cases)
    code = main(["analyze", "coref", "--system", str(p["a"])])
    assert code == 2 and "--references is required" in capsys.readouterr().err
    code = main(["analyze", "coref", "--references", str(p["key"]), "--system", str(p["a"]), "--bins", "0"])
    assert code == 2 and "positive integer" in capsys.readouterr().err
