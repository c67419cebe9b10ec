"""Derive a similarity from a type (the ``@metametric`` decorator in :mod:`metametric_jax.build` uses it).

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
import types
import typing
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from metametric_jax.composite import Product, UnionSim
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.matching import LatentSetMatching, SetMatching
from metametric_jax.similarity import Discrete, FromFunction, Similarity
from metametric_jax.variable import Variable, VariableSim

__all__ = ["derive", "derive_dataclass", "is_metric_class", "metric_similarity", "as_similarity", "field_types"]

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


def is_metric_class(obj: Any) -> bool:
    """Whether ``obj`` is a metric class: a class with the ``_nested_similarity`` protocol method."""
    return isinstance(obj, type) and callable(getattr(obj, "_nested_similarity", None))


def metric_similarity(metric: Any) -> Similarity:
    """The similarity a metric class stands for when used inside another structure (normalized as declared)."""
    return metric._nested_similarity()


def as_similarity(obj: Any, what: str = "value") -> Similarity:
    """Coerce a similarity, a metric class or a function ``(x, y) -> float`` into a similarity."""
    if isinstance(obj, Similarity):
        return obj
    if is_metric_class(obj):
        return metric_similarity(obj)
    nested = getattr(obj, "metric", None) if isinstance(obj, type) else None
    if is_metric_class(nested):
        return metric_similarity(nested)
    if callable(obj) and not isinstance(obj, type):
        return FromFunction(obj)
    raise TypeError(
        f"{what}: expected a Similarity, a metric class or a function (x, y) -> float; found {type(obj).__name__}."
    )


def _own_metric(tp: Any) -> Any:
    for attr in ("metric", "latent_metric"):
        m = tp.__dict__.get(attr) if isinstance(tp, type) else None
        if is_metric_class(m):
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
            if isinstance(m, Similarity) or is_metric_class(m):
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


def derive_dataclass(cls: type, constraint: str | Constraint = "<->", localns: Any = None) -> Product:
    """The product similarity of a dataclass's fields (``localns`` resolves annotations of local classes)."""
    return _derive_dataclass(cls, parse_constraint(constraint), {cls}, localns)


def _derive_dataclass(cls: type, constraint: Constraint, stack: set[Any], localns: Any = None) -> Product:
    hints = field_types(cls, localns)
    fields = {}
    for f in dataclasses.fields(cls):
        tp = hints.get(f.name, f.type)
        fields[f.name] = _derive(
            tp, constraint, f"class {cls.__name__}, field {f.name!r} of type {tp!r}", stack, localns
        )
    return Product(cls, fields)
