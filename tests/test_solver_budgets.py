"""Solver budgets count work, not seconds; one text for every budget warning; solver output never reaches stdout.

A figure is a pure function of its input (the design's determinism rule): the same pair scores the same at any load and
whatever the clock says. Standard output carries the report only, so ``score amr --format json`` stays JSON even where
HiGHS prints from C.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import textwrap
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from amr_graphs import unrelated_pair

import metametric_jax
from metametric_jax import Variable, dsl
from metametric_jax._budget import DEFAULT_WORK_LIMIT, Budget, SolverBudgetWarning, budget_message, check_limits
from metametric_jax.matching import GraphMatching, LatentSetMatching
from metametric_jax.tasks.amr import score, smatch_match, smatch_metric, smatch_triples

TESTS = Path(__file__).parent


def _adversarial() -> tuple[list, list]:
    """Two unrelated 60-variable graphs of 2 concepts: nearly symmetric, the hardest kind of pair (not provable)."""
    pred, gold = unrelated_pair(0, 60)
    return smatch_triples(pred), smatch_triples(gold)


#: Seeds of generated pairs whose Smatch problem reaches the integer program (HiGHS), quickly solved there.
PROGRAM_SEEDS = (44, 63, 94, 114, 132, 135)


def _program_pairs(seeds: tuple[int, ...] = PROGRAM_SEEDS) -> list[tuple[str, str]]:
    """Generated pairs of 6-22 variables (unrelated graphs of one or two concepts), as ``score amr`` input."""
    chosen = []
    for seed in seeds:
        rng = random.Random(seed)
        n_vars = rng.randint(6, 22)
        chosen.append(unrelated_pair(seed, n_vars, ("a", "b")[: rng.randint(1, 2)]))
    return chosen


def _full(found) -> tuple:
    return (found.matched, found.optimal, found.upper_bound, found.timed_out, sorted(found.mapping.items()))


# ------------------------------------------------------------------------------------------------- determinism
def test_adversarial_pair_identical_across_runs_and_under_load():
    p, g = _adversarial()
    start = time.perf_counter()
    first = smatch_match(p, g)
    alone = time.perf_counter() - start
    assert not first.optimal and not first.timed_out and first.matched < first.upper_bound
    assert alone < 20.0  # about 1 s on an idle core; generous for a shared machine
    assert _full(smatch_match(p, g)) == _full(first)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        loaded = smatch_match(p, g)
    finally:
        hog.kill()
        hog.wait()
    assert _full(loaded) == _full(first)


def _jump_clocks(patch: pytest.MonkeyPatch) -> None:
    """Every clock of the ``time`` module jumps by an hour at each reading."""
    ticks = itertools.count()
    for name in ("perf_counter", "monotonic", "time", "process_time"):
        patch.setattr(time, name, lambda: 3600.0 * next(ticks))


def test_clock_jumps_change_no_figure(monkeypatch):
    """A wall-clock budget would stop at the first reading of a clock that jumps by hours; a work budget does not."""
    p, g = _adversarial()
    medium = [
        tuple(map(smatch_triples, pair)) for pair in _program_pairs(PROGRAM_SEEDS[:3])
    ]  # the integer program's path
    expected = [_full(smatch_match(*pair)) for pair in [(p, g), *medium]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverBudgetWarning)
        corpus = score([pair[0] for pair in medium], [pair[1] for pair in medium])
    with monkeypatch.context() as patch:
        _jump_clocks(patch)
        got = [_full(smatch_match(*pair)) for pair in [(p, g), *medium]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SolverBudgetWarning)
            again = score([pair[0] for pair in medium], [pair[1] for pair in medium])
    assert got == expected
    assert again == corpus


@dataclass(frozen=True)
class Edge:
    head: Variable
    tail: Variable
    weight: float


SOFT_EDGE = dsl.dataclass(Edge, weight=dsl.from_function(lambda a, b: 1.0 / (1.0 + abs(a - b))))


@dataclass
class Graph:
    nodes: list
    edges: list


def _soft_edges(seed: int) -> tuple[list[Edge], list[Edge]]:
    rng = np.random.default_rng(seed)

    def side(prefix: str) -> list[Edge]:
        ends = rng.integers(0, 12, (30, 2))
        return [Edge(Variable(f"{prefix}{a}"), Variable(f"{prefix}{b}"), float(rng.integers(1, 4))) for a, b in ends]

    return side("a"), side("x")


def _graphs(seed: int) -> tuple[Graph, Graph]:
    rng = np.random.default_rng(seed)

    def graph() -> Graph:
        ends = rng.integers(0, 40, (40, 2))
        return Graph([int(x) for x in rng.integers(0, 2, 40)], [(int(a), int(b)) for a, b in ends if a != b])

    return graph(), graph()


def test_latent_and_graph_matching_ignore_the_clock(monkeypatch):
    """Soft latent matching (integer program, then a local search) and graph matching: the budget, not the clock."""
    soft = dsl.latent_set_matching(SOFT_EDGE, work_limit=10**7)
    graph = dsl.graph_matching(dsl.discrete(), work_limit=10**6)
    xs, ys = _soft_edges(0)
    x, y = _graphs(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverBudgetWarning)
        expected = soft.score(xs, ys), graph.score(x, y)
        with monkeypatch.context() as patch:
            _jump_clocks(patch)
            got = soft.score(xs, ys), graph.score(x, y)
    assert got == expected


def test_time_limit_is_an_extra_cap_that_says_so():
    p, g = _adversarial()
    found = smatch_match(p, g, work_limit=None, time_limit=0.05)
    assert found.timed_out and not found.optimal
    pred, gold = unrelated_pair(0, 60)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score([pred], [gold], work_limit=None, time_limit=0.05)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, SolverBudgetWarning)]
    assert result["pairs_timed_out"] == 1 and result["pairs_optimal"] == 0
    assert "time limit of 0.05 s per pair stopped it" in message and "not reproducible" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dsl.graph_matching(dsl.discrete(), work_limit=None, time_limit=1e-3).score(*_graphs(1))
    (message,) = [str(w.message) for w in caught if issubclass(w.category, SolverBudgetWarning)]
    assert message.startswith("graph matching: ") and "not reproducible" in message
    easy = smatch_triples("(b / boy :ARG0-of (g / go-02))"), smatch_triples("(b / boy :ARG0-of (g / go-01))")
    assert not smatch_match(*easy, time_limit=1e-9).timed_out  # proven at once: the clock is never read


def test_budget_counts_and_validation():
    budget = Budget(100)
    part = budget.share(0.5)
    assert part.spend(30) and not part.spend(30) and budget.left == 70
    assert not budget.spend(71) and budget.spend(70) and not budget.spend(1) and not budget.timed_out
    assert Budget(None).spend(10**30)
    assert check_limits(5e7, 2, "f") == (50_000_000, 2.0)
    for bad in (0, -3, 0.5, "1", True, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="work_limit must be a positive whole number"):
            check_limits(bad, None, "f")
    for bad in (0, -1.0, "1", float("inf"), float("nan")):
        with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
            check_limits(None, bad, "f")
    with pytest.raises(ValueError, match="GraphMatching: work_limit"):
        GraphMatching(dsl.discrete(), work_limit=0.5)
    with pytest.raises(TypeError):
        LatentSetMatching(dsl.discrete(), "<->", 1.0)  # the budget is a keyword: a number of seconds is refused
    assert smatch_metric(work_limit=DEFAULT_WORK_LIMIT, time_limit=None) is smatch_metric()


# ------------------------------------------------------------------------------------------------- one warning text
def test_every_budget_warning_comes_from_budget_message(monkeypatch):
    """Graph matching, both latent paths, Smatch per call and per batch: one function writes each warning."""
    calls = []

    def marked(subject, result, work_limit, time_limit=None, **kwargs):
        calls.append(subject)
        return "MARK " + budget_message(subject, result, work_limit, time_limit, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("metametric_jax"):  # _budget's warn_budget too
            if getattr(module, "budget_message", None) is budget_message:
                monkeypatch.setattr(module, "budget_message", marked)
    pred, gold = unrelated_pair(0, 60)
    xs, ys = _soft_edges(0)

    @dataclass(frozen=True)
    class Triple:
        source: Variable
        role: str
        target: Variable

    triples = [
        [Triple(Variable(s), "r", Variable(t)) for s, _, t in smatch_triples(side) if s != t] for side in (pred, gold)
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dsl.graph_matching(dsl.discrete(), work_limit=10**6).score(*_graphs(1))
        dsl.latent_set_matching(SOFT_EDGE, work_limit=10**6).score(xs, ys)
        dsl.latent_set_matching(dsl.auto(Triple), work_limit=10**6).score(*triples)
        score([pred], [gold], work_limit=10**6)
        smatch_metric(work_limit=10**6).batch_stats([pred], [gold])
    messages = [str(w.message) for w in caught if issubclass(w.category, SolverBudgetWarning)]
    assert len(messages) == 5 and all(m.startswith("MARK ") for m in messages), messages
    assert calls[:3] == ["graph matching", "latent matching", "latent matching"]
    assert calls[3:] == ["smatch: 1 of 1 graph pairs"] * 2
    assert messages[0] == "MARK " + budget_message("graph matching", messages[0].split("; ", 1)[1].rstrip("."), 10**6)


def test_budget_message_text():
    assert budget_message("graph matching", "the best solution found is used (3, at most 4)", 10**6) == (
        "graph matching: the work budget of 1,000,000 units ran out; the best solution found is used (3, at most 4)."
    )
    text = budget_message("smatch: 3 of 5 graph pairs", "used", 10, 2.5, timed_out=2, of=3, per=" per pair")
    assert text == (
        "smatch: 3 of 5 graph pairs: the work budget of 10 units per pair ran out; used. The time limit of 2.5 s per "
        "pair stopped 2 of them: their figures depend on the machine and its load and are not reproducible."
    )


# ------------------------------------------------------------------------------------------------- standard output
def _run_python(code: str, cwd: Path = TESTS) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def test_capture_drops_c_level_output_and_restores_stdout():
    """``printf`` from C (buffered by stdio) and raw writes to descriptor 1 are dropped; stdout comes back after."""
    proc = _run_python(
        """
        import ctypes, os, threading
        from metametric_jax._budget import solver_output_captured
        libc = ctypes.CDLL(None)
        print("before", flush=True)
        try:
            with solver_output_captured():
                with solver_output_captured():  # nested
                    libc.printf(b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\\n")
                    os.write(1, b"raw noise\\n")
                raise RuntimeError("the solver failed")
        except RuntimeError:
            pass

        def noisy():
            with solver_output_captured():
                libc.printf(b"thread noise\\n")
                os.write(1, b"thread raw\\n")

        threads = [threading.Thread(target=noisy) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("after", flush=True)
        libc.printf(b"c after\\n")
        libc.fflush(None)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before\nafter\nc after\n"


_NOISY_SOLVERS = """
import ctypes, os, sys
import scipy.optimize
import metametric_jax._solvers  # noqa: F401

libc = ctypes.CDLL(None)

def noisy(solve):
    def run(*args, **kwargs):
        # what HiGHS does from C: buffered printf and a raw write, then the solve
        libc.printf(b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\\n")
        os.write(1, b"Running HiGHS\\n")
        os.write(2, b"SOLVER CALLED\\n")
        return solve(*args, **kwargs)
    return run

scipy.optimize.milp = noisy(scipy.optimize.milp)  # the solvers import it where they call it
scipy.optimize.linprog = noisy(scipy.optimize.linprog)
"""


def test_score_amr_json_stays_json_when_the_solver_prints(tmp_path):
    """The command line on pairs that reach HiGHS, with HiGHS printing from C on every call: stdout is the JSON."""
    pairs = _program_pairs(PROGRAM_SEEDS[:4])
    (tmp_path / "g.txt").write_text("\n\n".join(g for _, g in pairs) + "\n")
    (tmp_path / "p.txt").write_text("\n\n".join(p for p, _ in pairs) + "\n")
    argv = ["score", "amr", "--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt"), "--format", "json"]
    proc = _run_python(_NOISY_SOLVERS + f"from metametric_jax.cli import main\nsys.exit(main({argv!r}))\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("SOLVER CALLED") >= 4  # the relaxation and the integer program ran
    got = json.loads(proc.stdout)
    assert got["pairs"] == 4 and "HiGHS" not in proc.stdout


def test_graph_and_soft_latent_matching_print_nothing():
    proc = _run_python(
        _NOISY_SOLVERS
        + """
from dataclasses import dataclass
from metametric_jax import dsl

@dataclass
class Graph:
    nodes: list
    edges: list

print(dsl.graph_matching(dsl.discrete()).score(Graph([0, 1, 1], [(0, 1), (1, 2)]), Graph([0, 1], [(0, 1)])))
"""
    )
    assert proc.returncode == 0, proc.stderr
    assert "SOLVER CALLED" in proc.stderr and proc.stdout == "2.0\n"


def test_score_amr_json_on_generated_pairs(tmp_path):
    """600 generated pairs of 6-22 variables showed HiGHS lines in the JSON; a sample of them, scored by the module."""
    rng = random.Random(21)
    pairs = _program_pairs()
    for seed in range(24):
        n_vars = rng.randint(6, 22)
        pairs.append(unrelated_pair(1000 + seed, n_vars, ("a", "b", "c")[: rng.randint(1, 3)]))
    (tmp_path / "g.txt").write_text("\n\n".join(g for _, g in pairs) + "\n")
    (tmp_path / "p.txt").write_text("\n\n".join(p for p, _ in pairs) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "metametric_jax", "score", "amr", "--gold", str(tmp_path / "g.txt")]
        + ["--pred", str(tmp_path / "p.txt"), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=Path(metametric_jax.__file__).parents[1],
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["pairs"] == len(pairs)
