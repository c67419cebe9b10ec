"""Build metric classes: ``@metametric``, :func:`metric_of`, :func:`make_metric` and :func:`stats_metric`.

This module sits on top of the accumulator (:mod:`metametric_jax.accumulate`) and the derivation
(:mod:`metametric_jax.derive`): it turns a type, a similarity or a statistics function into an accumulator class.

Example:
    >>> from dataclasses import dataclass
    >>> @metametric(normalizer="f1")
    ... @dataclass(frozen=True)
    ... class Doc:
    ...     spans: frozenset[tuple[int, int]]
    >>> metric_of(Doc).score(Doc(frozenset({(0, 1), (2, 3)})), Doc(frozenset({(0, 1)})))
    0.6666666666666666
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from metametric_jax._portable import PairwiseStats, name_as, register
from metametric_jax.accumulate import Metric, MetricConfig
from metametric_jax.composite import check_when_built
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.derive import as_similarity, derive_dataclass
from metametric_jax.normalizer import F1, JACCARD, NONE, PRECISION, RECALL, Normalizer, parse_normalizer

__all__ = ["metametric", "metric_of", "make_metric", "stats_metric"]

T = TypeVar("T")

_STANDARD = (NONE, PRECISION, RECALL, F1, JACCARD)


def _reported(normalizer: Normalizer, extra: Sequence[Normalizer] = ()) -> tuple[Normalizer, ...]:
    out = list(_STANDARD)
    for n in (normalizer, *extra):
        if all(n.name != m.name for m in out):
            out.append(n)
    return tuple(out)


def make_metric(
    similarity: Any,
    normalizer: str | Normalizer = "f1",
    *,
    name: str | None = None,
    zero_division: float = 0.0,
    empty_score: float = 1.0,
    report: Sequence[str | Normalizer] = (),
    doc: str | None = None,
) -> type[Metric]:
    """The accumulator class of a similarity, a metric class, or a function ``(x, y) -> float``.

    Args:
        similarity: what to compare structures with.
        normalizer: the declared normalizer (``score`` uses it; ``compute`` reports it beside P / R / F1 / Jaccard).
        name: a name for messages; default the similarity's.
        zero_division: value of a 0/0 other than two empty structures.
        empty_score: per-example normalized score of two empty structures.
        report: further normalizers for ``compute`` to report.
        doc: the class docstring.

    Example:
        >>> from metametric_jax import dsl
        >>> Spans = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="spans")
        >>> Spans.score(["a", "b"], ["a"])
        0.6666666666666666
    """
    sim = as_similarity(similarity, "make_metric")
    norm = parse_normalizer(normalizer)
    extra = tuple(parse_normalizer(r) for r in report)
    metric_name = name or getattr(sim, "name", None) or type(sim).__name__
    cfg = MetricConfig(
        name=metric_name,
        normalizer=norm,
        reported=_reported(norm, extra),
        zero_division=float(zero_division),
        empty_score=float(empty_score),
        batch_stats=sim.batch_stats,
        source=sim,
    )
    kwargs = {"name": name, "zero_division": zero_division, "empty_score": empty_score, "report": report, "doc": doc}
    return register(Metric._subclass(cfg, doc), make_metric, (similarity, normalizer), kwargs, raw=True)


def stats_metric(
    stats: Callable[[Any, Any], tuple[float, float, float]] | None = None,
    normalizer: str | Normalizer = "f1",
    *,
    name: str,
    batch_stats: Callable[[Sequence[Any], Sequence[Any]], np.ndarray] | None = None,
    zero_division: float = 0.0,
    empty_score: float = 1.0,
    report: Sequence[str | Normalizer] = (),
    doc: str | None = None,
    class_name: str | None = None,
    tallies: Sequence[str] = (),
) -> type[Metric]:
    """An accumulator class from a per-pair statistics function ``stats(p, r) -> (xy, xx, yy)``.

    Either ``stats`` (called per pair) or ``batch_stats`` (called per batch, returning an ``(n, 3)`` array) must be
    given; with neither, states are built with ``from_stats`` only. With ``tallies`` (names of per-example counts,
    such as the pairs a solver did not prove optimal) the statistics have ``3 + len(tallies)`` columns, the tallies
    last; states sum them and ``compute()`` reports each by its name.

    The class pickles as this call (by reference, see :mod:`metametric_jax._portable`) when its functions pickle
    (module-level functions, ``functools.partial`` of them).

    Example:
        >>> Overlap = stats_metric(lambda p, r: (len(p & r), len(p), len(r)), "f1", name="overlap")
        >>> float(Overlap.from_model_output([{1, 2}], [{2}]).compute()["f1"])
        0.6666666865348816
    """
    norm = parse_normalizer(normalizer)
    extra = tuple(parse_normalizer(r) for r in report)
    given = batch_stats
    if batch_stats is None and stats is not None:
        batch_stats = PairwiseStats(stats)
    cfg = MetricConfig(
        name=name,
        normalizer=norm,
        reported=_reported(norm, extra),
        zero_division=float(zero_division),
        empty_score=float(empty_score),
        batch_stats=batch_stats,
        source=stats,
        tallies=tuple(tallies),
    )
    kwargs = {
        "batch_stats": given,
        "name": name,
        "zero_division": zero_division,
        "empty_score": empty_score,
        "report": report,
        "doc": doc,
        "class_name": class_name,
        "tallies": tuple(tallies),
    }
    cls = Metric._subclass(cfg, doc, class_name=class_name)
    return register(cls, stats_metric, (stats, normalizer), kwargs, raw=True)


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
    ``compute``; :func:`metric_of` reads it with its type visible to type checkers.

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
    """
    norm = parse_normalizer(normalizer)
    cons = parse_constraint(constraint)
    caller_locals = sys._getframe(1).f_locals  # resolves annotations of classes defined inside functions

    def wrap(c: type[T]) -> type[T]:
        if not (isinstance(c, type) and dataclasses.is_dataclass(c)):
            raise TypeError(f"@metametric decorates dataclasses; found {c!r}. Put @dataclass below @metametric.")
        sim = derive_dataclass(c, cons, caller_locals)
        metric = make_metric(
            sim,
            norm,
            name=c.__name__,
            zero_division=zero_division,
            empty_score=empty_score,
            doc=_derived_doc(c, sim, norm, cons, zero_division, empty_score),
        )
        attribute = "latent_metric" if sim.has_variables else "metric"
        setattr(c, attribute, name_as(metric, c, attribute))
        check_when_built(sim)
        return c

    if cls is not None:
        return wrap(cls)
    return wrap


