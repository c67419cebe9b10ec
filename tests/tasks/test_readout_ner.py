"""``ner``'s resampling rows and read-out: the score figures bit for bit, documents as the unit, no JAX."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.cli import build_parser, main
from metametric_jax.commands import registry
from metametric_jax.errors import InputFormatError
from metametric_jax.intervals import bootstrap, exact_totals, flatten, group_rows
from metametric_jax.tasks.ner import file_rows, sample_paths, score_files
from metametric_jax.tasks.readers.conll import read_conll

TYPES = ("PER", "LOC", "ORG", "MISC")
COUNTS = ("counts", "support", "predicted", "correct")


def resample(*argv: str):
    args = build_parser().parse_args(["score", "ner", *argv])
    return registry()["ner"].resample(args)


def figures(scores: dict) -> dict:
    """The score JSON's figures: every path but the counts."""
    return {p: v for p, v in flatten(scores).items() if not any(part in COUNTS for part in p.split("/"))}


def assert_readout_is_the_score(res, scores: dict) -> None:
    got = flatten(res.readout(exact_totals(res.rows)))
    want = figures(scores)
    assert set(got) == set(want)
    for path, value in want.items():
        assert got[path] == value, path  # bit for bit: the scorer reads out the same totals


def random_document(rng: random.Random, sentences: int, types: tuple[str, ...] = TYPES) -> list[list[str]]:
    doc = []
    for _ in range(sentences):
        tags: list[str] = []
        while len(tags) < rng.randint(1, 12):
            if rng.random() < 0.25:
                t = rng.choice(types)
                tags += [f"B-{t}"] + [f"I-{t}"] * rng.randint(0, 2)
            else:
                tags.append("O")
        doc.append(tags)
    return doc


def perturb(rng: random.Random, doc: list[list[str]], rate: float = 0.2) -> list[list[str]]:
    choices = ["O", *(f"{p}-{t}" for p in "BI" for t in TYPES)]
    return [[rng.choice(choices) if rng.random() < rate else t for t in s] for s in doc]


def write(path: Path, documents: list[list[list[str]]], docstart: bool = True) -> str:
    lines = []
    for doc in documents:
        if docstart:
            lines += ["-DOCSTART- -X- -X- O", ""]
        for sentence in doc:
            lines += [f"w{k} NN {tag}" for k, tag in enumerate(sentence)] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def corpus(seed: int, documents: int = 6) -> tuple[list, list]:
    rng = random.Random(seed)
    gold = [random_document(rng, rng.randint(1, 6)) for _ in range(documents)]
    return gold, [perturb(rng, doc) for doc in gold]


