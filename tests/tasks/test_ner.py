"""NER: chunking, span metrics and the file scorer against seqeval (default mode) and conlleval.pl's own output."""

from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import ner
from metametric_jax.tasks.ner import NerMetric, sample_paths, score, score_files, span_metric, span_stats, state_report
from metametric_jax.tasks.readers.conll import check_aligned, read_conll, read_conlleval
from metametric_jax.tasks.tagging import SCHEMES, Span, extract_batch, extract_spans, normalize_scheme

pytestmark = pytest.mark.filterwarnings("ignore:.*ill-defined")

DATA = Path(__file__).parents[1] / "data" / "ner"
PREFIXES = {"IOB1": "BI", "IOB2": "BI", "IOE1": "IE", "IOE2": "IE", "IOBES": "BIES", "BILOU": "BILU"}
TYPES = ("PER", "LOC", "ORG")


def to_seqeval(tags: list[str]) -> list[str]:
    """BILOU → IOBES, the only scheme seqeval does not read directly."""
    return [("E" + t[1:]) if t[0] == "L" else ("S" + t[1:]) if t[0] == "U" else t for t in tags]


def seqeval_spans(tags: list[str]) -> list[Span]:
    return sorted(Span(s, e + 1, t) for t, s, e in get_entities(to_seqeval(tags)))


def random_tags(rng: random.Random, scheme: str, n: int, lo: int = 0, hi: int = 12) -> list[list[str]]:
    """Random (often ill-formed) sequences over the scheme's prefixes."""
    choices = ["O"] * 3 + [f"{p}-{t}" for p in PREFIXES[scheme] for t in TYPES]
    return [[rng.choice(choices) for _ in range(rng.randint(lo, hi))] for _ in range(n)]


def noisy_copy(rng: random.Random, scheme: str, gold: list[list[str]], rate: float = 0.3) -> list[list[str]]:
    choices = ["O"] + [f"{p}-{t}" for p in PREFIXES[scheme] for t in TYPES]
    return [[rng.choice(choices) if rng.random() < rate else t for t in s] for s in gold]


