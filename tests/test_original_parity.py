"""Parity with the original ``metametric`` (0.2.1) on random nested structures, where the two libraries agree.

Equivalent dataclasses are decorated with both decorators (ours: ``metametric_jax.metametric``; the original:
``metametric.core.decorator.metametric``) and scored on the same seeded random (prediction, reference) pairs:
documents of entities with mention sets and string labels, ``Union`` and ``Optional`` fields, nested classes with
their own normalizer. The original is the reference; nothing here was computed by our own code first.

Where the two differ by design, the difference is asserted explicitly:

* **constraint spellings** — the original's parser maps ``"->"`` to its ``MANY_TO_ONE`` and ``"1:*"`` to its
  ``ONE_TO_MANY`` (and ``"<-"`` / ``"*:1"`` the other way round), so its arrow and ratio spellings contradict each
  other. Its solver takes row maxima (each *predicted* item aligned to at most one reference item) for
  ``MANY_TO_ONE``, so the original's arrows score as ours do: ours ``"->"`` equals the original's ``"->"``, while
  ours ``"1:*"`` (documented as "each predicted item to at most one reference item", same as ``"->"``) equals the
  original's ``"*:1"``. Ours ``"->"`` and the original's ``"<-"`` are *not* interchangeable (a witness is checked).
* **empty collections** — the original scores two empty collections 1 (and an empty collection's self-similarity
  1); ours scores an empty matching 0, and only a top-level normalizer maps 0/0 to ``empty_score``. The random
  structures here never contain empty collections; the difference is checked on hand-made examples.
* the original's ``UnionMetric`` self-similarity is always 1; ours is the case's self-similarity. The unions here
  only have cases with self-similarity 1, where the two agree.
"""

# No ``from __future__ import annotations``: the original reads field types from ``dataclasses.fields`` literally.

import random
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
import pytest
from metametric.core.decorator import metametric as original_metametric

from metametric_jax import metametric

NORMALIZERS = ("none", "precision", "recall", "f1", "jaccard")
CONSTRAINTS = ("<->", "~", "->", "<-")
LABELS = ("PER", "LOC", "ORG")
PAIRS = 40  # random pairs per configuration


# ------------------------------------------------------------------------------------------------- class families
def entity_family(decorate: Any, normalizer: str, constraint: str, entity_normalizer: str | None = None) -> Any:
    """``Doc(entities: Collection[Entity])``, ``Entity(mentions: Collection[Mention], label: str)``.

    With ``entity_normalizer`` the entity class is decorated too (the documents then match entities softly).
    """

    @dataclass(frozen=True)
    class Mention:
        left: int
        right: int

    @dataclass(frozen=True)
    class Entity:
        mentions: Collection[Mention]
        label: str

    if entity_normalizer is not None:
        Entity = decorate(normalizer=entity_normalizer, constraint=constraint)(Entity)

    @dataclass(frozen=True)
    class Doc:
        entities: Collection[Entity]

    Doc = decorate(normalizer=normalizer, constraint=constraint)(Doc)

    def build(plain: tuple) -> Any:
        return Doc(tuple(Entity(tuple(Mention(a, b) for a, b in ms), label) for label, ms in plain))

    return Doc, build


def union_family(decorate: Any, normalizer: str, constraint: str) -> Any:
    """``Doc(items: Collection[Item], note: Optional[str])``; ``Item(arg: Union[Mention, str], role: Optional[str])``.

    Every case of the unions has self-similarity 1 (see the module docstring).
    """

    @dataclass(frozen=True)
    class Mention:
        left: int
        right: int

    @dataclass(frozen=True)
    class Item:
        arg: Union[Mention, str]
        role: Optional[str]

    @dataclass(frozen=True)
    class Doc:
        items: Collection[Item]
        note: Optional[str]

    Doc = decorate(normalizer=normalizer, constraint=constraint)(Doc)

    def build(plain: tuple) -> Any:
        note, items = plain
        return Doc(tuple(Item(Mention(*arg) if isinstance(arg, tuple) else arg, role) for arg, role in items), note)

    return Doc, build


# ------------------------------------------------------------------------------------------------ random structures
def _mention(rng: random.Random) -> tuple[int, int]:
    a = rng.randrange(8)
    return a, a + rng.randrange(3)


def _mentions(rng: random.Random) -> set[tuple[int, int]]:
    out = set()
    while len(out) < rng.randint(1, 4):
        out.add(_mention(rng))
    return out


