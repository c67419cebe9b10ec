"""Solver budgets that count work, not seconds; the one text of a budget warning; solver output kept off stdout.

A figure is a pure function of its input: the exact solvers behind latent matching (AMR's Smatch, derived latent
metrics) and graph matching stop after a number of **work units** counted in their own steps, never after a number of
seconds, so one input gives one figure on every machine at any load. A unit is about one elementary operation (some
10 ns on an idle current CPU core: the default budget, :data:`DEFAULT_WORK_LIMIT`, takes about a second, two or three
on a busy machine):

* a move of the latent swap search costs the cells of the gain matrix it weighs, :math:`(n_p + n_g)^2`, plus its terms
  and :data:`STEP_UNITS` for the move itself;
* an evaluation of the element search (soft latent matching) costs the cells of the Gram matrix times its smaller side;
* the linear relaxation (HiGHS interior point) costs :data:`IPM_UNITS` per nonzero of its matrix per iteration; it runs
  with an iteration limit set to what the budget leaves, and not at all when that is under :data:`IPM_MIN_ITERATIONS`;
* a move of the set-packing search (graph matching past its integer program) costs :data:`SEARCH_OP_UNITS` per
  variable it reads, a kick :data:`STEP_UNITS` more;
* the integer program (HiGHS branch and cut) costs :data:`NODE_UNITS` per nonzero per branch-and-bound node, its root
  :data:`ROOT_UNITS` per nonzero; it runs with HiGHS's node limit set to what the budget leaves, and not at all when
  its root does not fit.

A wall-clock cap (``time_limit``) may be added; it is off by default, because a figure it stops depends on the machine
and its load: the warning then says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = [
    "DEFAULT_WORK_LIMIT",
    "SEARCH_OP_UNITS",
    "STEP_UNITS",
    "Budget",
    "SolverBudgetWarning",
    "budget_message",
    "charge_program",
    "charge_relaxation",
    "check_limits",
    "program_cost",
    "program_options",
    "relaxation_options",
    "solver_output_captured",
    "warn_budget",
]

#: Work units one exact solver may spend on one problem past its quick certificates (see the module docstring).
DEFAULT_WORK_LIMIT = 100_000_000
#: Units of one move of a local search, besides the cells it weighs.
STEP_UNITS = 2_000
#: Units per variable a move of the set-packing search reads (an interpreted step, some ten elementary operations).
SEARCH_OP_UNITS = 10
#: Units per nonzero of a linear program's matrix per interior-point iteration ...
IPM_UNITS = 50
#: ... which is started only when it affords this many iterations (it usually needs 15 to 30).
IPM_MIN_ITERATIONS = 20
#: Units per nonzero of the integer program's matrix for its root node (cuts, probing, heuristics) ...
ROOT_UNITS = 20_000
#: ... and for each further branch-and-bound node.
NODE_UNITS = 200


class SolverBudgetWarning(UserWarning):
    """A matching problem ran out of its solver budget: the best solution found is used, not proven optimal."""


def check_limits(work_limit: object, time_limit: object, where: str) -> tuple[int | None, float | None]:
    """The budget arguments of ``where``, checked: a positive whole number of work units and positive seconds (or None).

    >>> check_limits(10**6, None, "f")
    (1000000, None)
    """
    if work_limit is not None:
        whole = isinstance(work_limit, int) or (isinstance(work_limit, float) and work_limit.is_integer())
        if isinstance(work_limit, bool) or not whole or not work_limit > 0:  # type: ignore[operator]
            raise ValueError(
                f"{where}: work_limit must be a positive whole number of work units or None; found {work_limit!r}."
            )
        work_limit = int(work_limit)  # type: ignore[call-overload]
    if time_limit is not None:
        number = isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool)
        if not number or not (0 < time_limit < math.inf):  # type: ignore[operator]
            raise ValueError(f"{where}: time_limit must be a positive number of seconds or None; found {time_limit!r}.")
        time_limit = float(time_limit)  # type: ignore[arg-type]
    return work_limit, time_limit  # type: ignore[return-value]


def program_cost(nonzeros: int, nodes: int = 1) -> int:
    """Work units of ``nodes`` branch-and-bound nodes (the root first) of an integer program with ``nonzeros``."""
    return max(int(nonzeros), 1) * (ROOT_UNITS + NODE_UNITS * max(nodes - 1, 0))


def program_options(nonzeros: int, budget: Budget) -> dict[str, Any] | None:
    """HiGHS options that keep an integer program within ``budget`` (``node_limit``, and ``time_limit`` with a clock).

    ``None`` when not even the root node fits (or the clock has run out): the program is not started.
    """
    if budget.clock_ran_out():
        return None
    options: dict[str, Any] = {}
    if math.isfinite(budget.left):
        root = program_cost(nonzeros)
        if root > budget.left:
            return None
        options["node_limit"] = 1 + int((budget.left - root) // (max(int(nonzeros), 1) * NODE_UNITS))
    seconds = budget.seconds_left()
    if seconds is not None:
        options["time_limit"] = max(seconds, 1e-3)
    return options


def charge_program(budget: Budget, nonzeros: int, result: Any) -> None:
    """Charge ``budget`` for the nodes an integer program used (``result`` of ``milp``), and read its clock."""
    nodes = getattr(result, "mip_node_count", None) or 1
    budget.spend(min(program_cost(nonzeros, int(nodes)), budget.left))
    budget.clock_ran_out()


def relaxation_options(nonzeros: int, budget: Budget) -> dict[str, Any] | None:
    """``linprog`` options that keep a linear program within ``budget`` (``maxiter``, and ``time_limit`` with a clock).

    ``None`` when fewer than :data:`IPM_MIN_ITERATIONS` fit (or the clock has run out): the program is not started.
    """
    if budget.clock_ran_out():
        return None
    options: dict[str, Any] = {}
    if math.isfinite(budget.left):
        iterations = int(budget.left // (max(int(nonzeros), 1) * IPM_UNITS))
        if iterations < IPM_MIN_ITERATIONS:
            return None
        options["maxiter"] = iterations
    seconds = budget.seconds_left()
    if seconds is not None:
        options["time_limit"] = max(seconds, 1e-3)
    return options


def charge_relaxation(budget: Budget, nonzeros: int, result: Any) -> None:
    """Charge ``budget`` for the iterations a linear program used (``result`` of ``linprog``), and read its clock."""
    iterations = int(getattr(result, "nit", None) or 1)
    budget.spend(min(max(int(nonzeros), 1) * IPM_UNITS * iterations, budget.left))
    budget.clock_ran_out()


class Budget:
    """The work units left to one problem, and an optional wall-clock deadline (off by default: not reproducible).

    >>> b = Budget(100)
    >>> b.spend(60), b.spend(60), b.left
    (True, False, 40)
    """

    def __init__(self, work_limit: float | None, time_limit: float | None = None) -> None:
        self.left: float = math.inf if work_limit is None else math.floor(work_limit)
        self.deadline = None if time_limit is None else time.monotonic() + float(time_limit)
        self.timed_out = False
        self._parent: Budget | None = None

    def clock_ran_out(self) -> bool:
        """Whether the deadline has passed (never without a ``time_limit``: the clock is not read)."""
        if self._parent is not None:
            return self._parent.clock_ran_out()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def spend(self, units: float) -> bool:
        """Charge ``units`` if they fit (True); False, charging nothing, when the work or the clock has run out."""
        if units > self.left:
            return False
        if self._parent is not None:
            if not self._parent.spend(units):
                return False
        elif self.clock_ran_out():
            return False
        self.left -= units
        return True

    def share(self, fraction: float) -> Budget:
        """A part of ``fraction`` of the units left (whole units); what it spends is spent here too.

        >>> b = Budget(100)
        >>> part = b.share(0.3)
        >>> part.spend(20), part.spend(20), b.left
        (True, False, 80)
        """
        part = Budget(None if math.isinf(self.left) else self.left * fraction)
        part._parent = self
        return part

    def seconds_left(self) -> float | None:
        """Seconds to the deadline (``None`` without one)."""
        root = self
        while root._parent is not None:
            root = root._parent
        return None if root.deadline is None else root.deadline - time.monotonic()


def budget_message(
    subject: str,
    result: str,
    work_limit: int | None,
    time_limit: float | None = None,
    *,
    timed_out: int = 0,
    of: int = 1,
    per: str = "",
) -> str:
    """The text of every solver-budget warning (one home): what ran out, what was used, and whether it reproduces.

    Args:
        subject: what hit the budget (``"graph matching"``, ``"smatch: 2 of 3 graph pairs"``).
        result: what was used instead of the proven optimum.
        work_limit: the work budget (units).
        time_limit: the wall-clock cap in seconds, if any.
        timed_out: how many of the ``of`` problems the clock stopped (their figures are not reproducible).
        of: how many problems ``subject`` counts.
        per: what each budget applies to (``" per pair"``).

    >>> budget_message("graph matching", "the best solution found is used (3, at most 4)", 1000)
    'graph matching: the work budget of 1,000 units ran out; the best solution found is used (3, at most 4).'
    """
    limit = "an unbounded work budget" if work_limit is None else f"the work budget of {work_limit:,} units{per}"
    text = f"{subject}: {limit} ran out; {result}."
    if timed_out:
        them = "it: its figure depends" if of == 1 else f"{timed_out} of them: their figures depend"
        text += (
            f" The time limit of {time_limit:g} s{per} stopped {them} on the machine and its load and "
            f"{'is' if of == 1 else 'are'} not reproducible."
        )
    return text


def warn_budget(
    what: str,
    found: str,
    value: float,
    bound: float,
    work_limit: int | None,
    time_limit: float | None,
    timed_out: bool,
) -> None:
    """Warn that one problem ran out of its budget (the text from :func:`budget_message`), for the solver's caller."""
    bound_text = f", at most {bound:g}" if math.isfinite(bound) else ""
    result = f"the best {found} found is used ({value:g}{bound_text})"
    message = budget_message(what, result, work_limit, time_limit, timed_out=int(timed_out))
    warnings.warn(message, SolverBudgetWarning, stacklevel=4)


