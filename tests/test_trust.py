"""Inputs that once gave a silently wrong number: each test fails on the code before the fix."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import serialization
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax import dsl, make_metric, metametric, metric_of, stats_metric
from metametric_jax.device import encode_pairs, encode_records


@dataclass(frozen=True)
class Entity:
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Relation:
    head: Entity
    tail: Entity
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Spans:
    spans: frozenset[Entity]


# ---------------------------------------------------------------------------------- 1. empty fields in a product
def test_a_field_empty_on_both_sides_is_neutral() -> None:
    wrong = Doc((Entity(0, 1, "PER"),), ())
    ref = Doc((Entity(5, 5, "ORG"),), ())
    assert metric_of(Doc).score(wrong, ref) == 0.0
    state = metric_of(Doc).from_model_output([wrong], [ref])
    assert float(state.compute()["macro_f1"]) == 0.0 and float(state.compute()["f1"]) == 0.0
    # entities keep counting in precision and recall when no document has relations
    p = Doc((Entity(0, 1, "PER"), Entity(2, 3, "LOC")), ())
    r = Doc((Entity(0, 1, "PER"),), ())
    assert metric_of(Doc).stats(p, r) == (1.0, 2.0, 1.0)
    assert metric_of(Doc).score(p, r) == pytest.approx(2 / 3)
    # only when everything is empty is the pair empty: overlap 0, normalized score empty_score
    assert metric_of(Doc).stats(Doc((), ()), Doc((), ())) == (0.0, 0.0, 0.0)
    assert metric_of(Doc).score(Doc((), ()), Doc((), ())) == 1.0
    # empty on one side only is not neutral: no agreement
    rel = Relation(Entity(0, 1, "PER"), Entity(2, 3, "LOC"), "at")
    assert metric_of(Doc).stats(Doc(r.entities, (rel,)), r) == (0.0, 1.0, 1.0)


def test_nested_products_inside_collections_follow_the_same_rule() -> None:
    @dataclass(frozen=True)
    class Cluster:
        mentions: tuple[Entity, ...]
        label: str

    @metametric(normalizer="f1")
    @dataclass(frozen=True)
    class Clusters:
        clusters: tuple[Cluster, ...]

    empty_a, empty_b = Cluster((), "X"), Cluster((), "X")
    assert metric_of(Clusters).score(Clusters((empty_a,)), Clusters((empty_b,))) == 1.0
    assert metric_of(Clusters).score(Clusters((empty_a,)), Clusters((Cluster((), "Y"),))) == 0.0


# ---------------------------------------------------------------------------------- 2. leaf types in collections
BAD_LEAVES = [Entity("0", 1, "a"), Entity(0.0, 1, "a"), Entity(0, 1, 3)]


@pytest.mark.parametrize("bad", BAD_LEAVES, ids=["str-in-int", "float-in-int", "int-in-str"])
def test_wrong_leaf_types_raise_on_every_path(bad: Entity) -> None:
    good = Entity(0, 1, "a")
    M = metric_of(Spans)
    with pytest.raises(TypeError, match="Entity"):
        M.score(Spans(frozenset({bad})), Spans(frozenset({good})))
    with pytest.raises(TypeError, match="Entity"):
        M.from_model_output(
            [Spans(frozenset({good}))] * 3, [Spans(frozenset({good})), Spans(frozenset()), Spans(frozenset({bad}))]
        )
    with pytest.raises(TypeError):
        make_metric(dsl.set_matching(dsl.auto(Entity), constraint="~"), "f1").score([bad], [good])
    with pytest.raises(TypeError, match="field"):
        encode_pairs([Spans(frozenset({bad}))], [Spans(frozenset({good}))], metric=M)

    def decode(x: np.ndarray) -> Spans:
        return Spans(frozenset({bad})) if int(x) else Spans(frozenset({good}))

    with pytest.raises(TypeError, match="Entity"):
        M.from_model_output(np.array([1]), np.array([0]), decode=decode)


def test_leaf_check_applies_to_directly_scored_dataclasses_too() -> None:
    with pytest.raises(TypeError):
        make_metric(dsl.auto(Entity), "f1").score(Entity("0", 1, "a"), Entity(0, 1, "a"))


# ---------------------------------------------------------------------------------- 3. device encoding
def test_separately_encoded_sides_cannot_share_codes() -> None:
    M = metric_of(Spans)
    p = [Spans(frozenset({Entity(0, 1, "a")}))]
    r = [Spans(frozenset({Entity(0, 1, "b")}))]
    host = M.from_model_output(p, r).compute()
    device = M.from_records(encode_pairs(p, r, metric=M)).compute()
    assert float(host["f1"]) == float(device["f1"]) == 0.0
    with pytest.raises(TypeError, match="encode_pairs"):
        encode_records(p, metric=M)  # string fields need a shared, fixed vocabulary
    with pytest.raises(ValueError, match="fixed vocabulary"):
        encode_records(r, metric=M, vocab={"label": {"a": 0}})
    with pytest.raises(TypeError, match="field 'start' is int; found str"):
        encode_pairs([Spans(frozenset({Entity("0", 1, "a")}))], r, metric=M)


entities = st.builds(Entity, st.integers(0, 4), st.integers(0, 4), st.sampled_from(["a", "b", "é", "PER"]))
docs = st.builds(Spans, st.frozensets(entities, max_size=5))


# one program per batch size: the records alone (a RecordPair's vocabulary is static: each set of strings a generated
# batch holds would compile a new one)
jit_from_records = jax.jit(metric_of(Spans).from_records)


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.tuples(docs, docs), min_size=1, max_size=6))
def test_host_callback_device_and_per_pair_paths_agree(data) -> None:
    M = metric_of(Spans)
    preds, refs = [p for p, _ in data], [r for _, r in data]
    host = M.from_model_output(preds, refs)
    pair = encode_pairs(preds, refs, metric=M, max_items=5)  # every document padded to the strategy's largest
    device = jit_from_records(pair.replace(vocab=()))
    assert M.from_records(pair).totals() == device.totals()  # eagerly, the encoded pair itself
    pairs = np.array([M.stats(p, r) for p, r in data])
    t_host, t_dev = host.totals(), device.totals()
    assert [t_host[k] for k in ("xy", "xx", "yy")] == [t_dev[k] for k in ("xy", "xx", "yy")] == list(pairs.sum(0))
    for k, v in t_host["macro"].items():
        assert t_dev["macro"][k] == pytest.approx(v, rel=1e-6, abs=1e-6)
    batch = M.from_stats(pairs).totals()
    assert batch == t_host


# ---------------------------------------------------------------------------------- 6. checkpoints
def test_a_checkpoint_restores_only_into_its_own_metric() -> None:
    F05 = make_metric(dsl.set_matching(dsl.discrete()), "f0.5", name="bag")
    F2 = make_metric(dsl.set_matching(dsl.discrete()), "f2", name="bag")
    saved = serialization.to_bytes(F2.from_model_output([[1, 2]], [[1]]))
    with pytest.raises(ValueError, match="f2.*f0.5|f0.5.*f2"):
        serialization.from_bytes(F05.empty(), saved)
    rouge_like = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="rouge1")
    doc_bytes = serialization.to_bytes(metric_of(Doc).from_model_output([Doc((), ())], [Doc((), ())]))
    with pytest.raises(ValueError, match="'Doc'.*'rouge1'"):
        serialization.from_bytes(rouge_like.empty(), doc_bytes)
    own = serialization.from_bytes(F2.empty(), saved)
    assert own.totals() == F2.from_model_output([[1, 2]], [[1]]).totals()


def test_a_state_with_another_metrics_signature_is_refused_at_compute() -> None:
    A = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="alpha")
    B = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="beta")
    forged = A.from_model_output([[1]], [[1]]).replace(signature=B.empty().signature)
    with pytest.raises(ValueError, match="'beta'"):
        forged.compute()


def test_a_restored_state_of_another_configuration_cannot_hide_inside_a_merge() -> None:
    A = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="bag")
    B = make_metric(dsl.set_matching(dsl.discrete()), "f1", name="bag", zero_division=1.0)  # same leaves
    good = A.from_model_output([[1, 2]], [[1]])
    forged = good.replace(signature=B.empty().signature)  # what a restore of B's checkpoint into A gives
    for merged in (good.merge(forged), forged.merge(good), A.empty().merge(forged).merge(good)):
        with pytest.raises(ValueError, match="merges sums of different metrics"):
            merged.compute()
    stacked = jax.tree.map(lambda a, b: jnp.stack([a, b]), good, forged)
    with pytest.raises(ValueError, match="merges sums of different metrics"):
        stacked.reduce().compute()
    assert {k: good.merge(good).totals()[k] for k in ("xy", "xx", "yy")} == {"xy": 2.0, "xx": 4.0, "yy": 2.0}


def test_orbax_restores_only_into_the_metric_it_was_saved_from(tmp_path) -> None:
    import orbax.checkpoint as ocp  # the test extra installs it (flax depends on it too)

    F2 = make_metric(dsl.set_matching(dsl.discrete()), "f2", name="bag")
    F05 = make_metric(dsl.set_matching(dsl.discrete()), "f0.5", name="bag")
    other = make_metric(dsl.set_matching(dsl.discrete()), "f2", name="bag", zero_division=1.0)
    state = F2.from_model_output([[1, 2]], [[1]])
    ckpt = ocp.StandardCheckpointer()
    ckpt.save(tmp_path / "state", {"metrics": state, "step": 3})
    ckpt.wait_until_finished()
    restored = ckpt.restore(tmp_path / "state", {"metrics": F2.empty(), "step": 0})
    assert restored["metrics"].totals() == state.totals() and int(restored["step"]) == 3
    with pytest.raises(ValueError, match=r"f0\.5[\s\S]*f2|f2[\s\S]*f0\.5"):  # other figures: orbax refuses the tree
        ckpt.restore(tmp_path / "state", {"metrics": F05.empty(), "step": 0})
    same_leaves = ckpt.restore(tmp_path / "state", {"metrics": other.empty(), "step": 0})["metrics"]
    for use in (lambda s: s.compute(), lambda s: s.totals(), lambda s: other.empty().merge(s).compute()):
        with pytest.raises(ValueError, match="bag"):
            use(same_leaves)


# ---------------------------------------------------------------------------------- traps
def test_statistics_no_similarity_can_produce_are_refused() -> None:
    M = metric_of(Spans)
    for bad in ([[-1.0, 1.0, 1.0]], [[np.nan, 1.0, 1.0]], [[1.0, np.inf, 1.0]]):
        with pytest.raises(ValueError, match="finite and non-negative"):
            M.from_stats(np.array(bad))
    # an overlap above a self-overlap (used to give F1 5.0) for a metric of a self-bounded similarity; the message
    # names the example and the three values
    assert M.metric_config.self_bounded
    for bad, i in (
        ([[5.0, 1.0, 1.0]], 0),
        ([[1.0, 1.0, 1.0], [2.0, 3.0, 1.5]], 1),
        ([[0.0, 0.0, 0.0], [1, 0, 2]], 1),
    ):
        with pytest.raises(ValueError, match=rf"cannot exceed either self-overlap.*example {i} has overlap"):
            M.from_stats(np.array(bad))
        with pytest.raises(ValueError, match="cannot exceed"):
            M.example_rows(np.array(bad))
    # float rounding is tolerated; equality is allowed
    ok = M.from_stats(np.array([[1.0 + 1e-12, 1.0, 1.0], [2.0, 2.0, 7.0], [0.3, 0.1 + 0.2, 0.3]])).compute()
    assert float(ok["f1"]) <= 1.0 + 1e-6
    # statistics of a function need not be bounded: one-sided ones leave a side 0 (coreference's recall members),
    # counts may exceed their denominator (EVALB's crossing brackets per sentence)
    Counts = stats_metric(None, "precision", name="trust_counts")
    assert not Counts.metric_config.self_bounded
    assert float(Counts.from_stats(np.array([[0.5, 0.0, 2.0], [3.0, 1.0, 1.0]])).compute()["overlap"]) == 3.5


def test_unknown_keywords_raise() -> None:
    with pytest.raises(TypeError):
        dsl.union({int: dsl.discrete()}, contraint="~")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        dsl.set_matching(dsl.discrete(), constrain="~")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        metametric(normaliser="f1")  # type: ignore[call-arg]


def test_metric_of_is_the_typed_accessor() -> None:
    assert metric_of(Doc) is Doc.metric
    with pytest.raises(TypeError, match="@metametric"):
        metric_of(Entity)


def test_clu_collection_compute_values_works() -> None:
    import clu.metrics
    from flax import struct

    from metametric_jax.interop import clu_metric

    # annotations must be classes, not strings (this module uses postponed annotations)
    Metrics = struct.dataclass(
        type("Metrics", (clu.metrics.Collection,), {"__annotations__": {"spans": clu_metric(metric_of(Spans))}})
    )

    p = [Spans(frozenset({Entity(0, 1, "a")}))]
    r = [Spans(frozenset({Entity(0, 1, "a"), Entity(2, 3, "b")}))]
    state = Metrics.single_from_model_output(predictions=p, references=r)
    values = state.compute_values()
    assert float(values["spans"].value) == pytest.approx(2 / 3)
    assert float(state.compute()["spans"]["f1"]) == pytest.approx(2 / 3)


def test_nnx_metric_updates_with_arrays_inside_nnx_jit() -> None:
    from flax import nnx

    from metametric_jax.interop import NnxMetric

    labels = ("a", "b")

    def decode(row: np.ndarray) -> Spans:
        return Spans(frozenset(Entity(int(i), int(i), labels[int(v) - 1]) for i, v in enumerate(row) if v > 0))

    metric = NnxMetric(metric_of(Spans), decode=decode)
    pred = np.array([[1, 0, 2], [0, 0, 0], [2, 2, 0]], np.int32)
    gold = np.array([[1, 0, 1], [0, 1, 0], [2, 2, 0]], np.int32)
    mask = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 0]], bool)  # token mask: the second row is all padding

    @nnx.jit
    def step(m: NnxMetric, p: jax.Array, g: jax.Array, k: jax.Array) -> None:
        m.update(predictions=p, references=g, mask=k)

    step(metric, pred, gold, mask)
    want = metric_of(Spans).from_model_output([decode(pred[0]), decode(pred[2])], [decode(gold[0]), decode(gold[2])])
    assert metric.value.totals() == want.totals()
