r"""The pieces the tasks' analyses share (``metametric-jax analyze TASK``): item tables, a split read-out, the report.

:mod:`metametric_jax.analysis` is the engine (bucketed totals, the bootstrap over the task's units, paired tests,
corrections); a task's analysis module declares its analyses in an :class:`Analyses` (each one's read-out, tested
figure and bucket order), fills their :class:`Items` system by system, and calls :meth:`Analyses.report`, which wraps
the engine's ``correction``, ``analyses`` and ``notes`` in the versioned JSON every form of the report is rendered
from (:func:`report`; :mod:`metametric_jax.analysis_report`). The read-outs of the tasks' rows: :func:`match_readout`
of ``(matched, predicted, reference)`` and :func:`split_readout` (below); fixed buckets named by the ranges they hold:
:func:`range_bucket`. The requests every task checks alike are here too: :func:`need_systems`,
:func:`check_systems`, :func:`refuse_names`, :func:`system_names`, :func:`resampled_units`.

**The split read-out.** Where an item's bucket is an attribute that a predicted item and the reference item it
matches need not share (the relation label of a word whose head is right, the type of an entity matched on its
offsets alone), a match is counted twice: on the predicted item, in the predicted item's bucket, and on the
reference item, in the reference item's bucket (MaltEval's per-group precision and recall; Nilsson and Nivre 2008).
An item's row is then ``(correct predicted, predicted, correct reference, reference)`` and a bucket's figures are

.. math::

    P = \frac{c_P}{n_P}, \qquad R = \frac{c_R}{n_R}, \qquad F_1 = \frac{2 P R}{P + R}

(0 where a denominator is 0). Where every match lies in one bucket, :math:`c_P = c_R = m` and the F1 is computed as
:math:`2m / (n_P + n_R)`, its value without the rounding of the two ratios: these are
:func:`~metametric_jax.normalizer.prf`'s figures bit for bit, so the buckets of an attribute both sides share, and
any union of buckets holding every item, read out as the task's ``score`` does.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, TypedDict

import numpy as np

from metametric_jax import analysis
from metametric_jax.errors import InputFormatError
from metametric_jax.inputs import check_lengths
from metametric_jax.normalizer import f_measure, prf

__all__ = [
    "VERSION",
    "CORRECT_PREDICTED",
    "PREDICTED",
    "CORRECT_REFERENCE",
    "REFERENCE",
    "Settings",
    "Tests",
    "Items",
    "Analyses",
    "match_readout",
    "match_count",
    "split_readout",
    "split_count",
    "confusion_matrix",
    "report",
    "need_systems",
    "check_systems",
    "system_names",
    "refuse_names",
    "resampled_units",
    "range_bucket",
]

#: the version of the report's JSON
VERSION = 1

#: the columns of a split item row
CORRECT_PREDICTED, PREDICTED, CORRECT_REFERENCE, REFERENCE = 0, 1, 2, 3


def match_readout(totals: Any) -> dict[str, float]:
    """``{"precision", "recall", "f1"}`` of totals ``(matched, predicted, reference)``: ``prf``'s, as the scorers'."""
    return prf(totals[0], totals[1], totals[2])


def match_count(totals: Any) -> float:
    """A bucket's size from totals ``(matched, predicted, reference)``: its reference items."""
    return float(totals[2])


def range_bucket(value: float, names: Sequence[str]) -> str:
    """The bucket of ``value`` among buckets named by their ranges (``"3"``, ``"3-6"``, ``"7+"``), in increasing order.

    The edges are the names': a value goes in the first bucket whose upper end it does not pass (the first bucket
    takes smaller values too, the last, ``"N+"``, the larger ones).

    >>> [range_bucket(x, ("0", "1-2", "3-9", "10+")) for x in (0, 2, 5, 40)]
    ['0', '1-2', '3-9', '10+']
    """
    for name, top in zip(names, _tops(tuple(names))):
        if value <= top:
            return name
    raise ValueError(f"{value} lies above the last bucket of {', '.join(names)}")