# ---------------------------------------------------------------------------------------------------- the figures
def test_sample_readout_is_the_score_json(capsys) -> None:
    gold, pred = sample_paths()
    assert main(["score", "ner", "--gold", gold, "--pred", pred, "--format", "json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    res = resample("--gold", gold, "--pred", pred)
    assert_readout_is_the_score(res, scores)
    assert res.scale == 100 and res.rows.dtype == np.float64 and res.rows.shape[0] == 31


@pytest.mark.parametrize("seed", range(8))
def test_generated_files_readout_is_the_score(tmp_path: Path, seed: int) -> None:
    gold_docs, pred_docs = corpus(seed)
    gold, pred = write(tmp_path / "gold.txt", gold_docs), write(tmp_path / "pred.txt", pred_docs)
    assert_readout_is_the_score(
        resample("--gold", gold, "--pred", pred), score_files(references=gold, predictions=pred).scores
    )


@pytest.mark.parametrize(
    "case", ["empty prediction", "no sentences", "one sentence", "duplicated documents", "duplicated sentences", "raw"]
)
def test_edge_files_readout_is_the_score(tmp_path: Path, case: str) -> None:
    gold_docs, pred_docs = corpus(11, documents=3)
    options: list[str] = []
    if case == "empty prediction":  # nothing predicted: precision 0/0
        pred_docs = [[["O"] * len(s) for s in doc] for doc in gold_docs]
    elif case == "no sentences":
        gold_docs = pred_docs = []
    elif case == "one sentence":
        gold_docs, pred_docs = [[gold_docs[0][0]]], [[pred_docs[0][0]]]
    elif case == "duplicated documents":
        gold_docs, pred_docs = gold_docs * 2, pred_docs * 2
    elif case == "duplicated sentences":
        gold_docs = [[s for s in doc for _ in range(2)] for doc in gold_docs]
        pred_docs = [[s for s in doc for _ in range(2)] for doc in pred_docs]
    else:
        options = ["--raw"]
    gold, pred = write(tmp_path / "gold.txt", gold_docs), write(tmp_path / "pred.txt", pred_docs)
    res = resample("--gold", gold, "--pred", pred, *options)
    scores = score_files(references=gold, predictions=pred, raw=bool(options)).scores
    assert_readout_is_the_score(res, scores)
    if case == "no sentences":
        assert res.rows.shape[0] == 0 and res.warnings  # the reference holds nothing: every figure 0
        assert all(v == 0.0 for v in flatten(res.readout(exact_totals(res.rows))).values())


def test_one_file_layout_readout_is_the_score(tmp_path: Path) -> None:
    gold_docs, pred_docs = corpus(3)
    lines = []
    for g_doc, p_doc in zip(gold_docs, pred_docs):
        lines += ["-DOCSTART- -X- O O", ""]
        for g, p in zip(g_doc, p_doc):
            lines += [f"w{k} {a} {b}" for k, (a, b) in enumerate(zip(g, p))] + [""]
    path = tmp_path / "out.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    res = resample("--file", str(path))
    assert_readout_is_the_score(res, score_files(file=path).scores)
    assert res.unit == "documents" and max(res.groups) == len(gold_docs) - 1


def test_readout_of_weighted_totals_never_raises() -> None:
    gold, pred = sample_paths()
    res = resample("--gold", gold, "--pred", pred)
    width = res.rows.shape[1]
    for totals in (np.zeros(width), np.full(width, 0.37), exact_totals(res.rows) * 1.7):
        out = flatten(res.readout(totals))
        assert all(v is None or np.isfinite(v) for v in out.values())
    assert flatten(res.readout(np.zeros(width)))["f1"] == 0.0


# ---------------------------------------------------------------------------------------------------- the unit
def test_docstart_marks_give_documents(tmp_path: Path) -> None:
    gold_docs, pred_docs = corpus(5, documents=4)
    gold, pred = write(tmp_path / "gold.txt", gold_docs), write(tmp_path / "pred.txt", pred_docs)
    res = resample("--gold", gold, "--pred", pred)
    sizes = [len(doc) for doc in gold_docs]
    assert res.unit == "documents"
    assert list(res.groups) == [d for d, n in enumerate(sizes) for _ in range(n)]
    # each document's summed rows are the rows of that document scored on its own
    units = group_rows(res.rows, res.groups)
    assert units.shape == (len(gold_docs), res.rows.shape[1])
    for d, (g_doc, p_doc) in enumerate(zip(gold_docs, pred_docs)):
        one = file_rows(
            references=write(tmp_path / f"g{d}.txt", [g_doc]), predictions=write(tmp_path / f"p{d}.txt", [p_doc])
        ).with_labels(sorted(TYPES))
        assert np.array_equal(units[d], exact_totals(one.rows))
    assert np.array_equal(exact_totals(units), exact_totals(res.rows))
    sentences = resample("--gold", gold, "--pred", pred, "--unit", "sentence")
    assert sentences.unit == "sentences" and sentences.groups is None
    assert np.array_equal(sentences.rows, res.rows)


def test_docstart_lines_count_as_tokens_and_nothing_else(tmp_path: Path) -> None:
    """-DOCSTART- O lines are tokens tagged right, as conlleval counts them, in the first sentence of their document's
    row; no span figure moves."""
    gold_docs, pred_docs = corpus(8)
    marked = score_files(
        references=write(tmp_path / "g1.txt", gold_docs), predictions=write(tmp_path / "p1.txt", pred_docs)
    )
    plain = score_files(
        references=write(tmp_path / "g2.txt", gold_docs, docstart=False),
        predictions=write(tmp_path / "p2.txt", pred_docs, docstart=False),
    )
    n = len(gold_docs)
    c = plain.scores["counts"]
    assert marked.scores["counts"] == dict(c, tokens=c["tokens"] + n, correct_tags=c["correct_tags"] + n)
    assert marked.scores["accuracy"] == (c["correct_tags"] + n) / (c["tokens"] + n)
    assert {k: v for k, v in marked.scores.items() if k not in ("counts", "accuracy")} == {
        k: v for k, v in plain.scores.items() if k not in ("counts", "accuracy")
    }
    firsts = {sum(len(doc) for doc in gold_docs[:d]) for d in range(n)}
    for k, (m, p) in enumerate(zip(marked.items, plain.items)):
        assert m["tokens"] == p["tokens"] + (k in firsts)
        assert {x: v for x, v in m.items() if x not in ("line", "tokens")} == {
            x: v for x, v in p.items() if x not in ("line", "tokens")
        }


@pytest.mark.parametrize("name", ["docstart.txt", "docstart_tagged.txt", "outside_without_raw.txt"])
def test_docstart_fixtures_readout_is_the_score(name: str) -> None:
    """Tagged -DOCSTART- lines, marks next to sentences or at the end: the rows still add up to the score."""
    path = str(Path(__file__).parents[1] / "data" / "ner" / name)
    res = resample("--file", path)
    assert_readout_is_the_score(res, score_files(file=path).scores)
    assert res.unit == "documents" and len(res.groups) == res.rows.shape[0]
    assert exact_totals(res.rows)[3] == score_files(file=path).scores["counts"]["tokens"]


def test_file_of_marks_only_has_one_row(tmp_path: Path) -> None:
    path = tmp_path / "marks.txt"
    path.write_text("-DOCSTART- -X- O O\n\n-DOCSTART- -X- B-ORG O\n", encoding="utf-8")
    report = score_files(file=path)
    assert report.scores["counts"] == {"tokens": 2, "phrases": 1, "found": 0, "correct": 0, "correct_tags": 1}
    assert any("holds no sentences; only its 2 -DOCSTART- lines are counted" in w for w in report.warnings)
    res = resample("--file", str(path))
    assert res.rows.shape[0] == 1 and list(res.groups) == [0]
    assert_readout_is_the_score(res, report.scores)


def test_file_without_docstart_resamples_sentences(tmp_path: Path) -> None:
    gold_docs, pred_docs = corpus(2)
    gold = write(tmp_path / "gold.txt", gold_docs, docstart=False)
    pred = write(tmp_path / "pred.txt", pred_docs, docstart=False)
    res = resample("--gold", gold, "--pred", pred)
    assert res.unit == "sentences" and res.groups is None and res.rows.shape[0] == sum(map(len, gold_docs))
    with pytest.raises(InputFormatError, match="no -DOCSTART- line"):
        resample("--gold", gold, "--pred", pred, "--unit", "document")


def test_unit_document_without_marks_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    gold_docs, pred_docs = corpus(2)
    gold = write(tmp_path / "gold.txt", gold_docs, docstart=False)
    pred = write(tmp_path / "pred.txt", pred_docs, docstart=False)
    code = main(["score", "ner", "--gold", gold, "--pred", pred, "--unit", "document", "--bootstrap", "10"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "--unit sentence" in err


def test_reader_records_document_starts(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    text = "a O\n\n-DOCSTART- O\n\n-DOCSTART- O\n\nb O\n\nc O\n-DOCSTART- O\nd O\n\n-DOCSTART- O\n"
    path.write_text(text, encoding="utf-8")
    doc = read_conll(path)
    assert doc.tags == [["O"]] * 4
    assert doc.doc_starts == (1, 1, 3, 4)
    assert doc.documents() == [0, 1, 1, 2]  # before the first mark; two marks, one document; a mark mid-sentence
    path.write_text("a O\n\nb O\n", encoding="utf-8")
    assert read_conll(path).documents() is None


def test_compare_systems_share_the_columns(tmp_path: Path, capsys) -> None:
    """A type only one system predicts gets a column in both: one read-out for the two, each its own score."""
    gold_docs, pred_docs = corpus(4, documents=3)
    gold, a = write(tmp_path / "gold.txt", gold_docs), write(tmp_path / "a.txt", pred_docs)
    other = [[[t.replace("MISC", "EVENT") for t in s] for s in doc] for doc in pred_docs]
    b = write(tmp_path / "b.txt", other)
    runs = []
    for system in (a, b):
        args = build_parser().parse_args(["compare", "ner", "--references", gold, "--system", a, "--system", b])
        args.pred = system
        runs.append(registry()["ner"].resample(args))
    assert runs[0].rows.shape == runs[1].rows.shape
    for res, system in zip(runs, (a, b)):
        scores = score_files(references=gold, predictions=system).scores
        got = flatten(runs[0].readout(exact_totals(res.rows)))
        for path, value in figures(scores).items():
            assert got[path] == value, path
    code = main(["compare", "ner", "--references", gold, "--system", a, "--system", b, "--samples", "20"])
    assert code == 0, capsys.readouterr().err


def test_bootstrap_over_documents_holds_the_estimate() -> None:
    gold, pred = sample_paths()
    res = resample("--gold", gold, "--pred", pred)
    out = bootstrap(res.readout, group_rows(res.rows, res.groups), samples=40, seed=0, level=0.9)
    assert out["estimate"]["f1"] == score_files(references=gold, predictions=pred).scores["f1"]


def test_resampling_imports_no_jax(tmp_path: Path) -> None:
    gold_docs, pred_docs = corpus(6)
    gold, a = write(tmp_path / "gold.txt", gold_docs), write(tmp_path / "a.txt", pred_docs)
    b = write(tmp_path / "b.txt", [perturb(random.Random(1), doc) for doc in gold_docs])
    code = f"""
import sys
from metametric_jax.cli import main
assert main(["compare", "ner", "--references", {gold!r}, "--system", {a!r}, "--system", {b!r}, "--samples", "20",
             "--format", "json"]) == 0
assert main(["score", "ner", "--gold", {gold!r}, "--pred", {a!r}, "--bootstrap", "20", "--format", "json"]) == 0
print("jax" in sys.modules, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
