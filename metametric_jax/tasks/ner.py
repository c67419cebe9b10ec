r"""Named-entity recognition: span-level precision, recall and F1, as JAX accumulators and as a file scorer.

A tag sequence is decoded into typed spans (:mod:`metametric_jax.tasks.tagging`); a predicted span counts as
correct only if a reference span of the same sentence has the same start, end and type (the CoNLL-2000 /
CoNLL-2003 shared-task evaluation, Tjong Kim Sang & Buchholz 2000; Tjong Kim Sang & De Meulder 2003; the
``conlleval`` script). For sentences :math:`i` with predicted spans :math:`P_i` and reference spans :math:`R_i`,

.. math::

    \mathrm{P} = \frac{\sum_i |P_i \cap R_i|}{\sum_i |P_i|}, \quad
    \mathrm{R} = \frac{\sum_i |P_i \cap R_i|}{\sum_i |R_i|}, \quad
    F_1 = \frac{2 \sum_i |P_i \cap R_i|}{\sum_i |P_i| + \sum_i |R_i|}

(``conlleval``'s "correct", "found" and "phrases" counts are :math:`\sum_i |P_i \cap R_i|`, :math:`\sum_i |P_i|`
and :math:`\sum_i |R_i|`). Per type :math:`t` the same on the spans of type :math:`t`; ``macro`` is the unweighted
mean of the per-type figures over the types that occur (support or predictions > 0) and ``weighted`` their
support-weighted mean, as seqeval's ``classification_report``; ``accuracy`` is the fraction of tokens whose
predicted tag equals the reference tag (``conlleval``'s accuracy; in files, ``-DOCSTART-`` lines count as tokens, as
``conlleval`` counts them, see :func:`score_files`).

**Headline**: ``score(...)["f1"]``, the micro F1 over all spans (``conlleval``'s overall FB1 / 100, seqeval's
``f1_score``).

Three surfaces, one set of counts:

* :func:`score` / :func:`score_files` count on the host (NumPy, no JAX), in chunks of sentences, and return
  float64 figures from exact integer counts; ``score_files`` reads the two-file layout or ``conlleval``'s one-file
  layout (:mod:`metametric_jax.tasks.readers.conll`). The figures are one read-out, :func:`readout`, of summed
  sentence rows (:func:`file_rows`: each sentence's counts), which the command line's bootstrap and paired tests
  also call on weighted sums.
* :func:`NerMetric` (per type, micro, macro, weighted, accuracy) and :func:`span_metric` (micro only) are
  accumulators: ``from_model_output`` on Python tags or spans, with ``decode=`` inside ``jax.jit``, ``merge``,
  ``reduce``, ``compute``. :func:`state_report` reads a :func:`NerMetric` state in float64 through :func:`readout`,
  the read-out :func:`score` uses: the state's counts are exact, so its figures are :func:`score`'s bit for bit on the
  same sentences (with ``labels=`` the class's types); ``compute()`` is its jittable float32 twin for training loops.
* On the device, :func:`metametric_jax.tasks.tagging.device_span_stats` counts from tag-id arrays in
  ``jax.numpy``; ``span_metric(scheme).from_stats(stats)`` turns them into a state inside ``jax.jit``.

Example:
    >>> s = score([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "B-ORG"]])
    >>> s["f1"], s["counts"]
    (0.5, {'tokens': 4, 'phrases': 2, 'found': 2, 'correct': 1, 'correct_tags': 3})
    >>> sorted(s["per_type"])
    ['LOC', 'ORG', 'PER']
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.normalizer import prf
from metametric_jax.report import Report
from metametric_jax.tasks.ner_counts import CHUNK, FIGURES, HEAD, check_labels, readout, report_of, tally
from metametric_jax.tasks.readers import conll as reader
from metametric_jax.tasks.spans import count_spans, is_tag_batch
from metametric_jax.tasks.tagging import (
    SCHEMES,
    Span,
    extract_batch,
    extract_spans,
    normalize_scheme,
    recode_tags,
)

__all__ = [
    "SCHEMES",
    "Span",
    "NerMetric",
    "span_metric",
    "score",
    "score_files",
    "file_rows",
    "FileRows",
    "readout",
    "HEAD",
    "state_report",
    "span_stats",
    "extract_spans",
    "extract_batch",
    "normalize_scheme",
    "sample_paths",
    "CHUNK",
]


def score(
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    scheme: str = "IOB2",
    labels: Sequence[str] | None = None,
    outside: str = "O",
    raw: bool = False,
) -> dict[str, Any]:
    """Span-level NER figures of a batch, computed on the host from exact counts.

    Args:
        predictions: one tag sequence (``["B-PER", "I-PER", "O"]``) or span collection (``Span`` or ``(start, end,
            label)``, end exclusive) per sentence.
        references: the same for the reference.
        scheme: the tag scheme (see :data:`SCHEMES`).
        labels: the entity types to report per type; default the sorted types found on either side (seqeval's
            choice). Spans of other types count in the overall figures only.
        outside: the outside tag, read as ``O`` (``conlleval -o``).
        raw: tags have no prefixes, each non-outside token is a chunk (``conlleval -r``).

    Returns:
        ``{"f1": micro F1 (the headline), "micro", "macro", "weighted": {"precision", "recall", "f1"},
        "accuracy": token accuracy, "counts": {"tokens", "phrases", "found", "correct", "correct_tags"},
        "per_type": {type: {"precision", "recall", "f1", "support", "predicted", "correct"}}}``; Python floats and
        ints. Token counts are 0 where a side is given as spans.

    Raises:
        ValueError: on different numbers of sentences or tokens, or an invalid tag (naming side and position).
        TypeError: on input that is neither tags nor spans.
    """
    scheme = normalize_scheme(scheme)
    wanted = check_labels(labels, "score")
    predictions, references = _batch(predictions, "predictions"), _batch(references, "references")
    if outside != "O" or raw:
        for side, batch in (("predictions", predictions), ("references", references)):
            if not is_tag_batch(batch, side):
                raise TypeError(f"score: outside= and raw= read tags; the {side} are span collections.")
        predictions, references = recode_tags(predictions, outside, raw), recode_tags(references, outside, raw)
        scheme = "IOB2" if raw else scheme
    return tally(predictions, references, scheme, False, None).report(wanted)


def _batch(batch: Any, side: str) -> Sequence[Any]:
    """A batch as a sliceable sequence (a generator is read once); a string is refused."""
    if isinstance(batch, str):
        raise TypeError(f"score: the {side} must be one tag sequence or span collection per sentence; found a string.")
    if isinstance(batch, (list, tuple)):
        return batch
    try:
        return list(batch)
    except TypeError:
        raise TypeError(f"score: the {side} must be a sequence of sentences; found {type(batch).__name__}.") from None


def span_stats(predictions: Sequence[Any], references: Sequence[Any], scheme: str = "IOB2") -> np.ndarray:
    """Per-sentence (matched, predicted, reference) span counts, an ``(n, 3)`` float array.

    >>> span_stats([["B-PER", "I-PER", "O"]], [["B-PER", "O", "B-LOC"]]).tolist()
    [[0.0, 1.0, 2.0]]
    """
    return count_spans(predictions, references, scheme).micro()


# ---------------------------------------------------------------------------------------------------- files
@dataclasses.dataclass(frozen=True)
class FileRows:
    """The sentences of a scored pair of files as additive rows: what :func:`score_files` sums and reads out.

    Attributes:
        rows: float64 ``(sentences, HEAD + 3 len(labels))``: each sentence's counts (see :data:`HEAD`), the
            ``-DOCSTART-`` lines right before it included (counted as ``conlleval`` counts them: a token each, a
            chunk where one carries an entity tag), so the first sentence of a document carries its mark; a mark
            with no sentence after it goes to the sentence before it, and a file of marks only has one row of them.
        labels: the entity types of the per-type columns, in column order.
        references: the reference side as read (its sentences' lines, its ``-DOCSTART-`` marks).
        predictions: the predicted side as read.
        warnings: what :func:`score_files` warns about the files.
    """

    rows: np.ndarray
    labels: tuple[str, ...]
    references: reader.ConllSentences
    predictions: reader.ConllSentences
    warnings: tuple[str, ...]

    def readout(self, totals: Any) -> dict[str, Any]:
        """The figures of totals of these rows (:func:`readout`, every type of the columns reported)."""
        return readout(totals, self.labels)

    def documents(self) -> list[int] | None:
        """The document of each row (:meth:`~metametric_jax.tasks.readers.conll.ConllSentences.documents`)."""
        documents = self.references.documents()
        if documents is not None and len(documents) < len(self.rows):  # no sentence: one row of marks
            return [0] * len(self.rows)
        return documents

    def with_labels(self, labels: Sequence[str]) -> FileRows:
        """The same rows with the per-type columns of ``labels`` (a superset of ``self.labels``; new types: zeros)."""
        missing = set(self.labels) - set(labels)
        if missing:
            raise ValueError(f"with_labels: the types {sorted(missing)} have counts and no column.")
        out = np.zeros((self.rows.shape[0], HEAD + 3 * len(labels)))
        out[:, :HEAD] = self.rows[:, :HEAD]
        column = {label: HEAD + 3 * j for j, label in enumerate(labels)}
        for j, label in enumerate(self.labels):
            out[:, column[label] : column[label] + 3] = self.rows[:, HEAD + 3 * j : HEAD + 3 * j + 3]
        return dataclasses.replace(self, rows=out, labels=tuple(labels))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _docstart_warnings(
    gold: reader.ConllSentences, pred: reader.ConllSentences, one_file: bool, counted: Sequence[str]
) -> list[str]:
    """Warnings on the -DOCSTART- lines counted: tokens, entity tags, the prediction's lines not the reference's."""
    out: list[str] = []
    marks = len(gold.docstart_tags)
    same = one_file or pred.doc_starts == gold.doc_starts
    if not same and marks:
        out.append(
            f"{pred.path} has {_plural(len(pred.doc_starts), '-DOCSTART- line')}, not where {gold.path} has its "
            f"{marks}: the reference's are counted, each with the predicted tag O"
        )
    elif not same:
        out.append(
            f"{pred.path} has {_plural(len(pred.doc_starts), '-DOCSTART- line')} and {gold.path} none: "
            f"{'it is' if len(pred.doc_starts) == 1 else 'they are'} not counted"
        )
    if marks:
        out.append(
            f"{gold.path}: its {_plural(marks, '-DOCSTART- line')} {'is' if marks == 1 else 'are'} counted as "
            f"{'a token' if marks == 1 else 'tokens'} (in the token count and the accuracy), as conlleval counts "
            f"{'it' if marks == 1 else 'them'}"
        )
    sides: list[tuple[reader.ConllSentences, Sequence[str], Sequence[str] | None]]
    sides = [(gold, gold.docstart_tags, counted if one_file else None)]
    if not one_file and same:
        sides.append((pred, pred.docstart_tags, None))
    for doc, tags, other in sides:
        tagged = [k for k, tag in enumerate(tags) if tag != "O" or (other is not None and other[k] != "O")]
        if not tagged:
            continue
        k = tagged[0]
        if other is None:
            what = f"the entity tag {tags[k]!r}"
        else:
            what = f"an entity tag (the reference tag {tags[k]!r}, the predicted tag {other[k]!r})"
        more = ""
        if len(tagged) > 1:
            more = f", and {len(tagged) - 1} more -DOCSTART- line{'s carry' if len(tagged) > 2 else ' carries'} one"
        message = (
            f"{doc.path}:{doc.docstart_lines[k]}: a -DOCSTART- line carries {what}{more}; it is counted as a token "
            "and a chunk, as conlleval counts it"
        )
        glued = [doc.docstart_lines[j] for j in tagged if doc.docstart_glued[j]]
        if glued:
            message += (
                f"; line {glued[0]} has no blank line between it and the next or previous line: it is counted as a "
                "sentence of its own, where conlleval reads it inside that sentence and may join its chunk to a "
                "neighbour's"
            )
        out.append(message)
    return out


def file_rows(
    *,
    predictions: str | os.PathLike[str] | None = None,
    references: str | os.PathLike[str] | None = None,
    file: str | os.PathLike[str] | None = None,
    scheme: str = "IOB2",
    delimiter: str | None = None,
    outside: str | None = None,
    raw: bool = False,
    progress: Callable[[int, int], Any] | None = None,
    jobs: int = 1,
) -> FileRows:
    """Read and count CoNLL column files, one row per sentence (arguments and errors as :func:`score_files`).

    ``readout(exact_totals(rows))`` (:func:`metametric_jax.intervals.exact_totals`) is :func:`score_files`'s figures.
    ``jobs`` worker processes count the sentences (0: every core; default 1: this process): the same rows.
    """
    warnings = []
    if outside is not None and not raw:
        warnings.append(f"the outside tag {outside!r} (-o) is ignored without raw tags (-r), as conlleval ignores it")
    recode = outside if outside is not None and raw else "O"
    if file is not None:
        if predictions is not None or references is not None:
            raise TypeError(
                "score_files: give either file= (conlleval's one-file layout) or predictions= and "
                "references=, not both."
            )
        gold, pred = reader.read_conlleval(file, scheme, delimiter=delimiter, outside=recode, raw=raw)
        reference_name = os.fspath(file)
    else:
        if predictions is None or references is None:
            raise TypeError("score_files needs predictions= and references= (or file= for conlleval's layout).")
        gold = reader.read_conll(references, scheme, delimiter=delimiter, outside=recode, raw=raw)
        pred = reader.read_conll(predictions, scheme, delimiter=delimiter, outside=recode, raw=raw)
        reader.check_aligned(gold, pred)
        reference_name = gold.path
    tallied = tally(pred.tags, gold.tags, "IOB2" if raw else normalize_scheme(scheme), True, progress, jobs)
    # -DOCSTART- lines, as conlleval counts them: one token each, decoded on their own; in the two-file layout the
    # reference's lines, with the prediction's tags where its lines stand before the same sentences (else O)
    marks = list(gold.docstart_tags)
    same = file is not None or pred.doc_starts == gold.doc_starts
    predicted = list(pred.docstart_tags) if same else ["O"] * len(marks)
    n = len(gold.tags)
    if marks:
        tallied.add([[t] for t in predicted], [[t] for t in marks])
    rows = tallied.rows()
    if marks:
        if n:
            own = rows[:n].copy()
            np.add.at(own, np.minimum(np.asarray(gold.doc_starts, np.int64), n - 1), rows[n:])
            rows = own
        else:
            rows = rows.sum(0, keepdims=True)
    if not gold.tags:
        counted = f"{_plural(len(marks), '-DOCSTART- line')} {'is' if len(marks) == 1 else 'are'} counted"
        rest = f"only its {counted}" if marks else "every figure is 0"
        warnings.append(f"{reference_name} holds no sentences; {rest}")
    warnings += _docstart_warnings(gold, pred, file is not None, predicted)
    return FileRows(rows, tuple(tallied.labels), gold, pred, tuple(warnings))


def score_files(
    *,
    predictions: str | os.PathLike[str] | None = None,
    references: str | os.PathLike[str] | None = None,
    file: str | os.PathLike[str] | None = None,
    scheme: str = "IOB2",
    delimiter: str | None = None,
    outside: str | None = None,
    raw: bool = False,
    progress: Callable[[int, int], Any] | None = None,
    jobs: int = 1,
) -> Report:
    """Span-level NER figures of CoNLL column files (:mod:`metametric_jax.tasks.readers.conll`), as ``conlleval``.

    Give ``predictions`` and ``references`` (two files, the tag in the last column), or ``file`` (``conlleval``'s
    layout: reference and predicted tag in the last two columns). The figures are :func:`readout` of the exact sum of
    the sentences' rows (:func:`file_rows`).

    Where ``conlleval`` counts something questionable, the figures follow it and a warning says so:

    * every ``-DOCSTART-`` line is a token, with its tags (``O`` on a line without them), in the token count and the
      accuracy, and one carrying an entity tag is a chunk (the warning names its line); in the two-file layout the
      reference's lines are counted, with the prediction's tags where its ``-DOCSTART-`` lines stand before the same
      sentences, else with the predicted tag ``O`` (and a warning) -- the counts of the one-file layout that pastes
      the two files side by side;
    * ``outside`` without ``raw`` is ignored, as ``conlleval`` ignores ``-o`` without ``-r``.

    Args:
        predictions: the predicted file (the token column is optional: a file of one column holds tags only).
        references: the reference file.
        file: a file in ``conlleval``'s one-file layout, instead of the two.
        scheme: the tag scheme of the tags.
        delimiter: the field separator, a regular expression (``conlleval -d``; default any whitespace).
        outside: the outside tag of raw tags (``conlleval -o``, default ``O``); ignored without ``raw``.
        raw: tags without prefixes (``conlleval -r``); a file of one column is then refused.
        progress: called as ``progress(sentences_done, total)`` after each chunk of sentences.
        jobs: worker processes that count the sentences (0: every core; default 1: this process); the report is
            the same for every number.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`score`; ``items`` one per sentence
        (``{"id": "sentence K", "line", "tokens", "phrases", "found", "correct", "precision", "recall", "f1"}``,
        the counts of :func:`file_rows`' rows, so the first sentence after a ``-DOCSTART-`` line counts it);
        warnings (an empty reference, ``-DOCSTART-`` lines, ``outside`` without ``raw``).

    Raises:
        InputFormatError: on a malformed file, an invalid tag, or files that do not hold the same sentences.
        TypeError: on a wrong combination of files.
    """
    from metametric_jax.intervals import exact_totals

    got = file_rows(
        predictions=predictions,
        references=references,
        file=file,
        scheme=scheme,
        delimiter=delimiter,
        outside=outside,
        raw=raw,
        progress=progress,
        jobs=jobs,
    )
    items = []
    counts = got.rows[:, :4].astype(np.int64).tolist()
    for k, ((xy, xx, yy, tokens), lines) in enumerate(zip(counts, got.references.lines)):
        item: dict[str, Any] = {"id": f"sentence {k + 1}", "line": lines[0], "tokens": tokens, "phrases": yy}
        item.update(found=xx, correct=xy, **prf(xy, xx, yy))
        items.append(item)
    return Report(report_of(exact_totals(got.rows), got.labels, None), items, list(got.warnings))


def sample_paths() -> tuple[str, str]:
    """Paths of the bundled sample (reference, predicted): a few dozen CoNLL-2003-style sentences, IOB2 tags."""
    base = resources.files("metametric_jax") / "data" / "ner"
    return str(base / "gold.txt"), str(base / "pred.txt")


# ---------------------------------------------------------------------------------------------------- accumulators
_DOC_SPAN = r"""Span-level precision / recall / F1 of NER tags ({scheme}), micro-averaged over sentences.

Per-sentence statistics: (matched spans, predicted spans, reference spans); ``compute()`` also reports
``predicted`` and ``support`` (total predicted and reference spans). Equals ``conlleval``'s overall figures and
seqeval's default-mode ``f1_score`` (Tjong Kim Sang & Buchholz 2000).

.. math::

    F_1 = \frac{{2 \sum_i |P_i \cap R_i|}}{{\sum_i |P_i| + \sum_i |R_i|}}
"""


def _counters() -> tuple[Any, Any]:
    from metametric_jax.normalizer import Normalizer

    return (
        Normalizer("predicted", lambda xy, xx, yy, zd: xx),
        Normalizer("support", lambda xy, xx, yy, zd: yy),
    )


def _span_stats(predictions: Sequence[Any], references: Sequence[Any], scheme: str) -> np.ndarray:
    return count_spans(predictions, references, scheme).micro()


@class_factory
def _span_metric(scheme: str) -> type[Any]:
    from metametric_jax.build import stats_metric

    return stats_metric(
        name=f"span_f1_{scheme.lower()}",
        batch_stats=functools.partial(_span_stats, scheme=scheme),
        report=_counters(),
        doc=_DOC_SPAN.format(scheme=scheme),
    )


def span_metric(scheme: str = "IOB2") -> type[Any]:
    """The micro span-F1 accumulator class for a tag scheme (one class per scheme, so states of it merge).

    >>> M = span_metric("IOB2")
    >>> state = M.from_model_output([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "O"]])
    >>> float(state.compute()["f1"])
    1.0
    """
    return _span_metric(normalize_scheme(scheme))


def _member(label: str) -> str:
    return "per_type/" + label


def _ner_stats(
    predictions: Sequence[Any], references: Sequence[Any], labels: tuple[str, ...], scheme: str
) -> dict[str, np.ndarray]:
    """Every :func:`NerMetric` member's statistics of a batch, in one pass."""
    c = count_spans(predictions, references, scheme)
    out = {"micro": c.micro(), "tokens": np.stack([c.correct_tags, c.tokens, c.tokens], 1).astype(np.float64)}
    for label in labels:
        out[_member(label)] = c.of(label)
    return out


@class_factory
def _ner_metric(labels: tuple[str, ...], scheme: str) -> type[Any]:
    import jax.numpy as jnp

    from metametric_jax.build import stats_metric
    from metametric_jax.normalizer import safe_divide
    from metametric_jax.suite import make_suite

    counters = _counters()
    batch_stats = functools.partial(_ner_stats, labels=labels, scheme=scheme)

    members = {
        "micro": span_metric(scheme),
        "tokens": stats_metric(name=f"ner_{scheme.lower()}_tokens", report=counters),
    }
    for label in labels:
        members[_member(label)] = stats_metric(name=f"ner_{scheme.lower()}_{label}", report=counters)

    def stacked(results: Mapping[str, Any], key: str) -> Any:
        return jnp.stack([jnp.asarray(results[_member(lab)][key], jnp.float32) for lab in labels])

    def macro(results: Mapping[str, Any]) -> dict[str, Any]:
        if not labels:
            return {k: jnp.float32(0.0) for k in FIGURES}
        present = (stacked(results, "support") + stacked(results, "predicted")) > 0
        count = jnp.sum(present.astype(jnp.float32))
        return {k: safe_divide(jnp.sum(jnp.where(present, stacked(results, k), 0.0)), count) for k in FIGURES}

    def weighted(results: Mapping[str, Any]) -> dict[str, Any]:
        if not labels:
            return {k: jnp.float32(0.0) for k in FIGURES}
        support = stacked(results, "support")
        return {k: safe_divide(jnp.sum(stacked(results, k) * support), jnp.sum(support)) for k in FIGURES}

    base = make_suite(
        f"ner_{scheme.lower()}",
        members,
        {"macro": macro, "weighted": weighted},
        batch_stats=batch_stats,
        doc=NerMetric.__doc__,
    )

    def _compute_traced(self: Any) -> dict[str, Any]:
        results = base._compute_traced(self)
        return {
            "micro": results["micro"],
            "macro": results["macro"],
            "weighted": results["weighted"],
            "accuracy": results["tokens"]["precision"],
            "per_type": {label: results[_member(label)] for label in labels},
        }

    cls = type("NerMetric", (base,), {"_compute_traced": _compute_traced, "__doc__": NerMetric.__doc__})
    cls.labels = labels  # type: ignore[attr-defined]
    cls.scheme = scheme  # type: ignore[attr-defined]
    return cls


def NerMetric(labels: Sequence[str] = (), scheme: str = "IOB2") -> type[Any]:  # noqa: N802 - a cached class factory
    r"""The NER accumulator class: per-type and averaged span precision / recall / F1, and token accuracy.

    One class per (labels, scheme), so states of it merge. Spans of a type outside ``labels`` count in the overall
    figures only; any non-empty string is a type, ``micro``, ``macro`` and ``weighted`` included.

    State (a suite, see :func:`metametric_jax.make_suite`): ``states["micro"]`` (all spans), ``states["tokens"]``
    (correct tags, tokens) and ``states["per_type/<type>"]`` for each type, each with exact (matched, predicted,
    reference) totals. ``compute()`` returns ``{"micro", "macro", "weighted": {"precision", "recall", "f1", ...},
    "accuracy", "per_type": {type: {...}}}``; :func:`state_report` reads a state in float64 with the keys of
    :func:`score`. ``macro`` is the unweighted mean over the types that occur, ``weighted`` the support-weighted
    mean (seqeval's ``classification_report``; Tjong Kim Sang & De Meulder 2003 for the span figures):

    .. math::

        \mathrm{macro}\,F_1 = \frac{1}{|T|} \sum_{t \in T} F_1^{(t)}, \quad
        \mathrm{weighted}\,F_1 = \frac{\sum_t n_t F_1^{(t)}}{\sum_t n_t}

    Args:
        labels: the entity types (e.g. ``["LOC", "MISC", "ORG", "PER"]``).
        scheme: the tag scheme (see :data:`SCHEMES`).

    Raises:
        ValueError: on an empty or duplicated label, or an unknown scheme.

    Example:
        >>> M = NerMetric(["LOC", "PER"])
        >>> state = M.from_model_output([["B-PER", "O", "B-LOC"]], [["B-PER", "O", "B-ORG"]])
        >>> r = state_report(state)
        >>> r["f1"], r["per_type"]["PER"]["f1"], r["counts"]["found"]
        (0.5, 1.0, 2)
        >>> round(float(state.compute()["per_type"]["LOC"]["precision"]), 4)
        0.0
    """
    return _ner_metric(check_labels(labels, "NerMetric") or (), normalize_scheme(scheme))


def state_report(state: Any) -> dict[str, Any]:
    """The figures of a :func:`NerMetric` state in float64: :func:`readout` of its exact totals, with the counts.

    The keys of :func:`score`, and its figures bit for bit on the same sentences (``labels=`` the class's types);
    ``compute()`` is the jittable float32 twin.

    Raises:
        TypeError: if ``state`` is not a state of a :func:`NerMetric` class.
    """
    labels = getattr(type(state), "labels", None)
    states = getattr(state, "states", None)
    if labels is None or not isinstance(states, Mapping) or "micro" not in states:
        raise TypeError(f"state_report expects a state of a NerMetric class; found {type(state).__name__}.")

    def triple(member: Any) -> list[float]:
        t = member.totals()
        return [t["xy"], t["xx"], t["yy"]]

    tokens = states["tokens"].totals()
    head = [*triple(states["micro"]), tokens["xx"], tokens["xy"]]
    totals = np.array(head + [x for label in labels for x in triple(states[_member(label)])], np.float64)
    return report_of(totals, list(labels), list(labels))