@functools.lru_cache(maxsize=64)
def _tops(names: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(float("inf") if x.endswith("+") else float(x.rpartition("-")[2]) for x in names)


def split_readout(totals: Any) -> dict[str, float]:
    """``{"precision", "recall", "f1"}`` of split totals (correct predicted, predicted, correct reference, reference).

    >>> split_readout([2.0, 3.0, 2.0, 4.0])
    {'precision': 0.6666666666666666, 'recall': 0.5, 'f1': 0.5714285714285714}
    >>> split_readout([0.0, 0.0, 3.0, 3.0])  # reference items matched by predicted items of other buckets
    {'precision': 0.0, 'recall': 1.0, 'f1': 0.0}
    """
    cp, n_p, cr, n_r = (float(x) for x in totals[:4])
    if cp == cr:
        return prf(cp, n_p, n_r)
    precision = cp / n_p if n_p else 0.0
    recall = cr / n_r if n_r else 0.0
    return {"precision": precision, "recall": recall, "f1": f_measure(precision, recall)}


def split_count(totals: Any) -> float:
    """A bucket's size: its reference items."""
    return float(totals[REFERENCE])


@dataclasses.dataclass(frozen=True)
class Settings:
    """How the buckets are tested: bootstrap replicates and seed, the correction, the smallest bucket tested."""

    samples: int = 1000
    seed: int = 0
    correction: str = "holm"
    statistic: str = "studentized"
    min_units: int = analysis.MIN_UNITS

    @classmethod
    def of(cls, args: argparse.Namespace) -> Settings:
        """The settings of ``analyze``'s command line."""
        return cls(args.samples, args.seed, args.correction, args.statistic, args.min_units)


class Tests(TypedDict, total=False):
    """The tests' settings as keywords of the tasks' ``analyze`` and ``analyze_files`` (defaults: :class:`Settings`).

    Attributes:
        samples: bootstrap replicates (1000).
        seed: the seed of the replicates' weights (0).
        correction: ``holm`` (the default), ``bh``, ``maxt`` or ``none`` (:func:`metametric_jax.analysis.correct`).
        statistic: ``studentized`` (the default) or ``raw``: what max-T compares.
        min_units: a bucket with items in fewer units is not tested (:data:`metametric_jax.analysis.MIN_UNITS`).
    """

    samples: int
    seed: int
    correction: str
    statistic: str
    min_units: int


class Items:
    """Item rows of one analysis, gathered batch by batch: ``add`` rows with their units, buckets and system."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._rows: list[np.ndarray] = []
        self._units: list[np.ndarray] = []
        self._names: list[str] = []
        self._systems: list[np.ndarray] = []

    def add(self, rows: Any, units: Any, names: Sequence[str], system: int) -> None:
        """Items of one system: float rows ``(n, width)``, int units ``(n,)``, ``n`` bucket names."""
        block = np.asarray(rows, np.float64).reshape(-1, self.width)
        unit = np.asarray(units, np.int64).reshape(-1)
        if unit.size != block.shape[0] or len(names) != block.shape[0]:
            raise ValueError(f"{block.shape[0]} rows, {unit.size} units and {len(names)} bucket names")
        self._rows.append(block)
        self._units.append(unit)
        self._names += [str(x) for x in names]
        self._systems.append(np.full(block.shape[0], system, np.int64))

    def names(self) -> set[str]:
        """The bucket names of the items gathered."""
        return set(self._names)

    def __len__(self) -> int:
        """The number of items gathered."""
        return len(self._names)

    def state(self, n_systems: int, unit_ids: Any, settings: Settings) -> analysis.BucketedState:
        """The bucketed state of the items gathered (every unit of ``unit_ids`` counted, with items or not)."""
        rows = np.concatenate(self._rows) if self._rows else np.zeros((0, self.width))
        units = np.concatenate(self._units) if self._units else np.zeros(0, np.int64)
        systems = np.concatenate(self._systems) if self._systems else np.zeros(0, np.int64)
        return analysis.BucketedState.from_rows(
            rows,
            units,
            self._names,
            systems=systems,
            n_systems=n_systems,
            unit_ids=np.unique(np.asarray(unit_ids, np.int64)),
            samples=settings.samples,
            seed=settings.seed,
        )


class Analyses:
    """The bucketed analyses of one report, in order: each one's read-out and the items gathered for it.

    Every analysis of a report is of one evaluation: the same systems, units (``units``: every unit, with items or
    not) and settings. :meth:`add` declares an analysis and gives the :class:`Items` to fill, system by system;
    :meth:`report` reads them all out.
    """

    def __init__(self, n_systems: int, units: Any, settings: Settings) -> None:
        self.n_systems = int(n_systems)
        self.units = np.unique(np.asarray(units, np.int64))
        self.settings = settings
        self._listed: list[tuple[analysis.Analysis, Items, bool, bool]] = []

    def add(
        self,
        name: str,
        width: int,
        readout: Callable[[np.ndarray], Any],
        figure: str = "f1",
        *,
        count: Callable[[np.ndarray], float] | None = None,
        order: Sequence[str] | None = None,
        sort: bool = False,
        optional: bool = False,
        title: str | None = None,
        description: str = "",
    ) -> Items:
        """An analysis (as :class:`~metametric_jax.analysis.Analysis`) and its items, rows of ``width`` columns.

        Args:
            name: the analysis's name in the JSON.
            width: the width of its item rows.
            readout: its read-out of a bucket's totals.
            figure: the figure tested.
            count: a bucket's size from its totals (default: its items).
            order: the buckets' order.
            sort: the buckets in alphabetical order (of those gathered) instead.
            optional: left out of the report when no item is gathered.
            title: its title in the rendered report.
            description: what its buckets are.
        """
        items = Items(width)
        spec = analysis.Analysis(name, readout, figure, count=count, order=order, title=title, description=description)
        self._listed.append((spec, items, sort, optional))
        return items

    def custom(
        self,
        buckets: Mapping[str, Any] | None,
        width: int,
        readout: Callable[[np.ndarray], Any],
        figure: str = "f1",
        *,
        count: Callable[[np.ndarray], float] | None = None,
    ) -> dict[str, Items]:
        """The items of the user's bucketings (``{name: fn}``), each read out as ``readout`` tests ``figure``."""
        return {
            name: self.add(name, width, readout, figure, count=count, description=f"user-defined: {name}")
            for name in buckets or {}
        }

    def names(self) -> list[str]:
        """The names of the analyses declared, in order."""
        return [spec.name for spec, _, _, _ in self._listed]

    def pairs(self) -> list[tuple[analysis.Analysis, analysis.BucketedState]]:
        """Each analysis with the bucketed state of its items (optional ones without items left out)."""
        out = []
        for spec, items, sort, optional in self._listed:
            if optional and not items:
                continue
            if sort:
                spec = dataclasses.replace(spec, order=sorted(items.names()))
            out.append((spec, items.state(self.n_systems, self.units, self.settings)))
        return out

    def report(
        self,
        task: str,
        *,
        systems: Sequence[str],
        references: str | None,
        unit: str,
        scale: float = 100,
        truncated: bool = False,
        of_counts: bool = False,
        extra: Mapping[str, Any] | None = None,
        warnings: Sequence[str] = (),
        titles: Mapping[str, str] | None = None,
        counted: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The versioned JSON of the analyses over their units: :func:`report` of :meth:`pairs`, arguments as there."""
        return report(
            task,
            self.pairs(),
            self.settings,
            systems=systems,
            references=references,
            unit=unit,
            n=self.units.size,
            scale=scale,
            truncated=truncated,
            of_counts=of_counts,
            extra=extra,
            warnings=warnings,
            titles=titles,
            counted=counted,
        )


def confusion_matrix(
    pairs: Sequence[Sequence[tuple[str, str]]],
    missed: Sequence[Sequence[str]],
    spurious: Sequence[Sequence[str]],
    *,
    lone: str,
    title: str,
    description: str,
) -> dict[str, Any]:
    """Gold × predicted labels per system, with a column of reference items and a row of predicted items left alone.

    Args:
        pairs: per system, the ``(gold label, predicted label)`` of each pair of items.
        missed: per system, the labels of the reference items without a predicted item.
        spurious: per system, the labels of the predicted items without a reference item.
        lone: the name of the extra row and column (``"(unaligned)"``).
        title: the matrix's title in the rendered report.
        description: what a cell counts.

    Returns:
        ``{"title", "description", "gold": [labels..., lone], "predicted": [labels..., lone], "matrices": [one list of
        rows per system]}``, labels sorted; row ``i``, column ``j`` counts the items of gold label ``i`` predicted as
        label ``j`` (the shape of :func:`metametric_jax.tasks.ner_analysis.confusion`).
    """
    labels = sorted(
        {x for p in pairs for pair in p for x in pair}
        | {x for m in missed for x in m}
        | {x for s in spurious for x in s}
    )
    where = {x: j for j, x in enumerate(labels)}
    t = len(labels)
    matrices = []
    for p, m, s in zip(pairs, missed, spurious):
        grid = np.zeros((t + 1, t + 1), np.int64)
        for g, q in p:
            grid[where[g], where[q]] += 1
        for g in m:
            grid[where[g], t] += 1
        for q in s:
            grid[t, where[q]] += 1
        matrices.append(grid.tolist())
    return {
        "title": title,
        "description": description,
        "gold": [*labels, lone],
        "predicted": [*labels, lone],
        "matrices": matrices,
    }


def report(
    task: str,
    pairs: Sequence[tuple[analysis.Analysis, analysis.BucketedState]],
    settings: Settings,
    *,
    systems: Sequence[str],
    references: str | None,
    unit: str,
    n: int,
    scale: float = 100,
    truncated: bool = False,
    of_counts: bool = False,
    extra: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
    counted: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The versioned JSON of ``metametric-jax analyze TASK``: the engine's report of ``pairs`` and extra sections.

    Args:
        task: the task's command name.
        pairs: the bucketed analyses and their states (one evaluation: the same units, samples and seed).
        settings: the tests' settings.
        systems: the systems' names, the first the baseline.
        references: the reference file (``None`` in memory).
        unit: what a unit is, plural.
        n: the number of units.
        scale: how figures print: ``100`` (percentages) or ``1`` (fractions, as trec_eval).
        truncated: whether figures print with their last digit cut, not rounded (coreference, as scorer.pl).
        of_counts: whether percentages print as ``100.0 * a / b`` of their counts (EVALB, conlleval).
        extra: sections after the bucketed analyses (a confusion matrix, a table), each shown as it is.
        warnings: what the task's ``score`` warns about the same input.
        titles: the titles of sections of ``extra`` (the analyses' own come from their specs).
        counted: what each analysis's ``count`` counts, where not its reference items.
    """
    core = analysis.report(
        pairs, correction=settings.correction, statistic=settings.statistic, min_units=settings.min_units
    )
    analyses = core["analyses"]
    for name, section in (extra or {}).items():
        if name in analyses:
            raise ValueError(f"the report has two analyses named {name!r}")
        analyses[name] = section
    out = {
        "version": VERSION,
        "task": task,
        "systems": list(systems),
        "baseline": systems[0],
        "references": references,
        "unit": unit,
        "n": int(n),
        "samples": settings.samples,
        "seed": settings.seed,
        "scale": scale,
        "truncated": truncated,
        "of_counts": of_counts,
        "correction": core["correction"],
        "titles": {**{a.name: a.title or a.name for a, _ in pairs}, **(titles or {})},
    }
    if counted is not None:
        out["counted"] = dict(counted)
    out.update(analyses=analyses, notes=core["notes"], warnings=list(dict.fromkeys(warnings)))
    return out


# ---------------------------------------------------------------------------------------------------- requests
def need_systems(systems: Sequence[Any]) -> None:
    """An analysis compares one or more systems (``ValueError`` on none)."""
    if not systems:
        raise ValueError("analyze needs at least one system")


def check_systems(systems: Iterable[Sized], references: Sized, task: str, unit: str = "example") -> None:
    """Each system gives one entry per reference ``unit`` (``ValueError`` naming the system otherwise)."""
    for k, system in enumerate(systems):
        check_lengths(system, references, f"{task} analysis, system {k + 1}", unit)


def system_names(names: Sequence[str] | None, count: int) -> list[str]:
    """The systems' names in a report: ``names``, or ``system 1``, ``system 2``..."""
    return list(names) if names is not None else [f"system {k + 1}" for k in range(count)]


def refuse_names(buckets: Mapping[str, Any] | None, reserved: Iterable[str]) -> None:
    """A user's bucketing may not take the name of an analysis of the report (``ValueError``)."""
    taken = set(reserved)
    for name in buckets or {}:
        if name in taken:
            raise ValueError(
                f"a custom bucketing may not be named {name!r}: the report has an analysis of that name (on the "
                "command line, name it with --bucket NAME=MODULE:FUNCTION)"
            )


def resampled_units(
    unit: str | None, documents: Sequence[int] | None, count: int, path: str, start: str
) -> tuple[np.ndarray, str]:
    """The unit resampled, of each of ``count`` sentences, and its name (plural): its document, or the sentence.

    Args:
        unit: ``"document"`` (the default where the file has documents) or ``"sentence"``.
        documents: each sentence's document, or ``None`` where the file has none.
        count: the number of sentences.
        path: the reference file, for the message.
        start: what starts a document in the file (``"-DOCSTART- line"``), for the message.

    Raises:
        InputFormatError: ``document`` asked of a file without documents.
        ValueError: another unit.
    """
    chosen = unit or ("document" if documents is not None else "sentence")
    if chosen not in ("document", "sentence"):
        raise ValueError(f"unit must be 'document' or 'sentence'; found {chosen!r}")
    if chosen == "document" and documents is None:
        raise InputFormatError(
            path,
            None,
            f"--unit document: the file has no {start} to start a document; give --unit sentence to resample sentences",
        )
    units = np.asarray(documents, np.int64) if chosen == "document" else np.arange(count, dtype=np.int64)
    return units, f"{chosen}s"
