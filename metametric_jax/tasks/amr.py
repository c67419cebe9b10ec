r"""Smatch for AMR graphs, solved exactly within a work budget, as a JAX accumulator.

Smatch (Cai & Knight, 2013, *Smatch: an Evaluation Metric for Semantic Feature Structures*, ACL) compares two AMR
graphs through their triples under the best one-to-one (partial) mapping :math:`m` of the predicted variables onto
the gold variables:

.. math::

    \mathrm{match}(P, G) = \max_{m} \bigl| m(T(P)) \cap T(G) \bigr|, \qquad
    \mathrm{precision} = \frac{\sum \mathrm{match}}{\sum |T(P)|}, \quad
    \mathrm{recall} = \frac{\sum \mathrm{match}}{\sum |T(G)|}, \quad
    F_1 = \frac{2 \sum \mathrm{match}}{\sum |T(P)| + \sum |T(G)|},

summed over the graph pairs of a corpus (micro average, as the ``smatch`` tool scores a file); ``macro_f1`` of
:class:`AmrMetric` (the task's accumulator, also named ``SmatchMetric``) averages the per-pair F1.

**Triples** :math:`T` are those of the ``smatch`` package (version 1.0.4): ``("instance", var, concept)`` per variable;
``("TOP", root, "top")``; ``(role, var, constant)`` with quotes removed; ``(role, var1, var2)``, where an inverse role
``:X-of`` is stored as ``(X, var2, var1)`` (except ``:consist-of``, ``:prep-on-behalf-of``, ``:prep-out-of``) and
``:mod`` as ``("domain", var2, var1)``. Roles, concepts and constants compare case-insensitively. Where smatch 1.0.4
reads a graph differently, we keep what the graph says:

* ``:mod`` (or any inverse role) with a constant, ``:mod "x"`` or ``:ARG0-of 5``: smatch files the triple under the
  constant and then drops it; here it is the attribute ``("mod", var, "x")``;
* a quoted constant with spaces, ``:op1 "New York"``: smatch keeps the first word (``New``); here ``New York``;
* a triple repeated within one graph is matched at most once per copy (a multiset intersection), where smatch counts
  every pair of copies (so its match may exceed the number of triples);
* alignment markers of parser output (``boy~e.3``, ``:ARG0~e.2``, ``"Paris"~8``) are removed before scoring by
  default (``keep_alignments=True`` keeps them as part of the strings, as smatch does).

**The maximum is exact** where it can be proven (:func:`metametric_jax.matching.solve_latent`): linear assignment
when no relation triples can match; else depth-first branch and bound; else the linear relaxation of Cai & Knight's
integer program (Section 3, tightened), whose rounding is optimal when it reaches the relaxation's bound; else a
swap local search and the integer program (HiGHS) within ``work_limit`` work units per pair (default
:data:`DEFAULT_WORK_LIMIT`, a second or two; counted in the solver's own steps, see :mod:`metametric_jax._budget`).
When the budget runs out (large, nearly symmetric graph pairs: many variables with few distinct concepts), the best
mapping found is used, a lower bound on the true Smatch; the pair is flagged (``optimal`` False in per-pair results,
``pairs_optimal`` counts the others) and a :class:`SolverBudgetWarning` is issued once per call. The budget counts
work, not seconds, so every figure, flagged pairs' included, is the same on every machine at any load. An extra
wall-clock cap (``time_limit``, off by default) makes the pairs it stops depend on the machine: the warning says so.

The ``smatch`` package searches the mapping by hill climbing with random restarts, which may stop at a local optimum:
our match is never below its match, and equal where its search finds the optimum.

:data:`AmrMetric` accumulates the matched, predicted and reference triples of graph pairs: :func:`state_report` reads
a state in float64 through :func:`readout`, the one read-out of :func:`score`, :func:`score_files` and the command line
(the same figures bit for bit, the counts being exact), and ``compute()`` is its jittable float32 twin for training
loops. The state carries no fine-grained counts, so their figures come from :func:`score` only. The triples and their
exact match (:func:`smatch_triples`, :func:`smatch_match`) live in :mod:`metametric_jax.tasks.amr_smatch`.

>>> score(["(w / want-01 :ARG0 (b / boy))"], ["(w / want-01 :ARG0 (g / girl))"])["f1"]
0.75
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import penman

from metametric_jax._portable import class_factory
from metametric_jax.errors import InputFormatError
from metametric_jax.inputs import check_lengths
from metametric_jax.matching import DEFAULT_WORK_LIMIT, SolverBudgetWarning, budget_message, check_limits, solve_latent
from metametric_jax.normalizer import prf
from metametric_jax.report import Report
from metametric_jax.tasks import amr_fine
from metametric_jax.tasks.amr_smatch import (
    SmatchAlignment,
    Triple,
    _tree_triples,
    smatch_match,
    smatch_triples,
)
from metametric_jax.tasks.readers.penman import parse_tree, read_penman, read_penman_texts

__all__ = [
    "AmrMetric",  # noqa: F822 - built on first use, see __getattr__
    "SmatchMetric",  # noqa: F822 - AmrMetric's other name
    "smatch_metric",
    "SmatchAlignment",
    "SolverBudgetWarning",
    "smatch_triples",
    "smatch_match",
    "score",
    "score_files",
    "read_files",
    "item_rows",
    "readout",
    "state_report",
    "DEFAULT_WORK_LIMIT",
]


# ------------------------------------------------------------------------------------------------------------ metric
def _budget_warning(flagged: int, total: int, work_limit: int | None, time_limit: float | None, timed_out: int) -> str:
    result = (
        "their best mapping found was used (a lower bound on Smatch); raise the budget (work_limit=, --work-limit) "
        "to prove more pairs optimal"
    )
    subject = f"smatch: {flagged} of {total} graph pairs"
    return budget_message(subject, result, work_limit, time_limit, timed_out=timed_out, of=flagged, per=" per pair")


def _batch_stats(
    predictions: Sequence[Any],
    references: Sequence[Any],
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
) -> np.ndarray:
    rows, flagged, timed_out = [], 0, 0
    for i, (p, r) in enumerate(zip(predictions, references)):
        found = smatch_match(
            smatch_triples(p, label=f"<prediction[{i}]>"),
            smatch_triples(r, label=f"<reference[{i}]>"),
            work_limit=work_limit,
            time_limit=time_limit,
        )
        flagged += not found.optimal
        timed_out += found.timed_out
        rows.append((*found[:3], not found.optimal))
    if flagged:
        message = _budget_warning(flagged, len(rows), work_limit, time_limit, timed_out)
        warnings.warn(message, SolverBudgetWarning, stacklevel=3)
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


_SMATCH_DOC = r"""Smatch (Cai & Knight, 2013) as an accumulator: the exact optimal mapping, micro and macro averages.

    Per pair the statistics are :math:`(\mathrm{match}, |T(P)|, |T(G)|)` (see :mod:`metametric_jax.tasks.amr`), so

    .. math::

        \mathrm{precision} = \frac{\sum \mathrm{match}}{\sum |T(P)|}, \quad
        \mathrm{recall} = \frac{\sum \mathrm{match}}{\sum |T(G)|}, \quad
        F_1 = \frac{2 \sum \mathrm{match}}{\sum |T(P)| + \sum |T(G)|}

    over the summed counts (micro, as the smatch tool scores a file); ``macro_f1`` averages the per-pair F1.

    State attributes: ``micro`` (summed ``xy`` = matched, ``xx`` = predicted, ``yy`` = reference triples),
    ``macro`` (summed per-pair precision, recall, F1, Jaccard), ``count`` (pairs) and ``tally["not_optimal"]``
    (pairs whose work budget ran out, scored with the best mapping found; ``compute()["not_optimal"]``), which merges
    like the sums, across batches and processes. Predictions and references are PENMAN strings, ``penman.Tree`` /
    ``penman.Graph`` objects or triple lists; alignment markers are removed.

    Source: Cai & Knight, "Smatch: an Evaluation Metric for Semantic Feature Structures", ACL 2013.

    >>> from metametric_jax.tasks.amr import AmrMetric
    >>> state = AmrMetric.from_model_output(["(b / boy)"], ["(b / boy :mod (t / tall))"])
    >>> round(float(state.compute()["f1"]), 4)
    0.6667
    """


def smatch_metric(*, work_limit: int | None = DEFAULT_WORK_LIMIT, time_limit: float | None = None) -> Any:
    """The Smatch accumulator class with another budget per pair (:data:`AmrMetric` has the default).

    Args:
        work_limit: work units per graph pair for the search past the quick certificates of optimality (``None``:
            unbounded, exact on every pair however long it takes). Pairs that hit the budget are scored with the best
            mapping found, and a :class:`SolverBudgetWarning` says how many.
        time_limit: an extra wall-clock cap in seconds per pair (default ``None``). Pairs it stops depend on the
            machine and its load: their figures are not reproducible, and the warning says so.

    The class is made once per budget, so states of one budget merge. Budgets change only the flagged pairs.

    >>> from metametric_jax.tasks.amr import AmrMetric, smatch_metric
    >>> Thorough = smatch_metric(work_limit=10**9)
    >>> Thorough is smatch_metric(work_limit=10**9) and Thorough is not AmrMetric
    True
    """
    return _smatch_metric(*check_limits(work_limit, time_limit, "smatch_metric"))


@class_factory
def _smatch_metric(work_limit: int | None = DEFAULT_WORK_LIMIT, time_limit: float | None = None) -> Any:
    from metametric_jax import stats_metric

    budget = "" if work_limit == DEFAULT_WORK_LIMIT else f" (work budget {work_limit} units per pair)"
    budget += "" if time_limit is None else f" (time limit {time_limit:g} s per pair: not reproducible)"
    return stats_metric(
        batch_stats=functools.partial(_batch_stats, work_limit=work_limit, time_limit=time_limit),
        normalizer="f1",
        name="smatch",
        class_name="AmrMetric",
        tallies=("not_optimal",),
        doc=_SMATCH_DOC.replace("as an accumulator:", f"as an accumulator{budget}:", 1),
    )


__test__ = {"AmrMetric": _SMATCH_DOC}  # its example runs with the module's doctests


def __getattr__(name: str) -> Any:
    # The accumulator class is built on first use, so reading and scoring files does not import JAX.
    if name in ("AmrMetric", "SmatchMetric"):  # one class, the task's name and Smatch's
        return _smatch_metric(DEFAULT_WORK_LIMIT, None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "AmrMetric", "SmatchMetric"])


# ------------------------------------------------------------------------------------------------------------ scoring
_FIGURES = ("precision", "recall", "f1")


def _check_options(options: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"{where}() got unexpected keyword argument(s) {', '.join(unknown)}; valid: {', '.join(allowed)}"
        )


def item_rows(items: Sequence[dict[str, Any]], fine_grained: bool = False) -> np.ndarray:
    """The additive rows of :func:`score_files`'s per-pair ``items``: float64 ``(pairs, 3)``.

    Each pair's ``(matched, predicted, reference)``, then with ``fine_grained`` each fine-grained score's, in the order
    of ``amr_fine.NAMES`` (``(pairs, 3 + 3 * len(amr_fine.NAMES))``).
    """
    names = amr_fine.NAMES if fine_grained else ()
    rows = np.zeros((len(items), 3 + 3 * len(names)))
    for i, item in enumerate(items):
        counts = [item] + [item["fine_grained"][name] for name in names]
        rows[i] = [c[k] for c in counts for k in ("matched", "predicted", "reference")]
    return rows


def readout(totals: np.ndarray | Sequence[float], fine_grained: bool = False) -> dict[str, Any]:
    """Corpus Smatch ``{"precision", "recall", "f1"}`` of totals laid out as :func:`item_rows`.

    With ``fine_grained``, also one such dict per fine-grained score. The read-out of :func:`score` and
    :func:`score_files` (:func:`~metametric_jax.normalizer.prf`, 0.0 where a denominator is 0); any non-negative real
    totals are read (the bootstrap weights graph pairs).
    """
    values = [float(x) for x in totals]
    names = amr_fine.NAMES if fine_grained else ()
    if len(values) != 3 + 3 * len(names):
        raise ValueError(f"expected {3 + 3 * len(names)} Smatch totals; found {len(values)}.")
    out: dict[str, Any] = prf(*values[:3])
    for k, name in enumerate(names, start=1):
        out[name] = prf(*values[3 * k : 3 * k + 3])
    return out


def state_report(state: Any) -> dict[str, Any]:
    """The Smatch figures of a (reduced) :data:`AmrMetric` state (any budget) in float64, as :func:`score`'s.

    :func:`readout` of the state's exact totals (matched, predicted, reference triples): ``{"precision", "recall",
    "f1"}``, :func:`score`'s figures bit for bit; ``compute()`` is the jittable float32 twin.

    Raises:
        TypeError: if ``state`` is not a state of a Smatch accumulator.
    """
    config = getattr(state, "config", None)
    if getattr(config, "name", None) != "smatch" or not callable(getattr(state, "totals", None)):
        raise TypeError(f"state_report expects an AmrMetric state; found {type(state).__name__}.")
    t = state.totals()
    return readout([t["xy"], t["xx"], t["yy"]])


class _Scorer:
    """Accumulates per-pair Smatch (and fine-grained) counts into corpus figures and per-pair items."""

    def __init__(self, options: dict[str, Any], where: str) -> None:
        _check_options(options, ("keep_alignments", "fine_grained", "work_limit", "time_limit"), where)
        self.mode = amr_fine.fine_grained_mode(options.get("fine_grained", False), where)
        self.fine_grained = self.mode is not None
        self.keep_alignments = bool(options.get("keep_alignments", False))
        limits = options.get("work_limit", DEFAULT_WORK_LIMIT), options.get("time_limit")
        self.work_limit, self.time_limit = check_limits(*limits, where)
        self.totals = [0, 0, 0]
        self.fine: dict[str, list[int]] = {name: [0, 0, 0] for name in amr_fine.NAMES} if self.fine_grained else {}
        self.items: list[dict[str, Any]] = []
        self.flagged = self.timed_out = 0
        self._clock = False  # whether the clock stopped a problem of the current pair

    def add(self, ident: str, pred: list[Triple], gold: list[Triple], graphs: tuple[Any, Any] = (None, None)) -> None:
        self.record(self.pair(ident, pred, gold, graphs))

    def pair(self, ident: str, pred: list[Triple], gold: list[Triple], graphs: tuple[Any, Any] = (None, None)) -> dict:
        """One pair's item (its figures, counts, ``optimal``; ``timed_out`` with a time limit), scored alone."""
        self._clock = False
        found = smatch_match(pred, gold, work_limit=self.work_limit, time_limit=self.time_limit)
        self._clock = found.timed_out
        item: dict[str, Any] = {"id": ident, **prf(*found[:3])}
        item.update(matched=found.matched, predicted=found.predicted, reference=found.reference)
        item.update(optimal=found.optimal, upper_bound=found.upper_bound)
        optimal = found.optimal
        if self.fine_grained:
            fine = {}
            if self.mode == "normalized":
                counts = amr_fine.fine_grained_counts(pred, gold, self._match)
            else:  # amr-evaluation reads the graphs as written
                counts = amr_fine.amr_evaluation_counts(*graphs, self._solve, keep_alignments=self.keep_alignments)
            for name, (m, p, g, ok) in counts.items():
                optimal = optimal and ok
                fine[name] = {**prf(m, p, g), "matched": m, "predicted": p, "reference": g}
            item["fine_grained"] = fine
            item["optimal"] = optimal
        item["timed_out"] = self._clock
        return item

    def record(self, item: dict[str, Any]) -> None:
        """Add a pair's item (from :meth:`pair`, here or in a worker process) to the totals, in order."""
        self.totals = [
            self.totals[0] + item["matched"],
            self.totals[1] + item["predicted"],
            self.totals[2] + item["reference"],
        ]
        for name, counts in item.get("fine_grained", {}).items():
            total = self.fine[name]
            self.fine[name] = [
                total[0] + counts["matched"],
                total[1] + counts["predicted"],
                total[2] + counts["reference"],
            ]
        clock = bool(item["timed_out"])
        if self.time_limit is None:
            del item["timed_out"]
        self.flagged += not item["optimal"]
        self.timed_out += clock
        self.items.append(item)

    def _match(self, pred: list[Triple], gold: list[Triple]) -> tuple[int, int, int, bool]:
        found = smatch_match(pred, gold, work_limit=self.work_limit, time_limit=self.time_limit)
        self._clock = self._clock or found.timed_out
        return found.matched, found.predicted, found.reference, found.optimal

    def _solve(
        self, n_pred: int, n_gold: int, unary: dict[int, int], pairwise: dict[tuple[int, int], int]
    ) -> tuple[int, bool]:
        found = solve_latent(n_pred, n_gold, unary, pairwise, work_limit=self.work_limit, time_limit=self.time_limit)
        self._clock = self._clock or found.timed_out
        return int(round(found.value)), found.optimal

    def graph(self, graph: Any, label: str) -> Any:
        """The graph as written, for amr-evaluation's reading (``None`` when not asked)."""
        if self.mode != "amr-evaluation":
            return None
        if isinstance(graph, str):
            return parse_tree(graph, label, 1)
        if isinstance(graph, penman.Tree):
            return graph
        if isinstance(graph, penman.Graph):
            return penman.configure(graph)
        raise TypeError(
            f"{label}: fine_grained='amr-evaluation' reads a graph as written (a PENMAN string, a penman.Tree or a "
            "penman.Graph); score triple lists with fine_grained='normalized'."
        )

    def scores(self) -> dict[str, Any]:
        figures = readout([*self.totals, *(c for counts in self.fine.values() for c in counts)], self.fine_grained)
        out: dict[str, Any] = {k: figures[k] for k in _FIGURES}
        out.update(matched=self.totals[0], predicted=self.totals[1], reference=self.totals[2])
        out.update(pairs=len(self.items), pairs_optimal=len(self.items) - self.flagged)
        if self.time_limit is not None:  # pairs whose figures depend on the machine
            out["pairs_timed_out"] = self.timed_out
        for name in self.fine:
            out[name] = figures[name]
        return out

    def warnings(self) -> list[str]:
        if not self.flagged:
            return []
        return [_budget_warning(self.flagged, len(self.items), self.work_limit, self.time_limit, self.timed_out)]


