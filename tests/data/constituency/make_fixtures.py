"""Build the constituency fixtures: GUM gold trees and deterministically perturbed predictions.

Usage (see README.md in this folder)::

    python tests/data/constituency/make_fixtures.py GUM_CONST_DIR tests/data/constituency

``GUM_CONST_DIR`` holds the ``const/*.ptb`` files of the GUM corpus. Writes ``gold.mrg`` and ``pred.mrg`` with one tree
per line (the layout evalb reads). Standard library only; the same seed gives the same files.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

DOCUMENTS = (
    "GUM_academic_art",
    "GUM_academic_census",
    "GUM_academic_economics",
    "GUM_academic_huh",
    "GUM_court_loan",
    "GUM_court_insanity",
)
PHRASES = ("NP", "VP", "PP", "S", "SBAR", "ADJP", "ADVP", "PRT", "WHNP", "QP")
PUNCT = {",", ":", "``", "''", "."}


def parse(text: str) -> list[list]:
    """Trees of a bracketed text as nested lists ``[label, child, ...]`` (a word is a string)."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    out: list[list] = []
    stack: list[list] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            label = ""
            if i + 1 < len(tokens) and tokens[i + 1] not in "()":
                label = tokens[i + 1]
                i += 1
            stack.append([label])
        elif tok == ")":
            node = stack.pop()
            (stack[-1] if stack else out).append(node)
        else:
            stack[-1].append(tok)
        i += 1
    return out


def show(node: list | str) -> str:
    """One-line bracketed text of a tree."""
    if isinstance(node, str):
        return node
    return "(" + node[0] + " " + " ".join(show(c) for c in node[1:]) + ")"


def preterminal(node: list | str) -> bool:
    return isinstance(node, list) and len(node) == 2 and isinstance(node[1], str)


def phrases(node: list, out: list | None = None, parent: list | None = None) -> list[tuple[list, list | None]]:
    """Every phrase node with its parent, in pre-order."""
    out = [] if out is None else out
    out.append((node, parent))
    for c in node[1:]:
        if isinstance(c, list) and not preterminal(c):
            phrases(c, out, node)
    return out


def leaves(node: list, out: list | None = None) -> list[list]:
    out = [] if out is None else out
    for c in node[1:]:
        if preterminal(c):
            out.append(c)
        elif isinstance(c, list):
            leaves(c, out)
    return out


def copy(node: list | str) -> list | str:
    return node if isinstance(node, str) else [node[0]] + [copy(c) for c in node[1:]]


def perturb(tree: list, rng: random.Random, kind: str) -> list | None:
    """A predicted tree from a gold tree; None for an empty line."""
    t = copy(tree)
    inner = [(n, p) for n, p in phrases(t) if p is not None]
    if kind == "relabel" and inner:
        node, _ = rng.choice(inner)
        node[0] = rng.choice([x for x in PHRASES if x != node[0].split("-")[0]])
    elif kind == "function_tags" and inner:
        for node, _ in inner[:3]:
            node[0] = node[0] + rng.choice(["-SBJ", "-TMP-1", "=2", "-PRD"])
    elif kind == "advp_prt" and inner:
        node, _ = rng.choice(inner)
        node[0] = "PRT" if rng.random() < 0.5 else "ADVP"
    elif kind == "flatten" and inner:
        node, parent = rng.choice(inner)
        k = parent.index(node)
        parent[k : k + 1] = node[1:]
    elif kind == "group":
        candidates = [n for n, _ in phrases(t) if len(n) >= 4]
        if candidates:
            node = rng.choice(candidates)
            k = rng.randrange(1, len(node) - 2)
            node[k : k + 2] = [[rng.choice(PHRASES), node[k], node[k + 1]]]
    elif kind == "shift":  # move a phrase's last child up to its parent: spans change, brackets may cross
        candidates = [(n, p) for n, p in inner if len(n) >= 3]
        if candidates:
            node, parent = rng.choice(candidates)
            last = node.pop()
            parent.insert(parent.index(node) + 1, last)
    elif kind == "cross":  # (A .. x) (B y ..) -> (A ..) (X x y) (B ..): X crosses A and B
        pairs = [
            (p, i)
            for p, _ in phrases(t)
            for i in range(1, len(p) - 1)
            if not preterminal(p[i])
            and not preterminal(p[i + 1])
            and isinstance(p[i], list)
            and isinstance(p[i + 1], list)
            and len(p[i]) >= 3
            and len(p[i + 1]) >= 3
        ]
        if pairs:
            parent, i = rng.choice(pairs)
            a, b = parent[i], parent[i + 1]
            parent.insert(i + 1, [rng.choice(PHRASES), a.pop(), b.pop(1)])
    elif kind == "unary":
        node, parent = rng.choice(inner) if inner else (t, None)
        if parent is not None:
            parent[parent.index(node)] = [node[0].split("-")[0], node]
    elif kind == "retag":
        leaf = rng.choice(leaves(t))
        if leaf[0] not in PUNCT:
            leaf[0] = rng.choice(["NN", "JJ", "VBD", "RB", "IN"])
    elif kind == "punct_tag":  # a punctuation tag on a word, or a word tag on punctuation: evalb's length mismatch
        words = leaves(t)
        punct = [leaf for leaf in words if leaf[0] in PUNCT]
        if punct and rng.random() < 0.5:
            punct[0][0] = "NN"
        else:
            rng.choice(words)[0] = ","
    elif kind == "drop_word":
        leaf = rng.choice(leaves(t))
        for node, _ in phrases(t):
            if leaf in node[1:]:
                if len(node) > 2:
                    node.remove(leaf)
                break
    elif kind == "change_word":
        leaf = rng.choice(leaves(t))
        leaf[1] = leaf[1] + "x"
    elif kind == "root_label":
        t[0] = {"ROOT": "TOP", "TOP": "ROOT", "": "TOP"}.get(t[0], "")
    elif kind == "empty":
        return None
    elif kind == "only_punct":
        return ["ROOT", [".", "."]]
    return t


