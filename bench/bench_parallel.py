"""``--jobs 2`` against ``--jobs 1`` as whole processes, and Apache Beam's DirectRunner against one process.

1. The CPU actually free during the run: a pure-Python busy loop timed in one process alone, then in two processes at
   once (``share = 2 t1 / t2``: 2.0 means two free cores, 1.0 one); measured before and after the timings.
2. ``metametric-jax score amr --jobs N`` on ``--pairs`` generated graph pairs (bench_amr's generator: AMR-like gold
   graphs of 15 to 80 triples, predictions perturbed copies) and ``metametric-jax score coref --jobs N`` on
   ``--documents`` generated CoNLL-2012 documents (bench_coref's generator), ``--format json``: N = 1 and 2
   interleaved, ``--repeat`` rounds, best wall time kept, and the CPU time of each process with its workers (the
   command runs ``metametric_jax.cli.main`` and then stops the fork server, which has waited for its workers, so
   that their CPU time is counted).
   The JSON of every run is checked to be the same. Target: ``--jobs 2`` at least 1.5x faster than ``--jobs 1`` on two
   free cores, with at most 20% more CPU time.
3. ``MetricCombineFn(SmatchMetric)`` over the same pairs on the DirectRunner with 2 worker processes
   (``multi_processing``) against ``SmatchMetric.from_model_output`` in one process (a whole process each, start-up
   included): the overhead of the engine on one machine (reported; Beam is for more than one machine).

Processes are run and timed by ``bench/_process.py`` (``cpu_share``, ``timed``: byte code cached outside the tree, as an
installed package has it).

Run: ``python bench/bench_parallel.py [--pairs 1000] [--documents 1000] [--repeat 2] [--only amr|coref] [--no-beam]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _process import cpu_share, timed  # noqa: E402

#: the command line, then the fork server stopped and waited for, so that its workers' CPU time is counted
CLI = (
    "import sys, multiprocessing.forkserver as f\n"
    "from metametric_jax.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "f._forkserver._stop()\n"
    "sys.exit(code)"
)


def compare_jobs(name: str, argv: list[str], repeat: int) -> tuple[float, float]:
    """Best wall and CPU of ``--jobs 1`` and ``--jobs 2``, interleaved; the outputs checked equal."""
    best: dict[int, tuple[float, float]] = {}
    outputs = set()
    for _ in range(repeat):
        for jobs in (1, 2):
            wall, cpu, out = timed([*argv, "--jobs", str(jobs)])
            outputs.add(out)
            if jobs not in best or wall < best[jobs][0]:
                best[jobs] = (wall, cpu)
    if len(outputs) != 1:
        raise SystemExit(f"{name}: the JSON differs between --jobs 1 and --jobs 2")
    (w1, c1), (w2, c2) = best[1], best[2]
    speedup, extra = w1 / w2, c2 / c1 - 1
    print(
        f"{name:<6} --jobs 1: {w1:6.2f} s wall {c1:6.2f} s CPU | --jobs 2: {w2:6.2f} s wall {c2:6.2f} s CPU | "
        f"CPU {extra:+.0%} (target <= +20%), same JSON | speed-up (target >= 1.5x): {speedup:.2f}x"
    )
    return speedup, extra


def amr_files(folder: Path, pairs: int, seed: int) -> list[tuple[str, str]]:
    from bench_amr import perturb, random_graph, to_penman

    rng = random.Random(seed)
    out = []
    for k in range(pairs):
        gold = random_graph(rng, 15 + (k * 7) % 66)
        out.append((to_penman(rng, perturb(rng, gold)), to_penman(rng, gold)))
    (folder / "pred.txt").write_text("\n\n".join(p for p, _ in out) + "\n", encoding="utf-8")
    (folder / "gold.txt").write_text("\n\n".join(g for _, g in out) + "\n", encoding="utf-8")
    return out


def coref_files(folder: Path, documents: int, seed: int) -> None:
    from bench_coref import perturb, synthetic_key, write_conll

    rng = random.Random(seed)
    keys = [synthetic_key(rng, 120, 30) for _ in range(documents)]
    responses = [perturb(rng, k) for k in keys]
    sizes = [max(e for c in k + r for _, e in c) + 1 for k, r in zip(keys, responses)]
    write_conll(folder / "key.conll", keys, sizes)
    write_conll(folder / "response.conll", responses, sizes)


BEAM = """
import sys, time
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from metametric_jax.beam import MetricCombineFn
from metametric_jax.tasks.amr import SmatchMetric
import penman
gold = [g for g in open(sys.argv[1]).read().split("\\n\\n") if g.strip()]
pred = [p for p in open(sys.argv[2]).read().split("\\n\\n") if p.strip()]
if sys.argv[3] == "one":
    print(float(SmatchMetric.from_model_output(pred, gold).compute()["f1"]))
else:
    options = PipelineOptions(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    with beam.Pipeline(options=options) as p:
        _ = (p | beam.Create(list(zip(pred, gold)), reshuffle=True)
               | beam.CombineGlobally(MetricCombineFn(SmatchMetric, output="state"))
               | beam.Map(lambda s: print(float(s.compute()["f1"]))))
"""


def beam_overhead(folder: Path) -> None:
    script = folder / "beam_run.py"
    script.write_text(BEAM, encoding="utf-8")
    argv = [sys.executable, str(script), str(folder / "gold.txt"), str(folder / "pred.txt")]
    one_wall, one_cpu, one_out = timed([*argv, "one"])
    beam_wall, beam_cpu, beam_out = timed([*argv, "beam"])
    same = one_out.split()[-1:] == beam_out.split()[-1:]
    print(
        f"beam   one process: {one_wall:6.2f} s wall {one_cpu:6.2f} s CPU | DirectRunner, 2 workers: "
        f"{beam_wall:6.2f} s wall {beam_cpu:6.2f} s CPU | CPU {beam_cpu / one_cpu - 1:+.0%}, "
        f"{'same F1' if same else 'F1 DIFFERS'} | one process / DirectRunner (reported): {one_wall / beam_wall:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-beam", action="store_true", help="skip the DirectRunner part")
    parser.add_argument("--only", choices=("amr", "coref"), default=None, help="time one task's --jobs only")
    args = parser.parse_args()
    cli = [sys.executable, "-c", CLI]
    print(f"cores this process may use: {len(os.sched_getaffinity(0))}; CPU share free now: {cpu_share():.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        amr_files(folder, args.pairs, args.seed)
        coref_files(folder, args.documents, args.seed)
        if args.only in (None, "amr"):
            amr = [*cli, "score", "amr", "--gold", str(folder / "gold.txt"), "--pred", str(folder / "pred.txt")]
            compare_jobs("amr", [*amr, "--format", "json", "--no-progress"], args.repeat)
        if args.only in (None, "coref"):
            coref = [*cli, "score", "coref", str(folder / "key.conll"), str(folder / "response.conll")]
            coref.append("--max-repeated-mentions=-1")  # the generator's responses repeat key mentions
            compare_jobs("coref", [*coref, "--format", "json", "--no-progress"], args.repeat)
        if not args.no_beam and args.only is None:
            beam_overhead(folder)
    print(f"CPU share free after the runs: {cpu_share():.2f}")


if __name__ == "__main__":
    main()
