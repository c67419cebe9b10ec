"""Coreference documents: mentions (token spans), entities (clusters of mentions) and a document's partition.

The conventions (spans compared exactly, repeated mentions counted as the CoNLL-2012 reference scorer v8.01 counts
them) are those of :mod:`metametric_jax.tasks.coref`, which re-exports these classes.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["Mention", "Entity", "CorefDocument", "REPEATED_MENTIONS", "check_repeated_mentions"]

#: The ways of counting repeated mentions: ``"scorer"`` (as scorer v8.01) or ``"first"`` (each span kept once).
REPEATED_MENTIONS = ("scorer", "first")


def check_repeated_mentions(value: str) -> None:
    """Raise ``ValueError`` unless ``value`` is one of :data:`REPEATED_MENTIONS`."""
    if value not in REPEATED_MENTIONS:
        raise ValueError(f"repeated_mentions must be one of {list(REPEATED_MENTIONS)}; found {value!r}.")


@dataclasses.dataclass(frozen=True, order=True)
class Mention:
    """A mention: the token span ``start..end`` (both inclusive, 0-based) within its document.

    Attributes:
        start: index of the first token.
        end: index of the last token (``end >= start``).
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        for field in ("start", "end"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"Mention.{field} must be an int token index; found {type(v).__name__} {v!r}.")
        if self.start < 0 or self.end < self.start:
            raise ValueError(
                f"A mention is a span start..end with 0 <= start <= end; found ({self.start}, {self.end})."
            )

    @classmethod
    def of(cls, value: Mention | int | tuple[int, int] | Sequence[int]) -> Mention:
        """A mention from a ``Mention``, a token index ``i`` (the span ``(i, i)``) or a ``(start, end)`` pair."""
        if isinstance(value, Mention):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return cls(int(value), int(value))
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return cls(int(value[0]), int(value[1]))
        raise TypeError(
            f"Expected a mention: a Mention, a token index (int) or a (start, end) pair; found {type(value).__name__} "
            f"{value!r}."
        )


@dataclasses.dataclass(frozen=True)
class Entity:
    """An entity (a coreference cluster): its mentions, in document order.

    Attributes:
        mentions: one or more mentions.
    """

    mentions: tuple[Mention, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.mentions, tuple):
            object.__setattr__(self, "mentions", tuple(self.mentions))
        if not self.mentions:
            raise ValueError("An entity needs at least one mention; found an empty entity.")
        for m in self.mentions:
            if not isinstance(m, Mention):
                raise TypeError(f"Entity.mentions must be Mention objects; found {type(m).__name__} {m!r}.")

    @classmethod
    def of(cls, mentions: Entity | Iterable[Mention | int | tuple[int, int]]) -> Entity:
        """An entity from mentions given as ``Mention`` objects, token indices or ``(start, end)`` pairs."""
        return mentions if isinstance(mentions, Entity) else cls(tuple(Mention.of(m) for m in mentions))

    def __len__(self) -> int:
        return len(self.mentions)


