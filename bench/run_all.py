"""Run every benchmark in ``bench/`` and print one summary table of their ratios, each beside the issue's target.

Each ``bench/bench_*.py`` script runs as a subprocess of the same interpreter (``sys.executable``), one after the
other (never in parallel: they time themselves). Their printed figures are collected by per-script patterns; a
script without known patterns (a new one) contributes every printed line that ends in a ratio ``<number>x``. Each
script is time-boxed (``--timeout``); a script that fails or runs out of time is reported as such (with whatever
figures it printed before) and the others still run.

Figures are read as printed by each script: a ratio "peer / ours" (above 1: ours is faster), "ours / peer" (below 1:
ours is faster), or seconds; the ``meaning`` column says which, and the ``target`` column gives the issue's target
and whether the run met it.

External tools are not part of the repository. Give their paths as options or in the environment:
``--conlleval PATH`` / ``$CONLLEVAL`` (conlleval.pl), ``--coref-scorer DIR`` / ``$COREF_SCORER`` (a checkout of
conll/reference-coreference-scorers), ``--ud-eval PATH`` / ``$CONLL18_UD_EVAL`` (conll18_ud_eval.py) and
``--evalb PATH`` / ``$EVALB`` (the built EVALB program). A benchmark whose whole point is a missing tool (dependency,
constituency) is skipped with a line saying what it needs; one that also compares with Python peers (NER, coref)
still runs, and its comparisons with the missing tool are listed as not run. A benchmark whose Python peer package
is not installed is skipped the same way (they are in the ``test`` extra).

Run: ``python bench/run_all.py [--quick] [--markdown] [--only NAME ...] [--timeout SECONDS] [TOOL OPTIONS]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
NUM = r"([0-9]+(?:\.[0-9]+)?)"

# Smaller workloads for --quick, using only the flags each script already has. The workloads that a target names
# (NER's CoNLL-2003-sized file, EVALB's 13,170 trees, 20,000 documents with B = 1000) keep their size.
QUICK_ARGS: dict[str, list[str]] = {
    "bench_accumulate": ["--repeat", "3", "--original-docs", "5000"],
    "bench_amr": ["--pairs", "20", "--repeats", "2", "--hard-pairs", "1"],
    "bench_constituency": ["--repeat", "3"],
    "bench_coref": ["--docs", "100", "--repeat", "2"],
    "bench_dependency": ["--copies", "10", "--repeat", "2"],
    "bench_derive": ["--quick"],
    "bench_ner": ["--sentences", "10000", "--repeat", "2"],
    "bench_parallel": ["--pairs", "300", "--documents", "300", "--repeat", "1", "--no-beam"],
    "bench_ranking": ["--queries", "100", "--repeat", "2"],
    "bench_rouge": ["--pairs", "1000", "--repeat", "2"],
    "bench_second_number": ["--quick"],
    "bench_significance": ["--resamples", "3", "--repeat", "2"],
    "bench_startup": ["--repeat", "5"],
    "bench_update_paths": ["--updates", "20", "--repeat", "2"],
}

# Python packages (the peers, all in the ``test`` extra) without which a script cannot run at all.
PEERS: dict[str, list[str]] = {
    "bench_accumulate": ["metametric"],
    "bench_amr": ["smatch", "amr"],
    "bench_coref": ["scorch"],
    "bench_derive": ["metametric"],
    "bench_ner": ["seqeval"],
    "bench_ranking": ["pytrec_eval"],
    "bench_rouge": ["rouge_score"],
}


@dataclass(frozen=True)
class Tool:
    """An external program a benchmark compares with: where run_all looks for it and how the script is told."""

    name: str
    option: str  # run_all's option
    env: str  # the environment variable read when the option is not given
    script_flag: str  # the benchmark script's own flag
    directory: bool = False  # a checkout (scorer.pl inside) rather than a file
    perl: bool = False  # run by perl

    def locate(self, given: str | None) -> tuple[str | None, str]:
        """(path, "") when usable, else (None, why not): one line for the summary."""
        how = f"give {self.option} PATH or ${self.env}"
        path = given or os.environ.get(self.env)
        if not path:
            return None, f"{self.name} not given ({how})"
        p = Path(path)
        if self.directory and not (p / "scorer.pl").is_file():
            return None, f"{self.name}: no scorer.pl in {path} ({how})"
        if not self.directory and not p.is_file():
            return None, f"{self.name}: no file {path} ({how})"
        if self.name == "EVALB" and not os.access(p, os.X_OK):
            return None, f"{self.name}: {path} is not executable (build it: gcc -O2 -o evalb evalb.c)"
        if self.perl and shutil.which("perl") is None:
            return None, f"{self.name} needs perl, which is not on PATH"
        return str(p), ""


CONLLEVAL = Tool("conlleval.pl", "--conlleval", "CONLLEVAL", "--conlleval", perl=True)
COREF_SCORER = Tool("scorer.pl", "--coref-scorer", "COREF_SCORER", "--scorer", directory=True, perl=True)
UD_EVAL = Tool("conll18_ud_eval.py", "--ud-eval", "CONLL18_UD_EVAL", "--script")
EVALB = Tool("EVALB", "--evalb", "EVALB", "--evalb")
TOOLS = (CONLLEVAL, COREF_SCORER, UD_EVAL, EVALB)


@dataclass
class Row:
    """One figure of one benchmark: a ratio (``unit="x"``), seconds (``"s"``), a share (``"%"``), or not run."""

    bench: str
    comparison: str
    value: float | None
    meaning: str
    target: str = ""
    unit: str = "x"
    why_not: str = ""

    def shown(self) -> str:
        """The figure as the tables print it."""
        if self.value is None:
            return "—"
        if self.unit == "%":
            return f"{self.value:.1f}%"
        return f"{self.value:.2f}x" if self.unit == "x" else f"{self.value:.3f} s"

    def status(self) -> str:
        """``met`` / ``MISSED`` for a figure with a target, ``not run: ...`` for a skipped one, else empty."""
        if self.value is None:
            return f"not run: {self.why_not}"
        m = re.fullmatch(r"(>=|<=|>|<)\s*" + NUM + r"\s*(x|s|%)", self.target)
        if m is None:
            return ""
        bound = float(m.group(2))
        ok = {
            ">=": self.value >= bound,
            "<=": self.value <= bound,
            ">": self.value > bound,
            "<": self.value < bound,
        }[m.group(1)]
        return "met" if ok else "MISSED"


# Comparisons that need an external tool: listed as not run (with the reason) when the tool is missing.
@dataclass(frozen=True)
class Needs:
    """A script's external tool; ``required``: the script is skipped without it."""

    tool: Tool
    required: bool
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (comparison, meaning, target)


