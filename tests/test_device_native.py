"""Device-native (pure jnp) metric updates on integer records, against the host path, Counter arithmetic and seqeval."""

from __future__ import annotations

import dataclasses
import enum
import warnings
from collections import Counter
from typing import Annotated, Literal

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import flat
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import f1_score, precision_score, recall_score

from metametric_jax import dsl, make_metric, metametric
from metametric_jax.device import (
    RecordPair,
    encode_pairs,
    encode_records,
    record_spec,
    record_stats,
    vocab_from_labels,
)
from metametric_jax.tasks.ner import Span, extract_spans
from metametric_jax.tasks.tagging import bio_span_records

CONSTRAINTS = ("<->", "->", "<-", "~")


class Kind(enum.Enum):
    ARG = "arg"
    MOD = "mod"


@dataclasses.dataclass(frozen=True)
class Rel:
    """A relation record with every kind of encodable field."""

    head: int
    tail: int
    label: str
    kind: Kind
    negated: bool
    source: Literal["gold", "silver"]


def rel_doc(constraint: str, normalizer: str = "f1"):
    @metametric(normalizer=normalizer, constraint=constraint)
    @dataclasses.dataclass(frozen=True)
    class RelDoc:
        rels: list[Rel]

    return RelDoc


REL_DOCS = {c: rel_doc(c) for c in CONSTRAINTS}

rels = st.builds(
    Rel,
    head=st.integers(0, 2),
    tail=st.integers(-1, 1),
    label=st.sampled_from(["a", "b"]),
    kind=st.sampled_from(list(Kind)),
    negated=st.booleans(),
    source=st.sampled_from(["gold", "silver"]),
)
# few distinct values, so equal records and duplicates are common
small_rels = st.builds(
    Rel,
    head=st.integers(0, 1),
    tail=st.just(0),
    label=st.sampled_from(["a", "b"]),
    kind=st.just(Kind.ARG),
    negated=st.booleans(),
    source=st.just("gold"),
)
docs = st.lists(st.one_of(small_rels, rels), max_size=6)


def device_state(metric, pred_records, pred_mask, ref_records, ref_mask, weights=None):
    """The device-native state of one batch of records (what ``metric.from_records`` computes)."""
    return metric.from_records(RecordPair(pred_records, pred_mask, ref_records, ref_mask), weights)


jit_device_state = jax.jit(device_state, static_argnums=0)
jit_record_stats = jax.jit(record_stats, static_argnums=4)
jit_bio_span_records = jax.jit(bio_span_records)


