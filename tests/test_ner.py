"""NER chunking and span metrics against seqeval's default (conlleval-compatible) mode; CoNLL reader."""

from __future__ import annotations

import random

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.conll_ner import check_aligned, read_conll, sample_paths, score_files
from metametric_jax.tasks.ner import (
    SCHEMES,
    Span,
    extract_batch,
    extract_spans,
    ner_metric,
    ner_report,
    normalize_scheme,
    span_metric,
    span_stats,
    state_report,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*ill-defined")

PREFIXES = {
    "IOB1": "BI",
    "IOB2": "BI",
    "IOE1": "IE",
    "IOE2": "IE",
    "IOBES": "BIES",
    "BILOU": "BILU",
}
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
    ours = extract_batch(batch, scheme)
    for tags, spans in zip(batch, ours):
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
    suite = ner_metric(labels, scheme)
    out = suite.from_model_output(pred, gold).compute()
    for lab in labels:
        assert float(out[lab]["precision"]) == pytest.approx(ref[lab]["precision"], rel=1e-6, abs=1e-7)
        assert float(out[lab]["recall"]) == pytest.approx(ref[lab]["recall"], rel=1e-6, abs=1e-7)
        assert float(out[lab]["f1"]) == pytest.approx(ref[lab]["f1-score"], rel=1e-6, abs=1e-7)
        assert float(out[lab]["support"]) == ref[lab]["support"]
    for ours, theirs in (("micro", "micro avg"), ("macro", "macro avg"), ("weighted", "weighted avg")):
        assert float(out[ours]["precision"]) == pytest.approx(ref[theirs]["precision"], rel=1e-6)
        assert float(out[ours]["recall"]) == pytest.approx(ref[theirs]["recall"], rel=1e-6)
        assert float(out[ours]["f1"]) == pytest.approx(ref[theirs]["f1-score"], rel=1e-6)

    report = ner_report(pred, gold, scheme)
    assert set(report) == {"micro", "macro", "per_type"}
    assert sorted(report["per_type"]) == labels
    for lab in labels:
        assert report["per_type"][lab]["f1"] == pytest.approx(ref[lab]["f1-score"], rel=1e-12, abs=1e-15)
        assert report["per_type"][lab]["support"] == ref[lab]["support"]
        assert isinstance(report["per_type"][lab]["support"], int)
    assert report["micro"]["f1"] == pytest.approx(ref["micro avg"]["f1-score"], rel=1e-12)
    assert report["macro"]["precision"] == pytest.approx(ref["macro avg"]["precision"], rel=1e-12)
    assert report["macro"]["f1"] == pytest.approx(ref["macro avg"]["f1-score"], rel=1e-12)


tag_strategy = st.sampled_from(["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC"])


@settings(max_examples=60, deadline=None)
@given(
    gold=st.lists(st.lists(tag_strategy, max_size=10), min_size=1, max_size=6),
    seed=st.integers(0, 2**16),
)
def test_hypothesis_iobes_matches_seqeval(gold: list[list[str]], seed: int) -> None:
    pred = noisy_copy(random.Random(seed), "IOBES", gold, rate=0.4)
    assert extract_batch(pred, "IOBES") == [sorted(seqeval_spans(s)) for s in pred]
    got = span_stats(pred, gold, "IOBES").sum(0)
    n_true = sum(len(get_entities(x)) for x in gold)
    n_pred = sum(len(get_entities(x)) for x in pred)
    n_match = sum(len(set(get_entities(x)) & set(get_entities(y))) for x, y in zip(pred, gold))
    assert got.tolist() == [n_match, n_pred, n_true]
    res = span_metric("IOBES").from_model_output(pred, gold).compute()
    assert float(res["f1"]) == pytest.approx(f1_score(gold, pred), rel=1e-6, abs=1e-7)


def test_span_sets_are_accepted() -> None:
    rng = random.Random(3)
    gold = random_tags(rng, "IOB2", 100)
    pred = noisy_copy(rng, "IOB2", gold)
    gold_sets = [{(s.start, s.end, s.label) for s in seqeval_spans(x)} for x in gold]
    pred_spans = [seqeval_spans(x) + seqeval_spans(x)[:1] for x in pred]  # a duplicate counts once
    expected = span_stats(pred, gold)
    np.testing.assert_array_equal(span_stats(pred_spans, gold_sets), expected)
    np.testing.assert_array_equal(span_stats(pred, gold_sets), expected)
    rep = ner_report(pred_spans, gold, "IOB2")
    ref = classification_report(gold, pred, output_dict=True)
    assert rep["micro"]["f1"] == pytest.approx(ref["micro avg"]["f1-score"], rel=1e-12)


def test_labels_outside_the_fixed_set_count_in_micro_only() -> None:
    gold = [["B-PER", "O", "B-LOC"], ["B-ORG", "I-ORG"]]
    pred = [["B-PER", "O", "B-ORG"], ["B-ORG", "I-ORG"]]
    out = ner_metric(["PER"], "IOB2").from_model_output(pred, gold).compute()
    assert float(out["PER"]["f1"]) == 1.0
    assert float(out["micro"]["f1"]) == pytest.approx(f1_score(gold, pred))
    assert float(out["macro"]["f1"]) == 1.0


def test_absent_types_are_left_out_of_macro() -> None:
    gold = [["B-PER", "O"], ["B-LOC", "I-LOC"]]
    pred = [["B-PER", "O"], ["O", "B-LOC"]]
    out = ner_metric(["LOC", "MISC", "PER"]).from_model_output(pred, gold).compute()
    ref = classification_report(gold, pred, output_dict=True)
    assert "MISC" not in ref
    assert float(out["macro"]["f1"]) == pytest.approx(ref["macro avg"]["f1-score"])
    assert float(out["MISC"]["support"]) == 0.0


# ------------------------------------------------------------------------------------------- accumulator laws
def test_batches_merged_equal_one_batch() -> None:
    rng = random.Random(5)
    gold = random_tags(rng, "IOB2", 120)
    pred = noisy_copy(rng, "IOB2", gold)
    for cls in (span_metric("IOB2"), ner_metric(["LOC", "ORG", "PER"], "IOB2")):
        whole = cls.from_model_output(pred, gold)
        parts = [cls.from_model_output(pred[i : i + 25], gold[i : i + 25]) for i in range(0, 120, 25)]
        merged = cls.empty()
        for part in parts:
            merged = jax.jit(lambda a, b: a.merge(b))(merged, part)
        a, b = whole.compute(), merged.compute()
        leaves_a, leaves_b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
        assert len(leaves_a) == len(leaves_b)
        for x, y in zip(leaves_a, leaves_b):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)
    whole = ner_metric(["LOC", "ORG", "PER"]).from_model_output(pred, gold)
    assert state_report(whole) == ner_report(pred, gold, "IOB2", labels=["LOC", "ORG", "PER"])


