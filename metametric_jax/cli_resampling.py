r"""``score TASK --bootstrap N`` and ``compare TASK``: intervals and paired tests on the command line.

Both read a command's ``resample(args)`` hook (:class:`metametric_jax.commands.Resampling`): one system's examples as
additive rows and the task's read-out, the function its ``score`` computes its figures with. The figures, their
intervals and the tests are that read-out over the plain, weighted and swapped rows (:mod:`metametric_jax.intervals`,
NumPy only), so ``compare``'s figures equal ``score``'s bit for bit and no JAX compilation is paid.

What is stated with every result (JSON ``"test"``; the table's caption): the method, that p-values are two-sided,
the number of samples, the unit resampled (documents, sentences, queries...), the number of units and the seed.
Warnings (JSON ``"warnings"``; standard error): fewer than :data:`FEW_UNITS` units, p-values at their floor
:math:`1/(B+1)`, and figures whose p-value and interval of the difference disagree.
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax._table import Scale
from metametric_jax.commands import Command, Progress, Resampling

__all__ = [
    "FEW_UNITS",
    "add_bootstrap_options",
    "add_compare_options",
    "bootstrap_intervals",
    "compare",
    "compare_table",
    "interval_table",
]

#: below this many units a warning says the test is unreliable (and for the bootstrap, that randomization is safer)
FEW_UNITS = 30


def add_bootstrap_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap N``, ``--seed S``, ``--level L`` of ``score TASK``."""
    parser.add_argument(
        "--bootstrap",
        type=_positive,
        default=None,
        metavar="N",
        help="add percentile confidence intervals from N Poisson-bootstrap replicates over the task's units "
        "(documents, sentences, graphs, queries)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap weights (default: 0)")
    parser.add_argument(
        "--level", dest="confidence", type=_level, default=0.95, help="confidence level of the intervals (default 0.95)"
    )


def add_compare_options(parser: argparse.ArgumentParser) -> None:
    """``--system A --system B``, ``--method``, ``--samples``, ``--seed``, ``--level`` of ``compare TASK``."""
    parser.add_argument(
        "--system", action="append", metavar="FILE", required=True, help="a system's output file; give exactly two"
    )
    parser.add_argument(
        "--method",
        choices=("bootstrap", "randomization"),
        default="bootstrap",
        help="paired bootstrap (Koehn 2004) or approximate randomization (Riezler and Maxwell 2005); both give "
        "two-sided p-values; randomization is the safer test with few units",
    )
    parser.add_argument("--samples", type=_positive, default=1000, metavar="N", help="replicates or permutations")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default: 0)")
    parser.add_argument(
        "--level", dest="confidence", type=_level, default=0.95, help="confidence level of the delta's interval"
    )


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; found {value!r}") from None
    if n < 2:
        raise argparse.ArgumentTypeError(f"expected an integer >= 2; found {value!r}")
    return n


def _level(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1); found {value!r}") from None
    if not 0.0 < x < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1); found {value!r}")
    return x


def _units(res: Resampling) -> Any:
    """The rows resampled: one per unit (rows of a group summed)."""
    import numpy as np

    from metametric_jax import intervals

    rows = np.asarray(res.rows, np.float64)
    if rows.ndim != 2:
        rows = rows.reshape(len(rows), -1)
    return rows if res.groups is None else intervals.group_rows(rows, res.groups)


def _statement(method: str, res: Resampling, n: int, args: argparse.Namespace, samples: int) -> dict[str, Any]:
    names = {
        "bootstrap": "Poisson bootstrap, percentile interval",
        "paired_bootstrap": "paired bootstrap",
        "randomization": "approximate randomization",
    }
    out: dict[str, Any] = {"method": method, "description": names[method], "sided": "two-sided"}
    out.update({"samples": samples, "unit": res.unit, "n": n, "seed": args.seed})
    if method != "randomization":
        out["level"] = args.confidence
    return out


def _few(n: int, unit: str, method: str) -> list[str]:
    if n >= FEW_UNITS:
        return []
    if method == "paired_bootstrap":
        return [
            f"only {n} {unit}: with fewer than {FEW_UNITS} the paired bootstrap rejects a true null too often "
            "(about 10% at 3-5 units for a 5% test); approximate randomization (--method randomization) is the safer "
            "test here"
        ]
    if method == "randomization":
        return [
            f"only {n} {unit}: with fewer than {FEW_UNITS} the test has little power and its p-values are coarse "
            f"(at most {2 ** min(n, 62)} distinct swaps)"
        ]
    return [f"only {n} {unit}: with fewer than {FEW_UNITS} bootstrap intervals are too narrow; read them with care"]