# ------------------------------------------------------------------------------------------- hand-written examples
@pytest.mark.parametrize(
    ("scheme", "tags", "expected"),
    [
        # IOB2: B starts, I continues; I after O or after another type starts a chunk (conlleval repair).
        ("IOB2", ["B-PER", "I-PER", "O", "B-LOC"], [(0, 2, "PER"), (3, 4, "LOC")]),
        ("IOB2", ["O", "I-PER", "I-PER", "I-LOC", "B-LOC", "I-LOC"], [(1, 3, "PER"), (3, 4, "LOC"), (4, 6, "LOC")]),
        ("IOB2", ["B-PER", "B-PER", "I-ORG"], [(0, 1, "PER"), (1, 2, "PER"), (2, 3, "ORG")]),
        # IOB1: chunks start with I; B separates adjacent chunks of one type.
        ("IOB1", ["I-PER", "I-PER", "B-PER", "O", "I-LOC"], [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")]),
        # IOE2: every chunk ends with E; IOE1: E only before an adjacent chunk of the same type.
        ("IOE2", ["I-ORG", "E-ORG", "E-PER", "O", "I-LOC"], [(0, 2, "ORG"), (2, 3, "PER"), (4, 5, "LOC")]),
        ("IOE1", ["I-ORG", "E-ORG", "I-ORG", "I-ORG", "O"], [(0, 2, "ORG"), (2, 4, "ORG")]),
        ("IOE1", ["E-ORG", "E-ORG", "I-LOC", "I-ORG"], [(0, 1, "ORG"), (1, 2, "ORG"), (2, 3, "LOC"), (3, 4, "ORG")]),
        # IOBES / BILOU: S and U are single-token chunks, E and L close a chunk.
        ("IOBES", ["S-PER", "B-ORG", "I-ORG", "E-ORG", "E-ORG"], [(0, 1, "PER"), (1, 4, "ORG"), (4, 5, "ORG")]),
        (
            "IOBES",
            ["B-LOC", "O", "I-LOC", "S-LOC", "I-LOC"],
            [(0, 1, "LOC"), (2, 3, "LOC"), (3, 4, "LOC"), (4, 5, "LOC")],
        ),
        ("BILOU", ["U-PER", "B-ORG", "I-ORG", "L-ORG", "L-ORG"], [(0, 1, "PER"), (1, 4, "ORG"), (4, 5, "ORG")]),
        ("BILOU", ["B-LOC", "L-PER", "O", "U-LOC"], [(0, 1, "LOC"), (1, 2, "PER"), (3, 4, "LOC")]),
        # Types may contain hyphens; a bare prefix has the type "_" (seqeval's convention).
        ("IOB2", ["B-GPE-LOC", "I-GPE-LOC"], [(0, 2, "GPE-LOC")]),
        ("IOB2", ["B", "I", "O", "I"], [(0, 2, "_"), (3, 4, "_")]),
        ("IOB2", [], []),
        ("IOB2", ["O", "O"], []),
    ],
)
def test_hand_written(scheme: str, tags: list[str], expected: list[tuple[int, int, str]]) -> None:
    assert sorted(extract_spans(tags, scheme)) == sorted(Span(*x) for x in expected)
    assert seqeval_spans(tags) == sorted(Span(*x) for x in expected)  # the hand derivation agrees with seqeval


def test_span_end_is_exclusive() -> None:
    tokens = ["Marie", "Curie", "was", "born", "in", "Warsaw"]
    tags = ["B-PER", "I-PER", "O", "O", "O", "B-LOC"]
    assert [tokens[s.start : s.end] for s in extract_spans(tags)] == [["Marie", "Curie"], ["Warsaw"]]


def test_scheme_names() -> None:
    assert normalize_scheme("bio") == "IOB2"
    assert normalize_scheme("BIOES") == "IOBES"
    assert normalize_scheme("ioe") == "IOE2"
    with pytest.raises(ValueError, match="Unknown tag scheme 'XYZ'.*IOB1"):
        normalize_scheme("XYZ")


# ------------------------------------------------------------------------------------------- against seqeval
@pytest.mark.parametrize("scheme", SCHEMES)
def test_extraction_matches_seqeval_random(scheme: str) -> None:
    rng = random.Random(SCHEMES.index(scheme))
    batch = random_tags(rng, scheme, 400)
    for tags, spans in zip(batch, extract_batch(batch, scheme)):
        assert sorted(spans) == seqeval_spans(tags), tags


@pytest.mark.parametrize("scheme", SCHEMES)
def test_scores_match_seqeval_random(scheme: str) -> None:
    rng = random.Random(17 + len(scheme))
    gold = random_tags(rng, scheme, 300)
    pred = noisy_copy(rng, scheme, gold)
    g, p = [to_seqeval(s) for s in gold], [to_seqeval(s) for s in pred]
    res = span_metric(scheme).from_model_output(pred, gold).compute()
    assert float(res["f1"]) == pytest.approx(f1_score(g, p), rel=1e-6)
    assert float(res["precision"]) == pytest.approx(precision_score(g, p), rel=1e-6)
    assert float(res["recall"]) == pytest.approx(recall_score(g, p), rel=1e-6)

    ref = classification_report(g, p, output_dict=True)
    labels = sorted(k for k in ref if not k.endswith(" avg"))
    out = NerMetric(labels, scheme).from_model_output(pred, gold).compute()
    for lab in labels:
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert float(out["per_type"][lab][ours]) == pytest.approx(ref[lab][theirs], rel=1e-6, abs=1e-7)
        assert float(out["per_type"][lab]["support"]) == ref[lab]["support"]
    for avg in ("micro", "macro", "weighted"):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert float(out[avg][ours]) == pytest.approx(ref[f"{avg} avg"][theirs], rel=1e-6)

    report = score(pred, gold, scheme=scheme)
    assert sorted(report["per_type"]) == labels
    for lab in labels:
        assert report["per_type"][lab]["f1"] == pytest.approx(ref[lab]["f1-score"], rel=1e-12, abs=1e-15)
        assert report["per_type"][lab]["support"] == ref[lab]["support"]
        assert isinstance(report["per_type"][lab]["support"], int)
    for avg in ("micro", "macro", "weighted"):
        assert report[avg]["f1"] == pytest.approx(ref[f"{avg} avg"]["f1-score"], rel=1e-12)
        assert report[avg]["precision"] == pytest.approx(ref[f"{avg} avg"]["precision"], rel=1e-12)
    assert report["f1"] == report["micro"]["f1"] == pytest.approx(f1_score(g, p), rel=1e-12)


def test_span_sets_are_accepted() -> None:
    rng = random.Random(3)
    gold = random_tags(rng, "IOB2", 100)
    pred = noisy_copy(rng, "IOB2", gold)
    gold_sets = [{(s.start, s.end, s.label) for s in seqeval_spans(x)} for x in gold]
    pred_spans = [seqeval_spans(x) + seqeval_spans(x)[:1] for x in pred]  # a duplicate counts once
    expected = span_stats(pred, gold)
    np.testing.assert_array_equal(span_stats(pred_spans, gold_sets), expected)
    np.testing.assert_array_equal(span_stats(pred, gold_sets), expected)
    rep = score(pred_spans, gold)
    ref = classification_report(gold, pred, output_dict=True)
    assert rep["f1"] == pytest.approx(ref["micro avg"]["f1-score"], rel=1e-12)
    assert rep["counts"]["tokens"] == 0 and rep["accuracy"] == 0.0  # no tokens where a side is spans


def test_labels_outside_the_fixed_set_count_in_micro_only() -> None:
    gold = [["B-PER", "O", "B-LOC"], ["B-ORG", "I-ORG"]]
    pred = [["B-PER", "O", "B-ORG"], ["B-ORG", "I-ORG"]]
    out = NerMetric(["PER"], "IOB2").from_model_output(pred, gold).compute()
    assert float(out["per_type"]["PER"]["f1"]) == 1.0
    assert float(out["micro"]["f1"]) == pytest.approx(f1_score(gold, pred))
    assert float(out["macro"]["f1"]) == 1.0
    assert score(pred, gold, labels=["PER"])["macro"]["f1"] == 1.0


def test_absent_types_are_left_out_of_macro() -> None:
    gold = [["B-PER", "O"], ["B-LOC", "I-LOC"]]
    pred = [["B-PER", "O"], ["O", "B-LOC"]]
    out = NerMetric(["LOC", "MISC", "PER"]).from_model_output(pred, gold).compute()
    ref = classification_report(gold, pred, output_dict=True)
    assert "MISC" not in ref
    assert float(out["macro"]["f1"]) == pytest.approx(ref["macro avg"]["f1-score"])
    assert float(out["per_type"]["MISC"]["support"]) == 0.0


# ------------------------------------------------------------------------------------------- accumulator laws
def test_batches_merged_equal_one_batch() -> None:
    rng = random.Random(5)
    gold = random_tags(rng, "IOB2", 120)
    pred = noisy_copy(rng, "IOB2", gold)
    step = jax.jit(lambda a, b: a.merge(b))  # one jitted merge, compiled once per class (not once per batch)
    for cls in (span_metric("IOB2"), NerMetric(["LOC", "ORG", "PER"], "IOB2")):
        whole = cls.from_model_output(pred, gold)
        merged = cls.empty()
        for i in range(0, 120, 25):
            merged = step(merged, cls.from_model_output(pred[i : i + 25], gold[i : i + 25]))
        leaves_a, leaves_b = jax.tree_util.tree_leaves(whole.compute()), jax.tree_util.tree_leaves(merged.compute())
        assert len(leaves_a) == len(leaves_b)
        for x, y in zip(leaves_a, leaves_b):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)
    whole = NerMetric(["LOC", "ORG", "PER"]).from_model_output(pred, gold)
    assert state_report(whole) == score(pred, gold, labels=["LOC", "ORG", "PER"])


def test_same_arguments_same_class() -> None:
    assert span_metric("bio") is span_metric("IOB2")
    assert NerMetric(["PER", "LOC"], "IOB2") is NerMetric(("PER", "LOC"), "iob2")


def test_empty_sentences_and_weights() -> None:
    res = span_metric().from_model_output([[], ["O"]], [[], ["O"]]).compute()
    assert float(res["f1"]) == 0.0  # no spans at all: 0/0 → zero_division, as seqeval
    assert span_stats([["B-PER"], ["B-PER"]], [["B-PER"], ["O"]]).tolist() == [[1, 1, 1], [0, 1, 0]]
    res = span_metric().from_model_output([["B-PER"], ["B-PER"]], [["B-PER"], ["O"]], weights=[1.0, 0.0]).compute()
    assert float(res["precision"]) == 1.0
    empty = score([], [])
    assert empty["f1"] == 0.0 and empty["per_type"] == {} and empty["counts"]["tokens"] == 0


def test_reserved_looking_types_are_ordinary_types() -> None:
    """Issue 10: entity types named like the averages are scored as any other type, on every path."""
    gold = [["B-micro", "I-micro", "O", "B-macro"], ["B-weighted", "O"]]
    pred = [["B-micro", "I-micro", "O", "B-weighted"], ["B-weighted", "O"]]
    labels = ["macro", "micro", "weighted"]
    host = score(pred, gold)
    assert sorted(host["per_type"]) == labels
    assert host["per_type"]["micro"]["f1"] == 1.0 and host["per_type"]["macro"]["recall"] == 0.0
    assert state_report(NerMetric(labels).from_model_output(pred, gold)) == host
    out = NerMetric(labels).from_model_output(pred, gold).compute()
    assert float(out["per_type"]["micro"]["f1"]) == 1.0
    assert float(out["micro"]["f1"]) == pytest.approx(host["f1"])


# ------------------------------------------------------------------------------------------- bad input
def test_invalid_prefix_names_tag_position_and_valid_prefixes() -> None:
    with pytest.raises(ValueError, match=r"references: sentence 1, token 2 .*'E-PER'.*IOB2.*'B-', 'I-'"):
        span_stats([["O"], ["O", "O", "O"]], [["O"], ["B-PER", "I-PER", "E-PER"]], "IOB2")
    with pytest.raises(ValueError, match=r"'S-LOC'.*IOE1.*'I-', 'E-'"):
        extract_spans(["S-LOC"], "IOE1")
    with pytest.raises(ValueError, match=r"'BPER'.*raw mode"):
        extract_spans(["BPER"], "IOB2")
    with pytest.raises(ValueError, match=r"'E-ORG'.*BILOU"):
        extract_spans(["E-ORG"], "BILOU")
    # positions are those of the whole batch, not of a counting chunk
    batch = [["O"]] * (ner.CHUNK + 3) + [["O", "X-PER"]]
    with pytest.raises(ValueError, match=rf"predictions: sentence {ner.CHUNK + 3}, token 1"):
        score(batch, [["O"]] * (ner.CHUNK + 3) + [["O", "O"]])


def test_bad_shapes() -> None:
    with pytest.raises(ValueError, match="sentence 1 .* 2 predicted tags but 3 reference"):
        span_stats([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match="same length"):
        span_metric().from_model_output([["O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="same length, one entry per sentence"):
        score([["O"]], [["O"], ["O"]])
    with pytest.raises(TypeError, match="Wrap a single sentence"):
        span_stats(["B-PER", "O"], ["B-PER", "O"])
    with pytest.raises(ValueError, match="start < end"):
        span_stats([[(2, 2, "PER")]], [[(0, 1, "PER")]])
    with pytest.raises(ValueError, match="duplicated"):
        NerMetric(["PER", "PER"])
    with pytest.raises(ValueError, match="non-empty"):
        NerMetric([""])
    with pytest.raises(TypeError):
        score([["O"]], [["O"]], schema="IOB2")  # a typo is an unknown keyword
    with pytest.raises(TypeError, match="found a string"):
        score("B-PER", ["B-PER"])
    with pytest.raises(TypeError, match="raw= read tags"):
        score([{(0, 1, "PER")}], [["B-PER"]], raw=True)
    assert score(iter([["B-PER"]]), (s for s in [["B-PER"]]))["f1"] == 1.0  # any iterable of sentences


# ------------------------------------------------------------------------------------------- CoNLL reader
def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


GOLD = """-DOCSTART- -X- O

Kestrel B-ORG
opens O
Danish B-MISC

Lea B-PER
Novak I-PER


PORTO B-LOC
"""


def test_reader(tmp_path) -> None:
    path = write(tmp_path, "g.txt", GOLD.replace("opens O", "opens\tO"))
    doc = read_conll(path, "IOB2")
    assert doc.tags == [["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"], ["B-LOC"]]
    assert doc.tokens == [["Kestrel", "opens", "Danish"], ["Lea", "Novak"], ["PORTO"]]
    assert [list(x) for x in doc.lines] == [[3, 4, 5], [7, 8], [11]]
    tags_only = read_conll(write(tmp_path, "p.txt", "B-PER\nO\n\nO\n"))
    assert tags_only.tokens is None and tags_only.tags == [["B-PER", "O"], ["O"]]
    # a byte-order mark and CRLF line endings read as the plain file
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + GOLD.replace("\n", "\r\n").encode())
    bom = read_conll(tmp_path / "bom.txt", "IOB2")
    assert (bom.tags, bom.tokens, bom.lines) == (
        read_conll(write(tmp_path, "plain.txt", GOLD)).tags,
        doc.tokens,
        doc.lines,
    )


def test_reader_bad_input(tmp_path) -> None:
    with pytest.raises(InputFormatError, match=r"g\.txt:4: expected 2 whitespace-separated columns .* found 3"):
        read_conll(write(tmp_path, "g.txt", GOLD.replace("opens O", "opens X O")))
    with pytest.raises(InputFormatError, match=r"g\.txt:7: tag 'S-PER' is not valid in scheme IOB2"):
        read_conll(write(tmp_path, "g.txt", GOLD.replace("Lea B-PER", "Lea S-PER")), "IOB2")
    (tmp_path / "bad.txt").write_bytes(b"Kestrel B-ORG\n\xff O\n")
    with pytest.raises(InputFormatError, match=r"bad\.txt:2: expected UTF-8 text; found the byte 0xff"):
        read_conll(tmp_path / "bad.txt")
    with pytest.raises(InputFormatError, match=r"one\.txt:1: expected at least 2 columns"):
        read_conlleval(write(tmp_path, "one.txt", "O\n"))
    gold = write(tmp_path, "gold.txt", GOLD)
    with pytest.raises(
        InputFormatError, match=r"p\.txt:5: sentence 2 has 3 tokens \(lines 5-7\).*gold\.txt has 2 tokens \(lines 7-8\)"
    ):
        score_files(
            references=gold,
            predictions=write(tmp_path, "p.txt", "Kestrel B-ORG\nopens O\nDanish B-MISC\n\nP O\nx O\ny O\n"),
        )
    with pytest.raises(InputFormatError, match=r"p\.txt:5: token 'Lena' .* differs from token 'Lea' at .*gold\.txt:7"):
        score_files(
            references=gold,
            predictions=write(tmp_path, "p.txt", "Kestrel O\nopens O\nDanish O\n\nLena O\nNovak O\n\nPORTO O\n"),
        )
    with pytest.raises(InputFormatError, match=r"2 sentences but .*gold\.txt has 3; sentence 3 \(line 11 of .*gold"):
        score_files(references=gold, predictions=write(tmp_path, "p.txt", "O\nO\nO\n\nO\nO\n"))
    with pytest.raises(InputFormatError, match=r"p\.txt:3: tag 'E-PER'"):
        score_files(references=gold, predictions=write(tmp_path, "p.txt", "O\nO\nE-PER\n\nO\nO\n\nO\n"))
    with pytest.raises(TypeError, match="either file="):
        score_files(file=gold, references=gold)
    with pytest.raises(TypeError, match="needs predictions= and references="):
        score_files(references=gold)
    with pytest.raises(TypeError):
        score_files(gold, gold)  # file-level arguments are keyword-only


def test_score_files_matches_seqeval(tmp_path) -> None:
    gold, pred = sample_paths()
    g, p = read_conll(gold).tags, read_conll(pred).tags
    assert len(g) >= 30
    ref = classification_report(g, p, output_dict=True)
    rep = score_files(references=gold, predictions=pred)
    plain = score(p, g)  # the same tags without the two -DOCSTART- lines, which the files count as tokens (O, O)
    assert {k: v for k, v in rep.scores.items() if k not in ("accuracy", "counts")} == {
        k: v for k, v in plain.items() if k not in ("accuracy", "counts")
    }
    tokens, correct_tags = plain["counts"]["tokens"] + 2, plain["counts"]["correct_tags"] + 2
    assert rep.scores["counts"] == dict(plain["counts"], tokens=tokens, correct_tags=correct_tags)
    assert rep.scores["micro"] == pytest.approx(
        {
            "precision": ref["micro avg"]["precision"],
            "recall": ref["micro avg"]["recall"],
            "f1": ref["micro avg"]["f1-score"],
        }
    )
    assert rep.scores["macro"]["f1"] == pytest.approx(ref["macro avg"]["f1-score"])
    assert set(rep.scores["per_type"]) == {"LOC", "MISC", "ORG", "PER"}
    for lab, r in rep.scores["per_type"].items():
        assert (r["precision"], r["recall"], r["f1"], r["support"]) == pytest.approx(
            (ref[lab]["precision"], ref[lab]["recall"], ref[lab]["f1-score"], ref[lab]["support"])
        )
    # one item per sentence, adding up to the corpus counts
    assert len(rep.items) == len(g) and rep.items[0]["id"] == "sentence 1" and rep.items[0]["line"] == 3
    for key in ("tokens", "phrases", "found", "correct"):
        assert sum(item[key] for item in rep.items) == rep.scores["counts"][key]
    # tags-only prediction file and the one-file layout: same scores
    lines = Path(pred).read_text(encoding="utf-8").splitlines()
    tags_only = write(
        tmp_path,
        "tags.txt",
        "".join(
            ("-DOCSTART-" if x.startswith("-DOCSTART-") else x.split()[-1] if x.strip() else "") + "\n" for x in lines
        ),
    )
    assert score_files(references=gold, predictions=tags_only).scores == rep.scores
    check_aligned(read_conll(gold), read_conll(tags_only))
    both = [f"{a} {b.split()[-1]}" if a.strip() else "" for a, b in zip(Path(gold).read_text().splitlines(), lines)]
    one = write(tmp_path, "one.txt", "\n".join(both) + "\n")
    assert score_files(file=one).scores == rep.scores


def test_docstart_lines_with_tags_are_counted_as_conlleval_and_warned(tmp_path) -> None:
    """A tagged -DOCSTART- line is a token and a chunk, as conlleval.pl counts it (here: "processed 3 tokens with 2
    phrases; found: 1 phrases; correct: 1.", accuracy 66.67%); the warning names the line."""
    one = write(tmp_path, "one.txt", "-DOCSTART- -X- B-ORG O\n\nKestrel x B-ORG B-ORG\nsays x O O\n")
    report = score_files(file=one)
    assert report.scores["counts"] == {"tokens": 3, "phrases": 2, "found": 1, "correct": 1, "correct_tags": 2}
    assert f"{100 * report.scores['accuracy']:.2f}" == "66.67"
    assert any("counted as a token" in w for w in report.warnings)
    tagged = [w for w in report.warnings if "entity tag" in w]
    assert len(tagged) == 1 and tagged[0].startswith(f"{one}:1: a -DOCSTART- line carries an entity tag")
    assert "'B-ORG'" in tagged[0] and "conlleval" in tagged[0] and "blank line" not in tagged[0]
    # next to a token line, conlleval may join its chunk to the sentence's: the warning says so
    glued = score_files(file=write(tmp_path, "glued.txt", "-DOCSTART- -X- B-ORG B-ORG\nKestrel x I-ORG I-ORG\n"))
    assert any(
        w.startswith(f"{tmp_path / 'glued.txt'}:1: ") and "line 1 has no blank line" in w for w in glued.warnings
    )
    empty = score_files(file=write(tmp_path, "empty.txt", ""))
    assert empty.scores["f1"] == 0.0 and "holds no sentences" in empty.warnings[0]


def split_one_file(path: Path, tmp_path: Path, docstart: bool = True) -> tuple[Path, Path]:
    """The two-file layout of a one-file fixture: each side's tag after the token columns (-DOCSTART- lines too)."""
    gold, pred = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and fields[0] == "-DOCSTART-" and not docstart:
            pred.append(None)
            gold.append(line and " ".join(fields[:-1]))
            continue
        gold.append(" ".join(fields[:-1]))
        pred.append(" ".join(fields[:-2] + fields[-1:]))
    paths = tmp_path / f"gold_{path.name}", tmp_path / f"pred_{path.name}"
    paths[0].write_text("\n".join(gold) + "\n", encoding="utf-8")
    paths[1].write_text("\n".join(x for x in pred if x is not None) + "\n", encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", ["docstart.txt", "docstart_tagged.txt", "sample.txt", "random_iob2.txt"])
def test_two_file_layout_counts_what_the_pasted_one_file_counts(tmp_path, name: str) -> None:
    """Two files count their -DOCSTART- lines as conlleval counts the one file that pastes them side by side."""
    one = score_files(file=DATA / name)
    gold, pred = split_one_file(DATA / name, tmp_path)
    two = score_files(references=gold, predictions=pred)
    assert two.scores == one.scores and [i["tokens"] for i in two.items] == [i["tokens"] for i in one.items]
    assert_equal_to_conlleval(two.scores, DATA / name.replace(".txt", ".out"))
    marks = sum(x.startswith("-DOCSTART-") for x in (DATA / name).read_text(encoding="utf-8").splitlines())
    said = [w for w in two.warnings if "(in the token count and the accuracy)" in w and str(gold) in w]
    assert len(said) == 1 and f"{marks} -DOCSTART- line" in said[0]  # once per file, with the number
    assert sum(i["tokens"] for i in two.items) == two.scores["counts"]["tokens"]  # the items add up


def test_prediction_without_docstart_lines_counts_the_references_as_outside(tmp_path) -> None:
    gold, pred = split_one_file(DATA / "docstart.txt", tmp_path, docstart=False)
    two = score_files(references=gold, predictions=pred)
    assert two.scores == score_files(file=DATA / "docstart.txt").scores  # its -DOCSTART- lines are all O O
    assert any(w.startswith(f"{pred} has 0 -DOCSTART- lines, not where {gold} has its") for w in two.warnings)
    gold, pred = split_one_file(DATA / "docstart_tagged.txt", tmp_path, docstart=False)
    two = score_files(references=gold, predictions=pred)
    one = score_files(file=DATA / "docstart_tagged.txt")
    marks = [x.split()[1:] for x in (DATA / "docstart_tagged.txt").read_text(encoding="utf-8").splitlines()
             if x.startswith("-DOCSTART-")]  # fmt: skip
    found = sum(p != "O" for _, p in marks)  # the prediction's chunks on its own -DOCSTART- lines, now O
    correct = sum(p != "O" and g[2:] == p[2:] for g, p in marks)  # alone on its line, I-PER is a chunk as B-PER
    assert two.scores["counts"]["found"] == one.scores["counts"]["found"] - found
    assert two.scores["counts"]["correct"] == one.scores["counts"]["correct"] - correct
    assert two.scores["counts"]["tokens"] == one.scores["counts"]["tokens"]
    # the prediction's marks where the reference has none are not the reference's tokens
    plain, marked = (
        write(tmp_path, "plain.txt", "a B-ORG\n"),
        write(tmp_path, "marked.txt", "-DOCSTART- O\n\na B-ORG\n"),
    )
    report = score_files(references=plain, predictions=marked)
    assert report.scores["counts"]["tokens"] == 1 and report.warnings == [
        f"{marked} has 1 -DOCSTART- line and {plain} none: it is not counted"
    ]


def test_outside_without_raw_is_ignored_with_a_warning_as_conlleval() -> None:
    path = DATA / "outside_without_raw.txt"
    ignored = score_files(file=path, outside="B-MISC")
    assert ignored.scores == score_files(file=path).scores and ignored.scores["per_type"]["MISC"]["support"] > 0
    assert (
        ignored.warnings[0] == "the outside tag 'B-MISC' (-o) is ignored without raw tags (-r), as conlleval ignores it"
    )
    raw = score_files(file=DATA / "raw.txt", outside="NONE", raw=True)
    assert not any("ignored" in w for w in raw.warnings)
    assert raw.scores != score_files(file=DATA / "raw.txt", raw=True).scores  # with -r it applies


def test_one_column_file_is_a_missing_tag_column_not_a_raw_hint(tmp_path) -> None:
    """A file of tokens only: the error names file and line, says the tag column is missing, and never hints -r,
    which would read every word as a chunk and give an F1 of 0 without a word."""
    gold = write(tmp_path, "gold.txt", "Kestrel B-ORG\nopens O\n\nfoo O\n")
    tokens = write(tmp_path, "tokens.txt", "Kestrel\nopens\n\nfoo\n")
    with pytest.raises(InputFormatError) as err:
        score_files(references=gold, predictions=tokens)
    message = str(err.value)
    assert message.startswith(f"{tokens}:1: 'Kestrel' is not a tag of scheme IOB2") and "\n" not in message
    assert "the tag column is missing (expected at least two columns: a token and its tag" in message
    said = message.split(":1: ", 1)[1]
    assert "-r" not in said and "raw" not in said
    with pytest.raises(InputFormatError, match=r"tokens\.txt:1: found one column .*tag column is missing"):
        score_files(references=gold, predictions=tokens, raw=True)
    raw_tags = write(tmp_path, "raw_tags.txt", "ORG\nO\n\nO\n")  # with -r a file of one column is refused outright
    with pytest.raises(InputFormatError, match=r"raw_tags\.txt:1: found one column"):
        score_files(references=gold, predictions=raw_tags, raw=True)
    assert score_files(references=gold, predictions=write(tmp_path, "tags.txt", "B-ORG\nO\n\nO\n")).scores["f1"] == 1
    # conlleval's layout with the token and one tag only: a column is missing, not a raw file
    with pytest.raises(InputFormatError) as err:
        score_files(file=write(tmp_path, "one.txt", "Kestrel B-ORG\nopens O\n"))
    assert "a column is missing" in str(err.value) and "-r" not in str(err.value).split(":1: ", 1)[1]
    # tags without prefixes next to their tokens: there -r is the right reading, and the hint stays
    with pytest.raises(InputFormatError, match=r"raw mode \(-r\)"):
        score_files(references=write(tmp_path, "bare.txt", "Kestrel ORG\nopens O\n"), predictions=gold)


def test_reader_keeps_the_docstart_lines(tmp_path) -> None:
    path = write(tmp_path, "f.txt", "-DOCSTART- B-ORG\n\na O\n-DOCSTART-\nb O\n\n-DOCSTART- O\n-DOCSTART- O\n")
    doc = read_conll(path, "IOB2")
    assert doc.tags == [["O"], ["O"]] and doc.doc_starts == (0, 1, 2, 2) and doc.docstart_lines == (1, 4, 7, 8)
    assert doc.docstart_tags == ("B-ORG", "O", "O", "O") and doc.docstart_tagged == 1
    assert doc.docstart_glued == (False, True, True, True)
    with pytest.raises(InputFormatError, match=r"f\.txt:1: tag 'S-ORG'"):  # a -DOCSTART- line's tag is checked too
        read_conll(write(tmp_path, "f.txt", "-DOCSTART- S-ORG\n\na O\n"), "IOB2")
    gold, pred = read_conlleval(write(tmp_path, "o.txt", "-DOCSTART- -X- NONE B-PER\n\na x NONE NONE\n"),
                                outside="NONE", raw=True)  # fmt: skip
    assert (gold.docstart_tags, pred.docstart_tags) == (("O",), ("B-B-PER",))


# ------------------------------------------------------------------------------------------- conlleval.pl's output
CASES = json.loads((DATA / "cases.json").read_text(encoding="utf-8"))
_HEAD = re.compile(r"processed (\d+) tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.")
_OVERALL = re.compile(r"accuracy:\s*([\d.]+)%; precision:\s*([\d.]+)%; recall:\s*([\d.]+)%; FB1:\s*([\d.]+)")
_TYPE = re.compile(r"\s*(\S+): precision:\s*([\d.]+)%; recall:\s*([\d.]+)%; FB1:\s*([\d.]+)\s+(\d+)")


def conlleval_percent(correct: int, found: int, phrases: int) -> tuple[str, str, str]:
    """Precision, recall and FB1 as conlleval prints them (%6.2f of percentages; 0 where undefined)."""
    p = 100 * correct / found if found else 0.0
    r = 100 * correct / phrases if phrases else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return f"{p:.2f}", f"{r:.2f}", f"{f:.2f}"


def options(case: dict) -> dict:
    out: dict = {"scheme": case["scheme"]}
    argv = list(case["options"])
    while argv:
        flag = argv.pop(0)
        if flag == "-r":
            out["raw"] = True
        elif flag == "-d":
            out["delimiter"] = argv.pop(0)
        elif flag == "-o":
            out["outside"] = argv.pop(0)
    return out


def assert_equal_to_conlleval(got: dict, out: Path) -> None:
    """Every count and figure of conlleval.pl's output ``out`` against our scores ``got``."""
    lines = out.read_text(encoding="utf-8").splitlines()
    tokens, phrases, found, correct = map(int, _HEAD.fullmatch(lines[0]).groups())
    c = got["counts"]
    assert (c["tokens"], c["phrases"], c["found"], c["correct"]) == (tokens, phrases, found, correct)
    if tokens:
        accuracy, precision, recall, fb1 = _OVERALL.fullmatch(lines[1]).groups()
        assert f"{100 * c['correct_tags'] / tokens:.2f}" == accuracy
        assert f"{100 * got['accuracy']:.2f}" == accuracy and got["accuracy"] == c["correct_tags"] / tokens
        assert conlleval_percent(c["correct"], c["found"], c["phrases"]) == (precision, recall, fb1)
        assert got["f1"] == pytest.approx(float(fb1) / 100, abs=5e-5)
    per_type = [_TYPE.fullmatch(line).groups() for line in lines[2 if tokens else 1 :]]
    assert [t[0] for t in per_type] == list(got["per_type"])  # same types, same (sorted) order
    for label, precision, recall, fb1, found_t in per_type:
        ours = got["per_type"][label]
        assert ours["predicted"] == int(found_t)
        assert conlleval_percent(ours["correct"], ours["predicted"], ours["support"]) == (precision, recall, fb1)
        assert ours["f1"] == pytest.approx(float(fb1) / 100, abs=5e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_equal_to_conlleval(name: str) -> None:
    """Every count and figure conlleval.pl printed on the fixture (see tests/data/ner/README.md)."""
    got = score_files(file=DATA / name, **options(CASES[name])).scores
    assert_equal_to_conlleval(got, DATA / name.replace(".txt", ".out"))


@pytest.mark.parametrize("system", ["uh_ritual", "arcada", "drexel_cci"])
def test_wnut17_submissions_equal_conlleval(system: str, tmp_path) -> None:
    """Real data: WNUT 2017 test set and shared-task submissions (CRLF, tabs or spaces), as conlleval.pl scores them."""
    gold, pred = DATA / "wnut17" / "emerging.test.annotated", DATA / "wnut17" / system
    two = score_files(references=gold, predictions=pred)
    assert_equal_to_conlleval(two.scores, DATA / "wnut17" / f"{system}.out")
    assert not two.warnings and len(two.items) == 1287
    rows = zip(gold.read_text(encoding="utf-8").splitlines(), pred.read_text(encoding="utf-8").splitlines())
    merged = tmp_path / "merged.txt"
    merged.write_text("\n".join(f"{g} {p.split()[-1]}" if g.strip() else "" for g, p in rows) + "\n", encoding="utf-8")
    assert score_files(file=merged).scores == two.scores


def test_conlleval_fixtures_cover_the_layout() -> None:
    assert {"-d", "-r", "-o"} <= {flag for case in CASES.values() for flag in case["options"]}
    assert any("-o" in case["options"] and "-r" not in case["options"] for case in CASES.values())
    text = {name: (DATA / name).read_text(encoding="utf-8") for name in CASES}
    marks = {name: [x for x in t.splitlines() if x.startswith("-DOCSTART-")] for name, t in text.items()}
    assert any(x.split()[-2:] != ["O", "O"] for x in marks["docstart_tagged.txt"])  # tagged -DOCSTART- lines
    # -DOCSTART- lines right before and right after a sentence, two in a row, first and last
    assert re.search(r"-DOCSTART- -X- -X- O O\n[^-\n]", text["docstart.txt"])
    assert re.search(r"\n[^-\n][^\n]*\n-DOCSTART-", text["docstart.txt"])
    assert "-DOCSTART- -X- -X- O O\n-DOCSTART-" in text["docstart.txt"]
    assert marks["docstart.txt"][0] == text["docstart.txt"].splitlines()[0] == text["docstart.txt"].splitlines()[-1]
    assert {case["scheme"] for case in CASES.values()} >= {"IOB1", "IOB2", "IOE1", "IOE2"}
    assert any(line.startswith("-X-") for line in (DATA / "tab.txt").read_text(encoding="utf-8").splitlines())


# ------------------------------------------------------------------------------------------- one figure, every path
LABELS = ("PER", "micro", "macro", "weighted", "人名", "GPE-LOC", "é")
ROWS, WIDTH = 6, 8


def vocabulary(scheme: str) -> list[str]:
    return ["O"] + [f"{p}-{t}" for p in PREFIXES[scheme] for t in LABELS]


@st.composite
def tagged_batches(draw, scheme: str | None = None, min_size: int = 0):
    """(scheme, predictions, references): any tags of the scheme, invalid transitions and empty sentences included."""
    scheme = scheme or draw(st.sampled_from(SCHEMES))
    tag = st.sampled_from(vocabulary(scheme))
    pairs = draw(st.lists(st.lists(st.tuples(tag, tag), max_size=WIDTH), min_size=min_size, max_size=ROWS))
    return scheme, [[p for p, _ in s] for s in pairs], [[g for _, g in s] for s in pairs]


def as_ids(batch: list[list[str]], scheme: str) -> tuple[np.ndarray, np.ndarray]:
    index = {t: k for k, t in enumerate(vocabulary(scheme))}
    ids = np.full((ROWS, WIDTH), 1, np.int32)  # padding that would be chunks if the mask were ignored
    mask = np.zeros((ROWS, WIDTH), bool)
    for i, s in enumerate(batch):
        ids[i, : len(s)] = [index[t] for t in s]
        mask[i, : len(s)] = True
    return ids, mask


def _records(prefix, types, p, pm):
    from metametric_jax.tasks.tagging import span_records

    return span_records(prefix[p], types[p], pm)


def _per_type(prefix, types, p, pm, g, n_types: int):
    from metametric_jax.tasks.tagging import device_span_stats

    return device_span_stats(prefix[p], types[p], prefix[g], types[g], pm, n_types=n_types).sum(0)


# the chunker's paths of every scheme: the lookup arrays are arguments, padded to the longest vocabulary (no id reaches
# the padding), so each compiles once for all the schemes rather than once per scheme
_jitted_records = jax.jit(_records)
_jitted_per_type = jax.jit(_per_type, static_argnames="n_types")
_CODES = max(len(vocabulary(s)) for s in SCHEMES)


@functools.cache
def device_paths(scheme: str):
    """Jitted device-native and callback paths of one scheme (traced once: fixed shapes)."""
    import jax.numpy as jnp

    from metametric_jax.tasks.tagging import device_span_stats, tag_codes

    vocab = vocabulary(scheme)
    codes = tag_codes(vocab, scheme)
    prefix, types = jnp.asarray(codes.prefix), jnp.asarray(codes.type)
    padded = [np.pad(a, (0, _CODES - len(vocab))) for a in (codes.prefix, codes.type)]
    metric = span_metric(scheme)

    def native(p, pm, g, gm, weights):
        stats = device_span_stats(prefix[p], types[p], prefix[g], types[g], pm)
        del gm
        return metric.from_stats(stats, weights)

    def decode(example):
        return [vocab[i] for i, m in zip(example["ids"].tolist(), example["mask"].tolist()) if m]

    def callback(p, pm, g, gm, weights):
        return metric.from_model_output({"ids": p, "mask": pm}, {"ids": g, "mask": gm}, weights, decode=decode)

    def records(p, pm):
        return _jitted_records(*padded, p, pm)

    suite = NerMetric(sorted(LABELS), scheme)

    def per_type(p, pm, g):
        return _jitted_per_type(*padded, p, pm, g, n_types=len(codes.labels))

    def suite_callback(p, pm, g, gm, weights):
        return suite.from_model_output({"ids": p, "mask": pm}, {"ids": g, "mask": gm}, weights, decode=decode)

    native, callback, suite_callback = (jax.jit(f) for f in (native, callback, suite_callback))
    return native, callback, records, suite_callback, per_type, codes.labels


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(tagged_batches())
def test_every_path_gives_the_same_counts(batch) -> None:
    """Host score, accumulator suite, per-pair statistics, decode= callback, device-native counts: one figure."""
    scheme, pred, gold = batch
    host = score(pred, gold, scheme=scheme)
    labels = sorted(host["per_type"])
    assert state_report(NerMetric(labels, scheme).from_model_output(pred, gold)) == host
    c = host["counts"]
    counts = (c["correct"], c["found"], c["phrases"])
    pairs = np.array([span_metric(scheme).stats(p, g) for p, g in zip(pred, gold)]).reshape(-1, 3)
    assert tuple(pairs.sum(0).tolist()) == counts
    assert c["correct_tags"] == sum(a == b for p, g in zip(pred, gold) for a, b in zip(p, g))
    if not gold:
        return
    p_ids, p_mask = as_ids(pred, scheme)
    g_ids, g_mask = as_ids(gold, scheme)
    weights = (np.arange(ROWS) < len(gold)).astype(np.float32)
    native, callback, records, suite_callback, per_type, type_names = device_paths(scheme)
    for state in (native(p_ids, p_mask, g_ids, g_mask, weights), callback(p_ids, p_mask, g_ids, g_mask, weights)):
        t = state.totals()
        assert (t["xy"], t["xx"], t["yy"], t["count"]) == (*counts, len(gold))
    suite_state = suite_callback(p_ids, p_mask, g_ids, g_mask, weights)
    assert state_report(suite_state) == score(pred, gold, scheme=scheme, labels=sorted(LABELS))
    device_types = np.asarray(per_type(p_ids, p_mask, g_ids)).astype(int).tolist()
    for name, (matched, found, phrases) in zip(type_names, device_types):
        host_type = host["per_type"].get(name, {"correct": 0, "predicted": 0, "support": 0})
        assert (matched, found, phrases) == (host_type["correct"], host_type["predicted"], host_type["support"])
    # the device chunker gives the host chunker's spans
    rec, keep = records(p_ids, p_mask)
    device = [
        sorted(Span(int(a), int(b), type_names[int(k)]) for (a, b, k), m in zip(r.tolist(), km.tolist()) if m)
        for r, km in zip(np.asarray(rec)[: len(pred)], np.asarray(keep)[: len(pred)])
    ]
    assert device == [sorted(s) for s in extract_batch(pred, scheme)]


@settings(max_examples=30, deadline=None)
@given(tagged_batches(), st.sampled_from([3, "X-PER", "PER", None, ["B-PER"], b"O"]))
def test_every_path_refuses_a_wrong_tag_type_alike(batch, bad) -> None:
    scheme, pred, gold = batch
    pred = [*pred, ["O", bad], [bad]]
    gold = [*gold, ["O", "O"], ["O"]]
    paths = [
        lambda: score(pred, gold, scheme=scheme),
        lambda: NerMetric(["PER"], scheme).from_model_output(pred, gold),
        lambda: span_metric(scheme).from_model_output(pred, gold),
        lambda: span_metric(scheme).stats(pred[-1], gold[-1]),  # a sentence of nothing but the bad tag
    ]
    for path in paths:
        with pytest.raises((TypeError, ValueError)) as err:
            path()
        assert type(err.value) is (ValueError if isinstance(bad, str) else TypeError), bad


@settings(max_examples=40, deadline=None)
@given(tagged_batches())
def test_host_and_device_chunkers_agree_on_random_rows(batch) -> None:
    scheme, pred, _ = batch
    _, _, records, _, _, type_names = device_paths(scheme)
    ids, mask = as_ids(pred, scheme)
    rec, keep = records(ids, mask)
    host = extract_batch(pred, scheme)
    for k in range(ROWS):
        got = [
            Span(int(a), int(b), type_names[int(t)]) for (a, b, t), m in zip(np.asarray(rec[k]).tolist(), keep[k]) if m
        ]
        assert got == (host[k] if k < len(pred) else [])


# ------------------------------------------------------------------------------------------- reader fuzzing
def corrupt(data: bytes, kind: str, at: int) -> bytes:
    lines = data.split(b"\n")
    k = at % len(lines)
    if kind == "drop":
        return b"\n".join(lines[:k] + lines[k + 1 :])
    if kind == "duplicate":
        return b"\n".join(lines[: k + 1] + lines[k:])
    if kind == "truncate":
        return data[: at % len(data)]
    if kind == "flip":
        i = at % len(data)
        return data[:i] + bytes([data[i] ^ (1 << (at % 8))]) + data[i + 1 :]
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "tabs":
        return data.replace(b" ", b"\t")
    raise AssertionError(kind)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["drop", "duplicate", "truncate", "flip", "bom", "crlf", "tabs"]), st.integers(0, 10**6))
def test_corrupted_prediction_file_scores_as_clean_or_fails_with_file_and_line(kind: str, at: int) -> None:
    """Issue 10: never a traceback, never a silently different score for a misaligned pair."""
    import tempfile

    gold, pred = sample_paths()
    clean = score_files(references=gold, predictions=pred).scores
    data = Path(pred).read_bytes()
    bad = corrupt(data, kind, at)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pred.txt"
        path.write_bytes(bad)
        try:
            got = score_files(references=gold, predictions=path).scores
        except InputFormatError as err:
            assert str(err).startswith(f"{path}:") and "\n" not in str(err)
            return
    if kind in ("bom", "crlf", "tabs"):
        assert got == clean
        return
    # a line dropped or duplicated leaves the pair aligned only where it was blank or a -DOCSTART- line
    lines = data.split(b"\n")
    changed = lines[at % len(lines)].strip()
    if kind in ("drop", "duplicate"):
        assert got == clean and (not changed or changed.startswith(b"-DOCSTART-")), changed
    else:  # a cut or flipped tag is a different prediction; the tokens must still be the reference's

        def tokens(raw: bytes) -> list[str]:
            rows = raw.decode("utf-8-sig").split("\n")
            return [x.split()[0] for x in rows if x.strip() and not x.startswith("-DOCSTART-")]

        assert tokens(bad) == tokens(data)


def test_checkpoint_restores_only_into_the_same_configuration() -> None:
    from flax import serialization

    state = NerMetric(["LOC", "PER"]).from_model_output([["B-PER", "O", "B-LOC"]], [["B-PER", "O", "B-ORG"]])
    data = serialization.to_bytes(state)
    assert state_report(serialization.from_bytes(NerMetric(["LOC", "PER"]).empty(), data)) == state_report(state)
    with pytest.raises(ValueError, match="per_type/ORG|keys"):
        serialization.from_bytes(NerMetric(["LOC", "ORG"]).empty(), data)
    with pytest.raises(ValueError, match="span_f1_iob2.*span_f1_iobes"):
        serialization.from_bytes(NerMetric(["LOC", "PER"], "IOBES").empty(), data)