def test_same_arguments_same_class() -> None:
    assert span_metric("bio") is span_metric("IOB2")
    assert ner_metric(["PER", "LOC"], "IOB2") is ner_metric(("PER", "LOC"), "iob2")


def test_empty_sentences_and_weights() -> None:
    res = span_metric().from_model_output([[], ["O"]], [[], ["O"]]).compute()
    assert float(res["f1"]) == 0.0  # no spans at all: 0/0 → zero_division, as seqeval
    st_ = span_stats([["B-PER"], ["B-PER"]], [["B-PER"], ["O"]])
    assert st_.tolist() == [[1, 1, 1], [0, 1, 0]]
    res = span_metric().from_model_output([["B-PER"], ["B-PER"]], [["B-PER"], ["O"]], weights=[1.0, 0.0]).compute()
    assert float(res["precision"]) == 1.0


# ------------------------------------------------------------------------------------------- bad input
def test_invalid_prefix_names_tag_position_and_valid_prefixes() -> None:
    with pytest.raises(ValueError, match=r"references: sentence 1, token 2 .*'E-PER'.*IOB2.*'B-', 'I-'"):
        span_stats([["O"], ["O", "O", "O"]], [["O"], ["B-PER", "I-PER", "E-PER"]], "IOB2")
    with pytest.raises(ValueError, match=r"'S-LOC'.*IOE1.*'I-', 'E-'"):
        extract_spans(["S-LOC"], "IOE1")
    with pytest.raises(ValueError, match=r"'BPER'"):
        extract_spans(["BPER"], "IOB2")
    with pytest.raises(ValueError, match=r"'E-ORG'.*BILOU"):
        extract_spans(["E-ORG"], "BILOU")


