"""Benchmark: trec_eval's measures, metametric_jax vs pytrec_eval (trec_eval's C code as a Python module), one run.

Both sides start from the same data and compute the same measures (map, gm_map, Rprec, bpref, recip_rank, P@k,
recall@k, ndcg, ndcg_cut@k, success@k and the counts: trec_eval's ``official`` set plus nDCG, recall and success).
(1) In memory: ``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` and the mean over queries vs
``tasks.ranking.score(run, qrels, measures=...)``; (2) from files: ``pytrec_eval.parse_qrel`` / ``parse_run`` then the
same vs ``tasks.ranking.score_files``; (3) for information, the JAX accumulator ``RankingMetric(...)`` built from the
same rankings (``from_model_output`` + ``compute``). The means are checked equal (1e-9) before timing.

Data: synthetic, ``--queries`` queries of ``--docs`` ranked documents each (scores with 3 decimals, so ties are
frequent) and 250 judged documents per query (grades 0-3, some never ranked). Times are the best of ``--repeat``.

Run: ``python bench/bench_ranking.py [--queries N] [--docs D] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval

from metametric_jax.tasks.ranking import RankingMetric, rank, score, score_files

OURS = ["official", "ndcg", "ndcg_cut", "recall", "success"]
THEIRS = {"map", "gm_map", "Rprec", "bpref", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "success"}
CHECKED = ("map", "Rprec", "bpref", "recip_rank", "P_10", "recall_100", "ndcg", "ndcg_cut_10", "success_1")


def synthetic(queries: int, docs: int, seed: int = 0) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    run, qrels = {}, {}
    for q in range(queries):
        qid = f"q{q}"
        ranked = [f"doc{n}" for n in rng.sample(range(50 * docs), docs)]
        run[qid] = {d: round(rng.random(), 3) for d in ranked}
        judged = rng.sample(ranked, 200) + [f"unranked{n}" for n in range(50)]
        qrels[qid] = {d: rng.choice([0, 0, 0, 1, 1, 2, 3]) for d in judged}
    return run, qrels


def write(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]], where: Path) -> tuple[Path, Path]:
    with open(where / "run.txt", "w") as f:
        for qid, scored in run.items():
            for i, doc in enumerate(rank(scored), 1):
                f.write(f"{qid} Q0 {doc} {i} {scored[doc]} bench\n")
    with open(where / "qrels.txt", "w") as f:
        for qid, judged in qrels.items():
            for doc, grade in judged.items():
                f.write(f"{qid} 0 {doc} {grade}\n")
    return where / "run.txt", where / "qrels.txt"


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def mean_of(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([q[k] for q in per_query.values()])) for k in CHECKED}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run, qrels = synthetic(args.queries, args.docs)

    def theirs_memory() -> dict[str, float]:
        return mean_of(pytrec_eval.RelevanceEvaluator(qrels, THEIRS).evaluate(run))

    def ours_memory() -> dict[str, float]:
        return score(run, qrels, measures=OURS)

    with tempfile.TemporaryDirectory() as tmp:
        run_path, qrels_path = write(run, qrels, Path(tmp))

        def theirs_files() -> dict[str, float]:
            with open(qrels_path) as fq, open(run_path) as fr:
                judged, ranked = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
            return mean_of(pytrec_eval.RelevanceEvaluator(judged, THEIRS).evaluate(ranked))

        def ours_files() -> dict[str, float]:
            return score_files(predictions=run_path, references=qrels_path, measures=OURS).scores

        metric = RankingMetric(OURS)
        rankings, judgements = [rank(run[q]) for q in qrels], [qrels[q] for q in qrels]

        def ours_accumulator() -> dict[str, float]:
            return {k: float(v) for k, v in metric.from_model_output(rankings, judgements).compute()["all"].items()}

        ours_accumulator()  # compile compute once
        print(f"{args.queries} queries x {args.docs} ranked documents; best of {args.repeat}; seconds")
        t_pm, f_pm = best_of(theirs_memory, args.repeat)
        t_om, f_om = best_of(ours_memory, args.repeat)
        t_pf, f_pf = best_of(theirs_files, args.repeat)
        t_of, f_of = best_of(ours_files, args.repeat)
        t_acc, f_acc = best_of(ours_accumulator, args.repeat)
    for k in CHECKED:
        assert abs(f_pm[k] - f_om[k]) < 1e-9, (k, f_pm[k], f_om[k])
        assert abs(f_pf[k] - f_of[k]) < 1e-9, (k, f_pf[k], f_of[k])
        assert abs(f_om[k] - f_acc[k]) < 1e-5, (k, f_om[k], f_acc[k])
    print(f"in memory: pytrec_eval {t_pm:.3f}, ours {t_om:.3f}: ours / pytrec_eval = {t_om / t_pm:.2f}x")
    print(f"from files: pytrec_eval {t_pf:.3f}, ours {t_of:.3f}: ours / pytrec_eval = {t_of / t_pf:.2f}x")
    print(f"JAX accumulator (RankingMetric), in memory: {t_acc:.3f}: ours / pytrec_eval = {t_acc / t_pm:.2f}x")


if __name__ == "__main__":
    main()
