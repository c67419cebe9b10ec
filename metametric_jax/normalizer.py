r"""Normalizers: turn the three sufficient statistics of a metric into a score.

Every normalizer is a pure function of

.. math::

    xy = \sum \phi(P, R), \quad xx = \sum \phi(P, P), \quad yy = \sum \phi(R, R)

that works on Python floats, NumPy arrays and ``jax.numpy`` arrays alike.

=============  ================================================================
name           formula
=============  ================================================================
``none``       :math:`xy`
``precision``  :math:`xy / xx`
``recall``     :math:`xy / yy`
``jaccard``    :math:`xy / (xx + yy - xy)`
``dice``/f1    :math:`2 xy / (xx + yy)`
``f{β}``       :math:`(1+\beta^2) P R / (\beta^2 P + R) = (1+\beta^2) xy / (\beta^2 yy + xx)`
=============  ================================================================

The 0/0 policy lives here, once: a denominator of zero gives ``zero_division`` (default 0.0). The division uses a
safe denominator and then ``where``, so gradients stay finite.

The empty-structure rule lives here too, once (:func:`is_empty_pair`, :func:`normalized_rows`): a pair whose
self-overlaps are both 0 (two empty structures) has overlap 0, so it adds nothing to micro totals, and its per-example
normalized score is ``empty_score`` (default 1.0: two empty structures agree perfectly). :func:`normalized_rows` is
the statistics → per-example rows rule of every accumulator, written once for NumPy (the host path) and
``jax.numpy`` (the device-native path).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from metametric_jax._ratios import f_measure, ratio

__all__ = [
    "Normalizer",
    "parse_normalizer",
    "NONE",
    "PRECISION",
    "RECALL",
    "JACCARD",
    "DICE",
    "F1",
    "fbeta",
    "safe_divide",
    "is_empty_pair",
    "normalize_pair",
    "normalized_rows",
    "prf",
    "f_measure",
]


def _xp(*arrays: Any) -> Any:
    """Pick the array module of the inputs: jax.numpy if any input is a JAX array or tracer, else NumPy."""
    for a in arrays:
        mod = type(a).__module__
        if mod.startswith("jax") or mod.startswith("jaxlib"):
            import jax.numpy as jnp

            return jnp
    return np


def _traced(x: Any) -> bool:
    """Whether ``x`` is a JAX tracer (without importing JAX: no tracer exists before it is imported)."""
    import sys

    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.core.Tracer)


def safe_divide(num: Any, den: Any, zero_division: float = 0.0) -> Any:
    """``num / den`` where ``den != 0``, else ``zero_division``; gradient-safe (double ``where``).

    Works on floats (returns a float), NumPy arrays and JAX arrays.

    >>> safe_divide(1.0, 0.0, zero_division=0.5)
    0.5
    """
    if isinstance(num, (int, float)) and isinstance(den, (int, float)):
        return float(num) / float(den) if den != 0 else float(zero_division)
    xp = _xp(num, den)
    constant = False
    if _traced(num):  # a divisor known when traced, found before jnp stages it
        from metametric_jax._division import known_divisor

        constant = known_divisor(num, den)
    den = xp.asarray(den)
    num = xp.asarray(num)
    zero = den == 0
    safe = xp.where(zero, xp.ones_like(den), den)
    dtype = xp.result_type(num, safe, float)
    if xp is np:
        ratio = num / safe
    else:  # correctly rounded on every backend (XLA's float32 division on GPUs is not)
        from metametric_jax._division import divide

        ratio = divide(num.astype(dtype), safe.astype(dtype), constant_divisor=constant)
    return xp.where(zero, xp.asarray(zero_division, dtype=dtype), ratio)


@dataclasses.dataclass(frozen=True)
class Normalizer:
    """A normalizer: a named pure function ``fn(xy, xx, yy, zero_division) -> score``.

    Users may define their own; it must work on floats and on NumPy / jnp arrays (use :func:`safe_divide`).

    Attributes:
        name: the key under which :meth:`Metric.compute` reports it (``"f1"``, ``"f0.5"``, ...).
        fn: the function.
    """

    name: str
    fn: Callable[[Any, Any, Any, float], Any]
    builtin: bool = dataclasses.field(default=False, repr=False)
    linear: tuple[tuple[float, float, float], tuple[float, float, float]] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    """For built-ins of the form (a·s) / (b·s) with s = (xy, xx, yy): the coefficients (a, b), used to vectorize."""

    def __call__(self, xy: Any, xx: Any, yy: Any, zero_division: float = 0.0) -> Any:
        """Apply the normalizer to (Σxy, Σxx, Σyy); a zero denominator gives ``zero_division``."""
        return self.fn(xy, xx, yy, zero_division)

    @property
    def is_identity(self) -> bool:
        """Whether this is the ``none`` normalizer (the raw overlap)."""
        return self.name == "none"

    def __repr__(self) -> str:
        return f"Normalizer({self.name!r})"


def _none(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return xy


def _precision(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return safe_divide(xy, xx, zd)


def _recall(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return safe_divide(xy, yy, zd)


def _jaccard(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return safe_divide(xy, xx + yy - xy, zd)


def _dice(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return safe_divide(2 * xy, xx + yy, zd)


def fbeta(beta: float) -> Normalizer:
    r"""The :math:`F_\beta` normalizer, :math:`(1+\beta^2) xy / (\beta^2 yy + xx)`; ``fbeta(1)`` is F1.

    Args:
        beta: a positive, finite weight of recall relative to precision.

    Raises:
        ValueError: if ``beta`` is not positive and finite.
    """
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise ValueError(
            f"F-beta needs a positive number for beta; found {beta!r}. Valid normalizers: {VALID_NAMES}."
        ) from None
    if not (b > 0 and math.isfinite(b)):
        raise ValueError(
            f"F-beta needs beta > 0 (and finite); found beta = {beta!r}. Valid normalizers: {VALID_NAMES}."
        )
    if b == 1.0:
        return F1
    b2 = b * b

    def _f(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
        if _xp(xy, xx, yy) is np:
            return safe_divide((1 + b2) * xy, b2 * yy + xx, zd)
        from metametric_jax._division import scale  # the same bits on every backend (see its module)

        return safe_divide((1 + b2) * xy, scale(yy, b2) + xx, zd)  # a product that a sum follows: scale

    return Normalizer(f"f{_fmt(b)}", _f, builtin=True, linear=((1 + b2, 0.0, 0.0), (0.0, 1.0, b2)))


def _fmt(b: float) -> str:
    return str(int(b)) if b.is_integer() else repr(b)


NONE = Normalizer("none", _none, builtin=True)
PRECISION = Normalizer("precision", _precision, builtin=True, linear=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)))
RECALL = Normalizer("recall", _recall, builtin=True, linear=((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
JACCARD = Normalizer("jaccard", _jaccard, builtin=True, linear=((1.0, 0.0, 0.0), (-1.0, 1.0, 1.0)))
F1 = Normalizer("f1", _dice, builtin=True, linear=((2.0, 0.0, 0.0), (0.0, 1.0, 1.0)))
DICE = F1

_NAMED = {"none": NONE, "precision": PRECISION, "recall": RECALL, "jaccard": JACCARD, "dice": F1, "f1": F1}
_FBETA = re.compile(r"^f(?:beta)?[_=]?([0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)$")
VALID_NAMES = "'none', 'precision', 'recall', 'jaccard', 'dice', 'f1', or 'f{beta}' with beta > 0 (e.g. 'f0.5', 'f2')"


def _check_custom(n: Normalizer) -> None:
    """A custom normalizer must have its own name and work elementwise on arrays."""
    reserved = n.name in _NAMED or n.name == "overlap" or n.name.startswith("macro_") or _FBETA.match(n.name)
    if not n.name or reserved:
        raise ValueError(
            f"A custom normalizer needs a name of its own; {n.name!r} is taken by a built-in normalizer or a reported "
            "figure ('overlap', 'macro_*')."
        )
    probe = (np.array([1.0, 0.0]), np.array([2.0, 0.0]), np.array([4.0, 0.0]))
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(n(*probe, 0.0), dtype=np.float64)
    except Exception as e:  # noqa: BLE001 - any failure means the normalizer is not elementwise
        raise ValueError(
            f"Normalizer {n.name!r} must work elementwise on NumPy and jax.numpy arrays (use safe_divide, not Python "
            f"min/max/if); calling it on arrays raised {type(e).__name__}: {e}"
        ) from None
    if out.shape == (2,) and not np.all(np.isfinite(out)):
        raise ValueError(
            f"Normalizer {n.name!r} must return finite values (a zero denominator should give zero_division: use "
            f"safe_divide); on (xy, xx, yy) = (1, 2, 4) and (0, 0, 0) it returned {out.tolist()}."
        )
    try:
        import jax
        import jax.numpy as jnp

        jax.eval_shape(lambda a, b, c: n(a, b, c, 0.0), *(jnp.asarray(p, jnp.float32) for p in probe))
    except Exception as e:  # noqa: BLE001 - compute() runs it under jax.jit
        raise ValueError(
            f"Normalizer {n.name!r} must also work on jax.numpy arrays inside jax.jit (compute() runs there; use "
            f"safe_divide and jnp-compatible operations, not np.* functions); tracing it raised {type(e).__name__}: {e}"
        ) from None
    if out.shape != (2,):
        raise ValueError(
            f"Normalizer {n.name!r} must return one value per element; on 2 elements it returned shape {out.shape}."
        )


def parse_normalizer(spec: str | Normalizer | None) -> Normalizer:
    """Parse a normalizer name, or pass a :class:`Normalizer` through.

    >>> parse_normalizer("f2").name
    'f2'
    >>> parse_normalizer("dice") is parse_normalizer("f1")
    True
    """
    if spec is None:
        return NONE
    if isinstance(spec, Normalizer):
        if not spec.builtin:
            _check_custom(spec)
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in _NAMED:
            return _NAMED[key]
        m = _FBETA.match(key)
        if m:
            return fbeta(float(m.group(1)))
        if key.startswith("f") and key[1:].lstrip("-").replace(".", "", 1).isdigit():
            raise ValueError(f"F-beta needs beta > 0; found {spec!r}. Valid normalizers: {VALID_NAMES}.")
    raise ValueError(f"Unknown normalizer {spec!r}; expected {VALID_NAMES}, or a Normalizer object.")


def is_empty_pair(xx: Any, yy: Any) -> Any:
    """Whether a pair is two empty structures: both self-overlaps 0 (floats, NumPy or jnp, elementwise)."""
    if isinstance(xx, (int, float)) and isinstance(yy, (int, float)):
        return xx == 0 and yy == 0
    return (xx == 0) & (yy == 0)


def normalize_pair(
    normalizer: Normalizer, xy: float, xx: float, yy: float, zero_division: float = 0.0, empty_score: float = 1.0
) -> float:
    """One pair's normalized score: ``empty_score`` for two empty structures (except for ``none``), else the ratio.

    >>> normalize_pair(F1, 0.0, 0.0, 0.0), normalize_pair(F1, 1.0, 2.0, 2.0)
    (1.0, 0.5)
    """
    if not normalizer.is_identity and is_empty_pair(xx, yy):
        return float(empty_score)
    return float(normalizer(xy, xx, yy, zero_division))


def _combined(stats: Any, coefficients: Any) -> Any:
    """``stats @ coefficients.T`` as a sum of the terms with a nonzero coefficient, in the order (xy, xx, yy).

    A matrix product would add and round as its kernel chooses: OpenBLAS fuses ``c * x + t`` on processors with FMA
    and not on others, and on GPUs a float32 product runs in TF32. The terms are summed in a fixed order instead; in
    NumPy each product and sum is rounded once (NumPy never fuses), in ``jax.numpy`` a product by a coefficient that
    is not a power of two goes through :func:`metametric_jax._division.scale`, which rounds alike with or without
    fused multiply-adds: the same bits on every processor and backend.
    """
    xp = _xp(stats)
    if xp is np:
        return _combined_host(stats, np.asarray(coefficients, dtype=stats.dtype))
    from metametric_jax._division import scale

    columns = []
    for row in coefficients:
        total = None
        for j, c in enumerate(row):
            if c != 0:
                if math.frexp(c)[0] in (0.5, -0.5):  # a power of two: an exact product
                    term = stats[:, j] if c == 1 else stats[:, j] * xp.asarray(c, dtype=stats.dtype)
                else:
                    term = scale(stats[:, j], c)
                total = term if total is None else total + term
        columns.append(xp.zeros(stats.shape[:1], stats.dtype) if total is None else total)
    return xp.stack(columns, axis=1)


#: for each coefficient array: whether a row lacks a term at some level, and the levels (see :func:`_levels`)
_PLANS: dict[tuple[bytes, tuple[int, ...]], tuple[bool, list[tuple[np.ndarray, np.ndarray | None]]]] = {}


def _levels(coefficients: np.ndarray) -> tuple[bool, list[tuple[np.ndarray, np.ndarray | None]]]:
    """Each row's terms with a nonzero coefficient, level by level: ``(padded, [(columns, coefficients), ...])``.

    At level ``i``, ``columns[k]`` and ``coefficients[k]`` are row ``k``'s ``i``-th term (coefficients ``None``:
    all 1, nothing to multiply). A row without an ``i``-th term takes a padding column: ``+0.0`` at level 0, ``-0.0``
    later (``x + (-0.0)`` is ``x`` for every float, signed zeros and NaNs included, and raises nothing), with
    coefficient 1; ``padded`` says whether any row needs them.
    """
    key = (coefficients.tobytes(), coefficients.shape)
    plan = _PLANS.get(key)
    if plan is None:
        width = coefficients.shape[1]
        nonzero = [np.flatnonzero(row) for row in coefficients]
        levels: list[tuple[np.ndarray, np.ndarray | None]] = []
        padded = False
        for i in range(max((len(cols) for cols in nonzero), default=0)):
            pad = width if i == 0 else width + 1
            columns = np.asarray([cols[i] if len(cols) > i else pad for cols in nonzero], np.int64)
            values = np.asarray(
                [row[cols[i]] if len(cols) > i else 1.0 for row, cols in zip(coefficients, nonzero)], coefficients.dtype
            )
            padded = padded or bool((columns >= width).any())
            levels.append((columns, None if (values == 1).all() else values))
        plan = _PLANS[key] = (padded, levels)
    return plan


def _combined_host(stats: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """:func:`_combined` on NumPy: each row's nonzero terms added in order, all rows at once (the same bits)."""
    padded, levels = _levels(coefficients)
    if not levels:
        return np.zeros((stats.shape[0], coefficients.shape[0]), stats.dtype)
    if padded:
        pads = np.full((stats.shape[0], 2), (0.0, -0.0), stats.dtype)
        stats = np.concatenate([stats, pads], axis=1)
    total: np.ndarray | None = None
    for columns, values in levels:
        term = stats.take(columns, axis=1)
        if values is not None:
            term = term * values  # each product rounded once, as one by one (a coefficient 1: the value itself)
        total = term if total is None else total + term
    assert total is not None
    return total


