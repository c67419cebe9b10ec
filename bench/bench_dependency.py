"""Benchmark: the CoNLL 2018 dependency figures against conll18_ud_eval.py v1.2, whole processes and in process.

Data: the UD English-EWT excerpt of ``tests/data/dependency`` (``gold.conllu``, 42 sentences) and its perturbed
prediction ``pred-all.conllu`` (retokenized, sentences joined and split, heads, relations and tags changed), each
repeated ``--copies`` times (default 50: about 2,100 sentences and 33,000 words, the size of the EWT test set).

1. **Whole processes** (start-up included): ``python conll18_ud_eval.py -v GOLD PRED`` against
   ``python -m metametric_jax score dependency --gold GOLD --pred PRED --format json``; each run ``--repeat`` times,
   interleaved; the best wall time and the best CPU time of each are reported, after checking that the figures are
   equal, with the free CPU share before and after (2.00: two free cores).
2. **In process**: the script's ``load_conllu`` + ``evaluate`` against ``score_files`` (reading included), and
   against the accumulator (``DependencyMetric().from_model_output`` on the read sentences, then ``compute``).

The script is not part of the repository: give its path with ``--script PATH`` or ``$CONLL18_UD_EVAL`` (see
tests/data/dependency/README.md for the version); without it only our times are printed.

Run: ``python bench/bench_dependency.py [--copies N] [--repeat R] [--script PATH]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import cpu_share, interleaved  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "dependency"
NAMES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS")
NAMES = (*NAMES, "MLAS", "BLEX")


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--script", default=os.environ.get("CONLL18_UD_EVAL"))
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp())
    gold, pred = tmp / "gold.conllu", tmp / "pred.conllu"
    gold.write_text((DATA / "gold.conllu").read_text(encoding="utf-8") * args.copies, encoding="utf-8")
    pred.write_text((DATA / "pred-all.conllu").read_text(encoding="utf-8") * args.copies, encoding="utf-8")

    from metametric_jax.tasks import dependency

    sentences = dependency.read_conllu(gold)
    words = sum(len(s) for s in sentences)
    print(f"data: {len(sentences)} reference sentences, {words} words (tests/data/dependency x {args.copies})")

    ours_cmd = [sys.executable, "-m", "metametric_jax", "score", "dependency", "--gold", str(gold), "--pred"]
    ours_cmd += [str(pred), "--format", "json"]
    theirs_cmd = [sys.executable, args.script, "-v", str(gold), str(pred)] if args.script else None
    ours_out = json.loads(subprocess.run(ours_cmd, capture_output=True, text=True, check=True).stdout)

    script = None
    if args.script:
        text = subprocess.run(theirs_cmd, capture_output=True, text=True, check=True).stdout
        rows = {line.split("|")[0].strip(): line.split("|")[1:] for line in text.splitlines()[2:]}
        for name in NAMES:
            printed = [float(v) for v in rows[name][:3]]
            mine = [round(100 * ours_out[name.lower()][k], 2) for k in ("precision", "recall", "f1")]
            assert printed == mine, (name, printed, mine)
        spec = importlib.util.spec_from_file_location("conll18_ud_eval", args.script)
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
        print("figures: equal to the script's")

    # 1. whole processes, interleaved (best wall and best CPU time), the free CPU share before and after
    commands = {"ours": ours_cmd, **({"script": theirs_cmd} if theirs_cmd else {})}
    share = cpu_share()
    best_times = interleaved(commands, args.repeat)
    after = cpu_share()
    ours_wall, ours_cpu = best_times["ours"]
    if "script" in best_times:
        script_wall, script_cpu = best_times["script"]
        print(
            f"whole process: script {script_wall:.3f} s (CPU {script_cpu:.3f} s), ours {ours_wall:.3f} s (CPU "
            f"{ours_cpu:.3f} s): ours/script {ours_wall / script_wall:.2f}x, CPU {ours_cpu / script_cpu:.2f}x; "
            f"free CPU share {share:.2f} -> {after:.2f}"
        )
    else:
        print(f"whole process: ours {ours_wall:.3f} s, CPU {ours_cpu:.3f} s (no --script given)")

    # 2. in process
    ours_t = best(lambda: dependency.score_files(predictions=pred, references=gold), args.repeat)
    preds = dependency.read_conllu(pred)
    metric = dependency.DependencyMetric()
    metric.from_model_output([preds], [sentences]).compute()  # warm-up (jit of compute)
    acc_t = best(lambda: metric.from_model_output([preds], [sentences]).compute(), args.repeat)
    if script is not None:

        def run_script() -> None:
            script.evaluate(script.load_conllu_file(str(gold)), script.load_conllu_file(str(pred)))

        script_t = best(run_script, args.repeat)
        ratio = ours_t / script_t
        print(f"in process, files: script {script_t:.3f} s, score_files {ours_t:.3f} s: ours/script {ratio:.2f}x")
    else:
        print(f"in process, files: score_files {ours_t:.3f} s")
    print(f"in process, accumulator on read sentences (from_model_output + compute): {acc_t:.3f} s")


if __name__ == "__main__":
    main()