def check_against_host(metric, pred_docs, ref_docs, weights=None, max_items=None, pad_to=None) -> None:
    """Device path (jitted) vs host path; ``pad_to`` appends weight-0 empty documents on the device side."""
    n = len(pred_docs)
    pad = 0 if pad_to is None else pad_to - n
    pair = encode_pairs(list(pred_docs) + [[]] * pad, list(ref_docs) + [[]] * pad, max_items=max_items, metric=metric)
    w = None if weights is None else np.asarray(weights, np.float32)
    if pad:
        w = np.concatenate([np.ones(n, np.float32) if w is None else w, np.zeros(pad, np.float32)])
    # jitted once per metric, shape and weighting: the records alone (the vocabulary, static in a RecordPair, would
    # compile a new program for every set of strings a generated batch holds); eagerly, the encoded pair itself
    state = jit_device_state(metric, pair.pred_records, pair.pred_mask, pair.ref_records, pair.ref_mask, w)
    eager = metric.from_records(pair, w)
    np.testing.assert_array_equal(flat(eager), flat(state))
    host = metric.from_model_output(pred_docs, ref_docs, weights)
    got, want = state.totals(), host.totals()
    assert [got[k] for k in ("xy", "xx", "yy", "count")] == [want[k] for k in ("xy", "xx", "yy", "count")]
    for k, v in want["macro"].items():  # macro sums: float32 per example
        np.testing.assert_allclose(got["macro"][k], v, rtol=2e-6, atol=1e-6, err_msg=k)
    for k, v in state.compute().items():
        np.testing.assert_allclose(float(v), float(host.compute()[k]), rtol=2e-6, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@settings(max_examples=25, deadline=None)
@given(data=st.lists(st.tuples(docs, docs), min_size=1, max_size=5))
def test_relation_records_equal_host_path(constraint: str, data) -> None:
    Doc = REL_DOCS[constraint]
    check_against_host(Doc.metric, [Doc(p) for p, _ in data], [Doc(r) for _, r in data], max_items=6, pad_to=5)


@given(p=st.lists(small_rels, max_size=6), r=st.lists(small_rels, max_size=6))
@settings(max_examples=40, deadline=None)
def test_one_to_one_is_multiset_intersection(p, r) -> None:
    pair = encode_pairs([p], [r], max_items=6, metric=REL_DOCS["<->"].metric)
    ep = type("Side", (), {"records": pair.pred_records, "mask": pair.pred_mask})
    er = type("Side", (), {"records": pair.ref_records, "mask": pair.ref_mask})
    xy, xx, yy = np.asarray(jit_record_stats(ep.records, ep.mask, er.records, er.mask, "<->"))[0]
    assert xy == sum((Counter(p) & Counter(r)).values())
    assert (xx, yy) == (len(p), len(r))
    xy, xx, yy = np.asarray(jit_record_stats(ep.records, ep.mask, er.records, er.mask, "~"))[0]
    cp, cr = Counter(p), Counter(r)
    assert xy == sum(c * cr[k] for k, c in cp.items())
    assert (xx, yy) == (sum(c * c for c in cp.values()), sum(c * c for c in cr.values()))


def test_weights_and_padding_beyond_longest() -> None:
    Doc = REL_DOCS["<->"]
    rng = np.random.default_rng(3)

    def make():
        return Doc([Rel(int(rng.integers(0, 3)), 0, "a", Kind.ARG, False, "gold") for _ in range(rng.integers(0, 4))])

    pred, ref = [make() for _ in range(10)], [make() for _ in range(10)]
    check_against_host(Doc.metric, pred, ref, weights=np.arange(10) * 0.25, max_items=7)


def test_tuple_and_label_records() -> None:
    @metametric(normalizer="jaccard")
    @dataclasses.dataclass(frozen=True)
    class Triples:
        items: frozenset[tuple[int, int, str]]

    @metametric(normalizer="f1", constraint="~")
    @dataclasses.dataclass(frozen=True)
    class Labels:
        labels: list[str]

    assert record_spec(Triples.metric).width == 3 and record_spec(Labels.metric).width == 1
    p = [Triples(frozenset({(0, 1, "x"), (1, 2, "y")})), Triples(frozenset()), Triples(frozenset({(3, 3, "x")}))]
    r = [Triples(frozenset({(0, 1, "x")})), Triples(frozenset()), Triples(frozenset({(3, 3, "y")}))]
    check_against_host(Triples.metric, p, r)
    check_against_host(Labels.metric, [Labels(["a", "a", "b"]), Labels([])], [Labels(["a", "c"]), Labels(["b"])])


def test_dsl_set_matching_qualifies() -> None:
    metric = make_metric(dsl.set_matching(dsl.auto(Rel), constraint="->"), normalizer="f1")
    spec = record_spec(metric)
    assert spec.field is None and spec.width == 6
    p = [[Rel(0, 0, "a", Kind.ARG, False, "gold")] * 2, []]
    r = [[Rel(0, 0, "a", Kind.ARG, False, "gold")], [Rel(1, 0, "a", Kind.MOD, True, "silver")]]
    check_against_host(metric, p, r)


def test_vmap_over_batches_then_reduce_equals_host_merge() -> None:
    Doc = REL_DOCS["<-"]
    rng = np.random.default_rng(0)

    def make():
        n = rng.integers(0, 5)
        return Doc(
            [Rel(int(rng.integers(0, 3)), 0, "ab"[rng.integers(0, 2)], Kind.ARG, False, "gold") for _ in range(n)]
        )

    batches = [([make() for _ in range(6)], [make() for _ in range(6)]) for _ in range(3)]
    vocab = {"label": {"a": 0, "b": 1}, "source": {"gold": 0}}
    enc = [
        (
            encode_records(p, max_items=5, vocab=vocab, metric=Doc.metric),
            encode_records(r, max_items=5, vocab=vocab, metric=Doc.metric),
        )
        for p, r in batches
    ]
    stack = lambda i, f: jnp.stack([getattr(e[i], f) for e in enc])  # noqa: E731
    states = jax.jit(jax.vmap(lambda a, b, c, d: device_state(Doc.metric, a, b, c, d)))(
        stack(0, "records"), stack(0, "mask"), stack(1, "records"), stack(1, "mask")
    )
    host = Doc.metric.empty()
    for p, r in batches:
        host = host.merge(Doc.metric.from_model_output(p, r))
    got, want = states.reduce().compute(), host.compute()
    for k in want:
        np.testing.assert_allclose(float(got[k]), float(want[k]), rtol=2e-6, err_msg=k)


# ------------------------------------------------------------------------------------------------ BIO tags on device
TYPES = ("PER", "LOC", "ORG")
TAGS = ("O",) + tuple(f"{p}-{t}" for t in TYPES for p in "BI")


@metametric(normalizer="f1")
@dataclasses.dataclass(frozen=True)
class Sentence:
    spans: frozenset[Span]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, len(TAGS) - 1), min_size=0, max_size=10), min_size=1, max_size=6))
