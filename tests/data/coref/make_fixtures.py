"""Build the coreference fixtures of this folder and run the reference scorer on them (see README.md).

Run: ``python tests/data/coref/make_fixtures.py --litbank LITBANK/coref/conll --scorer SCORER_CHECKOUT``. Input
files are written only with ``--litbank``; scorer outputs are (re)written with ``--scorer``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCORER_TESTS = HERE.parent / "conll2012-scorer-tests"
METRICS = ("muc", "bcub", "ceafm", "ceafe", "blanc")
BOOKS = ("1023_bleak_house_brat", "105_persuasion_brat", "11231_bartleby_the_scrivener_a_story_of_wallstreet_brat")
Span = tuple[int, int]


def column(entities: list[list[Span]], n_tokens: int) -> list[str]:
    """Coreference columns for entities numbered 0, 1, ... (opens of longer spans first, then one-token mentions)."""
    parts: list[list[tuple[int, int, str]]] = [[] for _ in range(n_tokens)]
    for ident, spans in enumerate(entities):
        for start, end in spans:
            if start == end:
                parts[start].append((1, 0, f"({ident})"))
            else:
                parts[start].append((0, -end, f"({ident}"))
                parts[end].append((2, -start, f"{ident})"))
    return ["|".join(p for *_, p in sorted(cell)) or "-" for cell in parts]


def read_entities(lines: list[str]) -> tuple[list[list[Span]], list[list[str]]]:
    """The entities (spans, by entity number) and token columns of one LitBank document's token lines."""
    rows = [line.rstrip("\n").split("\t") for line in lines]
    tokens = [r for r in rows if len(r) > 1]
    entities: dict[str, list[Span]] = {}
    open_: dict[str, list[int]] = {}
    for t, row in enumerate(tokens):
        for part in (row[12] if len(row) > 12 else "").split("|"):
            if not part or part == "_":
                continue
            ident = part.strip("()")
            if part.startswith("(") and part.endswith(")"):
                entities.setdefault(ident, []).append((t, t))
            elif part.startswith("("):
                open_.setdefault(ident, []).append(t)
            else:
                entities.setdefault(ident, []).append((open_[ident].pop(), t))
    assert not any(open_.values())
    return list(entities.values()), [r[:12] for r in tokens]


def excerpt(path: Path, min_tokens: int) -> tuple[str, list[str]]:
    """The begin line and the first sentences of a LitBank document, cut where no mention is open."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    body, depth, tokens = [], 0, 0
    for line in lines[1:]:
        if line.startswith("#end"):
            break
        body.append(line)
        cols = line.rstrip("\n").split("\t")
        if len(cols) > 1:
            tokens += 1
            coref = cols[12] if len(cols) > 12 else ""
            depth += coref.count("(") - coref.count(")")
        elif tokens >= min_tokens and depth == 0:
            break
    return lines[0], body


def perturb(rng: random.Random, key: list[list[Span]], n_tokens: int) -> list[list[Span]]:
    """A system-like response: mentions dropped, moved and invented, entities split and merged, a few repeats."""
    response = [[m for m in e if rng.random() > 0.12] for e in key]
    known = {m for e in key for m in e}
    for e in response:
        for m in list(e):
            if rng.random() < 0.12 and len(e) > 1:
                e.remove(m)
                rng.choice(response).append(m)
    for _ in range(max(1, len(known) // 8)):
        start = rng.randrange(n_tokens - 2)
        span = (start, start + rng.choice((0, 0, 1, 2)))
        if span not in known:
            known.add(span)
            rng.choice(response + [[]]).append(span)
    big = max(range(len(response)), key=lambda i: len(response[i]))
    half = len(response[big]) // 2
    response.append(response[big][half:])
    response[big] = response[big][:half]
    i, j = rng.sample(range(len(response)), 2)
    response[i] += response[j]
    response[j] = []
    response = [e for e in response if e]
    e = rng.choice(response)
    e.append(e[0])  # a mention given twice in its entity
    invented = [m for e in response for m in e if m not in {k for f in key for k in f}]
    if invented:
        rng.choice(response).append(rng.choice(invented))  # an invented mention given twice
    return [sorted(e) for e in response]


def well_formed(entities: list[list[Span]]) -> list[list[Span]]:
    """Drop mentions that cross another mention of the same entity (a closing would pair with the wrong opening)."""
    out = []
    for spans in entities:
        kept: list[Span] = []
        for s in sorted(spans):
            if not any(a < s[0] <= b < s[1] or s[0] < a <= s[1] < b for a, b in kept):
                kept.append(s)
        out.append(kept)
    return [e for e in out if e]


def write(path: Path, docs: list[tuple[str, list[list[str]], list[list[Span]]]]) -> None:
    out = []
    for begin, rows, entities in docs:
        out.append(begin)
        for row, col in zip(rows, column(entities, len(rows))):
            out.append("\t".join(row + [col]) + "\n")
        out.append("#end document\n")
    path.write_text("".join(out), encoding="utf-8")


def make_litbank(checkout: Path) -> None:
    rng = random.Random(2014)
    keys, responses = [], []
    for book in BOOKS:
        begin, body = excerpt(checkout / f"{book}.conll", 250)
        entities, rows = read_entities(body)
        keys.append((begin, rows, entities))
        responses.append((begin, rows, well_formed(perturb(rng, entities, len(rows)))))
    write(HERE / "litbank.key", keys)
    write(HERE / "litbank.response", responses)


def run_scorer(scorer: Path, key: Path, response: Path, per_document: bool = False) -> str:
    """scorer.pl's output for every metric, one run each (a run of ``all`` counts repeated mentions five times)."""
    out = []
    for metric in METRICS:
        args = ["perl", str(scorer / "scorer.pl"), metric, str(key), str(response)] + ([] if per_document else ["none"])
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        text = done.stdout.replace(str(scorer.resolve()), "SCORER")
        out.append(f"METRIC {metric}:\n{text}{done.stderr}")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--litbank", type=Path)
    parser.add_argument("--scorer", type=Path)
    args = parser.parse_args()
    if args.litbank:
        make_litbank(args.litbank)
    if args.scorer:
        target = HERE / "scorer"
        target.mkdir(exist_ok=True)
        for response in sorted(SCORER_TESTS.glob("TC-*.response")):
            key = SCORER_TESTS / (response.name.rsplit("-", 1)[0] + ".key")
            (target / f"{response.stem}.txt").write_text(run_scorer(args.scorer, key, response))
        for name in ("litbank", "repeats", "bare_numbers", "part_spelling", "part_spelling_same"):
            key, response = HERE / f"{name.removesuffix('_same')}.key", HERE / f"{name}.response"
            (target / f"{name}.txt").write_text(run_scorer(args.scorer, key, response))
        for name in ("litbank", "repeats"):
            key, response = HERE / f"{name}.key", HERE / f"{name}.response"
            (target / f"{name}.per_document.txt").write_text(run_scorer(args.scorer, key, response, True))
        refused = run_scorer(args.scorer, HERE / "repeats.key", HERE / "too_many_repeats.response")
        (target / "too_many_repeats.txt").write_text(refused)


if __name__ == "__main__":
    main()
