"""Benchmark: bootstrap confidence intervals (``metametric_jax.significance``) against the plain metric and against
resampling and re-scoring, side by side in one run.

Two workloads, each prepared before timing:

* **Span F1**: a ``@metametric(normalizer="f1")`` dataclass ``Doc(spans: frozenset[Span])`` with
  ``Span(start, end, label)``; ``--docs`` documents (default 20,000) of 1-6 typed spans, predictions = references
  with spans dropped, shifted and added. Three contenders:

  - the plain metric: ``Doc.metric.from_model_output(preds, refs).compute()``;
  - the bootstrap: ``significance.bootstrap(Doc.metric, B).from_model_output(preds, refs, example_ids=ids)``
    ``.compute()`` (estimate, percentile interval and standard error of every figure; ``B = --replicates``);
  - resampling and re-scoring, as torchmetrics' ``BootStrapper`` does: draw ``n`` documents with replacement and
    score the resample with the plain metric, ``B`` times. Only ``--resamples`` resamples (default 20) are timed;
    their time is extrapolated linearly to ``B`` (each resample costs the same: one plain scoring of ``n``
    documents), and the output says so.

  Targets (issue 13): bootstrap <= 3x the plain metric; >= 100x faster than resampling and re-scoring.

* **Coreference suite**: ``metametric_jax.tasks.coref.CorefMetric`` (MUC, B³, CEAF-m, CEAF-e, BLANC, LEA, mention
  identification, CoNLL) on ``--coref-docs`` synthetic CoNLL-2012-sized documents (default 300; about 200 mentions in
  50 entities each, the generator of ``bench_coref.py``, seeded), bootstrap vs the plain suite. Target: <= 1.5x.

Before any timing the bootstrap's estimate is checked equal to the plain metric's figures. Each contender runs once
untimed (JAX compiles ``compute`` once per shape, as an evaluation loop would), then the contenders are timed in
interleaved rounds and the best of ``--repeat`` rounds is kept. The machine is shared: read the ratios, not the
seconds. A breakdown of the bootstrap's time (matching, replicate weights, weighted sums, the rest) is printed for
each workload, and ``--profile`` adds a ``cProfile`` listing of one bootstrap call.

Run: ``python bench/bench_significance.py [--docs 20000] [--coref-docs 300] [--replicates 1000] [--resamples 20]
[--repeat 3] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax import metametric
from metametric_jax import significance as sig
from metametric_jax.suite import Suite

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_coref import perturb, synthetic_key  # noqa: E402  (the coreference generator of bench_coref.py)

LABELS = ("PER", "LOC", "ORG", "MISC")


@dataclass(frozen=True)
class Span:
    """A half-open token span ``[start, end)`` with a type label."""

    start: int
    end: int
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    """A document's typed spans (exact-match span F1)."""

    spans: frozenset[Span]


def span_data(n: int, seed: int) -> tuple[list[Doc], list[Doc]]:
    """``n`` (prediction, reference) documents: 1-6 spans each, kept with p 0.7 (shifted with p 0.2), 0-2 added."""
    rng = random.Random(seed)
    preds, refs = [], []
    for _ in range(n):
        ref: set[Span] = set()
        for _ in range(rng.randint(1, 6)):
            s = rng.randrange(0, 200)
            ref.add(Span(s, s + rng.randint(1, 4), rng.choice(LABELS)))
        pred: set[Span] = set()
        for x in sorted(ref, key=lambda x: (x.start, x.end, x.label)):  # set order varies with the hash seed
            if rng.random() < 0.7:
                shift = 1 if rng.random() < 0.2 and x.end - x.start > 1 else 0
                pred.add(Span(x.start + shift, x.end, x.label))
        for _ in range(rng.randint(0, 2)):
            s = rng.randrange(0, 200)
            pred.add(Span(s, s + rng.randint(1, 4), rng.choice(LABELS)))
        preds.append(Doc(frozenset(pred)))
        refs.append(Doc(frozenset(ref)))
    return preds, refs


def coref_data(n: int, seed: int) -> tuple[list[Any], list[Any]]:
    """``n`` synthetic (response, key) CoNLL-2012-sized documents (200 mentions, 50 entities), as in bench_coref."""
    from metametric_jax.tasks.coref import CorefDocument

    rng = random.Random(seed)
    keys = [synthetic_key(rng, 200, 50) for _ in range(n)]
    responses = [perturb(rng, k) for k in keys]
    return [CorefDocument.from_clusters(r) for r in responses], [CorefDocument.from_clusters(k) for k in keys]


def ready(x: Any) -> Any:
    """Block until every JAX array in ``x`` is computed."""
    return jax.block_until_ready(x)


