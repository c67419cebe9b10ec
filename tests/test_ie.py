"""Relation and event extraction metrics: Li, Ji and Huang (2013)'s example, parity with metametric, plain counts."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from metametric.metrics import event_extraction as mm_event
from metametric.structures import ie as mm_ie

from metametric_jax import dsl
from metametric_jax.tasks.ie import (
    Argument,
    ArgumentClassification,
    ArgumentIdentification,
    Entity,
    Event,
    EventExtraction,
    Mention,
    Relation,
    RelationBoundaries,
    RelationExtraction,
    RelationStrict,
    Trigger,
    TriggerClassification,
    TriggerIdentification,
)


def li_ji_huang_2013() -> tuple[list[Event], list[Event]]:
    """The example sentence of Li, Ji and Huang (ACL 2013), as metametric's test encodes it."""
    baghdad, cameraman, died = Mention(4, 11), Mention(15, 24), Mention(25, 29)
    tank, fired, hotel = Mention(38, 51), Mention(52, 57), Mention(65, 80)
    ref = [
        Event(
            Trigger(died, "die"),
            (Argument(baghdad, "place"), Argument(cameraman, "victim"), Argument(tank, "instrument")),
        ),
        Event(
            Trigger(fired, "attack"),
            (
                Argument(tank, "instrument"),
                Argument(baghdad, "place"),
                Argument(cameraman, "target"),
                Argument(hotel, "target"),
            ),
        ),
    ]
    pred = [
        Event(Trigger(died, "die"), (Argument(hotel, "place"), Argument(cameraman, "victim"))),
        Event(
            Trigger(fired, "attack"),
            (Argument(tank, "attacker"), Argument(baghdad, "place"), Argument(hotel, "target")),
        ),
    ]
    return pred, ref


def test_li_ji_huang_example() -> None:
    pred, ref = li_ji_huang_2013()
    out = EventExtraction.from_model_output([pred], [ref]).compute()
    for name in ("trigger_identification", "trigger_classification"):
        for key in ("precision", "recall", "f1"):
            assert float(out[name][key]) == pytest.approx(1.0, abs=1e-6)
    expected = {
        # (matched, predicted, reference) arguments, worked by hand
        "argument_identification": (4, 5, 7),
        "argument_classification": (3, 5, 7),
    }
    rounded = {"argument_identification": (0.8, 0.57, 0.67), "argument_classification": (0.6, 0.43, 0.5)}
    for name, (hit, n_pred, n_ref) in expected.items():
        p, r = Fraction(hit, n_pred), Fraction(hit, n_ref)
        f = 2 * p * r / (p + r)
        for key, value, approx in zip(("precision", "recall", "f1"), (p, r, f), rounded[name]):
            assert float(out[name][key]) == pytest.approx(float(value), abs=1e-6)
            assert float(out[name][key]) == pytest.approx(approx, abs=0.01)
    assert ArgumentClassification.stats(pred, ref) == (3.0, 5.0, 7.0)


def test_li_ji_huang_example_against_metametric() -> None:
    pred, ref = li_ji_huang_2013()
    agg = mm_event.event_extraction_suite.new()
    agg.update_single(_to_mm_events(pred), _to_mm_events(ref))
    theirs = agg.compute()
    ours = EventExtraction.from_model_output([pred], [ref]).compute()
    for name in ours:
        for key in ("precision", "recall", "f1"):
            assert float(ours[name][f"macro_{key}"]) == pytest.approx(theirs[f"{name}-{key}"], abs=1e-6)


# ---------------------------------------------------------------------------------------------- parity (random)
def _to_mm_mention(m: Mention) -> mm_ie.Mention:
    return mm_ie.Mention(left=m.left, right=m.right)


def _to_mm_events(events: list[Event]) -> mm_ie.EventSet:
    return mm_ie.EventSet(
        events=[
            mm_ie.Event(
                trigger=mm_ie.Trigger(mention=_to_mm_mention(e.trigger.mention), type=e.trigger.type),
                args=[mm_ie.Argument(mention=_to_mm_mention(a.mention), role=a.role) for a in e.args],
            )
            for e in events
        ]
    )


