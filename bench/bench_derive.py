"""Benchmark: a decorator-derived metric, metametric_jax vs the original ``metametric`` (0.2.1), on the same data.

20,000 documents, each a set of 1-6 typed spans (a frozen dataclass ``Span(start, end, label)``); predictions keep
each reference span with probability 0.7 (shifting its start by one token with probability 0.2) and add 0-2
spurious spans (every document has at least one span on both sides: the original scores an empty collection's
self-similarity as 1, which would make the two libraries disagree on empty documents). Both libraries derive the
metric of the same document type with their ``@metametric(normalizer="f1")`` decorator and score the same ``Span``
objects; only the decorated document classes differ.

Two cases:

* exact match: ``spans: frozenset[Span]`` (a discrete similarity on spans; ours scores it as a multiset
  intersection, the original matches a Gram matrix of its product metric);
* soft match: ``spans: Collection[Annotated[Span, sim]]`` with the span-overlap Dice similarity

  .. math::

      \\phi(a, b) = [\\ell_a = \\ell_b] \\, \\frac{2 \\, |[s_a, e_a) \\cap [s_b, e_b)|}{(e_a - s_a) + (e_b - s_b)}

  given as a plain function to both libraries (``dsl.from_function`` / ``Metric.from_function``), so both solve an
  assignment problem per document (``scipy.optimize.linear_sum_assignment``). Ours declares the function
  ``self_bounded`` (Dice is at most 1, its value on a span with itself), so a document's self-overlap is the sum of
  its spans' self-similarities; the original assumes that of every similarity.

Ours is timed on the whole list (``Doc.metric.batch_stats`` and ``Doc.metric.from_model_output(...).compute()``,
blocked until ready) and per pair (``Doc.metric.score``); the original per pair (``ODoc.metric.score``, its only
scoring entry point for a derived metric). Each contender is timed as the best of ``--repeat`` interleaved rounds
after an untimed warm-up (the accumulator compiles ``compute`` once). Per-pair scores are checked equal to the
original's before timing.

Target (exact match): ours on the whole list >= 20x faster than the original.

Run: ``python bench/bench_derive.py [--docs 20000] [--soft-docs 20000] [--repeat 3] [--quick]``.
"""

# No ``from __future__ import annotations`` here: the original reads field types from ``dataclasses.fields``
# literally, so the annotations must be types, not strings.

import argparse
import random
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Annotated, Any

import jax
import numpy as np
from metametric.core.decorator import metametric as original_metametric
from metametric.core.metric import Metric as OriginalMetric

from metametric_jax import dsl, metametric

LABELS = ("PER", "LOC", "ORG", "MISC")


@dataclass(frozen=True)
class Span:
    """A half-open token span ``[start, end)`` with a type label (left undecorated: both libraries derive it)."""

    start: int
    end: int
    label: str


def span_dice(a: Span, b: Span) -> float:
    """Dice overlap of two spans of the same label (0 across labels)."""
    if a.label != b.label:
        return 0.0
    inter = min(a.end, b.end) - max(a.start, b.start)
    return 2.0 * inter / (a.end - a.start + b.end - b.start) if inter > 0 else 0.0


# --------------------------------------------------------------------------------------------- the derived metrics
@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]


@metametric(normalizer="f1")
@dataclass(frozen=True)
class SoftDoc:
    spans: Collection[Annotated[Span, dsl.from_function(span_dice, self_bounded=True)]]


@original_metametric(normalizer="f1")
@dataclass(frozen=True)
class ODoc:
    spans: frozenset[Span]


@original_metametric(normalizer="f1")
@dataclass(frozen=True)
class OSoftDoc:
    spans: Collection[Annotated[Span, OriginalMetric.from_function(span_dice)]]


# ---------------------------------------------------------------------------------------------------------- data
def make_data(n: int, seed: int = 0) -> tuple[list[frozenset[Span]], list[frozenset[Span]]]:
    """``n`` (prediction, reference) span sets of 1-6 spans each; predictions are perturbed references."""
    rng = random.Random(seed)
    preds, refs = [], []
    for _ in range(n):
        size = rng.randint(1, 6)
        ref: set[Span] = set()
        while len(ref) < size:
            s = rng.randrange(0, 200)
            ref.add(Span(s, s + rng.randint(1, 4), rng.choice(LABELS)))
        pred: set[Span] = set()
        for x in sorted(ref, key=lambda x: (x.start, x.end, x.label)):
            if rng.random() < 0.7:
                shift = 1 if rng.random() < 0.2 and x.end - x.start > 1 else 0
                pred.add(Span(x.start + shift, x.end, x.label))
        extra = rng.randint(0, 2)
        while (extra > 0 or not pred) and len(pred) < 6:
            s = rng.randrange(0, 200)
            pred.add(Span(s, s + rng.randint(1, 4), rng.choice(LABELS)))
            extra -= 1
        preds.append(frozenset(pred))
        refs.append(frozenset(ref))
    return preds, refs


