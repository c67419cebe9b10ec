"""ROUGE and the multiset F-score against Google's rouge-score 0.1.2, NLTK's Porter stemmer and hand-worked examples.

Real data: 60 GUM documents' summaries (human and model-written, 5 per document) and lead-3 baselines, see
tests/data/rouge/README.md; the Snowball project's Porter test vocabulary (42,603 words).
"""

from __future__ import annotations

import doctest
import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.stem.porter import PorterStemmer
from rouge_score import rouge_scorer
from rouge_score import tokenize as rs_tokenize

from metametric_jax import dsl, make_metric
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.text import (
    MultisetF1,
    Rouge1,
    Rouge2,
    RougeL,
    RougeLsum,
    RougeMetric,
    figures,
    lcs_indices,
    lcs_length,
    porter_stem,
    rouge_metric,
    rouge_n,
    rouge_stats,
    score,
    score_files,
    summary_lcs_hits,
    tokenize,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "rouge"
TYPES = ["rouge1", "rouge2", "rouge3", "rouge4", "rougeL", "rougeLsum"]
NLTK = PorterStemmer()


def gum() -> list[dict]:
    with open(DATA / "gum_summaries.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def reference_figures(predictions, references, types, use_stemmer=False, multi=False) -> dict[str, np.ndarray]:
    """rouge-score's per-pair (precision, recall, fmeasure), ``{type: (n, 3)}``."""
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer)
    rows = [scorer.score_multi(r, p) if multi else scorer.score(r, p) for p, r in zip(predictions, references)]
    return {k: np.array([[s[k].precision, s[k].recall, s[k].fmeasure] for s in rows]).reshape(-1, 3) for k in types}


def assert_equal_to_rouge_score(predictions, references, types=TYPES, use_stemmer=False, multi=False) -> None:
    expected = reference_figures(predictions, references, types, use_stemmer, multi)
    stats = rouge_stats(predictions, references, types, use_stemmer=use_stemmer, multi_reference=multi)
    means = score(predictions, references, types=types, use_stemmer=use_stemmer, multi_reference=multi)
    for kind in types:
        np.testing.assert_allclose(figures(stats[kind]), expected[kind], rtol=0, atol=1e-12, err_msg=kind)
        for j, name in enumerate(("precision", "recall", "f1")):
            assert means[kind][name] == pytest.approx(float(np.mean(expected[kind][:, j])), abs=1e-12), (kind, name)


# ------------------------------------------------------------------------------------------------------ Porter stemmer
def test_porter_stem_equals_nltk_on_the_snowball_porter_vocabulary() -> None:
    with gzip.open(DATA / "porter_voc.txt.gz", "rt", encoding="utf-8") as handle:
        words = handle.read().split()
    assert len(words) == 42603
    differ = [(w, porter_stem(w), NLTK.stem(w)) for w in words if porter_stem(w) != NLTK.stem(w)]
    assert differ == []


def test_porter_stem_equals_nltk_on_the_words_of_the_gum_summaries() -> None:
    words = {t for doc in gum() for s in doc["summaries"] for t in s["text"].split() + tokenize(s["text"])}
    assert len(words) > 2000
    assert [w for w in sorted(words) if porter_stem(w) != NLTK.stem(w)] == []


_SUFFIXES = (
    "sses ies ss s eed ied ed ing at bl iz y ational tional enci anci izer bli alli entli eli ousli ization ation ator "
    "alism iveness fulness ousness aliti iviti biliti fulli logi icate ative alize iciti ical ful ness al ance ence er "
    "ic able ible ant ement ment ent ion ou ism ate iti ous ive ize e ll"
).split()


@settings(max_examples=3000, deadline=None)
@given(st.text("aeiouyybcdlstwxzgr0", max_size=6), st.lists(st.sampled_from(_SUFFIXES), max_size=3))
def test_porter_stem_equals_nltk_on_generated_words(stem: str, suffixes: list[str]) -> None:
    word = stem + "".join(suffixes)
    assert porter_stem(word) == NLTK.stem(word)


def test_porter_stem_revisions_and_irregular_forms() -> None:
    cases = {
        "dies": "die",  # four-letter -ies
        "flies": "fli",
        "died": "die",  # four-letter -ied
        "spied": "spi",
        "enjoy": "enjoy",  # y -> i only after a consonant
        "happy": "happi",
        "dying": "die",  # irregular forms
        "skies": "sky",
        "news": "news",
        "geology": "geolog",  # logi -> log, the stem measured with its l
        "Caresses": "caress",  # lower-cased first
    }
    assert {w: porter_stem(w) for w in cases} == cases


# ----------------------------------------------------------------------------------------------------------- tokens
_WORDS = [
    "The", "cat", "cats", "sat", "running", "runs", "ran", "runner", "naïve", "İstanbul", "Straße", "\u212aelvin",
    "co-operation", "3.14", "2004", "it's", "U.S.", "...", "!", "—", "日本語", "e-mail", "__init__", "generalizations",
    "happily", "flies", "\n", "\n\n", " \n", "\t",
]  # fmt: skip

texts = st.lists(st.sampled_from(_WORDS), max_size=30).map(" ".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(texts, st.booleans())
def test_tokenize_equals_rouge_score_tokenizer(text: str, use_stemmer: bool) -> None:
    assert tokenize(text, use_stemmer=use_stemmer) == rs_tokenize.tokenize(text, NLTK if use_stemmer else None)


def test_tokenize_examples_and_token_lists() -> None:
    assert tokenize("Hello, World! It's 2004.") == ["hello", "world", "it", "s", "2004"]
    assert tokenize("naïve İstanbul") == ["na", "ve", "i", "stanbul"]  # non-ASCII letters separate, as rouge-score
    assert tokenize(["Already", "tokenized", "!"]) == ["Already", "tokenized", "!"]
    assert tokenize(["Running", "cats", "ran"], use_stemmer=True) == ["run", "cat", "ran"]
    assert RougeL.stats("a b  c d", "a c b d") == (3.0, 4.0, 4.0)
    assert Rouge1.stats("X, y!", ["x", "z"]) == (1.0, 2.0, 2.0)


# ------------------------------------------------------------------------------------- equality with rouge-score
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=6), st.booleans())
def test_rouge_equals_rouge_score_on_generated_texts(pairs: list[tuple[str, str]], use_stemmer: bool) -> None:
    predictions, references = [p for p, _ in pairs], [r for _, r in pairs]
    assert_equal_to_rouge_score(predictions, references, use_stemmer=use_stemmer)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(texts, st.lists(texts, min_size=1, max_size=4)), min_size=1, max_size=5), st.booleans())