def score(predictions: Sequence[Any], references: Sequence[Any], **options: Any) -> dict[str, Any]:
    """Corpus Smatch of graph pairs (micro average over pairs, as the ``smatch`` tool scores a file).

    Args:
        predictions: predicted graphs: PENMAN strings, ``penman.Tree`` / ``penman.Graph`` objects or triple lists.
        references: the reference graphs, in the same order.
        **options: ``keep_alignments`` (default False: alignment markers are removed), ``fine_grained`` (default
            False; True or ``"amr-evaluation"``: add the scores of Damonte et al. (2017) as their amr-evaluation
            scripts define them, with the optimal mapping; ``"normalized"``: the graph-normalized reading, which also
            takes triple lists; see :mod:`metametric_jax.tasks.amr_fine`; the headline Smatch is the same),
            ``work_limit`` (work units per pair, default :data:`DEFAULT_WORK_LIMIT`; ``None``: unbounded),
            ``time_limit`` (an extra wall-clock cap in seconds per pair, default ``None``: figures it stops are not
            reproducible).

    Returns:
        ``{"precision", "recall", "f1", "matched", "predicted", "reference", "pairs", "pairs_optimal"}`` (``f1`` is
        the headline), plus one ``{"precision", "recall", "f1"}`` per fine-grained score when asked, and
        ``pairs_timed_out`` (pairs the clock stopped) with a ``time_limit``.

    Raises:
        ValueError: lists of different lengths, a budget that is not positive, or an unknown ``fine_grained``.
            TypeError: an unknown option, a graph of another type, or a triple list with amr-evaluation's
            fine-grained scores.

    >>> result = score(["(b / boy)", "(g / go-02 :ARG0 (b / boy))"], ["(b / boy)", "(g / go-01 :ARG0 (b / boy))"])
    >>> result["matched"], result["predicted"], result["reference"], round(result["f1"], 4)
    (5, 6, 6, 0.8333)
    """
    scorer = _Scorer(options, "score")
    predictions, references = list(predictions), list(references)
    check_lengths(predictions, references, "amr", "graph")
    keep = scorer.keep_alignments
    for i, (p, r) in enumerate(zip(predictions, references)):
        pred = smatch_triples(p, label=f"<prediction[{i}]>", keep_alignments=keep)
        gold = smatch_triples(r, label=f"<reference[{i}]>", keep_alignments=keep)
        scorer.add(
            str(i + 1), pred, gold, (scorer.graph(p, f"<prediction[{i}]>"), scorer.graph(r, f"<reference[{i}]>"))
        )
    for message in scorer.warnings():
        warnings.warn(message, SolverBudgetWarning, stacklevel=2)
    return scorer.scores()