def test_bio_span_records_match_extract_spans(rows) -> None:
    ids = np.zeros((6, 10), np.int32)
    mask = np.zeros((6, 10), bool)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        ids[i, len(r) :] = 1  # padding that would be spans if the mask were ignored
        mask[i, : len(r)] = True
    rec, m = jit_bio_span_records(ids, mask)
    for i, r in enumerate(rows):
        want = sorted((s.start, s.end, s.label) for s in extract_spans([TAGS[t] for t in r]))
        got = sorted((int(a), int(b), TYPES[int(t)]) for (a, b, t), k in zip(np.asarray(rec[i]), np.asarray(m[i])) if k)
        assert got == want


def test_device_span_f1_equals_seqeval_and_callback_path() -> None:
    rng = np.random.default_rng(4)
    n, length = 32, 14
    gold = rng.integers(0, len(TAGS), (n, length)).astype(np.int32)
    pred = np.where(rng.random((n, length)) < 0.3, rng.integers(0, len(TAGS), (n, length)), gold).astype(np.int32)
    mask = np.arange(length)[None, :] < rng.integers(0, length + 1, n)[:, None]

    @jax.jit
    def step(p, g, m):
        pr, pm = bio_span_records(p, m)
        gr, gm = bio_span_records(g, m)
        return device_state(Sentence.metric, pr, pm, gr, gm)

    state = step(pred, gold, mask)
    y_true = [[TAGS[t] for t, k in zip(row, mk) if k] for row, mk in zip(gold, mask)]
    y_pred = [[TAGS[t] for t, k in zip(row, mk) if k] for row, mk in zip(pred, mask)]
    res = state.compute()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = {
            "precision": precision_score(y_true, y_pred),
            "recall": recall_score(y_true, y_pred),
            "f1": f1_score(y_true, y_pred),
        }
    for k, v in ref.items():
        np.testing.assert_allclose(float(res[k]), v, rtol=1e-6, err_msg=k)

    def decode(ex):
        return Sentence(frozenset(extract_spans([TAGS[t] for t, k in zip(ex[0], ex[1]) if k])))

    cb = jax.jit(lambda p, g, m: Sentence.metric.from_model_output((p, m), (g, m), decode=decode))(pred, gold, mask)
    assert [state.totals()[k] for k in ("xy", "xx", "yy")] == [cb.totals()[k] for k in ("xy", "xx", "yy")]
    for k, v in cb.compute().items():
        np.testing.assert_allclose(float(res[k]), float(v), rtol=2e-6, err_msg=k)
    # the host encoding of the decoded spans with the tagger's type ids gives the same records' metric
    docs_p = [decode((pred[i], mask[i])) for i in range(n)]
    docs_g = [decode((gold[i], mask[i])) for i in range(n)]
    vocab = vocab_from_labels(TYPES)
    ep = encode_records(docs_p, vocab=vocab, metric=Sentence.metric)
    eg = encode_records(docs_g, vocab=vocab, metric=Sentence.metric)
    assert vocab == vocab_from_labels(TYPES)
    enc_state = device_state(Sentence.metric, ep.records, ep.mask, eg.records, eg.mask)
    assert [enc_state.totals()[k] for k in ("xy", "xx", "yy")] == [state.totals()[k] for k in ("xy", "xx", "yy")]


