r"""Where constituency parsers fail and where one beats another: brackets per label and sentence length, EVALB's table.

The analyses of ``metametric-jax analyze constituency`` (:mod:`metametric_jax.analysis` is the engine), on the
brackets EVALB counts (:mod:`metametric_jax.tasks.constituency`, ``COLLINS.prm`` or a parameter file):

* ``overall`` — one bucket, ``all``: the bracket recall, precision and F1 of ``score constituency`` over all
  sentences and over those of at most ``CUTOFF_LEN`` words (``len40``), exactly (its per-sentence rows,
  :func:`~metametric_jax.tasks.constituency.sentence_rows`, read out by its
  :func:`~metametric_jax.tasks.constituency.readout`); its test is ``compare constituency``'s test of the F1.
* ``label`` — bracket recall, precision and F1 per phrase label (function tags cut, ``EQ_LABEL`` classes named by
  their smallest member, as EVALB compares labels; ``(unlabelled)`` for a bracket without a label, such as the root
  of ``( (S ...))``): a label's matches are the reference and predicted brackets of that label with the same span,
  one to one, in the valid sentences, so the labels' counts add up to EVALB's (labelled) totals; :math:`F_1 = 2PR /
  (P + R)` as EVALB computes it: the per-category breakdown of Collins' thesis and of EVALB users' scripts. With
  ``LABELED 0`` the summary ignores labels but this analysis still matches them (a warning says so).
* ``length`` — by sentence length (EVALB's length: reference words except traces): ``1-10``, ``11-20``, ``21-30``,
  ``31-40``, ``41+``; EVALB's figures of the sentences of each bucket (recall, precision, F1, complete match).
* custom — ``buckets={"name": fn}``: ``fn(Sentence)`` names the bucket of a sentence, read out as ``length``.

A bucket's ``count`` is its reference brackets; its F1 is tested.

Not tested: ``sentences`` — EVALB's per-sentence table for each system (``ID``, ``Len.``, ``Stat.``, ``Recal``,
``Prec.``, ``Bracket gold``, ``Bracket test``, ``Bracket matched`` (here ``matched``), ``Cross``, ``Words``,
``Tags``): one row per sentence and system, figures as fractions (shown as percentages), status ``valid``,
``error`` or ``skipped``.

The unit resampled is the sentence, as ``score constituency --bootstrap`` and ``compare constituency`` resample.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from metametric_jax._ratios import f_measure
from metametric_jax.analysis_report import letters
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import buckets as kit
from metametric_jax.tasks import constituency
from metametric_jax.tasks.constituency_counts import Brackets, EvalbParams, SentenceCounts
from metametric_jax.tasks.readers.ptb import Tree, Treebank, read_treebank

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "LENGTHS",
    "UNLABELLED",
    "STATUS",
    "SENTENCE_COLUMNS",
    "Sentence",
    "length_bucket",
    "label_readout",
    "analyze",
    "analyze_files",
]

LENGTHS = ("1-10", "11-20", "21-30", "31-40", "41+")
#: the label bucket of brackets without a label (an unlabelled root, ``( (S ...))``, is a bracket in EVALB)
UNLABELLED = "(unlabelled)"
#: EVALB's sentence status, by its code
STATUS = ("valid", "error", "skipped")
#: the columns of the per-sentence table
SENTENCE_COLUMNS = (
    "sentence",
    "system",
    "length",
    "status",
    "recall",
    "precision",
    "matched",
    "gold",
    "test",
    "crossing",
    "words",
    "correct_tags",
)
_FIELDS = len(constituency.ROW_FIELDS)


class Sentence(NamedTuple):
    """A sentence as a custom bucketing sees it.

    Attributes:
        position: its position (0-based).
        length: EVALB's length (reference words except those of ``DELETE_LABEL_FOR_LENGTH``).
        line: its line in the reference file.
    """

    position: int
    length: int
    line: int


def length_bucket(length: int) -> str:
    """``1-10``, ``11-20``, ``21-30``, ``31-40`` or ``41+`` words."""
    return kit.range_bucket(length, LENGTHS)


def label_readout(totals: Any) -> dict[str, float]:
    """``{"recall", "precision", "f1"}`` of a label's totals ``(matched, predicted, reference)``, as EVALB's."""
    m, t, g = (float(x) for x in totals[:3])
    r = m / g if g else 0.0
    p = m / t if t else 0.0
    return {"recall": r, "precision": p, "f1": f_measure(p, r)}


def _overall_readout(totals: Any) -> dict[str, dict[str, float]]:
    got = constituency.readout(totals)
    return {part: {k: got[part][k] for k in ("recall", "precision", "f1")} for part in ("all", "len40")}


def _sentences_readout(totals: Any) -> dict[str, float]:
    got = constituency.readout(totals)["all"]
    return {k: got[k] for k in ("recall", "precision", "f1", "complete_match")}


def _gold_brackets(totals: Any) -> float:
    return float(totals[constituency.ROW_FIELDS.index("gold_brackets")])


def _label_rows(brackets: Brackets, n_labels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (sentence, label): ``(matched, predicted, reference)`` brackets, with the sentence and the label."""
    g, t = brackets.gold, brackets.test
    both = np.concatenate([g, t])
    side = np.concatenate([np.zeros(len(g), np.int64), np.ones(len(t), np.int64)])
    if not both.size:
        return np.zeros((0, 3)), np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    n_gold = np.bincount(inverse[side == 0], minlength=len(keys))
    n_test = np.bincount(inverse[side == 1], minlength=len(keys))
    per = np.stack([np.minimum(n_gold, n_test), n_test, n_gold], 1).astype(np.float64)
    groups, where = np.unique(keys[:, [0, 3]], axis=0, return_inverse=True)
    rows = np.zeros((len(groups), 3))
    np.add.at(rows, where.reshape(-1), per)
    return rows, groups[:, 0], groups[:, 1]


