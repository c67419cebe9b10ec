"""metametric_jax: structured-prediction metrics derived from types, as immutable JAX accumulators.

Decorate a dataclass with :func:`metametric` and get its metric, ``D.metric``: ``D.metric.score(pred, ref)`` for one
pair, and ``D.metric.empty()`` / ``from_model_output`` / ``merge`` / ``reduce`` / ``compute`` to accumulate micro and
macro averages in JAX (Chen et al., "A Unified View of Evaluation Metrics for Structured Prediction", EMNLP 2023).
"""

from metametric_jax import dsl
from metametric_jax.accumulate import Metric, MetricConfig, make_metric, stats_metric
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.derive import derive, metametric
from metametric_jax.errors import InputFormatError
from metametric_jax.explain import Explanation, Match
from metametric_jax.matching import GraphMatching, LatentSetMatching, MaxPair, SequenceMatching, SetMatching
from metametric_jax.normalizer import Normalizer, fbeta, parse_normalizer
from metametric_jax.similarity import Discrete, FromFunction, Normalized, Preprocess, Product, Similarity, UnionSim
from metametric_jax.suite import Suite, make_suite
from metametric_jax.variable import Variable

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "metametric",
    "derive",
    "dsl",
    "Variable",
    "Metric",
    "MetricConfig",
    "Suite",
    "make_metric",
    "make_suite",
    "stats_metric",
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
]
