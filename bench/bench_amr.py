"""Exact Smatch (ours) vs the smatch package's hill climbing (smatch 1.0.4, default 4 restarts), per graph pair.

1. Random AMR-like gold graphs of about 10, 25 and 50 triples; each prediction is a perturbed copy (concepts and roles
   changed, edges and attributes dropped) with other variable names and branch order. Both solvers get the same pairs,
   in one run; the timings are of the matching only (both sides' triples are extracted beforehand): smatch's
   ``get_best_match`` (which builds its candidate pool) against our ``smatch_match`` (which builds its problem). Each
   pair is timed ``--repeats`` times per solver and the fastest time kept (to keep out the machine's noise).
2. Bounded time: two unrelated graphs of 20 to 100 variables drawn from 2 concepts (nearly symmetric: the hardest
   kind of pair; an unbounded exact search took 189 s at 60 variables). Whole pair (PENMAN text to figures) with the
   default work budget: the slowest pair (target: <= 2 s up to 100 variables), how many were proven optimal, and the
   matched triples against smatch's (same pairs, timed once each).
3. One solver: the derived latent metric (``LatentSetMatching`` over Instance / Attribute / Relation dataclasses) and
   AMR's Smatch on the same pairs: time ratio and equal optima.

0. Whole processes, first: ``metametric-jax score amr`` (``python -m metametric_jax``) against ``smatch.py -f PRED GOLD
   -r 5`` (smatch 1.0.4) on ``--pred`` / ``--gold`` (default: the 181 pairs of ``tests/data/amr/evaluation_*.txt``),
   best of ``--process-repeats`` interleaved runs after one untimed run each (byte code cached, as pip installs it),
   with the free CPU share before and after.

Run: ``python bench/bench_amr.py [--pairs 50] [--seed 0] [--repeats 3] [--hard-pairs 3] [--only-process]``.
"""

from __future__ import annotations

import argparse
import gc
import io
import math
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import amr as smatch_amr
import scipy.optimize  # noqa: F401  (imported before timing: the exact solver calls into it)
import scipy.sparse  # noqa: F401
import smatch

from metametric_jax import LatentSetMatching, Variable, dsl, metametric
from metametric_jax.tasks.amr import score, smatch_match, smatch_triples

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "amr"

CONCEPTS = ["want-01", "go-02", "boy", "girl", "person", "thing", "city", "name", "say-01", "and", "believe-01", "dog"]
ROLES = ["ARG0", "ARG1", "ARG2", "mod", "op1", "op2", "location", "time", "poss", "consist-of"]
ATTRS = [
    ("polarity", "-"),
    ("quant", "2"),
    ("quant", "5"),
    ("op1", '"Paris"'),
    ("op1", '"Kim"'),
    ("mode", "expressive"),
]


def random_graph(rng: random.Random, n_triples: int):
    n_nodes = max(2, round(n_triples * 0.3))
    concepts = [rng.choice(CONCEPTS) for _ in range(n_nodes)]
    edges = [(rng.randrange(i), rng.choice(ROLES), i) for i in range(1, n_nodes)]
    attrs: list[tuple[int, str, str]] = []
    while n_nodes + 1 + len(edges) + len(attrs) < n_triples:
        if n_nodes > 2 and rng.random() < 0.5:
            s, t = rng.sample(range(n_nodes), 2)
            if (s, t) not in {(a, b) for a, _, b in edges} | {(b, a) for a, _, b in edges}:
                edges.append((s, rng.choice(ROLES), t))
        else:
            a = (rng.randrange(n_nodes), *rng.choice(ATTRS))
            if a not in attrs:
                attrs.append(a)
    return concepts, edges, attrs


def perturb(rng: random.Random, graph, rate: float = 0.25):
    concepts, edges, attrs = graph
    concepts = [rng.choice(CONCEPTS) if rng.random() < rate else c for c in concepts]
    edges = [(s, rng.choice(ROLES) if rng.random() < rate else r, t) for s, r, t in edges]
    edges = [e for e in edges if rng.random() > rate / 2 or e[0] == 0]
    attrs = [a for a in attrs if rng.random() > rate]
    return concepts, edges, attrs


