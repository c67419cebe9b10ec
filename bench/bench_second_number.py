"""The cost of the second number: ``score --bootstrap`` and ``compare`` against the plain ``score``, whole processes.

1. Every task's bundled sample: CPU seconds of ``metametric-jax score TASK --bootstrap 1000`` over the plain run
   (target: at most 3 s more for every task).
2. A CoNLL-2003-sized NER file (about 46,000 tokens in 231 documents, bench_ner's generator): ``score ner
   --bootstrap 1000`` over ``score ner`` (target: within 3x, whole process), and ``compare ner`` of two systems over
   ``score ner`` of one (target: within 3x).

Each command runs as a subprocess, interleaved, best of ``--repeat`` rounds (wall and CPU time of the child).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ner import run_timed, write_conll  # noqa: E402

TASKS = ("amr", "constituency", "coref", "dependency", "ie", "ner", "ranking", "rouge")
CLI = [sys.executable, "-m", "metametric_jax"]


def best(argvs: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    out = {k: (float("inf"), float("inf")) for k in argvs}
    for _ in range(repeat):
        for name, argv in argvs.items():
            wall, cpu, _ = run_timed(argv)
            out[name] = (min(out[name][0], wall), min(out[name][1], cpu))
    return out


def samples(repeat: int) -> None:
    print("bundled samples: CPU seconds of score TASK --bootstrap 1000 over the plain run (target <= 3 s)")
    worst = 0.0
    for task in TASKS:
        plain = [*CLI, "score", task, "--no-progress", "--format", "json"]
        times = best({"plain": plain, "boot": [*plain, "--bootstrap", "1000"]}, repeat)
        extra = times["boot"][1] - times["plain"][1]
        worst = max(worst, extra)
        plain_cpu, boot_cpu = times["plain"][1], times["boot"][1]
        print(f"  {task:13s} plain {plain_cpu:6.2f} s CPU   bootstrap {boot_cpu:6.2f} s CPU   +{extra:5.2f} s")
    print(f"bootstrap fixed cost, worst task: +{worst:.2f} s CPU")


def split(conlleval_file: Path, gold: Path, pred: Path) -> None:
    g, p = [], []
    for line in conlleval_file.read_text(encoding="utf-8").splitlines():
        cols = line.split()
        g.append(" ".join(cols[:-1]) if cols else "")
        p.append(" ".join([*cols[:-2], cols[-1]]) if cols else "")
    gold.write_text("\n".join(g) + "\n", encoding="utf-8")
    pred.write_text("\n".join(p) + "\n", encoding="utf-8")


def conll2003(n_tokens: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data, gold, pred = Path(tmp) / "testb.txt", Path(tmp) / "gold.txt", Path(tmp) / "pred.txt"
        write_conll(data, n_tokens)
        split(data, gold, pred)
        score = [*CLI, "score", "ner", "--gold", str(gold), "--pred", str(pred), "--no-progress", "--format", "json"]
        compare = [*CLI, "compare", "ner", "--references", str(gold), "--system", str(pred), "--system", str(gold)]
        times = best(
            {
                "score": score,
                "bootstrap": [*score, "--bootstrap", "1000"],
                "compare": [*compare, "--no-progress", "--format", "json"],
            },
            repeat,
        )
    s, b, c = times["score"], times["bootstrap"], times["compare"]
    print(f"CoNLL-2003-sized NER file ({n_tokens} tokens, 231 documents), whole processes, best of {repeat}:")
    print(f"  score ner                  {s[0]:6.2f} s wall {s[1]:6.2f} s CPU")
    print(f"  score ner --bootstrap 1000 {b[0]:6.2f} s wall {b[1]:6.2f} s CPU")
    print(f"  compare ner (2 systems)    {c[0]:6.2f} s wall {c[1]:6.2f} s CPU")
    print(f"score ner --bootstrap 1000 / score ner (target <= 3x): {b[0] / s[0]:.2f}x")
    print(f"compare ner / score ner (target <= 3x): {c[0] / s[0]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=46_666)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    samples(repeat)
    conll2003(args.tokens, repeat)


if __name__ == "__main__":
    main()
