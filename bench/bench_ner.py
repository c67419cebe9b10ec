"""Benchmark: NER span F1 and per-type report, metametric_jax vs seqeval (default mode), on the same data.

20,000 random sentences of 10-40 IOB2 tags over four types; predictions are the references with realistic errors
(missed and spurious entities, type confusions, boundary shifts, ill-formed ``I-`` starts). Each side is timed as
the best of several interleaved rounds; metametric_jax gets one untimed warm-up call (it compiles
``compute`` with ``jax.jit`` once, as a training loop would).

Run: ``python bench/bench_ner.py [--sentences N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from collections.abc import Callable
from typing import Any

import jax
from seqeval.metrics import classification_report, f1_score

from metametric_jax.tasks.ner import ner_metric, ner_report, span_metric

TYPES = ("PER", "LOC", "ORG", "MISC")


def make_data(n: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    gold: list[list[str]] = []
    pred: list[list[str]] = []
    for _ in range(n):
        length = rng.randint(10, 40)
        g = ["O"] * length
        i = 0
        while i < length:
            if rng.random() < 0.15:
                size = min(rng.choice((1, 1, 2, 2, 3, 4)), length - i)
                t = rng.choice(TYPES)
                g[i] = f"B-{t}"
                for j in range(i + 1, i + size):
                    g[j] = f"I-{t}"
                i += size + 1
            else:
                i += 1
        p = list(g)
        for j in range(length):
            r = rng.random()
            if r < 0.02:  # type confusion
                if p[j] != "O":
                    p[j] = p[j][:2] + rng.choice(TYPES)
            elif r < 0.035:  # ill-formed start or spurious continuation
                p[j] = "I-" + rng.choice(TYPES)
            elif r < 0.045:  # missed token
                p[j] = "O"
            elif r < 0.055:  # spurious entity
                p[j] = "B-" + rng.choice(TYPES)
        gold.append(g)
        pred.append(p)
    return gold, pred


def interleaved_best(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Best wall time of each function over ``repeat`` rounds; each round runs every function once, in turn, so
    that a change of machine load affects all of them alike."""
    best = {k: float("inf") for k in fns}
    out: dict[str, Any] = {}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    gold, pred = make_data(args.sentences)
    n_tokens = sum(map(len, gold))
    print(f"{args.sentences} sentences, {n_tokens} tokens")

    span = span_metric("IOB2")
    suite = ner_metric(sorted(TYPES), "IOB2")

    compute = jax.jit(lambda state: state.compute())  # as in a training loop: compiled once, reused

    def ours_f1() -> float:
        return float(compute(span.from_model_output(pred, gold))["f1"])

    def ours_report() -> dict[str, Any]:
        return jax.device_get(compute(suite.from_model_output(pred, gold)))

    def ours_json() -> dict[str, Any]:
        return ner_report(pred, gold, "IOB2")

    ours_f1(), ours_report(), ours_json()  # warm-up

    times, res = interleaved_best(
        {
            "seqeval f1_score": lambda: f1_score(gold, pred),
            "ours f1": ours_f1,
            "seqeval classification_report": lambda: classification_report(gold, pred, output_dict=True),
            "ours report": ours_report,
            "ours json": ours_json,
        },
        args.repeat,
    )
    t_seq_f1, t_our_f1 = times["seqeval f1_score"], times["ours f1"]
    t_seq_cr, t_our_cr, t_our_js = times["seqeval classification_report"], times["ours report"], times["ours json"]
    f_seq, f_our, cr, rep, js = (
        res["seqeval f1_score"],
        res["ours f1"],
        res["seqeval classification_report"],
        res["ours report"],
        res["ours json"],
    )

    assert abs(f_seq - f_our) < 1e-5, (f_seq, f_our)
    for t in TYPES:
        assert abs(cr[t]["f1-score"] - float(rep[t]["f1"])) < 1e-5
        assert abs(cr[t]["f1-score"] - js["per_type"][t]["f1"]) < 1e-5
    assert abs(cr["macro avg"]["f1-score"] - float(rep["macro"]["f1"])) < 1e-5
    assert abs(cr["weighted avg"]["f1-score"] - float(rep["weighted"]["f1"])) < 1e-5

    print(f"span F1 = {f_our:.6f} (seqeval {f_seq:.6f})")
    print(
        f"f1_score:              seqeval {t_seq_f1:7.3f} s   ours {t_our_f1:7.3f} s   ratio {t_seq_f1 / t_our_f1:6.1f}x"
    )
    print(
        f"classification_report: seqeval {t_seq_cr:7.3f} s   ours {t_our_cr:7.3f} s   ratio {t_seq_cr / t_our_cr:6.1f}x"
    )
    print(f"  (ner_report JSON, labels found from data: {t_our_js:.3f} s, ratio {t_seq_cr / t_our_js:.1f}x)")


if __name__ == "__main__":
    main()