def random_entity_pair(rng: random.Random) -> tuple[tuple, tuple]:
    """A reference of 1-4 entities and a perturbed prediction (never an empty collection)."""
    ref: list[tuple[str, tuple]] = []
    while len(ref) < rng.randint(1, 4):
        e = (rng.choice(LABELS), tuple(sorted(_mentions(rng))))
        if e not in ref:
            ref.append(e)
    pred: list[tuple[str, tuple]] = []
    for label, ms in ref:
        if rng.random() < 0.2:
            continue  # missed entity
        kept = {m for m in ms if rng.random() < 0.75}
        if rng.random() < 0.4:
            kept.add(_mention(rng))
        label = rng.choice(LABELS) if rng.random() < 0.15 else label
        e = (label, tuple(sorted(kept or {ms[0]})))
        if e not in pred:
            pred.append(e)
    while not pred or rng.random() < 0.3:
        e = (rng.choice(LABELS), tuple(sorted(_mentions(rng))))
        if e not in pred:
            pred.append(e)
    rng.shuffle(pred)
    return tuple(pred), tuple(ref)


def _item(rng: random.Random) -> tuple[Any, Optional[str]]:
    arg: Any = _mention(rng) if rng.random() < 0.6 else rng.choice(("he", "she", "it"))
    return arg, rng.choice((None, "ARG0", "ARG1"))


def random_union_pair(rng: random.Random) -> tuple[tuple, tuple]:
    """Documents of 1-5 distinct items (a mention or a string, with an optional role) and an optional note."""
    ref: list = []
    while len(ref) < rng.randint(1, 5):
        it = _item(rng)
        if it not in ref:
            ref.append(it)
    pred = [it for it in ref if rng.random() < 0.7]
    while not pred or rng.random() < 0.4:
        it = _item(rng)
        if it not in pred:
            pred.append(it)
    note = rng.choice((None, "a", "b"))
    pred_note = note if rng.random() < 0.8 else rng.choice((None, "a", "b"))
    return (pred_note, tuple(pred)), (note, tuple(ref))


def pairs(kind: str, seed: int) -> list[tuple[tuple, tuple]]:
    rng = random.Random(seed)
    gen = random_entity_pair if kind == "entity" else random_union_pair
    return [gen(rng) for _ in range(PAIRS)]


def scores(family: Any, constraints: tuple[str, str], normalizer: str, data: list, **kw: Any) -> tuple:
    """(ours, original) scores of every pair: ours under ``constraints[0]``, the original under ``constraints[1]``."""
    ours_doc, ours_build = family(metametric, normalizer, constraints[0], **kw)
    orig_doc, orig_build = family(original_metametric, normalizer, constraints[1], **kw)
    ours = np.array([ours_doc.metric.score(ours_build(p), ours_build(r)) for p, r in data])
    orig = np.array([orig_doc.metric.score(orig_build(p), orig_build(r)) for p, r in data])
    return ours, orig


def assert_same(ours: np.ndarray, orig: np.ndarray) -> None:
    np.testing.assert_allclose(ours, orig, rtol=1e-9, atol=1e-12)
    assert np.ptp(orig) > 0, "the random pairs should not all score the same"


# ---------------------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("normalizer", NORMALIZERS)
def test_entities_match_original(normalizer: str, constraint: str) -> None:
    data = pairs("entity", seed=10 * NORMALIZERS.index(normalizer) + CONSTRAINTS.index(constraint))
    assert_same(*scores(entity_family, (constraint, constraint), normalizer, data))


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("normalizer", NORMALIZERS)
def test_unions_and_optionals_match_original(normalizer: str, constraint: str) -> None:
    data = pairs("union", seed=1 + NORMALIZERS.index(normalizer))
    assert_same(*scores(union_family, (constraint, constraint), normalizer, data))


@pytest.mark.parametrize(
    ("normalizer", "entity_normalizer", "constraint"),
    [
        ("f1", "f1", "<->"),
        ("none", "jaccard", "<->"),
        ("precision", "f1", "<->"),
        ("recall", "precision", "<->"),
        ("jaccard", "recall", "<->"),
        ("f1", "jaccard", "~"),
        ("f1", "f1", "->"),
        ("none", "jaccard", "<-"),
    ],
)
def test_nested_normalized_classes_match_original(normalizer: str, entity_normalizer: str, constraint: str) -> None:
    """Entities compared by their own normalized metric: a fractional Gram matrix, solved by assignment."""
    data = pairs("entity", seed=7)
    assert_same(*scores(entity_family, (constraint, constraint), normalizer, data, entity_normalizer=entity_normalizer))


