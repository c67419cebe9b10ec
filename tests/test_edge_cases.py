"""Edge cases a demanding user runs into: unions of generics, subclasses, custom equality, stray keywords, checkpoints
of another metric, re-created metric classes, underivable field types and wrong leaf types."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, NewType, Optional

import jax.numpy as jnp
import numpy as np
import pytest
from flax import serialization

from metametric_jax import Normalizer, dsl, make_metric, metametric
from metametric_jax.normalizer import safe_divide
from metametric_jax.tasks.ranking import precision_at_k


@metametric
@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class SubSpan(Span):
    pass


@metametric(normalizer="f1")
@dataclass
class Doc:
    spans: Collection[Span]


def test_optional_of_a_generic_collection():
    @metametric(normalizer="f1")
    @dataclass
    class MaybeDoc:
        spans: Optional[list[Span]]
        tags: frozenset[str] | None = None
        kind: Literal["a", "b"] | int = "a"

    assert MaybeDoc.metric.score(MaybeDoc(None), MaybeDoc(None)) == 1.0
    assert MaybeDoc.metric.score(MaybeDoc([Span(0, 1)]), MaybeDoc(None)) == 0.0
    both = MaybeDoc([Span(0, 1), Span(2, 3)], frozenset({"x"}), 3)
    assert MaybeDoc.metric.score(both, MaybeDoc([Span(0, 1)], frozenset({"x"}), 3)) == pytest.approx(2 / 3)
    assert MaybeDoc.metric.score(MaybeDoc(None, kind="a"), MaybeDoc(None, kind="b")) == 0.0


@pytest.mark.parametrize("constraint", ["<->", "->", "<-", "~"])
def test_a_collection_scores_its_items_as_the_items_score_alone(constraint):
    metric = make_metric(dsl.set_matching(dsl.auto(Span), constraint=constraint), normalizer="f1")
    assert Span.metric.score(SubSpan(0, 1), Span(0, 1)) == 1.0
    assert metric.score([SubSpan(0, 1)], [Span(0, 1)]) == 1.0
    assert metric.from_model_output([[SubSpan(0, 1)]], [[Span(0, 1)]]).compute()["f1"] == 1.0
    assert Doc.metric.score(Doc([SubSpan(0, 1)]), Doc([Span(0, 1)])) == 1.0


def test_a_dataclass_with_its_own_equality_is_compared_field_by_field_everywhere():
    @metametric
    @dataclass(frozen=True)
    class Tok:
        text: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Tok) and self.text.lower() == other.text.lower()

        def __hash__(self) -> int:
            return hash(self.text.lower())

    bag = make_metric(dsl.set_matching(dsl.auto(Tok)), normalizer="f1")
    assert Tok.metric.score(Tok("A"), Tok("a")) == 0.0  # the derived similarity compares fields
    assert bag.score([Tok("A")], [Tok("a")]) == 0.0
    assert bag.from_model_output([[Tok("A")]], [[Tok("a")]]).compute()["f1"] == 0.0


def test_unknown_keywords_are_refused():
    with pytest.raises(TypeError, match="weight"):
        Doc.metric.from_model_output([Doc([])], [Doc([])], weight=[1.0])
    from metametric_jax.tasks.ner import NerMetric

    with pytest.raises(TypeError, match="mask"):
        NerMetric(["PER"]).from_model_output([["O"]], [["O"]], mask=[1])


def test_custom_normalizers_must_trace_and_be_finite():
    numpy_only = Normalizer("geo", lambda xy, xx, yy, zd: safe_divide(xy, np.sqrt(xx * yy), zd))
    with pytest.raises(ValueError, match="inside jax.jit"):
        make_metric(dsl.set_matching(dsl.discrete()), normalizer=numpy_only)
    nan_at_zero = Normalizer("raw_p", lambda xy, xx, yy, zd: xy / xx)
    with pytest.raises(ValueError, match="finite"):
        make_metric(dsl.set_matching(dsl.discrete()), normalizer=nan_at_zero)
    ok = Normalizer("geo", lambda xy, xx, yy, zd: safe_divide(xy, (xx * yy) ** 0.5, zd))
    res = make_metric(dsl.set_matching(dsl.discrete()), normalizer=ok).from_model_output([[1, 2]], [[1]]).compute()
    assert float(res["geo"]) == pytest.approx(1 / np.sqrt(2), rel=1e-6)


def test_restoring_a_checkpoint_of_another_metric_is_refused():
    other = make_metric(dsl.set_matching(dsl.discrete()), normalizer="f2")  # one more reported row than Doc.metric
    saved = serialization.to_bytes(other.from_model_output([[1]], [[1]]))
    with pytest.raises(ValueError, match="different metric"):
        serialization.from_bytes(Doc.metric.empty(), saved)


def test_dsl_ranking_metrics_are_one_class_per_argument_and_recreated_classes_are_named():
    a = precision_at_k(2).empty()
    a.merge(precision_at_k(2).from_model_output([["a", "b"]], [["a"]]))
    first = make_metric(dsl.set_matching(dsl.discrete()), name="bag")
    second = make_metric(dsl.set_matching(dsl.discrete()), name="bag")
    with pytest.raises(TypeError, match="created twice"):
        first.empty().merge(second.empty())


def test_underivable_and_unwrapped_field_types():
    for tp, message in ((list, "needs an element type"), (set, "needs an element type"), (np.ndarray, "elementwise")):
        with pytest.raises(TypeError, match=message):
            metametric(dataclass(type("Holder", (), {"__annotations__": {"x": tp}})))

    UserId = NewType("UserId", int)

    @metametric
    @dataclass(frozen=True)
    class Owner:
        user: UserId

    assert Owner.metric.score(Owner(UserId(1)), Owner(UserId(1))) == 1.0


def test_wrong_leaf_types_raise_instead_of_scoring():
    @metametric(normalizer="f1")
    @dataclass
    class Words:
        words: Collection[str]
        pair: tuple[int, int] = (0, 0)

    with pytest.raises(TypeError, match="expects str values; found int"):
        Words.metric.score(Words([1, 2]), Words(["a"]))
    with pytest.raises(TypeError, match="found list"):
        Words.metric.score(Words(["a"], [0, 0]), Words(["a"], (0, 0)))
    with pytest.raises(TypeError, match="collection of items"):
        Words.metric.score(Words({"a": 1}), Words(["a"]))
    with pytest.raises(TypeError, match="collection of items"):
        Doc.metric.from_model_output([Doc("ab")], [Doc([])])
    assert float(dsl.discrete(float).score(1, 1.0)) == 1.0  # ints are accepted where floats are declared


def test_bad_weight_values_are_named():
    with pytest.raises(ValueError, match="non-negative numbers"):
        Doc.metric.from_model_output([Doc([])], [Doc([])], weights=["a"])
    with pytest.raises(ValueError, match="non-negative"):
        Doc.metric.from_model_output([Doc([])], [Doc([])], weights=jnp.asarray([-1.0]))
