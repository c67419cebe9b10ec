r"""Where information extraction systems fail and where one beats another: figures per entity, relation, event type.

The analyses of ``metametric-jax analyze ie`` (:mod:`metametric_jax.analysis` is the engine), on the items of
:mod:`metametric_jax.tasks.ie` (their keys in ``strict`` or ``boundaries`` mode, matched one to one per document):

* ``overall`` — one bucket, ``all``: the entity, relation, trigger and argument precision, recall and F1 of ``score
  ie``, exactly (its per-document rows, :func:`~metametric_jax.tasks.ie.document_rows`, read out by its
  :func:`~metametric_jax.tasks.ie.readout`); the headline is tested, as ``compare ie`` tests it: the relation F1
  where the reference has relations, else the argument F1 where it has events, else the entity F1.
* ``entity_type`` — entity mentions per entity type;
* ``relation_type`` — relations per relation type;
* ``event_type`` — triggers and arguments per event type (the trigger's type; an argument's is its event's): the
  per-type tables of DyGIE++ and OneIE users' analyses (Li, Ji and Huang 2013's figures per event subtype);
* ``role`` — arguments per role;
* custom — ``buckets={"name": fn}``: ``fn(Item)`` names the bucket of an item (an entity, relation, trigger or
  argument), read out as ``overall``'s four figures.

Only the analyses whose items appear (in the reference or a system) are given. Where the mode's key holds the
bucketed attribute (relation and event types always; entity types and roles in ``strict`` mode) a match lies in one
bucket; otherwise (``boundaries`` mode: entity types, the roles of arguments, trigger types) the split read-out of
:mod:`metametric_jax.tasks.buckets` counts a match on the predicted item in its bucket (precision) and on the
reference item in its own (recall), the items of one key paired in document order. A bucket's ``count`` is its
reference items; its F1 is tested (``event_type``: the argument F1 where the reference has arguments, else the
trigger F1). The unit resampled is the document, as ``score ie --bootstrap`` and ``compare ie`` resample.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks import ie
from metametric_jax.tasks.ie import (
    _absent_warnings,
    _argument_keys,
    _check_mode,
    _entity_keys,
    _relation_keys,
    _trigger_keys,
)

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["KINDS", "Item", "items", "analyze", "analyze_files"]

#: the kinds of items, as :data:`metametric_jax.tasks.ie.FIGURES` names their figures
KINDS = ie.FIGURES


class Item(NamedTuple):
    """An item as a bucketing sees it.

    Attributes:
        document: its document (0-based, in the files' order).
        kind: ``entities``, ``relations``, ``triggers`` or ``arguments``.
        type: the entity type, the relation type, the event type (of a trigger, and of an argument's event).
        role: an argument's role (``None`` for other items).
        start: the offset where the item's span starts (a relation's head, an argument's mention).
        end: where it ends (exclusive).
        side: ``"reference"`` or ``"predicted"``.
    """

    document: int
    kind: str
    type: str
    role: str | None
    start: int
    end: int
    side: str


def items(document: ie.Document, index: int, side: str) -> dict[str, list[Item]]:
    """The items of a document per kind, in the order of :mod:`metametric_jax.tasks.ie`'s keys."""
    return {
        "entities": [Item(index, "entities", s.label, None, s.start, s.end, side) for s in document.entities],
        "relations": [
            Item(index, "relations", r.type, None, r.head.start, r.head.end, side) for r in document.relations
        ],
        "triggers": [
            Item(index, "triggers", e.trigger.label, None, e.trigger.start, e.trigger.end, side)
            for e in document.events
        ],
        "arguments": [
            Item(index, "arguments", e.trigger.label, a.role, a.span.start, a.span.end, side)
            for e in document.events
            for a in e.arguments
        ],
    }


def _matched(predicted: list[Any], reference: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Which predicted and which reference keys are matched: one to one, the items of one key paired in order."""
    at: dict[Any, list[int]] = defaultdict(list)
    for j, key in enumerate(reference):
        at[key].append(j)
    p_ok = np.zeros(len(predicted), bool)
    r_ok = np.zeros(len(reference), bool)
    taken: dict[Any, int] = defaultdict(int)
    for j, key in enumerate(predicted):
        free = at.get(key)
        if free is not None and taken[key] < len(free):
            r_ok[free[taken[key]]] = True
            taken[key] += 1
            p_ok[j] = True
    return p_ok, r_ok


def _split_rows(p_ok: np.ndarray, r_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.zeros((p_ok.size, 4))
    p[:, kit.CORRECT_PREDICTED] = p_ok
    p[:, kit.PREDICTED] = 1.0
    r = np.zeros((r_ok.size, 4))
    r[:, kit.CORRECT_REFERENCE] = r_ok
    r[:, kit.REFERENCE] = 1.0
    return p, r


def _four_readout(totals: Any) -> dict[str, dict[str, float]]:
    """The four figures of a bucket's split totals (4 columns per kind, in :data:`KINDS` order)."""
    return {kind: kit.split_readout(totals[4 * k : 4 * k + 4]) for k, kind in enumerate(KINDS)}


def _event_readout(totals: Any) -> dict[str, dict[str, float]]:
    return {"triggers": kit.split_readout(totals[:4]), "arguments": kit.split_readout(totals[4:8])}


def _headline(references: Sequence[ie.Document]) -> str:
    if any(d.relations for d in references):
        return "relations"
    if any(d.events for d in references):
        return "arguments"
    return "entities"


def _report(
    references: Sequence[ie.Document],
    systems: Sequence[Sequence[ie.Document]],
    *,
    names: Sequence[str],
    reference_name: str | None,
    mode: str,
    directed: bool,
    buckets: Mapping[str, Callable[[Item], Any]] | None,
    settings: kit.Settings,
    warnings: Sequence[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    strict = _check_mode(mode) == "strict"
    kit.refuse_names(buckets, ("overall", "entity_type", "relation_type", "event_type", "role"))
    keys = {
        "entities": _entity_keys(strict),
        "relations": _relation_keys(strict, directed),
        "triggers": _trigger_keys(strict),
        "arguments": _argument_keys(strict),
    }
    n = len(references)
    units = np.arange(n, dtype=np.int64)
    headline = _headline(references)
    event_figure = "arguments/f1" if any(e.arguments for d in references for e in d.events) else "triggers/f1"
    found = kit.Analyses(len(systems), units, settings)
    overall = found.add(
        "overall",
        3 * len(KINDS),
        ie.readout,
        f"{headline}/f1",
        count=lambda t: float(t[3 * KINDS.index(headline) + 2]),
        title="Overall",
        description="every item: score ie's figures",
    )
    typed = (
        ("entity_type", 4, kit.split_readout, "f1", kit.split_count, "Entity type", "the entity's type"),
        ("relation_type", 4, kit.split_readout, "f1", kit.split_count, "Relation type", "the relation's type"),
        ("event_type", 8, _event_readout, event_figure, _event_count(event_figure), "Event type",
         "the event's type (triggers and arguments)"),
        ("role", 4, kit.split_readout, "f1", kit.split_count, "Argument role", "the argument's role"),
    )  # fmt: skip
    # each where such items appear (in the reference or a system)
    by = {
        name: found.add(
            name, width, readout, figure, count=count, sort=True, optional=True, title=title, description=description
        )
        for name, width, readout, figure, count, title, description in typed
    }
    custom = found.custom(buckets, 4 * len(KINDS), _four_readout, f"{headline}/f1", count=_custom_count(headline))
    gold_items = [items(d, k, "reference") for k, d in enumerate(references)]
    gold_keys = [{kind: keys[kind](d) for kind in KINDS} for d in references]
    for s, predictions in enumerate(systems):
        stats = ie.stats_in_chunks(predictions, references, mode=mode, directed=directed, jobs=jobs)
        overall.add(ie.document_rows(stats), units, ["all"] * n, s)
        for k, doc in enumerate(predictions):
            mine = items(doc, k, "predicted")
            for j, kind in enumerate(KINDS):
                g, p = gold_items[k][kind], mine[kind]
                if not g and not p:
                    continue
                p_ok, r_ok = _matched(keys[kind](doc), gold_keys[k][kind])
                p_rows, r_rows = _split_rows(p_ok, r_ok)
                analysis_of = {"entities": "entity_type", "relations": "relation_type"}.get(kind)
                if analysis_of is not None:
                    by[analysis_of].add(np.concatenate([p_rows, r_rows]), np.full(len(p) + len(g), k),
                                        [x.type for x in (*p, *g)], s)  # fmt: skip
                else:
                    wide = np.zeros((len(p) + len(g), 8))
                    offset = 0 if kind == "triggers" else 4
                    wide[:, offset : offset + 4] = np.concatenate([p_rows, r_rows])
                    by["event_type"].add(wide, np.full(len(p) + len(g), k), [x.type for x in (*p, *g)], s)
                    if kind == "arguments":
                        by["role"].add(np.concatenate([p_rows, r_rows]), np.full(len(p) + len(g), k),
                                       [x.role or "" for x in (*p, *g)], s)  # fmt: skip
                for name, fn in (buckets or {}).items():
                    wide = np.zeros((len(p) + len(g), 4 * len(KINDS)))
                    wide[:, 4 * j : 4 * j + 4] = np.concatenate([p_rows, r_rows])
                    custom[name].add(wide, np.full(len(p) + len(g), k), [str(fn(x)) for x in (*p, *g)], s)
    return found.report("ie", systems=names, references=reference_name, unit="documents", warnings=warnings)


def _event_count(figure: str) -> Callable[[Any], float]:
    offset = 4 if figure.startswith("arguments") else 0
    return lambda t: float(t[offset + kit.REFERENCE])


def _custom_count(headline: str) -> Callable[[Any], float]:
    offset = 4 * KINDS.index(headline)
    return lambda t: float(t[offset + kit.REFERENCE])


def analyze(
    references: Sequence[ie.Document],
    systems: Sequence[Sequence[ie.Document]],
    *,
    names: Sequence[str] | None = None,
    mode: str = "strict",
    directed: bool = True,
    buckets: Mapping[str, Callable[[Item], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of documents in memory (the JSON of ``metametric-jax analyze ie``).

    Args:
        references: the reference :class:`~metametric_jax.tasks.ie.Document` objects.
        systems: each system's documents, in the same order, the first the baseline.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        mode: ``"strict"`` or ``"boundaries"``, as :func:`metametric_jax.tasks.ie.score`.
        directed: whether relation arguments are ordered.
        buckets: custom bucketings, ``{name: fn(Item) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        ValueError: on a bad request, an unknown mode, or a system with another number of documents.
    """
    kit.need_systems(systems)
    kit.check_systems(systems, references, "ie", "document")
    return _report(
        list(references),
        [list(x) for x in systems],
        names=kit.system_names(names, len(systems)),
        reference_name=None,
        mode=mode,
        directed=directed,
        buckets=buckets,
        settings=kit.Settings(**settings),
    )


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    mode: str = "strict",
    directed: bool = True,
    buckets: Mapping[str, Callable[[Item], Any]] | None = None,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of JSON Lines files, read as ``score ie`` reads them.

    Args:
        references: the reference documents.
        systems: the systems' documents (the same documents in the same order), the first the baseline.
        mode: as :func:`analyze`.
        directed: as :func:`analyze`.
        buckets: custom bucketings, as :func:`analyze`.
        jobs: worker processes that count the documents (0: every core; default 1: this process); the report is
            the same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: malformed input, files whose documents differ in number, order or ids, or no document.
    """
    kit.need_systems(systems)
    _check_mode(mode)
    ref_path = os.fspath(references)
    gold = ie.read_documents(ref_path)
    if not gold:
        raise InputFormatError(ref_path, None, "expected documents to analyze, one JSON object per line; found none")
    predictions, warnings = [], list(gold.warnings)
    for path in systems:
        docs = ie.read_documents(path)
        ie.pair_documents(docs, gold, os.fspath(path), ref_path)
        predictions.append([d for _, d in docs])
        warnings += docs.warnings
        warnings += _absent_warnings(predictions[-1], [d for _, d in gold], os.fspath(path))
    return _report(
        [d for _, d in gold],
        predictions,
        names=[os.fspath(p) for p in systems],
        reference_name=ref_path,
        mode=mode,
        directed=directed,
        buckets=buckets,
        settings=kit.Settings(**settings),
        warnings=warnings,
        jobs=jobs,
    )
