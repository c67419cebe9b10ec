"""Benchmark: the coreference suite (all metrics) against scorch's MUC + B³ + CEAF-e + CEAF-m + BLANC, and the command
line against the reference scorer.pl v8.01 on the same CoNLL-2012 files.

300 synthetic documents of CoNLL-2012 size (about 200 mentions in 50 entities each); each response is the key with
mentions dropped, spurious mentions added, mentions moved between entities and a few entities merged. Both sides
score the same documents, prepared before timing; the best of ``--repeat`` runs is reported.

With ``--scorer DIR`` (a checkout of github.com/conll/reference-coreference-scorers), the first ``--file-docs``
documents are also written as CoNLL-2012 key and response files and scored by whole processes:
``perl scorer.pl all KEY RESPONSE none`` and ``metametric-jax score coref KEY RESPONSE`` (start-up included).

With ``--against REV`` (a git revision), that revision's ``coref_counts.document_counts`` of every document is timed
beside this tree's ``coref_counts.batch_counts``, interleaved, after checking the statistics equal bit for bit.

Run: ``python bench/bench_coref.py [--docs 300] [--mentions 200] [--entities 50] [--repeat 3] [--scorer DIR]
[--against REV]``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from metametric_jax.tasks.coref import CorefDocument, CorefMetric, state_scores

Cluster = list[tuple[int, int]]


def synthetic_key(rng: random.Random, n_mentions: int, n_entities: int) -> list[Cluster]:
    """A key partition: ``n_mentions`` distinct spans over about ``6 n_mentions`` tokens in ``n_entities`` entities."""
    n_tokens = 6 * n_mentions
    spans: set[tuple[int, int]] = set()
    while len(spans) < n_mentions:
        start = rng.randrange(n_tokens)
        spans.add((start, min(n_tokens - 1, start + rng.choice((0, 0, 0, 1, 1, 2, 3, 5)))))
    ordered = sorted(spans)
    clusters: list[Cluster] = [[s] for s in ordered[:n_entities]]
    for s in ordered[n_entities:]:
        # a skewed size distribution: half of the mentions go to the first entities, like CoNLL-2012's chains
        skewed = min(int(rng.paretovariate(1.2)) - 1, n_entities - 1)
        clusters[skewed if rng.random() < 0.5 else rng.randrange(n_entities)].append(s)
    return clusters


def perturb(rng: random.Random, key: list[Cluster]) -> list[Cluster]:
    """A response: drop ~10% of mentions, add ~10% spurious ones, move ~15%, merge two entity pairs."""
    clusters = [[m for m in c if rng.random() > 0.10] for c in key]
    max_token = max(e for c in key for _, e in c) + 1
    known = {m for c in key for m in c}
    for _ in range(sum(map(len, key)) // 10):
        start = rng.randrange(max_token)
        span = (start, start + rng.choice((0, 1, 2)))
        if span not in known:
            known.add(span)
            rng.choice(clusters).append(span)
    for c in clusters:
        for m in list(c):
            if rng.random() < 0.15 and len(c) > 1:
                c.remove(m)
                rng.choice(clusters).append(m)
    for _ in range(2):
        i, j = rng.sample(range(len(clusters)), 2)
        clusters[i].extend(clusters[j])
        clusters[j] = []
    return [c for c in clusters if c]


def write_conll(path: Path, docs: list[list[Cluster]], sizes: list[int]) -> None:
    """Documents as a CoNLL-2012 file: ``sizes[d]`` token lines for document ``d``, the coreference column last."""
    lines = []
    for d, (clusters, n_tokens) in enumerate(zip(docs, sizes)):
        cells: list[list[str]] = [[] for _ in range(n_tokens)]
        for ident, cluster in enumerate(clusters):
            for start, end in sorted(set(cluster), key=lambda m: (m[0], -m[1])):
                if start == end:
                    cells[start].append(f"({ident})")
                else:
                    cells[start].append(f"({ident}")
                    cells[end].insert(0, f"{ident})")
        lines.append(f"#begin document (doc{d}); part 000")
        lines += [f"doc{d}\t0\t{t}\tw{t}\t{'|'.join(c) or '-'}" for t, c in enumerate(cells)]
        lines.append("#end document")
    path.write_text("\n".join(lines) + "\n")


def time_process(argv: list[str], repeat: int) -> float:
    def run() -> None:
        subprocess.run(argv, check=True, capture_output=True)

    return time_best(run, repeat)


def bench_files(scorer: Path, keys: list[list[Cluster]], responses: list[list[Cluster]], repeat: int) -> None:
    """Whole processes on the same files: scorer.pl (all five metrics) against ``metametric-jax score coref``."""
    from metametric_jax.tasks.coref import score_files

    with tempfile.TemporaryDirectory() as tmp:
        key, response = Path(tmp) / "key.conll", Path(tmp) / "response.conll"
        keys = [[sorted(set(c)) for c in k] for k in keys]
        responses = [[sorted(set(c)) for c in r] for r in responses]
        sizes = [max(e for c in k + r for _, e in c) + 1 for k, r in zip(keys, responses)]
        write_conll(key, keys, sizes)
        write_conll(response, responses, sizes)
        perl = ["perl", str(scorer / "scorer.pl"), "all", str(key), str(response), "none"]
        ours = [sys.executable, "-m", "metametric_jax", "score", "coref", str(key), str(response), "--format", "json"]
        t_perl = time_process(perl, repeat)
        t_cli = time_process(ours, repeat)
        t_api = time_best(lambda: score_files(predictions=response, references=key), repeat)
        out = subprocess.run(perl, check=True, capture_output=True, text=True).stdout
        muc = score_files(predictions=response, references=key).scores["muc"]
    printed = f"({muc['recall_num']:.15g} / {muc['recall_den']:.15g})"
    print(f"files: {len(keys)} documents; scorer.pl prints MUC recall {printed}: {printed in out}")
    print(f"{'perl scorer.pl all (whole process)':<58}{t_perl:>10.3f}")
    print(f"{'metametric-jax score coref (whole process)':<58}{t_cli:>10.3f}")
    print(f"{'metametric_jax.tasks.coref.score_files (in process)':<58}{t_api:>10.3f}")
    print(f"files speed-up vs scorer.pl (whole process): {t_perl / t_cli:.1f}x")


def time_best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--mentions", type=int, default=200)
    parser.add_argument("--entities", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scorer", type=Path, help="a checkout of conll/reference-coreference-scorers (scorer.pl)")
    parser.add_argument("--file-docs", type=int, default=20, help="documents in the files scored by scorer.pl")
    parser.add_argument(
        "--against",
        metavar="REV",
        help="a git revision: its coref_counts.document_counts timed beside batch_counts (rows checked bit for bit)",
    )
    args = parser.parse_args()

    from scorch import scores as scorch_scores

    rng = random.Random(args.seed)
    keys = [synthetic_key(rng, args.mentions, args.entities) for _ in range(args.docs)]
    responses = [perturb(rng, k) for k in keys]
    key_docs = [CorefDocument.from_clusters(k) for k in keys]
    resp_docs = [CorefDocument.from_clusters(r) for r in responses]
    key_sets = [[set(c) for c in k] for k in keys]
    resp_sets = [[set(c) for c in r] for r in responses]

    def ours() -> dict:
        return state_scores(CorefMetric.from_model_output(resp_docs, key_docs))

    def scorch_all() -> list:
        out = []
        for k, r in zip(key_sets, resp_sets):
            out.append(
                (
                    scorch_scores.muc(k, r),
                    scorch_scores.b_cubed(k, r),
                    scorch_scores.ceaf_e(k, r),
                    scorch_scores.ceaf_m(k, r),
                    scorch_scores.blanc(k, r),
                )
            )
        return out

    ours()  # warm up (JAX compilation of the merge, device transfer)
    t_ours = time_best(ours, args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_scorch = time_best(scorch_all, max(1, args.repeat))

    # Agreement check on the first document (per-document F1, both sides).
    first = state_scores(CorefMetric.from_model_output(resp_docs[:1], key_docs[:1]))
    k0, r0 = key_sets[0], resp_sets[0]
    agree = {
        "muc": abs(first["muc"]["f1"] - scorch_scores.muc(k0, r0)[2]),
        "bcub": abs(first["bcub"]["f1"] - scorch_scores.b_cubed(k0, r0)[2]),
        "ceafe": abs(first["ceafe"]["f1"] - scorch_scores.ceaf_e(k0, r0)[2]),
        "ceafm": abs(first["ceafm"]["f1"] - scorch_scores.ceaf_m(k0, r0)[2]),
        "blanc": abs(first["blanc"]["f1"] - scorch_scores.blanc(k0, r0)[2]),
    }

    n_m = np.mean([sum(map(len, k)) for k in keys])
    n_e = np.mean([len(k) for k in keys])
    print(
        f"{args.docs} documents, {n_m:.0f} key mentions and {n_e:.0f} key entities on average (best of {args.repeat})"
    )
    print(f"{'implementation':<58}{'seconds':>10}{'docs/s':>10}")
    print(
        f"{'metametric_jax CorefMetric (MUC B3 CEAFm CEAFe BLANC LEA)':<58}{t_ours:>10.3f}{args.docs / t_ours:>10.0f}"
    )
    print(f"{'scorch (MUC B3 CEAFe CEAFm BLANC)':<58}{t_scorch:>10.3f}{args.docs / t_scorch:>10.0f}")
    print(f"speed-up: {t_scorch / t_ours:.1f}x (target >= 5x, issue 13; >= 10x, issue 20)")
    print("max |F1 difference| on document 0: " + ", ".join(f"{k} {v:.1e}" for k, v in agree.items()))
    if args.against:
        bench_against(args.against, key_docs, resp_docs, args.repeat)
    if args.scorer is not None:
        bench_files(args.scorer, keys[: args.file_docs], responses[: args.file_docs], args.repeat)


def bench_against(rev: str, key_docs: list, resp_docs: list, repeat: int) -> None:
    """The statistics of every document: this tree's ``batch_counts`` against ``document_counts`` of revision
    ``rev`` (loaded from git as a separate module), interleaved, the rows checked equal bit for bit first."""
    import importlib.util
    import os

    from metametric_jax.tasks import coref_counts

    source = subprocess.run(
        ["git", "show", f"{rev}:metametric_jax/tasks/coref_counts.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "coref_counts_then.py")
        Path(path).write_text(source)
        spec = importlib.util.spec_from_file_location("coref_counts_then", path)
        assert spec is not None and spec.loader is not None
        then = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(then)

    def before() -> np.ndarray:
        return coref_counts.count_rows([then.document_counts(r, k) for r, k in zip(resp_docs, key_docs)])

    def now() -> np.ndarray:
        return coref_counts.batch_counts(resp_docs, key_docs)

    same = bool((before().view(np.int64) == now().view(np.int64)).all())
    t_before, t_now = float("inf"), float("inf")
    for _ in range(repeat):  # interleaved, so that both see the same load
        t_before = min(t_before, time_best(before, 1))
        t_now = min(t_now, time_best(now, 1))
    print(f"statistics of {len(key_docs)} documents, bit for bit equal to revision {rev}: {same}")
    print(f"{f'document_counts at {rev}':<58}{t_before:>10.3f}")
    print(f"{'batch_counts (this tree)':<58}{t_now:>10.3f}")
    print(f"statistics speed-up vs {rev}: {t_before / t_now:.2f}x")


if __name__ == "__main__":
    main()