def test_multi_reference_equals_score_multi_on_generated_texts(pairs, use_stemmer: bool) -> None:
    predictions, references = [p for p, _ in pairs], [r for _, r in pairs]
    assert_equal_to_rouge_score(predictions, references, use_stemmer=use_stemmer, multi=True)


def _sentences(rng: random.Random, vocab: int, count: int) -> str:
    return "\n".join(" ".join(f"w{rng.randrange(vocab)}" for _ in range(rng.randint(0, 12))) for _ in range(count))


@pytest.mark.parametrize("vocab", [2, 4, 10, 40])
def test_rouge_lsum_equals_rouge_score_with_many_ties(vocab: int) -> None:
    rng = random.Random(vocab)
    predictions = [_sentences(rng, vocab, rng.randint(0, 5)) for _ in range(300)]
    references = [_sentences(rng, vocab, rng.randint(0, 5)) for _ in range(300)]
    assert_equal_to_rouge_score(predictions, references, ["rougeL", "rougeLsum", "rouge2"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=25), st.lists(st.integers(0, 4), max_size=25))
def test_lcs_indices_equal_rouge_score_backtracking(ref: list[int], can: list[int]) -> None:
    assert lcs_indices(ref, can) == rouge_scorer.lcs_ind(ref, can)
    assert len(lcs_indices(ref, can)) == lcs_length(ref, can)


