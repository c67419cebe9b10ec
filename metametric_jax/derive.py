"""Derive a similarity from a type, and the ``@metametric`` decorator.

Type-directed dispatch (Chen et al., EMNLP 2023, §4), tried in this order:

1. ``Annotated[T, sim]`` → ``sim`` (a :class:`~metametric_jax.similarity.Similarity`, a metric class, or a
   function ``(x, y) -> float``);
2. :class:`~metametric_jax.Variable` → a latent variable;
3. a type that already has a metric (``T.metric`` or ``T.latent_metric``) → that metric, normalized as declared;
4. a dataclass → the product of its fields' similarities;
5. ``Union[...]`` / ``Optional[...]`` / ``A | B`` → per-case similarity, 0 across cases;
6. ``Collection[T]`` (``list[T]``, ``tuple[T, ...]``, ``set[T]``, ``frozenset[T]``, ``Sequence[T]``, ...) → set
   matching under the class's constraint; latent set matching when ``T`` carries variables;
7. anything else with structural equality (``str``, ``int``, enums, ``Literal``, fixed tuples...) → discrete.

Every field of a dataclass takes part, ``compare=False`` fields included, and instances are compared field by field
(so subclass instances and classes with their own ``__eq__`` score as their fields do).

A type that cannot be derived (``Any``, a ``dict``, a callable, a class whose equality is identity) raises
``TypeError`` at decoration time naming the class, the field and the type.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import sys
import types
import typing
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from metametric_jax.accumulate import Metric, make_metric
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.matching import LatentSetMatching, SetMatching
from metametric_jax.normalizer import Normalizer, parse_normalizer
from metametric_jax.similarity import Discrete, FromFunction, Normalized, Product, Similarity, UnionSim
from metametric_jax.variable import Variable, VariableSim

__all__ = ["derive", "metametric", "metric_similarity", "as_similarity", "field_types"]

T = TypeVar("T")

_COLLECTIONS = (
    list,
    set,
    frozenset,
    tuple,
    cabc.Collection,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Set,
    cabc.MutableSet,
    cabc.Iterable,
)
_REFUSED_ORIGINS = (dict, cabc.Mapping, cabc.MutableMapping, cabc.Callable, type)


def metric_similarity(metric: type[Metric]) -> Similarity:
    """The similarity a metric class stands for when used inside another structure (normalized as declared)."""
    cfg = metric._config
    source = cfg.source
    if not isinstance(source, Similarity):
        raise TypeError(f"Metric {cfg.name} was not built from a similarity and cannot be nested.")
    if cfg.normalizer.is_identity:
        return source
    return Normalized(source, cfg.normalizer, cfg.zero_division, cfg.empty_score)


def as_similarity(obj: Any, what: str = "value") -> Similarity:
    """Coerce a similarity, a metric class or a function ``(x, y) -> float`` into a similarity."""
    if isinstance(obj, Similarity):
        return obj
    if isinstance(obj, type) and issubclass(obj, Metric):
        return metric_similarity(obj)
    nested = getattr(obj, "metric", None) if isinstance(obj, type) else None
    if isinstance(nested, type) and issubclass(nested, Metric):
        return metric_similarity(nested)
    if callable(obj) and not isinstance(obj, type):
        return FromFunction(obj)
    raise TypeError(
        f"{what}: expected a Similarity, a metric class or a function (x, y) -> float; found {type(obj).__name__}."
    )


def _own_metric(tp: Any) -> type[Metric] | None:
    for attr in ("metric", "latent_metric"):
        m = tp.__dict__.get(attr) if isinstance(tp, type) else None
        if isinstance(m, type) and issubclass(m, Metric):
            return m
    return None


def _has_structural_eq(tp: type) -> bool:
    return any("__eq__" in vars(k) for k in tp.__mro__ if k is not object)


def derive(tp: Any, constraint: str | Constraint = "<->", *, where: str = "") -> Similarity:
    """The similarity derived from a type (see module docstring).

    Args:
        tp: the type.
        constraint: the matching constraint used for collections.
        where: context for error messages (``"class C, field f"``).

    Raises:
        TypeError: if the type cannot be derived; the message names where and what.
    """
    return _derive(tp, parse_constraint(constraint), where or f"type {tp!r}", set())


def _derive(tp: Any, constraint: Constraint, where: str, stack: set[Any], localns: Any = None) -> Similarity:
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        for m in meta:
            if isinstance(m, Similarity) or (isinstance(m, type) and issubclass(m, Metric)):
                return as_similarity(m, where)
        for m in meta:
            if callable(m):
                return as_similarity(m, where)
        return _derive(base, constraint, where, stack, localns)
    if tp is Variable:
        return VariableSim()
    supertype = getattr(tp, "__supertype__", None)  # typing.NewType
    if supertype is not None and callable(tp):
        return _derive(supertype, constraint, where, stack, localns)
    own = _own_metric(tp)
    if own is not None:
        return metric_similarity(own)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if tp in stack:
            raise TypeError(
                f"Cannot derive a similarity for {where}: {tp.__name__} refers to itself; give the recursive field "
                "an explicit similarity with Annotated[T, sim]."
            )
        return _derive_dataclass(tp, constraint, stack | {tp}, localns)
    if origin is Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        cases = {}
        for case in get_args(tp):
            cases[case] = (
                Discrete(type(None)) if case is type(None) else _derive(case, constraint, where, stack, localns)
            )
        return UnionSim(cases)
    if origin is Literal:
        return Discrete(tp)
    if origin is not None and origin in _COLLECTIONS:
        args = get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            for a in args:
                _derive(a, constraint, where, stack, localns)  # every position must be derivable
            return Discrete(tp)
        if not args:
            raise TypeError(f"Cannot derive a similarity for {where}: collection type {tp!r} needs an element type.")
        inner = _derive(args[0], constraint, where, stack, localns)
        if inner.has_variables:
            return LatentSetMatching(inner, constraint)
        return SetMatching(inner, constraint)
    if origin is not None and origin in _REFUSED_ORIGINS:
        raise TypeError(
            f"Cannot derive a similarity for {where}: type {tp!r} is a mapping or callable; annotate it with "
            "Annotated[T, similarity]."
        )
    if tp is Any or isinstance(tp, TypeVar) or tp in (dict, type, object) or tp is typing.Callable:
        raise TypeError(
            f"Cannot derive a similarity for {where}: type {tp!r} has no structure to compare; annotate it with "
            "Annotated[T, similarity]."
        )
    if isinstance(tp, type) and tp in _COLLECTIONS and tp not in (tuple,):
        raise TypeError(
            f"Cannot derive a similarity for {where}: collection type {tp.__name__} needs an element type, e.g. "
            f"{tp.__name__}[T]."
        )
    if isinstance(tp, type) and (tp.__module__ == "numpy" or tp.__module__.startswith(("jax", "jaxlib"))):
        raise TypeError(
            f"Cannot derive a similarity for {where}: {tp.__module__}.{tp.__name__} values compare elementwise; "
            "annotate the field with Annotated[T, similarity]."
        )
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum) or _has_structural_eq(tp):
            return Discrete(tp)
        raise TypeError(
            f"Cannot derive a similarity for {where}: type {tp.__name__} compares by identity (no __eq__); make it "
            "a dataclass or annotate it with Annotated[T, similarity]."
        )
    if isinstance(tp, str):
        raise TypeError(f"Cannot derive a similarity for {where}: unresolved forward reference {tp!r}.")
    raise TypeError(f"Cannot derive a similarity for {where}: unsupported type {tp!r}.")


def field_types(cls: type, localns: Any = None) -> dict[str, Any]:
    """Resolved field types of a dataclass (``Annotated`` kept), also for classes defined inside functions."""
    try:
        return get_type_hints(cls, localns=dict(localns) if localns else None, include_extras=True)
    except NameError as e:
        out = {}
        for f in dataclasses.fields(cls):
            if isinstance(f.type, str):
                raise TypeError(
                    f"Cannot derive a similarity for class {cls.__name__}: unresolved annotation {f.type!r} of field "
                    f"{f.name!r} ({e})."
                ) from None
            out[f.name] = f.type
        return out


def _derive_dataclass(cls: type, constraint: Constraint, stack: set[Any], localns: Any = None) -> Product:
    hints = field_types(cls, localns)
    fields = {}
    for f in dataclasses.fields(cls):
        tp = hints.get(f.name, f.type)
        fields[f.name] = _derive(
            tp, constraint, f"class {cls.__name__}, field {f.name!r} of type {tp!r}", stack, localns
        )
    return Product(cls, fields)


def metametric(
    cls: type[T] | None = None,
    /,
    *,
    normalizer: str | Normalizer = "none",
    constraint: str | Constraint = "<->",
    zero_division: float = 0.0,
    empty_score: float = 1.0,
) -> Any:
    """Decorate a dataclass to derive its metric.

    Sets ``cls.metric`` (or ``cls.latent_metric`` when the class has :class:`~metametric_jax.Variable` fields), an
    accumulator class with ``score``, ``explain``, ``empty``, ``from_model_output``, ``merge``, ``reduce`` and
    ``compute``.

    Args:
        cls: the dataclass (when used bare, ``@metametric``).
        normalizer: ``none`` (default), ``precision``, ``recall``, ``jaccard``, ``dice`` / ``f1``, ``f{β}``, or a
            :class:`~metametric_jax.Normalizer`.
        constraint: the matching constraint of the class's collection fields: ``<->`` / ``1:1`` (default),
            ``->`` / ``1:*``, ``<-`` / ``*:1``, ``~`` / ``*:*``.
        zero_division: value of a 0/0 other than two empty structures.
        empty_score: normalized score of two empty structures.

    Raises:
        ValueError: on an unknown normalizer or constraint (listing the valid ones).
        TypeError: if the class is not a dataclass, or a field's type cannot be derived.

    Example:
        >>> from dataclasses import dataclass
        >>> @metametric(normalizer="f1")
        ... @dataclass(frozen=True)
        ... class Doc:
        ...     spans: frozenset[tuple[int, int]]
        >>> Doc.metric.score(Doc(frozenset({(0, 1), (2, 3)})), Doc(frozenset({(0, 1)})))
        0.6666666666666666
    """
    norm = parse_normalizer(normalizer)
    cons = parse_constraint(constraint)
    caller_locals = sys._getframe(1).f_locals  # resolves annotations of classes defined inside functions

    def wrap(c: type[T]) -> type[T]:
        if not (isinstance(c, type) and dataclasses.is_dataclass(c)):
            raise TypeError(f"@metametric decorates dataclasses; found {c!r}. Put @dataclass below @metametric.")
        sim = _derive_dataclass(c, cons, {c}, caller_locals)
        metric = make_metric(sim, norm, name=c.__name__, zero_division=zero_division, empty_score=empty_score)
        metric.__doc__ = f"The derived metric of {c.__name__} ({norm.name}, constraint {cons.value})."
        setattr(c, "latent_metric" if sim.has_variables else "metric", metric)
        return c

    if cls is not None:
        return wrap(cls)
    return wrap