def test_bad_shapes() -> None:
    with pytest.raises(ValueError, match="sentence 1 .* 2 predicted tags but 3 reference"):
        span_stats([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match="same length|same number"):
        span_metric().from_model_output([["O"]], [["O"], ["O"]])
    with pytest.raises(TypeError, match="Wrap a single sentence"):
        span_stats(["B-PER", "O"], ["B-PER", "O"])
    with pytest.raises(ValueError, match="start < end"):
        span_stats([[(2, 2, "PER")]], [[(0, 1, "PER")]])
    with pytest.raises(ValueError, match="reserved"):
        ner_metric(["micro"])
    with pytest.raises(ValueError, match="duplicated"):
        ner_metric(["PER", "PER"])


# ------------------------------------------------------------------------------------------- CoNLL reader
def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


GOLD = """-DOCSTART- -X- O

EU B-ORG
rejects O
German B-MISC

Peter B-PER
Blackburn I-PER


BRUSSELS B-LOC
"""


def test_reader(tmp_path) -> None:
    path = write(tmp_path, "g.txt", GOLD.replace("rejects O", "rejects\tO"))
    doc = read_conll(path, "IOB2")
    assert doc.tags == [["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"], ["B-LOC"]]
    assert doc.tokens == [["EU", "rejects", "German"], ["Peter", "Blackburn"], ["BRUSSELS"]]
    assert doc.lines == [[3, 4, 5], [7, 8], [11]]
    tags_only = read_conll(write(tmp_path, "p.txt", "B-PER\nO\n\nO\n"))
    assert tags_only.tokens is None and tags_only.tags == [["B-PER", "O"], ["O"]]


def test_reader_bad_input(tmp_path) -> None:
    with pytest.raises(InputFormatError, match=r"g\.txt:4: expected 2 whitespace-separated columns .* found 3"):
        read_conll(write(tmp_path, "g.txt", GOLD.replace("rejects O", "rejects X O")))
    with pytest.raises(InputFormatError, match=r"g\.txt:7: tag 'S-PER' is not valid in scheme IOB2"):
        read_conll(write(tmp_path, "g.txt", GOLD.replace("Peter B-PER", "Peter S-PER")), "IOB2")
    gold = write(tmp_path, "gold.txt", GOLD)
    with pytest.raises(
        InputFormatError,
        match=r"p\.txt:5: sentence 2 has 3 tokens \(lines 5-7\).*gold\.txt has 2 "
        r"tokens \(lines 7-8\)",
    ):
        score_files(gold, write(tmp_path, "p.txt", "EU B-ORG\nrejects O\nGerman B-MISC\n\nPeter O\nx O\ny O\n"))
    with pytest.raises(
        InputFormatError,
        match=r"p\.txt:5: token 'Petra' .* differs from token 'Peter' at .*gold"
        r"\.txt:7",
    ):
        score_files(gold, write(tmp_path, "p.txt", "EU O\nrejects O\nGerman O\n\nPetra O\nBlackburn O\n\nBRUSSELS O\n"))
    with pytest.raises(InputFormatError, match=r"2 sentences but .*gold\.txt has 3; sentence 3 \(line 11 of .*gold"):
        score_files(gold, write(tmp_path, "p.txt", "O\nO\nO\n\nO\nO\n"))
    with pytest.raises(InputFormatError, match=r"p\.txt:"):
        score_files(gold, write(tmp_path, "p.txt", "O\nO\nE-PER\n\nO\nO\n\nO\n"), "IOB2")


def test_score_files_matches_seqeval(tmp_path) -> None:
    gold, pred = sample_paths()

    def parse(path: str) -> list[list[str]]:  # an independent minimal parse of the sample
        out, cur = [], []
        for line in open(path, encoding="utf-8"):
            if not line.strip() or line.startswith("-DOCSTART-"):
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(line.split()[-1])
        return out + ([cur] if cur else [])

    g, p = parse(gold), parse(pred)
    assert len(g) >= 30
    ref = classification_report(g, p, output_dict=True)
    rep = score_files(gold, pred)
    assert rep["micro"] == pytest.approx(
        {
            "precision": ref["micro avg"]["precision"],
            "recall": ref["micro avg"]["recall"],
            "f1": ref["micro avg"]["f1-score"],
        }
    )
    assert rep["macro"]["f1"] == pytest.approx(ref["macro avg"]["f1-score"])
    assert set(rep["per_type"]) == {"LOC", "MISC", "ORG", "PER"}
    for lab, r in rep["per_type"].items():
        assert r == pytest.approx(
            {
                "precision": ref[lab]["precision"],
                "recall": ref[lab]["recall"],
                "f1": ref[lab]["f1-score"],
                "support": ref[lab]["support"],
            }
        )
    # tags-only prediction file: same scores
    lines = open(pred, encoding="utf-8").read().splitlines()
    tags_only = write(
        tmp_path,
        "tags.txt",
        "".join(
            ("-DOCSTART-" if x.startswith("-DOCSTART-") else x.split()[-1] if x.strip() else "") + "\n" for x in lines
        ),
    )
    assert score_files(gold, tags_only) == rep
    check_aligned(read_conll(gold), read_conll(tags_only))
