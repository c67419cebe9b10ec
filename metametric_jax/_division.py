"""Correctly rounded float32 division, and products, in ``jax.numpy`` with the same bits on every backend.

XLA divides float32 with the device's own instruction: correctly rounded on CPU, but on NVIDIA GPUs an approximation
within two units in the last place (``div.full.f32``; about a fifth of quotients come out one unit off, and a
quotient ``x/x`` is not always 1). A metric's ``compute()`` would then give other float32 figures on a GPU than on a
CPU for the same state. :func:`divide` computes the quotient of two normal float32 numbers by long division of their
24-bit significands in unsigned 32-bit integers (25 quotient bits, 8 at a time by integer division, the remainder as
the sticky bit, rounded to nearest, ties to even), which every backend evaluates exactly, on every platform but the
CPU, whose own division is correctly rounded (the same bits; a program with many ratios, a suite's ``compute``,
would take several times as long to compile with the long division). Where an operand or the quotient is not a
normal number (zero, subnormal, infinite, NaN, or a quotient that would overflow or be subnormal) it gives the
backend's own quotient, as XLA computes it everywhere. In a process whose only backend is the CPU, the choice is made
when tracing (half the program to trace, lower and compile); a program lowered or exported there for another platform
needs the environment variable ``METAMETRIC_JAX_LOWER_EVERY_PLATFORM=1`` (:data:`EVERY_PLATFORM`). A divisor known when
tracing (``x / 3``) takes the long division everywhere: XLA compiles a division by a constant as a product by its
reciprocal, on the CPU too.

Products have a backend-dependent rounding too where a sum follows: XLA on CPUs fuses ``x * y + z`` into one fused
multiply-add (one rounding), on GPUs it rounds twice. :func:`scale` computes ``c * x`` from the 12-bit halves of both
factors, whose four products are exact, so fused or not every step rounds the same way. :func:`sqrt` is a square root
made of these steps only (a backend's own float32 square root may be an approximation).
"""

from __future__ import annotations

import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["divide", "long_division", "scale", "sqrt"]

_FRACTION = np.uint32(0x007FFFFF)
_IMPLICIT = np.uint32(0x00800000)
_SIGN = np.uint32(0x80000000)


def _fields(x: Any) -> tuple[Any, Any, Any]:
    bits = lax.bitcast_convert_type(x, jnp.uint32)
    exponent = ((bits >> np.uint32(23)) & np.uint32(0xFF)).astype(jnp.int32)
    return bits & _SIGN, exponent, (bits & _FRACTION) | _IMPLICIT


def known_divisor(num: Any, den: Any) -> bool:
    """Whether ``den`` is known when the program is traced (XLA would compile ``num / den`` as ``num * (1 / den)``).

    Known: ``num`` is traced and ``den`` is not (a Python number, a NumPy or concrete array).
    """
    return isinstance(num, jax.core.Tracer) and not isinstance(den, jax.core.Tracer)


def divide(num: Any, den: Any, *, constant_divisor: bool | None = None) -> Any:
    """``num / den`` correctly rounded for float32 arrays (broadcast); other dtypes divide as XLA does.

    Differentiable: its derivatives are those of ``num / den``. A divisor known when the program is traced
    (:func:`known_divisor`; ``constant_divisor`` says so where the caller found it before staging the operands) takes
    the long division on every backend: XLA compiles ``x / c`` for a constant ``c`` as ``x * (1 / c)``, which is not
    correctly rounded.

    >>> import jax.numpy as jnp
    >>> float(divide(jnp.float32(3163.328613), jnp.float32(3163.328613)))
    1.0
    """
    if constant_divisor is None:
        constant_divisor = known_divisor(num, den)
    num, den = jnp.asarray(num), jnp.asarray(den)
    if num.dtype != jnp.float32 or den.dtype != jnp.float32:
        return num / den
    if constant_divisor:
        return _divide_by_constant(num, den)
    if _cpu_only():  # XLA's CPU quotient itself (its derivatives are the quotient's)
        return _cpu_quotient(*jnp.broadcast_arrays(num, den))
    return _divide(num, den)


def _plain(num: Any, den: Any) -> Any:
    """The backend's own quotient: on a CPU, and where an operand or the quotient is not normal."""
    return num / den


def _quotient_jvp(fn: Any) -> Any:
    """``fn`` (a quotient of two float32 arrays) with the derivatives of ``num / den``."""
    fn = jax.custom_jvp(fn)

    @fn.defjvp
    def jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
        num, den = primals
        d_num, d_den = tangents
        quotient = fn(num, den)
        return quotient, (d_num - quotient * d_den) / den

    return fn


#: the environment variable that asks for the long division's branch in every program, also in a process whose only
#: backend is the CPU (for programs lowered or exported there for another platform)
EVERY_PLATFORM = "METAMETRIC_JAX_LOWER_EVERY_PLATFORM"


def _cpu_only() -> bool:
    """Whether every backend of this process is a CPU (and no program is to carry the other platforms' branch)."""
    if os.environ.get(EVERY_PLATFORM, "") not in ("", "0"):
        return False
    from jax.extend.backend import backends

    return set(backends()) <= {"cpu"}