def _read_pairs(predictions: str | Path, references: str | Path, parse: bool = True) -> tuple[list[Any], list[Any]]:
    read = read_penman if parse else read_penman_texts
    gold = read(references)
    pred = read(predictions)
    if len(gold) != len(pred):
        raise InputFormatError(
            str(predictions),
            None,
            f"the predicted file has {len(pred)} graphs but the reference file {references} has {len(gold)}; "
            "expected one predicted graph per reference graph, in the same order",
        )
    return pred, gold


def read_files(
    *, predictions: str | Path, references: str | Path, keep_alignments: bool = False
) -> tuple[list[list[Triple]], list[list[Triple]], list[str]]:
    """The Smatch triples of two PENMAN files, graph by graph: ``(predicted, reference, ids)``.

    ``ids`` name the pairs as :func:`score_files` does (a ``# ::id`` of the reference graph, else the position). The
    triple lists are what :data:`AmrMetric` accumulates.

    Raises:
        InputFormatError: an unparsable graph, or files with different numbers of graphs.
    """
    pred, gold = _read_pairs(predictions, references)
    return (
        [_tree_triples(p.tree, str(predictions), p.line, keep_alignments) for p in pred],
        [_tree_triples(g.tree, str(references), g.line, keep_alignments) for g in gold],
        [g.id or str(k) for k, g in enumerate(gold, start=1)],
    )


