"""``metametric-jax score ranking``: a TREC run against TREC relevance judgements, with trec_eval's measures."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from metametric_jax.commands import Command, Format, Progress, Resampling


def _measure(value: str) -> str:
    from metametric_jax.tasks.trec_measures import parse_measures

    if value in ("runid", "relstring") or value.startswith("relstring."):  # lines of --format trec (checked there)
        return value
    try:
        parse_measures(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return value


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, found {value!r}")
    return number


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels", metavar="FILE", help="the relevance judgements (query iteration document grade)")
    parser.add_argument("--run", metavar="FILE", help="the run (query Q0 document rank score run_id)")
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        type=_measure,
        metavar="MEASURE",
        help="a measure as trec_eval's -m (map, P.5,10, ndcg_cut.10, recip_rank, bpref, infAP, rbp.p=0.95, ...; "
        "'official', trec_eval's default; 'all_trec' or 'all', its 98 figures; 'set'); repeat for several (default: "
        "official); with --format trec also 'runid' and 'relstring' or 'relstring.N', lines of trec_eval's printout",
    )
    parser.add_argument(
        "-l",
        "--relevance-level",
        dest="level",
        type=_non_negative,
        default=1,
        metavar="LEVEL",
        help="the least grade of a relevant document (trec_eval -l; default 1)",
    )
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="count judged queries absent from the run as empty rankings (trec_eval -c)",
    )
    parser.add_argument(
        "-M",
        "--max-retrieved",
        type=_non_negative,
        default=None,
        metavar="N",
        help="use only the first N documents of each query (trec_eval -M)",
    )
    parser.add_argument("-q", "--per-query", action="store_true", help="also give every query's figures (trec_eval -q)")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``score_files`` and ``printout`` from the command line."""
    return {
        "predictions": args.run,
        "references": args.qrels,
        "measures": args.measures,
        "level": args.level,
        "complete": args.complete,
        "max_retrieved": args.max_retrieved,
        "jobs": getattr(args, "jobs", 1),
    }


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback that shows a bar once the number of queries is known."""
    with contextlib.ExitStack() as stack:
        bars: list[Progress] = []

        def progress(done: int, total: int) -> None:
            if not bars:  # the number of queries is known once the files are read
                wanted = Progress.wanted(args.progress, total)
                bars.append(stack.enter_context(Progress("ranking: scoring queries", total, wanted)))
            bars[0].update(done, total)

        yield progress


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """``--format trec`` reads ``-m`` as trec_eval does; ``runid`` and ``relstring`` are lines of that format only."""
    if getattr(args, "format", None) == "trec":
        from metametric_jax.tasks.trec_format import trec_measures

        try:
            trec_measures(args.measures)
        except ValueError as err:
            parser.error(str(err))
        if args.max_retrieved == 0:
            parser.error(
                "--format trec refuses -M 0: trec_eval 10.0 prints NaN (-nan) there for iprec_at_recall and "
                "11pt_avg, which this package gives as 0"
            )
        return
    lines = [m for m in args.measures or () if m in ("runid", "relstring") or m.startswith("relstring.")]
    if lines:
        parser.error(f"-m {lines[0]}: a line of trec_eval's printout, not a figure; give it with --format trec")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    from metametric_jax.tasks.ranking_files import file_scores

    with _progress(args) as progress:  # per-query items built only for -q
        scores, items, warnings = file_scores(**_options(args), progress=progress, items=bool(args.per_query))
    out: dict[str, Any] = {"all": scores}
    if args.per_query:
        out["per_query"] = {str(item["id"]): {k: v for k, v in item.items() if k != "id"} for item in items}
    return out, warnings


def _trec(args: argparse.Namespace) -> tuple[str, list[str]]:
    from metametric_jax.tasks.trec_format import printout

    with _progress(args) as progress:
        return printout(**_options(args), per_query=args.per_query, progress=progress)


def _value(value: Any) -> str:
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from metametric_jax._table import Table

    table = Table(caption="'all': mean over queries (num_*: sums)")
    for column in ("Measure", "Query", "Value"):
        table.add_column(column, justify="right" if column == "Value" else "left")
    for qid, figures in scores.get("per_query", {}).items():
        for measure, value in figures.items():
            table.add_row(measure, qid, _value(value))
    if "per_query" in scores:
        table.add_section()
    for measure, value in scores["all"].items():
        table.add_row(measure, "all", _value(value))
    return table


def _resample(args: argparse.Namespace) -> Resampling:
    from metametric_jax.tasks.ranking_files import file_rows

    got = file_rows(
        predictions=args.run,
        references=args.qrels,
        measures=args.measures,
        level=args.level,
        complete=args.complete,
        max_retrieved=args.max_retrieved,
        jobs=getattr(args, "jobs", 1),
    )
    return Resampling(got.rows, got.readout, unit="queries", ids=got.ids, warnings=got.warnings, scale=1)


COMMAND = Command(
    name="ranking",
    help="ranked retrieval: a TREC run against qrels (trec_eval's MAP, P@k, nDCG, bpref, ...)",
    description="Score a TREC run file against a TREC qrels file as trec_eval does (ties in score broken by "
    "document id, descending; judged queries with no relevant document kept; unjudged queries left out). "
    "JSON: {all: {measure: value}, per_query: {query: {measure: value}}} with trec_eval's measure names (map, "
    "P_5, ndcg_cut_10, recip_rank, Rprec, bpref, infAP, Rprec_mult_0.20, utility, rbp, unj_5, num_q, ...: every "
    "figure of -m all_trec; NaN, as trec_eval's -nan, is null); per_query only with --per-query. --bootstrap and "
    "compare resample the queries evaluated (the two systems of compare must be evaluated on the same queries: "
    "give -c where a run leaves some out). --format trec prints what trec_eval 10.0 prints for the same options, "
    "byte for byte (metametric_jax.tasks.trec_format): the measures as trec_eval reads -m (a family's first "
    "explicit parameters win: -m P.5 -m P.10 prints P_5 alone), the lines runid and relstring (-m runid, "
    "relstring.N or a nickname that holds them), with -q every query's lines before the run's; --jobs gives the "
    "same printout, --bootstrap and -M 0 are refused (trec_eval has no intervals, and prints NaN for -M 0 where "
    "this package gives 0); a judged query absent from the run without -c is left out with a warning, as trec_eval "
    "9 does (trec_eval 10.0 stops).",
    add_arguments=_add_arguments,
    inputs=("qrels", "run"),
    sample={"qrels": "ranking/sample.qrels", "run": "ranking/sample.run"},
    run=_run,
    table=_table,
    resolve=_resolve,
    resample=_resample,
    formats={
        "trec": Format(
            help="trec_eval 10.0's own printout, byte for byte, for the same -m, -q, -c, -M and -l (-m as "
            "trec_eval reads it, with its lines runid and relstring; no --bootstrap, no -M 0)",
            run=_trec,
        )
    },
)
