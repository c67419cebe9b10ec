"""``state_report``: every task's accumulator state read through the task's one read-out, as ``score`` reads it.

For each task, on the bundled sample and on small generated inputs, the examples are fed to the accumulator in
batches, merged in three orders (forward, backward, as a tree): ``state_report`` of each merged state gives
``score``'s figure at every path of the read-out, bit for bit where the state's sums are exact (integer counts) and
to 1e-13 where the task sums fractions (documented in each module), and ``compute()``, the jittable float32 twin,
gives the report's figures to float32 rounding wherever it has them.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import jax
import numpy as np
import pytest
from amr_graphs import random_pairs

from metametric_jax.intervals import flatten
from metametric_jax.tasks import amr, constituency, coref, dependency, ie, ner, ranking, rouge, text
from metametric_jax.tasks.ner import Span
from metametric_jax.tasks.readers.conll import read_conll
from metametric_jax.tasks.readers.ptb import read_trees

SAMPLE = resources.files("metametric_jax") / "data"

_merge = jax.jit(lambda a, b: a.merge(b))  # one compilation per accumulator class


@dataclasses.dataclass
class Case:
    """Examples of one task, the accumulator class that takes them, and what ``score`` gives on them."""

    cls: Any
    predictions: list[Any]
    references: list[Any]
    score: Mapping[str, Any]
    report: Callable[[Any], Mapping[str, Any]]
    twin: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    exact: Callable[[str], bool] = lambda path: True


def _path(name: str) -> str:
    return str(SAMPLE / name)


def _paths(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a/b": leaf}`` of a nested dict of (JAX) scalars."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            out.update(_paths(value, f"{prefix}{key}/"))
        else:
            out[prefix + key] = value
    return out


# ------------------------------------------------------------------------------------------------------------- ner
_TYPES = ("LOC", "MISC", "ORG", "PER")


def _random_tags(rng: random.Random, n: int) -> list[list[str]]:
    out = []
    for _ in range(n):
        tags, i, length = [], 0, rng.randint(0, 12)
        while i < length:
            if rng.random() < 0.4:
                t = rng.choice(_TYPES)
                span = rng.randint(1, 3)
                tags += [f"B-{t}"] + [f"I-{t}"] * (span - 1)
                i += span
            else:
                tags.append("O")
                i += 1
        out.append(tags)
    return out


def _noisy(rng: random.Random, batch: list[list[str]]) -> list[list[str]]:
    out = []
    for tags in batch:
        new = []
        for tag in tags:
            r = rng.random()
            if r < 0.1:
                tag = "O"
            elif r < 0.2:
                tag = f"{rng.choice('BI')}-{rng.choice(_TYPES)}"
            new.append(tag)
        out.append(new)
    return out


def _ner_twin(labels: tuple[str, ...]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def twin(out: Mapping[str, Any]) -> dict[str, Any]:
        got = {
            f"{avg}/{k}": out[avg][k] for avg in ("micro", "macro", "weighted") for k in ("precision", "recall", "f1")
        }
        got["f1"], got["accuracy"] = out["micro"]["f1"], out["accuracy"]
        for label in labels:
            got.update({f"per_type/{label}/{k}": out["per_type"][label][k] for k in ("precision", "recall", "f1")})
        return got

    return twin


def ner_case(source: str) -> Case:
    if source == "sample":
        gold, pred = (read_conll(p, "IOB2").tags for p in ner.sample_paths())
        labels = tuple(sorted(ner.score(pred, gold)["per_type"]))
    else:
        rng = random.Random(1)
        gold = _random_tags(rng, 40)
        pred = _noisy(rng, gold)
        labels = ("PER", "LOC", "ORG")  # MISC spans count in the overall figures only
    host = ner.score(pred, gold, labels=labels)
    return Case(ner.NerMetric(labels), pred, gold, host, ner.state_report, _ner_twin(labels))


# ----------------------------------------------------------------------------------------------------------- coref
def _clusters(rng: random.Random, n_tokens: int) -> list[list[tuple[int, int]]]:
    spans = sorted({(s, min(n_tokens - 1, s + rng.choice((0, 0, 1)))) for s in rng.sample(range(n_tokens), 6)})
    rng.shuffle(spans)
    out: list[list[tuple[int, int]]] = []
    for span in spans:
        if out and rng.random() < 0.5:
            rng.choice(out).append(span)
        else:
            out.append([span])
    return out


def _coref_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    got = {f"{m}/{k}": out[m][k] for m in coref.METRICS for k in ("recall", "precision", "f1")}
    got["conll/f1"] = out["conll"]["f1"]
    return got


def coref_case(source: str) -> Case:
    if source == "sample":
        responses, keys, _, _ = coref.read_files(
            predictions=_path("coref/sample.response"), references=_path("coref/sample.key")
        )
    else:
        rng = random.Random(2)
        keys = [coref.CorefDocument.from_clusters(_clusters(rng, 12)) for _ in range(10)]
        responses = [coref.CorefDocument.from_clusters(_clusters(rng, 12)) for _ in range(10)]
    host = coref.score(responses, keys)

    def exact(path: str) -> bool:  # integer counts; B³, CEAF-e and LEA sum fractions (so CoNLL)
        return path.split("/")[0] in {"muc", "ceafm", "blanc", "mentions"}

    return Case(coref.CorefMetric, responses, keys, host, coref.state_report, _coref_twin, exact)


# ------------------------------------------------------------------------------------------------------------- amr
def _prf_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    return {k: out[k] for k in ("precision", "recall", "f1")}


def amr_case(source: str) -> Case:
    if source == "sample":
        pred, gold, _ = amr.read_files(predictions=_path("amr/pred.txt"), references=_path("amr/gold.txt"))
    else:
        pred, gold = (list(x) for x in zip(*random_pairs(3, 12, 8)))
    return Case(amr.SmatchMetric, pred, gold, amr.score(pred, gold), amr.state_report, _prf_twin)


# ------------------------------------------------------------------------------------------------------ dependency
def _conllu(sentences: list[list[tuple[str, str, int, str]]]) -> str:
    lines = []
    for k, words in enumerate(sentences, start=1):
        lines.append(f"# sent_id = s{k}")
        lines += [f"{i}\t{f}\t{f}\t{u}\t_\t_\t{h}\t{r}\t_\t_" for i, (f, u, h, r) in enumerate(words, start=1)]
        lines.append("")
    return "\n".join(lines) + "\n"


def _dependency_corpus(seed: int, n: int) -> tuple[list[Any], list[Any]]:
    rng = random.Random(seed)
    gold, pred = [], []
    for _ in range(n):
        size = rng.randint(1, 8)
        root = rng.randint(1, size)
        words = []
        for i in range(1, size + 1):  # a head is the root or an earlier word: a tree
            head = 0 if i == root else rng.choice([root, *(j for j in range(1, i) if j != root)])
            rel = "root" if i == root else rng.choice(["nsubj", "obj", "det", "case"])
            words.append((f"w{rng.randint(0, 20)}", rng.choice(["NOUN", "VERB", "ADP", "PUNCT"]), head, rel))
        gold.append(words)
        pred.append(
            [
                (
                    f,
                    rng.choice(["NOUN", "VERB"]) if rng.random() < 0.3 else u,
                    root if h and rng.random() < 0.3 else h,
                    r,
                )
                for f, u, h, r in words
            ]
        )
    return dependency.parse_conllu(_conllu(pred)), dependency.parse_conllu(_conllu(gold))


def _dependency_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in _paths(out["scores"]).items()}


def dependency_case(source: str) -> Case:
    """Each reference sentence's counts of a corpus aligned at once (``SentenceCountsMetric``)."""
    if source == "sample":
        pred = dependency.read_conllu(_path("parsing/pred.conllu"))
        gold = dependency.read_conllu(_path("parsing/gold.conllu"))
    else:
        pred, gold = _dependency_corpus(4, 24)
    counts = dependency.sentence_counts(pred, gold)
    cls = dependency.SentenceCountsMetric()
    host = dependency.score(pred, gold)
    return Case(cls, list(counts), [None] * len(counts), host, dependency.state_report, _dependency_twin)


