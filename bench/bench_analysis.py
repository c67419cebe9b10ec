"""The cost of the analysis: ``analyze ner`` with two systems against ``score ner`` of one, whole processes; nervaluate.

On a CoNLL-2003-sized file (about 46,000 tokens in 231 documents, bench_ner's generator) and a second system (the
same reference tags with other errors, bench_ner's error model with another seed):

1. ``metametric-jax analyze ner --references GOLD --system A --system B`` (1,000 bootstrap replicates over the
   documents, Holm's correction; JSON, and the self-contained HTML report) over ``metametric-jax score ner --gold GOLD
   --pred A`` (JSON). The target: within 5x, whole process.
2. nervaluate (``Evaluator(...).evaluate()`` on both systems, the error categories only: no buckets, no tests), as a
   whole process reading the same files, its categories checked equal to the report's first.

compare-mt is not run: it analyses machine translation output, not tagged entities. Each command runs as a
subprocess, interleaved, best of ``--repeat`` rounds (wall and CPU time of the child).

Run: ``python bench/bench_analysis.py [--tokens N] [--repeat R] [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ner import TYPES, run_timed, write_conll  # noqa: E402
from bench_second_number import split  # noqa: E402

CLI = [sys.executable, "-m", "metametric_jax"]

NERVALUATE_SCRIPT = """
import json, sys
from nervaluate import Evaluator

def tags(path):
    out, cur = [], []
    for line in open(path, encoding="utf-8"):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if cur:
                out.append(cur)
            cur = []
            continue
        cur.append(fields[-1])
    if cur:
        out.append(cur)
    return out

gold = tags(sys.argv[1])
types = ["LOC", "MISC", "ORG", "PER"]
result = []
for system in sys.argv[2:]:
    overall = Evaluator(gold, tags(system), types, loader="list").evaluate()["overall"]
    result.append({scheme: [getattr(overall[scheme], k) for k in ("correct", "incorrect", "partial", "missed",
                   "spurious")] for scheme in ("strict", "exact", "partial", "ent_type")})
print(json.dumps(result))
"""


def perturb_file(gold: Path, out: Path, seed: int) -> None:
    """A second system: the reference's tags with bench_ner's kinds of errors, drawn with another seed."""
    rng = random.Random(seed)
    lines = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            lines.append(line)
            continue
        tag = fields[-1]
        r = rng.random()
        if r < 0.02 and tag != "O":
            tag = tag[:2] + rng.choice(TYPES)
        elif r < 0.035:
            tag = "I-" + rng.choice(TYPES)
        elif r < 0.045:
            tag = "O"
        elif r < 0.055:
            tag = "B-" + rng.choice(TYPES)
        lines.append(" ".join([*fields[:-1], tag]))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def best(argvs: dict[str, list[str]], repeat: int) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    out = {k: (float("inf"), float("inf")) for k in argvs}
    printed: dict[str, str] = {}
    for _ in range(repeat):
        for name, argv in argvs.items():
            wall, cpu, stdout = run_timed(argv)
            out[name] = (min(out[name][0], wall), min(out[name][1], cpu))
            printed[name] = stdout
    return out, printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=46_666)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        data, gold, a, b = (Path(tmp) / f"{n}.txt" for n in ("testb", "gold", "a", "b"))
        write_conll(data, args.tokens)
        split(data, gold, a)
        perturb_file(gold, b, seed=7)
        html = Path(tmp) / "report.html"
        score = [*CLI, "score", "ner", "--gold", str(gold), "--pred", str(a), "--no-progress", "--format", "json"]
        analyze = [*CLI, "analyze", "ner", "--references", str(gold), "--system", str(a), "--system", str(b)]
        argvs = {
            "score": score,
            "analyze": [*analyze, "--format", "json"],
            "analyze_html": [*analyze, "--format", "html", "--out", str(html)],
        }
        have_nervaluate = importlib.util.find_spec("nervaluate") is not None
        if have_nervaluate:
            script = Path(tmp) / "nervaluate_script.py"
            script.write_text(NERVALUATE_SCRIPT, encoding="utf-8")
            argvs["nervaluate"] = [sys.executable, str(script), str(gold), str(a), str(b)]
        times, printed = best(argvs, repeat)
        report = json.loads(printed["analyze"])
        if have_nervaluate:
            theirs = json.loads(printed["nervaluate"])
            for s, per_scheme in enumerate(theirs):
                for scheme, counts in per_scheme.items():
                    ours = report["analyses"]["errors"]["type" if scheme == "ent_type" else scheme][s]
                    mine = [ours[k] for k in ("correct", "incorrect", "partial", "missed", "spurious")]
                    assert mine == counts, (s, scheme, mine, counts)
        units, tests = report["n"], report["correction"]["tests"]
    s, an, h = times["score"], times["analyze"], times["analyze_html"]
    print(f"CoNLL-2003-sized NER file ({args.tokens} tokens, {units} documents), whole processes, best of {repeat}:")
    print(f"  score ner (one system)                     {s[0]:6.2f} s wall {s[1]:6.2f} s CPU")
    print(f"  analyze ner (two systems, B = 1000, JSON)  {an[0]:6.2f} s wall {an[1]:6.2f} s CPU  ({tests} tests)")
    print(f"  analyze ner (two systems, HTML report)     {h[0]:6.2f} s wall {h[1]:6.2f} s CPU")
    if have_nervaluate:
        nv = times["nervaluate"]
        print(f"  nervaluate (two systems, categories only)  {nv[0]:6.2f} s wall {nv[1]:6.2f} s CPU")
        print("  error categories equal to nervaluate's for both systems and all four schemes")
    else:
        print("  nervaluate: not installed (pip install nervaluate); not run")
    print(f"analyze ner (2 systems, JSON) / score ner (target <= 5x): {an[0] / s[0]:.2f}x")
    print(f"analyze ner (2 systems, HTML) / score ner (target <= 5x): {h[0] / s[0]:.2f}x")
    if have_nervaluate:
        print(f"nervaluate / analyze ner (JSON), same files: {times['nervaluate'][0] / an[0]:.2f}x")


if __name__ == "__main__":
    main()