def to_penman(rng: random.Random, graph) -> str:
    concepts, edges, attrs = graph
    n = len(concepts)
    names = [f"{chr(97 + rng.randrange(26))}{i}" for i in rng.sample(range(n), n)]
    edges = list(edges)
    adjacent: dict[int, list[int]] = {i: [] for i in range(n)}
    for k, (s, _, t) in enumerate(edges):
        adjacent[s].append(k)
        adjacent[t].append(k)
    reach: set[int] = set()
    todo = [0]
    while todo:
        x = todo.pop()
        if x not in reach:
            reach.add(x)
            todo.extend(edges[k][2] if edges[k][0] == x else edges[k][0] for k in adjacent[x])
    for i in range(n):
        if i not in reach:
            edges.append((0, rng.choice(ROLES), i))
            adjacent[0].append(len(edges) - 1)
            adjacent[i].append(len(edges) - 1)
    seen, used = {0}, set()

    def write(x: int) -> str:
        parts = [f"({names[x]} / {concepts[x]}"]
        items = [("e", k) for k in adjacent[x]] + [("a", a) for a in attrs if a[0] == x]
        rng.shuffle(items)
        for kind, item in items:
            if kind == "a":
                parts.append(f":{item[1]} {item[2]}")
                continue
            if item in used:
                continue
            used.add(item)
            s, r, t = edges[item]
            other, role = (t, r) if s == x else (s, r[:-3] if r.endswith("-of") else r + "-of")
            if other in seen:
                parts.append(f":{role} {names[other]}")
            else:
                seen.add(other)
                parts.append(f":{role} {write(other)}")
        return " ".join(parts) + ")"

    return write(0)


def smatch_package_triples(text: str, prefix: str):
    graph = smatch_amr.AMR.parse_AMR_line(smatch_amr.AMR.get_amr_line(io.StringIO(text)))
    graph.rename_node(prefix)
    return graph.get_triples()


@metametric()
@dataclass(frozen=True)
class Instance:
    var: Variable
    concept: str


@metametric()
@dataclass(frozen=True)
class Attribute:
    var: Variable
    role: str
    value: str


@metametric()
@dataclass(frozen=True)
class Relation:
    source: Variable
    role: str
    target: Variable


@metametric(normalizer="f1")
@dataclass
class Graph:
    triples: Collection[Union[Instance, Attribute, Relation]]  # noqa: UP007


def as_graph(triples) -> Graph:
    variables = {s for r, s, _ in triples if r == "instance"}
    out: list = []
    for r, s, t in triples:
        if r == "instance":
            out.append(Instance(Variable(s), t.lower()))
        elif t in variables and r != "TOP":
            out.append(Relation(Variable(s), r.lower(), Variable(t)))
        else:
            out.append(Attribute(Variable(s), r.lower(), t.lower()))
    return Graph(out)


def unrelated_pair(rng: random.Random, n_vars: int) -> tuple[str, str]:
    saved = list(CONCEPTS)
    CONCEPTS[:] = ["a", "b"]
    try:
        n_triples = round(n_vars / 0.3)
        return to_penman(rng, random_graph(rng, n_triples)), to_penman(rng, random_graph(rng, n_triples))
    finally:
        CONCEPTS[:] = saved