NEEDS: dict[str, Needs] = {
    "bench_ner": Needs(
        CONLLEVAL,
        required=False,
        rows=[
            ("NER whole process: score ner (table) vs conlleval.pl", "ours / peer", "<= 3x"),
            ("NER whole process: score ner --format json vs conlleval.pl", "ours / peer", "<= 3x"),
        ],
    ),
    "bench_coref": Needs(
        COREF_SCORER,
        required=False,
        rows=[("coref files, whole process: score coref vs perl scorer.pl all", "peer / ours", "")],
    ),
    "bench_dependency": Needs(
        UD_EVAL,
        required=True,
        rows=[
            ("dependency whole process: score dependency vs conll18_ud_eval.py", "ours / peer", ""),
            ("dependency in process: score_files vs the script's load + evaluate", "ours / peer", ""),
        ],
    ),
    "bench_constituency": Needs(
        EVALB,
        required=True,
        rows=[("constituency scoring run (13,170 trees): score_files vs evalb", "ours / peer", "<= 3x")],
    ),
}


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
    m = re.search(r"check share\s*= " + NUM + "%", text)
    if m:
        share = float(m.group(1))
        rows.append(Row(bench, "span F1: leaf type check's share of ours", share, "% of ours", "<= 5%", "%"))
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
    bounded = r"^\s*bounded\s+(\d+)\s+(\d+)\s+" + NUM + r"\s+" + NUM + r"\s+(\d+)\s+" + NUM + r"\s+(\d+)\s+(\d+)\s*$"
    for m in re.finditer(bounded, text, re.M):
        n_vars, pairs, slowest, optimal = m.group(1), m.group(2), float(m.group(3)), m.group(5)
        better, worse = m.group(7), m.group(8)
        rows.append(
            Row(
                bench,
                f"AMR unrelated pairs, {n_vars} variables: slowest whole pair ({optimal} of {pairs} proven optimal; "
                f"more matched triples than smatch in {better}, fewer in {worse})",
                slowest,
                "seconds, ours",
                "<= 2 s",
                unit="s",
            )
        )
    whole = r"^whole process, (\d+) pairs .*: ours / smatch " + NUM + r"x"
    for m in re.finditer(whole, text, re.M):
        what = f"score amr vs smatch.py -r 5, {m.group(1)} pairs, whole process"
        rows.append(Row(bench, what, float(m.group(2)), "ours / peer", "< 1x"))
    m = re.search(r"^whole process, cpu time: .*: ours / smatch " + NUM + r"x", text, re.M)
    if m:
        rows.append(Row(bench, "the same, CPU time", float(m.group(1)), "ours / peer"))
    latent = r"^\s*latent\s+(\d+)\s+(\d+)\s+" + NUM + r"\s+" + NUM + r"\s+(\d+)\s*$"
    for m in re.finditer(latent, text, re.M):
        n, pairs, t_amr, t_latent, equal = m.group(1), m.group(2), float(m.group(3)), float(m.group(4)), m.group(5)
        rows.append(
            Row(
                bench,
                f"derived LatentSetMatching vs AMR smatch_match, {n} triples ({equal} of {pairs} optima equal)",
                t_latent / t_amr,
                "derived / AMR",
            )
        )
    return rows