def bootstrap_intervals(command: Command, args: argparse.Namespace) -> tuple[dict[str, Any], list[str], Scale]:
    """The bootstrap intervals of the task's figures on the input files of ``args``.

    Returns:
        ``({"intervals": figures as [low, high], "stderr", "level", "replicates", "seed", "test"}, warnings, scale)``,
        ``scale`` how the task's tables print its figures.
    """
    from metametric_jax import intervals

    assert command.resample is not None
    res = command.resample(args)
    units = _units(res)
    n = units.shape[0]
    intervals.check_memory(args.bootstrap, n, units.shape[1], f"--bootstrap {args.bootstrap}")
    with Progress(f"{command.name}: bootstrap", 1, Progress.wanted(args.progress, n)) as bar:
        out = intervals.bootstrap(res.readout, units, samples=args.bootstrap, seed=args.seed, level=args.confidence)
        bar.update(1)
    low, high = intervals.flatten(out["low"]), intervals.flatten(out["high"])
    result = {
        "intervals": intervals.unflatten({k: [low[k], high[k]] for k in low}),
        "stderr": out["stderr"],
        "level": args.confidence,
        "replicates": args.bootstrap,
        "seed": args.seed,
        "test": _statement("bootstrap", res, n, args, args.bootstrap),
    }
    warnings = list(_few(n, res.unit, "bootstrap")) if n else [f"no {res.unit}: no interval can be computed"]
    return result, warnings, Scale(res.scale, res.truncated, res.of_counts, res.numbers)


def compare(command: Command, args: argparse.Namespace, systems: list[str]) -> tuple[dict[str, Any], list[str], Scale]:
    """Paired test of two systems' files against one reference file (see :func:`add_compare_options`).

    Returns:
        ``(result, warnings, scale)``: ``result`` is ``{"a", "b", "delta", "p_value", "p_error", ["low", "high"],
        "test", "warnings"}``, each figure group shaped like the task's figures.

    Raises:
        ValueError: when the systems are not scored on the same units, or the reference holds none.
        MemoryError: when the resampling would need more memory than allowed (before allocating).
    """
    import numpy as np

    from metametric_jax import intervals

    assert command.resample is not None
    system_side = command.inputs[1]
    runs: list[Resampling] = []
    for path in systems:
        setattr(args, system_side, path)
        runs.append(command.resample(args))
    # a warning of both runs (the reference's) once, as analyze gives it; one of a single run names its system
    common = set(runs[0].warnings).intersection(*(run.warnings for run in runs[1:]))
    warnings = list(dict.fromkeys(w for w in runs[0].warnings if w in common))
    for path, run in zip(systems, runs):
        warnings.extend(w if path in w else f"{path}: {w}" for w in run.warnings if w not in common)
    a, b = runs
    ua, ub = _units(a), _units(b)
    reference = command.inputs[0]
    if len(a.rows) != len(b.rows) or ua.shape != ub.shape or (a.ids is not None and list(a.ids) != list(b.ids or [])):
        raise ValueError(
            f"{systems[0]} and {systems[1]} are scored on different {a.unit} ({ua.shape[0]} vs {ub.shape[0]}); a "
            f"paired test needs both systems on the same {a.unit}"
        )
    if a.groups is not None and not np.array_equal(np.asarray(a.groups), np.asarray(b.groups)):
        raise ValueError(f"{systems[0]} and {systems[1]} group their examples into different {a.unit}")
    n = ua.shape[0]
    if n == 0:
        ref = getattr(args, reference, None)
        ref = ref if isinstance(ref, str) else " ".join(ref or [])
        raise ValueError(f"{ref} holds no {a.unit}: there is nothing to compare")
    method = "paired_bootstrap" if args.method == "bootstrap" else "randomization"
    intervals.check_memory(args.samples, n, ua.shape[1], f"--samples {args.samples}", systems=2)
    with Progress(f"{command.name}: compare", 1, Progress.wanted(args.progress, n)) as bar:
        if method == "paired_bootstrap":
            kw = {"samples": args.samples, "seed": args.seed, "level": args.confidence}
            out = intervals.paired_bootstrap(a.readout, ua, ub, **kw)
        else:
            out = intervals.randomization(a.readout, ua, ub, samples=args.samples, seed=args.seed)
        bar.update(1)
    warnings.extend(_few(n, a.unit, method))
    warnings.extend(_disagreements(out, args.samples, 1.0 - args.confidence, method))
    out["test"] = _statement(method, a, n, args, args.samples)
    out["warnings"] = warnings
    return out, warnings, Scale(a.scale, a.truncated, a.of_counts, a.numbers)


