"""``dependency``'s resampling rows and read-out: the score figures bit for bit, ``# newdoc`` documents, no JAX."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.cli import build_parser, main
from metametric_jax.commands import registry
from metametric_jax.errors import InputFormatError
from metametric_jax.intervals import exact_totals, flatten, group_rows
from metametric_jax.tasks import dependency as dep
from metametric_jax.tasks.readers.conllu import documents, read_conllu

DATA = Path(__file__).parents[1] / "data" / "dependency"
SAMPLE = resources.files("metametric_jax") / "data" / "parsing"
GOLD = str(DATA / "gold.conllu")
CASES = sorted(p.stem for p in DATA.glob("pred-*.conllu"))
OPTIONS = {"--exclude-punct": "exclude_punct", "--keep-subtypes": "strip_subtypes", "--no-check-trees": "check_trees"}


def resample(*argv: str):
    args = build_parser().parse_args(["score", "dependency", *argv])
    return registry()["dependency"].resample(args)


def assert_readout_is_the_score(res, scores: dict) -> None:
    got = flatten(res.readout(exact_totals(res.rows)))
    want = flatten(scores)
    assert set(got) == set(want)
    for path, value in want.items():
        assert got[path] == value, path  # bit for bit, None where the figure does not exist


def score(gold: str, pred: str, *flags: str) -> dict:
    options = {OPTIONS[f]: f == "--exclude-punct" for f in flags}  # the other flags turn an option off
    return dep.score_files(predictions=pred, references=gold, **options).scores


# ---------------------------------------------------------------------------------------------------- the figures
def test_sample_readout_is_the_score_json(capsys) -> None:
    gold, pred = str(SAMPLE / "gold.conllu"), str(SAMPLE / "pred.conllu")
    assert main(["score", "dependency", "--gold", gold, "--pred", pred, "--format", "json"]) == 0
    res = resample("--gold", gold, "--pred", pred)
    assert_readout_is_the_score(res, json.loads(capsys.readouterr().out))
    assert res.unit == "sentences" and res.groups is None and res.scale == 100
    assert res.rows.shape == (len(read_conllu(gold)), 4 * len(dep.METRICS))


@pytest.mark.parametrize("flags", [(), ("--exclude-punct",), ("--keep-subtypes",), ("--no-check-trees",)])
@pytest.mark.parametrize("case", CASES)
def test_fixtures_readout_is_the_score(case: str, flags: tuple[str, ...]) -> None:
    pred = str(DATA / f"{case}.conllu")
    res = resample("--gold", GOLD, "--pred", pred, *flags)
    assert_readout_is_the_score(res, score(GOLD, pred, *flags))


# ---------------------------------------------------------------------------------------------------- generated files
def conllu(sentences: list[list[tuple[str, str, int, str]]], newdoc: set[int] = frozenset()) -> str:
    """CoNLL-U text of sentences of (form, upos, head, deprel) words; ``newdoc``: the sentences starting documents."""
    out = []
    for k, words in enumerate(sentences):
        if k in newdoc:
            out.append(f"# newdoc id = doc{k}")
        out.append(f"# sent_id = s{k + 1}")
        for i, (form, upos, head, rel) in enumerate(words, start=1):
            out.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def random_sentence(rng: random.Random) -> list[tuple[str, str, int, str]]:
    n = rng.randint(1, 9)
    root = rng.randint(1, n)
    words = []
    for i in range(1, n + 1):  # a head is the root or an earlier word: a tree
        form = f"w{rng.randint(0, 30)}"
        if i == root:
            words.append((form, "VERB", 0, "root"))
        else:
            head = rng.choice([root, *(j for j in range(1, i) if j != root)])
            words.append(
                (form, rng.choice(["NOUN", "VERB", "PUNCT", "DET"]), head, rng.choice(["nsubj", "obj", "det"]))
            )
    return words


def perturb(rng: random.Random, sentence: list[tuple[str, str, int, str]]) -> list[tuple[str, str, int, str]]:
    out = []
    for form, upos, head, rel in sentence:
        if rng.random() < 0.3:
            upos = rng.choice(["NOUN", "VERB", "ADJ"])
        if head and rng.random() < 0.3:  # re-attach to the root: still a tree
            head = next(j for j, w in enumerate(sentence, start=1) if w[2] == 0)
            rel = rng.choice(["nsubj:pass", "obl", "det"])
        out.append((form, upos, head, rel))
    return out


def corpus(seed: int, n: int = 12) -> tuple[list, list]:
    rng = random.Random(seed)
    gold = [random_sentence(rng) for _ in range(n)]
    return gold, [perturb(rng, s) for s in gold]


@pytest.mark.parametrize("seed", range(6))
def test_generated_files_readout_is_the_score(tmp_path: Path, seed: int) -> None:
    gold_s, pred_s = corpus(seed)
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(conllu(gold_s), encoding="utf-8")
    pred.write_text(conllu(pred_s), encoding="utf-8")
    assert_readout_is_the_score(resample("--gold", str(gold), "--pred", str(pred)), score(str(gold), str(pred)))


@pytest.mark.parametrize("case", ["empty prediction", "no sentences", "one sentence", "duplicates"])
def test_edge_files_readout_is_the_score(tmp_path: Path, case: str) -> None:
    gold_s, pred_s = corpus(21)
    if case == "empty prediction":  # no tags, no relations, every word attached to the first
        pred_s = [[(f, "_", 0 if i == 1 else 1, "_") for i, (f, *_) in enumerate(s, start=1)] for s in gold_s]
    elif case == "no sentences":
        gold_s = pred_s = []
    elif case == "one sentence":
        gold_s, pred_s = gold_s[:1], pred_s[:1]
    else:
        gold_s, pred_s = gold_s * 2, pred_s * 2
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(conllu(gold_s), encoding="utf-8")
    pred.write_text(conllu(pred_s), encoding="utf-8")
    res = resample("--gold", str(gold), "--pred", str(pred))
    assert_readout_is_the_score(res, score(str(gold), str(pred)))
    if case == "no sentences":
        assert res.rows.shape == (0, 4 * len(dep.METRICS)) and res.warnings


def test_readout_of_weighted_totals_never_raises() -> None:
    res = resample("--gold", GOLD, "--pred", str(DATA / "pred-all.conllu"))
    for totals in (np.zeros(res.rows.shape[1]), exact_totals(res.rows) * 0.3):
        out = flatten(res.readout(totals))
        assert all(v is None or np.isfinite(v) for v in out.values())
    assert flatten(res.readout(np.zeros(res.rows.shape[1])))["las/f1"] == 0.0


# ---------------------------------------------------------------------------------------------------- the unit
def test_newdoc_comments_give_documents() -> None:
    """The EWT fixture marks its documents with '# newdoc'; each document's rows sum to the document's counts."""
    res = resample("--gold", GOLD, "--pred", str(DATA / "pred-heads.conllu"))
    gold = read_conllu(GOLD)
    starts = [k for k, s in enumerate(gold) if s.newdoc]
    assert res.unit == "documents" and starts and starts[0] == 0
    assert list(res.groups) == documents(gold)
    assert max(res.groups) == len(starts) - 1
    units = group_rows(res.rows, res.groups)
    bounds = [*starts, len(gold)]
    for d in range(len(starts)):
        assert np.array_equal(units[d], res.rows[bounds[d] : bounds[d + 1]].sum(axis=0))
    # the heads fixture keeps the tokenization: a document scored on its own has the same counts
    pred = read_conllu(DATA / "pred-heads.conllu")
    for d in range(len(starts)):
        one = dep.sentence_counts(pred[bounds[d] : bounds[d + 1]], gold[bounds[d] : bounds[d + 1]])
        assert np.array_equal(units[d], exact_totals(dep.sentence_rows(one)))
    sentences = resample("--gold", GOLD, "--pred", str(DATA / "pred-heads.conllu"), "--unit", "sentence")
    assert sentences.unit == "sentences" and sentences.groups is None
    assert np.array_equal(sentences.rows, res.rows)


def test_generated_documents(tmp_path: Path) -> None:
    gold_s, pred_s = corpus(3, n=10)
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text(conllu(gold_s, newdoc={2, 3, 7}), encoding="utf-8")
    pred.write_text(conllu(pred_s), encoding="utf-8")
    res = resample("--gold", str(gold), "--pred", str(pred))
    assert res.unit == "documents"
    assert list(res.groups) == [0, 0, 1, 2, 2, 2, 2, 3, 3, 3]  # sentences before the first '# newdoc' form one


def test_unit_document_without_newdoc_is_an_error(tmp_path: Path, capsys) -> None:
    gold, pred = str(SAMPLE / "gold.conllu"), str(SAMPLE / "pred.conllu")
    with pytest.raises(InputFormatError, match="newdoc"):
        resample("--gold", gold, "--pred", pred, "--unit", "document")
    code = main(["score", "dependency", "--gold", gold, "--pred", pred, "--unit", "document", "--bootstrap", "10"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "--unit sentence" in err


def test_resampling_imports_no_jax() -> None:
    a, b = str(DATA / "pred-heads.conllu"), str(DATA / "pred-tags.conllu")
    code = f"""
import sys
from metametric_jax.cli import main
assert main(["compare", "dependency", "--references", {GOLD!r}, "--system", {a!r}, "--system", {b!r},
             "--samples", "20", "--format", "json"]) == 0
assert main(["score", "dependency", "--gold", {GOLD!r}, "--pred", {a!r}, "--bootstrap", "20", "--format", "json"]) == 0
print("jax" in sys.modules, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
