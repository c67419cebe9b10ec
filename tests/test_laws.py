"""The accumulator laws (metametric_jax.testing) for every accumulator the library ships.

Cases come from :func:`shipped_cases`: the core constructors (``@metametric``, ``dsl``, ``stats_metric``,
``make_suite``) here, and the task modules listed in ``TASK_CASES``. A listed task module that cannot be imported
fails its test instead of being skipped.
"""

from __future__ import annotations

import importlib
import random
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest
from helpers import Sentence, Span

from metametric_jax import Variable, dsl, make_metric, make_suite, metametric, stats_metric
from metametric_jax import testing as laws
from metametric_jax.interop import clu_metric
from metametric_jax.tasks.ranking import precision_at_k


class Case(NamedTuple):
    metric: type
    predictions: list[Any]
    references: list[Any]
    weights: Any = None
    batch_size: int = 4


# --------------------------------------------------------------------------------------------------------- core data
Doc = Sentence  # F1 of sets of spans


@metametric(normalizer="f2")
@dataclass(frozen=True)
class DocF2:
    spans: frozenset[Span]


@metametric()
@dataclass(frozen=True)
class Instance:
    var: Variable
    concept: str


@metametric()
@dataclass(frozen=True)
class Relation:
    source: Variable
    role: str
    target: Variable


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Graph:
    triples: Collection[Instance | Relation]


LABELS = ("PER", "LOC", "ORG")


def _spans(rng: random.Random, k: int) -> frozenset[Span]:
    out = set()
    for _ in range(k):
        s = rng.randrange(0, 12)
        out.add(Span(s, s + rng.randrange(1, 3), rng.choice(LABELS)))
    return frozenset(out)


def _docs(seed: int, n: int = 12) -> tuple[list[frozenset[Span]], list[frozenset[Span]]]:
    rng = random.Random(seed)
    preds, refs = [], []
    for i in range(n):
        ref = _spans(rng, rng.randrange(0, 5)) if i % 5 else frozenset()
        kept = {s for s in sorted(ref, key=lambda x: (x.start, x.end, x.label)) if rng.random() < 0.7}
        pred = frozenset(kept | _spans(rng, rng.randrange(0, 3))) if i % 5 else frozenset()
        preds.append(pred)
        refs.append(ref)
    return preds, refs


def _graphs(seed: int, n: int = 9) -> tuple[list[Graph], list[Graph]]:
    rng = random.Random(seed)
    concepts = ("want-01", "boy", "go-01", "girl")

    def graph(names: str) -> Graph:
        nodes = [(Variable(v), rng.choice(concepts)) for v in names[: rng.randrange(1, 4)]]
        triples: list[Any] = [Instance(v, c) for v, c in nodes]
        for a, b in zip(nodes, nodes[1:]):
            triples.append(Relation(a[0], rng.choice(("ARG0", "ARG1")), b[0]))
        return Graph(tuple(triples))

    return [graph("abc") for _ in range(n)], [graph("xyz") for _ in range(n)]


def _bag(a: list[str], b: list[str]) -> tuple[float, float, float]:
    return float(sum((Counter(a) & Counter(b)).values())), float(len(a)), float(len(b))


def _tokens(seed: int, n: int = 12) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    vocab = list("abcdef")
    preds = [[rng.choice(vocab) for _ in range(rng.randrange(0, 6))] for _ in range(n)]
    refs = [[rng.choice(vocab) for _ in range(rng.randrange(0, 6))] for _ in range(n)]
    return preds, refs


def _cluster_members(p: list[set[int]], r: list[set[int]]) -> tuple[tuple[float, float, float], tuple[float, ...]]:
    """B³ numerators and denominators of one document (Bagga & Baldwin, 1998), mentions are integers."""

    def side(a: list[set[int]], b: list[set[int]]) -> tuple[float, float]:
        num = sum(len(x & y) ** 2 / len(x) for x in a for y in b)
        return num, float(sum(len(x) for x in a))

    num_r, den_r = side(r, p)
    num_p, den_p = side(p, r)
    return (num_r, 0.0, den_r), (num_p, den_p, 0.0)


