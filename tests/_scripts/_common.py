"""Data and metrics shared by the multi-device and multi-process scripts (run as subprocesses by the tests)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from metametric_jax import make_suite, metametric, significance, stats_metric


@metametric(normalizer="none")
@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]


def _label_stats(p: Doc, r: Doc) -> tuple[float, float, float]:
    pl = {s.label for s in p.spans}
    rl = {s.label for s in r.spans}
    return float(len(pl & rl)), float(len(pl)), float(len(rl))


LabelF1 = stats_metric(_label_stats, "f1", name="label_f1")
Both = make_suite(
    "spans_and_labels",
    {"spans": Doc.metric, "labels": LabelF1},
    {"mean_f1": lambda r: (r["spans"]["f1"] + r["labels"]["f1"]) / 2},
)


def data(n: int = 64, seed: int = 0) -> tuple[list[Doc], list[Doc]]:
    rng = random.Random(seed)
    labels = ("PER", "LOC", "ORG")
    preds, refs = [], []
    for _ in range(n):
        ref = {Span(s, s + rng.randrange(1, 3), rng.choice(labels)) for s in rng.sample(range(30), rng.randrange(0, 6))}
        pred = {s for s in sorted(ref, key=lambda x: (x.start, x.end, x.label)) if rng.random() < 0.7}
        pred |= {Span(s, s + 1, rng.choice(labels)) for s in rng.sample(range(30), rng.randrange(0, 3))}
        preds.append(Doc(frozenset(pred)))
        refs.append(Doc(frozenset(ref)))
    return preds, refs


def figures(results: dict) -> dict[str, float]:
    """``compute()`` results (possibly nested) as a flat ``{path: float}`` for JSON."""
    out: dict[str, float] = {}
    for k, v in results.items():
        if isinstance(v, dict):
            out.update({f"{k}/{kk}": vv for kk, vv in figures(v).items()})
        else:
            out[k] = float(np.asarray(v))
    return out


#: the bootstrap of the suite (32 replicates): its state must merge across devices and processes exactly
Boot = significance.bootstrap(Both, replicates=32, seed=1)


def boot_figures(state) -> dict[str, float]:
    """The estimate and every replicate's figures of a bootstrap state, flat for JSON."""
    out = {f"estimate/{k}": v for k, v in figures(state.compute()["estimate"]).items()}
    for key, values in figures_lists(state.replicates()).items():
        out.update({f"replicate/{key}/{b}": float(v) for b, v in enumerate(values)})
    return out


def figures_lists(results: dict) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for k, v in results.items():
        if isinstance(v, dict):
            out.update({f"{k}/{kk}": vv for kk, vv in figures_lists(v).items()})
        else:
            out[k] = [float(x) for x in np.asarray(v)]
    return out