def _disagreements(out: dict[str, Any], samples: int, alpha: float, method: str) -> list[str]:
    from metametric_jax.intervals import flatten

    p = flatten(out["p_value"])
    floor = 1.0 / (samples + 1)
    messages = []
    at_floor = [k for k, v in p.items() if v is not None and v <= floor * (1 + 1e-12)]
    if at_floor:
        messages.append(
            f"p-values at their floor 1/(N+1) = {floor:.2g} ({', '.join(at_floor[:5])}"
            f"{', ...' if len(at_floor) > 5 else ''}): the true p-value may be smaller; use more --samples"
        )
    if method != "paired_bootstrap":
        return messages
    low, high = flatten(out["low"]), flatten(out["high"])
    odd = []
    for k, v in p.items():
        lo, hi = low[k], high[k]
        if v is None or lo is None or hi is None:
            continue
        excludes_zero = lo > 0 or hi < 0
        if (v < alpha) != excludes_zero:
            odd.append(k)
    if odd:
        messages.append(
            f"the p-value and the {100 * (1 - alpha):g}% interval of the difference disagree on "
            f"{', '.join(odd[:5])}{', ...' if len(odd) > 5 else ''} (one says significant at {alpha:g}, the other "
            "not): the difference is at the edge of significance"
        )
    return messages


def _fmt(value: float | None, scale: Scale, signed: bool = False, path: str = "") -> str:
    return scale.cell(value, signed, path=path)


def _unit(scale: Scale) -> str:
    """The tables' note of how their figures print."""
    note = "as fractions" if not scale.percent else "in %"
    if scale.percent and scale.truncated:
        note += ", truncated to two decimals as scorer.pl prints them"
    if scale.numbers:
        note += f"; {', '.join(scale.numbers)} as a number"
    return note


def interval_table(estimates: dict[str, Any], result: dict[str, Any], scale: Scale) -> Any:
    """A table of the bootstrap intervals, on the task table's scale."""
    from metametric_jax._table import Table
    from metametric_jax.intervals import flatten

    test = result["test"]
    level = f"{100 * result['level']:g}%"
    unit = _unit(scale)
    table = Table(
        title=f"{level} bootstrap intervals ({result['replicates']} replicates over {test['n']} {test['unit']}, "
        f"seed {result['seed']}; {unit})"
    )
    for column in ("Figure", "Estimate", "Low", "High", "Std. error"):
        table.add_column(column, justify="left" if column == "Figure" else "right")
    lows = flatten({k: _first(v, 0) for k, v in result["intervals"].items()})
    highs = flatten({k: _first(v, 1) for k, v in result["intervals"].items()})
    errors = flatten(result["stderr"])
    est = flatten(estimates)
    for path in lows:
        row = [_fmt(x, scale, path=path) for x in (est.get(path), lows[path], highs[path], errors.get(path))]
        table.add_row(path, *row)
    return table


def _first(tree: Any, i: int) -> Any:
    if isinstance(tree, dict):
        return {k: _first(v, i) for k, v in tree.items()}
    return tree[i]


def compare_table(result: dict[str, Any], systems: list[str], scale: Scale) -> Any:
    """A table of a comparison, on the task table's scale, with the test stated in its caption."""
    from metametric_jax._table import Table
    from metametric_jax.intervals import flatten

    test = result["test"]
    caption = (
        f"A = {systems[0]}, B = {systems[1]}; {test['description']}, {test['samples']} samples over {test['n']} "
        f"{test['unit']}, seed {test['seed']}; two-sided p-values ± their Monte Carlo error "
        f"(floor 1/(N+1) = {1 / (test['samples'] + 1):.2g}); figures {_unit(scale)}"
    )
    table = Table(caption=caption)
    columns = ["Figure", "A", "B", "Delta"]
    if "low" in result:
        columns.append(f"{100 * test['level']:g}% interval")
    columns.append("p-value")
    for column in columns:
        table.add_column(column, justify="left" if column == "Figure" else "right")
    fa, fb, fd, fp, fe = (flatten(result[k]) for k in ("a", "b", "delta", "p_value", "p_error"))
    lows = flatten(result["low"]) if "low" in result else {}
    highs = flatten(result["high"]) if "high" in result else {}
    for path in fa:
        row = [path, _fmt(fa[path], scale, path=path), _fmt(fb[path], scale, path=path)]
        row.append(_fmt(fd[path], scale, True, path))
        if "low" in result:
            row.append(f"[{_fmt(lows[path], scale, True, path)}, {_fmt(highs[path], scale, True, path)}]")
        p, e = fp[path], fe[path]
        row.append("-" if p is None else f"{p:.4f} ± {e:.4f}")
        table.add_row(*row)
    return table
