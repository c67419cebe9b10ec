"""The decorator, derivation rules, normalizers and constraints (issue: derive metrics from types)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional, Union

import pytest

from metametric_jax import Variable, dsl, make_metric, metametric, parse_constraint, parse_normalizer
from metametric_jax.composite import Product, UnionSim
from metametric_jax.constraint import Constraint
from metametric_jax.matching import LatentSetMatching, SetMatching
from metametric_jax.similarity import Discrete, Normalized


# ------------------------------------------------------------------------------------------------ the seed example
@metametric(normalizer="none", constraint="<->")
@dataclass(eq=True, frozen=True)
class Mention:
    left: int  # inclusive
    right: int  # inclusive


@metametric(normalizer="none", constraint="<->")
@dataclass
class Trigger:
    mention: Mention
    type: str


@metametric(normalizer="f1", constraint="<->")
@dataclass
class TriggerExtractionOutput:
    triggers: Collection[Trigger]


def test_seed_example_verbatim():
    m1, m2, m3 = Mention(1, 2), Mention(1, 2), Mention(1, 3)
    assert Mention.metric.score(m1, m2) == 1.0
    assert Mention.metric.score(m1, m3) == 0.0
    t1, t2, t3 = Trigger(m1, "foo"), Trigger(m2, "foo"), Trigger(m3, "foo")
    assert Trigger.metric.score(t1, t2) == 1.0
    assert Trigger.metric.score(t1, t3) == 0.0
    assert TriggerExtractionOutput.metric.score(
        TriggerExtractionOutput([t1, t2]), TriggerExtractionOutput([t1, t2, t3])
    ) == pytest.approx(0.8, abs=1e-12)


def test_explanation_paths():
    m1, m3 = Mention(1, 2), Mention(1, 3)
    ex = TriggerExtractionOutput.metric.explain(
        TriggerExtractionOutput([Trigger(m1, "foo")]), TriggerExtractionOutput([Trigger(m3, "foo"), Trigger(m1, "foo")])
    )
    pairs = ex.pairs()
    assert ("triggers[0]", "triggers[1]", 1.0) in pairs
    assert ("triggers[0].mention", "triggers[1].mention", 1.0) in pairs
    assert ex.score == 1.0
    assert "triggers[0].mention" in str(ex)


def test_bare_decorator_and_default_normalizer():
    @metametric
    @dataclass(frozen=True)
    class Tok:
        text: str

    assert Tok.metric.metric_config.normalizer.name == "none"
    assert Tok.metric.score(Tok("a"), Tok("a")) == 1.0


# --------------------------------------------------------------------------------------------------- constraints
@pytest.mark.parametrize(
    "spellings,expected",
    [(("<->", "1:1"), 2.0), (("->", "1:*"), 3.0), (("<-", "*:1"), 4.0), (("~", "*:*"), 5.0)],
)
def test_constraint_overlaps(spellings, expected):
    a, b = [1, 2, 2], [1, 1, 1, 2]
    for s in spellings:

        @metametric(constraint=s)
        @dataclass
        class Bag:
            items: list[int]

        assert Bag.metric.score(Bag(a), Bag(b)) == expected
        assert dsl.set_matching(dsl.discrete(), constraint=s).score(a, b) == expected


def test_constraint_spellings_and_errors():
    assert parse_constraint("1:*") is Constraint.ONE_TO_MANY is parse_constraint("->")
    assert parse_constraint("*:1") is Constraint.MANY_TO_ONE is parse_constraint("<-")
    with pytest.raises(ValueError, match=r"'<->'.*'1:1'.*'~'"):
        parse_constraint("1-1")
    with pytest.raises(ValueError, match="Unknown matching constraint"):

        @metametric(constraint="one-to-one")
        @dataclass
        class Bad:
            x: list[int]


# ---------------------------------------------------------------------------------------------------- normalizers
@dataclass(frozen=True)
class _Bag:
    items: tuple[str, ...]


P, R = ["a", "b", "c", "d"], ["a", "b", "e"]  # overlap 2, |P| = 4, |R| = 3


@pytest.mark.parametrize(
    "name,expected",
    [
        ("none", 2.0),
        ("precision", 2 / 4),
        ("recall", 2 / 3),
        ("jaccard", 2 / (4 + 3 - 2)),
        ("dice", 2 * 2 / 7),
        ("f1", 2 * 2 / 7),
        ("f2", (1 + 4) * (0.5 * 2 / 3) / (4 * 0.5 + 2 / 3)),
        ("f0.5", (1 + 0.25) * (0.5 * 2 / 3) / (0.25 * 0.5 + 2 / 3)),
    ],
)
def test_normalizers(name, expected):
    m = make_metric(dsl.set_matching(dsl.discrete()), normalizer=name)
    assert m.score(P, R) == pytest.approx(expected, rel=1e-12)


def test_custom_normalizer_object():
    from metametric_jax import Normalizer
    from metametric_jax.normalizer import safe_divide

    overlap_over_max = Normalizer("omax", lambda xy, xx, yy, zd: safe_divide(xy, (xx + yy + abs(xx - yy)) / 2, zd))
    m = make_metric(dsl.set_matching(dsl.discrete()), normalizer=overlap_over_max)
    assert m.score(P, R) == pytest.approx(0.5)


@pytest.mark.parametrize("bad", ["f0", "f-1", "f1.5x", "accuracy", "", "fbeta"])
def test_bad_normalizers(bad):
    with pytest.raises(ValueError, match="precision.*recall.*jaccard"):
        parse_normalizer(bad)


def test_empty_structures():
    m = make_metric(dsl.set_matching(dsl.discrete()), normalizer="f1")
    assert m.score([], []) == 1.0  # two empty structures agree
    assert m.score([], ["a"]) == 0.0
    assert m.stats([], []) == (0.0, 0.0, 0.0)
    m2 = make_metric(dsl.set_matching(dsl.discrete()), normalizer="precision", zero_division=0.25, empty_score=0.5)
    assert m2.score([], ["a"]) == 0.25
    assert m2.score([], []) == 0.5


# ------------------------------------------------------------------------------------------------------ derivation
def test_derivation_rules():
    @metametric(normalizer="f1", constraint="~")
    @dataclass
    class Everything:
        a: int
        b: Optional[str]
        c: Union[Mention, str]
        d: Annotated[float, dsl.from_function(lambda x, y: 1.0 / (1.0 + abs(x - y)))]
        e: frozenset[Mention]
        f: Sequence[str]
        g: tuple[int, str]

    sim = Everything.metric.metric_config.source
    assert isinstance(sim, Product)
    assert isinstance(sim.fields["a"], Discrete)
    assert isinstance(sim.fields["b"], UnionSim)
    assert isinstance(sim.fields["c"], UnionSim)
    assert isinstance(sim.fields["e"], SetMatching) and sim.fields["e"].constraint is Constraint.MANY_TO_MANY
    assert isinstance(sim.fields["f"], SetMatching)
    assert isinstance(sim.fields["g"], Discrete)
    x = Everything(1, None, Mention(0, 1), 2.0, frozenset({Mention(0, 1)}), ["a"], (1, "x"))
    y = Everything(1, None, Mention(0, 1), 3.0, frozenset({Mention(0, 1)}), ["a"], (1, "x"))
    assert Everything.metric.stats(x, y)[0] == pytest.approx(0.5)
    z = Everything(1, "s", "str case", 2.0, frozenset(), ["a"], (1, "x"))
    assert Everything.metric.stats(x, z)[0] == 0.0  # None vs str, and union cases differ


def test_nested_metric_is_normalized_as_declared():
    @metametric(normalizer="f1")
    @dataclass(frozen=True)
    class Cluster:
        members: frozenset[int]

    @metametric(normalizer="none")
    @dataclass
    class Doc:
        clusters: list[Cluster]

    inner = Doc.metric.metric_config.source.fields["clusters"].inner
    assert isinstance(inner, Normalized)
    # clusters {1,2} vs {1,2,3}: dice 0.8 under the 1:1 matching
    d1 = Doc([Cluster(frozenset({1, 2}))])
    d2 = Doc([Cluster(frozenset({1, 2, 3})), Cluster(frozenset({9}))])
    assert Doc.metric.score(d1, d2) == pytest.approx(0.8)


def test_smatch_example_cai_knight_2013():
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
    @dataclass
    class AMR:
        triples: Collection[Union[Instance, Relation]]

    assert hasattr(Instance, "latent_metric") and not hasattr(Instance, "metric")
    assert isinstance(AMR.metric.metric_config.source.fields["triples"], LatentSetMatching)
    V = Variable
    # "the boy wants to go" vs "the boy wants the football"
    go = AMR([
        Instance(V("a"), "want-01"), Instance(V("b"), "boy"), Instance(V("c"), "go-01"),
        Relation(V("a"), "ARG0", V("b")), Relation(V("a"), "ARG1", V("c")), Relation(V("c"), "ARG0", V("b")),
    ])  # fmt: skip
    football = AMR([
        Instance(V("x"), "want-01"), Instance(V("y"), "boy"), Instance(V("z"), "football"),
        Relation(V("x"), "ARG0", V("y")), Relation(V("x"), "ARG1", V("z")),
    ])  # fmt: skip
    assert AMR.metric.score(football, go) == pytest.approx(8 / 11, abs=1e-12)
    assert AMR.metric.stats(football, go) == (4.0, 5.0, 6.0)
    # variables are aligned one-to-one: a graph cannot reuse one variable for two
    swapped = AMR([Instance(V("x"), "boy"), Instance(V("x"), "want-01")])
    assert AMR.metric.stats(swapped, go)[0] == 1.0


# -------------------------------------------------------------------------------------------------------- bad input
def test_underivable_field_names_class_field_and_type():
    with pytest.raises(TypeError, match=r"class Holder, field 'payload' of type typing.Any"):

        @metametric
        @dataclass
        class Holder:
            payload: Any

    with pytest.raises(TypeError, match=r"class Holder2, field 'table'.*dict"):

        @metametric
        @dataclass
        class Holder2:
            table: dict[str, int]

    class Opaque:
        pass

    with pytest.raises(TypeError, match="Opaque compares by identity"):

        @metametric
        @dataclass
        class Holder3:
            thing: Opaque


def test_decorating_a_non_dataclass():
    with pytest.raises(TypeError, match="dataclass"):

        @metametric
        class NotADataclass:
            x: int


def test_custom_similarity_bad_values():
    for bad in (float("nan"), float("inf"), -1.0):
        sim = dsl.set_matching(dsl.from_function(lambda x, y, v=bad: v, name="badsim"))
        with pytest.raises(ValueError, match="badsim"):
            sim.score([1], [2])
    with pytest.raises(TypeError, match="must return a number"):
        dsl.from_function(lambda x, y: "high").score(1, 2)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="Mention"):
        Mention.metric.score(Mention(1, 2), "not a mention")
    with pytest.raises(TypeError, match="collection"):
        TriggerExtractionOutput.metric.score(TriggerExtractionOutput(5), TriggerExtractionOutput([]))
    with pytest.raises(TypeError, match="TriggerExtractionOutput"):
        TriggerExtractionOutput.metric.score([1], [2])


def test_fbeta_requires_positive_beta():
    from metametric_jax import fbeta

    for b in (0, -2, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="beta"):
            fbeta(b)
    assert math.isclose(fbeta(1)(1.0, 2.0, 2.0), 0.5)


def test_field_with_compare_false_is_not_treated_as_identity_key():
    @metametric(normalizer="f1")
    @dataclass(frozen=True)
    class Tagged:
        label: str
        note: str = field(compare=False)

    @metametric(normalizer="f1")
    @dataclass
    class Doc:
        items: list[Tagged]

    # notes differ: the derived product compares every field, so these do not match
    assert Doc.metric.score(Doc([Tagged("a", "x")]), Doc([Tagged("a", "y")])) == 0.0


def test_custom_normalizers_are_validated():
    from metametric_jax import Normalizer

    with pytest.raises(ValueError, match="name of its own"):
        make_metric(dsl.set_matching(dsl.discrete()), normalizer=Normalizer("f1", lambda xy, xx, yy, zd: xy))
    with pytest.raises(ValueError, match="name of its own"):
        make_metric(dsl.set_matching(dsl.discrete()), normalizer=Normalizer("macro_x", lambda xy, xx, yy, zd: xy))
    with pytest.raises(ValueError, match="elementwise"):
        make_metric(dsl.set_matching(dsl.discrete()), normalizer=Normalizer("m", lambda xy, xx, yy, zd: min(xy, xx)))