def interleaved_best(contenders: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best wall time of each contender over ``repeat`` interleaved rounds (after one untimed warm-up each)."""
    for fn in contenders.values():
        fn()
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeat):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def example_rows(metric: Any, preds: list[Any], refs: list[Any]) -> Any:
    """The per-example rows that a bootstrap state sums (a dict by member for a suite), through the public API."""
    if isinstance(metric, type) and issubclass(metric, Suite):
        stats = metric.member_stats(preds, refs)
        return {k: m.example_rows(stats[k]) for k, m in metric.metric_config.members}
    return metric.example_rows(metric.batch_stats(preds, refs))


def breakdown(boot_cls: Any, preds: list[Any], refs: list[Any], total: float, repeat: int) -> str:
    """Where the bootstrap's time goes, each stage timed alone (best of ``repeat``), as shares of their sum.

    Stages: matching (the metric's per-example rows), the replicate weights (``poisson_weights``), the weighted sums
    (``weights @ rows``), the state (``_from_sums``: transfer to JAX) and ``compute()`` (every replicate's figures,
    percentiles and standard errors).
    """
    metric, replicates, seed = boot_cls.resampling.metric, boot_cls.resampling.samples, boot_cls.resampling.seed
    ids = np.arange(len(preds))
    held: dict[str, Any] = {}

    def rows() -> None:
        held["rows"] = example_rows(metric, preds, refs)

    def weights() -> None:
        held["w"] = sig.poisson_weights(ids, replicates, seed)

    def sums() -> None:
        jax.tree.map(lambda r: held["w"] @ r, held["rows"])

    sums_of_batch = boot_cls._host_batch_sums(preds, refs, example_ids=ids)
    state = boot_cls._from_sums(sums_of_batch)

    def from_sums() -> None:
        ready(boot_cls._from_sums(sums_of_batch))

    def compute() -> None:
        ready(state.compute())

    jitted = jax.jit(lambda i: sig.poisson_weights(i, replicates, seed).astype(jnp.uint8))
    ids32 = jnp.asarray(ids, jnp.int32)

    def weights_jitted() -> None:
        held["w_jit"] = np.asarray(jitted(ids32))

    rows()
    weights()
    weights_jitted()
    if not np.array_equal(held["w_jit"], held["w"]):
        raise SystemExit("poisson_weights: the jitted device path differs from the NumPy path.")
    stages = {
        "matching": rows,
        "poisson_weights": weights,
        "weighted sums": sums,
        "from_sums (to JAX)": from_sums,
        f"compute() ({len(jax.tree.leaves(state.plain.compute()))} figures x 4)": compute,
    }
    t = interleaved_best({**stages, "jitted": weights_jitted}, repeat)
    t_jit = t.pop("jitted")
    whole = sum(t.values())
    parts = [f"{k} {v:.3f} s ({100 * v / whole:.0f}%)" for k, v in t.items()]
    return (
        f"bootstrap stages timed alone (sum {whole:.3f} s; whole call {total:.3f} s): "
        + "; ".join(parts)
        + f". The same weights from the public device path, jax.jit(poisson_weights) on int32 ids then to NumPy: "
        f"{t_jit:.3f} s, identical values ({t['poisson_weights'] / t_jit:.1f} times less than the NumPy path)"
    )


def profile(fn: Callable[[], Any], title: str, lines: int = 18) -> None:
    """Print the top of a cProfile listing (cumulative time) of one call."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(lines)
    print(f"\ncProfile of {title}:")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


def status(ratio: float, target: str) -> str:
    """``met`` or ``MISSED`` for a target ``<= N`` / ``>= N`` (in x)."""
    op, bound = target.split()
    ok = ratio <= float(bound.rstrip("x")) if op == "<=" else ratio >= float(bound.rstrip("x"))
    return "met" if ok else "MISSED"


def check_estimate(metric: Any, boot_out: dict[str, Any], plain_out: Any) -> float:
    """The largest |bootstrap estimate - plain figure| over every figure (they must be equal)."""
    diffs = jax.tree.map(lambda a, b: abs(float(a) - float(b)), boot_out["estimate"], plain_out)
    worst = max(jax.tree.leaves(diffs))
    if worst > 0:
        raise SystemExit(f"{metric.__name__}: the bootstrap estimate differs from the plain metric by {worst:g}.")
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20000, help="span F1 documents")
    ap.add_argument("--coref-docs", type=int, default=300, help="coreference documents (0 skips the suite)")
    ap.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates B")
    ap.add_argument("--resamples", type=int, default=20, help="resamples timed for resampling and re-scoring")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved timing rounds (best kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="also print a cProfile listing of one bootstrap call")
    args = ap.parse_args()
    B = args.replicates
    rows: list[tuple[str, str, str, str, str, float]] = []  # comparison, meaning, this, that, target, ratio
    notes: list[str] = []

    # ------------------------------------------------------------------------------------------- span F1
    preds, refs = span_data(args.docs, args.seed)
    n = len(preds)
    ids = np.arange(n)
    M = Doc.metric
    Boot = sig.bootstrap(M, B, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    resampled_f1: list[float] = []

    def plain() -> Any:
        return ready(M.from_model_output(preds, refs).compute())

    def boot() -> Any:
        return ready(Boot.from_model_output(preds, refs, example_ids=ids).compute())

    def rescore() -> None:
        resampled_f1.clear()
        for _ in range(args.resamples):
            idx = rng.integers(0, n, n)
            out = ready(M.from_model_output([preds[i] for i in idx], [refs[i] for i in idx]).compute())
            resampled_f1.append(float(out["f1"]))

    boot_out = boot()
    check_estimate(M, boot_out, plain())
    t = interleaved_best({"plain": plain, "bootstrap": boot, "rescore": rescore}, args.repeat)
    t_rescore_b = t["rescore"] / args.resamples * B
    head = f"span F1 ({n} docs, B={B})"
    rows.append((f"{head}: bootstrap vs plain metric", "bootstrap / plain", f"{t['bootstrap']:.3f}",
                 f"{t['plain']:.3f}", "<= 3x", t["bootstrap"] / t["plain"]))  # fmt: skip
    rows.append((f"{head}: resample+re-score vs bootstrap", "re-score / bootstrap",
                 f"{t_rescore_b:.1f} (extrapolated)", f"{t['bootstrap']:.3f}", ">= 100x",
                 t_rescore_b / t["bootstrap"]))  # fmt: skip
    est, low, high, se = (boot_out[k]["f1"] for k in ("estimate", "low", "high", "stderr"))
    notes.append(
        f"span F1: estimate {float(est):.5f} equal to the plain metric's; 95% interval [{low:.5f}, {high:.5f}], "
        f"bootstrap stderr {se:.5f}; stderr of the {args.resamples} re-scored resamples "
        f"{np.std(resampled_f1, ddof=1):.5f}"
    )
    notes.append(
        f"span F1: resampling and re-scoring timed on {args.resamples} resamples ({t['rescore']:.3f} s, best of "
        f"{args.repeat}) and extrapolated linearly to B={B} ({t_rescore_b:.1f} s): each resample is one plain "
        f"scoring of {n} documents"
    )
    notes.append("span F1 " + breakdown(Boot, preds, refs, t["bootstrap"], args.repeat))
    if args.profile:
        profile(boot, f"the span F1 bootstrap ({n} docs, B={B})")

    # ------------------------------------------------------------------------------------------- coref suite
    if args.coref_docs > 0:
        from metametric_jax.tasks.coref import CorefMetric

        cpreds, crefs = coref_data(args.coref_docs, args.seed)
        cids = np.arange(len(cpreds))
        CBoot = sig.bootstrap(CorefMetric, B, seed=args.seed)

        def cplain() -> Any:
            return ready(CorefMetric.from_model_output(cpreds, crefs).compute())

        def cboot() -> Any:
            return ready(CBoot.from_model_output(cpreds, crefs, example_ids=cids).compute())

        cout = cboot()
        check_estimate(CorefMetric, cout, cplain())
        ct = interleaved_best({"plain": cplain, "bootstrap": cboot}, args.repeat)
        rows.append((f"coref suite ({len(cpreds)} docs, B={B}): bootstrap vs plain suite", "bootstrap / plain",
                     f"{ct['bootstrap']:.3f}", f"{ct['plain']:.3f}", "<= 1.5x",
                     ct["bootstrap"] / ct["plain"]))  # fmt: skip
        c = {k: float(cout[k]["conll"]["f1"]) for k in ("estimate", "low", "high", "stderr")}
        notes.append(
            f"coref: CoNLL F1 estimate {c['estimate']:.5f} equal to the plain suite's; 95% interval "
            f"[{c['low']:.5f}, {c['high']:.5f}], stderr {c['stderr']:.5f}"
        )
        notes.append("coref " + breakdown(CBoot, cpreds, crefs, ct["bootstrap"], args.repeat))
        if args.profile:
            profile(cboot, f"the coref suite bootstrap ({len(cpreds)} docs, B={B})")

    # ------------------------------------------------------------------------------------------- table
    print(f"\nbest of {args.repeat} interleaved rounds; seconds on a shared machine: compare the ratios\n")
    print("| comparison | ratio of | this (s) | that (s) | target | status | ratio |")
    print("|---|---|---:|---:|---|---|---:|")
    for comparison, meaning, this, that, target, ratio in rows:
        print(f"| {comparison} | {meaning} | {this} | {that} | {target} | {status(ratio, target)} | {ratio:.2f}x |")
    print()
    for line in notes:
        print(f"- {line}")


if __name__ == "__main__":
    main()
