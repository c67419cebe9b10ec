"""Fixtures shared by the tests (plain functions and the shared test data types are in ``helpers.py``).

The resampling classes are shared so that their jitted ``compute`` and the eager operations on their replicate arrays
compile once per test session, not once per test: the same arguments give the same class (see
:func:`metametric_jax.significance.bootstrap`), and every test that does not depend on the number of replicates or
the seed uses these. Each fixture restarts the class's running example positions, which tests may advance.
"""

from __future__ import annotations

import pytest
from helpers import BAG, Sentence

from metametric_jax import metric_of
from metametric_jax import significance as sig

REPLICATES = 32
"""The replicates (or permutations) of the shared resampling classes."""


def _fresh(cls: type) -> type:
    cls.reset_positions()
    return cls


@pytest.fixture
def bag_boot() -> type:
    """The bootstrap class of ``helpers.BAG`` (32 replicates, seed 0, level 0.95), its running positions restarted."""
    return _fresh(sig.bootstrap(BAG, replicates=REPLICATES, seed=0))


@pytest.fixture
def bag_rnd() -> type:
    """The randomization class of ``helpers.BAG`` (32 permutations, seed 0), its running positions restarted."""
    return _fresh(sig.randomization(BAG, permutations=REPLICATES, seed=0))


@pytest.fixture
def sentence_boot() -> type:
    """The bootstrap class of ``helpers.Sentence`` (32 replicates, seed 0), its running positions restarted."""
    return _fresh(sig.bootstrap(metric_of(Sentence), replicates=REPLICATES, seed=0))


@pytest.fixture
def sentence_rnd() -> type:
    """The randomization class of ``helpers.Sentence`` (32 permutations, seed 0), its running positions restarted."""
    return _fresh(sig.randomization(metric_of(Sentence), permutations=REPLICATES, seed=0))