def bounded(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 1)
    print(
        f"\n{'bounded':>8} {'vars':>5} {'pairs':>6} {'ours max s':>11} {'ours mean s':>12} {'optimal':>8} "
        f"{'smatch mean s':>14} {'ours>smatch':>12} {'ours<smatch':>12}"
    )
    smatch.iteration_num = 5
    for n_vars in (20, 40, 60, 80, 100):
        pairs = [unrelated_pair(rng, n_vars) for _ in range(args.hard_pairs)]
        times, theirs_times, optimal, better, worse = [], [], 0, 0, 0
        for pred, gold in pairs:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = score([pred], [gold])
            times.append(time.perf_counter() - start)
            optimal += result["pairs_optimal"]
            (i1, a1, r1), (i2, a2, r2) = smatch_package_triples(pred, "a"), smatch_package_triples(gold, "b")
            smatch.match_triple_dict.clear()
            start = time.perf_counter()
            _, theirs = smatch.get_best_match(i1, a1, r1, i2, a2, r2, "a", "b")
            theirs_times.append(time.perf_counter() - start)
            smatch.match_triple_dict.clear()
            better += result["matched"] > theirs
            worse += result["matched"] < theirs
        print(
            f"{'bounded':>8} {n_vars:>5} {len(pairs):>6} {max(times):>11.2f} {statistics.fmean(times):>12.2f} "
            f"{optimal:>8} {statistics.fmean(theirs_times):>14.2f} {better:>12} {worse:>12}"
        )
    print("ours: whole pair with the default work budget (PENMAN text to figures); smatch: its search only.")


