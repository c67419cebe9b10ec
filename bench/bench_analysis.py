"""The cost of the analysis: ``analyze`` with two systems against ``score`` of one, whole processes; and its peers.

NER, on a CoNLL-2003-sized file (about 46,000 tokens in 231 documents, bench_ner's generator) and a second system (the
same reference tags with other errors, bench_ner's error model with another seed):

1. ``metametric-jax analyze ner --references GOLD --system A --system B`` (1,000 bootstrap replicates over the
   documents, Holm's correction; JSON, and the self-contained HTML report) over ``metametric-jax score ner --gold GOLD
   --pred A`` (JSON). The target: within 5x, whole process.
2. nervaluate (``Evaluator(...).evaluate()`` on both systems, the error categories only: no buckets, no tests), as a
   whole process reading the same files, its categories checked equal to the report's first.
3. compare-mt 0.2.10 (needs ``six``, which it does not declare): it analyses machine translation output, but it
   buckets any tokenized sentences, so it reads each file's tag sequences as sentences (one line per sentence, the
   reference's and each system's): its default report (BLEU and length ratio, word F-measure by frequency bucket,
   sentence buckets by length and sentence BLEU, n-grams, examples) with ``score_type=bleu,bootstrap=1000`` (its
   paired bootstrap of the corpus score; it tests no bucket) and its HTML report (``--output_directory``). Not the
   same figures as ours (none are checked equal): the timing of a comparable report over the same sentences.

Coreference, on 350 generated CoNLL-2012 documents (bench_coref's generator, 120 mentions each; a second response
drawn with another seed): ``analyze coref --references KEY --system A --system B`` (JSON; Kummerfeld and Klein's
error categories of both systems, 1,000 replicates) over ``score coref KEY A``, whole processes, both with
``--max-repeated-mentions -1`` (the generator repeats a few spans). The target: within 5x.

Each command runs as a subprocess, interleaved, best of ``--repeat`` rounds (wall and CPU time of the child); the CPU
share free to this script is measured before and after (a busy loop in two processes against one).

Run: ``python bench/bench_analysis.py [--tokens N] [--documents N] [--repeat R] [--quick]``.
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
from bench_parallel import cpu_share  # noqa: E402
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


def tag_lines(conll: Path, out: Path) -> None:
    """compare-mt's input: one line per sentence, its tags separated by spaces (documents' starts left out)."""
    lines, current = [], []
    for line in conll.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                lines.append(" ".join(current))
            current = []
            continue
        current.append(fields[-1])
    if current:
        lines.append(" ".join(current))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def coref_files(folder: Path, documents: int) -> tuple[Path, Path, Path]:
    """A key file and two responses of ``documents`` generated documents (bench_coref's generator)."""
    from bench_coref import perturb, synthetic_key
    from bench_coref import write_conll as write_coref

    rng = random.Random(0)
    keys = [synthetic_key(rng, 120, 30) for _ in range(documents)]
    responses = [[perturb(rng, k) for k in keys] for _ in range(2)]
    sizes = [max(e for c in k + a + b for _, e in c) + 1 for k, a, b in zip(keys, *responses)]
    key, a, b = folder / "key.conll", folder / "a.conll", folder / "b.conll"
    write_coref(key, keys, sizes)
    write_coref(a, responses[0], sizes)
    write_coref(b, responses[1], sizes)
    return key, a, b


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
    parser.add_argument("--documents", type=int, default=350, help="coreference documents")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    free_before = cpu_share()
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
        have_compare_mt = importlib.util.find_spec("compare_mt") is not None and importlib.util.find_spec("six")
        if have_compare_mt:
            lines = {n: Path(tmp) / f"{n}.lines" for n in ("gold", "a", "b")}
            for name, path in (("gold", gold), ("a", a), ("b", b)):
                tag_lines(path, lines[name])
            argvs["compare_mt"] = [
                sys.executable, "-m", "compare_mt.compare_mt_main", str(lines["gold"]), str(lines["a"]),
                str(lines["b"]), "--compare_scores", "score_type=bleu,bootstrap=1000", "score_type=length",
                "--output_directory", str(Path(tmp) / "compare_mt"),
            ]  # fmt: skip
        key, ra, rb = coref_files(Path(tmp), args.documents)
        loose = ["--max-repeated-mentions", "-1"]
        argvs["score_coref"] = [*CLI, "score", "coref", str(key), str(ra), *loose, "--format", "json"]
        argvs["analyze_coref"] = [
            *CLI, "analyze", "coref", "--references", str(key), "--system", str(ra), "--system", str(rb), *loose,
            "--format", "json",
        ]  # fmt: skip
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
        coref_report = json.loads(printed["analyze_coref"])
        overall = coref_report["analyses"]["overall"]["all"]["figures"][0]
        scored = json.loads(printed["score_coref"])
        assert overall["conll"] == scored["conll"]["f1"], (overall, scored)
    free_after = cpu_share()
    s, an, h = times["score"], times["analyze"], times["analyze_html"]
    print(f"free CPU share (cores free to this script, of 2): {free_before:.2f} before, {free_after:.2f} after")
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
    if have_compare_mt:
        cm = times["compare_mt"]
        print(f"  compare-mt (two systems, B = 1000, HTML)   {cm[0]:6.2f} s wall {cm[1]:6.2f} s CPU")
    else:
        print("  compare-mt: not installed (pip install compare-mt six); not run")
    sc, ac = times["score_coref"], times["analyze_coref"]
    print(f"{args.documents} generated CoNLL-2012 documents, whole processes, best of {repeat}:")
    print(f"  score coref (one system)                   {sc[0]:6.2f} s wall {sc[1]:6.2f} s CPU")
    print(f"  analyze coref (two systems, B = 1000)      {ac[0]:6.2f} s wall {ac[1]:6.2f} s CPU")
    print(f"analyze ner (2 systems, JSON) / score ner (target <= 5x): {an[0] / s[0]:.2f}x")
    print(f"analyze ner (2 systems, HTML) / score ner (target <= 5x): {h[0] / s[0]:.2f}x")
    print(f"analyze coref (2 systems, JSON) / score coref (target <= 5x): {ac[0] / sc[0]:.2f}x")
    if have_nervaluate:
        print(f"nervaluate / analyze ner (JSON), same files: {times['nervaluate'][0] / an[0]:.2f}x")
    if have_compare_mt:
        print(f"compare-mt (HTML) / analyze ner (HTML), same sentences: {times['compare_mt'][0] / h[0]:.2f}x")


if __name__ == "__main__":
    main()
