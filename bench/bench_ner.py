"""Benchmark: NER span F1, in process against seqeval and as whole processes against conlleval.pl and a seqeval script.

1. **In process** (the API): 20,000 random sentences of 10-40 IOB2 tags over four types; predictions are the
   references with realistic errors (missed and spurious entities, type confusions, boundary shifts, ill-formed
   ``I-`` starts). seqeval's ``f1_score`` / ``classification_report`` against our accumulators (``span_metric``,
   ``NerMetric``; one untimed warm-up, ``compute`` jitted once as in a training loop) and the host ``score``.
2. **Whole processes** (the command line, start-up included) on a CoNLL-2003-sized file in conlleval's one-file
   layout (231 documents, about 3,700 sentences and 46,000 tokens; ``--tokens`` to change): ``perl conlleval.pl <
   FILE``, ``python seqeval_script.py FILE`` (reads the file, prints seqeval's ``classification_report``) and
   ``python -m metametric_jax score ner --file FILE`` (JSON, and the default table). Each is run ``--repeat``
   times, interleaved; the best wall time and the best CPU time (user + system) of each are reported. The figures
   of the three are checked equal first. The issue's target: ours ≤ 3× conlleval.pl and faster than seqeval.

conlleval.pl is not part of the repository: give its path with ``--conlleval PATH`` or ``$CONLLEVAL`` (see
tests/data/ner/README.md for the version used); without it that column is reported as missing.

Run: ``python bench/bench_ner.py [--sentences N] [--repeat R] [--conlleval PATH] [--tokens N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

TYPES = ("PER", "LOC", "ORG", "MISC")

SEQEVAL_SCRIPT = """
import sys
from seqeval.metrics import classification_report

gold, pred, g, p = [], [], [], []
for line in open(sys.argv[1], encoding="utf-8"):
    fields = line.split()
    if not fields or fields[0] == "-DOCSTART-":
        if g:
            gold.append(g)
            pred.append(p)
        g, p = [], []
        continue
    g.append(fields[-2])
    p.append(fields[-1])
if g:
    gold.append(g)
    pred.append(p)
