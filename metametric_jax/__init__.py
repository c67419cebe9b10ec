"""metametric_jax: structured-prediction metrics derived from types, as immutable JAX accumulators."""

__version__ = "0.1.0"