def _coref(bench: str, text: str) -> list[Row]:
    rows = []
    m = re.search(r"^speed-up: " + NUM + "x", text, re.M)
    if m:
        rows.append(Row(bench, "coref suite vs scorch (5 metrics)", float(m.group(1)), "peer / ours", ">= 5x"))
    m = re.search(r"files speed-up vs scorer\.pl \(whole process\): " + NUM + "x", text)
    if m:
        check = re.search(r"files: (\d+) documents; scorer\.pl prints MUC recall .*: (True|False)", text)
        docs = check.group(1) if check else "?"
        same = {"True": "MUC figures equal", "False": "MUC figures DIFFER"}.get(check.group(2) if check else "", "")
        rows.append(
            Row(
                bench,
                f"coref files ({docs} docs), whole process: score coref vs perl scorer.pl all ({same})",
                float(m.group(1)),
                "peer / ours",
            )
        )
    return rows


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
    m = re.search(r"ner_report JSON.*ratio " + NUM + "x|host JSON report.*ratio " + NUM + "x", text)
    if m:
        value = float(m.group(1) or m.group(2))
        rows.append(Row(bench, "NER score() JSON report vs seqeval classification_report", value, "peer / ours"))
    for fmt, name in (("table", "score ner (table)"), ("json", "score ner --format json")):
        m = re.search(r"whole process, ours \(" + fmt + r"\) / conlleval\.pl = " + NUM + r"x \(cpu " + NUM, text)
        if m:
            rows.append(
                Row(bench, f"NER whole process: {name} vs conlleval.pl", float(m.group(1)), "ours / peer", "<= 3x")
            )
            rows.append(
                Row(bench, f"NER whole process: {name} vs conlleval.pl, CPU time", float(m.group(2)), "ours / peer")
            )
    m = re.search(r"whole process, seqeval script / ours \(table\) = " + NUM + r"x \(cpu " + NUM, text)
    if m:
        rows.append(
            Row(bench, "NER whole process: score ner vs a seqeval script", float(m.group(1)), "peer / ours", "> 1x")
        )
        rows.append(
            Row(bench, "NER whole process: score ner vs a seqeval script, CPU time", float(m.group(2)), "peer / ours")
        )
    return rows


