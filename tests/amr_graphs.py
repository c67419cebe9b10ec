"""Random AMR-like graph pairs for the AMR tests (PENMAN text with shuffled variable names and branch order)."""

from __future__ import annotations

import random

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


def random_graph(rng, n_triples):
    n_nodes = max(2, round(n_triples * 0.3))
    concepts = [rng.choice(CONCEPTS) for _ in range(n_nodes)]
    edges = [(rng.randrange(i), rng.choice(ROLES), i) for i in range(1, n_nodes)]
    attrs = []
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


def perturb(rng, graph, rate=0.25):
    concepts, edges, attrs = graph
    concepts = [rng.choice(CONCEPTS) if rng.random() < rate else c for c in concepts]
    edges = [(s, rng.choice(ROLES) if rng.random() < rate else r, t) for s, r, t in edges]
    edges = [e for e in edges if rng.random() > rate / 2 or e[0] == 0]
    attrs = [a for a in attrs if rng.random() > rate]
    return concepts, edges, attrs


def to_penman(rng, graph) -> str:
    """PENMAN with shuffled variable names and branch order; edges are written forward or inverted (-of)."""
    concepts, edges, attrs = graph
    n = len(concepts)
    names = [f"{chr(97 + rng.randrange(26))}{i}" for i in rng.sample(range(n), n)]
    edges = list(edges)
    adjacent = {i: [] for i in range(n)}
    for k, (s, _, t) in enumerate(edges):
        adjacent[s].append(k)
        adjacent[t].append(k)
    reach, todo = set(), [0]
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

    def write(x):
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


def random_pairs(seed, n_triples, count):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        gold = random_graph(rng, n_triples)
        out.append((to_penman(rng, perturb(rng, gold)), to_penman(rng, gold)))
    return out


def unrelated_pair(seed: int, n_vars: int, concepts: tuple[str, ...] = ("a", "b")) -> tuple[str, str]:
    """Two unrelated graphs of ``n_vars`` variables drawn from few concepts: nearly symmetric, hard to match."""
    rng = random.Random(seed)
    n_triples = round(n_vars / 0.3)
    saved = list(CONCEPTS)
    CONCEPTS[:] = concepts
    try:
        first, second = random_graph(rng, n_triples), random_graph(rng, n_triples)
        return to_penman(rng, first), to_penman(rng, second)
    finally:
        CONCEPTS[:] = saved
