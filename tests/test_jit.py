"""Host-callback metric updates inside jax.jit / vmap / pmap / shard_map, against the host path and seqeval.

The multi-device checks run this file as a script in a subprocess with 4 simulated CPU devices (XLA_FLAGS must be
set before JAX starts).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import flat, four_device_part
from seqeval.metrics import f1_score, precision_score, recall_score

from metametric_jax import metametric
from metametric_jax.tasks.ner import Span, extract_spans

pytestmark = pytest.mark.filterwarnings("ignore:.*ill-defined")

TYPES = ("PER", "LOC", "ORG")
TAGS = ("O",) + tuple(f"{p}-{t}" for t in TYPES for p in "BI")  # id 0 = O, 1 + 2t = B-t, 2 + 2t = I-t


@metametric(normalizer="f1")
@dataclasses.dataclass(frozen=True)
class Sentence:
    """A tagged sentence as its set of typed spans."""

    spans: frozenset[Span]


def tag_strings(ids: np.ndarray, mask: np.ndarray) -> list[str]:
    return [TAGS[int(t)] for t, m in zip(ids, mask) if m]


def decode(example: dict) -> Sentence:
    """One row of tag ids (with its padding mask) → the sentence's spans."""
    return Sentence(frozenset(extract_spans(tag_strings(example["tags"], example["mask"]))))


def decode_only(label: str):
    def fn(example: dict) -> Sentence:
        return Sentence(frozenset(s for s in decode(example).spans if s.label == label))

    return fn