# --------------------------------------------------------------------------------------------------- solver output
_capture_lock = threading.Lock()
_capture_depth = 0
_capture_saved: int | None = None


@functools.cache
def _c_fflush() -> Any:
    try:
        return ctypes.CDLL(None).fflush
    except (OSError, AttributeError, TypeError):  # pragma: no cover - no C library to ask (Windows)
        return None


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers, so text a solver printed goes where standard output points now."""
    fflush = _c_fflush()
    if fflush is not None:
        fflush(None)


@contextlib.contextmanager
def solver_output_captured() -> Iterator[None]:
    """Keep what a compiled solver writes to file descriptor 1 off standard output (it is dropped).

    HiGHS may ``printf`` diagnostics from inside ``scipy.optimize.milp``; standard output carries the report only. The
    descriptor is pointed at the null device for the call and restored afterwards, also on an exception; nested and
    concurrent uses share one redirection. Where descriptor 1 cannot be duplicated, nothing is redirected.
    """
    global _capture_depth, _capture_saved
    with _capture_lock:
        if _capture_depth == 0:
            try:
                sys.stdout.flush()
            except (AttributeError, OSError, ValueError):
                pass
            _flush_c_stdio()
            try:
                saved = os.dup(1)
            except OSError:
                saved = None
            if saved is not None:
                try:
                    null = os.open(os.devnull, os.O_WRONLY)
                    try:
                        os.dup2(null, 1)
                    finally:
                        os.close(null)
                except OSError:
                    os.close(saved)
                    saved = None
            _capture_saved = saved
        _capture_depth += 1
    try:
        yield
    finally:
        with _capture_lock:
            _capture_depth -= 1
            if _capture_depth == 0 and _capture_saved is not None:
                _flush_c_stdio()
                os.dup2(_capture_saved, 1)
                os.close(_capture_saved)
                _capture_saved = None
