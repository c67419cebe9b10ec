r"""The host-side similarity algebra: :math:`\phi(x, y) \ge 0` on structures.

A :class:`Similarity` gives the raw (unnormalized) similarity of a predicted and a reference structure, their
self-similarities, Gram matrices of lists of structures, per-example statistics of a batch
(:math:`\phi(P,R), \phi(P,P), \phi(R,R)`), and explanations. Leaves and combinators:

* :class:`Discrete` — 1 if equal, else 0 (vectorized: values factorized to integer codes, compared with NumPy);
* :class:`Product` — a dataclass: the product of its fields' similarities, :math:`\prod_f \phi_f(x.f, y.f)`;
* :class:`UnionSim` — per-case similarity, 0 across cases;
* :class:`FromFunction` — any function, checked for finite non-negative values;
* :class:`Preprocess` — contramap: :math:`\phi(f(x), g(y))`, with separate functions per side allowed;
* :class:`Normalized` — :math:`n(\phi(x,y), \phi(x,x), \phi(y,y))`, an inner normalized similarity (CEAF's
  :math:`\phi_4`, B³'s per-mention ratios).

The ``mode`` argument says which sides are compared: ``"pr"`` (predicted vs reference), ``"pp"`` or ``"rr"``; it
matters only where the predicted and the reference sides are preprocessed differently.

Matching similarities (sets, sequences, graphs, latent variables) live in :mod:`metametric_jax.matching`.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from metametric_jax.explain import Explanation, Match
from metametric_jax.normalizer import Normalizer, parse_normalizer

__all__ = [
    "Similarity",
    "Discrete",
    "FromFunction",
    "Preprocess",
    "Normalized",
    "accepted_types",
    "discrete_gram",
    "IDENTITY",
    "Mode",
]

Mode = str  # "pr", "pp" or "rr"
IDENTITY: Any = object()  # discrete_key value: the items themselves are hashable keys of their equality


def _side(mode: Mode, which: int) -> Mode:
    """The self-comparison mode of one side of ``mode`` (0: left, 1: right)."""
    s = mode[which]
    return s + s


class Similarity:
    r"""Base class: a similarity :math:`\phi(x, y) \ge 0` between a predicted and a reference structure."""

    name: str = "similarity"

    # -- core ---------------------------------------------------------------------------------------------------
    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        """The raw similarity φ(x, y)."""
        raise NotImplementedError

    def self_score(self, x: Any, side: str = "p") -> float:
        """φ(x, x) on one side (``"p"`` predicted, ``"r"`` reference)."""
        return self.score(x, x, side + side)

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        """The matrix ``G[i, j] = φ(xs[i], ys[j])`` (float64)."""
        g = np.zeros((len(xs), len(ys)), dtype=np.float64)
        for i, x in enumerate(xs):
            for j, y in enumerate(ys):
                g[i, j] = self.score(x, y, mode)
        return g

    def self_scores(self, xs: Sequence[Any], side: str = "p") -> np.ndarray:
        """``[φ(x, x) for x in xs]`` on one side."""
        return np.fromiter((self.self_score(x, side) for x in xs), dtype=np.float64, count=len(xs))

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        """Per-example ``(φ(P,R), φ(P,P), φ(R,R))`` of a batch, an ``(n, 3)`` float64 array."""
        out = np.empty((len(predictions), 3), dtype=np.float64)
        for i, (p, r) in enumerate(zip(predictions, references)):
            out[i, 0] = self.score(p, r, "pr")
            out[i, 1] = self.self_score(p, "p")
            out[i, 2] = self.self_score(r, "r")
        return out

    # -- structure ----------------------------------------------------------------------------------------------
    def check(self, values: Sequence[Any]) -> None:
        """Raise ``TypeError`` unless every value has the type this similarity compares (leaves included).

        Every path that compares values (single pair, Gram matrices, vectorized fast paths) checks them this way, so
        a wrong leaf type is an error wherever it sits. The base class accepts anything.
        """

    @property
    def never_empty(self) -> bool:
        """Whether φ(x, x) > 0 for every structure ``x`` (no empty structure); lets products skip the empty rule."""
        return False

    @property
    def discrete_key(self) -> Any:
        """``None`` unless φ is 1 on equal keys and 0 otherwise: then :data:`IDENTITY` or a key function."""
        return None

    def bindings(self, x: Any, y: Any) -> list[tuple[Any, Any]]:
        """Variable correspondences a match of ``x`` with ``y`` requires (latent matching)."""
        return []

    @property
    def has_variables(self) -> bool:
        """Whether structures compared by this similarity carry latent :class:`~metametric_jax.Variable` s."""
        return False

    @property
    def self_bounded(self) -> bool:
        """Whether φ(x, y) ≤ min(φ(x, x), φ(y, y)) for any two structures of one side.

        Then the identity alignment is an optimal self-matching, and a collection's self-overlap is the sum of its
        items' self-similarities: no self-Gram matrix, no assignment problem.
        """
        return False

    # -- explanations -------------------------------------------------------------------------------------------
    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        """Matches strictly below the pair ``(x, y)`` at paths ``(px, py)``."""
        return []

    def explain(self, x: Any, y: Any) -> Explanation:
        """The raw score of ``(x, y)`` and the matched sub-structures with their paths."""
        return Explanation(self.score(x, y), tuple(self.explain_matches(x, y, "", "")))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


# ---------------------------------------------------------------------------------------------------------- leaves
def factorize(values: Sequence[Any], key: Any = IDENTITY, table: dict | None = None) -> np.ndarray | None:
    """Integer codes of hashable values (equal values, equal codes); ``None`` if a value is unhashable."""
    table = {} if table is None else table
    get = table.setdefault
    try:
        if key is IDENTITY:
            return np.fromiter((get(v, len(table)) for v in values), dtype=np.int64, count=len(values))
        return np.fromiter((get(key(v), len(table)) for v in values), dtype=np.int64, count=len(values))
    except TypeError:
        return None


def discrete_gram(xs: Sequence[Any], ys: Sequence[Any], key: Any) -> np.ndarray:
    """Gram matrix of a discrete similarity by factorizing both sides to codes and broadcasting ``==``."""
    table: dict = {}
    cx = factorize(xs, key, table)
    cy = factorize(ys, key, table) if cx is not None else None
    if cx is None or cy is None:
        k = (lambda v: v) if key is IDENTITY else key
        return np.array([[1.0 if k(x) == k(y) else 0.0 for y in ys] for x in xs], dtype=np.float64).reshape(
            len(xs), len(ys)
        )
    return (cx[:, None] == cy[None, :]).astype(np.float64)


class Discrete(Similarity):
    """φ(x, y) = 1 if ``x == y`` else 0.

    Args:
        cls: optional type the values must have (checked in ``score``).
    """

    def __init__(self, cls: Any = None) -> None:
        self.cls = cls
        self.name = getattr(cls, "__name__", "discrete") if cls is not None else "discrete"
        self._accept = accepted_types(cls)

    @property
    def accepted(self) -> tuple[type, ...] | None:
        """The runtime types this similarity accepts (``None``: any)."""
        return self._accept

    def check(self, values: Sequence[Any]) -> None:
        """Raise TypeError unless every value has the declared type (ints pass for floats, as in typing)."""
        accept = self._accept
        if accept is None:
            return
        for t in set(map(type, values)):  # one C-level pass; a Python loop only over the distinct types
            if not issubclass(t, accept):
                v = next(v for v in values if type(v) is t)
                raise TypeError(
                    f"Discrete similarity over {self.name} expects {self.name} values; found {t.__name__}: {v!r}."
                )

    @property
    def never_empty(self) -> bool:
        return True

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        if self._accept is not None:
            self.check((x, y))
        return 1.0 if x == y else 0.0

    def self_score(self, x: Any, side: str = "p") -> float:
        return 1.0

    def self_scores(self, xs: Sequence[Any], side: str = "p") -> np.ndarray:
        return np.ones(len(xs), dtype=np.float64)

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        if self._accept is not None:
            self.check(xs)
            self.check(ys)
        return discrete_gram(xs, ys, IDENTITY)

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        if self._accept is not None:
            self.check(predictions)
            self.check(references)
        out = np.ones((len(predictions), 3), dtype=np.float64)
        out[:, 0] = [1.0 if p == r else 0.0 for p, r in zip(predictions, references)]
        return out

    @property
    def discrete_key(self) -> Any:
        return IDENTITY

    @property
    def self_bounded(self) -> bool:
        return True


def accepted_types(cls: Any) -> tuple[type, ...] | None:
    """The runtime types a discrete similarity over ``cls`` accepts, or ``None`` to accept anything."""
    origin = typing.get_origin(cls)
    if origin is not None and isinstance(origin, type) and origin is not typing.Literal:
        return (origin,)  # e.g. tuple[int, int] -> tuple
    if not isinstance(cls, type) or cls is object:
        return None
    if cls is float:
        return (float, int)
    if cls is complex:
        return (complex, float, int)
    return (cls,)


def _check_finite(value: Any, name: str, x: Any, y: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"Similarity {name!r} must return a number; returned {value!r} for ({x!r}, {y!r}).") from None
    if not math.isfinite(v) or v < 0:
        raise ValueError(
            f"Similarity {name!r} must return a finite, non-negative number; returned {v!r} for ({x!r}, {y!r})."
        )
    return v


class FromFunction(Similarity):
    """A similarity from a function ``fn(x, y) -> float``; values are checked to be finite and non-negative.

    Args:
        fn: the function.
        name: a name for messages (default ``fn.__name__``).
        self_fn: optional ``x -> φ(x, x)`` when cheaper than ``fn(x, x)``.
        self_bounded: declare that ``fn(x, y) <= min(fn(x, x), fn(y, y))`` (true of overlap ratios such as Dice or
            Jaccard of spans); collections of such items then get their self-overlap without an assignment problem.
    """

    def __init__(
        self, fn: Callable[[Any, Any], float], name: str | None = None, self_fn: Any = None, self_bounded: bool = False
    ) -> None:
        if not callable(fn):
            raise TypeError(f"from_function expects a callable (x, y) -> float; found {type(fn).__name__}.")
        self.fn = fn
        self.self_fn = self_fn
        self._self_bounded = bool(self_bounded)
        self.name = str(name or getattr(fn, "__name__", None) or "function")

    @property
    def self_bounded(self) -> bool:
        return self._self_bounded

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return _check_finite(self.fn(x, y), self.name, x, y)

    def self_score(self, x: Any, side: str = "p") -> float:
        if self.self_fn is not None:
            return _check_finite(self.self_fn(x), self.name, x, x)
        return self.score(x, x)


class Preprocess(Similarity):
    """Contramap: φ(f(x), g(y)) with ``f`` applied to predicted and ``g`` to reference structures.

    Args:
        inner: the similarity of the preprocessed values.
        pred: the function applied to predicted structures.
        ref: the function applied to reference structures (default ``pred``).
    """

    def __init__(self, inner: Similarity, pred: Callable[[Any], Any], ref: Callable[[Any], Any] | None = None) -> None:
        self.inner = inner
        self.pred_fn = pred
        self.ref_fn = ref if ref is not None else pred
        self.name = f"preprocess({inner.name})"

    def _fn(self, side: str) -> Callable[[Any], Any]:
        return self.pred_fn if side == "p" else self.ref_fn

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        return self.inner.score(self._fn(mode[0])(x), self._fn(mode[1])(y), mode)

    def self_score(self, x: Any, side: str = "p") -> float:
        return self.inner.self_score(self._fn(side)(x), side)

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        f, g = self._fn(mode[0]), self._fn(mode[1])
        return self.inner.gram([f(x) for x in xs], [g(y) for y in ys], mode)

    def self_scores(self, xs: Sequence[Any], side: str = "p") -> np.ndarray:
        return self.inner.self_scores([self._fn(side)(x) for x in xs], side)

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return self.inner.batch_stats([self.pred_fn(p) for p in predictions], [self.ref_fn(r) for r in references])

    @property
    def discrete_key(self) -> Any:
        k = self.inner.discrete_key
        if k is None or self.pred_fn is not self.ref_fn:
            return None
        f = self.pred_fn
        return f if k is IDENTITY else (lambda v: k(f(v)))

    @property
    def self_bounded(self) -> bool:
        return self.inner.self_bounded

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        return self.inner.explain_matches(self._fn(mode[0])(x), self._fn(mode[1])(y), px, py, mode)


class Normalized(Similarity):
    r"""An inner normalized similarity :math:`n(\phi(x,y), \phi(x,x), \phi(y,y))`.

    Two empty structures (both self-similarities 0) score ``empty_score``; other 0/0 give ``zero_division``.
    """

    def __init__(
        self, inner: Similarity, normalizer: str | Normalizer, zero_division: float = 0.0, empty_score: float = 1.0
    ) -> None:
        self.inner = inner
        self.normalizer = parse_normalizer(normalizer)
        self.zero_division = float(zero_division)
        self.empty_score = float(empty_score)
        self.name = f"{self.normalizer.name}({inner.name})"

    def _apply(self, xy: Any, xx: Any, yy: Any) -> Any:
        out = self.normalizer(xy, xx, yy, self.zero_division)
        if self.normalizer.is_identity:
            return out
        return np.where((np.asarray(xx) == 0) & (np.asarray(yy) == 0), self.empty_score, out)

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        xy = self.inner.score(x, y, mode)
        if self.normalizer.is_identity:
            return xy
        return float(self._apply(xy, self.inner.self_score(x, mode[0]), self.inner.self_score(y, mode[1])))

    def self_score(self, x: Any, side: str = "p") -> float:
        return self.score(x, x, side + side)

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        g = self.inner.gram(xs, ys, mode)
        if self.normalizer.is_identity:
            return g
        sx = self.inner.self_scores(xs, mode[0])[:, None]
        sy = self.inner.self_scores(ys, mode[1])[None, :]
        return np.asarray(self._apply(g, np.broadcast_to(sx, g.shape), np.broadcast_to(sy, g.shape)), np.float64)

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        inner = self.inner.batch_stats(predictions, references)
        if self.normalizer.is_identity:
            return inner
        xy = np.asarray(self._apply(inner[:, 0], inner[:, 1], inner[:, 2]), dtype=np.float64)
        pp = np.asarray(self._apply(inner[:, 1], inner[:, 1], inner[:, 1]), dtype=np.float64)
        rr = np.asarray(self._apply(inner[:, 2], inner[:, 2], inner[:, 2]), dtype=np.float64)
        return np.stack([xy, pp, rr], axis=1)

    @property
    def discrete_key(self) -> Any:
        if self.normalizer.builtin:  # every built-in maps (1, 1, 1) to 1 and (0, 1, 1) to 0
            return self.inner.discrete_key
        return None

    @property
    def has_variables(self) -> bool:
        return self.inner.has_variables

    def check(self, values: Sequence[Any]) -> None:
        self.inner.check(values)

    @property
    def self_bounded(self) -> bool:
        # a built-in ratio of a self-bounded overlap is at most 1, which is its value on a non-empty structure
        if self.normalizer.is_identity:
            return self.inner.self_bounded
        # a built-in ratio of a self-bounded overlap is at most 1, its value on a non-empty structure; against an
        # empty structure it is 0 or zero_division, and two empty structures score empty_score on both sides
        return (
            self.inner.self_bounded
            and self.normalizer.builtin
            and self.empty_score <= 1.0
            and self.zero_division <= self.empty_score
        )

    def bindings(self, x: Any, y: Any) -> list[tuple[Any, Any]]:
        return self.inner.bindings(x, y)

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        return self.inner.explain_matches(x, y, px, py, mode)
