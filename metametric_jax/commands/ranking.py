"""``metametric-jax score ranking``: a TREC run against TREC relevance judgements, with trec_eval's measures."""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands import Command, Progress, Resampling


def _measure(value: str) -> str:
    from metametric_jax.tasks.ranking import parse_measures

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
        "official)",
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
    parser.add_argument("--per-query", action="store_true", help="also give every query's figures (trec_eval -q)")


def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    import contextlib

    from metametric_jax.tasks.ranking import score_files

    with contextlib.ExitStack() as stack:
        bars: list[Progress] = []

        def progress(done: int, total: int) -> None:
            if not bars:  # the number of queries is known once the files are read
                wanted = Progress.wanted(args.progress, total)
                bars.append(stack.enter_context(Progress("ranking: scoring queries", total, wanted)))
            bars[0].update(done, total)

        report = score_files(
            predictions=args.run,
            references=args.qrels,
            measures=args.measures,
            level=args.level,
            complete=args.complete,
            max_retrieved=args.max_retrieved,
            progress=progress,
            jobs=getattr(args, "jobs", 1),
        )
    out: dict[str, Any] = {"all": report.scores}
    if args.per_query:
        out["per_query"] = {str(item["id"]): {k: v for k, v in item.items() if k != "id"} for item in report.items}
    return out, list(report.warnings)


def _value(value: Any) -> str:
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _table(scores: dict[str, Any], args: argparse.Namespace) -> Any:
    from rich.table import Table

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
    from metametric_jax.tasks.ranking import file_rows

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
    "give -c where a run leaves some out).",
    add_arguments=_add_arguments,
    inputs=("qrels", "run"),
    sample={"qrels": "ranking/sample.qrels", "run": "ranking/sample.run"},
    run=_run,
    table=_table,
    resample=_resample,
)
