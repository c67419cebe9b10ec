"""Benchmark: ROUGE-1 / ROUGE-2 / ROUGE-L, metametric_jax vs Google's rouge-score, on the same pre-tokenized data.

2,000 random pairs of 20-60 tokens (a 500-word vocabulary; predictions share about half of their tokens with the
reference, in order, so the LCS is long). rouge-score is given the tokens joined by spaces and a whitespace tokenizer,
so both sides compute the same figures (checked before timing). Each side is timed as the best of several runs;
metametric_jax gets one untimed warm-up call (JAX compiles its eager ops once per process).

Run: ``python bench/bench_rouge.py [--pairs N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from rouge_score import rouge_scorer

from metametric_jax.tasks.text import Rouge1, Rouge2, RougeL


class WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


def make_data(n: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(500)]
    refs: list[list[str]] = []
    preds: list[list[str]] = []
    for _ in range(n):
        ref = [rng.choice(vocab) for _ in range(rng.randint(20, 60))]
        pred = [t if rng.random() < 0.5 else rng.choice(vocab) for t in ref]
        if rng.random() < 0.5:
            pred = pred[: rng.randint(20, len(pred))]
        refs.append(ref)
        preds.append(pred)
    return preds, refs


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    preds, refs = make_data(args.pairs)
    pred_text = [" ".join(p) for p in preds]
    ref_text = [" ".join(r) for r in refs]

    print(f"{args.pairs} pairs, {sum(map(len, preds)) + sum(map(len, refs))} tokens; best of {args.repeat}")
    print(f"{'metric':8s} {'rouge-score (s)':>16s} {'metametric_jax (s)':>19s} {'speed-up':>9s}")
    for kind, metric in (("rouge1", Rouge1), ("rouge2", Rouge2), ("rougeL", RougeL)):
        scorer = rouge_scorer.RougeScorer([kind], tokenizer=WhitespaceTokenizer())

        def theirs(scorer: Any = scorer, kind: str = kind) -> float:
            return float(np.mean([scorer.score(r, p)[kind].fmeasure for p, r in zip(pred_text, ref_text)]))

        def ours(metric: Any = metric) -> float:
            return float(metric.from_model_output(preds, refs).compute()["macro_f1"])

        ours()  # warm-up
        t_theirs, f_theirs = best_of(theirs, args.repeat)
        t_ours, f_ours = best_of(ours, args.repeat)
        assert abs(f_theirs - f_ours) < 1e-6, (kind, f_theirs, f_ours)
        print(f"{kind:8s} {t_theirs:16.4f} {t_ours:19.4f} {t_theirs / t_ours:8.1f}x")


if __name__ == "__main__":
    main()