print(classification_report(gold, pred, digits=4))
"""


def make_data(n: int, seed: int = 0, lengths: tuple[int, int] = (10, 40)) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    gold: list[list[str]] = []
    pred: list[list[str]] = []
    for _ in range(n):
        length = rng.randint(*lengths)
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
    """Best wall time of each function over ``repeat`` rounds, each round running every function once in turn."""
    best = {k: float("inf") for k in fns}
    out: dict[str, Any] = {}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best, out


def in_process(n: int, repeat: int) -> None:
    import jax
    from seqeval.metrics import classification_report, f1_score

    from metametric_jax.tasks.ner import NerMetric, score, span_metric

    gold, pred = make_data(n)
    print(f"in process: {n} sentences, {sum(map(len, gold))} tokens")
    span = span_metric("IOB2")
    suite = NerMetric(sorted(TYPES), "IOB2")
    compute = jax.jit(lambda state: state.compute())  # as in a training loop: compiled once, reused

    def ours_f1() -> float:
        return float(compute(span.from_model_output(pred, gold))["f1"])

    def ours_report() -> dict[str, Any]:
        return jax.device_get(compute(suite.from_model_output(pred, gold)))

    def ours_json() -> dict[str, Any]:
        return score(pred, gold)

    ours_f1(), ours_report(), ours_json()  # warm-up
    times, res = interleaved_best(
        {
            "seqeval f1_score": lambda: f1_score(gold, pred),
            "ours f1": ours_f1,
            "seqeval classification_report": lambda: classification_report(gold, pred, output_dict=True),
            "ours report": ours_report,
            "ours json": ours_json,
        },
        repeat,
    )
    cr, rep, js = res["seqeval classification_report"], res["ours report"], res["ours json"]
    assert abs(res["seqeval f1_score"] - res["ours f1"]) < 1e-5
    for t in TYPES:
        assert abs(cr[t]["f1-score"] - float(rep["per_type"][t]["f1"])) < 1e-5
        assert abs(cr[t]["f1-score"] - js["per_type"][t]["f1"]) < 1e-12
    assert abs(cr["macro avg"]["f1-score"] - float(rep["macro"]["f1"])) < 1e-5
    assert abs(cr["weighted avg"]["f1-score"] - js["weighted"]["f1"]) < 1e-12
    t_sf, t_of = times["seqeval f1_score"], times["ours f1"]
    t_sr, t_or, t_js = times["seqeval classification_report"], times["ours report"], times["ours json"]
    print(f"span F1 = {res['ours f1']:.6f} (seqeval {res['seqeval f1_score']:.6f})")
    print(f"f1_score:              seqeval {t_sf:7.3f} s   ours {t_of:7.3f} s   ratio {t_sf / t_of:6.1f}x")
    print(f"classification_report: seqeval {t_sr:7.3f} s   ours {t_or:7.3f} s   ratio {t_sr / t_or:6.1f}x")
    print(f"  (score() host JSON report, labels found from data: {t_js:.3f} s, ratio {t_sr / t_js:.1f}x)")


def write_conll(path: Path, n_tokens: int) -> None:
    """A CoNLL-2003-sized file in conlleval's layout: 231 documents, sentences of 1-24 tokens."""
    gold, pred = make_data(2 * n_tokens // 12, seed=1, lengths=(1, 24))
    lines, tokens, docs = [], 0, 231
    per_doc = max(1, n_tokens // docs)
    for g, p in zip(gold, pred):
        if tokens >= n_tokens:
            break
        if tokens // per_doc >= len([x for x in lines if x.startswith("-DOCSTART-")]):
            lines += ["-DOCSTART- -X- O O", ""]
        lines += [f"w{k} NN {a} {b}" for k, (a, b) in enumerate(zip(g, p))] + [""]
        tokens += len(g)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_timed(argv: list[str], stdin: Path | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, standard output) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as handle:
        proc = subprocess.run(argv, stdin=handle, capture_output=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout.decode("utf-8")


def whole_processes(n_tokens: int, repeat: int, conlleval: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp) / "testb.txt", Path(tmp) / "seqeval_script.py"
        write_conll(data, n_tokens)
        script.write_text(SEQEVAL_SCRIPT, encoding="utf-8")
        ours = [sys.executable, "-m", "metametric_jax", "score", "ner", "--file", str(data), "--no-progress"]
        sides: dict[str, tuple[list[str], Path | None]] = {
            "ours (json)": ([*ours, "--format", "json"], None),
            "ours (table)": (ours, None),
            "seqeval script": ([sys.executable, str(script), str(data)], None),
        }
        if conlleval:
            sides["conlleval.pl"] = (["perl", conlleval], data)
        best = {k: (float("inf"), float("inf")) for k in sides}
        outputs: dict[str, str] = {}
        for _ in range(repeat):
            for name, (argv, stdin) in sides.items():
                wall, cpu, outputs[name] = run_timed(argv, stdin)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
        scores = json.loads(outputs["ours (json)"])
        counts = scores["counts"]
        n_docs = data.read_text(encoding="utf-8").count("-DOCSTART-")
        seq_micro = next(line for line in outputs["seqeval script"].splitlines() if "micro avg" in line).split()
        assert abs(float(seq_micro[4]) - scores["f1"]) < 1e-4, (seq_micro, scores["f1"])
        print(f"whole processes: {counts['tokens']} tokens, {counts['phrases']} phrases, {n_docs} documents")
        if conlleval:
            head = outputs["conlleval.pl"].splitlines()[0]
            expected = (
                f"processed {counts['tokens']} tokens with {counts['phrases']} phrases; found: "
                f"{counts['found']} phrases; correct: {counts['correct']}."
            )
            assert head == expected, (head, expected)
        else:
            print("conlleval.pl not given (--conlleval PATH or $CONLLEVAL): its column is missing from this run")
        for name, (wall, cpu) in best.items():
            print(f"  {name:15s} wall {wall:6.3f} s   cpu {cpu:6.3f} s")
        ours_wall, ours_cpu = best["ours (table)"]
        ours_json_wall, ours_json_cpu = best["ours (json)"]
        if conlleval:
            perl_wall, perl_cpu = best["conlleval.pl"]
            ratio, cpu_ratio = ours_wall / perl_wall, ours_cpu / perl_cpu
            print(f"whole process, ours (table) / conlleval.pl = {ratio:.2f}x (cpu {cpu_ratio:.2f}x)")
            print(
                f"whole process, ours (json) / conlleval.pl = {ours_json_wall / perl_wall:.2f}x "
                f"(cpu {ours_json_cpu / perl_cpu:.2f}x)"
            )
        seq_wall, seq_cpu = best["seqeval script"]
        ratio, cpu_ratio = seq_wall / ours_wall, seq_cpu / ours_cpu
        print(f"whole process, seqeval script / ours (table) = {ratio:.2f}x (cpu {cpu_ratio:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=20_000, help="sentences of the in-process comparison")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--tokens", type=int, default=46_435, help="tokens of the whole-process file (CoNLL-2003 testb)"
    )
    parser.add_argument("--conlleval", default=os.environ.get("CONLLEVAL"), help="path of conlleval.pl")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    whole_processes(args.tokens, max(args.repeat, 3), args.conlleval)
    in_process(args.sentences, args.repeat)


if __name__ == "__main__":
    main()