def _sentence_table(all_counts: Sequence[SentenceCounts], letters: Sequence[str]) -> dict[str, Any]:
    rows = []
    n = len(all_counts[0].status) if all_counts else 0
    lists = [{f: getattr(c, f).tolist() for f in c._fields if f != "messages"} for c in all_counts]
    for k in range(n):
        for letter, c in zip(letters, lists):
            m, bg, bt = c["matched"][k], c["gold"][k], c["test"][k]
            rows.append(
                [
                    k + 1,
                    letter,
                    c["length"][k],
                    STATUS[c["status"][k]],
                    m / bg if bg else 0.0,
                    m / bt if bt else 0.0,
                    m,
                    bg,
                    bt,
                    c["crossing"][k],
                    c["words"][k],
                    c["correct_tags"][k],
                ]
            )
    return {
        "title": "EVALB's sentence table",
        "description": "per sentence and system: EVALB's length and status, bracket recall and precision, matched, "
        "gold and test brackets, crossing brackets, words and correct tags (error and skipped sentences count 0)",
        "columns": list(SENTENCE_COLUMNS),
        "rows": rows,
    }


def _report(
    gold: Treebank,
    systems: Sequence[Treebank],
    *,
    names: Sequence[str],
    references: str | None,
    params: EvalbParams,
    buckets: Mapping[str, Callable[[Sentence], Any]] | None,
    settings: kit.Settings,
    paths: Sequence[str],
    jobs: int = 1,
) -> dict[str, Any]:
    kit.refuse_names(buckets, ("overall", "label", "length", "sentences"))
    n = gold.sentences
    units = np.arange(n, dtype=np.int64)
    width = 2 * _FIELDS
    found = kit.Analyses(len(systems), units, settings)
    overall = found.add(
        "overall",
        width,
        _overall_readout,
        "all/f1",
        count=_gold_brackets,
        title="Overall",
        description="every sentence: score constituency's figures",
    )
    labels = found.add(
        "label",
        3,
        label_readout,
        count=kit.match_count,
        sort=True,
        title="Phrase label",
        description="the bracket's label (function tags cut, EQ_LABEL classes as one)",
    )
    lengths = found.add(
        "length",
        width,
        _sentences_readout,
        count=_gold_brackets,
        order=LENGTHS,
        title="Sentence length",
        description="EVALB's length of the sentence (reference words except traces)",
    )
    custom = found.custom(buckets, width, _sentences_readout, count=_gold_brackets)
    all_counts: list[SentenceCounts] = []
    warnings: list[str] = []
    for s, (bank, path) in enumerate(zip(systems, paths)):
        counts, brackets = constituency.brackets_in_chunks(bank, gold, params, jobs=jobs)
        all_counts.append(counts)
        warnings += constituency.file_warnings(counts, params, path)
        rows = constituency.sentence_rows(counts, params)
        overall.add(rows, units, ["all"] * n, s)
        lengths.add(rows, units, [length_bucket(x) for x in counts.length.tolist()], s)
        label_rows, sentence, label = _label_rows(brackets, len(brackets.labels))
        labels.add(label_rows, sentence, [brackets.labels[x] or UNLABELLED for x in label.tolist()], s)
        if buckets:
            info = [Sentence(k, x, y) for k, (x, y) in enumerate(zip(counts.length.tolist(), counts.line.tolist()))]
            for name, fn in buckets.items():
                custom[name].add(rows, units, [str(fn(x)) for x in info], s)
    if not params.labeled:
        warnings.append(
            "LABELED 0: the summary matches brackets on their spans alone, the label analysis on span and label"
        )
    return found.report(
        "constituency",
        systems=names,
        references=references,
        unit="sentences",
        of_counts=True,
        extra={"sentences": _sentence_table(all_counts, letters(len(systems)))},
        warnings=warnings,
    )


