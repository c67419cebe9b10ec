"""The device randomization test's sums: exact digit sums, so any order of the examples gives the same bits."""

from __future__ import annotations

from fractions import Fraction

import jax
import numpy as np
import pytest

from metametric_jax import randomization


def _value(pair: np.ndarray) -> Fraction:
    return Fraction(float(pair[0])) + Fraction(float(pair[1]))


@pytest.mark.parametrize(("n", "samples"), [(0, 3), (1, 5), (7, 16), (2500, 9)])
def test_sums_are_exact_within_the_digits_and_do_not_depend_on_the_order(n: int, samples: int) -> None:
    rng = np.random.default_rng(n)
    va = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-3, 3, size=4)).astype(np.float32)
    vb = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-3, 3, size=4)).astype(np.float32)
    masks = (rng.random((samples, n)) < 0.5).astype(np.float32)
    sums = jax.jit(randomization._exact_sums)
    got = [np.asarray(x) for x in sums(va, vb, masks)]
    assert [x.shape for x in got] == [(4, 2), (4, 2), (samples, 4, 2), (samples, 4, 2)]
    order = rng.permutation(n)  # the blocks of 1,024 examples hold other examples, the sums the same bits
    for mine, theirs in zip(got, sums(va[order], vb[order], masks[:, order])):
        np.testing.assert_array_equal(mine.view(np.int32), np.asarray(theirs).view(np.int32))
    a, b = va.astype(np.float64), vb.astype(np.float64)
    top = np.maximum(np.abs(a).max(axis=0, initial=0.0), np.abs(b).max(axis=0, initial=0.0))
    bound = [Fraction(max(n, 1)) * Fraction(float(np.ldexp(1.0, int(np.frexp(t)[1]) - 36))) for t in top]
    swapped_a = a[None] - masks[:, :, None] * (a - b)[None]
    swapped_b = b[None] + masks[:, :, None] * (a - b)[None]
    for pairs, rows in ((got[0][None], a[None]), (got[1][None], b[None]), (got[2], swapped_a), (got[3], swapped_b)):
        for r in range(rows.shape[0]):
            for k in range(4):
                exact = sum(map(Fraction, rows[r, :, k].tolist()), Fraction(0))
                assert abs(_value(pairs[r, k]) - exact) <= bound[k], (r, k)
