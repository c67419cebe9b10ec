"""Write the conlleval fixture inputs of this folder and, given conlleval.pl, its outputs (see README.md).

Run from the repository root: ``python tests/data/ner/generate.py [PATH/TO/conlleval.pl]``. The inputs are
deterministic (seeded); each ``NAME.txt`` gets ``NAME.out``, conlleval's standard output for the options listed in
``cases.json``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TYPES = ("PER", "LOC", "ORG", "MISC", "GPE-LOC", "ÉVÉNEMENT", "人名")
PREFIXES = {"IOB1": "BI", "IOB2": "BI", "IOE1": "IE", "IOE2": "IE"}


def well_formed(rng: random.Random, scheme: str, length: int) -> list[str]:
    """A well-formed tag sequence of the scheme (IOB2 / IOE2 style spans, adapted to IOB1 / IOE1)."""
    tags = ["O"] * length
    spans = []
    i = 0
    while i < length:
        if rng.random() < 0.25:
            size = min(rng.choice((1, 1, 2, 2, 3, 4)), length - i)
            spans.append((i, i + size, rng.choice(TYPES)))
            i += size + (0 if rng.random() < 0.3 else 1)  # adjacent spans now and then
        else:
            i += 1
    prev_end, prev_type = -1, None
    for s, e, t in spans:
        adjacent = s == prev_end and t == prev_type
        for j in range(s, e):
            if scheme == "IOB2":
                tags[j] = ("B-" if j == s else "I-") + t
            elif scheme == "IOB1":
                tags[j] = ("B-" if j == s and adjacent else "I-") + t
            elif scheme == "IOE2":
                tags[j] = ("E-" if j == e - 1 else "I-") + t
            else:  # IOE1: E only on the last token of a span followed by an adjacent span of the same type
                tags[j] = "I-" + t
        if scheme == "IOE1" and adjacent:
            tags[s - 1] = "E-" + t
        prev_end, prev_type = e, t
    return tags


def noisy(rng: random.Random, scheme: str, tags: list[str], rate: float) -> list[str]:
    choices = ["O"] + [f"{p}-{t}" for p in PREFIXES[scheme] for t in TYPES]
    return [rng.choice(choices) if rng.random() < rate else t for t in tags]


def sentences(seed: int, scheme: str, n: int) -> list[list[tuple[str, str, str]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gold = well_formed(rng, scheme, rng.randint(1, 25))
        if rng.random() < 0.1:  # ill-formed reference sequences too
            gold = noisy(rng, scheme, gold, 0.3)
        pred = noisy(rng, scheme, gold, rng.choice((0.0, 0.05, 0.2, 0.5)))
        out.append([(rng.choice(("w", "Wörter", "字")) + str(k), g, p) for k, (g, p) in enumerate(zip(gold, pred))])
    return out


def write(name: str, rows: list[list[tuple[str, ...]]], sep: str = " ", docstart: int = 0, boundary: int = 0) -> None:
    lines = []
    width = len(rows[0][0]) if rows else 3
    for k, sentence in enumerate(rows):
        if docstart and k % docstart == 0:
            lines.append(sep.join(["-DOCSTART-"] + ["-X-"] * (width - 3) + ["O", "O"]))
            lines.append("")
        lines.extend(sep.join(row) for row in sentence)
        lines.append(sep.join(["-X-"] * width) if boundary and k % boundary == 1 else "")
    (HERE / name).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")


def sample() -> list[list[tuple[str, str, str]]]:
    """The bundled sample (metametric_jax/data/ner) in the one-file layout, DOCSTART lines left out."""

    def read(path: Path) -> list[list[list[str]]]:
        out, cur = [], []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("-DOCSTART-"):
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(line.split())
        return out + ([cur] if cur else [])

    gold = read(ROOT / "metametric_jax" / "data" / "ner" / "gold.txt")
    pred = read(ROOT / "metametric_jax" / "data" / "ner" / "pred.txt")
    return [[(g[0], g[-1], p[-1]) for g, p in zip(gs, ps)] for gs, ps in zip(gold, pred)]


def docstart_conll2003(rows: list[list[tuple[str, str, str]]]) -> str:
    """CoNLL-2003's columns (token, POS, chunk, then the two NER tags) with its ``-DOCSTART- -X- -X- O O`` lines in
    every place a file can hold them: alone between blank lines, right before or after a sentence with no blank line
    between, two in a row, at the start and at the end of the file."""
    mark = "-DOCSTART- -X- -X- O O"
    lines = [mark, ""]
    for k, sentence in enumerate(rows):
        if k and k % 10 == 0:
            lines += [mark, ""]
        if k % 10 == 3:
            lines.append(mark)  # no blank line before the sentence
        if k % 10 == 6:
            lines += [mark, mark, ""]
        lines.extend(f"{w} NN I-NP {g} {p}" for w, g, p in sentence)
        if k % 10 == 8:
            lines.append(mark)  # no blank line after the sentence
        lines.append("")
    return "\n".join(lines + [mark, ""])


def docstart_tagged(rows: list[list[tuple[str, str, str]]]) -> str:
    """``-DOCSTART-`` lines, between blank lines, whose tags are entity tags on either side or both."""
    tags = ("B-ORG B-ORG", "B-ORG O", "O B-PER", "I-LOC I-LOC", "B-MISC B-LOC", "O O", "I-PER B-PER")
    lines = []
    for k, sentence in enumerate(rows):
        if k % 4 == 0:
            lines += [f"-DOCSTART- {tags[(k // 4) % len(tags)]}", ""]
        lines.extend(" ".join(row) for row in sentence)
        lines.append("")
    return "\n".join(lines + ["-DOCSTART- B-ORG B-ORG", ""])


WNUT17 = HERE / "wnut17"
WNUT17_SYSTEMS = ("uh_ritual", "arcada", "drexel_cci")


def wnut17_merged(system: str) -> str:
    """conlleval's layout of a WNUT 2017 submission: the reference token and tag, then the system's tag."""

    def rows(path: Path) -> list[list[str]]:
        return [line.split() for line in path.read_text(encoding="utf-8").splitlines()]

    gold, pred = rows(WNUT17 / "emerging.test.annotated"), rows(WNUT17 / system)
    lines = [" ".join([*g, p[-1]]) if g else "" for g, p in zip(gold, pred)]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    cases = {}
    rows = sample()
    write("sample.txt", rows, docstart=1000)
    cases["sample.txt"] = {"options": [], "scheme": "IOB2"}
    for k, scheme in enumerate(("IOB2", "IOB1", "IOE1", "IOE2")):
        name = f"random_{scheme.lower()}.txt"
        write(name, sentences(10 + k, scheme, 400), docstart=40)
        cases[name] = {"options": [], "scheme": scheme}
    tab = [[(f"New York {w}", "NN", g, p) for w, g, p in s] for s in sentences(20, "IOB2", 200)]
    write("tab.txt", tab, sep="\t", boundary=7)
    cases["tab.txt"] = {"options": ["-d", "\\t"], "scheme": "IOB2"}
    rng = random.Random(30)
    raw = []
    for _ in range(200):
        gold = [rng.choice(("NONE", "NONE", "NONE", "PER", "LOC", "B-LOC", "x-y")) for _ in range(rng.randint(1, 15))]
        pred = [t if rng.random() < 0.8 else rng.choice(("NONE", "PER", "ORG")) for t in gold]
        raw.append([(f"t{k}", g, p) for k, (g, p) in enumerate(zip(gold, pred))])
    write("raw.txt", raw)
    cases["raw.txt"] = {"options": ["-r", "-o", "NONE"], "scheme": "IOB2"}
    write("empty.txt", [])
    cases["empty.txt"] = {"options": [], "scheme": "IOB2"}
    (HERE / "docstart.txt").write_text(docstart_conll2003(sentences(40, "IOB2", 120)), encoding="utf-8")
    cases["docstart.txt"] = {"options": [], "scheme": "IOB2"}
    (HERE / "docstart_tagged.txt").write_text(docstart_tagged(sentences(50, "IOB2", 60)), encoding="utf-8")
    cases["docstart_tagged.txt"] = {"options": [], "scheme": "IOB2"}
    write("outside_without_raw.txt", sentences(60, "IOB2", 200), docstart=50)
    cases["outside_without_raw.txt"] = {"options": ["-o", "B-MISC"], "scheme": "IOB2"}
    (HERE / "cases.json").write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if len(sys.argv) > 1:
        for name, case in cases.items():
            with open(HERE / name, "rb") as stdin:
                proc = subprocess.run(["perl", sys.argv[1], *case["options"]], stdin=stdin, capture_output=True)
            (HERE / name.replace(".txt", ".out")).write_bytes(proc.stdout)
            print(name, proc.returncode, proc.stderr.decode())
        for system in WNUT17_SYSTEMS:
            merged = wnut17_merged(system).encode("utf-8")
            proc = subprocess.run(["perl", sys.argv[1]], input=merged, capture_output=True)
            (WNUT17 / f"{system}.out").write_bytes(proc.stdout)
            print(system, proc.returncode, proc.stderr.decode())


if __name__ == "__main__":
    main()
