"""Run every benchmark in ``bench/`` and print one summary table of their ratios.

Each ``bench/bench_*.py`` script runs as a subprocess of the same interpreter (``sys.executable``), one after the
other (never in parallel: they time themselves). Their printed ratio lines are collected by per-script patterns;
a script without known patterns (a new one) contributes every printed line that ends in a ratio ``<number>x``.
Each script is time-boxed (``--timeout``); a script that fails or runs out of time is reported as such and the
others still run.

Ratios are read as printed by each script: "original / ours", "peer / ours" or "ours / peer"; the ``meaning`` column
says which, and the ``target`` column gives the issue's target and whether the run met it.

Run: ``python bench/run_all.py [--quick] [--markdown] [--only NAME ...] [--timeout SECONDS]``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
NUM = r"([0-9]+(?:\.[0-9]+)?)"

# Smaller workloads for --quick, using only the flags each script already has.
QUICK_ARGS: dict[str, list[str]] = {
    "bench_ranking": ["--queries", "100", "--repeat", "2"],
    "bench_accumulate": ["--repeat", "3", "--original-docs", "5000"],
    "bench_amr": ["--pairs", "20", "--repeats", "2"],
    "bench_coref": ["--docs", "100", "--repeat", "2"],
    "bench_derive": ["--quick"],
    "bench_ner": ["--sentences", "10000", "--repeat", "2"],
    "bench_rouge": ["--pairs", "1000", "--repeat", "2"],
    "bench_significance": ["--docs", "2000", "--coref-docs", "100", "--replicates", "200", "--resamples", "3"],
    "bench_update_paths": ["--updates", "20", "--repeat", "2"],
}


@dataclass
class Row:
    """One ratio of one benchmark."""

    bench: str
    comparison: str
    ratio: float
    meaning: str
    target: str = ""

    def status(self) -> str:
        """``met`` / ``MISSED`` for a row with a target, else empty."""
        m = re.fullmatch(r"(>=|<=)\s*" + NUM + r"x", self.target)
        if m is None:
            return ""
        bound = float(m.group(2))
        ok = self.ratio >= bound if m.group(1) == ">=" else self.ratio <= bound
        return "met" if ok else "MISSED"


Extractor = Callable[[str, str], list[Row]]


def _accumulate(bench: str, text: str) -> list[Row]:
    rows = []
    m = re.search(r"ours / Counter loop = " + NUM + "x", text)
    if m:
        rows.append(Row(bench, "span F1, 20k docs: ours vs Counter loop", float(m.group(1)), "ours / peer", "<= 2x"))
    m = re.search(r"original / ours\s*= " + NUM + "x", text)
    if m:
        rows.append(
            Row(bench, "span F1, 20k docs: ours vs metametric 0.2.1", float(m.group(1)), "peer / ours", ">= 20x")
        )
    return rows


def _coref(bench: str, text: str) -> list[Row]:
    m = re.search(r"speed-up: " + NUM + "x", text)
    return [Row(bench, "coref suite vs scorch (5 metrics)", float(m.group(1)), "peer / ours", ">= 5x")] if m else []


def _ner(bench: str, text: str) -> list[Row]:
    rows = []
    m = re.search(r"f1_score:.*ratio\s+" + NUM + "x", text)
    if m:
        rows.append(Row(bench, "NER span F1 vs seqeval f1_score", float(m.group(1)), "peer / ours", ">= 5x"))
    m = re.search(r"classification_report:.*ratio\s+" + NUM + "x", text)
    if m:
        rows.append(
            Row(bench, "NER report vs seqeval classification_report", float(m.group(1)), "peer / ours", ">= 10x")
        )
    m = re.search(r"ner_report JSON.*ratio " + NUM + "x", text)
    if m:
        rows.append(Row(bench, "NER JSON report vs seqeval classification_report", float(m.group(1)), "peer / ours"))
    return rows


def _amr(bench: str, text: str) -> list[Row]:
    rows = []
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 9 and cells[0].isdigit() and cells[1].isdigit():
            n, ratio, median = cells[0], float(cells[4]), float(cells[5])
            rows.append(
                Row(bench, f"exact Smatch vs smatch hill climbing, {n} triples (mean)", ratio, "ours / peer", "<= 1x")
            )
            rows.append(
                Row(bench, f"exact Smatch vs smatch hill climbing, {n} triples (median pair)", median, "ours / peer")
            )
    return rows


def _rouge(bench: str, text: str) -> list[Row]:
    rows = []
    for m in re.finditer(r"^(rouge\w+)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + "x", text, re.M):
        rows.append(Row(bench, f"{m.group(1)} vs rouge-score", float(m.group(4)), "peer / ours"))
    return rows


def _update_paths(bench: str, text: str) -> list[Row]:
    rows = []
    for m in re.finditer(
        r"^\s+(host\+decode|host|callback|device)\s+" + NUM + r" updates/s\s+" + NUM + " x callback", text, re.M
    ):
        if m.group(1) != "callback":
            rows.append(
                Row(
                    bench,
                    f"update path {m.group(1)} vs jitted callback",
                    float(m.group(3)),
                    "updates/s, path / callback",
                )
            )
    return rows


def _derive(bench: str, text: str) -> list[Row]:
    rows = []
    case = ""
    for line in text.splitlines():
        if line.startswith("exact match"):
            case = "exact"
        elif line.startswith("soft match"):
            case = "soft"
        m = re.match(r"^\s+ours (\w+): (.+?)\s{2,}" + NUM + r"\s+" + NUM + r"x(.*)$", line)
        if m:
            target = ">= 20x" if case == "exact" and ("whole list" in m.group(2) or "compute" in m.group(2)) else ""
            rows.append(
                Row(
                    bench,
                    f"derived F1 ({case}, {m.group(1)}) {m.group(2)} vs metametric 0.2.1",
                    float(m.group(4)),
                    "peer / ours",
                    target,
                )
            )
    return rows


def _generic(bench: str, text: str) -> list[Row]:
    rows = []
    for line in text.splitlines():
        m = re.search(NUM + r"\s*x\b[^0-9]*$", line)
        if m:
            rows.append(Row(bench, line.strip()[:80], float(m.group(1)), "as printed"))
    return rows


EXTRACTORS: dict[str, Extractor] = {
    "bench_accumulate": _accumulate,
    "bench_amr": _amr,
    "bench_coref": _coref,
    "bench_derive": _derive,
    "bench_ner": _ner,
    "bench_rouge": _rouge,
    "bench_update_paths": _update_paths,
}


def run_one(script: Path, quick: bool, timeout: float) -> tuple[str, float, str]:
    """Run one script; returns (status, seconds, captured output)."""
    args = [sys.executable, str(script)] + (QUICK_ARGS.get(script.stem, []) if quick else [])
    t0 = time.perf_counter()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=BENCH_DIR.parent)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return f"timed out after {timeout:g} s", time.perf_counter() - t0, out
    status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
    return status, time.perf_counter() - t0, done.stdout + ("" if done.returncode == 0 else done.stderr)


def print_table(rows: list[Row], runs: dict[str, tuple[str, float]], markdown: bool) -> None:
    """The summary: one line per ratio, then one line per script (status and wall time)."""
    head = ("bench", "comparison", "ratio", "meaning", "target", "status")
    cells = [(r.bench, r.comparison, f"{r.ratio:.2f}x", r.meaning, r.target, r.status()) for r in rows]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---", "---", "---:", "---", "---", "---"]) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
        print()
        print("| bench | run | seconds |")
        print("|---|---|---:|")
        for name, (status, secs) in runs.items():
            print(f"| {name} | {status} | {secs:.1f} |")
        return
    widths = [max(len(h), *(len(c[k]) for c in cells)) if cells else len(h) for k, h in enumerate(head)]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths))
    print(line)
    print("-" * len(line))
    for c in cells:
        print("  ".join(v.rjust(w) if k == 2 else v.ljust(w) for k, (v, w) in enumerate(zip(c, widths))))
    print()
    for name, (status, secs) in runs.items():
        print(f"{name:<22} {status:<28} {secs:7.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads (each script's own size flags)")
    ap.add_argument("--markdown", action="store_true", help="print the summary as markdown tables")
    ap.add_argument("--only", nargs="*", default=None, help="script names to run (e.g. bench_derive bench_ner)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed to each script")
    ap.add_argument("--verbose", action="store_true", help="also echo each script's own output")
    args = ap.parse_args()

    scripts = sorted(p for p in BENCH_DIR.glob("bench_*.py"))
    if args.only:
        wanted = {n.removesuffix(".py") for n in args.only}
        unknown = sorted(wanted - {p.stem for p in scripts})
        if unknown:
            raise SystemExit(f"--only: no script(s) {unknown}; the scripts are {[p.stem for p in scripts]}.")
        scripts = [p for p in scripts if p.stem in wanted]

    rows: list[Row] = []
    runs: dict[str, tuple[str, float]] = {}
    for script in scripts:
        print(f"running {script.name}{' --quick' if args.quick else ''} ...", file=sys.stderr, flush=True)
        status, secs, out = run_one(script, args.quick, args.timeout)
        runs[script.stem] = (status, secs)
        if args.verbose or status != "ok":
            print(out, file=sys.stderr)
        found = EXTRACTORS.get(script.stem, _generic)(script.stem, out)
        if not found and status == "ok":
            runs[script.stem] = ("ok, no ratio lines found", secs)
        rows.extend(found)
    print_table(rows, runs, args.markdown)


if __name__ == "__main__":
    main()
