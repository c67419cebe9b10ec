r"""Use the accumulators with CLU, Flax NNX and Flax checkpoints.

* :func:`clu_metric` — a metric class to put in a ``clu.metrics.Collection``: CLU calls
  ``from_model_output(**model_outputs)`` with every model output by name, so the class is told which outputs are
  the predictions, the references and (optionally) the weights. (CLU reads a collection's fields from
  ``__annotations__``: declare the collection with ``Collection.create(...)``, or in a module without
  ``from __future__ import annotations``.)
* :class:`NnxMetric` — a ``flax.nnx.Metric`` (``update`` / ``reset`` / ``compute``) holding a state, usable in
  ``nnx.MultiMetric``.
* States are ``flax.struct`` pytrees whose static configuration is not a leaf, so they round-trip through
  ``flax.serialization`` (``to_state_dict`` / ``from_state_dict``, ``to_bytes`` / ``from_bytes``) with a target
  state such as ``M.empty()``: a checkpoint taken mid-epoch restores the running totals.

The merge is the compensated elementwise sum of :mod:`metametric_jax.accumulate`,

.. math::

    s \oplus t = \bigl(\textstyle\sum_i w_i \phi(P_i, R_i), \sum_i w_i \phi(P_i, P_i), \dots\bigr)_{s}
    + (\dots)_{t},

so merging per-batch states in any order gives the one-batch result (Chen et al., "A Unified View of Evaluation
Metrics for Structured Prediction", EMNLP 2023, for :math:`\phi`).

Example:
    >>> from dataclasses import dataclass
    >>> import clu.metrics
    >>> from metametric_jax import metametric
    >>> from metametric_jax.interop import clu_metric
    >>> @metametric(normalizer="f1")
    ... @dataclass(frozen=True)
    ... class Doc:
    ...     spans: frozenset[tuple[int, int]]
    >>> Metrics = clu.metrics.Collection.create(spans=clu_metric(Doc.metric, predictions="preds", references="labels"))
    >>> m = Metrics.single_from_model_output(preds=[Doc(frozenset({(0, 1)}))], labels=[Doc(frozenset({(0, 1)}))])
    >>> float(m.compute()["spans"]["f1"])
    1.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax.numpy as jnp
from flax import nnx

from metametric_jax.accumulate import Metric
from metametric_jax.protocol import Accumulator
from metametric_jax.suite import Suite

__all__ = ["clu_metric", "NnxMetric"]


def _check_accumulator(metric_cls: Any, where: str) -> None:
    if not (isinstance(metric_cls, type) and issubclass(metric_cls, (Metric, Suite))):
        raise TypeError(
            f"{where} expects a metric class (e.g. metric_of(D), make_metric(...), stats_metric(...) or a "
            f"make_suite(...) class); found {metric_cls!r}."
        )


def _pick(model_output: Mapping[str, Any], key: str, role: str, owner: str) -> Any:
    if key not in model_output:
        raise TypeError(
            f"{owner}.from_model_output: the model output {key!r} ({role}) is missing; found outputs "
            f"{sorted(model_output)}. Name the right ones with clu_metric(..., {role}=<name>)."
        )
    return model_output[key]


def clu_metric(
    metric_cls: type[Accumulator],
    *,
    predictions: str = "predictions",
    references: str = "references",
    weights: str | None = None,
    decode: Callable[[Any], Any] | None = None,
    decode_references: Callable[[Any], Any] | None = None,
    figure: str | None = None,
) -> type[Any]:
    """A subclass of ``metric_cls`` whose ``from_model_output(**model_outputs)`` picks its inputs by name.

    The class is a valid field type of a ``clu.metrics.Collection`` (CLU calls ``empty()``,
    ``from_model_output(**outputs)``, ``merge``, ``reduce`` and ``compute()``); its states merge with states of
    ``metric_cls`` (same static configuration). ``compute()`` returns the metric's dict of figures.

    Args:
        metric_cls: the accumulator class (``D.metric``, a ``dsl`` / ``stats_metric`` class or a suite).
        predictions: the name of the model output holding the predictions.
        references: the name of the model output holding the references.
        weights: the name of an optional model output of per-example weights (or a 0/1 mask); absent from the
            outputs means weight 1.
        decode: host function from one example's arrays to a prediction structure, for use inside ``jax.jit`` /
            ``pmap`` (see ``Metric.from_model_output``).
        decode_references: the same for references (default: ``decode``).
        figure: the figure ``compute_value()`` reports as a ``clu.values.Scalar`` (what
            ``Collection.compute_values()`` and CLU's metric writers use): a key of ``compute()``, ``"member/key"``
            for a suite's member figure. Default: the declared normalizer's micro figure of a metric (``"f1"`` for an
            F1 metric); a suite needs it named.

    Raises:
        TypeError: if ``metric_cls`` is not an accumulator class; at ``from_model_output`` time, if a named output
            is missing (listing the outputs found); at ``compute_value`` time, if no figure can be chosen.
    """
    _check_accumulator(metric_cls, "clu_metric")
    names = {"predictions": predictions, "references": references, "weights": weights}
    owner = getattr(getattr(metric_cls, "metric_config", None), "name", metric_cls.__name__)

    def from_model_output(cls: type, *args: Any, **model_output: Any) -> Any:
        if args:
            return super(new, cls).from_model_output(*args, **model_output)
        p = _pick(model_output, predictions, "predictions", owner)
        r = _pick(model_output, references, "references", owner)
        w = model_output.get(weights) if weights is not None else None
        extra: dict[str, Any] = {}
        if decode is not None or decode_references is not None:
            extra = {"decode": decode, "decode_references": decode_references}
        return super(new, cls).from_model_output(p, r, w, **extra)

    if figure is None and issubclass(metric_cls, Metric):
        declared = metric_cls.metric_config.normalizer
        figure = "overlap" if declared.is_identity else declared.name

    def compute_value(self: Any) -> Any:
        from clu import values

        if figure is None:
            raise TypeError(
                f"clu_metric({owner}): a suite's compute_value() needs the figure to report; pass "
                "figure='member/key' (e.g. 'conll' or 'muc/f1')."
            )
        value: Any = self.compute()
        for part in figure.split("/"):
            if not isinstance(value, Mapping) or part not in value:
                found = sorted(value) if isinstance(value, Mapping) else type(value).__name__
                raise KeyError(f"clu_metric({owner}): no figure {figure!r} in compute(); found {found}.")
            value = value[part]
        return values.Scalar(value)

    doc = (
        f"{metric_cls.__name__} for clu.metrics.Collection: predictions from the model output {predictions!r}, "
        f"references from {references!r}" + (f", weights from {weights!r}" if weights else "") + "."
    )
    new: Any = type(
        f"Clu{metric_cls.__name__}",
        (metric_cls,),
        {
            "from_model_output": classmethod(from_model_output),
            "compute_value": compute_value,
            "output_names": names,
            "__doc__": doc,
            "__module__": metric_cls.__module__,
        },
    )
    return new


class NnxMetric(nnx.Metric):
    """A ``flax.nnx.Metric`` holding an accumulator state: ``update`` merges a batch in place.

    Example:
        >>> from dataclasses import dataclass
        >>> from metametric_jax import metametric
        >>> @metametric(normalizer="f1")
        ... @dataclass(frozen=True)
        ... class Doc:
        ...     spans: frozenset[int]
        >>> m = NnxMetric(Doc.metric)
        >>> m.update(predictions=[Doc(frozenset({1, 2}))], references=[Doc(frozenset({1}))])
        >>> round(float(m.compute()["f1"]), 4)
        0.6667
        >>> m.reset(); float(m.compute()["overlap"])
        0.0

    Attributes:
        metric_cls: the accumulator class (static).
        state: a ``nnx.metrics.MetricState`` variable holding the running state (``metric_cls.empty()`` after
            ``reset``); it is what ``nnx.split`` / ``nnx.state`` exposes and a checkpoint saves.
    """

    def __init__(
        self,
        metric_cls: type[Accumulator],
        *,
        predictions: str = "predictions",
        references: str = "references",
        weights: str = "weights",
        decode: Callable[[Any], Any] | None = None,
        decode_references: Callable[[Any], Any] | None = None,
    ) -> None:
        """Wrap an accumulator class.

        Args:
            metric_cls: the accumulator class.
            predictions: the ``update`` keyword holding the predictions.
            references: the ``update`` keyword holding the references.
            weights: the ``update`` keyword holding optional per-example weights; a ``mask`` keyword (as passed by
                ``nnx.MultiMetric``) is used as weights when this one is absent. A mask of shape ``(n,)`` weights
                examples; a token-level mask ``(n, L, ...)`` gives weight 1 to a row with any valid token and 0 to an
                all-padding row (padding *inside* a row is the decode function's business: pass the mask in the
                arrays it decodes).
            decode: host function from one example's arrays to a prediction structure: ``update`` then takes arrays
                and works inside ``nnx.jit`` / ``jax.jit`` (see :mod:`metametric_jax.jit`).
            decode_references: the same for references (default: ``decode``).
        """
        _check_accumulator(metric_cls, "NnxMetric")
        self.metric_cls = metric_cls
        self.argnames = (predictions, references, weights)
        self.decode = decode
        self.decode_references = decode_references
        self.state = nnx.metrics.MetricState(metric_cls.empty())

    def reset(self) -> None:
        """Set the state back to ``empty()``."""
        self.state.set_value(self.metric_cls.empty())

    def update(self, **kwargs: Any) -> None:
        """Merge the state of one batch: ``update(predictions=..., references=..., weights=None)``.

        Other keywords (model outputs meant for other metrics of a ``MultiMetric``) are ignored.

        Raises:
            TypeError: if the predictions or references keyword is missing.
            ValueError: if their lengths (or the weights') differ.
        """
        p_name, r_name, w_name = self.argnames
        owner = f"NnxMetric({self.metric_cls.__name__})"
        for key, role in ((p_name, "predictions"), (r_name, "references")):
            if key not in kwargs:
                raise TypeError(f"{owner}.update: missing keyword {key!r} ({role}); found {sorted(kwargs)}.")
        w = kwargs.get(w_name, kwargs.get("mask"))
        if w is not None and getattr(w, "ndim", 1) >= 2:  # a token-level mask: drop all-padding rows
            w = jnp.any(jnp.reshape(jnp.asarray(w, bool), (w.shape[0], -1)), axis=1).astype(jnp.float32)
        extra: dict[str, Any] = {}
        if self.decode is not None or self.decode_references is not None:
            extra = {"decode": self.decode, "decode_references": self.decode_references}
        batch = self.metric_cls.from_model_output(kwargs[p_name], kwargs[r_name], w, **extra)
        self.state.set_value(self.state.get_value().merge(batch))

    def merge_state(self, other: Any) -> None:
        """Merge an accumulator state (e.g. one computed elsewhere, or gathered from devices) into this metric."""
        self.state.set_value(self.state.get_value().merge(other))

    def compute(self) -> dict[str, Any]:
        """The accumulator's ``compute()`` of the running state."""
        return self.state.get_value().compute()

    @property
    def value(self) -> Any:
        """The running accumulator state."""
        return self.state.get_value()
