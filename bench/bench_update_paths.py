"""Benchmark: metric updates per second through the three update paths, on CPU.

Each update is one batch of 64 documents with up to 32 typed spans ``(start, end, label)`` each (a set-of-spans
metric, F1, derived by ``@metametric``). Predictions are the references with about a quarter of the spans moved or
relabelled. The paths:

* host: ``D.metric.from_model_output(pred_docs, ref_docs)`` on Python objects already decoded (matching in
  Python / NumPy);
* host+decode: the same from the NumPy arrays with ``decode=fn``, outside ``jit`` (decoding included, as in an eval
  loop that fetches the model's outputs to the host);
* callback: a jitted step that gets padded integer arrays and calls ``from_model_output(..., decode=fn)``, which
  decodes and matches on the host through ``jax.pure_callback``;
* device: a jitted step calling ``Doc.metric.from_records(RecordPair(...))`` on the same arrays (pure ``jax.numpy``).

Each path is timed as the best of several rounds of ``--updates`` updates (results blocked on); the jitted paths
get one untimed warm-up call. Ratios are updates per second relative to the callback path.

Run: ``python bench/bench_update_paths.py [--updates N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from collections.abc import Callable

import jax
import numpy as np

from metametric_jax import metametric
from metametric_jax.device import RecordPair, encode_pairs

LABELS = ("PER", "LOC", "ORG", "MISC")
DOCS, ITEMS = 64, 32


@dataclasses.dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str


@metametric(normalizer="f1")
@dataclasses.dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]


def make_batch(seed: int) -> tuple[list[Doc], list[Doc]]:
    rng = np.random.default_rng(seed)
    refs, preds = [], []
    for _ in range(DOCS):
        k = int(rng.integers(ITEMS // 2, ITEMS + 1))
        starts = rng.choice(200, size=k, replace=False)
        gold = {Span(int(s), int(s + rng.integers(1, 4)), LABELS[rng.integers(0, 4)]) for s in starts}
        pred = set()
        for s in gold:
            r = rng.random()
            if r < 0.12:
                s = Span(s.start + 1, s.end, s.label)
            elif r < 0.25:
                s = Span(s.start, s.end, LABELS[rng.integers(0, 4)])
            pred.add(s)
        refs.append(Doc(frozenset(gold)))
        preds.append(Doc(frozenset(pred)))
    return preds, refs


def decode(example: tuple[np.ndarray, np.ndarray]) -> Doc:
    records, mask = example
    return Doc(frozenset(Span(a, b, LABELS[t]) for (a, b, t), m in zip(records.tolist(), mask.tolist()) if m))


def time_path(fn: Callable[[], object], updates: int, repeat: int) -> float:
    """Best updates per second over ``repeat`` rounds of ``updates`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(updates):
            out = fn()
        jax.block_until_ready(out)
        best = min(best, time.perf_counter() - t0)
    return updates / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    preds, refs = make_batch(0)
    pair = encode_pairs(preds, refs, max_items=ITEMS, metric=Doc.metric)
    # the decode function reads label codes by position in LABELS: encode with that vocabulary
    codes = {v: LABELS.index(k) for k, v in pair.vocabulary["label"].items()}
    relabel = np.vectorize(lambda c: codes[int(c)], otypes=[np.int32])
    ep_records = pair.pred_records.copy()
    er_records = pair.ref_records.copy()
    ep_records[..., 2] = relabel(ep_records[..., 2])
    er_records[..., 2] = relabel(er_records[..., 2])
    arrays = [jax.device_put(a) for a in (ep_records, pair.pred_mask, er_records, pair.ref_mask)]

    callback_step = jax.jit(lambda pr, pm, rr, rm: Doc.metric.from_model_output((pr, pm), (rr, rm), decode=decode))
    device_step = jax.jit(lambda pr, pm, rr, rm: Doc.metric.from_records(RecordPair(pr, pm, rr, rm)))
    host = Doc.metric.from_model_output(preds, refs)
    cb = callback_step(*arrays)
    dev = device_step(*arrays)
    assert cb.totals() == host.totals()
    assert [dev.totals()[k] for k in ("xy", "xx", "yy", "count")] == [
        host.totals()[k] for k in ("xy", "xx", "yy", "count")
    ]

    rates = {
        "host": time_path(lambda: Doc.metric.from_model_output(preds, refs).count, args.updates, args.repeat),
        "host+decode": time_path(
            lambda: (
                Doc.metric.from_model_output(
                    (ep_records, pair.pred_mask), (er_records, pair.ref_mask), decode=decode
                ).count
            ),
            args.updates,
            args.repeat,
        ),
        "callback": time_path(lambda: callback_step(*arrays).count, args.updates, args.repeat),
        "device": time_path(lambda: device_step(*arrays).count, args.updates, args.repeat),
    }
    print(f"backend {jax.default_backend()}, {os.cpu_count()} CPUs; batches of {DOCS} documents x {ITEMS} spans")
    for name, rate in rates.items():
        print(f"  {name:12s} {rate:10.1f} updates/s   {rate / rates['callback']:7.2f} x callback")
    print(
        f"  device / host = {rates['device'] / rates['host']:.2f}x, "
        f"callback / host = {rates['callback'] / rates['host']:.2f}x"
    )


if __name__ == "__main__":
    main()
