"""Metric classes that pickle by reference: one class per configuration, in every process.

A metric's states merge only with states of the same class (:meth:`metametric_jax.Metric.merge` compares their
configurations by identity), so a class sent to another process (a worker, a Beam or Dask task) must come back as
the same class, and a class rebuilt there from the same configuration must be one class. Metric, suite and
resampling classes have the metaclass :class:`MetricType`, which :mod:`copyreg` pickles by reference:

* a class reachable as ``module.qualname`` (a module-level class; the derived metric ``D.metric`` of a module-level
  dataclass ``D``, named ``D.metric``) is pickled by that name;
* a class made by a factory (``NerMetric(labels, scheme)``, ``smatch_metric(...)``, ``bootstrap(M, B, seed, level)``,
  ``make_metric(similarity, ...)``...) is pickled as the factory call that makes it, with a token naming the class
  in the process that made it: unpickling returns the class already known under that token (the same class in the
  process that made it), else calls the factory once and remembers the result under the token (so every state of
  that class sent to this process finds one class, and the class sent back finds the original).

Factories that cache (:func:`class_factory`) return the same class for the same arguments in every process. A
class registered under the qualified name ``classes.<Name>_<token>`` of this module is also found by pickle-by-value
libraries (cloudpickle, as Beam and Dask use it), which then pickle it by reference too.

This module imports the standard library only (workers that match on the host do not import JAX).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import pickle
import secrets
import sys
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

__all__ = ["MetricType", "class_factory", "register", "name_as", "recipe_of", "PairwiseStats", "classes"]

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

#: the classes made by factories, by ``<Name>_<token>`` (their ``__qualname__`` is ``classes.<Name>_<token>``)
classes = types.SimpleNamespace()

_ATTRIBUTE = "__metametric_recipe__"
_PROCESS = f"{os.getpid():x}{secrets.token_hex(4)}"
_SERIAL = itertools.count(1)
_BY_TOKEN: dict[str, type] = {}
_LOCK = threading.RLock()


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How a class is made: ``factory(*args, **kwargs)``, known as ``token`` in the process that made it.

    Attributes:
        token: unique across processes (the making process's id and random bits, and a serial number).
        serial: the serial number of the registration in this process (newer registrations have larger ones).
        factory: a function pickled by reference.
        args: positional arguments (pickled with the class).
        kwargs: keyword arguments.
        raw: whether the factory builds a new class on every call (``make_metric``, ``stats_metric``,
            ``make_suite``) rather than one per configuration.
    """

    token: str
    serial: int
    factory: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    raw: bool = False


class MetricType(type):
    """The metaclass of metric, suite and resampling classes: pickled by reference (see the module docstring)."""

    def __repr__(cls) -> str:
        rec = cls.__dict__.get(_ATTRIBUTE)
        if rec is None:
            return super().__repr__()
        made = f"{rec.factory.__module__}.{rec.factory.__qualname__}"
        shown = [_short(a) for a in rec.args] + [f"{k}={_short(v)}" for k, v in rec.kwargs.items()]
        return f"<metric class {cls.__name__} made by {made}({', '.join(shown)})>"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def recipe_of(cls: type) -> Recipe | None:
    """The recipe a class was registered with (its own, not a base class's), or ``None``."""
    return cls.__dict__.get(_ATTRIBUTE)


def _set_name(cls: type, token: str) -> None:
    name = f"{cls.__name__}_{token}"
    setattr(classes, name, cls)
    cls.__module__ = __name__
    cls.__qualname__ = f"classes.{name}"


def register(
    cls: C,
    factory: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    raw: bool = False,
) -> C:
    """Record that ``factory(*args, **kwargs)`` makes ``cls`` (so it pickles as that call); returns ``cls``."""
    with _LOCK:
        serial = next(_SERIAL)
        token = f"{_PROCESS}_{serial}"
        type.__setattr__(cls, _ATTRIBUTE, Recipe(token, serial, factory, tuple(args), dict(kwargs or {}), raw))
        _BY_TOKEN[token] = cls
        _set_name(cls, token)
    return cls