def _random_events(rng: random.Random, least: int = 0) -> list[Event]:
    out = []
    for _ in range(rng.randint(least, 4)):
        start = rng.randrange(4)
        trigger = Trigger(Mention(start, start + 1), rng.choice("AB"))
        args = []
        for _ in range(rng.randint(least, 4)):
            s = rng.randrange(5)
            args.append(Argument(Mention(s, s + rng.randint(1, 2)), rng.choice("xy")))
        out.append(Event(trigger, tuple(args)))
    return out


PAIRS = [
    (TriggerIdentification, mm_event.trigger_identification),
    (TriggerClassification, mm_event.trigger_classification),
    (ArgumentIdentification, mm_event.argument_identification),
    (ArgumentClassification, mm_event.argument_classification),
]


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=[p[0]._config.name for p in PAIRS])
def test_event_metrics_equal_metametric_raw_statistics(ours, theirs) -> None:
    # metametric gives an empty collection a self-similarity of 1 (an event without arguments counts as one
    # argument); the semantics agree on non-empty collections, which is what is compared here.
    rng = random.Random(7)
    for _ in range(80):
        pred, ref = _random_events(rng, least=1), _random_events(rng, least=1)
        mp, mr = _to_mm_events(pred), _to_mm_events(ref)
        expected = (theirs.score(mp, mr), theirs.score_self(mp), theirs.score_self(mr))
        assert ours.stats(pred, ref) == pytest.approx(expected), (pred, ref)


def test_strict_relations_equal_metametric() -> None:
    rng = random.Random(3)
    for _ in range(60):
        rels = [[_random_relation(rng, typed=False) for _ in range(rng.randint(1, 5))] for _ in range(2)]
        mm_sets = [
            mm_ie.RelationSet(
                relations=[
                    mm_ie.Relation(type=r.type, subj=_to_mm_mention(r.subj), obj=_to_mm_mention(r.obj)) for r in rs
                ]
            )
            for rs in rels
        ]
        m = mm_ie.RelationSet.metric
        expected = (m.score(*mm_sets), m.score_self(mm_sets[0]), m.score_self(mm_sets[1]))
        assert RelationStrict.stats(*rels) == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------- relations (plain)
def _random_relation(rng: random.Random, typed: bool = True) -> Relation:
    def mention() -> Mention:
        s = rng.randrange(4)
        return Mention(s, s + rng.randint(1, 2), rng.choice(("PER", "ORG")) if typed else None)

    return Relation(rng.choice(("works_for", "located_in")), mention(), mention())


def _plain_counts(preds: list[list[Relation]], refs: list[list[Relation]], key) -> np.ndarray:
    rows = []
    for p, r in zip(preds, refs):
        cp, cr = Counter(map(key, p)), Counter(map(key, r))
        rows.append((sum((cp & cr).values()), len(p), len(r)))
    return np.array(rows, dtype=np.float64)


def test_strict_and_boundaries_relations_against_plain_counting() -> None:
    rng = random.Random(11)
    preds = [[_random_relation(rng) for _ in range(rng.randint(0, 6))] for _ in range(100)]
    refs = [[_random_relation(rng) for _ in range(rng.randint(0, 6))] for _ in range(100)]
    strict = _plain_counts(preds, refs, lambda r: r)
    loose = _plain_counts(preds, refs, lambda r: (r.type, r.subj.left, r.subj.right, r.obj.left, r.obj.right))
    assert (loose[:, 0] >= strict[:, 0]).all() and (loose[:, 0] > strict[:, 0]).any()
    out = RelationExtraction.from_model_output(preds, refs).compute()
    for name, counts in (("strict", strict), ("boundaries", loose)):
        hit, n_pred, n_ref = counts.sum(0)
        assert float(out[name]["precision"]) == pytest.approx(hit / n_pred, abs=1e-6)
        assert float(out[name]["recall"]) == pytest.approx(hit / n_ref, abs=1e-6)
        assert float(out[name]["f1"]) == pytest.approx(2 * hit / (n_pred + n_ref), abs=1e-6)
        per_example = [
            1.0 if p == r == 0 else (2 * h / (p + r)) for h, p, r in counts
        ]  # two empty examples score 1 (empty_score)
        assert float(out[name]["macro_f1"]) == pytest.approx(np.mean(per_example), abs=1e-6)
    np.testing.assert_array_equal(RelationStrict.batch_stats(preds, refs), strict)
    np.testing.assert_array_equal(RelationBoundaries.batch_stats(preds, refs), loose)


