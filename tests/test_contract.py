"""The accumulator contract: every state class implements it, and a metric class shows a narrow public surface."""

from __future__ import annotations

import dataclasses

from metametric_jax import dsl, make_metric, make_suite, metametric, metric_of
from metametric_jax.accumulate import Metric
from metametric_jax.protocol import Accumulator, SumsAccumulator, is_accumulator_class
from metametric_jax.significance import bootstrap, randomization

#: CLU's five, the statistics and records constructors, the read-outs, one pair's score and its explanation,
#: per-example statistics and rows (for the host engines), the device merge, and the dataclass ``replace``
PUBLIC = {
    "empty",
    "from_model_output",
    "merge",
    "reduce",
    "compute",
    "from_stats",
    "from_records",
    "totals",
    "score",
    "explain",
    "stats",
    "batch_stats",
    "example_rows",
    "psum",
    "replace",
}


@metametric()
@dataclasses.dataclass(frozen=True)
class Pair:
    left: str
    right: str


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")} - {"metric_config", "metric_kind"}


def test_metric_surface_is_at_most_sixteen_methods() -> None:
    bag = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="bag")
    for cls in (Metric, bag, metric_of(Pair)):
        methods = {n for n in _public(cls) if callable(getattr(cls, n))}
        assert methods == PUBLIC, sorted(methods ^ PUBLIC)
        assert len(methods) <= 16


def test_every_state_class_implements_the_contract() -> None:
    bag = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="bag")
    classes = [bag, make_suite("pair_suite", {"a": bag}), bootstrap(bag, 10, 0), randomization(bag, 10, 0)]
    for cls in classes:
        assert is_accumulator_class(cls), cls
        assert isinstance(cls.empty(), Accumulator)
        for name in ("_sums_shape", "_host_batch_sums", "_from_sums"):
            assert callable(getattr(cls, name)), (cls, name)
    assert {"_sums_shape", "_host_batch_sums", "_from_sums"} <= set(vars(SumsAccumulator))


def test_an_incomplete_class_is_not_an_accumulator() -> None:
    class Half:
        @classmethod
        def empty(cls) -> Half:
            return cls()

        def merge(self, other: Half) -> Half:
            return self

    assert not is_accumulator_class(Half)
    assert not isinstance(Half(), Accumulator)