def name_as(cls: C, owner: Any, attribute: str) -> C:
    """Name ``cls`` as ``owner.attribute`` (e.g. ``D.metric``) when that name is importable: then it pickles by it.

    A class whose owner is defined inside a function keeps its recipe (pickling it then fails on the owner).
    """
    module = getattr(owner, "__module__", None)
    qualname = getattr(owner, "__qualname__", "")
    if module is None or "<locals>" in qualname:
        return cls
    type.__setattr__(cls, _ATTRIBUTE, None)
    cls.__module__ = module
    cls.__qualname__ = f"{qualname}.{attribute}"
    return cls


def _restore(token: str, factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> type:
    """The class pickled under ``token``: the one known here, else ``factory(*args, **kwargs)`` (then known)."""
    with _LOCK:
        known = _BY_TOKEN.get(token)
        if known is not None:
            return known
        first = next(_SERIAL)
        cls = factory(*args, **kwargs)
        rec = recipe_of(cls)
        if rec is not None and rec.serial > first:  # made by this call: it keeps the name it has where it came from
            type.__setattr__(cls, _ATTRIBUTE, dataclasses.replace(rec, token=token))
            _set_name(cls, token)
        _BY_TOKEN[token] = cls
        return cls


def _findable(cls: type) -> bool:
    module = sys.modules.get(cls.__module__)
    if module is None:
        return False
    found: Any = module
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is cls


def _reduce_class(cls: type) -> Any:
    rec = recipe_of(cls)
    if rec is not None:
        return _restore, (rec.token, rec.factory, rec.args, rec.kwargs)
    if _findable(cls):
        return cls.__qualname__  # pickled by its module and qualified name
    raise pickle.PicklingError(
        f"Cannot pickle the metric class {cls.__name__} ({cls.__module__}.{cls.__qualname__}) by reference: it was "
        "not made by a metric factory and is not importable by its name. Make it with make_metric, stats_metric, "
        "make_suite or @metametric on a module-level dataclass, or assign it at module level under its own name."
    )


import copyreg  # noqa: E402 - registered once the reducer exists

copyreg.pickle(MetricType, _reduce_class)


def class_factory(fn: F) -> F:
    """Cache a function that makes a metric class per configuration, and register each class it makes.

    The same arguments give the same class (as :func:`functools.cache`); the class pickles as the call, so it is the
    same class in any process that unpickles it. The members of a suite it makes that were built by a raw factory
    (a ``stats_metric`` inside the function) pickle as ``(the suite's class, member name)``.
    """
    cached = functools.cache(fn)

    @functools.wraps(fn)
    def factory(*args: Any, **kwargs: Any) -> Any:
        cls = cached(*args, **kwargs)
        rec = recipe_of(cls)
        if rec is None or rec.raw:
            register(cls, factory, args, kwargs)
            members = getattr(getattr(cls, "metric_config", None), "members", ())
            for key, member in members:
                mine = recipe_of(member)
                if mine is None and _findable(member):
                    continue
                if mine is None or mine.raw:
                    register(member, _member, (cls, key))
        return cls

    factory.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    factory.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return factory  # type: ignore[return-value]


def _member(suite: Any, key: str) -> type:
    """The member ``key`` of a suite class."""
    return dict(suite.metric_config.members)[key]


class PairwiseStats:
    """A batch statistics function from a per-pair one, ``stats(p, r) -> (xy, xx, yy)`` (picklable when it is)."""

    def __init__(self, stats: Callable[[Any, Any], Sequence[float]]) -> None:
        self.stats = stats

    def __call__(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        rows = [self.stats(p, r) for p, r in zip(predictions, references)]
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), -1) if rows else np.zeros((0, 3))

    def __repr__(self) -> str:
        return f"PairwiseStats({self.stats!r})"
