r"""Information extraction: entities, relations and events of documents, scored as the field scores them.

A :class:`Document` holds typed entity mentions, typed binary relations between two mentions and events (a typed
trigger with its arguments, each a mention in a role). Every mention is a :class:`~metametric_jax.tasks.ner.Span`
``(start, end, label)`` with ``end`` exclusive, the one convention of half-open typed spans in the package (token or
character offsets, the same in both files); the label of a trigger is its event type.

Each figure compares the *keys* of the predicted and reference items of a document as multisets (a one-to-one
matching of equal keys) and sums the counts over documents (the micro average every IE scorer reports): with
:math:`K(D)` the multiset of keys of document :math:`D`,

.. math::

    m_i = |K(P_i) \cap K(R_i)|, \quad
    \mathrm{P} = \frac{\sum_i m_i}{\sum_i |K(P_i)|}, \quad
    \mathrm{R} = \frac{\sum_i m_i}{\sum_i |K(R_i)|}, \quad
    F_1 = \frac{2 \sum_i m_i}{\sum_i |K(P_i)| + \sum_i |K(R_i)|}

(0 where a denominator is 0). The keys of each mode:

==========  ==================================================  ================================================
figure      ``mode="strict"``                                   ``mode="boundaries"``
==========  ==================================================  ================================================
entities    start, end, entity type                             start, end
relations   relation type; head and tail: start, end, type      relation type; head and tail: start, end
triggers    start, end, event type (trigger classification)     start, end (trigger identification)
arguments   start, end, event type, role (arg. classification)  start, end, event type (arg. identification)
==========  ==================================================  ================================================

Relations follow the "strict" and "boundaries" evaluations of end-to-end relation extraction (Bekoulis et al.,
EMNLP 2018; Taillé et al., "Let's Stop Incorrect Comparisons in End-to-end Relation Extraction!", EMNLP 2020), directed
by default (``directed=False`` also counts a relation whose arguments are swapped, as OneIE's scorer does by default).
Events follow Li, Ji and Huang (ACL 2013), as DyGIE++ (Wadden et al., EMNLP 2019) and OneIE (Lin et al., ACL 2020)
score them: a trigger is identified if its offsets match a reference trigger and classified if its event type matches
too; an argument is identified if its offsets and its event's type match a reference argument, classified if its role
matches too; the trigger itself need not be matched.

Where the reference scripts differ: they count a predicted item as correct when *any* reference item has its key,
so two predicted items with one key both count against one reference item (and recall can exceed 1); here each
reference item is matched at most once. OneIE also keeps a repeated argument key once per document (a set), where
DyGIE++ and this module count each event's arguments. On documents without repeated keys all three agree.

The state (:func:`IEMetric`, a suite) has one member per figure, each the micro totals :math:`\sum m_i,
\sum |K(P_i)|, \sum |K(R_i)|`, the per-document sums of the normalized figures and the document count; a document
with no item of a figure on either side adds nothing to that figure's micro totals and scores 1.0 in its ``macro_``
figures (the package's empty-structure rule). Headline figures (:func:`score`): ``relations`` F1 for relation
extraction, ``arguments`` F1 for event extraction.

:func:`score`, :func:`score_files` and the command line compute the figures as one read-out, :func:`readout`, of
summed document rows (:func:`document_rows`). :func:`state_report` reads an :func:`IEMetric` state in float64 through
the same read-out: the state's counts are exact, so its figures are :func:`score`'s bit for bit on the same documents;
``compute()`` is its jittable float32 twin for training loops (its ``macro_`` figures, means over documents, are the
accumulator's own: :func:`score` has none).

**Files** (:func:`read_documents`, :func:`score_files`): JSON Lines, one document per line, read by
:mod:`metametric_jax.tasks.readers.ie_jsonl` (the schema is there); :class:`Document`, :class:`Relation`,
:class:`Event` and :class:`Argument` are that module's, re-exported here.

Example:
    >>> ref = Document(entities=(Span(0, 2, "PER"), Span(5, 6, "ORG")),
    ...                relations=(Relation("Work-For", Span(0, 2, "PER"), Span(5, 6, "ORG")),))
    >>> pred = Document(entities=(Span(0, 2, "PER"), Span(5, 6, "GPE")),
    ...                 relations=(Relation("Work-For", Span(0, 2, "PER"), Span(5, 6, "GPE")),))
    >>> score([pred], [ref])["relations"]["f1"], score([pred], [ref], mode="boundaries")["relations"]["f1"]
    (0.0, 1.0)
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.inputs import check_lengths
from metametric_jax.intervals import exact_totals
from metametric_jax.normalizer import prf
from metametric_jax.report import Report
from metametric_jax.tasks.ner import Span
from metametric_jax.tasks.readers.ie_jsonl import Argument, Document, Event, Relation, pair_documents, read_documents

if TYPE_CHECKING:
    from metametric_jax.suite import Suite

__all__ = ["Argument", "Event", "Relation", "Document", "MODES", "FIGURES", "IEMetric", "document_stats", "figures"]
__all__ += ["document_rows", "readout", "score", "read_documents", "pair_documents", "count_files", "score_files"]
__all__ += ["state_report", "stats_in_chunks"]

#: The evaluation modes: ``strict`` (offsets and types) and ``boundaries`` (offsets only, see the module docstring).
MODES: tuple[str, ...] = ("strict", "boundaries")
#: The figures of :func:`score`, in output order.
FIGURES: tuple[str, ...] = ("entities", "relations", "triggers", "arguments")


def _entity_keys(strict: bool) -> Callable[[Document], list[Any]]:
    if strict:
        return lambda d: [(s.start, s.end, s.label) for s in d.entities]
    return lambda d: [(s.start, s.end) for s in d.entities]


def _relation_keys(strict: bool, directed: bool) -> Callable[[Document], list[Any]]:
    def arg(s: Span) -> tuple[Any, ...]:
        return (s.start, s.end, s.label) if strict else (s.start, s.end)

    if directed and strict:  # flat tuples: cheaper to hash
        return lambda d: [
            (r.type, r.head.start, r.head.end, r.head.label, r.tail.start, r.tail.end, r.tail.label)
            for r in d.relations
        ]
    if directed:
        return lambda d: [(r.type, r.head.start, r.head.end, r.tail.start, r.tail.end) for r in d.relations]
    return lambda d: [(r.type, *sorted((arg(r.head), arg(r.tail)))) for r in d.relations]


def _trigger_keys(strict: bool) -> Callable[[Document], list[Any]]:
    if strict:
        return lambda d: [(e.trigger.start, e.trigger.end, e.trigger.label) for e in d.events]
    return lambda d: [(e.trigger.start, e.trigger.end) for e in d.events]


def _argument_keys(strict: bool) -> Callable[[Document], list[Any]]:
    if strict:
        return lambda d: [(a.span.start, a.span.end, e.trigger.label, a.role) for e in d.events for a in e.arguments]
    return lambda d: [(a.span.start, a.span.end, e.trigger.label) for e in d.events for a in e.arguments]


_DOCS = {
    ("entities", "strict"): "Entity mentions: offsets and entity type match.",
    ("entities", "boundaries"): "Entity mentions: offsets match (types ignored).",
    ("relations", "strict"): "Relations, strict (Taillé et al. 2020): type, offsets, entity types of both arguments.",
    ("relations", "boundaries"): "Relations, boundaries (Taillé et al. 2020): type and offsets of both arguments.",
    ("triggers", "strict"): "Trigger classification (Li, Ji and Huang 2013): trigger offsets and event type match.",
    ("triggers", "boundaries"): "Trigger identification (Li, Ji and Huang 2013): trigger offsets match.",
    ("arguments", "strict"): "Argument classification (Li, Ji and Huang 2013): offsets, event type and role match.",
    ("arguments", "boundaries"): "Argument identification (Li, Ji and Huang 2013): offsets and event type match.",
}


def _check_mode(mode: Any) -> str:
    if mode not in MODES:
        raise ValueError(f"Unknown IE mode {mode!r}; expected one of {', '.join(MODES)}.")
    return str(mode)


@functools.cache
def _key_functions(mode: str, directed: bool) -> dict[str, Callable[[Document], list[Any]]]:
    strict = mode == "strict"
    return {
        "entities": _entity_keys(strict),
        "relations": _relation_keys(strict, directed),
        "triggers": _trigger_keys(strict),
        "arguments": _argument_keys(strict),
    }


def _figure_stats(
    mode: str, directed: bool, figure: str, predictions: Sequence[Any], references: Sequence[Any]
) -> np.ndarray:
    """Per document ``(matched, predicted, reference)`` keys of one figure: a member's batch function.

    A module-level function (bound by :func:`functools.partial`), so that worker processes unpickle it without
    importing JAX.
    """
    key = _key_functions(mode, directed)[figure]
    _check_documents(predictions, "predictions")
    _check_documents(references, "references")
    rows = []
    for p, r in zip(predictions, references):
        kp, kr = key(p), key(r)
        rows.append((_matched(kp, kr) if kp and kr else 0, len(kp), len(kr)))
    return np.array(rows, np.float64).reshape(-1, 3)


@functools.cache
def _batch_stats(mode: str, directed: bool) -> dict[str, Callable[..., np.ndarray]]:
    figures = _key_functions(mode, directed)
    return {figure: functools.partial(_figure_stats, mode, directed, figure) for figure in figures}


def _matched(predicted: list[Any], reference: list[Any]) -> int:
    """The size of the multiset intersection of two lists of keys (the one-to-one matching of equal keys)."""
    sp, sr = set(predicted), set(reference)
    if len(sp) == len(predicted) and len(sr) == len(reference):  # no repeated key: a set intersection
        return len(sp & sr)
    counts = Counter(reference)
    return sum(min(n, counts.get(k, 0)) for k, n in Counter(predicted).items())


@class_factory
def _suite(mode: str, directed: bool) -> type[Suite]:
    from metametric_jax.build import stats_metric  # the accumulators (and JAX) only when asked for
    from metametric_jax.suite import make_suite

    members = {}
    for figure, batch_stats in _batch_stats(mode, directed).items():
        doc = (
            f"{_DOCS[figure, mode]}\n\n"
            "    .. math::\n\n"
            r"        \phi(P, R) = |K(P) \cap K(R)| \text{ (multisets of keys)}"
            "\n\n    Inputs: one :class:`~metametric_jax.tasks.ie.Document` per example.\n"
        )
        suffix = "" if directed or figure != "relations" else "_undirected"
        members[figure] = stats_metric(
            name=f"ie_{figure}_{mode}{suffix}", batch_stats=batch_stats, normalizer="f1", doc=doc
        )
    return make_suite(
        f"ie_{mode}" + ("" if directed else "_undirected"),
        members,
        doc=f"IE figures, mode {mode!r}"
        + ("" if directed else ", undirected relations")
        + ": "
        + "; ".join(_DOCS[f, mode] for f in FIGURES),
    )


def IEMetric(mode: str = "strict", *, directed: bool = True) -> type[Suite]:  # noqa: N802 - a class factory
    r"""The IE accumulator: a suite of the four figures (entities, relations, triggers, arguments) of ``mode``.

    Each member compares the keys of the items of a document (see the module docstring) as multisets:

    .. math::

        m_i = |K(P_i) \cap K(R_i)|, \quad \mathrm{P} = \frac{\sum_i m_i}{\sum_i |K(P_i)|}, \quad
        \mathrm{R} = \frac{\sum_i m_i}{\sum_i |K(R_i)|}, \quad
        F_1 = \frac{2 \sum_i m_i}{\sum_i |K(P_i)| + \sum_i |K(R_i)|}

    Sources: Li, Ji and Huang (ACL 2013) for triggers and arguments, as DyGIE++ and OneIE score them; Bekoulis et al.
    (EMNLP 2018) and Taillé et al. (EMNLP 2020) for strict and boundaries relations.

    State attributes: ``states``, one metric state per figure (``entities``, ``relations``, ``triggers``,
    ``arguments``), each holding the micro totals (matched, predicted, reference), the per-document sums of the
    normalized figures and the document count; ``compute()`` gives each figure's ``precision``, ``recall``, ``f1``,
    ``jaccard`` and their ``macro_`` means over documents.

    Args:
        mode: ``"strict"`` or ``"boundaries"``.
        directed: whether a relation's head and tail are ordered (default) or may be swapped.

    Returns:
        The suite class, one per configuration (the same class on every call, so states merge).

    Example:
        >>> m = IEMetric("strict")
        >>> ref = Document(events=(Event(Span(3, 4, "Attack"), (Argument(Span(0, 1, "PER"), "Attacker"),)),))
        >>> pred = Document(events=(Event(Span(3, 4, "Attack"), (Argument(Span(0, 1, "PER"), "Target"),)),))
        >>> out = m.from_model_output([pred], [ref]).compute()
        >>> float(out["triggers"]["f1"]), float(out["arguments"]["f1"])
        (1.0, 0.0)
    """
    return _suite(_check_mode(mode), bool(directed))


# --------------------------------------------------------------------------------------------------------- scoring
def _check_documents(values: Sequence[Any], side: str) -> None:
    for k, d in enumerate(values):
        if not isinstance(d, Document):
            raise TypeError(f"{side}[{k}] must be a Document; found {type(d).__name__} {d!r}.")


def document_stats(
    predictions: Sequence[Document], references: Sequence[Document], *, mode: str = "strict", directed: bool = True
) -> dict[str, np.ndarray]:
    """Per-document counts of each figure: ``{figure: array (n, 3)}`` of (matched, predicted, reference).

    Raises:
        ValueError: unknown mode, or the sequences differ in length.
        TypeError: an item is not a :class:`Document`.
    """
    functions = _batch_stats(_check_mode(mode), bool(directed))
    check_lengths(predictions, references, "ie", "document")
    return {f: np.asarray(fn(predictions, references), np.float64).reshape(-1, 3) for f, fn in functions.items()}


def _figure(matched: float, predicted: float, reference: float, empty: float = 0.0) -> dict[str, Any]:
    if predicted == 0 and reference == 0:
        figures = {"precision": empty, "recall": empty, "f1": empty}
    else:
        figures = prf(matched, predicted, reference)
    counts = {"matched": int(matched), "predicted": int(predicted), "reference": int(reference)}
    return {**figures, **counts}


def document_rows(stats: dict[str, np.ndarray]) -> np.ndarray:
    """The additive rows of :func:`document_stats`, float64 ``(n, 3 * len(FIGURES))``.

    Per document, each figure's matched, predicted and reference counts, in :data:`FIGURES` order.
    """
    parts = [np.asarray(stats[f], np.float64).reshape(-1, 3) for f in FIGURES]
    return np.concatenate(parts, axis=1)


def readout(totals: np.ndarray | Sequence[float]) -> dict[str, dict[str, float]]:
    """The corpus figures of totals laid out as :func:`document_rows`: per figure ``precision``, ``recall``, ``f1``.

    Micro averages (:func:`~metametric_jax.normalizer.prf`): 0.0 where a denominator is 0. Any non-negative real
    totals are read (the bootstrap weights documents).
    """
    values = [float(x) for x in totals]
    if len(values) != 3 * len(FIGURES):
        raise ValueError(f"expected {3 * len(FIGURES)} IE totals; found {len(values)}.")
    return {f: prf(*values[3 * k : 3 * k + 3]) for k, f in enumerate(FIGURES)}


def figures(stats: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """Corpus figures from :func:`document_stats`: :func:`readout` of the summed :func:`document_rows`, and counts.

    Returns:
        Per figure the micro ``precision``, ``recall``, ``f1`` (0 where a denominator is 0) and the counts
        ``matched``, ``predicted``, ``reference``.
    """
    totals = exact_totals(document_rows(stats))
    out = readout(totals)
    for k, f in enumerate(FIGURES):
        matched, predicted, reference = totals[3 * k : 3 * k + 3]
        out[f] = {**out[f], "matched": int(matched), "predicted": int(predicted), "reference": int(reference)}
    return out


def state_report(state: Any) -> dict[str, dict[str, float]]:
    """The corpus figures of a (reduced) :func:`IEMetric` state in float64: :func:`readout` of its exact totals.

    Per figure ``precision``, ``recall``, ``f1``, :func:`score`'s bit for bit on the same documents; ``compute()`` is
    the jittable float32 twin.

    Raises:
        TypeError: if ``state`` is not a state of an :func:`IEMetric` class.
    """
    members = getattr(state, "states", None)
    name = str(getattr(getattr(state, "config", None), "name", ""))
    if not isinstance(members, Mapping) or not name.startswith("ie_") or not set(FIGURES) <= set(members):
        raise TypeError(f"state_report expects an IEMetric state; found {type(state).__name__}.")
    return readout([t[k] for f in FIGURES for t in [members[f].totals()] for k in ("xy", "xx", "yy")])


def score(
    predictions: Sequence[Document], references: Sequence[Document], *, mode: str = "strict", directed: bool = True
) -> dict[str, Any]:
    """Corpus figures of predicted documents against reference documents (micro averages, as the field reports).

    Headline figures: ``scores["relations"]["f1"]`` for relation extraction and ``scores["arguments"]["f1"]`` for
    event extraction (argument classification in strict mode).

    Args:
        predictions: the predicted documents.
        references: the reference documents, in the same order.
        mode: ``"strict"`` (offsets and types) or ``"boundaries"`` (offsets; see the module docstring).
        directed: whether relation arguments are ordered.

    Returns:
        ``{"mode", "documents", "entities", "relations", "triggers", "arguments"}``; each figure a dict of
        ``precision``, ``recall``, ``f1`` (fractions) and ``matched``, ``predicted``, ``reference`` (counts).
    """
    out: dict[str, Any] = {"mode": _check_mode(mode), "documents": len(references)}
    out.update(figures(document_stats(predictions, references, mode=mode, directed=directed)))
    return out


def _absent_warnings(pred_obj: list[Document], ref_obj: list[Document], pred_path: str) -> list[str]:
    out = []
    for name in ("entities", "relations", "events"):
        ref_has = any(getattr(d, name) for d in ref_obj)
        pred_has = any(getattr(d, name) for d in pred_obj)
        if ref_has and not pred_has:
            out.append(f"{pred_path} has no {name} in any document, while the reference has some")
    return out


def _stats_chunk(mode: str, directed: bool, predictions: list[Document], references: list[Document]) -> Any:
    return document_stats(predictions, references, mode=mode, directed=directed)


def stats_in_chunks(
    predictions: Sequence[Document],
    references: Sequence[Document],
    *,
    mode: str = "strict",
    directed: bool = True,
    jobs: int = 1,
    progress: Callable[[int, int], Any] | None = None,
) -> dict[str, np.ndarray]:
    """:func:`document_stats` with the documents in chunks counted by ``jobs`` worker processes (0: every core).

    The same arrays for every number of processes; ``progress(done, total)`` is called as chunks finish.
    """
    from metametric_jax import parallel

    task = functools.partial(_stats_chunk, mode, bool(directed))
    got: dict[str, np.ndarray] = parallel.map_rows(
        task, list(predictions), list(references), jobs=jobs, progress=progress, preload=[__name__]
    )
    return got


def count_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    mode: str = "strict",
    directed: bool = True,
    progress: Callable[[int], Any] | None = None,
    jobs: int = 1,
) -> tuple[list[tuple[int, Document]], dict[str, np.ndarray], list[str]]:
    """The per-document counts of two JSON Lines files, as :func:`score_files` counts them.

    Args:
        predictions: the predicted documents (schema in the module docstring).
        references: the reference documents, the same documents in the same order.
        mode: ``"strict"`` or ``"boundaries"``.
        directed: whether relation arguments are ordered.
        progress: called with the number of documents counted so far, every 256 documents.
        jobs: worker processes that count the documents (0: every core; default 1: this process); the counts are
            the same for every number.

    Returns:
        ``(reference documents with their line numbers, document_stats, warnings)``: the warnings of
        :func:`score_files`.

    Raises:
        InputFormatError: malformed input, or files whose documents differ in number, order or ids.
    """
    _check_mode(mode)
    pred_path, ref_path = os.fspath(predictions), os.fspath(references)
    ref_docs = read_documents(ref_path)
    pred_docs = read_documents(pred_path)
    pair_documents(pred_docs, ref_docs, pred_path, ref_path)
    preds, refs = [d for _, d in pred_docs], [d for _, d in ref_docs]
    if jobs != 1:
        report = None if progress is None else (lambda done, total: progress(done))
        stats = stats_in_chunks(preds, refs, mode=mode, directed=directed, jobs=jobs, progress=report)
    elif progress is None:
        stats = document_stats(preds, refs, mode=mode, directed=directed)
    else:
        parts = []
        for lo in range(0, len(refs), 256):
            parts.append(document_stats(preds[lo : lo + 256], refs[lo : lo + 256], mode=mode, directed=directed))
            progress(min(len(refs), lo + 256))
        stats = {f: np.concatenate([p[f] for p in parts]) if parts else np.zeros((0, 3)) for f in FIGURES}
    warnings = [*ref_docs.warnings, *pred_docs.warnings]
    if not refs:
        warnings.append(f"{ref_path} holds no documents; every figure is 0")
    return ref_docs, stats, warnings + _absent_warnings(preds, refs, pred_path)


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    mode: str = "strict",
    directed: bool = True,
    progress: Callable[[int], Any] | None = None,
    jobs: int = 1,
) -> Report:
    """Score a JSON Lines file of predicted documents against one of reference documents.

    Args:
        predictions: the predicted documents (schema in the module docstring).
        references: the reference documents, the same documents in the same order.
        mode: ``"strict"`` or ``"boundaries"``.
        directed: whether relation arguments are ordered.
        progress: called with the number of documents scored so far, every 256 documents (for a progress bar).
        jobs: worker processes that count the documents (0: every core; default 1: this process); the report is
            the same for every number.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score`; ``items`` one per document, in file
        order: ``{"id", "line", figure: {...}}``, where ``id`` is the reference document's id (or ``None``) and
        ``line`` its line in the reference file; a figure with no item on either side has precision, recall and F1
        1.0 (the package's empty-structure rule); ``warnings`` for an ignored key that resembles a known one (in
        either file; see :mod:`~metametric_jax.tasks.readers.ie_jsonl`), when the reference holds no document, or
        when the predictions never hold a kind of item the reference holds.

    Raises:
        InputFormatError: malformed input (offsets past a document's tokens included), or files whose documents differ
            in number, order, ids or number of tokens.
    """
    ref_docs, stats, warnings = count_files(
        predictions=predictions, references=references, mode=mode, directed=directed, progress=progress, jobs=jobs
    )
    scores: dict[str, Any] = {"mode": mode, "documents": len(ref_docs), **figures(stats)}
    items = []
    for k, (line, doc) in enumerate(ref_docs):
        item: dict[str, Any] = {"id": doc.id, "line": line}
        for f in FIGURES:
            matched, predicted, reference = stats[f][k]
            item[f] = _figure(matched, predicted, reference, empty=1.0)
        items.append(item)
    return Report(scores, items, warnings)
