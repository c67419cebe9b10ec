"""Benchmark: EVALB's figures (COLLINS.prm) against the EVALB program, in process and as whole processes.

Data: ``tests/data/constituency/gold.mrg`` (GUM trees) and its perturbed ``pred.mrg`` repeated to ``--trees`` trees
each (default 13,170, the size of the comparison in the issue), one tree per line as EVALB reads them.

1. **Scoring run** (the target): ``score_files`` (reading both files, scoring, per-sentence items and warnings)
   against the ``evalb -p COLLINS.prm GOLD PRED`` process (whose start-up is a few milliseconds);
2. **Whole process**: ``python -m metametric_jax score constituency --format json`` (Python start-up included, byte
   code cached as an installation has it), and each installed command given with ``--command PATH`` (a
   ``metametric-jax`` script: that of a virtual environment, say), run as ``PATH score constituency --gold GOLD
   --pred PRED --format json``; the commands and EVALB run round-robin (:func:`_process.interleaved`), each
   command's output checked equal to the in-process figures first, and the free CPU share
   (:func:`_process.cpu_share`: 2.00 is two free cores) is measured before and after.

Each side runs ``--repeat`` times, interleaved; the best wall time (and the best CPU time, less disturbed by other
work on a shared machine) is reported, after checking that the summary
figures are equal (as EVALB prints them). EVALB is not part of the repository: build it from the sources named in
tests/data/constituency/README.md and give its path with ``--evalb PATH`` or ``$EVALB``; without it only our times
are printed.

``--max-words N`` keeps only the pairs whose reference tree has at most N words (short trees: start-up weighs more).

Run: ``python bench/bench_constituency.py [--trees N] [--repeat R] [--evalb PATH] [--max-words N]
[--command PATH ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import ENV, cpu_share, interleaved  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "constituency"
KEYS = {
    "Bracketing Recall": "recall",
    "Bracketing Precision": "precision",
    "Bracketing FMeasure": "f1",
    "Complete match": "complete_match",
    "No crossing": "no_crossing",
    "Tagging accuracy": "tagging_accuracy",
}


def evalb_summary(text: str) -> dict[str, str]:
    """The ``-- All --`` summary of EVALB's output, as printed."""
    out: dict[str, str] = {}
    part = text.split("-- All --", 1)[1].split("-- len", 1)[0]
    for line in part.splitlines():
        name, _, value = line.partition("=")
        if name.strip() in KEYS:
            out[KEYS[name.strip()]] = value.strip()
    return out


