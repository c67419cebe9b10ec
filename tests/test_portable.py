"""Metric classes pickle by reference and their states merge with states made in another (spawned) process."""

from __future__ import annotations

import multiprocessing
import pickle
import warnings
from dataclasses import dataclass

import cloudpickle
import numpy as np
import pytest
from amr_graphs import unrelated_pair
from flax import serialization

from metametric_jax import dsl, make_metric, make_suite, metametric, stats_metric
from metametric_jax._solvers import SolverBudgetWarning
from metametric_jax.significance import bootstrap, randomization
from metametric_jax.tasks.amr import SmatchMetric, smatch_metric
from metametric_jax.tasks.coref import CorefMetric
from metametric_jax.tasks.ner import NerMetric


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    spans: frozenset[tuple[int, int]]


def overlap(p: frozenset, r: frozenset) -> tuple[float, float, float]:
    return float(len(p & r)), float(len(p)), float(len(r))


def first_f1(results):
    return results["p"]["f1"]


Overlap = stats_metric(overlap, "f1", name="overlap")
Spans = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="spans")
Pair = make_suite("pair", {"p": Overlap, "q": Spans}, {"first": first_f1})

DOCS = (
    [Doc(frozenset({(0, 1), (2, 3)})), Doc(frozenset()), Doc(frozenset({(4, 5)})), Doc(frozenset({(1, 2)}))],
    [Doc(frozenset({(0, 1)})), Doc(frozenset({(1, 2)})), Doc(frozenset({(4, 5)})), Doc(frozenset({(1, 2), (3, 4)}))],
)
SETS = ([frozenset(d.spans) for d in DOCS[0]], [frozenset(d.spans) for d in DOCS[1]])
AMR = (["(b / boy)", "(g / girl :mod (t / tall))", "(a / and :op1 (b / boy))"], ["(b / boy :mod (t / tall))"] * 3)
NER = ([["B-PER", "O", "B-LOC"], ["B-LOC", "I-LOC"]], [["B-PER", "O", "B-ORG"], ["B-LOC", "I-LOC"]])
COREF = ([[[0, 1], [2, 3]], [[5, 6]]], [[[0, 1, 2]], [[5, 6]]])


def _cases():
    """(class, predictions, references, extra from_model_output arguments) of every kind of class."""
    hard = unrelated_pair(0, 30)
    return [
        (Doc.metric, *DOCS, {}),
        (Overlap, *SETS, {}),
        (Spans, *SETS, {}),
        (Pair, *SETS, {}),
        (SmatchMetric, *AMR, {}),
        (smatch_metric(work_limit=10**4), [hard[0], AMR[0][0]], [hard[1], AMR[1][0]], {}),
        (NerMetric(["LOC", "PER"], "IOBES"), *NER, {}),
        (CorefMetric, *COREF, {}),
        (bootstrap(smatch_metric(work_limit=10**4), 20, 3, 0.9), *AMR, {"example_ids": [0, 1, 2]}),
        (bootstrap(Pair, 10), *SETS, {"example_ids": [0, 1, 2, 3]}),
    ]


#: the classes sent to a spawned process (one of each kind: derived, suite, factory with a tally, task suite, bootstrap)
SPAWNED = (
    Doc.metric,
    Pair,
    smatch_metric(work_limit=10**4),
    NerMetric(["LOC", "PER"], "IOBES"),
    bootstrap(smatch_metric(work_limit=10**4), 20, 3, 0.9),
)