BcubR = stats_metric(lambda p, r: _cluster_members(p, r)[0], "recall", name="bcub_recall_test")
BcubP = stats_metric(lambda p, r: _cluster_members(p, r)[1], "precision", name="bcub_precision_test")


BcubSuite = make_suite(
    "bcub_test",
    {"recall": BcubR, "precision": BcubP},
    {
        "f1": lambda res: (
            2
            * res["recall"]["recall"]
            * res["precision"]["precision"]
            / (res["recall"]["recall"] + res["precision"]["precision"] + 1e-30)
        )
    },
)

TokenF1 = stats_metric(_bag, "f1", name="token_f1_test")
TokenP = stats_metric(_bag, "precision", name="token_p_test")
LabelF1 = stats_metric(
    lambda p, r: _bag([s.label for s in p.spans], [s.label for s in r.spans]), "f1", name="label_f1_test"
)
AverageSuite = make_suite(
    "average_f1_test",
    {"spans": Doc.metric, "labels": LabelF1},
    {"mean_f1": lambda res: (res["spans"]["f1"] + res["labels"]["f1"]) / 2},
)


def _clusters(seed: int, n: int = 12) -> tuple[list[list[set[int]]], list[list[set[int]]]]:
    rng = random.Random(seed)

    def partition() -> list[set[int]]:
        mentions = rng.sample(range(10), rng.randrange(1, 7))
        groups: dict[int, set[int]] = {}
        for m in mentions:
            groups.setdefault(rng.randrange(0, 3), set()).add(m)
        return list(groups.values())

    return [partition() for _ in range(n)], [partition() for _ in range(n)]


def _ranked(seed: int, n: int = 12) -> tuple[list[list[str]], list[set[str]]]:
    rng = random.Random(seed)
    vocab = list("abcdefgh")
    return [rng.sample(vocab, 5) for _ in range(n)], [set(rng.sample(vocab, rng.randrange(1, 4))) for _ in range(n)]


def core_cases() -> dict[str, Callable[[], Case]]:
    """Accumulators built by the core constructors, each with data."""
    span_set = dsl.set_matching(dsl.dataclass(Span, label=dsl.discrete()), constraint="<->")

    def docs(cls: type) -> Callable[[], Case]:
        def make() -> Case:
            p, r = _docs(1)
            return Case(cls.metric, [cls(x) for x in p], [cls(x) for x in r])

        return make

    def weighted() -> Case:
        p, r = _docs(2)
        w = np.random.default_rng(0).uniform(0.0, 3.0, len(p))
        return Case(Doc.metric, [Doc(x) for x in p], [Doc(x) for x in r], w)

    return {
        "derived-f1": docs(Doc),
        "derived-f2": docs(DocF2),
        "derived-weighted": weighted,
        "derived-latent-graph": lambda: Case(Graph.metric, *_graphs(3), batch_size=3),
        "dsl-set-jaccard": lambda: Case(make_metric(span_set, normalizer="jaccard"), *_docs(4)),
        "dsl-sequence": lambda: Case(
            make_metric(dsl.sequence_matching(dsl.discrete(str)), normalizer="f1"), *_tokens(5)
        ),
        "dsl-precision-at-3": lambda: Case(precision_at_k(3), *_ranked(6)),
        "stats-metric-token-f1": lambda: Case(TokenF1, *_tokens(8)),
        "stats-metric-token-precision": lambda: Case(TokenP, *_tokens(9)),
        "suite-bcub": lambda: Case(BcubSuite, *_clusters(10)),
        "interop-clu-metric": lambda: Case(clu_metric(TokenF1, predictions="p", references="r"), *_tokens(14)),
        "suite-average-f1": lambda: Case(
            AverageSuite, *(lambda pr: ([Doc(x) for x in pr[0]], [Doc(x) for x in pr[1]]))(_docs(11))
        ),
    }


# -------------------------------------------------------------------------------------------------------- task cases
def _ner_case(mod: Any) -> Case:
    rng = random.Random(12)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    refs = [[rng.choice(tags) for _ in range(rng.randrange(1, 8))] for _ in range(12)]
    preds = [[t if rng.random() < 0.8 else rng.choice(tags) for t in s] for s in refs]
    return Case(mod.span_metric("IOB2"), preds, refs)