def _pair_items(
    options: dict[str, Any],
    idents: Sequence[str],
    predicted: Sequence[tuple[Any, str, int | None]],
    gold: Sequence[tuple[Any, str, int | None]],
) -> list[dict[str, Any]]:
    """The items of graph pairs read from files (``(text, path, line)`` each), parsed and scored alone.

    This runs in a worker process with ``--jobs``. A pair's reference graph is parsed first, as :func:`read_files`
    reads the reference file first.
    """
    scorer = _Scorer(options, "score_files")
    keep = scorer.keep_alignments
    out = []
    for ident, p, g in zip(idents, predicted, gold):
        g_tree = parse_tree(*g)
        p_tree = parse_tree(*p)
        out.append(
            scorer.pair(
                ident, _tree_triples(p_tree, *p[1:], keep), _tree_triples(g_tree, *g[1:], keep), (p_tree, g_tree)
            )
        )
    return out


def score_files(
    *,
    predictions: str | Path,
    references: str | Path,
    progress: bool | Callable[[int, int], None] = False,
    jobs: int = 1,
    **options: Any,
) -> Report:
    """Corpus Smatch of two PENMAN files, graph by graph, with per-pair figures.

    Args:
        predictions: the predicted graphs (blank-line separated, ``#`` comment lines skipped).
        references: the gold graphs, in the same order.
        progress: a callback ``(done, total)`` called as pairs are scored (or True: a count on standard error).
        jobs: worker processes that score the pairs (0: every core; default 1: this process); every figure and
            item is the same for every number (see :mod:`metametric_jax.parallel`).
        **options: as for :func:`score` (``keep_alignments``, ``fine_grained``, ``work_limit``, ``time_limit``).

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score` returns them; ``items`` one dict per pair
        (``id`` from a ``# ::id`` comment of the gold graph, else its 1-based position; ``precision``, ``recall``,
        ``f1``, ``matched``, ``predicted``, ``reference``, ``optimal``, ``upper_bound``, ``fine_grained`` when asked,
        ``timed_out`` with a ``time_limit``); ``warnings`` (pairs that hit the budget, pairs whose ``# ::id`` differ,
        an empty reference file).

    Raises:
        InputFormatError: an unparsable graph, or files with different numbers of graphs.
    """
    from metametric_jax import parallel

    scorer = _Scorer(options, "score_files")
    pred, gold = _read_pairs(predictions, references, parse=False)  # each pair is parsed where it is scored
    shown = [0]

    def report(done: int, total: int) -> None:
        if callable(progress):
            progress(done, total)
        elif progress and (done // 100 > shown[0] // 100 or done == total):
            print(f"smatch: {done}/{total} graph pairs", file=sys.stderr)
        shown[0] = done

    items = parallel.map_items(
        functools.partial(_pair_items, options),
        [g.id or str(k) for k, g in enumerate(gold, start=1)],
        [(p.text, str(predictions), p.line) for p in pred],
        [(g.text, str(references), g.line) for g in gold],
        jobs=jobs,
        chunk_size=None if jobs != 1 else 1,
        progress=report if progress else None,
        preload=[__name__],
    )
    for item in items:
        scorer.record(item)
    messages = scorer.warnings()
    mismatched = [(k, p.id, g.id) for k, (p, g) in enumerate(zip(pred, gold), 1) if p.id and g.id and p.id != g.id]
    if mismatched:
        k, p_id, g_id = mismatched[0]
        messages.append(
            f"{len(mismatched)} graph pairs have different '# ::id's in {predictions} and {references} (the first: "
            f"graph {k}, {p_id!r} vs {g_id!r}); graphs are paired by position"
        )
    if not gold:
        messages.append(f"{references} holds no graphs; every figure is 0")
    return Report(scorer.scores(), scorer.items, messages)
