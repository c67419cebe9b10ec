r"""Where AMR parsers fail: fine-grained figures tested, the pairs that lose most, the triples missed by role.

The analyses of ``metametric-jax analyze amr`` (:mod:`metametric_jax.analysis` is the engine: bucketed totals, the
Poisson bootstrap over the graph pairs, paired tests per bucket corrected over all of them):

* ``fine`` — one bucket per figure: ``smatch`` and the fine-grained figures of Damonte, Cohen and Satta (2017, "An
  Incremental Parser for Abstract Meaning Representation", EACL): ``unlabeled``, ``no_wsd``, ``concepts``,
  ``named_entities``, ``negations``, ``wikification``, ``reentrancies``, ``srl``
  (:mod:`metametric_jax.tasks.amr_fine`). Each pair's counts ``(matched, predicted, reference)`` are those of ``score
  amr --fine-grained --per-pair`` and a bucket reads their sums with :func:`~metametric_jax.normalizer.prf`, so each
  bucket's figures are ``score amr --fine-grained``'s exactly, and the ``smatch`` bucket's test is ``compare amr``'s
  test of the Smatch F1. A bucket's ``count`` is its reference triples (or items).
* ``size`` — Smatch by the reference graph's number of variables (concepts), in equal-frequency buckets of the pairs
  (:func:`metametric_jax.analysis.equal_frequency_buckets`; ExplainaBoard's bucketing by quantiles); a bucket's
  ``count`` is its number of graph pairs.
* custom — ``buckets={"name": fn}``: ``fn(Pair)`` names the bucket of a graph pair, read out and tested as ``size``.

And three tables per system (not tested), in the report's table form (``{"title", "description", "columns",
"rows"}``):

* ``lowest`` — the pairs with the lowest Smatch F1 (below 1), the lowest first (then the most triples unmatched, then
  the first pair), with their ids (the reference's ``# ::id``, else the 1-based position);
* ``losses`` and ``gains`` (two systems or more) — the pairs where a system's Smatch F1 falls most below the
  baseline's, and rises most above it;
* ``roles`` — missing and extra triples by role: under the Smatch alignment (the variable mapping of
  :func:`metametric_jax.tasks.amr.smatch_match`, the optimum within the work budget), a reference triple no predicted
  triple matches is *missing*, a predicted triple that matches none is *extra*; counted per role as Smatch's triples
  hold it (lower-cased; inverse roles ``:X-of`` read as ``X`` with the arguments swapped, ``:mod`` as ``domain``;
  ``instance`` triples are the concepts, ``TOP`` the root). The matched triples of all roles add up to the Smatch
  match of the pair.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax import analysis, parallel
from metametric_jax.analysis_report import letters
from metametric_jax.matching import DEFAULT_WORK_LIMIT
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks.amr_fine import NAMES

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "VERSION",
    "FIGURES",
    "TOP",
    "Pair",
    "role_counts",
    "analyze_files",
]

#: the version of the report's JSON
VERSION = kit.VERSION


class Pair(NamedTuple):
    """A graph pair as a custom bucketing sees it.

    Attributes:
        position: its position (0-based, in the files' order).
        id: the reference graph's ``# ::id`` (``None`` where it has none).
        variables: the reference graph's number of variables (concepts).
        reference: the reference graph's triples, ``(role, source, target)``, as Smatch reads them.
    """

    position: int
    id: str | None
    variables: int
    reference: tuple[Any, ...]


#: the buckets of the ``fine`` analysis: Smatch, then the fine-grained figures (``score amr``'s JSON keys)
FIGURES = ("smatch", *NAMES)
#: how many pairs the ``lowest``, ``losses`` and ``gains`` tables list per system by default
TOP = 10

Triple = tuple[str, str, str]
_SPECIAL_ROLES = ("instance", "top")
#: the counts of a role
_ROLE_COUNTS = ("reference", "predicted", "matched", "missing", "extra")


def _keys(triples: Sequence[Triple], rename: Mapping[str, str] | None) -> list[tuple[str, Any, Any] | None]:
    """Each triple as Smatch compares it, its variables renamed (``None``: a triple with an unmapped variable)."""
    defined = {s for r, s, _ in triples if r.lower() == "instance"}
    out: list[tuple[str, Any, Any] | None] = []
    for role, source, target in triples:
        r = role.lower()
        relation = r not in _SPECIAL_ROLES and target in defined
        s: Any = source if rename is None else rename.get(source)
        t: Any = ("v", target if rename is None else rename.get(target)) if relation else ("c", target.lower())
        out.append(None if s is None or t[1] is None else (r, s, t))
    return out


def role_counts(
    predicted: Sequence[Triple], reference: Sequence[Triple], mapping: Mapping[str, str]
) -> dict[str, dict[str, int]]:
    """Per role, the reference and predicted triples and those matched under a variable mapping.

    A predicted triple matches a reference triple when their roles are equal (case-insensitively), the mapping takes
    its source to the reference's source and its target to the reference's target (a variable) or the two constants
    are equal (case-insensitively); a triple matches at most one copy (a multiset intersection), as
    :func:`metametric_jax.tasks.amr.smatch_match` counts them.

    Args:
        predicted: the predicted graph's Smatch triples (:func:`metametric_jax.tasks.amr.smatch_triples`).
        reference: the reference graph's.
        mapping: ``{predicted variable: reference variable}`` (the ``mapping`` of ``smatch_match``).

    Returns:
        ``{role: {"reference", "predicted", "matched", "missing", "extra"}}`` (roles lower-cased), in order of first
        appearance (reference first).

    >>> gold = [("instance", "w", "want-01"), ("instance", "b", "boy"), ("TOP", "w", "top"), ("ARG0", "w", "b")]
    >>> pred = [("instance", "x", "want-01"), ("instance", "y", "girl"), ("TOP", "x", "top"), ("ARG0", "x", "y")]
    >>> counts = role_counts(pred, gold, {"x": "w", "y": "b"})
    >>> counts["instance"], counts["arg0"]["matched"]
    ({'reference': 2, 'predicted': 2, 'matched': 1, 'missing': 1, 'extra': 1}, 1)
    """
    gold = [k for k in _keys(reference, None) if k is not None]
    mapped = _keys(predicted, mapping)
    common = Counter(gold) & Counter(k for k in mapped if k is not None)
    out: dict[str, dict[str, int]] = {}

    def entry(role: str) -> dict[str, int]:
        return out.setdefault(role, dict.fromkeys(_ROLE_COUNTS, 0))

    for role, _, _ in reference:
        entry(role.lower())["reference"] += 1
    for role, _, _ in predicted:
        entry(role.lower())["predicted"] += 1
    for (role, _, _), n in common.items():
        entry(role)["matched"] += n
    for e in out.values():
        e["missing"], e["extra"] = e["reference"] - e["matched"], e["predicted"] - e["matched"]
    return out


def _role_chunk(
    work_limit: int | None, time_limit: float | None, predicted: Sequence[Any], reference: Sequence[Any]
) -> list[dict[str, dict[str, int]]]:
    """:func:`role_counts` of each graph pair of a chunk under its Smatch alignment (a worker's task)."""
    from metametric_jax.tasks import amr

    out = []
    for p, g in zip(predicted, reference):
        found = amr.smatch_match(p, g, work_limit=work_limit, time_limit=time_limit)
        out.append(role_counts(p, g, found.mapping))
    return out


# ---------------------------------------------------------------------------------------------------- analyses
def _counts_of(item: Mapping[str, Any], figure: str) -> list[float]:
    source = item if figure == "smatch" else item["fine_grained"][figure]
    return [float(source[k]) for k in ("matched", "predicted", "reference")]


def _analyses(
    found: kit.Analyses, items: Sequence[Sequence[Mapping[str, Any]]], sizes: Sequence[int], bins: int
) -> None:
    fine = found.add(
        "fine",
        3,
        kit.match_readout,
        count=kit.match_count,
        order=FIGURES,
        title="Smatch and fine-grained figures",
        description="Smatch and the fine-grained figures of Damonte et al. (2017): score amr --fine-grained's",
    )
    for s, per in enumerate(items):
        rows: list[list[float]] = []
        at: list[int] = []
        names: list[str] = []
        for i, item in enumerate(per):
            for figure in FIGURES:
                counts = _counts_of(item, figure)
                if any(counts):  # a pair with nothing of a figure on either side holds no item of it
                    rows.append(counts)
                    at.append(i)
                    names.append(figure)
        fine.add(rows, at, names, s)
    buckets, order = analysis.equal_frequency_buckets(sizes, bins)
    size = found.add(
        "size",
        3,
        kit.match_readout,
        order=order,
        title="Reference graph size (variables)",
        description="the reference graph's number of variables, in equal-frequency buckets of the pairs",
    )
    for s, per in enumerate(items):
        size.add([_counts_of(item, "smatch") for item in per], found.units, buckets, s)


def _lowest(items: Sequence[Sequence[Mapping[str, Any]]], top: int) -> dict[str, Any]:
    rows = []
    for name, per in zip(letters(len(items)), items):
        ranked = sorted(
            (i for i, item in enumerate(per) if item["f1"] < 1.0),
            key=lambda i: (per[i]["f1"], -(per[i]["predicted"] + per[i]["reference"] - 2 * per[i]["matched"]), i),
        )
        for rank, i in enumerate(ranked[:top], start=1):
            item = per[i]
            rows.append([name, rank, i + 1, item["id"], item["f1"], item["precision"], item["recall"]])
            rows[-1] += [item["matched"], item["predicted"], item["reference"]]
    columns = ["System", "Rank", "Pair", "Id", "F1", "P", "R", "Matched", "Predicted", "Reference"]
    return {
        "title": "Graph pairs with the lowest Smatch F1",
        "description": f"per system, at most {top} pairs with a Smatch F1 below 1, the lowest first (then the most "
        "triples unmatched); Pair is the 1-based position in the files",
        "columns": columns,
        "rows": rows,
    }


def _deltas(items: Sequence[Sequence[Mapping[str, Any]]], top: int, losses: bool) -> dict[str, Any]:
    rows = []
    base = items[0]
    for name, per in zip(letters(len(items))[1:], items[1:]):
        deltas = [(per[i]["f1"] - base[i]["f1"], i) for i in range(len(per))]
        chosen = sorted((d, i) for d, i in deltas if (d < 0 if losses else d > 0))
        if not losses:
            chosen = sorted(chosen, key=lambda x: (-x[0], x[1]))
        for rank, (d, i) in enumerate(chosen[:top], start=1):
            rows.append([name, rank, i + 1, per[i]["id"], d, base[i]["f1"], per[i]["f1"]])
    which = "falls most below" if losses else "rises most above"
    return {
        "title": f"Graph pairs where a system's Smatch F1 {which} the baseline's",
        "description": f"per system after the first (A), at most {top} pairs, ΔF1 = system - A",
        "columns": ["System", "Rank", "Pair", "Id", "ΔF1", "F1 A", "F1 system"],
        "rows": rows,
    }


def _roles(per_system: Sequence[Mapping[str, Mapping[str, int]]]) -> dict[str, Any]:
    roles: list[str] = []
    for counts in per_system:
        roles += [r for r in counts if r not in roles]
    zero = dict.fromkeys(_ROLE_COUNTS, 0)
    errors = {r: sum(c.get(r, zero)["missing"] + c.get(r, zero)["extra"] for c in per_system) for r in roles}
    roles.sort(key=lambda r: (-errors[r], r))
    columns = ["Role", "Reference"]
    for name in letters(len(per_system)):
        columns += [f"Missing {name}", f"Extra {name}", f"Predicted {name}"]
    rows = []
    for r in roles:
        row: list[Any] = [r, per_system[0].get(r, zero)["reference"]]
        for c in per_system:
            e = c.get(r, zero)
            row += [e["missing"], e["extra"], e["predicted"]]
        rows.append(row)
    return {
        "title": "Missing and extra triples by role",
        "description": "under the Smatch alignment of each pair: reference triples no predicted triple matches "
        "(missing) and predicted triples that match none (extra), per role as Smatch reads it (inverse roles "
        "normalized, :mod as domain; instance = concepts, top = the root); the most errors first",
        "columns": columns,
        "rows": rows,
    }


def _sum_roles(counts: Sequence[Mapping[str, Mapping[str, int]]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for pair in counts:
        for role, c in pair.items():
            e = out.setdefault(role, dict.fromkeys(c, 0))
            for k, v in c.items():
                e[k] += v
    return out


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    keep_alignments: bool = False,
    work_limit: int | None = DEFAULT_WORK_LIMIT,
    time_limit: float | None = None,
    fine_grained: Any = True,
    top: int = TOP,
    bins: int = analysis.BINS,
    jobs: int = 1,
    buckets: Mapping[str, Callable[[Pair], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of PENMAN files (the JSON of ``metametric-jax analyze amr``).

    Args:
        references: the reference graphs.
        systems: each system's graphs, in the same order; the first is the baseline.
        keep_alignments: as :func:`metametric_jax.tasks.amr.score_files`.
        work_limit: the work budget of each Smatch problem, as there (``None``: unbounded).
        time_limit: an extra wall-clock cap, as there.
        fine_grained: the fine-grained figures asked of ``score_files`` (``True``: its default reading).
        top: how many pairs the ``lowest``, ``losses`` and ``gains`` tables list per system.
        bins: the number of equal-frequency buckets of ``size``.
        jobs: worker processes that match the graph pairs (0: every core; default 1: this process); the report is
            the same for every number.
        buckets: custom bucketings of graph pairs, ``{name: fn(Pair) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: an unparsable graph, or files with different numbers of graphs.
        ValueError: a bad option.
    """
    from metametric_jax.tasks import amr

    kit.need_systems(systems)
    kit.refuse_names(buckets, ("fine", "size", "lowest", "losses", "gains", "roles"))
    if int(top) < 1:
        raise ValueError(f"top must be a positive integer; found {top}")
    items, roles, warnings = [], [], []
    sizes: list[int] = []
    reference = os.fspath(references)
    for path in [os.fspath(p) for p in systems]:
        report = amr.score_files(
            predictions=path,
            references=reference,
            fine_grained=fine_grained,
            keep_alignments=keep_alignments,
            work_limit=work_limit,
            time_limit=time_limit,
            jobs=jobs,
        )
        pred, gold, _ = amr.read_files(predictions=path, references=reference, keep_alignments=keep_alignments)
        task = functools.partial(_role_chunk, work_limit, time_limit)
        pairs = parallel.map_items(task, list(pred), list(gold), jobs=jobs, preload=[__name__])
        sizes = [sum(1 for r, _, _ in g if r.lower() == "instance") for g in gold]
        items.append(report.items)
        roles.append(_sum_roles(pairs))
        warnings += [f"{path}: {w}" for w in report.warnings]
    analyses = kit.Analyses(len(items), np.arange(len(sizes)), kit.Settings(**settings))
    _analyses(analyses, items, sizes, bins)
    if buckets:
        pairs_seen = [Pair(i, items[0][i].get("id"), sizes[i], tuple(g)) for i, g in enumerate(gold)]
        for name, fn in buckets.items():
            custom = analyses.add(name, 3, kit.match_readout, description=f"user-defined: {name}")
            listed = [str(fn(x)) for x in pairs_seen]
            for s, per in enumerate(items):
                custom.add([_counts_of(item, "smatch") for item in per], analyses.units, listed, s)
    extra = {"lowest": _lowest(items, top)}
    if len(items) > 1:
        extra["losses"] = _deltas(items, top, True)
        extra["gains"] = _deltas(items, top, False)
    extra["roles"] = _roles(roles)
    return analyses.report(
        "amr",
        systems=[os.fspath(p) for p in systems],
        references=os.fspath(references),
        unit="graph pairs",
        extra=extra,
        warnings=warnings,
        counted={
            "fine": "reference triples (or items)",
            "size": "graph pairs",
            **dict.fromkeys(buckets or {}, "graph pairs"),
        },
    )
