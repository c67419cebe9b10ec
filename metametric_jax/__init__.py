"""metametric_jax: structured-prediction metrics derived from types, as immutable JAX accumulators.

Decorate a dataclass with :func:`metametric` and get its metric, ``metric_of(D)`` (also spelled ``D.metric``):
``metric_of(D).score(pred, ref)`` for one pair, and ``empty()`` / ``from_model_output`` / ``merge`` / ``reduce`` /
``compute`` to accumulate micro and macro averages in JAX (Chen et al., "A Unified View of Evaluation Metrics for
Structured Prediction", EMNLP 2023).

The names below are imported on first use, so ``import metametric_jax`` (and the command line) does not load JAX
until a metric is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_HOMES = {
    "dsl": None,
    "significance": None,
    "metametric": "build",
    "metric_of": "build",
    "make_metric": "build",
    "stats_metric": "build",
    "derive": "derive",
    "Variable": "variable",
    "Metric": "accumulate",
    "MetricConfig": "accumulate",
    "Suite": "suite",
    "make_suite": "suite",
    "Constraint": "constraint",
    "parse_constraint": "constraint",
    "Normalizer": "normalizer",
    "parse_normalizer": "normalizer",
    "fbeta": "normalizer",
    "Similarity": "similarity",
    "Discrete": "similarity",
    "Product": "composite",
    "UnionSim": "composite",
    "FromFunction": "similarity",
    "Preprocess": "similarity",
    "Normalized": "similarity",
    "SetMatching": "matching",
    "SequenceMatching": "matching",
    "GraphMatching": "matching",
    "LatentSetMatching": "matching",
    "MaxPair": "matching",
    "Explanation": "explain",
    "Match": "explain",
    "InputFormatError": "errors",
    "Report": "report",
}

__all__ = [
    "__version__",
    "dsl",
    "significance",
    "metametric",
    "metric_of",
    "make_metric",
    "stats_metric",
    "derive",
    "Variable",
    "Metric",
    "MetricConfig",
    "Suite",
    "make_suite",
    "Constraint",
    "parse_constraint",
    "Normalizer",
    "parse_normalizer",
    "fbeta",
    "Similarity",
    "Discrete",
    "Product",
    "UnionSim",
    "FromFunction",
    "Preprocess",
    "Normalized",
    "SetMatching",
    "SequenceMatching",
    "GraphMatching",
    "LatentSetMatching",
    "MaxPair",
    "Explanation",
    "Match",
    "InputFormatError",
    "Report",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name, "")
    if home == "":
        raise AttributeError(f"module 'metametric_jax' has no attribute {name!r}")
    module = importlib.import_module(f"metametric_jax.{home or name}")
    value = module if home is None else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from metametric_jax import dsl, significance
    from metametric_jax.accumulate import Metric, MetricConfig
    from metametric_jax.build import make_metric, metametric, metric_of, stats_metric
    from metametric_jax.composite import Product, UnionSim
    from metametric_jax.constraint import Constraint, parse_constraint
    from metametric_jax.derive import derive
    from metametric_jax.errors import InputFormatError
    from metametric_jax.explain import Explanation, Match
    from metametric_jax.matching import GraphMatching, LatentSetMatching, MaxPair, SequenceMatching, SetMatching
    from metametric_jax.normalizer import Normalizer, fbeta, parse_normalizer
    from metametric_jax.report import Report
    from metametric_jax.similarity import Discrete, FromFunction, Normalized, Preprocess, Similarity
    from metametric_jax.suite import Suite, make_suite
    from metametric_jax.variable import Variable
