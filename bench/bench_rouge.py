"""Benchmark: ROUGE from raw text, metametric_jax vs Google's rouge-score 0.1.2, side by side in one run.

Both sides start from the same strings and do everything: tokenization (lower-casing, non-alphanumerics removed,
Porter stemming when asked), n-gram overlaps, LCS and the summary-level LCS, and the mean over examples.
rouge-score: ``RougeScorer(types, use_stemmer=...)`` and ``score`` (or ``score_multi``) per pair, then the mean of
each figure; metametric_jax: ``tasks.text.score`` (host side, float64), and for information the JAX accumulator
``RougeMetric(...).from_model_output(...).compute()``. The means are checked equal (1e-12) before timing.

Data: (1) synthetic news-like summaries: 2,000 pairs, references of 3-5 sentences of 8-25 words (capitalized, with
commas, numbers and full stops) from a 5,000-word Zipfian vocabulary, predictions copying about half of a reference's
sentences with word edits; (2) the 60 real GUM summaries of ``tests/data/rouge`` (model summary vs human summary,
lead-3 vs human summary), repeated to 1,200 pairs. Each side is timed as the best of ``--repeat`` runs; the stem cache
is cleared before every run, so stemming is paid each time.

Run: ``python bench/bench_rouge.py [--pairs N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rouge_score import rouge_scorer

from metametric_jax.tasks.stem import porter_stem
from metametric_jax.tasks.text import RougeMetric, score

GUM = Path(__file__).resolve().parent.parent / "tests" / "data" / "rouge" / "gum_summaries.jsonl"


def synthetic(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    syllables = "ka ro mi ten sa lo vu ner dis pre tion ing ed ment ly al er"
    vocab = ["".join(rng.choice(syllables.split()) for _ in range(rng.randint(1, 4))) for _ in range(5000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]

    def sentence() -> list[str]:
        words = rng.choices(vocab, weights, k=rng.randint(8, 25))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), str(rng.randint(1, 2025)))
        return words

    def render(words: list[str]) -> str:
        out = " ".join(w + ("," if rng.random() < 0.08 else "") for w in words)
        return out[:1].upper() + out[1:] + "."

    preds, refs = [], []
    for _ in range(n):
        ref = [sentence() for _ in range(rng.randint(3, 5))]
        pred = []
        for s in ref:
            if rng.random() < 0.5:
                pred.append([w if rng.random() < 0.7 else rng.choices(vocab, weights)[0] for w in s])
        pred = pred or [sentence()]
        refs.append("\n".join(render(s) for s in ref))
        preds.append("\n".join(render(s) for s in pred))
    return preds, refs


def gum_pairs(n: int) -> tuple[list[str], list[str], list[list[str]]]:
    with open(GUM, encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    preds = [d["summaries"][4]["text"] for d in docs] + [d["lead3"] for d in docs]
    refs = [d["summaries"][0]["text"] for d in docs] * 2
    multi = [[s["text"] for s in d["summaries"][:3]] for d in docs] * 2
    reps = max(1, n // len(preds))
    return preds * reps, refs * reps, multi * reps


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        porter_stem.cache_clear()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def theirs(preds: list[str], refs: list[Any], types: list[str], stem: bool, multi: bool) -> dict[str, float]:
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=stem)
    rows = [scorer.score_multi(r, p) if multi else scorer.score(r, p) for p, r in zip(preds, refs)]
    return {k: float(np.mean([s[k].fmeasure for s in rows])) for k in types}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    s_preds, s_refs = synthetic(args.pairs)
    g_preds, g_refs, g_multi = gum_pairs(1200)
    base = ["rouge1", "rouge2", "rougeL"]
    full = [*base, "rougeLsum"]
    cases = [
        ("synthetic", s_preds, s_refs, base, False, False),
        ("synthetic", s_preds, s_refs, base, True, False),
        ("synthetic", s_preds, s_refs, full, False, False),
        ("synthetic", s_preds, s_refs, full, True, False),
        ("synthetic", s_preds, s_refs, ["rougeLsum"], False, False),
        ("GUM", g_preds, g_refs, full, False, False),
        ("GUM", g_preds, g_refs, full, True, False),
        ("GUM 3 refs", g_preds, g_multi, full, True, True),
    ]
    print(f"best of {args.repeat}; tokenization included on both sides; times in seconds")
    header = f"{'data':11s} {'pairs':>5s} {'types':31s} {'stem':>4s} {'rouge-score':>11s} {'ours':>7s} {'x':>6s}"
    print(header + f" {'ours (JAX acc.)':>15s} {'x':>6s}")
    RougeMetric(["rouge1"]).from_model_output(["a"], ["a"]).compute()  # JAX warm-up (compiles compute once)
    for name, preds, refs, types, stem, multi in cases:

        def ref_side(preds=preds, refs=refs, types=types, stem=stem, multi=multi) -> dict[str, float]:
            return theirs(preds, refs, types, stem, multi)

        def our_side(preds=preds, refs=refs, types=types, stem=stem, multi=multi) -> dict[str, float]:
            result = score(preds, refs, types=types, use_stemmer=stem, multi_reference=multi)
            return {k: v["f1"] for k, v in result.items()}

        def our_acc(preds=preds, refs=refs, types=types, stem=stem, multi=multi) -> dict[str, float]:
            metric = RougeMetric(types, use_stemmer=stem, multi_reference=multi)
            result = metric.from_model_output(preds, refs).compute()
            return {k: float(result[k]["macro_f1"]) for k in types}

        our_acc()  # compile the suite's compute once
        t_ref, f_ref = best_of(ref_side, args.repeat)
        t_ours, f_ours = best_of(our_side, args.repeat)
        t_acc, f_acc = best_of(our_acc, args.repeat)
        for k in types:
            assert abs(f_ref[k] - f_ours[k]) < 1e-12, (name, k, f_ref[k], f_ours[k])
            assert abs(f_ref[k] - f_acc[k]) < 1e-6, (name, k, f_ref[k], f_acc[k])
        print(
            f"{name:11s} {len(preds):5d} {','.join(types):31s} {'yes' if stem else 'no':>4s} {t_ref:11.3f} "
            f"{t_ours:7.3f} {t_ref / t_ours:5.1f}x {t_acc:15.3f} {t_ref / t_acc:5.1f}x"
        )


if __name__ == "__main__":
    main()
