"""``BootstrapState.compute``'s interval ends: nanquantile's definition, found from the replicates' tails."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from metametric_jax.bootstrap import _interval_ends


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    both = ~np.isnan(a)
    return np.abs(a[both] - b[both]) / np.spacing(np.maximum(np.abs(a[both]), np.abs(b[both])).astype(np.float32))


def _reference(x: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """nanquantile's definition in float64 (float32 rank ``q (n - 1)``), and the larger of the two values used."""
    flat = x.reshape(x.shape[0], -1)
    out, scale = np.full(flat.shape[1], np.nan), np.full(flat.shape[1], np.nan)
    for j in range(flat.shape[1]):
        kept = np.sort(flat[:, j][~np.isnan(flat[:, j])].astype(np.float64))
        if kept.size:
            at = np.float32(q) * np.float32(kept.size - 1)
            low, high = int(np.floor(at)), int(np.ceil(at))
            t = float(at) - low
            out[j] = kept[low] * (1.0 - t) + kept[high] * t
            scale[j] = max(abs(kept[low]), abs(kept[high]))
    return out.reshape(x.shape[1:]), scale.reshape(x.shape[1:])


@pytest.mark.parametrize("seed", [0])
def test_interval_ends_are_nanquantiles(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(20):
        b = int(rng.choice([1, 2, 3, 7, 40, 100, 999, 1000, 2000]))
        shape = (b, *rng.integers(1, 4, size=int(rng.integers(0, 3))).tolist())
        x = (rng.standard_normal(shape) * 10.0 ** float(rng.integers(-3, 3))).astype(np.float32)
        if trial % 3 == 0:
            x[rng.random(shape) < rng.random()] = np.nan  # replicates that weight no example
        if trial % 4 == 0:
            x = np.round(x, 1).astype(np.float32)  # ties
        alpha = float(rng.choice([0.005, 0.025, 0.05, 0.1, 0.2, 0.3]))
        got = np.asarray(jax.jit(lambda r, a=alpha: _interval_ends(r, a))(x))
        ref = np.asarray(jnp.nanquantile(x, jnp.asarray([alpha, 1.0 - alpha]), axis=0))
        assert got.shape == ref.shape == (2, *shape[1:])
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        assert (_ulps(ref, got) <= 1).all(), (b, alpha)
        for end, q in enumerate((alpha, 1.0 - alpha)):
            exact, scale = _reference(x, q)
            kept = ~np.isnan(exact)
            error = np.abs(got[end][kept].astype(np.float64) - exact[kept])
            assert (error <= 2 * np.spacing(scale[kept].astype(np.float32))).all(), (b, q)  # two products' roundings


def test_standard_errors_are_the_float64_standard_deviations_rounded() -> None:
    """The corrected two-pass spread: within float32 rounding of the exact value, also where the mean is much larger
    than the spread (where jnp.nanstd loses most of its digits)."""
    from metametric_jax.bootstrap import _spread

    rng = np.random.default_rng(7)
    spread = jax.jit(_spread)
    for trial in range(40):
        b = int(rng.choice([1, 2, 3, 7, 100, 1000, 1025]))
        offset = float(rng.integers(-5, 5)) * 10.0 ** float(rng.integers(0, 4))
        x = (rng.standard_normal((b, 5)) * 10.0 ** float(rng.integers(-3, 4)) + offset).astype(np.float32)
        if trial % 3 == 0:
            x[rng.random((b, 5)) < 0.3] = np.nan
        got = np.asarray(spread(x))
        kept = [c[~np.isnan(c)].astype(np.float64) for c in x.T]
        exact = np.array([np.std(c, ddof=1) if c.size > 1 else np.nan for c in kept])
        np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
        ok = ~np.isnan(exact)
        np.testing.assert_allclose(got[ok], exact[ok], rtol=3e-7, atol=0)
