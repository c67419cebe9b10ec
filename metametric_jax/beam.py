r"""Past one machine: a metric as an Apache Beam ``CombineFn`` (``pip install 'metametric-jax[beam]'``).

:class:`MetricCombineFn` ``(M, batch_size=64)`` combines a ``PCollection`` of examples into ``M``'s figures on any
Beam runner (the DirectRunner here; Dataflow, Flink and Spark unchanged), TFMA's shape:

* ``create_accumulator`` — an empty state and an empty buffer;
* ``add_input`` — buffers the example; every ``batch_size`` examples, ``M.from_model_output`` of the buffer merged
  into the state (matching runs once per batch, as in one process);
* ``merge_accumulators`` — ``merge`` of the states (the buffers joined);
* ``compact`` — the buffer flushed before the accumulator is shuffled;
* ``extract_output`` — ``compute()`` of the merged state (as NumPy), or the state itself with ``output="state"``.

Elements are ``(prediction, reference)`` pairs; for a :func:`~metametric_jax.significance.bootstrap` class
``(example_id, (prediction, reference))`` and for a :func:`~metametric_jax.significance.randomization` class
``(example_id, (prediction_a, prediction_b, reference))``: their ids must be given, as running positions mean
nothing across workers, and unique over the whole collection. A state's sums do not depend on how the runner splits
and merges the examples: integer counts are exact; a sum of fractions (a macro average) to float32 rounding of each
batch (see :mod:`metametric_jax.accumulate`).

The metric class travels by reference (:mod:`metametric_jax._portable`): a class made by a factory, a
``D.metric`` of a dataclass ``D`` defined in an importable module (not in the pipeline's ``__main__``, which Beam's
workers do not import unless ``save_main_session``); accumulators are encoded with :mod:`pickle`.

Example:
    >>> import apache_beam as beam
    >>> from metametric_jax.beam import MetricCombineFn
    >>> from metametric_jax.tasks.amr import SmatchMetric
    >>> pairs = [("(b / boy)", "(b / boy :mod (t / tall))"), ("(g / girl)", "(g / girl)")]
    >>> with beam.Pipeline() as p:  # doctest: +SKIP
    ...     _ = p | beam.Create(pairs) | beam.CombineGlobally(MetricCombineFn(SmatchMetric)) | beam.Map(print)
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from metametric_jax import parallel

try:
    import apache_beam as beam
    from apache_beam import coders
except ImportError as err:  # an optional extra: one line, no traceback from the package
    raise ImportError(
        "metametric_jax.beam needs Apache Beam: pip install 'metametric-jax[beam]'", name="apache_beam"
    ) from err

__all__ = ["MetricCombineFn", "Accumulator"]


class Accumulator:
    """A :class:`MetricCombineFn` accumulator: the merged state of the batches so far (``None``: none) and a buffer.

    Attributes:
        state: the metric's state of every flushed example, or ``None``.
        ids: the buffered examples' ids (bootstrap and randomization classes), else empty.
        sides: the buffered examples' predictions and references, one list per argument of ``from_model_output``.
    """

    def __init__(self, state: Any = None, ids: list[Any] | None = None, sides: list[list[Any]] | None = None) -> None:
        self.state = state
        self.ids = ids if ids is not None else []
        self.sides = sides if sides is not None else []

    def __len__(self) -> int:
        return len(self.sides[0]) if self.sides else 0


class MetricCombineFn(beam.CombineFn):  # type: ignore[misc]
    """A metric, suite, bootstrap or randomization class as a Beam ``CombineFn`` (see the module docstring).

    Args:
        metric: the accumulator class (``D.metric``, a task metric, ``bootstrap(M, ...)``...).
        batch_size: examples per ``from_model_output`` call.
        output: ``"figures"`` (``compute()`` as NumPy arrays, the default) or ``"state"`` (the merged state).

    Raises:
        TypeError: if ``metric`` is not an accumulator class.
        ValueError: on a bad ``batch_size`` or ``output``; when adding an element of the wrong shape, or one without
            an id to a bootstrap or randomization class.
    """

    def __init__(self, metric: Any, batch_size: int = 64, output: str = "figures") -> None:
        if not (isinstance(metric, type) and hasattr(metric, "from_model_output") and hasattr(metric, "empty")):
            raise TypeError(f"MetricCombineFn expects an accumulator class; found {metric!r}.")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; found {batch_size!r}.")
        if output not in ("figures", "state"):
            raise ValueError(f"output must be 'figures' or 'state'; found {output!r}.")
        super().__init__()
        self.metric = metric
        self.batch_size = batch_size
        self.output = output
        self.with_ids, self.arity = parallel.element_shape(metric)

    # the class travels by reference through the standard pickle, whichever pickler the runner uses
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["metric"] = pickle.dumps(self.metric)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.metric = pickle.loads(state["metric"])

    def create_accumulator(self) -> Accumulator:
        """An empty state (made on the first flush) and an empty buffer."""
        return Accumulator(None, [], [[] for _ in range(self.arity)])

    def add_input(self, accumulator: Accumulator, element: Any) -> Accumulator:
        """Buffer one example; flush the buffer into the state every ``batch_size`` examples."""
        sides, ids = parallel.gather(self.metric, [element])
        accumulator.ids.extend(ids)
        for side, values in zip(accumulator.sides, sides):
            side.extend(values)
        if len(accumulator) >= self.batch_size:
            self._flush(accumulator)
        return accumulator

    def _flush(self, accumulator: Accumulator) -> None:
        if not len(accumulator):
            return
        extra = {"example_ids": np.asarray(accumulator.ids, np.int64)} if self.with_ids else {}
        batch = self.metric.from_model_output(*accumulator.sides, **extra)
        accumulator.state = batch if accumulator.state is None else accumulator.state.merge(batch)
        accumulator.ids = []
        accumulator.sides = [[] for _ in range(self.arity)]

    def merge_accumulators(self, accumulators: Any) -> Accumulator:
        """The states merged, the buffers joined (flushed once they hold ``batch_size`` examples)."""
        out = self.create_accumulator()
        for acc in accumulators:
            if acc.state is not None:
                out.state = acc.state if out.state is None else out.state.merge(acc.state)
            out.ids.extend(acc.ids)
            for mine, theirs in zip(out.sides, acc.sides):
                mine.extend(theirs)
        if len(out) >= self.batch_size:
            self._flush(out)
        return out

    def compact(self, accumulator: Accumulator) -> Accumulator:
        """The buffer flushed: the accumulator shuffled between workers carries sums, not examples."""
        self._flush(accumulator)
        return accumulator

    def extract_output(self, accumulator: Accumulator) -> Any:
        """``compute()`` of the merged state (NumPy arrays), or the state with ``output="state"``."""
        self._flush(accumulator)
        state = self.metric.empty() if accumulator.state is None else accumulator.state
        if self.output == "state":
            return state
        import jax

        return jax.tree.map(np.asarray, state.compute())

    def get_accumulator_coder(self) -> Any:
        """Accumulators are pickled with :mod:`pickle` (classes by reference, states as their NumPy sums)."""
        return coders.PickleCoder()
