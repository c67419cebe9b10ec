r"""Where NER systems fail and where one beats another: span figures per bucket, error categories, type confusions.

The analyses of ``metametric-jax analyze ner`` (:mod:`metametric_jax.analysis` is the engine: bucketed totals,
the Poisson bootstrap over the task's units, paired tests per bucket corrected over all of them):

* ``overall`` — one bucket, ``all``: the micro figures of ``score ner`` (the same counts, the same read-out), so its
  test is ``compare ner``'s test of the micro F1.
* ``type`` — one bucket per entity type: the per-type precision, recall and F1 of ``score ner``, exactly (the
  type's columns of the same sentence rows, :func:`metametric_jax.tasks.ner.file_rows`, read out by the same
  :func:`metametric_jax.normalizer.prf`); seqeval's and conlleval's per-type report.
* ``length`` — the entity's length in tokens: ``1``, ``2``, ``3``, ``4+``. A predicted entity's length buckets its
  predicted count (and its match), a reference entity's length its reference count; a match has one length. The
  bucketing of ExplainaBoard's NER entity-length attribute (Fu, Liu and Neubig 2020, "Interpretable Multi-dataset
  Evaluation for Named Entity Recognition").
* ``frequency`` (given a training file) — how often the entity's surface form (its tokens joined by one space, case
  kept) is an entity, of any type, in the training file: ``0`` (unseen), ``1-2``, ``3-9``, ``10+``; ExplainaBoard's
  entity-frequency attribute, in fixed buckets.
* custom — ``buckets={"name": fn}``: ``fn(entity)`` names the bucket of an :class:`Entity` (its sentence index,
  bounds, type and text), so a bucket may depend on the entity or on its sentence.

Every bucketed analysis reads a bucket's totals ``(matched, predicted, reference)`` with
:func:`~metametric_jax.normalizer.prf` and tests its F1; a bucket's ``count`` is its number of reference entities.

Two more views, counts per system (not tested):

* ``errors`` — the error categories of nervaluate under its four schemes, ``strict``, ``exact``, ``partial`` and
  ``type`` (:mod:`metametric_jax.tasks.ner_errors`): ``correct``, ``incorrect``, ``partial``, ``missed``,
  ``spurious``, with ``possible``, ``actual`` and nervaluate's precision, recall and F1.
* ``confusion`` — gold × predicted types over the entities whose bounds match exactly, with a ``(missed)`` column
  (reference entities with no predicted entity of the same bounds) and a ``(spurious)`` row (predicted entities with
  no reference entity of the same bounds), per system.

The length, frequency, custom, error and confusion views count the entities of the sentences; ``-DOCSTART-`` lines,
which ``score ner`` counts as conlleval does, are in ``overall`` and ``type`` only.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.inputs import check_lengths
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks.ner_errors import CATEGORIES, SCHEMES, scheme_counts
from metametric_jax.tasks.ner_errors import _categorize as _categorize  # re-exported: one sentence's matching
from metametric_jax.tasks.tagging import SpanTable, decode_tags, normalize_scheme

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "VERSION",
    "LENGTHS",
    "FREQUENCIES",
    "SCHEMES",
    "CATEGORIES",
    "MISSED",
    "SPURIOUS",
    "Entity",
    "bucket_readout",
    "length_bucket",
    "frequency_bucket",
    "surface_frequencies",
    "error_counts",
    "confusion",
    "analyze",
    "analyze_files",
]

#: the version of the report's JSON
VERSION = kit.VERSION
LENGTHS = ("1", "2", "3", "4+")
FREQUENCIES = ("0", "1-2", "3-9", "10+")
#: the confusion matrix's column of reference entities without a predicted entity of the same bounds
MISSED = "(missed)"
#: the confusion matrix's row of predicted entities without a reference entity of the same bounds
SPURIOUS = "(spurious)"

#: the columns of an entity's item row
MATCHED, PREDICTED, REFERENCE = 0, 1, 2


class Entity(NamedTuple):
    """An entity as a custom bucketing sees it.

    Attributes:
        sentence: its sentence (0-based, in the reference file's order).
        start: its first token (0-based).
        end: one past its last token.
        label: its type.
        text: its tokens joined by one space (``None`` when the file has no token column).
        side: ``"reference"`` or ``"predicted"``.
    """

    sentence: int
    start: int
    end: int
    label: str
    text: str | None
    side: str


def bucket_readout(totals: Any) -> dict[str, float]:
    """A bucket's ``{"precision", "recall", "f1"}`` from its totals ``(matched, predicted, reference)``.

    The read-out ``score ner`` computes each type's figures with (:func:`~metametric_jax.normalizer.prf`).
    """
    return kit.match_readout(totals)


def length_bucket(length: int) -> str:
    """``"1"``, ``"2"``, ``"3"`` or ``"4+"`` tokens."""
    return kit.range_bucket(length, LENGTHS)


def frequency_bucket(count: int) -> str:
    """``"0"``, ``"1-2"``, ``"3-9"`` or ``"10+"`` occurrences in the training file."""
    return kit.range_bucket(count, FREQUENCIES)


# ---------------------------------------------------------------------------------------------------- entities
@dataclasses.dataclass(frozen=True)
class _Side:
    """The entities of one side, sorted by (sentence, start): parallel int64 arrays; ``label`` indexes ``labels``."""

    sentence: np.ndarray
    start: np.ndarray
    end: np.ndarray
    label: np.ndarray

    @classmethod
    def of(cls, table: SpanTable) -> _Side:
        order = np.lexsort((table.start, table.sentence))
        return cls(*(np.asarray(a, np.int64)[order] for a in (table.sentence, table.start, table.end, table.label)))

    def __len__(self) -> int:
        return int(self.sentence.size)


def _keys(sides: Sequence[_Side], typed: bool, n_labels: int) -> list[np.ndarray]:
    """Integer keys of (sentence, start, end[, label]), equal iff the entities are equal."""
    cat = [np.concatenate([getattr(s, f) for s in sides]) for f in ("sentence", "start", "end", "label")]
    span = int(max(cat[2].max(initial=0), 1)) + 1
    rows = int(cat[0].max(initial=0)) + 1
    labels = max(n_labels, 1) if typed else 1
    if rows * span * span * labels < 2**62:
        key = (cat[0] * span + cat[1]) * span + cat[2]
        if typed:
            key = key * labels + cat[3]
    else:
        stacked = np.stack(cat if typed else cat[:3], 1)
        key = np.unique(stacked, axis=0, return_inverse=True)[1].reshape(-1)
    cuts = np.cumsum([0] + [len(s) for s in sides])
    return [key[cuts[j] : cuts[j + 1]] for j in range(len(sides))]


def _decode(tags: Sequence[Sequence[Sequence[str]]], scheme: str, labels: dict[str, int]) -> list[_Side]:
    names = ["references", *(f"system {k + 1}" for k in range(len(tags) - 1))]
    return [_Side.of(t) for t in decode_tags(list(zip(names, tags)), scheme, labels)]


def _texts(side: _Side, tokens: Sequence[Sequence[str]] | None) -> list[str] | None:
    if tokens is None:
        return None
    return [" ".join(tokens[s][a:b]) for s, a, b in zip(side.sentence.tolist(), side.start.tolist(), side.end.tolist())]


def surface_frequencies(
    tags: Sequence[Sequence[str]], tokens: Sequence[Sequence[str]], scheme: str = "IOB2"
) -> collections.Counter[str]:
    """How often each surface form (tokens joined by one space) is an entity, of any type, in tagged sentences."""
    side = _decode([tags], normalize_scheme(scheme), {})[0]
    return collections.Counter(_texts(side, tokens))


# ---------------------------------------------------------------------------------------------------- errors
def _sentences(side: _Side, n: int) -> list[list[tuple[int, int, int]]]:
    """Each sentence's entities as ``(start, end, label)``, in order of start."""
    out: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    for s, a, b, lab in zip(side.sentence.tolist(), side.start.tolist(), side.end.tolist(), side.label.tolist()):
        out[s].append((a, b, lab))
    return out


def error_counts(gold: _Side, pred: _Side, n_sentences: int) -> dict[str, dict[str, Any]]:
    """nervaluate's error categories and figures of one system per scheme: ``{scheme: {category: count, ...}}``."""  # noqa: D403
    return scheme_counts(_sentences(gold, n_sentences), _sentences(pred, n_sentences))


def confusion(gold: _Side, preds: Sequence[_Side], labels: Sequence[str]) -> dict[str, Any]:
    """Gold × predicted types over entities of the same bounds, with ``(missed)`` and ``(spurious)``, per system.

    Returns:
        ``{"gold": [types..., "(spurious)"], "predicted": [types..., "(missed)"], "matrices": [one list of rows per
        system]}``; row ``i``, column ``j`` counts the entities of gold type ``i`` predicted as type ``j``.
    """
    t = len(labels)
    order = sorted(range(t), key=lambda j: labels[j])
    position = np.empty(max(t, 1), np.int64)
    position[order] = np.arange(t)
    matrices = []
    for pred in preds:
        kg, kp = _keys([gold, pred], False, t)
        _, ig, ip = np.intersect1d(kg, kp, assume_unique=True, return_indices=True)
        grid = np.zeros((t + 1, t + 1), np.int64)
        np.add.at(grid, (position[gold.label[ig]], position[pred.label[ip]]), 1)
        lone_g = np.ones(len(gold), bool)
        lone_g[ig] = False
        lone_p = np.ones(len(pred), bool)
        lone_p[ip] = False
        np.add.at(grid, (position[gold.label[lone_g]], t), 1)
        np.add.at(grid, (t, position[pred.label[lone_p]]), 1)
        matrices.append(grid.tolist())
    names = [labels[j] for j in order]
    return {"gold": [*names, SPURIOUS], "predicted": [*names, MISSED], "matrices": matrices}


# ---------------------------------------------------------------------------------------------------- analyses
@dataclasses.dataclass(frozen=True)
class _Inputs:
    """One evaluation: the reference and each system's entities, per-sentence type rows, units and texts."""

    gold: _Side
    preds: list[_Side]
    labels: list[str]
    sentences: int
    units: np.ndarray  # the unit of each row of ``counts`` (of each sentence)
    counts: list[_Counts]  # per system: score ner's sentence counts
    tokens: Sequence[Sequence[str]] | None


@dataclasses.dataclass(frozen=True)
class _Counts:
    """A system's sentence counts as ``score ner`` counts them: (matched, predicted, reference), micro, per type."""

    micro: np.ndarray
    types: dict[str, np.ndarray]

    @classmethod
    def of_file(cls, got: Any) -> _Counts:
        from metametric_jax.tasks.ner import HEAD

        rows = got.rows
        blocks = {label: rows[:, HEAD + 3 * j : HEAD + 3 * j + 3] for j, label in enumerate(got.labels)}
        return cls(rows[:, :3], blocks)

    @classmethod
    def of_tags(cls, predictions: Sequence[Any], references: Sequence[Any], scheme: str) -> _Counts:
        from metametric_jax.tasks.spans import count_spans

        c = count_spans(predictions, references, scheme)
        return cls(c.micro(), {label: c.of(label) for label in c.labels})


def _add_entities(
    inputs: _Inputs, items: kit.Items, bucket_of: Callable[[_Side, str, list[str] | None], list[str]]
) -> None:
    """Item rows of every system: the reference entities (once per system) and the system's entities."""
    n_labels = len(inputs.labels)
    gold_buckets = bucket_of(inputs.gold, "reference", _texts(inputs.gold, inputs.tokens))
    for s, pred in enumerate(inputs.preds):
        kg, kp = _keys([inputs.gold, pred], True, n_labels)
        g = np.zeros((len(inputs.gold), 3))
        g[:, REFERENCE] = 1.0
        p = np.zeros((len(pred), 3))
        p[:, MATCHED], p[:, PREDICTED] = np.isin(kp, kg).astype(np.float64), 1.0
        items.add(g, inputs.units[inputs.gold.sentence], gold_buckets, s)
        items.add(p, inputs.units[pred.sentence], bucket_of(pred, "predicted", _texts(pred, inputs.tokens)), s)


def _report(
    inputs: _Inputs,
    *,
    systems: Sequence[str],
    references: str | None,
    unit: str,
    frequencies: Mapping[str, int] | None,
    buckets: Mapping[str, Callable[[Entity], Any]] | None,
    settings: kit.Settings,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    found = kit.Analyses(len(inputs.preds), inputs.units, settings)

    def add(name: str, title: str, description: str, order: Sequence[str] | None = None) -> kit.Items:
        return found.add(
            name, 3, bucket_readout, count=kit.match_count, order=order, title=title, description=description
        )

    overall = add("overall", "Overall", "every entity: score ner's micro figures")
    for s, counts in enumerate(inputs.counts):
        overall.add(counts.micro, inputs.units, ["all"] * inputs.units.size, s)
    by_type = add("type", "Entity type", "the entity's type: score ner's per-type figures", sorted(inputs.labels))
    for s, counts in enumerate(inputs.counts):
        for label, block in counts.types.items():
            keep = np.flatnonzero(block.any(axis=1))
            by_type.add(block[keep], inputs.units[keep], [label] * keep.size, s)
    _add_entities(
        inputs,
        add("length", "Entity length", "the entity's length in tokens", LENGTHS),
        lambda side, _, __: [length_bucket(x) for x in (side.end - side.start).tolist()],
    )
    if frequencies is not None:
        if inputs.tokens is None:
            raise ValueError("the frequency analysis needs the tokens: the reference file has no token column")
        described = "how often the entity's surface form is an entity in the training file"
        _add_entities(
            inputs,
            add("frequency", "Frequency in training", described, FREQUENCIES),
            lambda _, __, texts: [frequency_bucket(frequencies.get(t, 0)) for t in texts or []],
        )
    kit.refuse_names(buckets, [*found.names(), "errors", "confusion"])
    for name, fn in (buckets or {}).items():

        def custom(side: _Side, kind: str, texts: list[str] | None, fn: Any = fn) -> list[str]:
            labels = inputs.labels
            return [
                str(fn(Entity(s, a, b, labels[lab], None if texts is None else texts[i], kind)))
                for i, (s, a, b, lab) in enumerate(
                    zip(side.sentence.tolist(), side.start.tolist(), side.end.tolist(), side.label.tolist())
                )
            ]

        _add_entities(inputs, add(name, name, f"user-defined: {name}"), custom)
    per_system = [error_counts(inputs.gold, pred, inputs.sentences) for pred in inputs.preds]
    extra = {
        "errors": {scheme: [e[scheme] for e in per_system] for scheme in SCHEMES},
        "confusion": confusion(inputs.gold, inputs.preds, inputs.labels),
    }
    return found.report(
        "ner", systems=systems, references=references, unit=unit, of_counts=True, extra=extra, warnings=warnings
    )


def _inputs(
    references: Sequence[Sequence[str]],
    systems: Sequence[Sequence[Sequence[str]]],
    scheme: str,
    units: Any,
    tokens: Sequence[Sequence[str]] | None,
    counts: list[_Counts] | None = None,
) -> _Inputs:
    labels: dict[str, int] = {}
    n = len(references)
    for k, system in enumerate(systems):
        check_lengths(system, references, f"ner analysis, system {k + 1}", "sentence")
        for j, (a, b) in enumerate(zip(system, references)):
            if len(a) != len(b):
                raise ValueError(
                    f"system {k + 1}: sentence {j} (0-based) has {len(a)} tags but the reference has {len(b)}"
                )
    sides = _decode([references, *systems], scheme, labels)
    if counts is None:
        counts = [_Counts.of_tags(system, references, scheme) for system in systems]
    rows = counts[0].micro.shape[0] if counts else n
    unit_of = np.arange(rows, dtype=np.int64) if units is None else np.asarray(units, np.int64)
    if unit_of.shape != (rows,):
        raise ValueError(f"units must give one unit per sentence ({rows}); found shape {unit_of.shape}")
    return _Inputs(sides[0], sides[1:], list(labels), n, unit_of, counts, tokens)


def analyze(
    references: Sequence[Sequence[str]],
    systems: Sequence[Sequence[Sequence[str]]],
    *,
    names: Sequence[str] | None = None,
    scheme: str = "IOB2",
    tokens: Sequence[Sequence[str]] | None = None,
    units: Sequence[int] | None = None,
    unit: str = "sentences",
    frequencies: Mapping[str, int] | None = None,
    buckets: Mapping[str, Callable[[Entity], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of tag sequences in memory (the JSON of ``metametric-jax analyze ner``).

    Args:
        references: one tag sequence per sentence.
        systems: each system's tag sequences, the first the baseline every other is tested against.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        scheme: the tag scheme.
        tokens: the sentences' tokens (for the frequency analysis and custom buckets reading ``text``).
        units: the resampling unit of each sentence (a document index); default: each sentence its own unit.
        unit: what a unit is, plural, for the report.
        frequencies: surface form -> occurrences as an entity in training data (:func:`surface_frequencies`);
            adds the ``frequency`` analysis.
        buckets: custom bucketings, ``{name: fn(Entity) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    >>> gold = [["B-PER", "I-PER", "O", "B-LOC"]] * 12
    >>> a, b = [["B-PER", "I-PER", "O", "O"]] * 12, [["B-PER", "O", "O", "B-LOC"]] * 12
    >>> r = analyze(gold, [a, b], samples=200)
    >>> r["analyses"]["type"]["LOC"]["figures"][0]["f1"], r["analyses"]["type"]["LOC"]["figures"][1]["f1"]
    (0.0, 1.0)
    >>> r["analyses"]["errors"]["partial"][1]["partial"]
    12
    """
    scheme = normalize_scheme(scheme)
    kit.need_systems(systems)
    inputs = _inputs(references, systems, scheme, units, tokens)
    return _report(
        inputs,
        systems=kit.system_names(names, len(systems)),
        references=None,
        unit=unit,
        frequencies=frequencies,
        buckets=buckets,
        settings=kit.Settings(**settings),
    )


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    scheme: str = "IOB2",
    delimiter: str | None = None,
    outside: str | None = None,
    raw: bool = False,
    unit: str | None = None,
    frequency_from: str | os.PathLike[str] | None = None,
    buckets: Mapping[str, Callable[[Entity], Any]] | None = None,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of CoNLL files: a reference file and system files read as ``score ner`` reads them.

    Args:
        references: the reference file (the tag in the last column).
        systems: the system files, the first the baseline.
        scheme: the tag scheme, as :func:`metametric_jax.tasks.ner.score_files`.
        delimiter: the field separator, as there.
        outside: the outside tag of raw tags, as there.
        raw: tags without prefixes, as there.
        unit: ``"document"`` (the reference's ``-DOCSTART-`` documents; the default where it has them),
            ``"sentence"``: the unit resampled, as ``score ner --bootstrap`` and ``compare ner`` resample.
        frequency_from: a training file in the same format (tokens in the first column): adds ``frequency``.
        buckets: custom bucketings, as :func:`analyze`.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is
            the same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: on a malformed file or files that do not hold the same sentences.
        ValueError: on a bad option (a unit the file does not have, no token column for ``frequency_from``).
    """
    from metametric_jax.errors import InputFormatError
    from metametric_jax.tasks import ner
    from metametric_jax.tasks.readers import conll

    kit.need_systems(systems)
    options: dict[str, Any] = {"scheme": scheme, "delimiter": delimiter, "raw": raw}
    if outside is not None:
        options["outside"] = outside
    got = [ner.file_rows(references=references, predictions=p, **options, jobs=jobs) for p in systems]
    first = got[0]
    gold = first.references
    decoded = "IOB2" if raw else normalize_scheme(scheme)
    documents = first.documents() if hasattr(first, "documents") else gold.documents()
    units, unit_name = kit.resampled_units(unit, documents, first.rows.shape[0], gold.path, "-DOCSTART- line")
    counts = [_Counts.of_file(g) for g in got]
    inputs = _inputs(gold.tags, [g.predictions.tags for g in got], decoded, units, gold.tokens, counts)
    frequencies = None
    if frequency_from is not None:
        train = conll.read_conll(frequency_from, decoded, delimiter=delimiter, raw=raw, **_outside(outside, raw))
        if train.tokens is None:
            raise InputFormatError(train.path, None, "--frequency-from needs a token column (the first column)")
        frequencies = surface_frequencies(train.tags, train.tokens, decoded)
    warnings = list(dict.fromkeys(w for g in got for w in g.warnings))
    return _report(
        inputs,
        systems=[os.fspath(p) for p in systems],
        references=os.fspath(references),
        unit=unit_name,
        frequencies=frequencies,
        buckets=buckets,
        settings=kit.Settings(**settings),
        warnings=warnings,
    )


def _outside(outside: str | None, raw: bool) -> dict[str, str]:
    return {"outside": outside} if outside is not None and raw else {}
