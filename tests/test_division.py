"""Correctly rounded float32 division (``_division.divide``): NumPy's IEEE quotient bit for bit on every backend.

A GPU's ``div.full.f32`` is one unit off for about a fifth of quotients; XLA's CPU division is correctly rounded.
:func:`divide` lowers to the long division (``long_division``) for every platform but the CPU: these tests run the
long division itself on the CPU against NumPy's quotients, and check which program each platform gets.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from metametric_jax import _division
from metametric_jax._division import divide, long_division
from metametric_jax.normalizer import normalized_rows, safe_divide

TINY = np.finfo(np.float32).tiny
jitted = jax.jit(long_division)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def _normal(*xs: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.logical_and.reduce([np.isfinite(x) & (np.abs(x) >= TINY) for x in xs])


def _pairs(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return a, b


def test_random_bit_patterns_equal_numpy_where_normal() -> None:
    a, b = _pairs(0, 400_000)
    with np.errstate(all="ignore"):
        expected = a / b
    normal = _normal(a, b, expected)
    assert normal.mean() > 0.7
    out = np.asarray(jitted(a[normal], b[normal]))
    np.testing.assert_array_equal(_bits(out), _bits(expected[normal]))
    np.testing.assert_array_equal(_bits(np.asarray(jax.jit(divide)(a[normal], b[normal]))), _bits(expected[normal]))


def test_counts_and_significands_at_the_edges() -> None:
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 2**24, size=(2, 100_000)).astype(np.float32)
    counts[1] = np.maximum(counts[1], 1)
    edges = np.array([1, 2, 3, 5, 7, 2**23 - 1, 2**23, 2**23 + 1, 2**24 - 1, 2**24, 2**24 + 2], np.float32)
    a = np.concatenate([counts[0], np.repeat(edges, edges.size)])
    b = np.concatenate([counts[1], np.tile(edges, edges.size)])
    expected = a / b
    np.testing.assert_array_equal(_bits(np.asarray(jitted(a, b))), _bits(expected))
    # quotients at the ends of the normal range, and x / x
    big = np.float32(np.finfo(np.float32).max)
    a2 = np.array([big, big, TINY * 4, TINY, 3163.328613, -7.0, 7.0], np.float32)
    b2 = np.array([big, np.float32(0.75), np.float32(2.0), np.float32(0.5), 3163.328613, 3.0, -3.0], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(np.asarray(jitted(a2, b2))), _bits(a2 / b2))
    assert float(jitted(np.float32(3163.328613), np.float32(3163.328613))) == 1.0
    assert float(divide(np.float32(3163.328613), np.float32(3163.328613))) == 1.0


def test_the_long_division_is_lowered_for_every_platform_but_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where another platform's program may be lowered (asked for here: this process has only a CPU backend)."""
    monkeypatch.setenv(_division.EVERY_PLATFORM, "1")
    x = jnp.ones(3, jnp.float32)
    traced = jax.jit(lambda a, b: divide(a, b)).trace(x, x)  # a function of its own: traced afresh
    assert "bitcast_convert" not in traced.lower(lowering_platforms=("cpu",)).as_text()
    for platform in ("cuda", "rocm", "tpu"):
        assert "bitcast_convert" in traced.lower(lowering_platforms=(platform,)).as_text(), platform