@dataclasses.dataclass(frozen=True)
class CorefDocument:
    """A document's coreference partition: its entities (name and part identify it; they are not scored).

    Attributes:
        entities: the entities, each a non-empty tuple of mentions.
        name: the document's name (CoNLL-2012 ``#begin document (name); part NNN``).
        part: the document's part number, or ``None``.
    """

    entities: tuple[Entity, ...]
    name: str = ""
    part: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.entities, tuple):
            object.__setattr__(self, "entities", tuple(self.entities))
        for e in self.entities:
            if not isinstance(e, Entity):
                raise TypeError(
                    f"CorefDocument.entities must be Entity objects; found {type(e).__name__} {e!r} "
                    "(use CorefDocument.from_clusters for lists of mentions)."
                )

    @classmethod
    def from_clusters(
        cls, clusters: Iterable[Iterable[Mention | int | tuple[int, int]]], name: str = "", part: int | None = None
    ) -> CorefDocument:
        """A document from clusters of mentions (``Mention`` objects, token indices or ``(start, end)`` pairs).

        >>> doc = CorefDocument.from_clusters([[(0, 1), (5, 5)], [3]])
        >>> [len(e) for e in doc.entities], doc.entities[1].mentions[0]
        ([2, 1], Mention(start=3, end=3))
        """
        return cls(tuple(Entity.of(c) for c in clusters), name=name, part=part)

    @classmethod
    def of(cls, value: CorefDocument | Iterable[Iterable[Any]]) -> CorefDocument:
        """A ``CorefDocument`` passed through, or one built by :meth:`from_clusters`."""
        if isinstance(value, CorefDocument):
            return value
        try:
            return cls.from_clusters(value)
        except TypeError as err:
            raise TypeError(
                f"Expected a CorefDocument or a list of clusters (lists of mentions); found {type(value).__name__} "
                f"({err})."
            ) from None

    @property
    def key(self) -> tuple[str, int | None]:
        """The identifier ``(name, part)``."""
        return (self.name, self.part)

    def mentions(self) -> list[Mention]:
        """All mentions, entity by entity (repeated spans included)."""
        return [m for e in self.entities for m in e.mentions]

    def clusters(self) -> list[list[tuple[int, int]]]:
        """The entities as lists of ``(start, end)`` pairs."""
        return [[(m.start, m.end) for m in e.mentions] for e in self.entities]

    def repeated_mentions(self) -> list[Mention]:
        """Spans that occur more than once (each listed once per extra occurrence)."""
        seen: set[Mention] = set()
        out = []
        for m in self.mentions():
            if m in seen:
                out.append(m)
            seen.add(m)
        return out

    def first_occurrences(self) -> CorefDocument:
        """The document with every repeated span kept once, at its first occurrence; entities left empty dropped."""
        seen: set[Mention] = set()
        entities = []
        for e in self.entities:
            kept = [m for m in e.mentions if not (m in seen or seen.add(m))]  # type: ignore[func-returns-value]
            if kept:
                entities.append(Entity(tuple(kept)))
        return CorefDocument(tuple(entities), name=self.name, part=self.part)


def documents_of_spans(
    documents: Sequence[tuple[Sequence[Sequence[tuple[int, int]]], str, int | None]],
) -> list[CorefDocument]:
    """Documents from clusters of ``(start, end)`` int pairs with ``0 <= start <= end`` and no empty cluster.

    What :meth:`CorefDocument.from_clusters` gives for them, built without its checks, which such clusters (those a
    file reader has read) always pass: several times quicker. A span that occurs in several documents or clusters
    is one :class:`Mention` object.

    Args:
        documents: ``(clusters, name, part)`` of each document.

    Raises:
        ValueError: on a span or cluster that :meth:`CorefDocument.from_clusters` would refuse.
    """
    clusters_of = [cluster for clusters, _, _ in documents for cluster in clusters]
    pairs = list(set(itertools.chain.from_iterable(clusters_of)))
    if not all(clusters_of) or not set(map(len, pairs)) <= {2}:
        raise ValueError("documents_of_spans takes non-empty clusters of (start, end) ints, 0 <= start <= end.")
    starts, ends = (list(side) for side in zip(*pairs)) if pairs else ([], [])
    if (
        not set(map(type, starts + ends)) <= {int}
        or (starts and min(starts) < 0)
        or not all(map(operator.le, starts, ends))
    ):
        raise ValueError("documents_of_spans takes non-empty clusters of (start, end) ints, 0 <= start <= end.")
    new, put = object.__new__, object.__setattr__
    mentions = list(map(new, itertools.repeat(Mention, len(pairs))))
    for field, values in (("start", starts), ("end", ends)):
        for _ in map(put, mentions, itertools.repeat(field), values):
            pass
    mention_of = dict(zip(pairs, mentions)).__getitem__
    entities = list(map(new, itertools.repeat(Entity, len(clusters_of))))
    for _ in map(put, entities, itertools.repeat("mentions"), [tuple(map(mention_of, c)) for c in clusters_of]):
        pass
    out = []
    at = 0
    for clusters, name, part in documents:
        doc = new(CorefDocument)
        put(doc, "entities", tuple(entities[at : at + len(clusters)]))
        put(doc, "name", name)
        put(doc, "part", part)
        out.append(doc)
        at += len(clusters)
    return out