def _rouge(bench: str, text: str) -> list[Row]:
    rows = []
    case = (
        r"^(\S.*?)\s+(\d+)\s+([\w,]+)\s+(yes|no)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + r"x\s+" + NUM + r"\s+"
        r"" + NUM + r"x\s*$"
    )
    for m in re.finditer(case, text, re.M):
        data, pairs, types, stem = m.group(1), m.group(2), m.group(3), m.group(4)
        what = f"ROUGE {types}, {data} ({pairs} pairs{', stemmed' if stem == 'yes' else ''})"
        rows.append(Row(bench, f"{what}: score vs rouge-score", float(m.group(7)), "peer / ours", ">= 3x"))
        rows.append(Row(bench, f"{what}: RougeMetric accumulator vs rouge-score", float(m.group(9)), "peer / ours"))
    if not rows:  # the earlier format: one line per ROUGE type
        for m in re.finditer(r"^(rouge\w+)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + "x", text, re.M):
            rows.append(Row(bench, f"{m.group(1)} vs rouge-score", float(m.group(4)), "peer / ours"))
    return rows


def _ranking(bench: str, text: str) -> list[Row]:
    rows = []
    for label, what in (
        (r"in memory", "trec_eval measures in memory: score vs pytrec_eval"),
        (r"from files", "trec_eval measures from files: score_files vs pytrec_eval"),
        (
            r"JAX accumulator \(RankingMetric\), in memory",
            "trec_eval measures: RankingMetric accumulator vs pytrec_eval",
        ),
    ):
        m = re.search(r"^" + label + r":.*ours / pytrec_eval = " + NUM + "x", text, re.M)
        if m:
            rows.append(Row(bench, what, float(m.group(1)), "ours / peer"))
    for block in re.finditer(r"^whole process, (.+?) \(\d+ figures[^\n]*\n((?:  [^\n]*\n?)*)", text, re.M):
        line = r"^  ours \((table|json)\) / (trec_eval|pytrec_eval script): wall " + NUM + "x"
        for m in re.finditer(line, block.group(2), re.M):
            what = f"all_trec whole process, {block.group(1)}: score ranking ({m.group(1)}) vs {m.group(2)}"
            target = "<= 3x" if m.group(2) == "trec_eval" else "< 1x"  # issue 20
            rows.append(Row(bench, what, float(m.group(3)), "ours / peer", target))
        found = re.search(r"^  peak memory: (.*)$", block.group(2), re.M)
        memory = {
            p.rsplit(" ", 2)[0]: float(p.rsplit(" ", 2)[1]) for p in (found.group(1).split(", ") if found else [])
        }
        for peer in ("trec_eval", "pytrec_eval script"):
            if "ours (json)" in memory and peer in memory:
                what = f"all_trec whole process, {block.group(1)}: peak memory of score ranking (json) vs {peer}"
                rows.append(Row(bench, what, memory["ours (json)"] / memory[peer], "ours / peer"))
    return rows


def _dependency(bench: str, text: str) -> list[Row]:
    rows = []
    data = re.search(r"^data: (\d+) reference sentences, (\d+) words", text, re.M)
    size = f" ({data.group(1)} sentences)" if data else ""
    checked = " (figures equal)" if re.search(r"^figures: equal to the script's", text, re.M) else ""
    m = re.search(r"^whole process: .*ours/script " + NUM + "x", text, re.M)
    if m:
        what = f"dependency whole process{size}: score dependency vs conll18_ud_eval.py{checked}"
        rows.append(Row(bench, what, float(m.group(1)), "ours / peer"))
    m = re.search(r"^in process, files: .*ours/script " + NUM + "x", text, re.M)
    if m:
        what = f"dependency in process{size}: score_files vs the script's load + evaluate"
        rows.append(Row(bench, what, float(m.group(1)), "ours / peer"))
    return rows


def _constituency(bench: str, text: str) -> list[Row]:
    rows = []
    data = re.search(r"^data: (\d+) trees per file", text, re.M)
    size = f" ({data.group(1)} trees)" if data else ""
    checked = " (figures equal)" if re.search(r"^figures: equal to EVALB's summary", text, re.M) else ""
    m = re.search(r"^scoring run: evalb .*ours/evalb " + NUM + "x", text, re.M)
    if m:
        what = f"constituency scoring run{size}: score_files vs evalb{checked}"
        rows.append(Row(bench, what, float(m.group(1)), "ours / peer", "<= 3x"))
    m = re.search(r"^scoring run, cpu time: .*ours/evalb " + NUM + "x", text, re.M)
    if m:
        rows.append(
            Row(
                bench,
                f"constituency scoring run{size}: score_files vs evalb, CPU time",
                float(m.group(1)),
                "ours / peer",
            )
        )
    m = re.search(r"^whole process: evalb .*ours/evalb " + NUM + "x", text, re.M)
    if m:
        what = f"constituency whole process{size}: score constituency vs evalb"
        rows.append(Row(bench, what, float(m.group(1)), "ours / peer"))
    return rows


# issue 13's targets, by the comparison bench_significance.py prints
SIGNIFICANCE_TARGETS = {
    "bootstrap vs plain metric": "<= 3x",
    "resample+re-score vs bootstrap": ">= 100x",
    "bootstrap vs plain suite": "<= 1.5x",
}


def _significance(bench: str, text: str) -> list[Row]:
    rows = []
    line = r"^\| ([^|]+?) \| ([^|]+?) \| [^|]* \| [^|]* \| ([^|]*?) \| [^|]* \| " + NUM + r"x \|\s*$"
    for m in re.finditer(line, text, re.M):
        comparison, meaning, printed_target = m.group(1), m.group(2), m.group(3)
        target = next((t for k, t in SIGNIFICANCE_TARGETS.items() if comparison.endswith(k)), printed_target)
        if "re-score" in meaning:
            comparison += " (re-scoring extrapolated)"
        rows.append(Row(bench, comparison, float(m.group(4)), meaning, target))
    return rows


def _startup(bench: str, text: str) -> list[Row]:
    rows = []
    jax = re.search(r"^JAX imported by --help: (\w+)", text, re.M)
    note = f" (JAX imported: {jax.group(1)})" if jax else ""
    for m in re.finditer(r"^(metametric-jax --help|python -m metametric_jax --help): " + NUM + " s", text, re.M):
        target = "<= 0.3 s" if m.group(1) == "metametric-jax --help" else ""  # the target is the command
        rows.append(Row(bench, f"{m.group(1)}, whole process{note}", float(m.group(2)), "seconds", target, "s"))
    for m in re.finditer(
        r"^(metametric-jax --help|python -m metametric_jax --help) / python -c pass = " + NUM + "x", text, re.M
    ):
        rows.append(Row(bench, f"{m.group(1)} vs python -c pass", float(m.group(2)), "ours / python"))
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
    "bench_constituency": _constituency,
    "bench_coref": _coref,
    "bench_dependency": _dependency,
    "bench_derive": _derive,
    "bench_ner": _ner,
    "bench_ranking": _ranking,
    "bench_rouge": _rouge,
    "bench_significance": _significance,
    "bench_startup": _startup,
    "bench_update_paths": _update_paths,
}