def _ner_suite_case(mod: Any) -> Case:
    case = _ner_case(mod)
    return case._replace(metric=mod.NerMetric(["PER", "LOC"], "IOB2"))


def _coref_case(mod: Any) -> Case:
    p, r = _clusters(13)
    to_doc = lambda doc: mod.CorefDocument.from_clusters([sorted(c) for c in doc])  # noqa: E731
    return Case(mod.CorefMetric, [to_doc(d) for d in p], [to_doc(d) for d in r])


def _amr_case(mod: Any) -> Case:
    preds = ["(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))", "(b / boy)", "(g / girl)"] * 2
    refs = ["(w / want-01 :ARG0 (b / boy) :ARG1 (f / football))", "(b / boy)", "(b / boy :mod (t / tall))"] * 2
    return Case(mod.SmatchMetric, preds, refs, batch_size=2)


def _ie_events(mod: Any) -> tuple[list[Any], list[Any]]:
    from metametric_jax.tasks.ner import Span

    rng = random.Random(15)
    roles, types = ["agent", "victim", "place"], ["Attack", "Die"]

    def event() -> Any:
        start = rng.randrange(0, 10)
        args = tuple(
            mod.Argument(Span(a, a + 1 + rng.randrange(0, 2), "X"), rng.choice(roles)) for a in rng.sample(range(12), 2)
        )
        return mod.Event(Span(start, start + 1, rng.choice(types)), args)

    refs = [mod.Document(events=tuple(event() for _ in range(rng.randrange(1, 4)))) for _ in range(9)]
    preds = [mod.Document(events=tuple(e if rng.random() < 0.6 else event() for e in d.events)) for d in refs]
    return preds, refs


def _ie_case(mod: Any) -> Case:
    return Case(mod.IEMetric("strict"), *_ie_events(mod), batch_size=3)


def _ie_relation_case(mod: Any) -> Case:
    from metametric_jax.tasks.ner import Span

    rng = random.Random(16)

    def rel() -> Any:
        a, b = rng.sample(range(8), 2)
        return mod.Relation(
            rng.choice(["works_for", "lives_in"]), Span(a, a + 1, "PER"), Span(b, b + 1, rng.choice(["ORG", "LOC"]))
        )

    refs = [mod.Document(relations=tuple(rel() for _ in range(rng.randrange(1, 4)))) for _ in range(9)]
    preds = [mod.Document(relations=tuple(r if rng.random() < 0.6 else rel() for r in d.relations)) for d in refs]
    return Case(mod.IEMetric("boundaries", directed=False), preds, refs, batch_size=3)


def _parsing_case(mod: Any) -> Case:
    from importlib.resources import files

    data = files("metametric_jax") / "data" / "parsing"
    gold = mod.read_conllu(str(data / "gold.conllu"))
    pred = mod.read_conllu(str(data / "pred.conllu"))
    return Case(mod.DependencyMetric(exclude_punct=True), pred * 3, gold * 3, batch_size=2)


def _parseval_case(mod: Any) -> Case:
    from importlib.resources import files

    data = files("metametric_jax") / "data" / "parsing"
    from metametric_jax.tasks.readers.ptb import read_trees

    gold = read_trees(str(data / "gold.mrg"))
    pred = read_trees(str(data / "pred.mrg"))
    return Case(mod.ConstituencyMetric(), pred * 3, gold * 3, batch_size=2)