def test_a_process_with_only_a_cpu_traces_no_long_division(monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch is chosen when tracing where the CPU is the only backend: a smaller program, the same quotients.

    In a process with another backend (a GPU) both branches are traced, and the platform chooses when lowering.
    """
    monkeypatch.delenv(_division.EVERY_PLATFORM, raising=False)
    cpu_only = set(jax.extend.backend.backends()) <= {"cpu"}
    a, b = _pairs(4, 20_000)
    traced = jax.jit(lambda x, y: divide(x, y)).trace(a, b)  # a function of its own: traced afresh
    assert ("bitcast_convert" not in str(traced.jaxpr)) == cpu_only
    with np.errstate(all="ignore"):
        expected = a / b
    normal = _normal(a, b, expected)
    got = np.asarray(traced.lower().compile()(a, b))
    np.testing.assert_array_equal(_bits(got[normal]), _bits(expected[normal]))
    monkeypatch.setenv(_division.EVERY_PLATFORM, "1")
    assert "bitcast_convert" in str(jax.jit(lambda x, y: divide(x, y)).trace(a, b).jaxpr)


def test_other_operands_divide_as_xla_does() -> None:
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 1.0, -2.5, 3e38], np.float32)
    a, b = np.repeat(specials, specials.size), np.tile(specials, specials.size)
    plain = np.asarray(jax.jit(lambda x, y: x / y)(a, b))
    out = np.asarray(jitted(a, b))
    np.testing.assert_array_equal(_bits(np.asarray(jax.jit(divide)(a, b)))[~np.isnan(out)], _bits(out)[~np.isnan(out)])
    same = (_bits(out) == _bits(plain)) | (np.isnan(out) & np.isnan(plain))
    assert same.all(), (a[~same], b[~same], out[~same], plain[~same])


def test_other_dtypes_and_broadcasting() -> None:
    assert divide(jnp.arange(4), 2).dtype == (jnp.arange(4) / 2).dtype
    out = divide(jnp.ones((3, 1), jnp.float32), jnp.asarray([1.0, 3.0], jnp.float32))
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(out[:, 1]), np.float32(1) / np.float32(3))
    batched = jax.vmap(divide)(jnp.asarray([1.0, 2.0]), jnp.asarray([3.0, 7.0]))
    np.testing.assert_array_equal(np.asarray(batched), np.float32([1, 2]) / np.float32([3, 7]))


def test_derivatives_are_those_of_the_quotient() -> None:
    for args in ((3.0, 4.0), (-1.5, 0.25)):
        for arg in (0, 1):
            ours = jax.grad(divide, argnums=arg)(*map(jnp.float32, args))
            plain = jax.grad(lambda x, y: x / y, argnums=arg)(*map(jnp.float32, args))
            assert float(ours) == pytest.approx(float(plain), rel=1e-6)


def test_safe_divide_and_rows_use_it() -> None:
    """The device path's ratios (compute(), per-example rows) are the correctly rounded quotients."""
    rng = np.random.default_rng(2)
    stats = rng.integers(0, 2**20, size=(5_000, 3)).astype(np.float32)
    stats[:, 0] = np.minimum(stats[:, 0], stats[:, 1:].min(axis=1))
    from metametric_jax.normalizer import F1, PRECISION, RECALL

    rows = np.asarray(jax.jit(lambda s: normalized_rows(s, (PRECISION, RECALL, F1)))(jnp.asarray(stats)))
    xy, xx, yy = stats.T
    with np.errstate(all="ignore"):
        expected = np.stack([xy / xx, xy / yy, (xy + xy) / (xx + yy)], axis=1).astype(np.float32)
    expected[xx == 0, 0] = 0.0
    expected[yy == 0, 1] = 0.0
    np.testing.assert_array_equal(_bits(rows), _bits(expected))
    np.testing.assert_array_equal(
        _bits(np.asarray(safe_divide(jnp.asarray(xy), jnp.asarray(yy)))), _bits(np.where(yy == 0, 0, xy / yy))
    )


def test_quotients_by_a_constant_are_correctly_rounded_inside_jit_and_vmap() -> None:
    """XLA compiles ``x / c`` for a constant ``c`` as ``x * (1 / c)`` (a unit off for a third of the quotients by 3).

    The coreference suite's CoNLL average, ``(muc + bcub + ceafe) / 3``, came out so on a CPU (compiled, and in the
    bootstrap's vmapped replicates) and differed from the same program on a GPU. A divisor known when traced takes the
    long division; one staged in the program (``jnp.float32(c)``) is hidden from the rewrite outside ``vmap``.
    """
    x = np.random.default_rng(5).random((64, 300)).astype(np.float32)
    for c in (3.0, 10.0):
        expected = _bits(x / np.float32(c))
        for f in (
            lambda v, c=c: divide(v, c),
            lambda v, c=c: safe_divide(v, c),
            lambda v, c=c: divide(v, np.float32(c)),
            lambda v, c=c: safe_divide(v, jnp.float32(c)),
        ):
            np.testing.assert_array_equal(_bits(np.asarray(jax.jit(f)(jnp.asarray(x)))), expected)
        for f in (lambda v, c=c: divide(v, c), lambda v, c=c: safe_divide(v, c)):
            np.testing.assert_array_equal(_bits(np.asarray(jax.jit(jax.vmap(f))(jnp.asarray(x)))), expected)


def test_the_long_division_is_what_computes_normal_quotients(monkeypatch: pytest.MonkeyPatch) -> None:
    """With XLA's quotient replaced by a wrong one, normal quotients are unchanged and the others follow it."""
    a, b = _pairs(3, 50_000)
    with np.errstate(all="ignore"):
        expected = a / b
    normal = _normal(a, b, expected)
    real = jnp.divide
    # the fallback quotient one unit off everywhere: only the quotients outside the normal range may show it
    monkeypatch.setattr(_division, "_plain", lambda x, y: jnp.nextafter(real(x, y), jnp.float32(np.inf)))
    out = np.asarray(jax.jit(long_division)(a, b))
    np.testing.assert_array_equal(_bits(out[normal]), _bits(expected[normal]))
    assert (_bits(out[~normal]) != _bits(expected[~normal])).any()


def test_rows_take_no_matrix_product() -> None:
    """A float32 matrix product runs in TF32 on GPUs by default (11 significant bits of a count); the rows sum terms."""
    from metametric_jax.normalizer import F1, PRECISION, fbeta

    jaxpr = jax.make_jaxpr(lambda s: normalized_rows(s, (PRECISION, F1, fbeta(0.5))))(jnp.ones((4, 3), jnp.float32))
    assert "dot_general" not in str(jaxpr)


def _scale_in_numpy(x: np.ndarray, c: Any) -> np.ndarray:
    """:func:`scale`'s sum of the halves' products in NumPy, which rounds every operation on its own."""

    def halves(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hi = (np.asarray(v, np.float32).view(np.uint32) & np.uint32(0xFFFFF000)).view(np.float32)
        return hi, np.asarray(v, np.float32) - hi

    (xh, xl), (ch, cl) = halves(x), halves(np.full_like(x, c))
    return ch * xh + ((ch * xl + cl * xh) + cl * xl)


def test_scaled_sums_round_as_numpy_does_with_or_without_fused_multiply_adds() -> None:
    """``scale(x, c) + y`` jitted equals NumPy's separately rounded steps (a plain ``c * x + y`` on a CPU does not:
    XLA fuses it into one multiply-add there, and not on a GPU)."""
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((2, 200_000)).astype(np.float32)
    for c in (0.25, 1.69, 2.0, 1.0 / 3.0):
        c32 = np.float32(c)
        ours = np.asarray(jax.jit(lambda u, v, k: _division.scale(u, k) + v)(x, y, c32))
        np.testing.assert_array_equal(_bits(ours), _bits(_scale_in_numpy(x, c32) + y))
        np.testing.assert_array_equal(
            _bits(np.asarray(jax.jit(_division.scale)(x, c32))), _bits(_scale_in_numpy(x, c32))
        )
    off = np.abs(_scale_in_numpy(x, np.float32(1.69)) - np.float32(1.69) * x)
    assert (off <= np.spacing(np.abs(np.float32(1.69) * x))).all()
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    out = np.asarray(_division.scale(special, np.float32(1.5)))
    np.testing.assert_array_equal(_bits(out[[0, 1, 3, 4]]), _bits(special[[0, 1, 3, 4]] * np.float32(1.5)))
    assert np.isnan(out[2])


def test_square_roots_are_within_one_unit_and_the_same_with_the_long_division(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_division.sqrt``: Newton steps of the correctly rounded division; on a GPU the division is the long division,
    which gives the same quotients, so the roots are the same bits there (run here with the long division forced)."""
    rng = np.random.default_rng(11)
    x = (rng.random(100_000) * 10.0 ** rng.integers(-36, 38, 100_000)).astype(np.float32)
    x = np.concatenate([x, np.float32([1, 2, 4, 0.25, 1e-37, 3.3e38, 0, np.inf, np.nan, -1, 1e-40])])
    got = np.asarray(jax.jit(_division.sqrt)(x))
    normal = np.isfinite(x) & (x >= np.finfo(np.float32).tiny)
    exact = np.sqrt(x[normal].astype(np.float64)).astype(np.float32)
    ulps = np.abs(got[normal].view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and (ulps == 0).mean() > 0.7
    np.testing.assert_array_equal(got[~normal], np.asarray(jnp.sqrt(x[~normal])))
    assert float(_division.sqrt(jnp.float32(2.25))) == 1.5
    monkeypatch.setattr(_division, "divide", long_division)
    np.testing.assert_array_equal(np.asarray(jax.jit(_division.sqrt)(x)), got)