# ------------------------------------------------------------------------------------------------------- timing
def interleaved_best(contenders: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict]:
    """Best wall time of each contender over ``repeat`` rounds, the contenders interleaved within a round."""
    best = {k: float("inf") for k in contenders}
    out: dict[str, Any] = {}
    for _ in range(repeat):
        for k, fn in contenders.items():
            t0 = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best, out


def whole_list(metric: Any, preds: list, refs: list) -> dict[str, float]:
    """The accumulator over the whole list: statistics, one state, ``compute`` (blocked until ready)."""
    out = jax.block_until_ready(metric.from_model_output(preds, refs).compute())
    return {k: float(out[k]) for k in ("f1", "macro_f1")}


def run_case(
    title: str,
    original: type,
    ours: dict[str, type],
    preds: list[frozenset[Span]],
    refs: list[frozenset[Span]],
    repeat: int,
    target: float | None,
) -> None:
    """Check agreement, time every contender, print one table."""
    o_p, o_r = [original(p) for p in preds], [original(r) for r in refs]
    first = next(iter(ours.values()))
    d_p, d_r = [first(p) for p in preds], [first(r) for r in refs]
    docs = {name: ([cls(p) for p in preds], [cls(r) for r in refs]) for name, cls in ours.items()}

    # agreement, on every pair, before timing
    expected = np.array([original.metric.score(p, r) for p, r in zip(o_p, o_r)])
    for name, cls in ours.items():
        dp, dr = docs[name]
        got = cls.metric.batch_stats(dp, dr)
        per_pair = np.array([cls.metric.score(p, r) for p, r in zip(dp[:500], dr[:500])])
        f1 = 2 * got[:, 0] / (got[:, 1] + got[:, 2])
        np.testing.assert_allclose(f1, expected, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(per_pair, expected[:500], rtol=1e-12, atol=1e-12, err_msg=name)
        whole_list(cls.metric, dp[:64], dr[:64])  # warm-up: compiles compute
    macro = whole_list(first.metric, d_p, d_r)["macro_f1"]
    assert abs(macro - expected.mean()) < 1e-5, (macro, expected.mean())

    contenders: dict[str, Callable[[], Any]] = {
        f"metametric 0.2.1: {original.__name__}.metric.score per pair": lambda: [
            original.metric.score(p, r) for p, r in zip(o_p, o_r)
        ]
    }
    for name, cls in ours.items():
        dp, dr = docs[name]
        contenders[f"ours {name}: batch_stats(whole list)"] = lambda m=cls.metric, dp=dp, dr=dr: m.batch_stats(dp, dr)
        contenders[f"ours {name}: from_model_output + compute"] = lambda m=cls.metric, dp=dp, dr=dr: whole_list(
            m, dp, dr
        )
        contenders[f"ours {name}: score per pair"] = lambda m=cls.metric, dp=dp, dr=dr: [
            m.score(p, r) for p, r in zip(dp, dr)
        ]
    times, _ = interleaved_best(contenders, repeat)
    base_name = next(iter(contenders))
    base = times[base_name]
    print(f"\n{title}: {len(preds)} documents, mean F1 {expected.mean():.6f} (per-pair scores equal to the original's)")
    print(f"  {'contender':<58}{'time (ms)':>11}{'original / ours':>17}")
    print(f"  {base_name:<58}{base * 1e3:>11.1f}{'1.0x':>17}")
    for name, t in times.items():
        if name == base_name:
            continue
        note = ""
        if target is not None and ("whole list" in name or "compute" in name):
            note = f"   (target >= {target:g}x: {'met' if base / t >= target else 'MISSED'})"
        print(f"  {name:<58}{t * 1e3:>11.1f}{base / t:>16.1f}x{note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20_000, help="documents of the exact-match case")
    ap.add_argument("--soft-docs", type=int, default=20_000, help="documents of the soft-match case")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the best time of each is kept")
    ap.add_argument("--quick", action="store_true", help="2 rounds and 5,000 soft-match documents")
    args = ap.parse_args()
    if args.quick:
        args.repeat = min(args.repeat, 2)
        args.soft_docs = min(args.soft_docs, 5_000)

    print(f"decorator-derived span-set F1, metametric_jax vs metametric 0.2.1; best of {args.repeat} rounds")
    print(f"device: {jax.devices()[0].platform}; jax {jax.__version__}")
    preds, refs = make_data(args.docs)
    run_case("exact match, spans: frozenset[Span]", ODoc, {"Doc": Doc}, preds, refs, args.repeat, 20.0)
    preds, refs = make_data(args.soft_docs, seed=1)
    run_case(
        "soft match, spans: Collection[Annotated[Span, span_dice]] (assignment per document)",
        OSoftDoc,
        {"SoftDoc": SoftDoc},
        preds,
        refs,
        args.repeat,
        None,
    )


if __name__ == "__main__":
    main()