def make_batch(seed: int, n: int = 16, length: int = 12) -> tuple[dict, dict]:
    """Gold tags, predictions that copy gold with noise, and a padding mask (lengths 0..length)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, len(TAGS), (n, length)).astype(np.int32)
    noise = rng.random((n, length)) < 0.3
    pred = np.where(noise, rng.integers(0, len(TAGS), (n, length)), gold).astype(np.int32)
    lengths = rng.integers(0, length + 1, n)
    lengths[0] = length
    mask = np.arange(length)[None, :] < lengths[:, None]
    return {"tags": pred, "mask": mask}, {"tags": gold, "mask": mask}


def host_docs(batch: dict) -> list[Sentence]:
    return [decode({"tags": batch["tags"][i], "mask": batch["mask"][i]}) for i in range(len(batch["tags"]))]


def seqeval_scores(pred: dict, gold: dict) -> dict[str, float]:
    n = len(gold["tags"])
    y_pred = [tag_strings(pred["tags"][i], pred["mask"][i]) for i in range(n)]
    y_true = [tag_strings(gold["tags"][i], gold["mask"][i]) for i in range(n)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "precision": precision_score(y_true, y_pred),
            "recall": recall_score(y_true, y_pred),
            "f1": f1_score(y_true, y_pred),
            "macro_f1": f1_score(y_true, y_pred, average="macro"),
        }


def type_macro_f1(states: dict) -> float:
    """Mean span F1 over the types that occur in either side (seqeval's macro average)."""
    f1s = []
    for st in states.values():
        r = st.compute()
        if float(r["overlap"]) > 0 or float(st.micro["xx"].sum()) + float(st.micro["yy"].sum()) > 0:
            f1s.append(float(r["f1"]))
    return float(np.mean(f1s)) if f1s else 0.0


def eval_step(pred: dict, gold: dict, weights=None) -> tuple:
    micro = Sentence.metric.from_model_output(pred, gold, weights, decode=decode)
    per_type = {t: Sentence.metric.from_model_output(pred, gold, weights, decode=decode_only(t)) for t in TYPES}
    return micro, per_type


# ------------------------------------------------------------------------------------------------ single device
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jit_equals_host_path_and_seqeval(seed: int) -> None:
    pred, gold = make_batch(seed)
    host = Sentence.metric.from_model_output(host_docs(pred), host_docs(gold))
    eager, _ = eval_step(pred, gold)
    jitted, per_type = jax.jit(eval_step)(pred, gold)
    np.testing.assert_array_equal(flat(eager), flat(host))
    np.testing.assert_array_equal(flat(jitted), flat(host))
    ref = seqeval_scores(pred, gold)
    res = jitted.compute()
    for k in ("precision", "recall", "f1"):
        np.testing.assert_allclose(float(res[k]), ref[k], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(type_macro_f1(per_type), ref["macro_f1"], rtol=1e-6, atol=1e-7)


def test_jit_with_weights_equals_host_path() -> None:
    pred, gold = make_batch(5)
    w = np.linspace(0.0, 2.0, 16).astype(np.float32)
    host = Sentence.metric.from_model_output(host_docs(pred), host_docs(gold), w)
    jitted, _ = jax.jit(eval_step)(pred, gold, jnp.asarray(w))
    np.testing.assert_array_equal(flat(jitted), flat(host))
    scalar = jax.jit(lambda p, g: Sentence.metric.from_model_output(p, g, 2.0, decode=decode))(pred, gold)
    np.testing.assert_array_equal(
        flat(scalar),
        flat(Sentence.metric.from_model_output(host_docs(pred), host_docs(gold), 2.0)),
    )


def test_batches_merged_in_a_jitted_loop_equal_one_host_batch() -> None:
    batches = [make_batch(s, n=8) for s in range(4)]
    step = jax.jit(lambda state, p, g: state.merge(Sentence.metric.from_model_output(p, g, decode=decode)))
    state = Sentence.metric.empty()
    for p, g in batches:
        state = step(state, p, g)
    all_p = sum((host_docs(p) for p, _ in batches), [])
    all_g = sum((host_docs(g) for _, g in batches), [])
    host = Sentence.metric.from_model_output(all_p, all_g).compute()
    for k, v in state.compute().items():
        np.testing.assert_allclose(float(v), float(host[k]), rtol=1e-6, err_msg=k)


def test_vmap_over_stacked_batches() -> None:
    batches = [make_batch(s, n=6) for s in range(3)]
    stacked_p = jax.tree.map(lambda *xs: np.stack(xs), *[p for p, _ in batches])
    stacked_g = jax.tree.map(lambda *xs: np.stack(xs), *[g for _, g in batches])
    states = jax.jit(jax.vmap(lambda p, g: Sentence.metric.from_model_output(p, g, decode=decode)))(
        stacked_p, stacked_g
    )
    assert states.count.shape == (3, 2)
    for k, (p, g) in enumerate(batches):
        host = Sentence.metric.from_model_output(host_docs(p), host_docs(g))
        np.testing.assert_array_equal(flat(jax.tree.map(lambda a, k=k: a[k], states)), flat(host))


def test_decode_references_with_another_pytree() -> None:
    """References given as padded span arrays (start, end, type) with a count, predictions as tag ids."""
    pred, gold = make_batch(7)
    gold_docs = host_docs(gold)
    width = max(max(len(d.spans) for d in gold_docs), 1)
    arr = np.zeros((16, width, 3), np.int32)
    count = np.zeros(16, np.int32)
    for i, d in enumerate(gold_docs):
        for j, s in enumerate(sorted(d.spans)):
            arr[i, j] = (s.start, s.end, TYPES.index(s.label))
        count[i] = len(d.spans)

    def decode_refs(ex: tuple) -> Sentence:
        spans, k = ex
        return Sentence(frozenset(Span(int(a), int(b), TYPES[int(t)]) for a, b, t in spans[: int(k)]))

    fn = jax.jit(lambda p, r: Sentence.metric.from_model_output(p, r, decode=decode, decode_references=decode_refs))
    got = fn(pred, (arr, count))
    host = Sentence.metric.from_model_output(host_docs(pred), gold_docs)
    np.testing.assert_array_equal(flat(got), flat(host))


# ------------------------------------------------------------------------------------------------ errors
def test_mismatched_leading_axes_raise_at_trace_time() -> None:
    pred, gold = make_batch(0)
    short = {"tags": gold["tags"][:5], "mask": gold["mask"][:5]}
    fn = jax.jit(lambda p, g: Sentence.metric.from_model_output(p, g, decode=decode))
    with pytest.raises(ValueError, match=r"\(16, 12\).*\(5, 12\)"):
        fn.trace(pred, short)
    with pytest.raises(ValueError, match="batch size"):
        Sentence.metric.from_model_output({"tags": pred["tags"], "mask": pred["mask"][:3]}, gold, decode=decode)
    with pytest.raises(ValueError, match=r"weights must have shape \(16,\)"):
        jax.jit(lambda p, g: Sentence.metric.from_model_output(p, g, jnp.ones(3), decode=decode)).trace(pred, gold)


def test_wrong_decoded_type_outside_jit_raises_type_error() -> None:
    pred, gold = make_batch(0)
    with pytest.raises(TypeError, match=r"returned builtins\.list.*expected .*Sentence"):
        Sentence.metric.from_model_output(pred, gold, decode=lambda ex: list(decode(ex).spans))


def test_wrong_decoded_type_inside_jit_raises_type_error_at_trace_time() -> None:
    pred, gold = make_batch(0)
    fn = jax.jit(lambda p, g: Sentence.metric.from_model_output(p, g, decode=lambda ex: frozenset()))
    with pytest.raises(TypeError, match=r"returned builtins\.frozenset.*at trace time.*expected .*Sentence"):
        fn(pred, gold)


def test_wrong_decoded_type_found_only_at_run_time_surfaces_with_message_and_runtime_survives() -> None:
    pred, gold = make_batch(0)

    def picky_decode(ex: dict) -> list:
        if not np.any(ex["mask"]):
            raise ValueError("an all-padding example")  # the trace-time probe cannot tell the type
        return list(decode(ex).spans)

    fn = jax.jit(lambda p, g: Sentence.metric.from_model_output(p, g, decode=picky_decode))
    with pytest.raises(Exception, match=r"returned builtins\.list.*expected .*Sentence") as info:
        fn(pred, gold).count.block_until_ready()
    assert isinstance(info.value, RuntimeError)
    ok = jax.jit(eval_step)(pred, gold)[0]
    assert float(ok.compute()["f1"]) >= 0.0


def test_missing_decode_for_predictions() -> None:
    pred, gold = make_batch(0)
    with pytest.raises(TypeError, match="decode_references was given without decode"):
        Sentence.metric.from_model_output(pred, gold, decode_references=decode)


# ------------------------------------------------------------------------------------------------ 4 devices
def _multi_device_child() -> None:
    """Run under XLA_FLAGS=--xla_force_host_platform_device_count=4; asserts and prints a JSON summary."""
    from jax.sharding import Mesh, PartitionSpec

    assert jax.device_count() == 4, jax.devices()
    pred, gold = make_batch(11, n=32)
    host = Sentence.metric.from_model_output(host_docs(pred), host_docs(gold))
    ref = seqeval_scores(pred, gold)
    shard = lambda tree: jax.tree.map(lambda a: a.reshape((4, -1) + a.shape[1:]), tree)  # noqa: E731

    # pmap: one state per device, merged with psum inside and with all_gather + reduce outside
    def step(p: dict, g: dict) -> tuple:
        micro, per_type = eval_step(p, g)
        return micro.psum("d"), {t: s.psum("d") for t, s in per_type.items()}, micro

    summed, per_type, local = jax.pmap(step, axis_name="d")(shard(pred), shard(gold))
    merged = local.reduce()
    # the devices' states on the host in one transfer (an eager a[k] per leaf compiles a program per leaf shape)
    summed, per_type, per_device = jax.device_get((summed, per_type, local))
    host_shards = Sentence.metric.empty()
    for k in range(4):
        sl = slice(8 * k, 8 * k + 8)
        part = Sentence.metric.from_model_output(host_docs(pred)[sl], host_docs(gold)[sl])
        np.testing.assert_array_equal(flat(jax.tree.map(lambda a, k=k: a[k], per_device)), flat(part))
        host_shards = host_shards.merge(part)
    np.testing.assert_array_equal(flat(merged), flat(host_shards))
    first = jax.tree.map(lambda a: a[0], summed)
    want = host.compute()
    for k, v in first.compute().items():
        np.testing.assert_allclose(float(v), float(want[k]), rtol=1e-6, err_msg=k)
    for name, state in (("psum", first), ("reduce", merged)):
        res = state.compute()
        for k in ("precision", "recall", "f1"):
            np.testing.assert_allclose(float(res[k]), ref[k], rtol=1e-6, atol=1e-7, err_msg=f"{name} {k}")
    macro = type_macro_f1({t: jax.tree.map(lambda a: a[0], s) for t, s in per_type.items()})
    np.testing.assert_allclose(macro, ref["macro_f1"], rtol=1e-6, atol=1e-7)

    # shard_map over a 4-device mesh
    mesh = Mesh(np.array(jax.devices()), ("d",))

    def sm_step(p: dict, g: dict) -> Any:
        return Sentence.metric.from_model_output(p, g, decode=decode).psum("d")

    sm = jax.jit(
        jax.shard_map(sm_step, mesh=mesh, in_specs=(PartitionSpec("d"), PartitionSpec("d")), out_specs=PartitionSpec())
    )
    state = sm(pred, gold)
    for k, v in state.compute().items():
        np.testing.assert_allclose(float(v), float(want[k]), rtol=1e-6, err_msg=k)
    print(json.dumps({"devices": jax.device_count(), "f1": float(first.compute()["f1"]), "seqeval_f1": ref["f1"]}))


def test_pmap_and_shard_map_over_four_simulated_devices(four_devices: dict[str, Any]) -> None:
    """:func:`_multi_device_child`, run with the other four-device checks in one subprocess (conftest.py)."""
    summary = four_device_part(four_devices, "jit")
    assert summary["devices"] == 4
    assert abs(summary["f1"] - summary["seqeval_f1"]) < 1e-6


if __name__ == "__main__":
    _multi_device_child()


# ------------------------------------------------------------------------------------------------ suites
def test_suite_inside_jit_equals_host_path_and_seqeval_report() -> None:
    """A whole suite (NER per type + micro + macro) updated in one callback per batch inside jit."""
    from seqeval.metrics import classification_report

    from metametric_jax.tasks.ner import NerMetric, state_report

    suite = NerMetric(list(TYPES), "IOB2")
    pred, gold = make_batch(5)

    def decode_tags(example: dict) -> list[str]:
        return tag_strings(example["tags"], example["mask"])

    step = jax.jit(lambda p, g: suite.empty().merge(suite.from_model_output(p, g, decode=decode_tags)))
    jitted = step(pred, gold)
    n = len(gold["tags"])
    y_pred = [decode_tags({"tags": pred["tags"][i], "mask": pred["mask"][i]}) for i in range(n)]
    y_true = [decode_tags({"tags": gold["tags"][i], "mask": gold["mask"][i]}) for i in range(n)]
    host = suite.from_model_output(y_pred, y_true)
    for k in host.states:
        np.testing.assert_array_equal(flat(jitted.states[k]), flat(host.states[k]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = classification_report(y_true, y_pred, output_dict=True)
    report = state_report(jitted)
    assert report["macro"]["f1"] == pytest.approx(ref["macro avg"]["f1-score"], abs=1e-9)
    for t in TYPES:
        if t in ref:
            assert report["per_type"][t]["f1"] == pytest.approx(ref[t]["f1-score"], abs=1e-9)
