"""Plain typed combinators for composing similarities (and their metrics) by hand.

Every function takes keyword arguments and returns a :class:`~metametric_jax.similarity.Similarity`; turn one into an
accumulator class with :func:`metametric_jax.make_metric`. Unknown keyword arguments raise ``TypeError``.

Example:
    >>> from dataclasses import dataclass
    >>> from metametric_jax import dsl
    >>> @dataclass(frozen=True)
    ... class Span:
    ...     start: int
    ...     end: int
    ...     label: str
    >>> overlap = dsl.from_function(lambda a, b: max(0, min(a.end, b.end) - max(a.start, b.start)) / (b.end - b.start))
    >>> spans = dsl.set_matching(dsl.dataclass(Span, label=dsl.discrete()), constraint="<->")
    >>> from metametric_jax import make_metric
    >>> SpanF1 = make_metric(spans, normalizer="f1")
    >>> SpanF1.score([Span(0, 2, "PER")], [Span(0, 2, "PER"), Span(3, 4, "LOC")])
    0.6666666666666666
"""

from __future__ import annotations

import dataclasses as _dc
import sys
from collections.abc import Callable, Mapping
from typing import Any

from metametric_jax._solvers import DEFAULT_WORK_LIMIT
from metametric_jax.composite import Product, UnionSim
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.derive import as_similarity, derive, field_types
from metametric_jax.matching import GraphMatching, LatentSetMatching, MaxPair, SequenceMatching, SetMatching
from metametric_jax.normalizer import Normalizer
from metametric_jax.similarity import Discrete, FromFunction, Normalized, Preprocess, Similarity

__all__ = [
    "auto",
    "discrete",
    "from_function",
    "preprocess",
    "dataclass",
    "union",
    "set_matching",
    "sequence_matching",
    "graph_matching",
    "latent_set_matching",
    "max_pair",
    "normalize",
]

SimLike = Any  # a Similarity, a metric class, or a function (x, y) -> float


def auto(tp: Any, *, constraint: str | Constraint = "<->") -> Similarity:
    """The similarity derived from a type, as ``@metametric`` would derive it."""
    return derive(tp, constraint)


def discrete(tp: Any = None) -> Similarity:
    """1 if equal, else 0."""
    return Discrete(tp)


def from_function(
    fn: Callable[[Any, Any], float],
    *,
    name: str | None = None,
    self_fn: Callable[[Any], float] | None = None,
    self_bounded: bool = False,
) -> Similarity:
    """A similarity from a function ``fn(x, y) -> float`` (values must be finite and non-negative).

    Declare ``self_bounded=True`` when ``fn(x, y) <= min(fn(x, x), fn(y, y))`` (overlap ratios such as Dice): a
    collection's self-overlap is then the sum of its items' self-similarities, with no assignment problem.
    """
    return FromFunction(fn, name=name, self_fn=self_fn, self_bounded=self_bounded)


def preprocess(inner: SimLike, *, pred: Callable[[Any], Any], ref: Callable[[Any], Any] | None = None) -> Similarity:
    """Compare ``pred(x)`` with ``ref(y)`` under ``inner`` (``ref`` defaults to ``pred``)."""
    return Preprocess(as_similarity(inner, "preprocess"), pred, ref)


def dataclass(cls: type, *, constraint: str | Constraint = "<->", **fields: SimLike) -> Similarity:
    """The product similarity of a dataclass with per-field overrides; the other fields are derived.

    Raises:
        TypeError: if ``cls`` is not a dataclass, or an override names no field of it.
    """
    if not (isinstance(cls, type) and _dc.is_dataclass(cls)):
        raise TypeError(f"dsl.dataclass expects a dataclass; found {cls!r}.")
    names = [f.name for f in _dc.fields(cls)]
    unknown = sorted(set(fields) - set(names))
    if unknown:
        raise TypeError(f"dsl.dataclass({cls.__name__}): no field(s) {unknown}; the fields are {names}.")
    hints = field_types(cls, sys._getframe(1).f_locals)
    cons = parse_constraint(constraint)
    sims = {
        n: as_similarity(fields[n], f"field {n!r}")
        if n in fields
        else derive(hints[n], cons, where=f"class {cls.__name__}, field {n!r} of type {hints[n]!r}")
        for n in names
    }
    return Product(cls, sims)


def union(cases: Mapping[Any, SimLike] | None = None, *, constraint: str | Constraint = "<->") -> Similarity:
    """Per-case similarity over ``{type: similarity}`` (a type mapped to ``...`` or ``None`` is derived)."""
    if not cases:
        raise TypeError("dsl.union needs a mapping {type: similarity} with at least one case.")
    return UnionSim(
        {
            t: derive(t, constraint) if s is None or s is Ellipsis else as_similarity(s, f"case {t!r}")
            for t, s in cases.items()
        }
    )


def set_matching(inner: SimLike, *, constraint: str | Constraint = "<->") -> Similarity:
    """Matching of two collections under ``constraint`` (``<->``, ``->``, ``<-``, ``~`` or ``1:1`` ...)."""
    return SetMatching(as_similarity(inner, "set_matching"), constraint)


def sequence_matching(inner: SimLike) -> Similarity:
    """Best monotone alignment of two sequences (the LCS when ``inner`` is discrete)."""
    return SequenceMatching(as_similarity(inner, "sequence_matching"))


def graph_matching(
    inner: SimLike,
    *,
    constraint: str | Constraint = "<->",
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> Similarity:
    """Matching of graph nodes that preserves reachability, exact within ``work_limit`` work units per pair.

    ``time_limit`` adds a wall-clock cap in seconds (off by default: a score it stops is not reproducible).
    """
    return GraphMatching(
        as_similarity(inner, "graph_matching"), constraint, work_limit=work_limit, time_limit=time_limit
    )


def latent_set_matching(
    inner: SimLike,
    *,
    constraint: str | Constraint = "<->",
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> Similarity:
    """Joint matching of elements and their latent variables (Smatch-style), exact within ``work_limit`` per pair.

    ``time_limit`` adds a wall-clock cap in seconds (off by default: a score it stops is not reproducible).
    """
    return LatentSetMatching(
        as_similarity(inner, "latent_set_matching"), constraint, work_limit=work_limit, time_limit=time_limit
    )


def max_pair(inner: SimLike) -> Similarity:
    """The best-scoring single pair of two collections."""
    return MaxPair(as_similarity(inner, "max_pair"))


def normalize(
    inner: SimLike, *, normalizer: str | Normalizer, zero_division: float = 0.0, empty_score: float = 1.0
) -> Similarity:
    """An inner normalized similarity, e.g. CEAF's φ4 = ``normalize(set_matching(discrete()), normalizer="dice")``."""
    return Normalized(as_similarity(inner, "normalize"), normalizer, zero_division, empty_score)