def _text_tokens(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    words = "a the cat mouse and chase second dog".split()
    refs = [[rng.choice(words) for _ in range(rng.randrange(1, 10))] for _ in range(10)]
    preds = [[w if rng.random() < 0.7 else rng.choice(words) for w in s] for s in refs]
    return preds, refs


def _ranking_case(mod: Any) -> Case:
    preds, refs = _ranked(17)
    return Case(mod.RankingMetric(["P.1,3", "recall.1,3", "map"]), preds, refs)


#: Task accumulators: (case id, module under metametric_jax.tasks, builder taking the module). Extend this list as
#: task modules land; a listed module that is missing makes its case fail.
TASK_CASES: list[tuple[str, str, Callable[[Any], Case]]] = [
    ("ner-span-f1", "ner", _ner_case),
    ("ner-suite", "ner", _ner_suite_case),
    ("coref-suite", "coref", _coref_case),
    ("amr-smatch", "amr", _amr_case),
    ("ie-events", "ie", _ie_case),
    ("ie-relations", "ie", _ie_relation_case),
    ("dependency-suite", "dependency", _parsing_case),
    ("constituency-suite", "constituency", _parseval_case),
    ("text-rouge1", "text", lambda mod: Case(mod.Rouge1, *_text_tokens(18))),
    ("text-rouge2", "text", lambda mod: Case(mod.Rouge2, *_text_tokens(19))),
    ("text-rougeL", "text", lambda mod: Case(mod.RougeL, *_text_tokens(20))),
    ("text-multiset", "text", lambda mod: Case(mod.MultisetF1, *_text_tokens(21))),
    ("ranking-suite", "ranking", _ranking_case),
    ("ranking-ap", "ranking", lambda mod: Case(mod.AveragePrecisionMetric, *_ranked(22))),
]


def _task_builder(module: str, build: Callable[[Any], Case]) -> Callable[[], Case]:
    def make() -> Case:
        mod = importlib.import_module(f"metametric_jax.tasks.{module}")
        return build(mod)

    return make


def shipped_cases() -> dict[str, Callable[[], Case]]:
    """Every shipped accumulator with data: core constructors and ``TASK_CASES``."""
    cases = core_cases()
    for case_id, module, build in TASK_CASES:
        cases[f"task-{case_id}"] = _task_builder(module, build)
    return cases


CASES = shipped_cases()


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_accumulator_laws(case_id: str) -> None:
    case = CASES[case_id]()
    laws.check_accumulator_laws(
        case.metric, case.predictions, case.references, weights=case.weights, batch_size=case.batch_size, rtol=1e-5
    )


# ----------------------------------------------------------------------------------------- the checkers can fail
def test_check_commutative_detects_violation() -> None:
    class Left(TokenF1):  # type: ignore[misc, valid-type]
        """Keeps the left state: not commutative."""

        def merge(self, other: Any) -> Any:
            return self

    p, r = _tokens(20)
    a = Left.from_model_output(p[:3], r[:3])
    b = Left.from_model_output(p[3:6], r[3:6])
    with pytest.raises(AssertionError, match="not commutative"):
        laws.check_commutative(a, b)


def test_check_identity_detects_nonzero_empty() -> None:
    import jax.numpy as jnp

    class Shifted(TokenF1):  # type: ignore[misc, valid-type]
        @classmethod
        def empty(cls) -> Any:
            one = jnp.asarray([1.0, 0.0], jnp.float32)
            return super().empty().replace(**jax.tree.map(lambda _: one, super().empty()._sums()))

    p, r = _tokens(21)
    with pytest.raises(AssertionError, match="empty"):
        laws.check_identity(Shifted.from_model_output(p[:4], r[:4]))


def test_check_jit_counts_retraces() -> None:
    import jax.numpy as jnp

    p, r = _tokens(22)
    s = TokenF1.from_model_output(p[:4], r[:4])
    # a state of another dtype changes the abstract signature: the loop traces again
    odd = s.replace(count=s.count.astype(jnp.bfloat16))
    with pytest.raises(AssertionError, match="traced 2 times"):
        laws.check_jit([s, odd])


def test_check_batching_detects_order_dependent_state() -> None:
    class LastBatch(TokenF1):  # type: ignore[misc, valid-type]
        def merge(self, other: Any) -> Any:
            return other if float(other.count[0]) else self

    p, r = _tokens(23)
    with pytest.raises(AssertionError, match="batches"):
        laws.check_batching(LastBatch, p, r, batch_size=3)


def test_task_registry_fails_on_missing_module() -> None:
    make = _task_builder("no_such_task_module", _ner_case)
    with pytest.raises(ModuleNotFoundError):
        make()
