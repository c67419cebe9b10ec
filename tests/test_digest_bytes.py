"""Reference digests are stable across versions: a state saved by one version pairs with another's.

The values were computed by the generic encoder (one encoder call per value) before its fast paths for integer and
string fields, sets and the final hashing; any change to the bytes of the canonical encoding changes them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from helpers import Span

from metametric_jax.digests import reference_digests


@dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]
    flag: bool
    weight: float
    note: Any


class Plain:
    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b


PINNED = [
    14277605498807360930,
    9092328793646373934,
    17918079495441940265,
    11603010648432188699,
    16172169511347710698,
    15650016332499280379,
]


def test_digests_equal_the_pinned_values() -> None:
    refs = [
        Doc(frozenset({Span(0, 1, "PER"), Span(3, 4, "LOC"), Span(-2, 10**20, "é\udc80")}), True, 2.5, None),
        Doc(frozenset(), False, -0.0, [np.int64(3), (1, "x"), {"k": {1, 2}}]),
        frozenset({Span(1, 2, "a"), Span(1, 2, "b")}),
        Span(True, 2, "subclass values"),  # a bool in an int field: encoded as a bool
        Plain(1, Span(0, 0, "")),
        [np.arange(3), b"bytes", bytearray(b"ba")],
    ]
    assert [int(d) for d in reference_digests(refs)] == PINNED
    assert reference_digests([]).shape == (0,)
    assert reference_digests(refs).dtype == np.uint64


def test_annotations_as_classes_or_strings_give_the_same_bytes() -> None:
    """This module's annotations are strings (``from __future__ import annotations``); a class's own are types."""
    import dataclasses

    typed = dataclasses.make_dataclass("Span", [("start", int), ("end", int), ("label", str)], frozen=True)
    assert typed.__qualname__ == Span.__qualname__
    for a, b in ((typed(0, 1, "PER"), Span(0, 1, "PER")), (typed(3, -4, "é"), Span(3, -4, "é"))):
        assert reference_digests([a]).tolist() == reference_digests([b]).tolist()
    assert reference_digests([typed("0", 1, 2)]).tolist() == reference_digests([Span("0", 1, 2)]).tolist()  # type: ignore[arg-type]
    assert reference_digests([Span(0, 1, "a")]).tolist() != reference_digests([Span(0, 1, "b")]).tolist()


@dataclass(frozen=True)
class Mixed:
    first: tuple[Any, ...]
    n: int
    label: str
    rest: Any
    last: Any


def test_each_dataclass_s_own_encoder_gives_the_generic_encoder_s_bytes() -> None:
    """Every dataclass, whatever its fields, has a straight-line encoder; its bytes are those of the generic one."""
    from metametric_jax import digests

    values = [
        Mixed((1, "a"), 2, "b", None, frozenset({3})),
        Mixed((), -(10**30), "é\udc80", [Span(0, 1, "x")], {"k": 1.5}),
        Mixed((True,), True, 3, "wrong types", b"x"),  # a bool in an int field, an int in a str field
        Mixed((np.int64(1),), np.int64(5), np.str_("s"), np.arange(2), Plain(1, 2)),
        Doc(frozenset({Span(0, 1, "a")}), False, 0.5, Mixed((), 1, "", None, None)),
    ]
    for value in values:
        fields = [f.name for f in dataclasses.fields(value)]
        own, generic = bytearray(), bytearray()
        digests._dataclass(type(value))(value, own)
        digests._object(type(value), fields)(value, generic)
        assert bytes(own) == bytes(generic), value


def test_a_set_s_items_are_encoded_as_the_generic_encoder_encodes_them() -> None:
    """A set's items of an all-``int``/``str`` dataclass take a bytes-returning encoder; the bytes are the generic's."""
    from metametric_jax import digests

    def generic(item: Any) -> bytes:
        out = bytearray()
        if dataclasses.is_dataclass(item):
            digests._object(type(item), [f.name for f in dataclasses.fields(item)])(item, out)
        else:
            digests._encode(item, out)
        return bytes(out)

    for items in (
        {Span(0, 1, "a"), Span(2, 3, "é\udc80"), Span(-1, 10**30, "")},
        {Span(True, 1, "a"), Span(0, 1, "b"), Span(0, np.int64(2), "c"), Span(0, 1, 7)},  # values of other types
        {Span(0, 1, "a"), 3, "x", (1, 2), Mixed((), 1, "", None, None)},  # items of several types
    ):
        want = b"E%d:" % len(items) + b"".join(sorted(generic(item) for item in items))
        assert digests._encoded(frozenset(items)) == want
        assert digests._encoded(set(items)) == want
