"""``score TASK --bootstrap N`` and ``compare TASK``: intervals and paired tests on the command line.

Both use a command's ``resample(args)`` hook (:class:`metametric_jax.commands.Resampling`): the task's accumulator
over one system's examples. The example ids are the examples' positions in the files, so two systems scored against
the same reference file are paired example by example (see :mod:`metametric_jax.significance`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import Any

from metametric_jax.commands import Command, Progress, Resampling

__all__ = [
    "CHUNK",
    "add_bootstrap_options",
    "add_compare_options",
    "bootstrap_intervals",
    "compare",
    "compare_table",
    "flat_figures",
    "interval_table",
]

#: examples per accumulator update (and progress step)
CHUNK = 256


def add_bootstrap_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap N``, ``--seed S``, ``--level L`` of ``score TASK``."""
    parser.add_argument(
        "--bootstrap",
        type=_positive,
        default=None,
        metavar="N",
        help="add bootstrap confidence intervals from N replicates (Poisson bootstrap over the examples)",
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
        help="paired bootstrap (Koehn 2004) or approximate randomization (Riezler and Maxwell 2005)",
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


def _chunks(n: int) -> Iterator[tuple[int, int]]:
    for lo in range(0, n, CHUNK):
        yield lo, min(n, lo + CHUNK)


def _accumulate(cls: Any, res: Resampling, bar: Progress, done: int, feed: Callable[..., Any]) -> tuple[Any, int]:
    state = cls.empty()
    for lo, hi in _chunks(len(res.references)):
        state = state.merge(feed(lo, hi))
        done += hi - lo
        bar.update(done)
    return state, done


def flat_figures(tree: Any, prefix: str = "") -> dict[str, float]:
    """``{"muc/f1": value, ...}`` of a nested dict of figures (for tables); non-numeric leaves are left out."""
    if isinstance(tree, dict):
        out: dict[str, float] = {}
        for k, v in tree.items():
            out.update(flat_figures(v, f"{prefix}{k}/"))
        return out
    if isinstance(tree, (str, bytes, list, tuple)) or tree is None:
        return {}
    return {prefix.rstrip("/"): float(tree)}


def _unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node = out
        *parents, leaf = path.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def _figures(res: Resampling, tree: Any) -> dict[str, float]:
    import jax

    return flat_figures(res.figures(jax.tree.map(float, tree)))


def bootstrap_intervals(command: Command, args: argparse.Namespace) -> dict[str, Any]:
    """The bootstrap intervals of the task's figures on the input files of ``args``.

    Returns:
        ``{"estimate": figures, "intervals": figures as [low, high], "level", "replicates", "seed"}``.
    """
    from metametric_jax.significance import bootstrap

    assert command.resample is not None
    res = command.resample(args)
    boot = bootstrap(res.metric, replicates=args.bootstrap, seed=args.seed, level=args.confidence)
    n = len(res.references)
    with Progress(f"{command.name}: bootstrap", n, Progress.wanted(args.progress, n)) as bar:
        state, _ = _accumulate(
            boot,
            res,
            bar,
            0,
            lambda lo, hi: boot.from_model_output(
                res.predictions[lo:hi], res.references[lo:hi], example_ids=list(range(lo, hi))
            ),
        )
    out = state.compute()
    estimate, low, high = (_figures(res, out[k]) for k in ("estimate", "low", "high"))
    return {
        "estimate": _unflatten(estimate),
        "intervals": _unflatten({k: [low[k], high[k]] for k in estimate}),
        "level": args.confidence,
        "replicates": args.bootstrap,
        "seed": args.seed,
    }


def compare(command: Command, args: argparse.Namespace, systems: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Paired test of two systems' files against one reference file (see :func:`add_compare_options`).

    Returns:
        ``({"a", "b", "delta", "p_value", ["low", "high"], "method", "samples", "seed", "level"}, warnings)``,
        each figure group shaped like the task's figures.
    """
    import jax

    from metametric_jax.significance import bootstrap, paired_bootstrap, randomization

    assert command.resample is not None
    system_side = command.inputs[1]
    runs = []
    for path in systems:
        setattr(args, system_side, path)
        runs.append(command.resample(args))
    a, b = runs
    if len(a.references) != len(b.references) or (a.ids is not None and a.ids != b.ids):
        raise ValueError(
            f"{systems[0]} and {systems[1]} are scored on different {a.unit} ({len(a.predictions)} vs "
            f"{len(b.predictions)}); a paired test needs both systems on the same {a.unit}"
        )
    n = len(a.references)
    warnings = [] if n else [f"the reference file holds no {a.unit}; every figure is 0"]
    with Progress(f"{command.name}: compare", 2 * n, Progress.wanted(args.progress, n)) as bar:
        if args.method == "bootstrap":
            boot = bootstrap(a.metric, replicates=args.samples, seed=args.seed, level=args.confidence)
            states = []
            done = 0
            for res in (a, b):
                state, done = _accumulate(
                    boot,
                    res,
                    bar,
                    done,
                    lambda lo, hi, r=res: boot.from_model_output(
                        r.predictions[lo:hi], r.references[lo:hi], example_ids=list(range(lo, hi))
                    ),
                )
                states.append(state)
            tests = paired_bootstrap(*states)
            fig_a, fig_b = (s.plain.compute() for s in states)
        else:
            rnd = randomization(a.metric, permutations=args.samples, seed=args.seed)
            state, _ = _accumulate(
                rnd,
                a,
                bar,
                0,
                lambda lo, hi: rnd.from_model_output(
                    a.predictions[lo:hi], b.predictions[lo:hi], a.references[lo:hi], example_ids=list(range(lo, hi))
                ),
            )
            bar.update(2 * n)
            tests = state.compute()
            fig_a, fig_b = state.a.compute(), state.b.compute()

    def part(key: str) -> dict[str, Any]:
        leaf = jax.tree.map(lambda d: d[key], tests, is_leaf=lambda x: isinstance(x, dict) and "p_value" in x)
        return _unflatten(_figures(a, leaf))

    out: dict[str, Any] = {
        "a": _unflatten(_figures(a, fig_a)),
        "b": _unflatten(_figures(a, fig_b)),
        "delta": part("delta"),
        "p_value": part("p_value"),
    }
    if args.method == "bootstrap":
        out["low"], out["high"] = part("low"), part("high")
    out.update({"method": args.method, "samples": args.samples, "seed": args.seed, "level": args.confidence})
    return out, warnings


def interval_table(result: dict[str, Any]) -> Any:
    """A rich table of the bootstrap intervals (scores in %)."""
    from rich.table import Table

    level = f"{100 * result['level']:g}%"
    table = Table(title=f"{level} bootstrap intervals ({result['replicates']} replicates, seed {result['seed']})")
    for column in ("Figure", "Estimate", "Low", "High"):
        table.add_column(column, justify="left" if column == "Figure" else "right")
    intervals = flat_figures_pairs(result["intervals"])
    for path, value in flat_figures(result["estimate"]).items():
        low, high = intervals[path]
        table.add_row(path, f"{100 * value:.2f}", f"{100 * low:.2f}", f"{100 * high:.2f}")
    return table


def flat_figures_pairs(tree: Any, prefix: str = "") -> dict[str, list[float]]:
    """``{"muc/f1": [low, high]}`` of a nested dict of intervals."""
    out: dict[str, list[float]] = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(flat_figures_pairs(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = v
    return out


def compare_table(result: dict[str, Any], systems: list[str]) -> Any:
    """A rich table of a comparison (scores in %)."""
    from rich.table import Table

    caption = (
        f"A = {systems[0]}, B = {systems[1]}; {result['method']}, {result['samples']} samples, seed {result['seed']}"
    )
    table = Table(caption=caption)
    columns = ["Figure", "A", "B", "Delta"]
    if result["method"] == "bootstrap":
        columns.append(f"{100 * result['level']:g}% interval")
    columns.append("p-value")
    for column in columns:
        table.add_column(column, justify="left" if column == "Figure" else "right")
    fa, fb, fd, fp = (flat_figures(result[k]) for k in ("a", "b", "delta", "p_value"))
    lows = flat_figures(result.get("low", {})) if "low" in result else {}
    highs = flat_figures(result.get("high", {})) if "high" in result else {}
    for path in fa:
        row = [path, f"{100 * fa[path]:.2f}", f"{100 * fb[path]:.2f}", f"{100 * fd[path]:+.2f}"]
        if lows:
            row.append(f"[{100 * lows[path]:+.2f}, {100 * highs[path]:+.2f}]")
        row.append(f"{fp[path]:.4f}")
        table.add_row(*row)
    return table