def timed(fn) -> tuple[float, float]:
    """Wall time and CPU time (this process and its finished children) of one call."""
    t, c = time.perf_counter(), _cpu()
    fn()
    return time.perf_counter() - t, _cpu() - c


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=13170)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--evalb", default=os.environ.get("EVALB"))
    parser.add_argument("--max-words", type=int, help="keep only the pairs of trees of at most this many words")
    parser.add_argument(
        "--command",
        action="append",
        default=[],
        metavar="PATH",
        help="an installed metametric-jax script to time as a whole process too (repeatable)",
    )
    args = parser.parse_args()

    gold_lines = (DATA / "gold.mrg").read_text(encoding="utf-8").splitlines()
    pred_lines = (DATA / "pred.mrg").read_text(encoding="utf-8").splitlines()
    if args.max_words:  # short trees: the reference's words counted as its leaves, "(TAG word)"
        leaf = re.compile(r"\([^()\s]+ [^()\s]+\)")
        kept = [(g, p) for g, p in zip(gold_lines, pred_lines) if 0 < len(leaf.findall(g)) <= args.max_words]
        gold_lines, pred_lines = [g for g, _ in kept], [p for _, p in kept]
    copies = -(-args.trees // len(gold_lines))
    tmp = Path(tempfile.mkdtemp())
    gold, pred = tmp / "gold.mrg", tmp / "pred.mrg"
    gold.write_text("\n".join((gold_lines * copies)[: args.trees]) + "\n", encoding="utf-8")
    pred.write_text("\n".join((pred_lines * copies)[: args.trees]) + "\n", encoding="utf-8")
    prm = DATA / "COLLINS.prm"

    from metametric_jax.tasks import constituency

    report = constituency.score_files(predictions=pred, references=gold)
    scores = report.scores["all"]
    print(
        f"data: {scores['sentences']} trees per file (tests/data/constituency x {copies}, cut"
        f"{f', trees of at most {args.max_words} words' if args.max_words else ''}), {scores['words']} words"
    )
    evalb = [args.evalb, "-p", str(prm), "-e", "1000000000", str(gold), str(pred)] if args.evalb else None
    if evalb:
        text = subprocess.run(evalb, capture_output=True, text=True, check=True).stdout
        printed = evalb_summary(text)
        mine = {key: f"{100 * scores[key]:.2f}" for key in printed}
        assert printed == mine, (printed, mine)
        print(f"figures: equal to EVALB's summary ({', '.join(f'{k} {v}' for k, v in printed.items())})")

    files = ["score", "constituency", "--gold", str(gold), "--pred", str(pred), "--format", "json"]
    processes = {"python -m metametric_jax": [sys.executable, "-m", "metametric_jax", *files]}
    processes.update({f"command {path}": [path, *files] for path in args.command})
    # Byte code cached as an installation has it (pip compiles on install), in a prefix outside the tree
    # (_process.ENV): these first runs write it, and each command's figures are checked equal to score_files'.
    for name, argv in processes.items():
        done = subprocess.run(argv, capture_output=True, text=True, check=False, env=ENV)
        if done.returncode:
            raise SystemExit(f"{name} failed:\n{done.stderr}")
        assert json.loads(done.stdout)["all"] == scores, name

    best: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _ in range(args.repeat):
        sides = {"ours": lambda: constituency.score_files(predictions=pred, references=gold)}
        if evalb:
            sides["evalb"] = lambda: subprocess.run(evalb, capture_output=True, check=True)
        for name, fn in sides.items():
            wall, used = timed(fn)
            best[name] = min(best.get(name, float("inf")), wall)
            cpu[name] = min(cpu.get(name, float("inf")), used)
    share_before = cpu_share()
    whole = interleaved({**({"evalb": evalb} if evalb else {}), **processes}, args.repeat)
    share_after = cpu_share()
    ours_wall, ours_cpu = whole["python -m metametric_jax"]
    if evalb:
        e, e_cpu = whole["evalb"]
        print(
            f"scoring run: evalb {best['evalb']:.3f} s, score_files {best['ours']:.3f} s: ours/evalb "
            f"{best['ours'] / best['evalb']:.2f}x"
        )
        print(
            f"scoring run, cpu time: evalb {cpu['evalb']:.3f} s, score_files {cpu['ours']:.3f} s: "
            f"ours/evalb {cpu['ours'] / cpu['evalb']:.2f}x"
        )
        print(
            f"whole process: evalb {e:.3f} s, metametric-jax score constituency {ours_wall:.3f} s: "
            f"ours/evalb {ours_wall / e:.2f}x"
        )
        print(
            f"whole process, cpu time: evalb {e_cpu:.3f} s, metametric-jax score constituency "
            f"{ours_cpu:.3f} s: ours/evalb {ours_cpu / e_cpu:.2f}x"
        )
        for path in args.command:
            wall, used = whole[f"command {path}"]
            print(
                f"whole process, command {path}: evalb {e:.3f} s, {wall:.3f} s: ours/evalb {wall / e:.2f}x "
                f"(cpu time: {used:.3f} s, {used / e_cpu:.2f}x)"
            )
    else:
        print(f"scoring run: score_files {best['ours']:.3f} s (no --evalb given)")
        print(f"whole process: metametric-jax score constituency {ours_wall:.3f} s (no --evalb given)")
        for path in args.command:
            print(f"whole process, command {path}: {whole[f'command {path}'][0]:.3f} s (no --evalb given)")
    print(
        f"free CPU share: {share_before:.2f} before the whole-process runs, {share_after:.2f} after (2.00: two cores)"
    )


if __name__ == "__main__":
    main()