def test_raw_statistics_match_original_self_scores() -> None:
    """Our batch statistics (xy, xx, yy) against the original's score and score_self, normalizer none."""
    data = pairs("entity", seed=11)
    ours_doc, ours_build = entity_family(metametric, "none", "<->", entity_normalizer="f1")
    orig_doc, orig_build = entity_family(original_metametric, "none", "<->", entity_normalizer="f1")
    stats = ours_doc.metric.batch_stats([ours_build(p) for p, _ in data], [ours_build(r) for _, r in data])
    m = orig_doc.metric
    expected = np.array(
        [
            (m.score(orig_build(p), orig_build(r)), m.score_self(orig_build(p)), m.score_self(orig_build(r)))
            for p, r in data
        ]
    )
    np.testing.assert_allclose(stats, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("normalizer", NORMALIZERS)
def test_constraint_spellings_against_original(normalizer: str) -> None:
    """Arrows agree with the original's arrows; our ratio spellings equal the original's swapped ones."""
    data = pairs("entity", seed=23)
    assert_same(*scores(entity_family, ("->", "->"), normalizer, data))
    assert_same(*scores(entity_family, ("<-", "<-"), normalizer, data))
    assert_same(*scores(entity_family, ("1:*", "*:1"), normalizer, data))
    assert_same(*scores(entity_family, ("*:1", "1:*"), normalizer, data))
    assert_same(*scores(entity_family, ("1:*", "->"), normalizer, data))


def test_constraint_arrows_are_not_interchangeable_with_opposite_arrows() -> None:
    """A witness that ours ``->`` is not the original's ``<-`` (and ours ``1:*`` not the original's ``1:*``)."""

    def bag(decorate: Any, constraint: str) -> Any:
        @dataclass(frozen=True)
        class Bag:
            xs: Collection[int]

        return decorate(normalizer="none", constraint=constraint)(Bag)

    ours = {c: bag(metametric, c) for c in ("->", "1:*")}
    orig = {c: bag(original_metametric, c) for c in ("<-", "->", "1:*")}
    p, r = [1, 2, 2], [1, 1, 1, 2]  # predicted 1, 2, 2 all found among the references; references 1, 1, 1, 2 too
    ours_arrow = ours["->"].metric.score(ours["->"](p), ours["->"](r))
    assert ours_arrow == orig["->"].metric.score(orig["->"](p), orig["->"](r)) == 3.0  # row maxima
    assert orig["<-"].metric.score(orig["<-"](p), orig["<-"](r)) == 4.0  # column maxima
    assert ours["1:*"].metric.score(ours["1:*"](p), ours["1:*"](r)) == 3.0
    assert orig["1:*"].metric.score(orig["1:*"](p), orig["1:*"](r)) == 4.0


def test_empty_fields_are_neutral_as_in_the_original() -> None:
    """A field empty on both sides neither adds nor removes agreement, in ours as in the original."""
    ours_doc, ours_build = entity_family(metametric, "none", "<->")
    orig_doc, orig_build = entity_family(original_metametric, "none", "<->")
    empty = (("PER", ()),)  # one entity without mentions: its empty mention field is neutral, its label matches
    assert orig_doc.metric.score(orig_build(empty), orig_build(empty)) == 1.0
    assert ours_doc.metric.score(ours_build(empty), ours_build(empty)) == 1.0

    ours_f1, ours_b = entity_family(metametric, "f1", "<->")
    orig_f1, orig_b = entity_family(original_metametric, "f1", "<->")
    p = (("PER", ()), ("LOC", ((1, 1),)))
    r = (("PER", ()), ("LOC", ((2, 2),)))
    assert orig_f1.metric.score(orig_b(p), orig_b(r)) == pytest.approx(0.5)  # 2·1 / (2 + 2)
    assert ours_f1.metric.score(ours_b(p), ours_b(r)) == pytest.approx(0.5)
    # an entity with mentions against one without: the mention field is not empty on both sides, so no match
    q = (("PER", ((1, 1),)),)
    assert ours_f1.metric.score(ours_b(q), ours_b(empty)) == orig_f1.metric.score(orig_b(q), orig_b(empty)) == 0.0

    # two empty documents: both score 1 under a normalizer (ours through empty_score); the raw overlap of two
    # empty collections is 0 in ours (an empty example adds nothing to micro totals) and 1 in the original
    assert orig_f1.metric.score(orig_b(()), orig_b(())) == 1.0
    assert ours_f1.metric.score(ours_b(()), ours_b(())) == 1.0
    assert ours_doc.metric.score(ours_build(()), ours_build(())) == 0.0