def one_solver(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 2)
    latent = LatentSetMatching(dsl.auto(Union[Instance, Attribute, Relation]))  # noqa: UP007
    print(f"\n{'latent':>8} {'triples':>8} {'pairs':>6} {'amr ms/pair':>12} {'latent ms/pair':>15} {'equal':>6}")
    for n_triples in (10, 25, 50):
        t_amr = t_latent = 0.0
        equal = 0
        for _ in range(args.pairs // 2):
            gold = random_graph(rng, n_triples)
            p, g = smatch_triples(to_penman(rng, perturb(rng, gold))), smatch_triples(to_penman(rng, gold))
            pg, gg = as_graph(p), as_graph(g)
            start = time.perf_counter()
            mine = smatch_match(p, g)[0]
            t_amr += time.perf_counter() - start
            start = time.perf_counter()
            theirs = latent.score(pg.triples, gg.triples)
            t_latent += time.perf_counter() - start
            equal += mine == theirs
        n = args.pairs // 2
        print(f"{'latent':>8} {n_triples:>8} {n:>6} {t_amr / n * 1e3:>12.3f} {t_latent / n * 1e3:>15.3f} {equal:>6}")
    print("latent: LatentSetMatching over Instance / Attribute / Relation dataclasses, the same solver as AMR's.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="time each pair this often, keep the fastest")
    parser.add_argument("--hard-pairs", type=int, default=3, help="unrelated pairs per size in the bounded-time part")
    parser.add_argument("--pred", default=str(DATA / "evaluation_pred.txt"), help="whole-process part: predictions")
    parser.add_argument("--gold", default=str(DATA / "evaluation_gold.txt"), help="whole-process part: references")
    parser.add_argument("--process-repeats", type=int, default=5, help="whole processes: runs each, keep the fastest")
    parser.add_argument("--only-process", action="store_true", help="run only the whole-process comparison")
    args = parser.parse_args()
    whole_process(args)
    if args.only_process:
        return
    rng = random.Random(args.seed)
    random.seed(args.seed)
    print(
        f"{'triples':>8} {'pairs':>6} {'smatch ms/pair':>15} {'ours ms/pair':>13} {'ratio':>6} "
        f"{'median ratio':>13} {'max ratio':>10} {'ours>smatch':>12} {'ours<smatch':>12}"
    )
    for n_triples in (10, 25, 50):
        pairs = []
        for _ in range(args.pairs):
            gold = random_graph(rng, n_triples)
            pairs.append((to_penman(rng, perturb(rng, gold)), to_penman(rng, gold)))
        theirs_in = [(smatch_package_triples(p, "a"), smatch_package_triples(g, "b")) for p, g in pairs]
        ours_in = [(smatch_triples(p), smatch_triples(g)) for p, g in pairs]
        smatch.iteration_num = 5  # the smatch.py default (-r 4)
        # Warm-up (module imports, first-call costs) outside the timed loop.
        for ((i1, a1, r1), (i2, a2, r2)), (p, g) in list(zip(theirs_in, ours_in))[:3]:
            smatch.get_best_match(i1, a1, r1, i2, a2, r2, "a", "b")
            smatch.match_triple_dict.clear()
            smatch_match(p, g)
        t_theirs, t_ours, better, worse = [], [], 0, 0
        gc.collect()
        gc.disable()  # no collector pauses inside either timing
        for ((i1, a1, r1), (i2, a2, r2)), (p, g) in zip(theirs_in, ours_in):
            best_theirs = best_ours = float("inf")
            for _ in range(args.repeats):
                smatch.match_triple_dict.clear()  # smatch caches mapping scores across calls
                start = time.perf_counter()
                _, theirs = smatch.get_best_match(i1, a1, r1, i2, a2, r2, "a", "b")
                best_theirs = min(best_theirs, time.perf_counter() - start)
                start = time.perf_counter()
                mine = smatch_match(p, g)[0]
                best_ours = min(best_ours, time.perf_counter() - start)
            smatch.match_triple_dict.clear()
            t_theirs.append(best_theirs)
            t_ours.append(best_ours)
            better += mine > theirs
            worse += mine < theirs
        gc.enable()
        ratios = [o / t for o, t in zip(t_ours, t_theirs)]
        mean_theirs, mean_ours = statistics.fmean(t_theirs), statistics.fmean(t_ours)
        print(
            f"{n_triples:>8} {len(pairs):>6} {mean_theirs * 1e3:>15.3f} {mean_ours * 1e3:>13.3f} "
            f"{mean_ours / mean_theirs:>6.2f} {statistics.median(ratios):>13.2f} {max(ratios):>10.2f} "
            f"{better:>12} {worse:>12}"
        )
    print(
        "ratio = ours / smatch (mean time per pair); ours>smatch counts pairs where the exact optimum beat the "
        "hill climbing."
    )
    bounded(args)
    one_solver(args)


def whole_process(args: argparse.Namespace) -> None:
    """``metametric-jax score amr`` against ``smatch.py -r 5`` (smatch 1.0.4), whole processes, best of N."""
    import subprocess
    import sys

    from bench_parallel import cpu_share

    # Byte code cached as an installation has it (pip compiles on install); kept out of the tree, in a prefix.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="bench_amr_pycache_")
    share = cpu_share()
    ours = [sys.executable, "-m", "metametric_jax", "score", "amr", "--pred", args.pred, "--gold", args.gold]
    theirs = [sys.executable, shutil.which("smatch.py") or "smatch.py", "-f", args.pred, args.gold, "-r", "5"]
    best = {"ours": math.inf, "smatch": math.inf}
    cpu = dict(best)
    out = {}
    for k in range(args.process_repeats + 1):  # the first run of each writes its byte code, untimed
        for name, argv in (("smatch", theirs), ("ours", ours)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if k:
                best[name] = min(best[name], wall)
                used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                cpu[name] = min(cpu[name], used)
            out[name] = done.stdout
    after = cpu_share()
    pairs = sum(1 for block in Path(args.gold).read_text(encoding="utf-8").split("\n\n") if "(" in block)
    f1 = next(line for line in out["smatch"].splitlines() if line.startswith("F-score"))
    print(
        f"whole process, {pairs} pairs ({args.pred} vs {args.gold}), best of {args.process_repeats}: "
        f"smatch.py -r 5 {best['smatch']:.3f} s ({f1}), metametric-jax score amr {best['ours']:.3f} s: "
        f"ours / smatch {best['ours'] / best['smatch']:.2f}x; free CPU share {share:.2f} -> {after:.2f} of 2 cores"
    )
    print(
        f"whole process, cpu time: smatch.py {cpu['smatch']:.3f} s, metametric-jax score amr {cpu['ours']:.3f} s: "
        f"ours / smatch {cpu['ours'] / cpu['smatch']:.2f}x"
    )


if __name__ == "__main__":
    main()
