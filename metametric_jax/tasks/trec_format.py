r"""trec_eval's own printout of a run scored against qrels: ``metametric-jax score ranking --format trec``.

The figures are those of :func:`metametric_jax.tasks.ranking.score_files` (trec_eval 10.0's, to the last bit); this
module prints them as trec_eval prints them, byte for byte, so that scripts that parse trec_eval's output read ours
unchanged. The layout (trec_eval 10.0, read from its printouts in ``tests/data/ranking/expected``):

* one line per figure: the measure's name left-aligned and padded with spaces to 22 characters (a longer name is
  not cut), a tab, the query id (``all`` for the whole run), a tab, the value, a newline;
* the counts (``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``) as whole numbers,
  every other figure as C's ``%6.4f`` (four decimals, right-aligned to 6 characters: ``-412.6667``, ``0.1785``); a
  NaN (``Rndcg`` at relevance level 0) as ``  -nan``, as trec_eval prints it on x86-64 Linux (glibc prints the sign
  of the NaN that ``0.0 / 0.0`` gives there);
* with ``-q`` (``per_query``), every query's lines first, queries in trec_eval's order (query ids compared byte by
  byte), each query's measures in trec_eval's order, without ``runid``, ``num_q``, ``gm_map`` and ``gm_bpref`` (run
  figures only); then the run's lines (``all``), without ``relstring`` (query figures only);
* the measures in trec_eval's order whatever the order of the ``-m`` options, each family's cut-offs in increasing
  order (:func:`~metametric_jax.tasks.trec_measures.parse_measures`), and only the measures asked for;
* ``runid`` (the run's name: the last line's ``run_id`` field) first among the run's lines when a nickname that holds
  it is asked for (``official``, trec_eval's default, ``set`` and ``all_trec``); its value printed as read;
* ``relstring`` (with ``all_trec``), between the ``P`` cut-offs and ``recall``: the grades of the first 10 documents
  ranked (fewer if fewer are ranked, after ``-M``), quoted, one character each: the grade if judged 0-9, ``>`` above
  9, ``.`` for a document judged with a negative grade (in the pool, unjudged), ``-`` for one not judged.

Example:
    >>> trec_line("map", "all", 0.17854506039656948, "mean")
    'map                   \tall\t0.1785\n'
    >>> trec_line("num_ret", "301", 500, "sum")
    'num_ret               \t301\t500\n'
    >>> relstring(["d1", "d2", "d3", "d4"], {"d1": 2, "d3": -1, "d4": 12})
    "'2-.>'"
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

__all__ = ["printout", "relstring", "trec_line", "trec_measures", "TrecMeasures", "WIDTH", "RELSTRING_LENGTH"]

#: trec_eval's width of the measure name column (``%-22s``).
WIDTH = 22

#: The documents of a ``relstring``: trec_eval's default parameter (``relstring.10``).
RELSTRING_LENGTH = 10

# trec_eval's nicknames that hold ``runid`` and ``relstring`` (``all`` is this package's name for ``all_trec``).
_WITH_RUNID = ("official", "set", "all_trec", "all")
_WITH_RELSTRING = ("all_trec", "all")


class TrecMeasures(NamedTuple):
    """What trec_eval prints for its ``-m`` options (:func:`trec_measures`).

    Attributes:
        measures: the measure names to score, as :func:`~metametric_jax.tasks.trec_measures.parse_measures` reads
            them, giving trec_eval's measures and parameters.
        runid: whether the run's name is printed.
        relstring: the printed name of the ``relstring`` lines (``relstring``, ``relstring_5``), or ``None``.
        length: the documents of a ``relstring``.
    """

    measures: list[str]
    runid: bool
    relstring: str | None
    length: int


def _family(spec: str) -> tuple[str, str]:
    """``(family, parameters)`` of a measure name: ``P.5,10`` -> ``("P", "5,10")``; ``P_5`` -> ``("P", "5")``."""
    from metametric_jax.tasks.trec_measures import MEASURES

    family, _, params = spec.partition(".")
    if family not in MEASURES and family != "relstring":
        head, _, tail = spec.rpartition("_")
        if head in MEASURES and tail:
            return head, tail
    return family, params


def trec_measures(measures: Sequence[str] | str | None) -> TrecMeasures:
    """trec_eval's reading of its ``-m`` options, as the names this package scores, and its extra lines.

    trec_eval gives a family the first parameters given to it explicitly (``-m P.5 -m P.10``, ``-m official -m P.5`` and
    ``-m P.5 -m P`` all print ``P_5`` alone) and its default parameters only when none are given;
    :func:`~metametric_jax.tasks.trec_measures.parse_measures` merges cut-offs given in several names (and refuses, as
    trec_eval, one name that repeats a cut-off, ``P.5,5``), so the names are rewritten here: each family's first
    explicit parameters first, the family's other explicit parameters and bare names left out. ``runid`` and
    ``relstring`` (``relstring.N``: the first N documents, default 10) are lines of the printout, not figures: they are
    taken out of the names.

    Raises:
        ValueError: repeated cut-offs, a bad ``relstring`` length, or what ``parse_measures`` refuses.

    >>> trec_measures(["official", "P.5", "P.10"])
    TrecMeasures(measures=['P.5', 'official'], runid=True, relstring=None, length=10)
    >>> trec_measures(["all_trec", "relstring.5"]).relstring
    'relstring_5'
    """
    from metametric_jax.tasks.trec_measures import parse_measures

    names = ["official"] if measures is None else [measures] if isinstance(measures, str) else list(measures)
    runid = any(n in _WITH_RUNID for n in names) or "runid" in names
    relstring = "relstring" if any(n in _WITH_RELSTRING for n in names) else None
    length = RELSTRING_LENGTH
    explicit: dict[str, str] = {}
    for spec in names:
        family, params = _family(spec)
        if spec == "runid" or not params or family in explicit:
            continue
        explicit[family] = spec
        if family == "relstring":
            if not (params.isascii() and params.isdigit()):
                raise ValueError(
                    f"measure {spec!r}: the parameter of relstring is a number of documents, as in relstring.20."
                )
            relstring, length = f"relstring_{params}", int(params)
    if "relstring" in names and relstring is None:
        relstring = "relstring"
    kept = [spec for family, spec in explicit.items() if family != "relstring"]
    for spec in names:
        family, params = _family(spec)
        if spec not in ("runid", "relstring") and family != "relstring" and family not in explicit:
            kept.append(spec)
    parse_measures(kept)  # unknown names and bad parameters, with its messages
    return TrecMeasures(kept, runid, relstring, length)


def _value(value: Any, kind: str) -> str:
    """A figure as trec_eval prints it: ``%ld`` for a count, ``%6.4f`` otherwise (``  -nan`` for NaN)."""
    if kind == "sum":
        return str(int(value))
    value = float(value)
    return "  -nan" if value != value else f"{value:6.4f}"  # NaN: the one value unequal to itself


def trec_line(name: str, qid: str, value: Any, kind: str) -> str:
    """One line of trec_eval's printout: ``name`` padded to 22, tab, ``qid``, tab, the value, newline.

    Args:
        name: the printed name of the measure (``P_5``).
        qid: the query id, or ``all``.
        value: the figure.
        kind: the measure's kind (:func:`~metametric_jax.tasks.ranking_queries.measure_kind`): ``"sum"`` prints a
            whole number, anything else ``%6.4f``.
    """
    return f"{name:<{WIDTH}}\t{qid}\t{_value(value, kind)}\n"


def relstring(ranking: Sequence[str], judgements: Mapping[str, int], length: int = RELSTRING_LENGTH) -> str:
    """trec_eval's ``relstring`` of a query, quoted: one character per document of the first ``length`` ranked.

    A judged grade 0-9 is printed as its digit, a grade above 9 as ``>``, a negative grade (in the pool, unjudged)
    as ``.``, a document with no judgement as ``-``.

    Raises:
        ValueError: the ranking lists a document twice (trec_eval stops on such a run, as the figures do).
    """
    from metametric_jax.tasks.ranking_queries import _codes, check_repeats

    check_repeats(None, [ranking])
    first = list(ranking[:length])
    return _quoted(_codes([first], [judgements])[0].tolist() if first else [])


def _quoted(codes: Sequence[int]) -> str:
    """The ``relstring`` of grades coded as :func:`~metametric_jax.tasks.trec_batch.batch_values` codes them."""
    return "'" + "".join("-" if c == -1 else "." if c < 0 else ">" if c > 9 else str(c) for c in codes) + "'"


def _relstring(ranked: Mapping[str, Sequence[int]], qid: str, asked: TrecMeasures) -> str:
    """A query's ``relstring`` as trec_eval prints it, a judged query absent from the run (``-c``) included.

    ``ranked``: the coded grades of the first documents of each query of the run (``_score_files``' ``first``).
    trec_eval scores an absent query as a ranking of one document outside the pool, then blanks the line named
    ``relstring`` (by that exact name: ``relstring_10`` of ``-m relstring.10`` keeps the ``-`` of that document).
    """
    if qid not in ranked:
        return "''" if asked.relstring == "relstring" else "'" + "-" * min(asked.length, 1) + "'"
    return _quoted(ranked[qid])


def _order(key: str) -> int:
    """A printed name's place in trec_eval's order of measures (``runid`` first, ``relstring`` after ``P``)."""
    from metametric_jax.tasks.trec_measures import MEASURES, family_of

    families = list(MEASURES)
    if key == "runid":
        return -1
    if key.startswith("relstring"):
        return 2 * families.index("P") + 1
    return 2 * families.index(family_of(key))


def printout(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    measures: Sequence[str] | str | None = None,
    level: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    per_query: bool = False,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
) -> tuple[str, list[str]]:
    """trec_eval's printout of a run file scored against a qrels file, and the warnings of :func:`score_files`.

    Arguments as :func:`metametric_jax.tasks.ranking.score_files` (the measures as trec_eval's ``-m``, ``level`` its
    ``-l``, ``complete`` its ``-c``, ``max_retrieved`` its ``-M``); ``per_query`` is trec_eval's ``-q``.

    Returns:
        ``(text, warnings)``: the printout, every line ending in a newline, and one line per warning.

    Raises:
        InputFormatError: a malformed file, or no query of the run has judgements.
        ValueError: unknown measures or bad options.
    """
    from metametric_jax.tasks.ranking_files import _score_files
    from metametric_jax.tasks.ranking_queries import measure_kind
    from metametric_jax.tasks.trec_measures import parse_measures, plan_keys

    asked = trec_measures(measures)
    if max_retrieved == 0:
        raise ValueError(
            "--format trec refuses -M 0: trec_eval 10.0 prints NaN (-nan) there for iprec_at_recall and 11pt_avg, "
            "which this package gives as 0"
        )
    keys = plan_keys(parse_measures(asked.measures))
    first = asked.length if per_query and asked.relstring is not None else 0
    got, warnings, run_id, ranked = _score_files(
        predictions, references, asked.measures, level, complete, max_retrieved, progress, jobs, first
    )
    kinds = {key: measure_kind(key) for key in keys}
    lines: list[str] = []
    if per_query:
        items = got.items
        shown = [k for k in keys if k in items[0]]
        if asked.relstring is not None:
            shown = sorted([*shown, asked.relstring], key=_order)  # stable: each family's cut-offs keep their order
        heads = [(key, f"{key:<{WIDTH}}\t", kinds.get(key, "")) for key in shown]  # trec_line's, once per measure
        for item in items:
            qid = str(item["id"])
            for key, head, kind in heads:
                text = _relstring(ranked, qid, asked) if key == asked.relstring else _value(item[key], kind)
                lines.append(f"{head}{qid}\t{text}\n")
    if asked.runid:
        lines.append(f"{'runid':<{WIDTH}}\tall\t{run_id}\n")
    lines.extend(trec_line(key, "all", got.scores[key], kinds[key]) for key in keys)
    return "".join(lines), warnings