def dependency_documents_case(source: str) -> Case:
    """``DependencyMetric`` on sentence examples (the sample) or on documents of several sentences (generated)."""
    if source == "sample":
        pred = dependency.read_conllu(_path("parsing/pred.conllu"))
        gold = dependency.read_conllu(_path("parsing/gold.conllu"))
        examples_pred, examples_gold = list(pred), list(gold)
    else:
        pred, gold = _dependency_corpus(5, 30)
        cuts = [0, 4, 5, 11, 19, 22, 30]
        examples_pred = [pred[a:b] for a, b in zip(cuts, cuts[1:])]
        examples_gold = [gold[a:b] for a, b in zip(cuts, cuts[1:])]
    host = dependency.score(pred, gold)
    cls = dependency.DependencyMetric()
    return Case(cls, examples_pred, examples_gold, host, dependency.state_report, _dependency_twin)


# ---------------------------------------------------------------------------------------------------- constituency
def _tree(rng: random.Random, words: list[tuple[str, str]], label: str = "S") -> str:
    if len(words) == 1 and rng.random() < 0.7:
        tag, word = words[0]
        return f"({tag} {word})"
    cuts = sorted(rng.sample(range(1, len(words)), min(len(words) - 1, rng.randint(1, 2)))) if len(words) > 1 else []
    parts = [words[a:b] for a, b in zip([0, *cuts], [*cuts, len(words)])]
    inner = " ".join(_tree(rng, part, rng.choice(["NP", "VP", "PP", "ADVP", "PRT"])) for part in parts)
    return f"({label} {inner})"


