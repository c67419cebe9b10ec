r"""Where dependency parsers fail and where one beats another: UAS and LAS per relation, arc length, direction, depth.

The analyses of ``metametric-jax analyze dependency`` (:mod:`metametric_jax.analysis` is the engine), on the words
of the CoNLL 2018 evaluation (:mod:`metametric_jax.tasks.dependency`: the two sides aligned on the characters of the
text, so a system may tokenize and split sentences differently; ``exclude_punct`` and ``strip_subtypes`` as there):

* ``overall`` — one bucket, ``all``: the UAS and LAS precision, recall and F1 of ``score dependency``, exactly (its
  per-sentence counts, :func:`~metametric_jax.tasks.dependency.sentence_rows`, read out by its
  :func:`~metametric_jax.tasks.dependency.readout`); its test is ``compare dependency``'s test of the LAS F1.
* ``deprel`` — by dependency relation (subtypes cut unless ``strip_subtypes=False``, as the scorer compares them);
* ``arc_length`` — by the distance between a word and its head in words of its sentence: ``root`` (the word
  attached to the root), ``1``, ``2``, ``3-6``, ``7+``;
* ``direction`` — by where the head lies: ``left`` (the head precedes the word), ``right`` (it follows), ``root``;
* ``depth`` — by the number of arcs from the root to the word: ``1`` (the word attached to the root), ``2``, ``3``,
  ``4``, ``5-6``, ``7+`` (``cycle`` for a word that does not reach the root, with ``check_trees=False``);
* custom — ``buckets={"name": fn}``: ``fn(Word)`` names the bucket of a word.

These are MaltEval's groupings (Nilsson and Nivre, "MaltEval: An Evaluation and Visualization Tool for Dependency
Parsing", LREC 2008: ``Deprel``, ``ArcLength``, ``ArcDirection``, ``ArcDepth``), with its per-group precision and
recall: a reference word falls in the bucket of its reference attribute and counts for recall, a predicted word in
the bucket of its own attribute in the predicted tree and counts for precision. A word is correct for UAS when it is
aligned and its head is aligned to the reference word's head (or both are roots), for LAS when its relation agrees
too, as the scorer counts it. A bucket's figures are the split read-out of :mod:`metametric_jax.tasks.buckets`
(precision over predicted words, recall over reference words, F1 their harmonic mean); a bucket's ``count`` is its
reference words, and its LAS F1 is tested. Where both sides tokenize alike, UAS and LAS
precision, recall and F1 of ``overall`` are the familiar attachment scores (the share of words).

Not tested (counts per system): ``confusion`` — gold relation (rows) × predicted relation (columns) over the
aligned words whatever their heads (MaltEval's confusion matrix of relations), with an ``(unaligned)`` column for
reference words no predicted word is aligned to and an ``(unaligned)`` row for predicted words aligned to none.

Predicted words count in the reference sentence where they start, as the scorer counts them; the unit resampled is
the reference sentence, or the document its ``# newdoc`` comments start (``--unit``), as ``score --bootstrap`` and
``compare`` resample.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks import dependency
from metametric_jax.tasks.dependency_counts import _ROOT, _align, _check_text, _Side, parse_options
from metametric_jax.tasks.readers.conllu import DepSentence, documents, read_conllu

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "ARC_LENGTHS",
    "DIRECTIONS",
    "DEPTHS",
    "UNALIGNED",
    "Word",
    "arc_length_bucket",
    "direction_bucket",
    "depth_bucket",
    "word_readout",
    "analyze",
    "analyze_files",
]

ARC_LENGTHS = ("root", "1", "2", "3-6", "7+")
DIRECTIONS = ("left", "right", "root")
DEPTHS = ("1", "2", "3", "4", "5-6", "7+", "cycle")
#: the confusion matrix's row and column of words without a counterpart
UNALIGNED = "(unaligned)"
_FIGURES = ("uas", "las")


class Word(NamedTuple):
    """A word as a custom bucketing sees it.

    Attributes:
        sentence: the reference sentence it counts in (0-based; a predicted word's is the one where it starts).
        id: its index in its own sentence (1-based).
        form: its form.
        upos: its universal part of speech.
        deprel: its relation, as compared (subtypes cut unless ``strip_subtypes=False``).
        head: the index of its head in its own sentence (0 for the root).
        side: ``"reference"`` or ``"predicted"``.
    """

    sentence: int
    id: int
    form: str
    upos: str
    deprel: str
    head: int
    side: str


def arc_length_bucket(word: int, head: int) -> str:
    """``root``, ``1``, ``2``, ``3-6`` or ``7+``: the distance from a word to its head, in words."""
    if head == 0:
        return "root"
    d = abs(word - head)
    return str(d) if d <= 2 else "3-6" if d <= 6 else "7+"


def direction_bucket(word: int, head: int) -> str:
    """``left`` (the head precedes the word), ``right`` (it follows) or ``root``."""
    return "root" if head == 0 else "left" if head < word else "right"


def depth_bucket(depth: int | None) -> str:
    """``1`` ... ``4``, ``5-6``, ``7+``: arcs from the root to the word; ``cycle`` when it does not reach the root."""
    return "cycle" if depth is None else kit.range_bucket(depth, DEPTHS[:-1])


def word_readout(totals: Any) -> dict[str, dict[str, float]]:
    """``{"uas": {...}, "las": {...}}`` of a bucket's totals: the split read-out of each figure's four columns."""
    return {f: kit.split_readout(totals[4 * k : 4 * k + 4]) for k, f in enumerate(_FIGURES)}


def _word_count(totals: Any) -> float:
    return float(totals[4 + kit.REFERENCE])


_LAS = dependency.METRICS.index("las")


def _overall_readout(totals: Any) -> dict[str, dict[str, float | None]]:
    got = dependency.readout(totals)
    return {f: {k: got[f][k] for k in ("precision", "recall", "f1")} for f in _FIGURES}


def _overall_count(totals: Any) -> float:
    return float(totals[4 * _LAS + 2])


def _depths(head: Sequence[int]) -> list[int | None]:
    """Arcs from the root to each word (heads as global word indices, ``_ROOT`` for the root); None in a cycle."""
    out: list[int | None] = [None] * len(head)
    state = [0] * len(head)  # 0 unseen, 1 on the current path, 2 done
    for k in range(len(head)):
        path, node = [], k
        while node != _ROOT and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = head[node]
        base = 0 if node == _ROOT else out[node] if state[node] == 2 else None
        for w in reversed(path):
            state[w] = 2
            if base is not None:
                base += 1
            out[w] = base
    return out


class _Words:
    """The bucket of every word of one side, per analysis, and the custom buckets' words."""

    def __init__(self, side: _Side, sentence: np.ndarray, kind: str) -> None:
        ids = [w.id for w in side.words]
        heads = [w.head for w in side.words]
        self.buckets: dict[str, list[str]] = {
            "deprel": list(side.label),
            "arc_length": [arc_length_bucket(i, h) for i, h in zip(ids, heads)],
            "direction": [direction_bucket(i, h) for i, h in zip(ids, heads)],
            "depth": [depth_bucket(d) for d in _depths(side.head)],
        }
        self.side, self.sentence, self.kind = side, sentence, kind

    def words(self) -> list[Word]:
        s = self.side
        return [
            Word(int(k), w.id, w.form, w.upos, label, w.head, self.kind)
            for k, w, label in zip(self.sentence.tolist(), s.words, s.label)
        ]


_ANALYSES = (
    ("deprel", "Dependency relation", "the word's relation (MaltEval's Deprel)", None),
    ("arc_length", "Arc length", "words between the word and its head (MaltEval's ArcLength)", ARC_LENGTHS),
    ("direction", "Arc direction", "where the word's head lies (MaltEval's ArcDirection)", DIRECTIONS),
    ("depth", "Depth", "arcs from the root to the word (MaltEval's ArcDepth)", DEPTHS),
)


def _report(
    gold: Sequence[DepSentence],
    systems: Sequence[Sequence[DepSentence]],
    *,
    names: Sequence[str],
    references: str | None,
    units: np.ndarray,
    unit: str,
    buckets: Mapping[str, Callable[[Word], Any]] | None,
    settings: kit.Settings,
    options: Mapping[str, Any],
    warnings: Sequence[str] = (),
    jobs: int = 1,
) -> dict[str, Any]:
    check_trees, exclude_punct, strip = parse_options(options)
    kit.refuse_names(buckets, ("overall", "confusion", *(a[0] for a in _ANALYSES)))
    g_side = _Side(list(gold), strip, check_trees, "<references>")
    starts = np.asarray([a for a, _ in g_side.spans], np.int64)
    g_sentence = np.asarray(g_side.sentence_of, np.int64)
    g_words = _Words(g_side, g_sentence, "reference")
    g_custom = g_words.words() if buckets else []
    g_upos = [w.upos for w in g_side.words]
    width = 4 * len(_FIGURES)
    found = kit.Analyses(len(systems), units, settings)
    overall = found.add(
        "overall",
        len(dependency.METRICS) * 4,
        _overall_readout,
        "las/f1",
        count=_overall_count,
        title="Overall",
        description="every word: score dependency's UAS and LAS",
    )
    items = {
        name: found.add(
            name,
            width,
            word_readout,
            "las/f1",
            count=_word_count,
            order=fixed,
            sort=fixed is None,  # relations: in alphabetical order
            title=title,
            description=description,
        )
        for name, title, description, fixed in _ANALYSES
    }
    items.update(found.custom(buckets, width, word_readout, "las/f1", count=_word_count))
    pairs_of, missed_of, spurious_of = [], [], []
    for s, sentences in enumerate(systems):
        counts = dependency.counts_in_chunks(list(sentences), list(gold), jobs=jobs, **options)
        overall.add(dependency.sentence_rows(counts), units, ["all"] * len(gold), s)
        p_side = _Side(list(sentences), strip, check_trees, "<predictions>")
        _check_text(g_side, p_side)
        pairs, _, _ = _align(g_side, p_side)
        to_gold = np.full(len(p_side.words), -1, np.int64)
        g_scored = np.array([not (exclude_punct and u == "PUNCT") for u in g_upos], bool)
        p_scored = np.array([not (exclude_punct and w.upos == "PUNCT") for w in p_side.words], bool)
        for g, p in pairs:
            to_gold[p] = g
            p_scored[p] = g_scored[g]
        g_ok = np.zeros((len(g_side.words), 2))
        p_ok = np.zeros((len(p_side.words), 2))
        confused, g_aligned, p_aligned = [], np.zeros(len(g_side.words), bool), np.zeros(len(p_side.words), bool)
        for g, p in pairs:
            if not g_scored[g]:
                continue
            h = p_side.head[p]
            head = g_side.head[g] == (h if h == _ROOT else int(to_gold[h]))
            labelled = head and g_side.label[g] == p_side.label[p]
            g_ok[g] = p_ok[p] = (head, labelled)
            confused.append((g_side.label[g], p_side.label[p]))
            g_aligned[g] = p_aligned[p] = True
        g_rows = np.zeros((len(g_side.words), width))
        g_rows[:, kit.CORRECT_REFERENCE :: 4] = g_ok
        g_rows[:, kit.REFERENCE :: 4] = 1.0
        p_rows = np.zeros((len(p_side.words), width))
        p_rows[:, kit.CORRECT_PREDICTED :: 4] = p_ok
        p_rows[:, kit.PREDICTED :: 4] = 1.0
        p_sentence = np.searchsorted(starts, np.asarray(p_side.start, np.int64), side="right") - 1
        p_words = _Words(p_side, p_sentence, "predicted")
        gk, pk = np.flatnonzero(g_scored), np.flatnonzero(p_scored)
        g_units, p_units = units[g_sentence[gk]], units[p_sentence[pk]]
        for name, _, _, _ in _ANALYSES:
            items[name].add(g_rows[gk], g_units, [g_words.buckets[name][k] for k in gk.tolist()], s)
            items[name].add(p_rows[pk], p_units, [p_words.buckets[name][k] for k in pk.tolist()], s)
        if buckets:
            p_custom = p_words.words()
            for name, fn in buckets.items():
                items[name].add(g_rows[gk], g_units, [str(fn(g_custom[k])) for k in gk.tolist()], s)
                items[name].add(p_rows[pk], p_units, [str(fn(p_custom[k])) for k in pk.tolist()], s)
        pairs_of.append(confused)
        missed_of.append([g_side.label[k] for k in np.flatnonzero(g_scored & ~g_aligned).tolist()])
        spurious_of.append([p_side.label[k] for k in np.flatnonzero(p_scored & ~p_aligned).tolist()])

    confusion = kit.confusion_matrix(
        pairs_of,
        missed_of,
        spurious_of,
        lone=UNALIGNED,
        title="Relation confusion: gold relation (rows) x predicted relation (columns) of aligned words",
        description="aligned words, whatever their heads; (unaligned): words without a counterpart",
    )
    return found.report(
        "dependency", systems=names, references=references, unit=unit, extra={"confusion": confusion}, warnings=warnings
    )


def analyze(
    references: Sequence[DepSentence],
    systems: Sequence[Sequence[DepSentence]],
    *,
    names: Sequence[str] | None = None,
    units: Sequence[int] | None = None,
    unit: str = "sentences",
    buckets: Mapping[str, Callable[[Word], Any]] | None = None,
    check_trees: bool = True,
    exclude_punct: bool = False,
    strip_subtypes: bool = True,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of parsed sentences in memory (the JSON of ``metametric-jax analyze dependency``).

    Args:
        references: the reference sentences.
        systems: each system's sentences (the same text; tokenization and sentence splits may differ), the first the
            baseline every other is tested against.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        units: the resampling unit of each reference sentence (a document index); default: each sentence its own.
        unit: what a unit is, plural, for the report.
        buckets: custom bucketings, ``{name: fn(Word) -> bucket name}``.
        check_trees: refuse sentences that are not trees, as the scorer does.
        exclude_punct: leave out words whose reference UPOS is ``PUNCT``, as the scorer's option.
        strip_subtypes: compare relations without subtypes, as the scorer does by default.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: a sentence that is not a tree, or a system spelling another text.
        ValueError: on a bad request.
    """
    kit.need_systems(systems)
    gold = list(references)
    unit_of = np.arange(len(gold), dtype=np.int64) if units is None else np.asarray(units, np.int64)
    if unit_of.shape != (len(gold),):
        raise ValueError(f"units must give one unit per reference sentence ({len(gold)}); found shape {unit_of.shape}")
    options = {"check_trees": check_trees, "exclude_punct": exclude_punct, "strip_subtypes": strip_subtypes}
    return _report(
        gold,
        systems,
        names=kit.system_names(names, len(systems)),
        references=None,
        units=unit_of,
        unit=unit,
        buckets=buckets,
        settings=kit.Settings(**settings),
        options=options,
    )


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    unit: str | None = None,
    buckets: Mapping[str, Callable[[Word], Any]] | None = None,
    check_trees: bool = True,
    exclude_punct: bool = False,
    strip_subtypes: bool = True,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of CoNLL-U files: a reference file and system files read as ``score dependency`` reads them.

    Args:
        references: the reference CoNLL-U file.
        systems: the system files, the first the baseline.
        unit: ``"document"`` (the documents the reference's ``# newdoc`` comments start; the default where it has
            them) or ``"sentence"``: the unit resampled, as ``score dependency --bootstrap`` and ``compare``.
        buckets: custom bucketings, as :func:`analyze`.
        check_trees: as :func:`analyze`.
        exclude_punct: as :func:`analyze`.
        strip_subtypes: as :func:`analyze`.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is the
            same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: malformed CoNLL-U, a sentence that is not a tree, files that spell different texts, or
            ``--unit document`` on a file without ``# newdoc``.
        ValueError: on a bad request.
    """
    kit.need_systems(systems)
    ref_path = os.fspath(references)
    gold = read_conllu(ref_path)
    if not gold:
        raise InputFormatError(ref_path, None, "expected sentences to analyze; found none")
    parsed = []
    for path in systems:
        sentences = read_conllu(path)
        if not sentences:
            raise InputFormatError(os.fspath(path), None, f"expected the sentences of {ref_path}; found no sentence")
        parsed.append(sentences)
    units, unit_name = kit.resampled_units(unit, documents(gold), len(gold), ref_path, "'# newdoc' comment")
    options = {"check_trees": check_trees, "exclude_punct": exclude_punct, "strip_subtypes": strip_subtypes}
    return _report(
        gold,
        parsed,
        names=[os.fspath(p) for p in systems],
        references=ref_path,
        units=units,
        unit=unit_name,
        buckets=buckets,
        settings=kit.Settings(**settings),
        options=options,
        jobs=jobs,
    )