KINDS = [
    "same",
    "relabel",
    "function_tags",
    "advp_prt",
    "flatten",
    "group",
    "shift",
    "cross",
    "unary",
    "retag",
    "relabel",
    "flatten",
    "group",
    "shift",
    "punct_tag",
    "drop_word",
    "change_word",
    "root_label",
    "empty",
    "only_punct",
]


QUOTE_SWAP = {"``": "NN", "''": "JJ", "POS": "''", "NN": "``", "JJ": "''", "SYM": ":", ":": "SYM"}


def swap_quote_tags(tree: list, rng: random.Random) -> None:
    """Change the tag of some quote and slash words between a deleted (punctuation) and a kept tag."""
    for leaf in leaves(tree):
        if leaf[1] in ('"', "'", "/") and leaf[0] in QUOTE_SWAP and rng.random() < 0.5:
            leaf[0] = QUOTE_SWAP[leaf[0]]


def add_trace(tree: list, rng: random.Random) -> None:
    """Insert an empty subject ``(NP-SBJ (-NONE- *))`` and a trace inside some phrase."""
    inner = [n for n, p in phrases(tree) if p is not None] or [tree]
    node = rng.choice(inner)
    node.insert(1, ["NP-SBJ", ["-NONE-", "*"]])
    node = rng.choice(inner)
    node.append(["-NONE-", "*T*-1"])


def main(src: str, dst: str) -> None:
    rng = random.Random(20261123)
    quotes = random.Random(5)
    gold: list[str] = []
    pred: list[str] = []
    k = 0
    for doc in DOCUMENTS:
        for tree in parse(Path(src, doc + ".ptb").read_text(encoding="utf-8")):
            tree = tree[1] if tree[0] == "" and len(tree) == 2 else tree
            root = k % 5  # ROOT as in GUM, TOP, an unlabelled root, ROOT, no root node
            if root == 1:
                tree[0] = "TOP"
            elif root == 2:
                tree[0] = ""
            elif root == 4 and len(tree) == 2 and isinstance(tree[1], list):
                tree = tree[1]
            if k % 7 == 3:
                add_trace(tree, rng)
            kind = (
                KINDS[k % len(KINDS)] if k < 3 * len(KINDS) else rng.choice(KINDS[:14] + ["cross"] * 3 + ["same"] * 8)
            )
            p = perturb(tree, rng, kind)
            if kind == "cross" and k % 2 == 0:  # several crossing brackets in one sentence
                for _ in range(3):
                    p = perturb(p, rng, "cross")
            if kind not in ("same",) and k % 3 == 0:  # a second change now and then
                p = perturb(p, rng, rng.choice(KINDS[1:9])) if p is not None else None
            if p is not None:
                swap_quote_tags(p, quotes)
            gold.append(show(tree))
            pred.append("" if p is None else show(p))
            k += 1
    for name, lines in (("gold.mrg", gold), ("pred.mrg", pred)):
        Path(dst, name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{k} trees; longest line {max(map(len, gold + pred))} characters", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
