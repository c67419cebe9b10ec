"""Writes the generated AMR pairs and runs amr-evaluation on them and on the other AMR fixtures.

Run from the repository root, with a checkout of amr-evaluation (github.com/mdtux89/amr-evaluation):

    python tests/data/amr/amr_evaluation_reference.py /path/to/amr-evaluation

It writes

* ``evaluation_gold.txt``, ``evaluation_pred.txt``: hand-made pairs for each definition of amr-evaluation that differs
  from a graph-normalized reading, then seeded random pairs (the same files on every run);
* for each data set NAME (``sample``: the bundled sample; ``fine``: ``fine_pred.txt`` with its alignment markers
  removed, against ``fine_gold.txt``; ``fine_aligned``: ``fine_pred.txt`` as it is, the markers part of the strings;
  ``generated``: the files above):

  - ``amr_evaluation_NAME.txt``: what ``./evaluation.sh PRED GOLD`` prints (only where the file does not exist, as its
    hill climbing is random; ``--overwrite`` rewrites it);
  - ``amr_evaluation_NAME_pairs.json``: per graph pair, ``[matched, predicted, reference]`` of each figure as
    amr-evaluation counts it: the Smatch lines (Smatch, Unlabeled, No WSD) by ``smatch/smatch.py`` on the files
    ``evaluation.sh`` gives it, once as it runs (4 restarts) and once with 99 restarts; the other figures by
    ``scores.py`` on each pair alone (its Reentrancies and SRL hill climbing once as it runs, once with 100 starts).

The counts come from amr-evaluation's own functions (``get_amr_match`` of ``smatch/smatch.py`` and of
``smatch/smatch_fromlists.py``, recorded as ``scores.py`` and ``smatch.py`` call them), on the files its
``evaluation.sh`` makes (the ``sed`` and ``perl`` commands are run as it runs them).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import random
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import penman

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
NAMES = ("concepts", "named_entities", "negations", "wikification")
PRINTED = {
    "Concepts": "concepts",
    "Named Ent.": "named_entities",
    "Negations": "negations",
    "Wikification": "wikification",
}
MANY = 100  # starts of the second run

# ---------------------------------------------------------------------------------------------------- hand-made pairs
CASES = [
    # :mod is a relation of its own (not an inverse :domain): no reentrancy in a tree
    ("(b / boy :mod (t / tall) :ARG0-of (g / go-02))", "(b / boy :mod (t / tall) :ARG0-of (g / go-02))"),
    ("(t / tall :domain (b / boy))", "(b / boy :mod (t / tall))"),
    ("(s / see-01 :ARG0 (b / boy :mod (s2 / small)) :ARG1 (g / girl :mod (t / tall)))", "(s / see-01 :ARG0 (b / boy))"),
    # :consist-of is inverted like any -of role
    (
        "(t / team :consist-of (p / person :quant 5))",
        "(t / team :consist-of (p / person :ARG0-of (w / win-01 :ARG1 t)))",
    ),
    ("(p / person :quant 5 :consist (t / team))", "(t / team :consist-of (p / person :quant 5))"),
    # an -of role to a variable: inverted when written last in its node, kept as written before another role
    ("(p / person :ARG0-of g :ARG1-of (g / go-02))", "(g / go-02 :ARG0 (p / person) :ARG1 p)"),
    (
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0-of b))",
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    ),
    (
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0-of b :time (n / now)))",
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :time (n / now)))",
    ),
    (
        "(w / want-01 :ARG0 (b / boy :ARG0-of g) :ARG1 (g / go-02))",
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    ),
    (
        "(a / and :op1 (x / thing :ARG1-of 5) :op2 (y / thing :ARG1-of 5 :mod (z / big)))",
        "(a / and :op1 (x / thing) :op2 (y / thing))",
    ),
    # unlabeled: the written direction of -of roles is kept
    ("(b / boy :ARG0-of (g / go-02))", "(g / go-02 :ARG0 (b / boy))"),
    ("(g / go-02 :ARG0 (b / boy :ARG1-of (s / see-01)))", "(g / go-02 :ARG0 (b / boy) :ARG1-of (s / see-01 :ARG1 b))"),
    # concepts compare case-sensitively in Concepts, Named Ent., Negations; not in the Smatch-based scores
    (
        '(c / Country :name (n / name :op1 "France") :polarity -)',
        '(c / country :name (n / name :op1 "France") :polarity -)',
    ),
    ("(g / GO-02 :ARG0 (b / Boy))", "(g / go-02 :ARG0 (b / boy))"),
    # the TOP triple carries the root's concept; a concept equal to a variable name counts as a parent
    ("(i / i :ARG0-of (w / want-01))", "(i / i :ARG0-of (w / want-01))"),
    ("(x / i :ARG0-of (w / want-01))", "(i / i :ARG0-of (w / want-01))"),
    (
        "(w / want-01 :ARG0 (i / i) :ARG1 (g / go-02 :ARG0 i))",
        "(g / go-02 :ARG0 (i / i) :ARG1-of (w / want-01 :ARG0 i))",
    ),
    ("(s / say-01 :ARG0 (y / you))", "(y / you :ARG0-of (s / say-01))"),
    # repeated triples: every pair of copies counts
    ("(d / date-entity :month 5 :day 5)", "(d / date-entity :month 5 :day 5)"),
    ("(d / date-entity :month 5 :day 5 :year 5)", "(d / date-entity :month 5 :day 6)"),
    ("(a / and :op1 (b / boy) :op2 b)", "(a / and :op1 (b / boy) :op2 b)"),
    # quoted constants: the first word, a closing quote read as "_"
    ('(c / city :name (n / name :op1 "New York"))', '(c / city :name (n / name :op1 "New" :op2 "York"))'),
    ("(c / city :wiki Paris :name (n / name :op1 Paris))", '(c / city :wiki "Paris" :name (n / name :op1 "Paris"))'),
    (
        '(c / city :wiki "Paris" :name (n / name :op1 "Paris"))',
        '(c / city :wiki "paris" :name (n / name :op1 "PARIS"))',
    ),
    ('(p / person :wiki - :name (n / name :op1 "Kim"))', '(p / person :wiki "-" :name (n / name :op1 "Kim"))'),
    ('(t / time :value "10:30")', '(t / time :value "10:45")'),
    # senses: rewritten textually after "/ "
    (
        "(h / have-org-role-91 :ARG0 (p / person) :ARG2 (g / go-02))",
        "(h / have-org-role-92 :ARG0 (p / person) :ARG2 (g / go-03))",
    ),
    # negation and names on several variables; wiki values
    (
        '(s / say-01 :polarity - :ARG0 (p / person :wiki "Barack_Obama" :name (n / name :op1 "Barack" :op2 "Obama")) '
        ':ARG1 (g / go-02 :polarity - :ARG0 p :ARG1 (c / city :wiki "Paris" :name (n2 / name :op1 "Paris"))))',
        '(s / say-01 :ARG0 (p / person :wiki "Barack_Obama" :name (n / name :op1 "Barack" :op2 "Obama")) '
        ':ARG1 (g / go-02 :polarity - :ARG0 p :ARG1 (c / city :wiki "Paris_(France)" :name (n2 / name :op1 "Paris"))))',
    ),
    # a self-loop; no ARG role at all (empty SRL subgraphs)
    ("(a / amr-unknown :ARG0 a)", "(a / amr-unknown :mod a)"),
    ("(c / chapter :mod 1)", "(c / chapter :mod 2)"),
    ("(c / chapter :mod 1)", "(c / chapter :ARG1 (s / seven))"),
]

# ---------------------------------------------------------------------------------------------------- random pairs
CONCEPTS = [
    "want-01", "go-02", "go-01", "see-01", "say-01", "believe-01", "know-01", "have-03", "boy", "girl", "person",
    "thing", "planet", "flower", "i", "you", "he", "little", "big", "and", "possible-01", "contrast-01",
]  # fmt: skip
ROLES = ["ARG0", "ARG1", "ARG2", "mod", "domain", "op1", "op2", "location", "time", "poss", "manner", "consist-of"]
ATTRIBUTES = [("polarity", "-"), ("quant", "2"), ("quant", "5"), ("mode", "expressive"), ("mode", "interrogative")]
NAMES_OF = [("Kim", None), ("Paris", '"Paris"'), ("New York", '"New_York_City"'), ("Asteroid B-612", "-")]


def random_graph(rng: random.Random) -> dict:
    n = rng.randint(2, 14)
    concepts = [rng.choice(CONCEPTS) for _ in range(n)]
    edges = [(rng.randrange(i), rng.choice(ROLES), i) for i in range(1, n)]
    for _ in range(rng.randint(0, n // 2)):  # reentrancies
        s, t = rng.sample(range(n), 2)
        if all({s, t} != {a, b} for a, _, b in edges):
            edges.append((s, rng.choice(ROLES), t))
    attrs = [(rng.randrange(n), *rng.choice(ATTRIBUTES)) for _ in range(rng.randint(0, 3))]
    names = []
    for _ in range(rng.randint(0, 2)):
        names.append((rng.randrange(n), *rng.choice(NAMES_OF)))
    return {"concepts": concepts, "edges": edges, "attrs": sorted(set(attrs)), "names": names, "root": 0}


def perturb(rng: random.Random, g: dict) -> dict:
    concepts = []
    for c in g["concepts"]:
        r = rng.random()
        if r < 0.1:
            c = rng.choice(CONCEPTS)
        elif r < 0.15 and c[-3:-2] == "-":
            c = c[:-2] + rng.choice(["01", "02", "03"])
        elif r < 0.18:
            c = c.upper() if rng.random() < 0.5 else c.capitalize()
        concepts.append(c)
    edges = [(s, rng.choice(ROLES) if rng.random() < 0.15 else r, t) for s, r, t in g["edges"]]
    edges = [e for e in edges if rng.random() > 0.1]
    if rng.random() < 0.3 and len(concepts) > 2:
        s, t = rng.sample(range(len(concepts)), 2)
        edges.append((s, rng.choice(ROLES), t))
    attrs = [a for a in g["attrs"] if rng.random() > 0.2]
    if rng.random() < 0.3:
        attrs.append((rng.randrange(len(concepts)), *rng.choice(ATTRIBUTES)))
    names = [
        (v, name, wiki if rng.random() > 0.2 else rng.choice(['"Kim"', "-", "Paris"])) for v, name, wiki in g["names"]
    ]
    root = g["root"] if rng.random() < 0.8 else rng.randrange(len(concepts))
    return {"concepts": concepts, "edges": edges, "attrs": sorted(set(attrs)), "names": names, "root": root}


def to_penman(rng: random.Random, g: dict) -> str:
    """PENMAN text: a spanning tree from the root (edges nested forward or as -of), other edges as references."""
    concepts, n = g["concepts"], len(g["concepts"])
    names = []
    for i, c in enumerate(concepts):
        var = c if c in ("i", "you", "he") and rng.random() < 0.5 else f"{c[0].lower()}{i}"
        names.append(var if var not in names else f"{var}x{i}")
    branches: dict[int, list] = {i: [] for i in range(n)}
    placed, todo, nested = {g["root"]}, [g["root"]], set()
    edges = list(enumerate(g["edges"]))
    rng.shuffle(edges)
    while todo:
        x = todo.pop()
        for k, (s, r, t) in edges:
            if k in nested:
                continue
            if s == x and t not in placed:
                branches[x].append((":" + r, t))
            elif t == x and s not in placed and not r.endswith("-of"):
                branches[x].append((":" + r + "-of", s))
            else:
                continue
            nested.add(k)
            placed.add(t if s == x else s)
            todo.append(t if s == x else s)
    for k, (s, r, t) in edges:  # references; unreachable variables are left out
        if k in nested or s not in placed or t not in placed:
            continue
        if rng.random() < 0.5 or r.endswith("-of"):
            branches[s].append((":" + r, names[t]))
        else:
            branches[t].append((":" + r + "-of", names[s]))
    for v, role, value in g["attrs"]:
        if v in placed:
            branches[v].append((":" + role, value))
    for k, (v, name, wiki) in enumerate(g["names"]):
        if v not in placed:
            continue
        words = [f'"{w}"' for w in name.split()] if rng.random() < 0.7 else [f'"{name}"']
        ops = [(f":op{j}", w) for j, w in enumerate(words, start=1)]
        branches[v].append((":name", ("name", ops, f"n{k}x{v}")))
        if wiki is not None:
            branches[v].append((":wiki", wiki))
    for v in branches:
        rng.shuffle(branches[v])

    def node(i: int) -> tuple:
        out: list = [("/", concepts[i])]
        for role, target in branches[i]:
            if isinstance(target, tuple) and target[0] == "name":
                out.append((role, (target[2], [("/", "name"), *target[1]])))
            elif isinstance(target, int):
                out.append((role, node(target)))
            else:
                out.append((role, target))
        return (names[i], out)

    return penman.format(penman.Tree(node(g["root"])))


def write_generated(count: int, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    gold_blocks, pred_blocks = [], []
    for k, (pred, gold) in enumerate(CASES, start=1):
        for blocks, text in ((pred_blocks, pred), (gold_blocks, gold)):
            blocks.append(f"# ::id case.{k}\n{penman.format(penman.parse(text))}")
    for k in range(1, count + 1):
        gold = random_graph(rng)
        pred = perturb(rng, gold)
        gold_blocks.append(f"# ::id random.{k}\n{to_penman(rng, gold)}")
        pred_blocks.append(f"# ::id random.{k}\n{to_penman(rng, pred)}")
    paths = HERE / "evaluation_gold.txt", HERE / "evaluation_pred.txt"
    for path, blocks in zip(paths, (gold_blocks, pred_blocks)):
        path.write_text("\n\n".join(blocks) + "\n")
    return paths


# ---------------------------------------------------------------------------------------------------- the tool
def smatch_lines(tool: Path, pred: str, gold: str, restarts: int) -> list[list[int]]:
    """Per pair (matched, predicted, reference) of amr-evaluation's smatch/smatch.py, as evaluation.sh runs it."""
    sys.path.insert(0, str(tool / "smatch"))
    spec = importlib.util.spec_from_file_location("amr_evaluation_smatch", tool / "smatch" / "smatch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recorded = []
    original = module.get_amr_match

    def get_amr_match(*args, **kwargs):
        found = original(*args, **kwargs)
        recorded.append(list(found))
        return found

    module.get_amr_match = get_amr_match
    module.argparse = argparse  # imported by its __main__ block
    module.args = module.build_arg_parser().parse_args(["--pr", "-f", pred, gold, "-r", str(restarts)])
    with contextlib.redirect_stdout(io.StringIO()):
        module.main(module.args)
    return recorded


def scores_pairs(tool: Path, pred: str, gold: str, starts: int | None) -> list[dict]:
    """Per pair, the counts of scores.py run on that pair alone (Reentrancies and SRL through its smatch)."""
    sys.path.insert(0, str(tool))
    import smatch.smatch_fromlists as fromlists  # amr-evaluation's

    recorded = []
    original = fromlists.get_amr_match

    def get_amr_match(*args, **kwargs):
        if starts is not None:
            fromlists.iteration_num = starts
        found = original(*args, **kwargs)
        recorded.append(list(found))
        return found

    fromlists.get_amr_match = get_amr_match
    preds = Path(pred).read_text().strip().split("\n\n")
    golds = Path(gold).read_text().strip().split("\n\n")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for p, g in zip(preds, golds):
            (Path(tmp) / "p").write_text(p + "\n")
            (Path(tmp) / "g").write_text(g + "\n")
            recorded.clear()
            sys.argv = ["scores.py", str(Path(tmp) / "p"), str(Path(tmp) / "g")]
            with contextlib.redirect_stdout(io.StringIO()):
                state = runpy.run_path(str(tool / "scores.py"))
            pair = {
                name: [state["inters"][key], state["preds"][key], state["golds"][key]] for key, name in PRINTED.items()
            }
            pair["reentrancies"], pair["srl"] = recorded
            out.append(pair)
    return out


def run_tool_part(part: str, tool: Path, pred: str, gold: str, restarts: int | None) -> None:
    if part == "smatch":
        print(json.dumps(smatch_lines(tool, pred, gold, restarts if restarts is not None else 4)))
    else:
        print(json.dumps(scores_pairs(tool, pred, gold, restarts)))


def sh(command: str, cwd: Path) -> str:
    return subprocess.run(["bash", "-c", command], cwd=cwd, check=True, capture_output=True, text=True).stdout


def part(tool: Path, what: str, pred: Path, gold: Path, restarts: int | None = None) -> list:
    command = [sys.executable, str(Path(__file__).resolve()), str(tool), "--part", what, str(pred), str(gold)]
    if restarts is not None:
        command += ["--restarts", str(restarts)]
    done = subprocess.run(command, cwd=tool, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def reference(tool: Path, name: str, pred: Path, gold: Path, overwrite: bool) -> None:
    printed = HERE / f"amr_evaluation_{name}.txt"
    if overwrite or not printed.exists():
        printed.write_text(sh(f"./evaluation.sh {pred} {gold}", tool))
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for side, path in (("1", pred), ("2", gold)):  # the files evaluation.sh gives to smatch.py and scores.py
            files["label" + side] = Path(tmp) / f"label{side}"
            files["sense" + side] = Path(tmp) / f"sense{side}"
            files["clean" + side] = Path(tmp) / f"clean{side}"
            sh(f"sed 's/:[a-zA-Z0-9-]*/:label/g' {path} > {files['label' + side]}", tool)
            sh(f"cat {path} | perl -ne 's/(\\/ [a-zA-Z0-9\\-][a-zA-Z0-9\\-]*)-[0-9][0-9]*/\\1-01/g; print;' > "
               f"{files['sense' + side]}", tool)  # fmt: skip
            sh(
                f"cat {path} | perl -ne 's/^#.*\\n//g; print;' | tr '\\t' ' ' | tr -s ' ' > {files['clean' + side]}",
                tool,
            )
        runs = {}
        for label, restarts in (("", None), ("_many", MANY - 1)):
            runs["smatch" + label] = part(tool, "smatch", pred, gold, restarts)
            runs["unlabeled" + label] = part(tool, "smatch", files["label1"], files["label2"], restarts)
            runs["no_wsd" + label] = part(tool, "smatch", files["sense1"], files["sense2"], restarts)
        runs["scores"] = part(tool, "scores", files["clean1"], files["clean2"])
        runs["scores_many"] = part(tool, "scores", files["clean1"], files["clean2"], MANY)
    ids = [m.group(1) if (m := re.search(r"::id (\S+)", block)) else str(k) for k, block in
           enumerate(gold.read_text().strip().split("\n\n"), start=1)]  # fmt: skip
    commit = sh("git rev-parse HEAD", tool).strip()
    pairs, many = [], []
    for k, pair_id in enumerate(ids):
        one = {"id": pair_id}
        one.update({key: runs[key][k] for key in ("smatch", "unlabeled", "no_wsd")})
        one.update(runs["scores"][k])
        pairs.append(one)
        again = {"id": pair_id}
        again.update({key: runs[key + "_many"][k] for key in ("smatch", "unlabeled", "no_wsd")})
        again.update({key: runs["scores_many"][k][key] for key in ("reentrancies", "srl")})
        many.append(again)
    document = {
        "tool": "amr-evaluation (github.com/mdtux89/amr-evaluation)",
        "commit": commit,
        "python": sys.version.split()[0],
        "predictions": str(pred.relative_to(ROOT)) if pred.is_relative_to(ROOT) else pred.name,
        "references": str(gold.relative_to(ROOT)) if gold.is_relative_to(ROOT) else gold.name,
        "counts": "[matched, predicted, reference] per figure",
        "pairs": pairs,
        f"pairs_{MANY}_starts": many,
    }
    (HERE / f"amr_evaluation_{name}_pairs.json").write_text(dump(document))


def dump(document: dict) -> str:
    """JSON with one graph pair a line."""
    lines = []
    for key, value in document.items():
        if isinstance(value, list):
            rows = ",\n".join("  " + json.dumps(row) for row in value)
            lines.append(f"{json.dumps(key)}: [\n{rows}\n ]")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n " + ",\n ".join(lines) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", type=Path, help="a checkout of amr-evaluation")
    parser.add_argument("--count", type=int, default=150, help="random pairs (default 150)")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--overwrite", action="store_true", help="rewrite the evaluation.sh outputs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these data sets")
    parser.add_argument("--part", nargs=3, metavar=("WHAT", "PRED", "GOLD"), help=argparse.SUPPRESS)
    parser.add_argument("--restarts", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    tool = args.tool.resolve()
    if args.part:
        run_tool_part(args.part[0], tool, args.part[1], args.part[2], args.restarts)
        return
    gold, pred = write_generated(args.count, args.seed)
    data = ROOT / "metametric_jax" / "data" / "amr"
    with tempfile.TemporaryDirectory() as tmp:
        fine_pred = Path(tmp) / "fine_pred_without_markers.txt"
        fine_pred.write_text(re.sub(r"~e\.[0-9]+", "", (HERE / "fine_pred.txt").read_text()))
        for name, p, g in (
            ("sample", data / "pred.txt", data / "gold.txt"),
            ("fine", fine_pred, HERE / "fine_gold.txt"),
            ("fine_aligned", HERE / "fine_pred.txt", HERE / "fine_gold.txt"),
            ("generated", pred, gold),
        ):
            if not args.only or name in args.only:
                reference(tool, name, p, g, args.overwrite)


if __name__ == "__main__":
    main()