def run_one(script: Path, extra: list[str], timeout: float) -> tuple[str, float, str]:
    """Run one script; returns (status, seconds, captured output)."""
    args = [sys.executable, str(script), *extra]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=BENCH_DIR.parent)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return f"timed out after {timeout:g} s", time.perf_counter() - t0, out
    if done.returncode == 0:
        return "ok", time.perf_counter() - t0, done.stdout
    last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "")
    return f"failed (exit {done.returncode}): {last[:120]}", time.perf_counter() - t0, done.stdout + done.stderr


def missing_peers(name: str) -> list[str]:
    """The Python peer packages of a script that are not importable here."""
    return [m for m in PEERS.get(name, []) if importlib.util.find_spec(m) is None]


def print_table(rows: list[Row], runs: dict[str, tuple[str, float]], markdown: bool) -> None:
    """The summary: one line per figure, then one line per script (status and wall time)."""
    head = ("bench", "comparison", "measured", "meaning", "target", "status")
    cells = [(r.bench, r.comparison, r.shown(), r.meaning, r.target, r.status()) for r in rows]
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
        print("  ".join(v.rjust(w) if k == 2 else v.ljust(w) for k, (v, w) in enumerate(zip(c, widths))).rstrip())
    print()
    for name, (status, secs) in runs.items():
        print(f"{name:<22} {secs:7.1f} s  {status}")


