"""``analyze ner``: the type buckets are ``score ner``'s per-type figures, the overall bucket is ``compare ner``'s test,
the other analyses equal direct counts, and the error categories equal nervaluate's."""

from __future__ import annotations

import collections
import json
import random
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.normalizer import prf
from metametric_jax.tasks import ner_analysis
from metametric_jax.tasks.tagging import extract_spans

TYPES = ("PER", "LOC", "ORG", "MISC")
WORDS = [f"w{k}" for k in range(40)]


def make_corpus(n: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Sentences of tokens and gold IOB2 tags (entities of 1-5 tokens, some adjacent)."""
    rng = random.Random(seed)
    tokens, tags = [], []
    for _ in range(n):
        length = rng.randint(1, 20)
        toks = [rng.choice(WORDS) for _ in range(length)]
        g = ["O"] * length
        i = 0
        while i < length:
            if rng.random() < 0.25:
                size = min(rng.choice((1, 1, 2, 2, 3, 4, 5)), length - i)
                t = rng.choice(TYPES)
                g[i] = f"B-{t}"
                for j in range(i + 1, i + size):
                    g[j] = f"I-{t}"
                i += size + (0 if rng.random() < 0.2 else 1)
            else:
                i += 1
        tokens.append(toks)
        tags.append(g)
    return tokens, tags


def perturb(gold: list[list[str]], seed: int, rate: float = 0.08) -> list[list[str]]:
    """A system's tags: type swaps, shifted and split boundaries, merges, drops and spurious entities."""
    rng = random.Random(seed)
    out = []
    for g in gold:
        p = list(g)
        for j in range(len(p)):
            r = rng.random()
            if r < rate:  # type swap
                if p[j] != "O":
                    p[j] = p[j][:2] + rng.choice(TYPES)
            elif r < 2 * rate:  # split or start an entity here
                p[j] = "B-" + (p[j][2:] if p[j] != "O" else rng.choice(TYPES))
            elif r < 3 * rate:  # drop a token (shortens or splits an entity)
                p[j] = "O"
            elif r < 3.5 * rate and p[j].startswith("B-") and j > 0 and p[j - 1] != "O":  # merge with the previous
                p[j] = "I-" + p[j - 1][2:]
            elif r < 4 * rate and p[j] == "O" and j > 0 and p[j - 1] != "O":  # extend the previous
                p[j] = "I-" + p[j - 1][2:]
        out.append(p)
    return out


def write(path: Path, tokens, tags, docs: int | None = 8) -> None:
    lines = []
    for k, (t, g) in enumerate(zip(tokens, tags)):
        if docs and k % docs == 0:
            lines += ["-DOCSTART- -X- O", ""]
        lines += [f"{a} {b}" for a, b in zip(t, g)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ner_analysis")
    tokens, gold = make_corpus(400, 0)
    a, b = perturb(gold, 1), perturb(gold, 2, 0.04)
    paths = {name: tmp / f"{name}.txt" for name in ("gold", "a", "b", "train")}
    write(paths["gold"], tokens, gold)
    write(paths["a"], tokens, a)
    write(paths["b"], tokens, b)
    train_tokens, train_tags = make_corpus(300, 5)
    write(paths["train"], train_tokens, train_tags, docs=None)
    return {"tokens": tokens, "gold": gold, "a": a, "b": b, "paths": paths, "train": (train_tokens, train_tags)}


def analyze_json(capsys, corpus, *extra: str) -> dict:
    p = corpus["paths"]
    return analysis_json(capsys, "ner", p["gold"], [p["a"], p["b"]], *extra)


def test_type_buckets_are_score_ner_per_type_figures_exactly(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus)
    assert report["version"] == 1 and report["task"] == "ner" and report["unit"] == "documents" and report["n"] == 50
    for s, name in enumerate(("a", "b")):
        p = corpus["paths"]
        score = run_json(capsys, "score", "ner", "--gold", str(p["gold"]), "--pred", str(p[name]), "--format", "json")
        for label, figures in score["per_type"].items():
            entry = report["analyses"]["type"][label]
            for k in ("precision", "recall", "f1"):
                assert entry["figures"][s][k] == figures[k], (name, label, k)
            assert entry["count"] == figures["support"]
        overall = report["analyses"]["overall"]["all"]
        assert overall["figures"][s] == score["micro"]
        assert overall["count"] == score["counts"]["phrases"]


def test_overall_test_is_compare_ner_s_test(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus, "--correction", "none")
    p = corpus["paths"]
    compare = run_json(
        capsys, "compare", "ner", "--references", str(p["gold"]), "--system", str(p["b"]), "--system", str(p["a"]),
        "--samples", "200", "--format", "json",
    )  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["micro"]["f1"]
    assert test["p_value"] == compare["p_value"]["micro"]["f1"]
    assert test["p_error"] == compare["p_error"]["micro"]["f1"]
    assert test["p_adjusted"] == test["p_value"]


def direct_counts(gold, preds, bucket_of):
    """{bucket: [(matched, predicted, reference) per system]} counted span by span."""
    out: dict = collections.defaultdict(lambda: [[0, 0, 0] for _ in preds])
    for s, pred in enumerate(preds):
        for k, (g, p) in enumerate(zip(gold, pred)):
            gs, ps = set(extract_spans(g)), set(extract_spans(p))
            for span in gs:
                out[bucket_of(k, span)][s][2] += 1
            for span in ps:
                out[bucket_of(k, span)][s][1] += 1
                out[bucket_of(k, span)][s][0] += span in gs
    return out


def test_length_and_frequency_buckets_equal_direct_counts(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus, "--frequency-from", str(corpus["paths"]["train"]))
    preds = [corpus["a"], corpus["b"]]
    lengths = direct_counts(corpus["gold"], preds, lambda k, s: ner_analysis.length_bucket(s.end - s.start))
    assert list(report["analyses"]["length"]) == [b for b in ner_analysis.LENGTHS if b in lengths]
    for bucket, per_system in lengths.items():
        entry = report["analyses"]["length"][bucket]
        assert entry["count"] == per_system[0][2]
        for s, counts in enumerate(per_system):
            assert entry["figures"][s] == prf(*counts)
    train_tokens, train_tags = corpus["train"]
    seen = collections.Counter(
        " ".join(t[s.start : s.end]) for t, g in zip(train_tokens, train_tags) for s in extract_spans(g)
    )
    tokens = corpus["tokens"]

    def by_frequency(k, span):
        return ner_analysis.frequency_bucket(seen[" ".join(tokens[k][span.start : span.end])])

    frequencies = direct_counts(corpus["gold"], preds, by_frequency)
    assert set(report["analyses"]["frequency"]) == set(frequencies)
    for bucket, per_system in frequencies.items():
        for s, counts in enumerate(per_system):
            assert report["analyses"]["frequency"][bucket]["figures"][s] == prf(*counts)
    assert report["correction"]["figures"] == {"overall": "f1", "type": "f1", "length": "f1", "frequency": "f1"}


def test_confusion_matrix_equals_direct_counts(capsys, corpus) -> None:
    report = analyze_json(capsys, corpus)
    conf = report["analyses"]["confusion"]
    assert conf["gold"] == [*sorted(TYPES), "(spurious)"] and conf["predicted"] == [*sorted(TYPES), "(missed)"]
    for s, pred in enumerate((corpus["a"], corpus["b"])):
        grid = collections.Counter()
        for g, p in zip(corpus["gold"], pred):
            gs = {(x.start, x.end): x.label for x in extract_spans(g)}
            ps = {(x.start, x.end): x.label for x in extract_spans(p)}
            for bounds, label in gs.items():
                grid[(label, ps.get(bounds, "(missed)"))] += 1
            for bounds, label in ps.items():
                if bounds not in gs:
                    grid[("(spurious)", label)] += 1
        for i, g in enumerate(conf["gold"]):
            for j, p in enumerate(conf["predicted"]):
                assert conf["matrices"][s][i][j] == grid[(g, p)], (s, g, p)


def test_error_categories_equal_nervaluate(capsys, corpus) -> None:
    nervaluate = pytest.importorskip("nervaluate")
    report = analyze_json(capsys, corpus)

    def entities(tags):
        return [[{"label": x.label, "start": x.start, "end": x.end - 1} for x in extract_spans(t)] for t in tags]

    names = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}
    for s, pred in enumerate((corpus["a"], corpus["b"])):
        theirs = nervaluate.Evaluator(entities(corpus["gold"]), entities(pred), list(TYPES), loader="dict").evaluate()
        for ours, their_name in names.items():
            expected = theirs["overall"][their_name]
            got = report["analyses"]["errors"][ours][s]
            for key in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"):
                assert got[key] == getattr(expected, key), (s, ours, key)
            for key in ("precision", "recall", "f1"):
                assert got[key] == pytest.approx(getattr(expected, key), abs=1e-15), (s, ours, key)


@pytest.mark.parametrize(
    "gold,pred,expected",
    [
        # a reference entity split in two: the first half takes it, the second is spurious (nervaluate 1.x)
        ([(0, 4, "PER")], [(0, 2, "PER"), (2, 4, "PER")], {"strict": [0, 1, 0, 0, 1], "partial": [0, 0, 1, 0, 1]}),
        # one prediction over two references: it takes the first, the second is missed
        ([(0, 2, "PER"), (2, 4, "LOC")], [(0, 4, "LOC")], {"strict": [0, 1, 0, 1, 0], "type": [1, 0, 0, 1, 0]}),
        # bounds right, type wrong
        (
            [(1, 3, "PER")],
            [(1, 3, "ORG")],
            {"strict": [0, 1, 0, 0, 0], "exact": [1, 0, 0, 0, 0], "type": [0, 1, 0, 0, 0]},
        ),
    ],
)
def test_error_categories_of_small_cases(gold, pred, expected) -> None:
    from metametric_jax.tasks.ner_analysis import _categorize

    labels = {"PER": 0, "LOC": 1, "ORG": 2}
    g = [(a, b, labels[t]) for a, b, t in gold]
    p = [(a, b, labels[t]) for a, b, t in pred]
    for scheme, counts in expected.items():
        assert _categorize(scheme, g, p) == counts, scheme


def test_custom_buckets_and_three_systems_in_memory(corpus) -> None:
    gold, a, b = corpus["gold"], corpus["a"], corpus["b"]
    tokens = corpus["tokens"]
    report = ner_analysis.analyze(
        gold, [a, b, gold], names=["a", "b", "gold"], tokens=tokens, samples=100,
        units=[k // 8 for k in range(len(gold))], unit="documents",
        buckets={"first_word": lambda e: "w0-w19" if int(e.text.split()[0][1:]) < 20 else "w20+"},
    )  # fmt: skip
    entry = report["analyses"]["first_word"]["w0-w19"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2 and "test" not in entry
    assert entry["figures"][2] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    expected = direct_counts(
        gold, [a, b], lambda k, s: "w0-w19" if int(tokens[k][s.start][1:]) < 20 else "w20+"
    )  # fmt: skip
    for bucket, per_system in expected.items():
        for s, counts in enumerate(per_system):
            assert report["analyses"]["first_word"][bucket]["figures"][s] == prf(*counts)
    assert report["n"] == 50 and report["correction"]["tests"] == 2 * (1 + 4 + 4 + 2)
    json.dumps(report, allow_nan=False)


@pytest.mark.parametrize("correction", ["holm", "bh", "maxt", "none"])
def test_corrections_on_the_command_line(capsys, corpus, correction) -> None:
    report = analyze_json(capsys, corpus, "--correction", correction, "--statistic", "raw")
    c = report["correction"]
    assert c["method"] == correction and c["floor"] == 1 / 201 and c["min_units"] == 10
    assert c["statistic"] == ("raw" if correction == "maxt" else None)
    tests = [e["test"] for name in ("overall", "type", "length") for e in report["analyses"][name].values()]
    assert c["tests"] == sum(1 for t in tests if t["p_value"] is not None)
    for t in tests:
        if t["p_value"] is not None:
            assert t["p_adjusted"] >= t["p_value"] - 1e-15
            assert 1 / 201 <= t["p_value"] <= 1 and t["p_error"] > 0


def test_other_formats_render(capsys, corpus, tmp_path) -> None:
    p = corpus["paths"]
    base = ["analyze", "ner", "--references", str(p["gold"]), "--system", str(p["a"]), "--system", str(p["b"])]
    for form in ("table", "latex"):
        code = main([*base, "--samples", "50", "--format", form])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert ("\\toprule" in out and "\\bottomrule" in out) if form == "latex" else "Entity type" in out
    out_file = tmp_path / "report.json"
    assert main([*base, "--samples", "50", "--format", "json", "--out", str(out_file)]) == 0
    _, err = capsys.readouterr()
    assert json.loads(out_file.read_text())["version"] == 1 and "wrote" in err


def test_bad_requests_end_in_one_line(capsys, corpus, tmp_path) -> None:
    p = corpus["paths"]
    no_docs = tmp_path / "plain.txt"
    write(no_docs, corpus["tokens"], corpus["gold"], docs=None)
    tags_only = tmp_path / "tags.txt"
    tags_only.write_text("B-PER\nO\n\n", encoding="utf-8")
    cases = [
        (["--references", str(p["gold"]), "--system", str(tmp_path / "missing.txt")], "missing.txt"),
        (["--references", str(no_docs), "--system", str(no_docs), "--unit", "document"], "-DOCSTART-"),
        (["--references", str(p["gold"]), "--system", str(p["a"]), "--frequency-from", str(tags_only)], "token"),
        (["--references", str(p["gold"]), "--system", str(tags_only)], "sentences"),
    ]
    assert_one_line_errors(capsys, "ner", cases)
    code = main(["analyze", "ner", "--system", str(p["a"])])
    assert code == 2 and "--references is required" in capsys.readouterr().err


def test_sentences_as_units_and_small_buckets(capsys, corpus, tmp_path) -> None:
    report = analyze_json(capsys, corpus, "--unit", "sentence", "--min-units", "300")
    assert report["unit"] == "sentences" and report["n"] == 400
    for name in ("type", "length"):
        for entry in report["analyses"][name].values():
            assert entry["test"]["too_small"] == (entry["units"] < 300)
            assert (entry["test"]["p_value"] is None) == entry["test"]["too_small"]


def test_readme_analyze_commands_run_as_written(capsys, monkeypatch, tmp_path) -> None:
    """The README's analyze block runs from the repository root (its output files written under tmp_path here)."""
    import re
    import shlex

    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Where systems fail") :]
    block = re.findall(r"```bash\n(.*?)```", section, flags=re.S)[0]
    lines = [line for line in block.splitlines() if line.startswith("metametric-jax analyze")]
    assert len(lines) >= 2
    monkeypatch.chdir(root)
    for line in lines:
        argv = shlex.split(line)[1:]
        at = argv.index("--out")
        argv[at + 1] = str(tmp_path / Path(argv[at + 1]).name)
        assert main(argv) == 0, capsys.readouterr().err
        assert Path(argv[at + 1]).stat().st_size > 1000
    capsys.readouterr()
    assert (root / "docs" / "analyze_report.png").stat().st_size < 200_000


def test_tagged_docstart_lines_count_in_overall_and_type_as_score_ner_counts_them(tmp_path) -> None:
    from metametric_jax.tasks import ner

    gold, pred = tmp_path / "g.txt", tmp_path / "p.txt"
    gold.write_text("-DOCSTART- B-ORG\n\nAna B-PER\nsat O\n\n-DOCSTART- O\n\nBo B-LOC\nx B-ORG\n", encoding="utf-8")
    pred.write_text("-DOCSTART- B-ORG\n\nAna B-PER\nsat B-LOC\n\n-DOCSTART- O\n\nBo B-LOC\nx O\n", encoding="utf-8")
    report = ner_analysis.analyze_files(gold, [pred], samples=20, min_units=1)
    scores = ner.score_files(references=gold, predictions=pred).scores
    assert report["analyses"]["overall"]["all"]["figures"][0] == scores["micro"]
    for label, figures in scores["per_type"].items():
        entry = report["analyses"]["type"][label]
        assert entry["figures"][0] == {k: figures[k] for k in ("precision", "recall", "f1")}
        assert entry["count"] == figures["support"]
    assert report["n"] == 2 and "test" not in report["analyses"]["type"]["ORG"]