def test_summary_level_lcs_example_of_lin_2004() -> None:
    # Lin (2004) §3.2: r = w1 w2 w3 w4 w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5; the union LCS is w1 w2 w3 w5.
    ref = [["w1", "w2", "w3", "w4", "w5"]]
    cands = [["w1", "w2", "w6", "w7", "w8"], ["w1", "w3", "w8", "w9", "w5"]]
    assert summary_lcs_hits(ref, cands) == 4
    s = score(["w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5"], ["w1 w2 w3 w4 w5"], types=["rougeLsum"])["rougeLsum"]
    assert s["recall"] == pytest.approx(4 / 5) and s["precision"] == pytest.approx(4 / 10)


# ------------------------------------------------------------------------------------------------- real summaries
@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_equals_rouge_score_on_gum_summaries(use_stemmer: bool) -> None:
    docs = gum()
    references = [d["summaries"][0]["text"] for d in docs]
    for k in range(1, 5):  # each model's summary against the first human summary
        predictions = [d["summaries"][k]["text"] for d in docs]
        assert_equal_to_rouge_score(predictions, references, use_stemmer=use_stemmer)
    lead3 = [d["lead3"] for d in docs]  # multi-sentence predictions, and as multi-sentence references
    assert_equal_to_rouge_score(lead3, references, use_stemmer=use_stemmer)
    assert_equal_to_rouge_score(references, lead3, use_stemmer=use_stemmer)


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_multi_reference_equals_score_multi_on_gum_summaries(use_stemmer: bool) -> None:
    docs = gum()
    references = [[s["text"] for s in d["summaries"][:3]] + [d["lead3"]] for d in docs]
    for k in (3, 4):
        predictions = [d["summaries"][k]["text"] for d in docs]
        assert_equal_to_rouge_score(predictions, references, use_stemmer=use_stemmer, multi=True)


def test_gum_headline_figures() -> None:
    docs = gum()
    predictions = [d["summaries"][4]["text"] for d in docs]
    references = [d["summaries"][0]["text"] for d in docs]
    ours = score(predictions, references)
    theirs = reference_figures(predictions, references, ["rouge1", "rougeL"])
    assert ours["rouge1"]["f1"] == pytest.approx(float(theirs["rouge1"][:, 2].mean()), abs=1e-12)
    assert ours["rougeL"]["f1"] == pytest.approx(float(theirs["rougeL"][:, 2].mean()), abs=1e-12)
    # whitespace splitting (the old behaviour) misses "word," = "word" and "The" = "the": the figure moves
    split = score([p.split() for p in predictions], [r.split() for r in references])
    assert split["rouge1"]["f1"] < ours["rouge1"]["f1"] - 0.02


# -------------------------------------------------------------------------------------------------- accumulators
def test_rouge_metric_suite_equals_score() -> None:
    docs = gum()
    predictions = [d["lead3"] for d in docs]
    references = [[d["summaries"][0]["text"], d["summaries"][1]["text"]] for d in docs]
    for use_stemmer in (False, True):
        expected = score(predictions, references, use_stemmer=use_stemmer, multi_reference=True)
        suite = RougeMetric(use_stemmer=use_stemmer, multi_reference=True)
        state = suite.empty()
        for i in range(0, len(docs), 7):
            state = state.merge(suite.from_model_output(predictions[i : i + 7], references[i : i + 7]))
        result = state.compute()
        for kind, figs in expected.items():
            for name, value in figs.items():
                assert float(result[kind][f"macro_{name}"]) == pytest.approx(value, abs=1e-6), (kind, name)
        stats = rouge_stats(predictions, references, use_stemmer=use_stemmer, multi_reference=True)
        for kind, s in stats.items():
            hit, n_pred, n_ref = s.sum(0)
            assert float(result[kind]["precision"]) == pytest.approx(hit / n_pred, abs=1e-6)
            assert float(result[kind]["recall"]) == pytest.approx(hit / n_ref, abs=1e-6)


@pytest.mark.parametrize("kind", ["rouge1", "rouge2", "rouge3", "rouge5", "rougeL", "rougeLsum"])
@pytest.mark.parametrize("use_stemmer, multi_reference", [(False, False), (True, True)])
def test_metric_class_docstring_examples_run(kind: str, use_stemmer: bool, multi_reference: bool) -> None:
    metric = rouge_metric(kind, use_stemmer=use_stemmer, multi_reference=multi_reference)
    assert "Lin" in metric.__doc__ and ".. math::" in metric.__doc__
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(metric, kind, globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False) == (0, 2)