_FORMULAS = {
    "none": r"\mathrm{overlap} = \sum_i \phi(P_i, R_i)",
    "precision": r"P = \frac{\sum_i \phi(P_i, R_i)}{\sum_i \phi(P_i, P_i)}",
    "recall": r"R = \frac{\sum_i \phi(P_i, R_i)}{\sum_i \phi(R_i, R_i)}",
    "f1": r"F_1 = \frac{2 \sum_i \phi(P_i, R_i)}{\sum_i \phi(P_i, P_i) + \sum_i \phi(R_i, R_i)}",
    "jaccard": r"J = \frac{\sum_i \phi(P_i, R_i)}"
    r"{\sum_i \phi(P_i, P_i) + \sum_i \phi(R_i, R_i) - \sum_i \phi(P_i, R_i)}",
}


def _describe(sim: Any, depth: int = 0) -> list[str]:
    """One line per field of a derived similarity: the field, its type and how it is compared."""
    fields = getattr(sim, "fields", None)
    if not isinstance(fields, dict) or depth > 2:
        return []
    hints = getattr(getattr(sim, "cls", None), "__annotations__", {})
    out = []
    for name, inner in fields.items():
        how = type(inner).__name__
        constraint = getattr(getattr(inner, "constraint", None), "value", None)
        tp = hints.get(name, "")
        tp = tp if isinstance(tp, str) else tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")
        out.append(f"{'    ' * depth}- ``{name}``: ``{tp}`` — {how}{f' ({constraint})' if constraint else ''}")
        out.extend(_describe(getattr(inner, "inner", inner), depth + 1))
    return out


def _derived_doc(cls: type, sim: Any, norm: Normalizer, cons: Any, zero_division: float, empty_score: float) -> str:
    """The docstring of a derived metric class: its type, formula, figures and an example (what ``help()`` shows)."""
    formula = _FORMULAS.get(
        norm.name,
        rf"\mathrm{{{norm.name}}}(\textstyle\sum_i \phi(P_i, R_i), "
        rf"\sum_i \phi(P_i, P_i), \sum_i \phi(R_i, R_i))",
    )
    reported = _reported(norm, ())
    names = ", ".join(f"``{'overlap' if n.is_identity else n.name}``" for n in reported)
    fields = "\n".join(_describe(sim)) or "- (compared as a whole)"
    return f"""The derived metric of ``{cls.__module__}.{cls.__qualname__}`` ({norm.name}, constraint {cons.value}).

An accumulator class (``empty``, ``from_model_output``, ``merge``, ``reduce``, ``compute``) over pairs of
``{cls.__name__}`` structures, derived from the type (Chen et al., EMNLP 2023). :math:`\\phi` is the similarity
derived field by field:

{fields}

Its state sums :math:`\\phi(P_i, R_i)`, :math:`\\phi(P_i, P_i)`, :math:`\\phi(R_i, R_i)` over the examples
:math:`i`; ``compute()`` applies the declared normalizer to the totals (micro):

.. math::

    {formula}

Figures of ``compute()``: {names} on the totals (micro) and ``macro_`` of each, the mean of the
per-example scores. A 0/0 gives {zero_division!r}; two empty structures score {empty_score!r} per example and add
nothing to the totals.

Example:
    ``M = metric_of({cls.__name__})``; ``M.score(p, r)`` scores one pair;
    ``M.from_model_output(predictions, references).compute()["{"overlap" if norm.is_identity else norm.name}"]``
    the corpus figure.
"""


def metric_of(cls: type) -> type[Metric]:
    """The metric class of a ``@metametric`` dataclass (``cls.metric`` or ``cls.latent_metric``), typed.

    This is the spelling type checkers and IDEs understand (``D.metric`` is set at run time).

    Raises:
        TypeError: if ``cls`` was not decorated with ``@metametric``.
    """
    for attr in ("metric", "latent_metric"):
        m = cls.__dict__.get(attr) if isinstance(cls, type) else None
        if isinstance(m, type) and issubclass(m, Metric):
            return m
    raise TypeError(f"{getattr(cls, '__name__', cls)!r} has no derived metric; decorate it with @metametric.")