@_quotient_jvp
def _divide(num: Any, den: Any) -> Any:
    # XLA's CPU division is correctly rounded already: the long division only where the program runs elsewhere (the
    # branch is chosen when the program is lowered for its platform, so a CPU program carries no long division). In
    # a process with no other backend, divide() makes the choice when tracing: the long division's branch doubled the
    # traced and lowered program of a suite's compute() (the ranking suite's took 9.7 s to compile, 5.4 s without).
    num, den = jnp.broadcast_arrays(num, den)
    return lax.platform_dependent(num, den, cpu=_cpu_quotient, default=long_division)


def _cpu_quotient(num: Any, den: Any) -> Any:
    """XLA's CPU quotient, kept a division where the divisor is a constant staged in the program (``jnp.float32(3)``).

    The barrier hides the constant from XLA's rewrite of ``x / c`` as ``x * (1 / c)`` in the programs tested here (not
    under ``vmap``, where XLA looks through it); divisors known when traced take the long division instead.
    """
    num, den = lax.optimization_barrier((num, den))
    return num / den


@_quotient_jvp
def _divide_by_constant(num: Any, den: Any) -> Any:
    # every backend: XLA rewrites a division by a constant as a product by its reciprocal, on the CPU too
    return long_division(*jnp.broadcast_arrays(num, den))


def long_division(num: Any, den: Any) -> Any:
    """The correctly rounded quotient of float32 arrays of one shape, by long division of their significands."""
    plain = _plain(num, den)
    sign_n, exp_n, sig_n = _fields(num)
    sign_d, exp_d, sig_d = _fields(den)
    below = sig_n < sig_d  # the quotient of the significands is in [1/2, 1): take one more bit of the numerator
    remainder = jnp.where(below, sig_n << 1, sig_n) - sig_d  # the leading quotient bit is 1; remainder < sig_d
    exponent = exp_n - exp_d + 127 - below.astype(jnp.int32)
    quotient = jnp.ones_like(sig_n)
    for _ in range(3):  # 8 quotient bits a step (remainder * 2**8 < 2**32): 23 fraction bits and the rounding bit
        shifted = remainder << 8
        digits = lax.div(shifted, sig_d)
        remainder = shifted - digits * sig_d
        quotient = (quotient << 8) | digits
    significand = quotient >> 1
    round_up = ((quotient & 1) == 1) & ((remainder != 0) | ((significand & 1) == 1))
    significand = significand + round_up.astype(jnp.uint32)
    carry = significand >> 24  # rounded up to 2**24: the next binade
    significand = significand >> carry
    exponent = exponent + carry.astype(jnp.int32)
    bits = (sign_n ^ sign_d) | (exponent.astype(jnp.uint32) << 23) | (significand & _FRACTION)
    exact = lax.bitcast_convert_type(bits, jnp.float32)
    normal = (exp_n > 0) & (exp_n < 255) & (exp_d > 0) & (exp_d < 255) & (exponent > 0) & (exponent < 255)
    return jnp.where(normal, exact, plain)


def _halves(x: Any) -> tuple[Any, Any]:
    """``x`` as ``hi + lo``: ``hi`` its sign, exponent and first 12 significant bits, ``lo`` the rest (exact)."""
    hi = lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint32) & np.uint32(0xFFFFF000), jnp.float32)
    return hi, x - hi


def scale(x: Any, c: Any) -> Any:
    """``c * x`` for float32 arrays, with the same bits on every backend also where a sum follows it.

    The products of the factors' 12-bit halves are exact, and their sum is taken in a fixed order; the result is
    within a unit in the last place of ``c * x`` (a factor zero or not finite: ``c * x``). Other dtypes multiply as
    XLA does.
    """
    x = jnp.asarray(x)
    c = jnp.asarray(c, dtype=x.dtype)
    if x.dtype != jnp.float32:
        return c * x
    x_hi, x_lo = _halves(x)
    c_hi, c_lo = _halves(c)
    split = c_hi * x_hi + ((c_hi * x_lo + c_lo * x_hi) + c_lo * x_lo)
    return jnp.where(jnp.isfinite(x) & jnp.isfinite(c) & (x != 0) & (c != 0), split, c * x)


def sqrt(x: Any) -> Any:
    """A square root of float32 arrays with the same bits on every backend, within a unit in the last place.

    Newton's iteration ``s <- (s + x / s) / 2`` from an initial guess made of the bits of ``x`` (about 4% off), four
    steps of a correctly rounded division (:func:`divide`), an addition and an exact halving: nothing a backend rounds
    its own way. Zero, negative, infinite and NaN inputs, and other dtypes, take ``jnp.sqrt``.

    >>> import jax.numpy as jnp
    >>> float(sqrt(jnp.float32(2.25)))
    1.5
    """
    x = jnp.asarray(x)
    if x.dtype != jnp.float32:
        return jnp.sqrt(x)
    normal = (x >= np.float32(np.finfo(np.float32).tiny)) & jnp.isfinite(x)
    safe = jnp.where(normal, x, np.float32(1))
    bits = lax.bitcast_convert_type(safe, jnp.uint32)
    root = lax.bitcast_convert_type((bits >> np.uint32(1)) + np.uint32(0x1FBD1DF5), jnp.float32)
    for _ in range(4):
        root = (root + divide(safe, root)) * np.float32(0.5)
    return jnp.where(normal, root, jnp.sqrt(x))