def test_metric_classes_are_cached_per_configuration() -> None:
    assert RougeMetric("rouge1,rougeL") is RougeMetric(["rouge1", "rougeL"])
    assert RougeMetric("rouge1") is not RougeMetric("rouge1", use_stemmer=True)
    assert rouge_n(1) is Rouge1 and rouge_metric("rougeLsum") is RougeLsum
    assert rouge_metric("rougeL", use_stemmer=True) is not RougeL


def test_single_type_metrics_equal_rouge_score() -> None:
    docs = gum()
    predictions = [d["lead3"] for d in docs]
    references = [d["summaries"][0]["text"] for d in docs]
    expected = reference_figures(predictions, references, ["rouge1", "rouge2", "rougeL", "rougeLsum"])
    for kind, metric in (("rouge1", Rouge1), ("rouge2", Rouge2), ("rougeL", RougeL), ("rougeLsum", RougeLsum)):
        per_pair = [metric.score(p, r) for p, r in zip(predictions, references)]
        np.testing.assert_allclose(per_pair, expected[kind][:, 2], atol=1e-12)
        result = metric.from_model_output(predictions, references).compute()
        assert float(result["macro_f1"]) == pytest.approx(expected[kind][:, 2].mean(), abs=1e-6)


def _random_tokens(seed: int, n: int, vocab: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    preds = [[rng.choice(words) for _ in range(rng.randint(0, 30))] for _ in range(n)]
    refs = [[rng.choice(words) for _ in range(rng.randint(0, 30))] for _ in range(n)]
    return preds, refs


def test_rouge_statistics_are_the_library_matching_similarities() -> None:
    preds, refs = _random_tokens(5, 60, 5)
    lcs = make_metric(dsl.sequence_matching(dsl.discrete()), "f1", empty_score=0.0)
    np.testing.assert_array_equal(RougeL.batch_stats(preds, refs), lcs.batch_stats(preds, refs))
    bigrams = make_metric(dsl.preprocess(dsl.set_matching(dsl.discrete()), pred=lambda t: list(zip(t, t[1:]))), "f1")
    np.testing.assert_array_equal(Rouge2.batch_stats(preds, refs), bigrams.batch_stats(preds, refs))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=90), st.lists(st.integers(0, 5), max_size=90))
def test_bit_parallel_lcs_equals_the_library_sequence_matching(a: list[int], b: list[int]) -> None:
    expected = dsl.sequence_matching(dsl.discrete()).score(a, b)
    assert lcs_length(a, b) == expected == lcs_length(b, a)


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    preds, refs = _random_tokens(8, 12, 5)
    for metric in (Rouge1, Rouge2, RougeL, RougeLsum, MultisetF1):
        check_accumulator_laws(metric, preds, refs)


def test_bad_input_is_rejected() -> None:
    with pytest.raises(TypeError, match="token sequence"):
        RougeL.stats(3, ["a"])
    with pytest.raises(ValueError, match="positive integer"):
        rouge_n(0)
    with pytest.raises(ValueError, match="unknown ROUGE type 'rougeX'"):
        score(["a"], ["a"], types="rouge1,rougeX")
    with pytest.raises(ValueError, match="same length"):
        score(["a"], [])
    with pytest.raises(ValueError, match="non-empty list of references"):
        score(["a"], ["a"], multi_reference=True)
    with pytest.raises(TypeError, match="use_stemer"):
        score(["a"], ["a"], use_stemer=True)


# --------------------------------------------------------------------------------------------------------- files
def _write(path: Path, lines: list[str], jsonl: bool = False, bom: bool = False, crlf: bool = False) -> Path:
    body = [json.dumps(x, ensure_ascii=False) if jsonl else x for x in lines]
    end = "\r\n" if crlf else "\n"
    path.write_bytes(("\ufeff" if bom else "").encode() + "".join(x + end for x in body).encode("utf-8"))
    return path