def test_boundaries_ignore_entity_types_but_not_relation_type() -> None:
    gold = Relation("works_for", Mention(0, 1, "PER"), Mention(3, 5, "ORG"))
    wrong_entity_type = Relation("works_for", Mention(0, 1, "ORG"), Mention(3, 5, "ORG"))
    wrong_relation = Relation("located_in", Mention(0, 1, "PER"), Mention(3, 5, "ORG"))
    assert RelationStrict.score([wrong_entity_type], [gold]) == 0.0
    assert RelationBoundaries.score([wrong_entity_type], [gold]) == 1.0
    assert RelationBoundaries.score([wrong_relation], [gold]) == 0.0
    assert RelationBoundaries.score([Relation("works_for", gold.obj, gold.subj)], [gold]) == 0.0  # direction counts


def test_identification_ignores_roles_and_types() -> None:
    trig = Trigger(Mention(2, 3), "attack")
    gold = [Event(trig, (Argument(Mention(0, 1), "attacker"), Argument(Mention(5, 7), "target")))]
    pred = [Event(Trigger(Mention(2, 3), "die"), (Argument(Mention(0, 1), "victim"),))]
    assert TriggerIdentification.stats(pred, gold) == (1.0, 1.0, 1.0)
    assert TriggerClassification.stats(pred, gold) == (0.0, 1.0, 1.0)
    # arguments are counted only inside events whose whole trigger matches
    assert ArgumentIdentification.stats(pred, gold) == (0.0, 1.0, 2.0)
    pred = [Event(trig, (Argument(Mention(0, 1), "victim"),))]
    assert ArgumentIdentification.stats(pred, gold) == (1.0, 1.0, 2.0)
    assert ArgumentClassification.stats(pred, gold) == (0.0, 1.0, 2.0)


def test_event_matching_is_one_to_one_and_maximizes_arguments() -> None:
    trig = Trigger(Mention(0, 1), "attack")
    a, b, c = (Argument(Mention(i, i + 1), "r") for i in (3, 5, 7))
    gold = [Event(trig, (a,)), Event(trig, (b, c))]
    pred = [Event(trig, (a, b, c))]  # may take one gold event only: the one with two matching arguments
    assert ArgumentClassification.stats(pred, gold) == (2.0, 3.0, 3.0)


def test_macro_average_and_merging() -> None:
    rng = random.Random(5)
    preds = [_random_events(rng) for _ in range(40)]
    refs = [_random_events(rng) for _ in range(40)]
    whole = EventExtraction.from_model_output(preds, refs).compute()
    state = EventExtraction.empty()
    for i in range(0, 40, 9):
        state = state.merge(EventExtraction.from_model_output(preds[i : i + 9], refs[i : i + 9]))
    merged = state.compute()
    for name in whole:
        for key, value in whole[name].items():
            assert float(merged[name][key]) == pytest.approx(float(value), abs=1e-6)
    stats = ArgumentClassification.batch_stats(preds, refs)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(
            (stats[:, 1] == 0) & (stats[:, 2] == 0), 1.0, np.nan_to_num(2 * stats[:, 0] / (stats[:, 1] + stats[:, 2]))
        )
    assert float(whole["argument_classification"]["macro_f1"]) == pytest.approx(per.mean(), abs=1e-6)


def test_decorated_structures_and_dsl_composition() -> None:
    m1, m2, m3 = Mention(0, 2), Mention(3, 4), Mention(6, 9)
    assert Entity.metric.score(Entity(frozenset({m1, m2})), Entity(frozenset({m2, m3}))) == 1.0
    assert Mention.metric.score(Mention(0, 2, "PER"), Mention(0, 2, "ORG")) == 0.0
    # a many-to-one variant composed with the DSL: every predicted relation may match one reference relation
    loose = dsl.metric(dsl.set_matching(Relation, constraint="->"), normalizer="precision")
    r = Relation("t", m1, m2)
    assert loose.stats([r, r], [r]) == (2.0, 2.0, 1.0)


def test_accumulator_laws() -> None:
    from metametric_jax.testing import check_accumulator_laws

    rng = random.Random(13)
    preds = [_random_events(rng) for _ in range(9)]
    refs = [_random_events(rng) for _ in range(9)]
    check_accumulator_laws(EventExtraction, preds, refs)
    rels = [[_random_relation(rng) for _ in range(rng.randint(0, 4))] for _ in range(18)]
    check_accumulator_laws(RelationExtraction, rels[:9], rels[9:])
