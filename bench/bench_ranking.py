"""Benchmark: trec_eval's measures, metametric_jax vs pytrec_eval (trec_eval's C code as a Python module), one run.

Both sides start from the same data and compute the same measures (map, gm_map, Rprec, bpref, recip_rank, P@k,
recall@k, ndcg, ndcg_cut@k, success@k and the counts: trec_eval's ``official`` set plus nDCG, recall and success).
(1) In memory: ``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` and the mean over queries vs
``tasks.ranking.score(run, qrels, measures=...)``; (2) from files: ``pytrec_eval.parse_qrel`` / ``parse_run`` then the
same vs ``tasks.ranking.score_files``; (3) for information, the JAX accumulator ``RankingMetric(...)`` built from the
same rankings (``from_model_output`` + ``compute``). The means are checked equal (1e-9) before timing.

Data: synthetic, ``--queries`` queries of ``--docs`` ranked documents each (scores with 3 decimals, so ties are
frequent) and 250 judged documents per query (grades 0-3, some never ranked). Times are the best of ``--repeat``.

Whole processes (start-up included), side by side in one run, interleaved, best wall and best CPU time of
``--repeat``: ``metametric-jax score ranking -m all_trec --qrels Q --run R`` (its table, ``--format json``, and
``--format trec`` with and without ``-q``) against the trec_eval binary (``trec_eval [-q] -m all_trec Q R``, trec_eval
10.0 built with its own Makefile; give ``--trec-eval PATH`` or ``$TREC_EVAL``; ``--format trec`` is checked equal to
its printout byte for byte first, with and without ``-q``, and without the binary against the JSON's figures) and
against a pytrec_eval script that reads the two files (``pytrec_eval.parse_qrel`` / ``parse_run``), evaluates every
measure pytrec_eval supports and prints each one's run figure (``compute_aggregated_measure``). On two inputs:
``--wp-queries`` generated queries of ``--docs`` ranked documents (as above), and a TREC-RAG-like run (301 topics of
100 MS MARCO v2.1 segment ids, ``2024-NNNNN`` topic ids, full-precision scores, about 60 graded judgements per topic);
and, at scale, ``--large-queries`` generated queries (default 3,000: a 100 MB run of 3 million lines) with ``--format
json`` and ``trec`` only, best of ``--large-repeat``, and each command's peak resident memory.
Every figure of ours is checked against trec_eval's printout (4 decimals, as it prints them) and against the script's
(1e-9) before any timing. The free CPU share is measured before and after (2.00: two free cores).
``--against DIR``: the same commands of another tree of this package (a ``git worktree`` of an earlier revision)
interleaved with ours, ``PYTHONPATH=DIR`` (its ``--format json`` and ``trec`` outputs checked equal to ours first), to
time a change of start-up side by side.

Run: ``python bench/bench_ranking.py [--queries N] [--docs D] [--repeat R] [--wp-queries N] [--trec-eval PATH]
[--large-queries N] [--large-repeat R] [--against DIR] [--no-in-process]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval

from metametric_jax.tasks.ranking import RankingMetric, rank, score, score_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import console_script, cpu_share, interleaved, peak_memory, timed  # noqa: E402

OURS = ["official", "ndcg", "ndcg_cut", "recall", "success"]
THEIRS = {"map", "gm_map", "Rprec", "bpref", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "success"}
OURS_FORMS = ("ours (table)", "ours (json)", "ours (trec)")
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


def rag_like(topics: int = 301, depth: int = 100, seed: int = 1) -> tuple[dict, dict]:
    """A TREC 2024 RAG-like run and qrels: MS MARCO v2.1 segment ids, full-precision scores with a few ties."""
    rng = random.Random(seed)

    def segment() -> str:
        return f"msmarco_v2.1_doc_{rng.randint(0, 58):02d}_{rng.randint(10**6, 10**10)}#{rng.randint(0, 40)}_" + str(
            rng.randint(10**6, 10**10)
        )

    run, qrels = {}, {}
    for qid in rng.sample(range(10_000, 240_000), topics):
        ranked = [segment() for _ in range(depth)]
        scores = [rng.random() for _ in ranked]
        for k in range(1, depth):
            if rng.random() < 0.05:
                scores[k] = scores[k - 1]  # a tie
        run[f"2024-{qid}"] = dict(zip(ranked, scores))
        judged = rng.sample(ranked, 30) + [segment() for _ in range(30)]
        qrels[f"2024-{qid}"] = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in judged}
    return run, qrels


PYTREC_SCRIPT = """import sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures).evaluate(run)
for measure in sorted(next(iter(per_query.values()))):
    values = [figures[measure] for figures in per_query.values()]
    print(measure, "all", repr(pytrec_eval.compute_aggregated_measure(measure, values)), sep="\\t")
