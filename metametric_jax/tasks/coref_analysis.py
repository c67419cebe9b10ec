r"""Where coreference systems fail: Kummerfeld and Klein's error categories, what fixing each gains, tested buckets.

The analyses of ``metametric-jax analyze coref`` (:mod:`metametric_jax.analysis` is the engine: bucketed totals,
the Poisson bootstrap over the documents, paired tests per bucket corrected over all of them):

* ``overall`` — one bucket, ``all``: the F1 of MUC, B³, CEAF-e and LEA and the CoNLL average (and of the tested
  metric, where another), from ``score coref``'s per-document counts and its read-out
  (:func:`metametric_jax.tasks.coref_counts.readout`), so equal to ``score coref``'s figures bit for bit and its test
  to ``compare coref``'s test of the tested figure (the CoNLL F1 by default).
* ``length`` — the document's length in tokens; ``entities`` — its number of key entities: equal-frequency buckets
  of the key documents (:func:`metametric_jax.analysis.equal_frequency_buckets`; ExplainaBoard's bucketing by
  quantiles), so each bucket holds about a quarter of the documents. An item is a document: its counts add to its
  bucket; a bucket's ``count`` is its number of documents.
* custom — ``buckets={"name": fn}``: ``fn(Document)`` names the bucket of a document (its position, id, tokens and
  key), read out and tested as ``length``.

And the error categories of Kummerfeld and Klein (2013, "Error-Driven Analysis of Challenges in Coreference
Resolution", EMNLP), per system (not tested): the response of each document is turned into the key by a sequence of
operations (alter a mention's span, split a cluster, remove a mention, introduce a mention, merge two clusters), and
the operations are grouped into seven categories, applied in the paper's order:

1. ``span_error`` — a response mention that is not a key mention takes the span of a key mention that no response
   mention has (Alter Span). The paper pairs mentions of the same syntactic head; the files scored here need carry no
   parse, so a response mention is paired with an overlapping key mention instead: one to one, the pairs of largest
   overlap over union first (then by position).
2. ``conflated_entities`` — a response cluster holding key mentions of ``g > 1`` key entities is split into ``g``
   parts, one per key entity: ``g - 1`` errors (Split). Its mentions outside the key stay with the part of the key
   entity with the most mentions in the cluster (the earliest, on a tie) until the next step.
3. ``extra_mention`` — a mention outside the key in a cluster that holds key mentions is removed: one error each
   (Split and Remove).
4. ``extra_entity`` — a cluster without any key mention is removed: one error per cluster (Split and Remove).
5. ``divided_entity`` — the ``p > 1`` clusters holding mentions of one key entity are merged: ``p - 1`` errors
   (Merge).
6. ``missing_mention`` — a key mention missing from the response is added to the cluster of its key entity: one
   error each (Introduce and Merge).
7. ``missing_entity`` — a key entity none of whose mentions is in the response is added whole: one error per entity
   (Introduce and Merge).

After the seventh step the response is the key. Each category's ``gain`` is how much each metric's F1 (and the
CoNLL average) rises when that category's errors are fixed after those of the categories before it: the corpus is
rescored after each step with ``score coref``'s own counts and read-out, so the gains of the seven categories add up
to the distance from the system's figures to the key's own. Each span is read once (a repeated span at its first
occurrence, as ``--repeated-mentions first``); where no span is repeated, the figures before the first step are
``score coref``'s.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax import analysis, parallel
from metametric_jax.inputs import check_lengths
from metametric_jax.intervals import exact_totals
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks.coref_counts import METRICS, batch_counts, count_rows, document_counts, readout
from metametric_jax.tasks.coref_documents import CorefDocument, Entity, Mention

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "VERSION",
    "CATEGORIES",
    "FIGURES",
    "BUCKET_FIGURES",
    "TESTED",
    "Transformation",
    "Document",
    "bucket_readout",
    "span_pairs",
    "transform",
    "error_analysis",
    "analyze",
    "analyze_files",
]

#: the version of the report's JSON
VERSION = kit.VERSION
#: Kummerfeld and Klein's error categories, in the order their fixes are applied
CATEGORIES = (
    "span_error",
    "conflated_entities",
    "extra_mention",
    "extra_entity",
    "divided_entity",
    "missing_mention",
    "missing_entity",
)
#: the figures an error category's gain is given for: the F1 of each metric and the CoNLL average
FIGURES = (*METRICS, "conll")
#: the figures of a bucket (and the tested figure, where another): the F1 of the CoNLL metrics, LEA, and CoNLL
BUCKET_FIGURES = ("muc", "bcub", "ceafe", "lea", "conll")
#: the figures a test may be run on (``mentions`` is mention detection, not coreference)
TESTED = ("conll", *(m for m in METRICS if m != "mentions"))
#: the default number of equal-frequency buckets of the length and entities analyses
BINS = analysis.BINS


class Document(NamedTuple):
    """A document as a custom bucketing sees it.

    Attributes:
        position: its position (0-based, in the key's order).
        id: its id as the key file writes it (``None`` in memory).
        tokens: its number of tokens (``None`` where not known).
        key: its key document (:class:`~metametric_jax.tasks.coref.CorefDocument`): ``key.entities``,
            ``key.mentions()``...
    """

    position: int
    id: str | None
    tokens: int | None
    key: CorefDocument


Cluster = list[Mention]


def bucket_readout(totals: Any, figures: Sequence[str] = FIGURES) -> dict[str, float]:
    """The F1 of the given metrics (and the CoNLL average), from totals laid out as ``coref_counts.count_rows``.

    The F1 values of :func:`metametric_jax.tasks.coref_counts.readout`, the read-out of ``score coref``.
    """
    full = readout(totals)
    return {m: full[m]["f1"] for m in figures}


# ---------------------------------------------------------------------------------------------------- transformation
@dataclasses.dataclass(frozen=True)
class Transformation:
    """The response of one document turned into its key, step by step.

    Attributes:
        counts: ``{category: number of errors}`` for every category of :data:`CATEGORIES`.
        stages: the response before any fix, then after each category's fixes in turn (``len(CATEGORIES) + 1``
            documents; the last is the key's partition).
        key: the key document, each span once.
    """

    counts: dict[str, int]
    stages: tuple[CorefDocument, ...]
    key: CorefDocument


def _document(clusters: Iterable[Cluster]) -> CorefDocument:
    return CorefDocument(tuple(Entity(tuple(c)) for c in clusters if c))


def span_pairs(response: Sequence[Mention], key: Sequence[Mention]) -> list[tuple[Mention, Mention]]:
    """The span errors of a document: ``(response mention, key mention)`` pairs, one to one.

    Only response mentions that are not key mentions and key mentions that no response mention has take part; two
    overlapping spans (a token in common) may pair, the pairs of largest overlap over union (Jaccard) first, then
    in order of the response mention and the key mention.

    >>> m = Mention
    >>> span_pairs([m(0, 2), m(5, 5), m(7, 7)], [m(0, 0), m(1, 2), m(5, 5), m(9, 9)])
    [(Mention(start=0, end=2), Mention(start=1, end=2))]
    """
    keys, answered = set(key), set(response)
    lone_r = sorted({m for m in response if m not in keys})
    lone_k = sorted({m for m in key if m not in answered})
    candidates = []
    for r in lone_r:
        for k in lone_k:
            common = min(r.end, k.end) - max(r.start, k.start) + 1
            if common > 0:
                union = max(r.end, k.end) - min(r.start, k.start) + 1
                candidates.append((-Fraction(common, union), r, k))
    candidates.sort()
    used_r: set[Mention] = set()
    used_k: set[Mention] = set()
    out = []
    for _, r, k in candidates:
        if r not in used_r and k not in used_k:
            used_r.add(r)
            used_k.add(k)
            out.append((r, k))
    return sorted(out)


def transform(response: CorefDocument | Iterable[Any], key: CorefDocument | Iterable[Any]) -> Transformation:
    """Kummerfeld and Klein's operations turning ``response`` into ``key``, grouped into the error categories.

    Each span is read once on each side (at its first occurrence). See the module for the categories and the order.

    >>> t = transform([[0, 1, 2], [3]], [[0, 1], [2, 4]])
    >>> {c: n for c, n in t.counts.items() if n}
    {'conflated_entities': 1, 'extra_entity': 1, 'missing_mention': 1}
    >>> sorted(map(sorted, t.stages[-1].clusters())) == sorted(map(sorted, t.key.clusters()))
    True
    """
    key_doc = CorefDocument.of(key).first_occurrences()
    owner = {m: i for i, e in enumerate(key_doc.entities) for m in e.mentions}
    clusters: list[Cluster] = [sorted(e.mentions) for e in CorefDocument.of(response).first_occurrences().entities]
    counts = dict.fromkeys(CATEGORIES, 0)
    stages = [_document(clusters)]

    # 1. span errors: a response mention takes the span of the key mention it overlaps most
    pairs = dict(span_pairs([m for c in clusters for m in c], list(owner)))
    clusters = [[pairs.get(m, m) for m in c] for c in clusters]
    counts["span_error"] = len(pairs)
    stages.append(_document(clusters))

    # 2. conflated entities: a cluster split into one part per key entity; its extra mentions stay with the largest
    split: list[Cluster] = []
    for c in clusters:
        parts: dict[int, Cluster] = {}
        for m in c:
            if m in owner:
                parts.setdefault(owner[m], []).append(m)
        if len(parts) <= 1:
            split.append(c)
            continue
        counts["conflated_entities"] += len(parts) - 1
        largest = max(parts, key=lambda e: len(parts[e]))  # the first of the largest: parts are in order of mentions
        extra = [m for m in c if m not in owner]
        split += [parts[e] + extra if e == largest else parts[e] for e in parts]
    clusters = split
    stages.append(_document(clusters))

    # 3. extra mentions: removed from the clusters that hold key mentions
    kept: list[Cluster] = []
    for c in clusters:
        gold = [m for m in c if m in owner]
        if gold:
            counts["extra_mention"] += len(c) - len(gold)
            kept.append(gold)
        else:
            kept.append(c)
    clusters = kept
    stages.append(_document(clusters))

    # 4. extra entities: clusters without any key mention, removed
    counts["extra_entity"] = sum(1 for c in clusters if not any(m in owner for m in c))
    clusters = [c for c in clusters if any(m in owner for m in c)]
    stages.append(_document(clusters))

    # 5. divided entities: the clusters of one key entity merged (each cluster now lies in one key entity)
    merged: dict[int, Cluster] = {}
    for c in clusters:
        entity = owner[c[0]]
        if entity in merged:
            counts["divided_entity"] += 1
            merged[entity] = merged[entity] + c
        else:
            merged[entity] = list(c)
    stages.append(_document(merged.values()))

    # 6. missing mentions: each key entity's missing mentions added to its cluster
    for entity, c in merged.items():
        have = set(c)
        missing = [m for m in key_doc.entities[entity].mentions if m not in have]
        counts["missing_mention"] += len(missing)
        merged[entity] = c + missing
    stages.append(_document(merged.values()))

    # 7. missing entities: key entities with no mention in the response, added whole
    for entity, e in enumerate(key_doc.entities):
        if entity not in merged:
            counts["missing_entity"] += 1
            merged[entity] = list(e.mentions)
    stages.append(_document(merged[e] for e in sorted(merged)))
    return Transformation(counts, tuple(stages), key_doc)


def _stage_counts(
    responses: Sequence[CorefDocument | Iterable[Any]], keys: Sequence[CorefDocument | Iterable[Any]]
) -> list[tuple[list[Any], dict[str, int]]]:
    """Per document pair: the :func:`document_counts` of each stage of its :func:`transform`, and its error counts."""
    out = []
    for response, key in zip(responses, keys):
        t = transform(response, key)
        counts = document_counts(t.stages[0], t.key)
        stages = [counts]
        for j, category in enumerate(CATEGORIES, start=1):
            if t.counts[category]:  # a step without errors leaves the document as it was
                counts = document_counts(t.stages[j], t.key)
            stages.append(counts)
        out.append((stages, dict(t.counts)))
    return out


def error_analysis(
    responses: Sequence[CorefDocument | Iterable[Any]],
    keys: Sequence[CorefDocument | Iterable[Any]],
    *,
    jobs: int = 1,
) -> dict[str, dict[str, Any]]:
    """Each category's number of errors and the gain of fixing them, over a corpus: ``{category: {"count", "gain"}}``.

    ``gain`` is ``{figure: F1 after the category's fixes - F1 before}`` for each of :data:`FIGURES`, the fixes of the
    categories before it applied already (corpus figures: counts summed over documents, as ``score coref``).
    ``jobs`` worker processes transform the documents (0: every core; default 1: this process): the same result.

    >>> out = error_analysis([[[0, 1], [2, 3]]], [[[0, 1, 2, 3]]])
    >>> out["divided_entity"]["count"], round(out["divided_entity"]["gain"]["muc"], 4)
    (1, 0.2)
    """
    check_lengths(responses, keys, "error_analysis", "document")
    per_stage: list[list[dict[str, tuple[float, float, float, float]]]] = [[] for _ in range(len(CATEGORIES) + 1)]
    totals = dict.fromkeys(CATEGORIES, 0)
    for stages, found in parallel.map_items(_stage_counts, list(responses), list(keys), jobs=jobs, preload=[__name__]):
        for j, counts in enumerate(stages):
            per_stage[j].append(counts)
        for category in CATEGORIES:
            totals[category] += found[category]
    figures = [bucket_readout(exact_totals(count_rows(stage))) for stage in per_stage]
    out: dict[str, dict[str, Any]] = {}
    for j, category in enumerate(CATEGORIES, start=1):
        gain = {f: figures[j][f] - figures[j - 1][f] for f in FIGURES}
        out[category] = {"count": totals[category], "gain": gain}
    return out


# ---------------------------------------------------------------------------------------------------- analyses
def _report(
    responses: Sequence[Sequence[CorefDocument]],
    keys: Sequence[CorefDocument],
    rows: Sequence[np.ndarray],
    *,
    systems: Sequence[str],
    references: str | None,
    lengths: Sequence[int] | None,
    metric: str,
    bins: int,
    settings: kit.Settings,
    warnings: Sequence[str] = (),
    jobs: int = 1,
    buckets: Mapping[str, Callable[[Document], Any]] | None = None,
    ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    kit.refuse_names(buckets, ("overall", "length", "entities", "errors"))
    if metric not in TESTED:
        raise ValueError(f"the tested figure must be one of {', '.join(TESTED)}; found {metric!r}")
    n = rows[0].shape[0]
    units = np.arange(n, dtype=np.int64)
    found = kit.Analyses(len(rows), units, settings)
    shown = BUCKET_FIGURES if metric in BUCKET_FIGURES else (*BUCKET_FIGURES[:-1], metric, "conll")
    read = functools.partial(bucket_readout, figures=shown)

    def add(
        name: str, title: str, description: str, buckets: Sequence[str], order: Sequence[str] | None = None
    ) -> None:
        items = found.add(name, rows[0].shape[1], read, metric, order=order, title=title, description=description)
        for s, r in enumerate(rows):  # an item is a document: its counts add to its bucket
            items.add(r, units, buckets, s)

    add("overall", "Overall", "every document: score coref's figures (F1)", ["all"] * n)
    if lengths is not None:
        names, order = analysis.equal_frequency_buckets(lengths, bins)
        add("length", "Document length (tokens)", "the key document's tokens", names, order)
    names, order = analysis.equal_frequency_buckets([len(k.first_occurrences().entities) for k in keys], bins)
    add("entities", "Key entities per document", "the key document's entities", names, order)
    if buckets:
        documents = [
            Document(k, None if ids is None else ids[k], None if lengths is None else int(lengths[k]), key)
            for k, key in enumerate(keys)
        ]
        for name, fn in buckets.items():
            add(name, name, f"user-defined: {name}", [str(fn(d)) for d in documents])
    return found.report(
        "coref",
        systems=systems,
        references=references,
        unit="documents",
        truncated=True,
        extra={"errors": [error_analysis(r, keys, jobs=jobs) for r in responses]},
        warnings=warnings,
        titles={"errors": "Error categories"},
        counted=dict.fromkeys(found.names(), "documents"),
    )


def analyze(
    references: Sequence[CorefDocument | Iterable[Any]],
    systems: Sequence[Sequence[CorefDocument | Iterable[Any]]],
    *,
    names: Sequence[str] | None = None,
    lengths: Sequence[int] | None = None,
    metric: str = "conll",
    bins: int = BINS,
    buckets: Mapping[str, Callable[[Document], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of documents in memory (the JSON of ``metametric-jax analyze coref``).

    Args:
        references: the key documents (:class:`~metametric_jax.tasks.coref.CorefDocument` or lists of clusters).
        systems: each system's response documents, aligned with the keys; the first is the baseline.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        lengths: each document's number of tokens (adds the ``length`` analysis).
        metric: the tested figure: ``conll`` or a metric's F1 (``muc``, ``bcub``, ``ceafm``, ``ceafe``, ``blanc``,
            ``lea``).
        bins: the number of equal-frequency buckets of ``length`` and ``entities``.
        buckets: custom bucketings of documents, ``{name: fn(Document) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    >>> key = [[[0, 1], [3, 4]], [[0, 2]]] * 6
    >>> a, b = [[[0, 1, 3]], [[0, 2]]] * 6, key  # a merges two entities and misses a mention in every other document
    >>> r = analyze(key, [a, b], samples=100)
    >>> a_errors, b_errors = r["analyses"]["errors"]
    >>> a_errors["conflated_entities"]["count"], a_errors["missing_mention"]["count"], b_errors["span_error"]["count"]
    (6, 6, 0)
    """
    kit.need_systems(systems)
    keys = [CorefDocument.of(k) for k in references]
    responses = []
    for s, system in enumerate(systems):
        check_lengths(system, keys, f"coref analysis, system {s + 1}", "document")
        responses.append([CorefDocument.of(d) for d in system])
    if lengths is not None and len(lengths) != len(keys):
        raise ValueError(f"lengths must give one length per document ({len(keys)}); found {len(lengths)}")
    rows = [batch_counts(resp, keys) for resp in responses]
    return _report(
        responses,
        keys,
        rows,
        systems=kit.system_names(names, len(systems)),
        references=None,
        lengths=lengths,
        metric=metric,
        bins=bins,
        settings=kit.Settings(**settings),
        buckets=buckets,
    )


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    metric: str = "conll",
    bins: int = BINS,
    jobs: int = 1,
    buckets: Mapping[str, Callable[[Document], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of CoNLL-2012 files: a key file and response files read as ``score coref`` reads them.

    Args:
        references: the key file.
        systems: the response files, the first the baseline.
        repeated_mentions: as :func:`metametric_jax.tasks.coref.score_files` (the bucketed figures; the error
            categories read each span once).
        max_repeated_mentions: as there.
        check_words: as there.
        metric: the tested figure, as :func:`analyze`.
        bins: the number of equal-frequency buckets of ``length`` and ``entities``.
        jobs: worker processes that count the documents and their errors (0: every core; default 1: this process);
            the report is the same for every number.
        buckets: custom bucketings, as :func:`analyze`.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: on a malformed file or documents that do not hold the same tokens.
        ValueError: on a bad option.
    """
    from metametric_jax.tasks import coref_files
    from metametric_jax.tasks.readers.conll2012 import read_conll2012

    kit.need_systems(systems)
    if metric not in TESTED:
        raise ValueError(f"the tested figure must be one of {', '.join(TESTED)}; found {metric!r}")
    keys: list[CorefDocument] = []
    ids: list[str] = []
    responses, rows, warnings = [], [], []
    key_documents = read_conll2012(references)  # read once for every system
    for path in systems:
        resp, keys, ids, found = coref_files.read_files(
            predictions=path,
            references=references,
            repeated_mentions=repeated_mentions,
            max_repeated_mentions=max_repeated_mentions,
            check_words=check_words,
            key_documents=key_documents,
        )
        responses.append(resp)
        rows.append(count_rows(coref_files.counts_per_document(resp, keys, jobs=jobs)))
        warnings += found
    tokens = {doc.spec.strip(): doc.n_tokens for doc in key_documents.values()}
    return _report(
        responses,
        keys,
        rows,
        systems=[os.fspath(p) for p in systems],
        references=os.fspath(references),
        lengths=[tokens[i] for i in ids],
        metric=metric,
        bins=bins,
        settings=kit.Settings(**settings),
        warnings=list(dict.fromkeys(warnings)),
        jobs=jobs,
        buckets=buckets,
        ids=ids,
    )