def test_score_files_equals_score_and_rouge_score(tmp_path: Path) -> None:
    docs = gum()
    preds = [d["lead3"] for d in docs]
    refs1 = [d["summaries"][0]["text"] for d in docs]
    refs2 = [d["summaries"][1]["text"] for d in docs]
    p = _write(tmp_path / "pred.jsonl", preds, jsonl=True, bom=True, crlf=True)
    r1 = _write(tmp_path / "ref1.txt", refs1, crlf=True)
    r2 = _write(tmp_path / "ref2.jsonl", refs2, jsonl=True)
    report = score_files(predictions=p, references=[r1, r2], use_stemmer=True)
    assert report.scores == score(preds, [list(x) for x in zip(refs1, refs2)], use_stemmer=True, multi_reference=True)
    expected = reference_figures(preds, list(zip(refs1, refs2)), ["rougeLsum"], use_stemmer=True, multi=True)
    assert report.scores["rougeLsum"]["f1"] == pytest.approx(float(expected["rougeLsum"][:, 2].mean()), abs=1e-12)
    assert len(report.items) == len(docs) and report.items[0]["id"] == 1 and report.warnings == []
    single = score_files(predictions=p, references=r1, types="rougeL")
    assert single.scores == score(preds, refs1, types=["rougeL"])


def test_score_files_errors_name_file_and_line(tmp_path: Path) -> None:
    p = _write(tmp_path / "pred.txt", ["a b", "c"])
    short = _write(tmp_path / "ref.txt", ["a b"])
    with pytest.raises(InputFormatError, match=r"ref\.txt:2: expected 2 examples, one per line, as in .*pred\.txt"):
        score_files(predictions=p, references=short)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"fine"\n{"text": 1}\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:2: expected a JSON string .*found a JSON dict"):
        score_files(predictions=bad, references=p)
    bad.write_text('"fine"\n"unterminated\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"bad\.jsonl:2: expected a JSON string .*invalid JSON"):
        score_files(predictions=bad, references=p)
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"ok\nna\xefve\n")
    with pytest.raises(InputFormatError, match=r"latin1\.txt:2: expected UTF-8 text; found the byte 0xef"):
        score_files(predictions=latin, references=p)
    with pytest.raises(TypeError):
        score_files(p, p)  # type: ignore[misc]  # keyword-only


def test_score_files_of_empty_files_warns(tmp_path: Path) -> None:
    empty = _write(tmp_path / "empty.txt", [])
    report = score_files(predictions=empty, references=empty, types="rouge1")
    assert report.scores == {"rouge1": {"precision": 0.0, "recall": 0.0, "f1": 0.0}}
    assert report.items == [] and "holds no examples" in report.warnings[0]


# ---------------------------------------------------------------------------------------------- multiset F-score
def test_multiset_f_score_sentence_example() -> None:
    pred = "a mouse and a cat chase the mouse".split()
    ref = "the mouse and the cat chase a second mouse".split()
    result = MultisetF1.from_model_output([pred], [ref]).compute()
    assert float(result["precision"]) == pytest.approx(7 / 8, abs=1e-6)
    assert float(result["recall"]) == pytest.approx(7 / 9, abs=1e-6)
    assert float(result["f1"]) == pytest.approx(2 * 7 / 17, abs=1e-6)


def test_multiset_f_score_is_micro_over_a_corpus() -> None:
    preds = [["a", "a", "b"], ["c"], ["d", "e"]]
    refs = [["a", "b", "b"], ["c", "c", "c", "c"], ["x"]]
    result = MultisetF1.from_model_output(preds, refs).compute()
    # hits 2 + 1 + 0 = 3, predicted 3 + 1 + 2 = 6, reference 3 + 4 + 1 = 8
    assert float(result["precision"]) == pytest.approx(3 / 6, abs=1e-6)
    assert float(result["recall"]) == pytest.approx(3 / 8, abs=1e-6)
    assert float(result["macro_precision"]) == pytest.approx((2 / 3 + 1 + 0) / 3, abs=1e-6)