def _child(payload: bytes) -> bytes:
    """In a spawned process: each class and state unpickled, a state made here from the second half, both merged."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverBudgetWarning)
        for cls, state, preds, refs, extra in pickle.loads(payload):
            assert type(state) is cls
            if "example_ids" in extra:
                extra = {"example_ids": [i + 100 for i in extra["example_ids"]]}
            mine = cls.from_model_output(preds, refs, **extra)
            out.append((cls, mine, state.merge(mine)))
    return pickle.dumps(out)


def _same(a, b) -> None:
    flat_a, flat_b = serialization.to_state_dict(a), serialization.to_state_dict(b)
    for x, y in zip(_leaves(flat_a), _leaves(flat_b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    return [tree] if isinstance(tree, (np.ndarray, np.generic)) or hasattr(tree, "shape") else []


def test_every_kind_of_class_pickles_by_reference():
    for cls, *_ in _cases():
        assert pickle.loads(pickle.dumps(cls)) is cls, cls
        assert cloudpickle.loads(cloudpickle.dumps(cls)) is cls, cls
    from metametric_jax.tasks.constituency import ConstituencyMetric
    from metametric_jax.tasks.dependency import DependencyMetric
    from metametric_jax.tasks.ie import IEMetric
    from metametric_jax.tasks.ranking import RankingMetric
    from metametric_jax.tasks.text import RougeMetric, rouge_metric

    for cls in (ConstituencyMetric(), DependencyMetric(), IEMetric(), RankingMetric(), RougeMetric(), rouge_metric()):
        assert pickle.loads(pickle.dumps(cls)) is cls, cls
        assert cloudpickle.loads(cloudpickle.dumps(cls)) is cls, cls
    member = NerMetric(["LOC"]).metric_config.members[1][1]
    assert pickle.loads(pickle.dumps(member)) is member
    assert randomization(Spans, 50, 1) is randomization(Spans, 50, 1)
    assert pickle.loads(pickle.dumps(randomization(Spans, 50, 1))) is randomization(Spans, 50, 1)
    assert bootstrap(SmatchMetric, 20, 3, 0.9) is bootstrap(SmatchMetric, 20, 3, 0.9)
    assert Doc.metric.__qualname__ == "Doc.metric" and pickle.dumps(Doc.metric).count(b"Doc") == 1


def test_states_pickle_and_merge_with_states_made_in_a_spawned_process():
    cases = [c for c in _cases() if c[0] in SPAWNED]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverBudgetWarning)
        sent = [(cls, cls.from_model_output(p, r, **extra), p, r, extra) for cls, p, r, extra in cases]
    for _cls, state, *_ in sent:
        _same(pickle.loads(pickle.dumps(state)), state)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        back = pickle.loads(pool.apply(_child, (pickle.dumps(sent),)))
    for (cls, state, *_), (cls_back, theirs, merged) in zip(sent, back):
        assert cls_back is cls and type(theirs) is cls and type(merged) is cls
        _same(merged, state.merge(theirs))  # merges here, with this process's states, to the same sums
    smatch = dict(zip([c for c, *_ in cases], back))[smatch_metric(work_limit=10**4)]
    assert float(smatch[2].compute()["not_optimal"]) == 2.0  # the hard pair, once from each process


def test_the_budget_count_travels_in_the_smatch_state():
    p, g = unrelated_pair(0, 30)
    quick = smatch_metric(work_limit=10**4)
    with pytest.warns(SolverBudgetWarning):
        state = quick.from_model_output([p, AMR[0][0]], [g, AMR[1][0]])
    assert state.totals()["tally"] == {"not_optimal": 1.0}
    assert float(state.compute()["not_optimal"]) == 1.0
    merged = state.merge(quick.from_model_output(*AMR))
    assert float(merged.compute()["not_optimal"]) == 1.0 and float(merged.compute()["overlap"]) > 0
    restored = serialization.from_state_dict(quick.empty(), serialization.to_state_dict(merged))
    assert float(restored.compute()["not_optimal"]) == 1.0
    assert float(SmatchMetric.from_stats([[2, 3, 4]]).compute()["not_optimal"]) == 0.0


def test_a_class_that_is_not_portable_says_so():
    local = stats_metric(lambda p, r: (1.0, 1.0, 1.0), name="local")
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(local)
    assert cloudpickle.loads(cloudpickle.dumps(local)) is local  # cloudpickle sends the lambda by value

    @metametric
    @dataclass(frozen=True)
    class Inner:
        x: int

    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(Inner.metric)