def _constituency_corpus(seed: int, n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    gold, pred = [], []
    for k in range(n):
        words = [
            (rng.choice(["NN", "VB", "DT", "IN", "RP"]), f"w{rng.randint(0, 9)}") for _ in range(rng.randint(1, 9))
        ]
        gold.append(_tree(rng, words))
        tags = [(rng.choice(["NN", "VB"]) if rng.random() < 0.2 else t, w) for t, w in words]
        pred.append("" if k == 3 else _tree(rng, tags[:-1] if k == 5 and len(tags) > 1 else tags))  # skipped, error
    return pred, gold


_CONSTITUENCY_TWIN = (
    ("brackets", "precision", "precision"),
    ("brackets", "recall", "recall"),
    ("brackets", "f1", "f1"),
    ("tagging", "precision", "tagging_accuracy"),
    ("complete_match", "precision", "complete_match"),
    ("crossing", "precision", "average_crossing"),
    ("no_crossing", "precision", "no_crossing"),
    ("two_or_less_crossing", "precision", "two_or_less_crossing"),
)


def _constituency_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    got = {}
    for part, suffix in (("all", ""), ("len40", "_len40")):
        for member, key, figure in _CONSTITUENCY_TWIN:
            got[f"{part}/{figure}"] = out[member + suffix][key]
    return got


def _constituency_inputs(source: str) -> tuple[list[str], list[str], Any]:
    if source == "sample":
        pred = [str(t) for t in read_trees(_path("parsing/pred.mrg"))]
        gold = [str(t) for t in read_trees(_path("parsing/gold.mrg"))]
        return pred, gold, constituency.COLLINS
    pred, gold = _constituency_corpus(6, 24)
    return pred, gold, constituency.COLLINS._replace(cutoff_len=5)  # len40: sentences of <= 5 words


def constituency_case(source: str) -> Case:
    pred, gold, params = _constituency_inputs(source)
    host = constituency.score(pred, gold, params=params)
    cls = constituency.ConstituencyMetric(params)
    return Case(cls, pred, gold, host, constituency.state_report, _constituency_twin)


def constituency_sentences_case(source: str) -> Case:
    pred, gold, params = _constituency_inputs(source)
    counts = constituency.evalb_counts(constituency.parse_bank(pred), constituency.parse_bank(gold), params)
    rows = constituency.sentence_stats(counts, params)
    examples = [{k: v[i] for k, v in rows.items()} for i in range(len(pred))]
    host = constituency.score(pred, gold, params=params)
    cls = constituency.SentenceStatsMetric(params)
    return Case(cls, examples, [None] * len(examples), host, constituency.state_report, _constituency_twin)


# --------------------------------------------------------------------------------------------------------- ranking
_MEASURES = ["map", "gm_map", "P.5,10", "recall.10", "ndcg_cut.10", "recip_rank", "bpref", "Rndcg", "num_rel_ret"]


def ranking_case(source: str) -> Case:
    if source == "sample":
        _, pred, gold = ranking.read_examples(
            predictions=_path("ranking/sample.run"), references=_path("ranking/sample.qrels")
        )
        level = 1
    else:  # level 0: a query whose relevant documents all have grade 0 has an Rndcg of NaN, as trec_eval's
        rng = random.Random(7)
        docs = [f"d{i}" for i in range(15)]
        gold = [{d: rng.choice((0, 0, 1, 2)) for d in rng.sample(docs, rng.randint(1, 6))} for _ in range(12)]
        gold[4] = {d: 0 for d in gold[4]}
        pred = [rng.sample(docs, rng.randint(0, 12)) for _ in range(12)]
        level = 0
    host = ranking.score(pred, gold, measures=_MEASURES, level=level)
    cls = ranking.RankingMetric(_MEASURES, level=level)

    def exact(path: str) -> bool:  # the counts; the means are sums of fractions, without trec_eval's rounding
        return path.startswith("num_")

    return Case(cls, pred, gold, host, ranking.state_report, lambda out: dict(out["all"]), exact)


# ----------------------------------------------------------------------------------------------------------- rouge
def _rouge_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{t}/{k}": out[t][f"macro_{k}"] for t in out for k in ("precision", "recall", "f1")}


def rouge_case(source: str) -> Case:
    if source == "sample":
        pred, refs = rouge.read_pairs(_path("rouge/predictions.txt"), _path("rouge/references.txt"))
        gold = [r[0] for r in refs]
    else:
        rng = random.Random(8)
        words = "the cat dog sat ran on a mat log".split()

        def text_(n: int) -> str:
            return "\n".join(" ".join(rng.choices(words, k=rng.randint(0, 7))) for _ in range(n))

        pred = [text_(rng.randint(1, 3)) for _ in range(16)]
        gold = [text_(rng.randint(1, 3)) for _ in range(16)]
    host = rouge.score(pred, gold)
    return Case(text.RougeMetric(), pred, gold, host, rouge.state_report, _rouge_twin, lambda path: False)


# -------------------------------------------------------------------------------------------------------------- ie
def _ie_document(rng: random.Random) -> ie.Document:
    entities = [Span(s, s + rng.choice((1, 1, 2)), rng.choice("AB")) for s in rng.sample(range(10), rng.randint(0, 5))]
    relations, events = [], []
    if entities:
        for _ in range(rng.randint(0, 3)):
            relations.append(ie.Relation(rng.choice("RS"), rng.choice(entities), rng.choice(entities)))
        for _ in range(rng.randint(0, 2)):
            start = rng.randrange(10)
            arguments = tuple(ie.Argument(rng.choice(entities), rng.choice("xy")) for _ in range(rng.randint(0, 3)))
            events.append(ie.Event(Span(start, start + 1, rng.choice("EF")), arguments))
    return ie.Document(entities=tuple(entities), relations=tuple(relations), events=tuple(events))


def _ie_twin(out: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{f}/{k}": out[f][k] for f in ie.FIGURES for k in ("precision", "recall", "f1")}


def ie_case(source: str) -> Case:
    if source == "sample":
        pred = [d for _, d in ie.read_documents(_path("ie/pred.jsonl"))]
        gold = [d for _, d in ie.read_documents(_path("ie/gold.jsonl"))]
    else:
        rng = random.Random(9)
        gold = [_ie_document(rng) for _ in range(12)]
        pred = [_ie_document(rng) if rng.random() < 0.5 else g for g in gold]
    host = {f: ie.score(pred, gold)[f] for f in ie.FIGURES}  # without "mode" and "documents"
    return Case(ie.IEMetric(), pred, gold, host, ie.state_report, _ie_twin)


CASES: dict[str, Callable[[str], Case]] = {
    "ner": ner_case,
    "coref": coref_case,
    "amr": amr_case,
    "dependency": dependency_case,
    "dependency-documents": dependency_documents_case,
    "constituency": constituency_case,
    "constituency-sentences": constituency_sentences_case,
    "ranking": ranking_case,
    "rouge": rouge_case,
    "ie": ie_case,
}


# ----------------------------------------------------------------------------------------------------------- tests
def _batches(case: Case, seed: int) -> list[Any]:
    """The examples' states, one per batch of 1 to 5 examples."""
    rng = random.Random(seed)
    n, out, lo = len(case.references), [], 0
    while lo < n:
        hi = min(n, lo + rng.randint(1, 5))
        out.append(case.cls.from_model_output(case.predictions[lo:hi], case.references[lo:hi]))
        lo = hi
    return out


def _merged(states: list[Any]) -> dict[str, Any]:
    """The states merged forward, backward and as a balanced tree."""
    forward = states[0]
    for s in states[1:]:
        forward = _merge(forward, s)
    backward = states[-1]
    for s in reversed(states[:-1]):
        backward = _merge(backward, s)
    level = list(states)
    while len(level) > 1:
        level = [_merge(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return {"forward": forward, "backward": backward, "tree": level[0]}


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("source", ["sample", "generated"])
@pytest.mark.parametrize("task", sorted(CASES))
def test_state_report_is_the_score(task: str, source: str) -> None:
    case = CASES[task](source)
    assert len(case.references) >= 2
    want = flatten(case.score)
    for order, state in _merged(_batches(case, seed=len(task))).items():
        got = flatten(case.report(state))
        assert got and set(got) <= set(want), (order, sorted(set(got) - set(want)))
        for path, value in got.items():
            if case.exact(path):
                assert _same(value, want[path]), (order, path, value, want[path])
            else:  # a sum of fractions kept to about 48 bits
                assert value == pytest.approx(want[path], rel=1e-13, abs=1e-15, nan_ok=True), (order, path)
        twin = {path: float(v) for path, v in case.twin(state.compute()).items()}
        assert set(twin) <= set(got), sorted(set(twin) - set(got))
        for path, value in twin.items():
            assert value == pytest.approx(got[path], rel=1e-6, abs=1e-7, nan_ok=True), (order, path)


def test_the_cases_reach_every_branch() -> None:
    """The inputs exercise what the read-outs treat apart: NaN, error and skipped sentences, types left out."""
    generated = ranking_case("generated").score
    assert math.isnan(generated["Rndcg"])
    counts = constituency.score(*_constituency_inputs("generated")[:2], cutoff_len=5)
    assert counts["all"]["error_sentences"] and counts["all"]["skipped_sentences"]
    assert 0 < counts["len40"]["sentences"] < counts["all"]["sentences"]
    ner_generated = ner_case("generated")
    assert ner_generated.score["counts"]["found"] > sum(
        t["predicted"] for t in ner_generated.score["per_type"].values()
    )


@pytest.mark.parametrize("task", sorted(CASES))
def test_state_report_refuses_another_state(task: str) -> None:
    module = {"dependency-documents": dependency, "constituency-sentences": constituency}.get(task)
    module = module or {"ner": ner, "coref": coref, "amr": amr, "ranking": ranking, "rouge": rouge, "ie": ie}.get(task)
    module = module or {"dependency": dependency, "constituency": constituency}[task]
    other = ie.IEMetric().empty() if module is not ie else text.RougeMetric().empty()
    with pytest.raises(TypeError, match="state_report expects"):
        module.state_report(other)


def test_one_type_rouge_state_and_weights() -> None:
    pred, gold = ["a b c", "a", "c d e f"], ["a b", "b", "c d"]
    state = text.rouge_metric("rougeL", use_stemmer=True).from_model_output(pred, gold)
    want = rouge.score(pred, gold, types="rougeL", use_stemmer=True)
    assert flatten(rouge.state_report(state)) == pytest.approx(flatten(want), rel=1e-13)
    # integer weights: the report of the weighted sums is score's on the examples repeated, bit for bit
    rng = random.Random(10)
    docs = [(_ie_document(rng), _ie_document(rng)) for _ in range(3)]
    weighted = ie.IEMetric().from_model_output([p for p, _ in docs], [g for _, g in docs], weights=np.array([2, 0, 1]))
    repeated = [docs[0], docs[0], docs[2]]
    want = ie.score([p for p, _ in repeated], [g for _, g in repeated])
    assert flatten(ie.state_report(weighted)).items() <= flatten({f: want[f] for f in ie.FIGURES}).items()