def normalized_rows(
    stats: Any, normalizers: tuple[Normalizer, ...], zero_division: float = 0.0, empty_score: float = 1.0
) -> Any:
    """Per-example normalized scores, ``(n, K)``, from per-example statistics ``(n, 3)`` of (xy, xx, yy).

    Column ``k`` is ``normalizers[k]`` applied to each example, with ``empty_score`` for two empty structures (the
    ``none`` normalizer gives the raw overlap). Works on NumPy arrays (float64, the host path) and ``jax.numpy``
    arrays (the device path, gradient-safe); the built-in ratios (a·s) / (b·s) are computed in one vectorized
    division.

    >>> normalized_rows(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]), (NONE, F1)).tolist()
    [[1.0, 0.4], [0.0, 1.0]]
    """
    xp = _xp(stats)
    stats = xp.asarray(stats)
    n = stats.shape[0]
    xy, xx, yy = stats[:, 0], stats[:, 1], stats[:, 2]
    linear = [k for k, m in enumerate(normalizers) if m.builtin and m.linear is not None]
    cols: list[Any] = [None] * len(normalizers)
    if linear:
        a = [normalizers[k].linear[0] for k in linear]  # type: ignore[index]
        b = [normalizers[k].linear[1] for k in linear]  # type: ignore[index]
        ratios = safe_divide(_combined(stats, a), _combined(stats, b), zero_division)
        for j, k in enumerate(linear):
            cols[k] = ratios[:, j]
    for k, m in enumerate(normalizers):
        if cols[k] is None:
            cols[k] = xp.broadcast_to(xp.asarray(m(xy, xx, yy, zero_division), dtype=stats.dtype), (n,))
    empty = is_empty_pair(xx, yy)
    fill = xp.asarray(empty_score, dtype=stats.dtype)
    cols = [c if m.is_identity else xp.where(empty, fill, c) for c, m in zip(cols, normalizers)]
    if not cols:
        return xp.zeros((n, 0), dtype=stats.dtype)
    return xp.stack(cols, axis=1)


def prf(matched: float, predicted: float, reference: float) -> dict[str, float]:
    """Precision, recall and F1 of exact totals as Python floats: the one read-out of the task reports.

    :math:`P = m / t`, :math:`R = m / g`, :math:`F_1 = 2m / (t + g)` (the ``f1`` normalizer), 0.0 where a denominator
    is 0 (:data:`metametric_jax._ratios.UNDEFINED`: left out of a resampled replicate). Scorers that print F1 as the
    harmonic mean of their printed ratios use :func:`f_measure` instead.

    >>> prf(2, 3, 4)
    {'precision': 0.6666666666666666, 'recall': 0.5, 'f1': 0.5714285714285714}
    """
    m, t, g = float(matched), float(predicted), float(reference)
    return {"precision": ratio(m, t), "recall": ratio(m, g), "f1": ratio(2.0 * m, t + g)}