# ------------------------------------------------------------------------------------------------ errors
def test_non_qualifying_metrics_say_why_and_point_to_callback() -> None:
    @metametric(normalizer="f1")
    @dataclasses.dataclass(frozen=True)
    class TwoFields:
        spans: frozenset[Span]
        doc_id: str

    @metametric(normalizer="f1")
    @dataclasses.dataclass(frozen=True)
    class Fuzzy:
        values: list[Annotated[float, dsl.from_function(lambda a, b: max(0.0, 1 - abs(a - b)))]]

    @metametric(normalizer="f1")
    @dataclasses.dataclass(frozen=True)
    class Nested:
        groups: list[frozenset[int]]

    @metametric(normalizer="f1")
    @dataclasses.dataclass(frozen=True)
    class FloatRec:
        values: list[tuple[float, int]]

    for metric, why in [
        (TwoFields.metric, "2 fields"),
        (Fuzzy.metric, "not exact equality"),
        (Nested.metric, "not exact equality|records have type"),
        (FloatRec.metric, "records have type"),
    ]:
        with pytest.raises(TypeError, match=why) as info:
            device_state(
                metric,
                np.zeros((1, 1, 1), np.int32),
                np.ones((1, 1), bool),
                np.zeros((1, 1, 1), np.int32),
                np.ones((1, 1), bool),
            )
        assert "decode=fn" in str(info.value) and "cannot be computed on the device" in str(info.value)


def test_shape_errors_at_trace_time() -> None:
    rec, mask = np.zeros((2, 3, 3), np.int32), np.ones((2, 3), bool)
    with pytest.raises(ValueError, match="4 columns"):
        device_state(Sentence.metric, np.zeros((2, 3, 4), np.int32), mask, rec, mask)
    with pytest.raises(ValueError, match="same length"):
        jax.jit(lambda a, b, c, d: device_state(Sentence.metric, a, b, c, d)).trace(rec, mask, rec[:1], mask[:1])
    with pytest.raises(TypeError, match="integer"):
        device_state(Sentence.metric, rec.astype(np.float32), mask, rec, mask)


def test_encode_records_errors() -> None:
    doc = Sentence(frozenset({Span(0, 1, "PER"), Span(2, 3, "LOC")}))
    with pytest.raises(ValueError, match="more than max_items=1"):
        encode_pairs([doc], [doc], max_items=1, metric=Sentence.metric)
    with pytest.raises(TypeError, match="field 'start' is int; found float"):
        encode_pairs([Sentence(frozenset({Span(0.5, 1, "PER")}))], [doc], metric=Sentence.metric)
    with pytest.raises(ValueError, match="int32"):
        encode_pairs([Sentence(frozenset({Span(2**40, 1, "PER")}))], [doc], metric=Sentence.metric)