"""


def ours_command() -> list[str]:
    found = console_script()
    return [found] if found else [sys.executable, "-m", "metametric_jax"]


def check_figures(ours: dict[str, Any], trec_eval: str | None, script: str) -> tuple[int, list[str]]:
    """Every figure of ours against trec_eval's printout, and against the script's where they differ (1e-9).

    Returns the number of figures equal to trec_eval's and the measures where the script's differ; those must not
    include :data:`CHECKED` (pytrec_eval bundles an older trec_eval, whose ``iprec_at_recall`` and ``11pt_avg`` can
    differ from trec_eval 10.0's).
    """
    checked = 0
    if trec_eval is not None:
        printed = {m: v for m, q, v in (line.split() for line in trec_eval.splitlines()) if q == "all"}
        for measure, value in ours.items():
            text = str(value) if isinstance(value, int) else f"{value:.4f}"
            assert printed[measure] == text, (measure, printed[measure], text)
            checked += 1
    theirs = {m: float(v) for m, _, v in (line.split("\t") for line in script.splitlines())}
    differ = [m for m, v in ours.items() if m in theirs and abs(theirs[m] - v) > 1e-9]
    assert not set(differ) & set(CHECKED), differ
    return checked, differ


def check_printout(
    printout: str,
    per_query: str,
    figures: dict[str, Any],
    tool: str | None,
    reference: str | None,
    reference_q: str | None,
) -> str:
    """``--format trec`` against trec_eval's printout, byte for byte (or, without the binary, against the JSON)."""
    if reference is not None and reference_q is not None:
        assert printout == reference, "--format trec differs from trec_eval's printout"
        assert per_query == reference_q, "--format trec -q differs from trec_eval -q's printout"
        return "byte for byte equal to trec_eval's, with and without -q"
    lines = printout.splitlines()
    assert lines[0].startswith("runid") and len(lines) == len(figures) + 1
    for line, (measure, value) in zip(lines[1:], figures.items()):
        text = str(value) if isinstance(value, int) else f"{value:6.4f}"
        assert line == f"{measure:<22}\tall\t{text}", (line, measure, value)
    assert per_query.endswith(printout)
    return "its run lines equal to the JSON's figures (no trec_eval binary)"


def whole_process(
    name: str,
    run_path: Path,
    qrels_path: Path,
    script: Path,
    tool: str | None,
    repeat: int,
    against: str | None = None,
    large: bool = False,
) -> None:
    """``large``: ``--format json`` and ``trec`` only (no table, no ``-q``), and each command's peak memory."""
    arguments = ["score", "ranking", "-m", "all_trec", "--qrels", str(qrels_path), "--run", str(run_path)]
    ours = [*(["env"] if against else []), *ours_command(), *arguments]  # both sides through env with --against
    commands = {
        "ours (table)": ours,
        "ours (json)": [*ours, "--format", "json"],
        "ours (trec)": [*ours, "--format", "trec"],
        "ours (trec -q)": [*ours, "-q", "--format", "trec"],
    }
    if large:
        del commands["ours (table)"], commands["ours (trec -q)"]
    if against:
        theirs = ["env", f"PYTHONPATH={against}", *ours_command(), *arguments]
        commands |= {
            "against (table)": theirs,
            "against (json)": [*theirs, "--format", "json"],
            "against (trec)": [*theirs, "--format", "trec"],
        }
        for form in ("json", "trec"):
            assert timed(commands[f"against ({form})"])[2] == timed(commands[f"ours ({form})"])[2], form
    commands["pytrec_eval script"] = [sys.executable, str(script), str(qrels_path), str(run_path)]
    if tool is not None:
        commands["trec_eval"] = [tool, "-m", "all_trec", str(qrels_path), str(run_path)]
        if not large:
            commands["trec_eval -q"] = [tool, "-q", "-m", "all_trec", str(qrels_path), str(run_path)]
    figures = json.loads(timed(commands["ours (json)"])[2])["all"]
    reference = timed(commands["trec_eval"])[2] if tool is not None else None
    checked, differ = check_figures(figures, reference, timed(commands["pytrec_eval script"])[2])
    if large:
        printout = timed(commands["ours (trec)"])[2]
        assert reference is None or printout == reference, "--format trec differs from trec_eval's printout"
        said = "byte for byte equal to trec_eval's" if reference is not None else "not compared (no trec_eval binary)"
    else:
        reference_q = timed(commands["trec_eval -q"])[2] if tool is not None else None
        said = check_printout(
            timed(commands["ours (trec)"])[2],
            timed(commands["ours (trec -q)"])[2],
            figures,
            tool,
            reference,
            reference_q,
        )
    share = cpu_share()
    best = interleaved(commands, repeat)
    after = cpu_share()
    print(f"whole process, {name} ({checked} figures equal to trec_eval's); free CPU share {share:.2f} -> {after:.2f}:")
    print(f"  --format trec: {said}")
    if differ:
        print(f"  the pytrec_eval script's figures differ on {', '.join(differ)} (its bundled trec_eval)")
    for label, (wall, cpu) in best.items():
        print(f"  {label:20s} wall {wall:.3f} s, CPU {cpu:.3f} s")
    if large:
        memory = {label: peak_memory(command) for label, command in commands.items()}
        print("  peak memory: " + ", ".join(f"{label} {mb:.0f} MB" for label, mb in memory.items()))
    pairs = [(label, peer) for peer in ("trec_eval", "pytrec_eval script") for label in OURS_FORMS]
    pairs += [("ours (trec -q)", "trec_eval -q"), ("ours (trec)", "ours (json)"), ("ours (table)", "ours (trec)")]
    pairs += [(label, label.replace("ours", "against")) for label in OURS_FORMS]
    for label, peer in pairs:
        if label in best and peer in best:
            wall = best[label][0] / best[peer][0]
            cpu = best[label][1] / best[peer][1]
            print(f"  {label} / {peer}: wall {wall:.2f}x, CPU {cpu:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wp-queries", type=int, default=300, help="queries of the generated whole-process input")
    parser.add_argument("--large-queries", type=int, default=3000, help="queries of the large input (0: none)")
    parser.add_argument("--large-repeat", type=int, default=2)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"), help="the trec_eval binary")
    parser.add_argument("--no-in-process", action="store_true", help="only the whole-process comparison")
    parser.add_argument("--against", metavar="DIR", help="another tree of this package, timed beside ours")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        script = where / "pytrec_eval_script.py"
        script.write_text(PYTREC_SCRIPT)
        generated, rag = where / "generated", where / "rag"
        generated.mkdir()
        rag.mkdir()
        run_path, qrels_path = write(*synthetic(args.wp_queries, args.docs), generated)
        label = f"{args.wp_queries} queries x {args.docs} documents"
        whole_process(label, run_path, qrels_path, script, args.trec_eval, args.repeat, args.against)
        run_path, qrels_path = write(*rag_like(), rag)
        rag_label = "TREC-RAG-like, 301 topics x 100 segments"
        whole_process(rag_label, run_path, qrels_path, script, args.trec_eval, args.repeat, args.against)
        if args.large_queries:
            large = where / "large"
            large.mkdir()
            run_path, qrels_path = write(*synthetic(args.large_queries, args.docs, seed=2), large)
            size = run_path.stat().st_size / 1e6
            large_label = f"{args.large_queries} queries x {args.docs} documents ({size:.0f} MB run)"
            whole_process(
                large_label, run_path, qrels_path, script, args.trec_eval, args.large_repeat, args.against, large=True
            )
    if args.no_in_process:
        return
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