def load() -> str:
    """The 1, 5 and 15 minute load averages (other work on a shared machine), or ``n/a``."""
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads (each script's own size flags)")
    ap.add_argument("--markdown", action="store_true", help="print the summary as markdown tables")
    ap.add_argument("--only", nargs="*", default=None, help="script names to run (e.g. bench_derive bench_ner)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed to each script")
    ap.add_argument("--verbose", action="store_true", help="also echo each script's own output")
    for tool in TOOLS:
        what = "directory of" if tool.directory else "path of"
        ap.add_argument(tool.option, default=None, metavar="PATH", help=f"{what} {tool.name} (else ${tool.env})")
    args = ap.parse_args()

    scripts = sorted(p for p in BENCH_DIR.glob("bench_*.py"))
    if args.only:
        wanted = {n.removesuffix(".py") for n in args.only}
        unknown = sorted(wanted - {p.stem for p in scripts})
        if unknown:
            ap.error(f"--only: no script(s) {unknown}; the scripts are {[p.stem for p in scripts]}.")
        scripts = [p for p in scripts if p.stem in wanted]

    rows: list[Row] = []
    runs: dict[str, tuple[str, float]] = {}
    start_load = load()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for script in scripts:
        name = script.stem
        absent = missing_peers(name)
        if absent:
            why = f"Python package {', '.join(absent)} not installed (pip install -e '.[test]')"
            print(f"skipping {script.name}: {why}", file=sys.stderr, flush=True)
            runs[name] = (f"skipped: {why}", 0.0)
            rows.append(Row(name, "(every comparison)", None, "", why_not=why))
            continue
        extra = QUICK_ARGS.get(name, []) if args.quick else []
        needs = NEEDS.get(name)
        if needs is not None:
            path, why = needs.tool.locate(getattr(args, needs.tool.option.lstrip("-").replace("-", "_")))
            if path is None:
                rows.extend(Row(name, c, None, meaning, target, why_not=why) for c, meaning, target in needs.rows)
                if needs.required:
                    print(f"skipping {script.name}: {why}", file=sys.stderr, flush=True)
                    runs[name] = (f"skipped: {why}", 0.0)
                    continue
                print(f"{script.name}: {why}; its comparisons with it are not run", file=sys.stderr, flush=True)
            else:
                extra = [*extra, needs.tool.script_flag, path]
        print(f"running {script.name} {' '.join(extra)} ...", file=sys.stderr, flush=True)
        status, secs, out = run_one(script, extra, args.timeout)
        runs[name] = (status, secs)
        if args.verbose or status != "ok":
            print(out, file=sys.stderr)
        found = EXTRACTORS.get(name, _generic)(name, out)
        if not found and status == "ok":
            runs[name] = ("ok, no ratio lines found", secs)
        rows.extend(found)
    mode = "--quick" if args.quick else "full sizes"
    print(
        f"{started}, {mode}; {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average (1 / 5 / 15 min) {start_load} at the start, {load()} at the end"
    )
    print()
    print_table(rows, runs, args.markdown)


if __name__ == "__main__":
    main()