def _params(params: EvalbParams | str | os.PathLike[str] | None) -> EvalbParams:
    if params is None:
        return constituency.COLLINS
    return params if isinstance(params, EvalbParams) else constituency.read_params(params)


def analyze(
    references: Sequence[Tree | str],
    systems: Sequence[Sequence[Tree | str]],
    *,
    names: Sequence[str] | None = None,
    params: EvalbParams | str | os.PathLike[str] | None = None,
    buckets: Mapping[str, Callable[[Sentence], Any]] | None = None,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of trees in memory (the JSON of ``metametric-jax analyze constituency``).

    Args:
        references: the reference trees (:class:`~metametric_jax.tasks.readers.ptb.Tree` or bracketed strings).
        systems: each system's trees, one per sentence in the same order, the first the baseline.
        names: the systems' names in the report (default ``system 1``, ``system 2``...).
        params: :class:`EvalbParams` or the path of an EVALB parameter file; default ``COLLINS.prm``.
        buckets: custom bucketings of sentences, ``{name: fn(Sentence) -> bucket name}``.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: on malformed brackets.
        ValueError: on a bad request or a system with another number of trees.
    """
    kit.need_systems(systems)
    kit.check_systems(systems, references, "constituency", "sentence")
    return _report(
        constituency.parse_bank(list(references)),
        [constituency.parse_bank(list(x)) for x in systems],
        names=kit.system_names(names, len(systems)),
        references=None,
        params=_params(params),
        buckets=buckets,
        settings=kit.Settings(**settings),
        paths=kit.system_names(None, len(systems)),
    )


def analyze_files(
    references: str | os.PathLike[str],
    systems: Sequence[str | os.PathLike[str]],
    *,
    params: EvalbParams | str | os.PathLike[str] | None = None,
    buckets: Mapping[str, Callable[[Sentence], Any]] | None = None,
    jobs: int = 1,
    **settings: Unpack[kit.Tests],
) -> dict[str, Any]:
    """The analysis report of bracketed files, read as ``score constituency`` reads them (``evalb -p PARAMS``).

    Args:
        references: the reference trees.
        systems: the parsers' output files, the first the baseline.
        params: :class:`EvalbParams` or an EVALB parameter file; default ``COLLINS.prm``.
        buckets: custom bucketings, as :func:`analyze`.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is
            the same for every number.
        **settings: the tests' settings (:class:`~metametric_jax.tasks.buckets.Tests`).

    Raises:
        InputFormatError: on malformed brackets, files with different numbers of sentences, or no tree at all.
    """
    kit.need_systems(systems)
    p = _params(params)
    ref_path = os.fspath(references)
    gold = read_treebank(ref_path)
    if not gold.sentences:
        raise InputFormatError(ref_path, None, "expected trees to analyze; found none")
    return _report(
        gold,
        [read_treebank(x) for x in systems],
        names=[os.fspath(x) for x in systems],
        references=ref_path,
        params=p,
        buckets=buckets,
        settings=kit.Settings(**settings),
        paths=[os.fspath(x) for x in systems],
        jobs=jobs,
    )
