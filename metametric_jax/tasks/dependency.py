r"""Dependency parsing: the figures of the CoNLL 2018 shared task's evaluation (``conll18_ud_eval.py`` v1.2).

Every figure counts, over a corpus, the items of the prediction (:math:`S`, system), of the reference (:math:`G`,
gold), those correct (:math:`C`) and, for the word-level figures, the reference words aligned to a predicted word
(:math:`A`):

.. math::

    P = \frac{C}{S}, \qquad R = \frac{C}{G}, \qquad F_1 = \frac{2C}{S + G}, \qquad
    \mathrm{AlignedAcc} = \frac{C}{A}

(each 0 when its denominator is 0). The figures (Zeman et al., "CoNLL 2018 Shared Task: Multilingual Parsing from
Raw Text to Universal Dependencies", 2018, section 2.3):

* ``tokens``, ``sentences``: tokens (multiword tokens count once) and sentences whose character span is in both.
* ``words``: syntactic words aligned (below); correct = aligned.
* ``upos``, ``xpos``, ``ufeats`` (universal features only, in sorted order), ``alltags`` (the three), ``lemmas`` (a
  reference lemma ``_`` accepts any): aligned words whose columns agree.
* ``uas``: aligned words whose head is the word aligned to the reference head (or both are roots); ``las``: and the
  relation agrees, subtypes ignored (``nsubj:pass`` = ``nsubj``).
* ``clas``: LAS over *content* words (relations in :data:`CONTENT_DEPRELS`; function words, punctuation and
  relations outside the list are left out); ``mlas``: CLAS and UPOS, universal features and the functional children
  (relations in :data:`FUNCTIONAL_DEPRELS`, each with its aligned word, relation, UPOS and features, in order)
  agree; ``blex``: CLAS and the lemma agrees. For these three, :math:`S`, :math:`G` and :math:`A` count content
  words only.

**Alignment.** The prediction may tokenize the raw text differently: both files must spell the same text once the
space characters (Unicode Zs) inside forms are removed, and each token is the span of characters it covers. Words
outside multiword tokens are aligned when their spans are equal. Around multiword tokens the smallest span of text
holding whole multiword tokens of both sides is found, and the words inside it are aligned by a longest common
subsequence of their lower-cased forms (ties broken by skipping the reference word first). The whole corpus is
aligned at once, so predicted sentence boundaries may differ from the reference's; the counts are then attributed to
the reference sentence where each item starts (``score_files`` items, macro averages).

**Validation.** Each sentence of either side must be a tree: exactly one word with HEAD 0 and no cycle, as the
CoNLL 2018 script requires. Otherwise an :class:`~metametric_jax.errors.InputFormatError` names the file, the
sentence and the line; ``check_trees=False`` scores such sentences anyway (heads are compared as they are). Options
beyond the script: ``exclude_punct=True`` leaves out words whose reference UPOS is ``PUNCT`` (unaligned predicted
words: their own UPOS) from every word-level figure, the CoNLL-X convention; ``strip_subtypes=False`` compares
relations with their subtypes.

The accumulator :func:`DependencyMetric` is a suite of one member per figure (statistics
:math:`(C, S, G)`, so ``precision``, ``recall`` and ``f1`` are the figure's) and one ``<figure>_aligned`` member per
word-level figure (statistics :math:`(C, A, A)`). Each example is a document (a sequence of
:class:`~metametric_jax.tasks.readers.conllu.DepSentence` on each side, aligned on its own as the script aligns a
file, so ``[sentence]`` scores a sentence as a file of its own) or a sentence (a bare ``DepSentence``: one sentence
of a larger corpus). :func:`score` and :func:`score_files` align whole corpora at once, as the script does, and
compute the figures from the integer totals on the host (no JAX), through one read-out, :func:`readout`.
:func:`state_report` reads a state of :func:`DependencyMetric` or :func:`SentenceCountsMetric` in float64 through
the same read-out: its counts are exact, so its figures are :func:`score`'s bit for bit on the same examples
(:func:`SentenceCountsMetric`, or sentence examples, which are refused where they could differ). ``compute()`` is its
jittable float32 twin for training loops.

**Sentence by sentence.** The script walks the whole file, so sentence examples give its figures of the corpus they
come from, or an :class:`~metametric_jax.errors.InputFormatError`, never another number. Two things refuse a
sentence example, with a one-line message naming it (position in the batch, ``sent_id``, file and line) and telling
to score whole documents: its sides spell different texts (the sentence boundaries differ), or its alignment runs
out of words on one side while words the script could carry over are left on the other (the reference ran out: two
or more predicted words; the prediction ran out: a reference word outside a multiword token and another after it).
In the second case, when the next sentence of the side that ran out starts with a multiword token, the script's span
around that token takes the words left in, and its LCS can pair them with words of the next sentence.
:func:`SentenceCountsMetric` accumulates per-sentence counts of a corpus aligned at once. ``macro_`` figures average
over examples; an example with nothing to count on either side scores 1.0 there.

Reading (:mod:`metametric_jax.tasks.readers.conllu`) is a little more lenient than the script, never changing a
figure: runs of blank lines, a missing final blank line, a byte-order mark and CRLF line endings are accepted.

State: ``states`` (one :class:`~metametric_jax.Metric` state per member, each with the exact totals of its
statistics, the example count and per-example normalized sums for ``macro_`` figures).

Example:
    >>> from metametric_jax.tasks.readers.conllu import parse_conllu
    >>> row = "{}\t{}\t_\t{}\t_\t_\t{}\t{}\t_\t_"
    >>> gold = parse_conllu("\n".join([row.format(1, "Dogs", "NOUN", 2, "nsubj"),
    ...                                  row.format(2, "bark", "VERB", 0, "root")]) + "\n")
    >>> pred = parse_conllu("\n".join([row.format(1, "Dogs", "NOUN", 0, "root"),
    ...                                  row.format(2, "bark", "VERB", 1, "parataxis")]) + "\n")
    >>> s = score(pred, gold)
    >>> s["las"]["f1"], s["upos"]["aligned_accuracy"], s["words"]["f1"]
    (0.0, 1.0, 1.0)
    >>> DependencyMetric().from_model_output([pred], [gold]).compute()["scores"]["uas"]["f1"].item()
    0.0
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.inputs import check_lengths
from metametric_jax.tasks.dependency_counts import (
    ALIGNED_METRICS,
    CONTENT_DEPRELS,
    FUNCTIONAL_DEPRELS,
    METRICS,
    UNIVERSAL_FEATURES,
    check_tree,
    example_counts,
    sentence_counts,
)
from metametric_jax.tasks.dependency_files import (
    _score_counts,
    counts_in_chunks,
    readout,
    score_files,
    sentence_rows,
    summary_files,
)
from metametric_jax.tasks.readers.conllu import DepSentence, DepToken, parse_conllu, read_conllu

if TYPE_CHECKING:
    from metametric_jax.suite import Suite

__all__ = [
    "SentenceCountsMetric",
    "DepToken",
    "DepSentence",
    "parse_conllu",
    "read_conllu",
    "METRICS",
    "ALIGNED_METRICS",
    "CONTENT_DEPRELS",
    "FUNCTIONAL_DEPRELS",
    "UNIVERSAL_FEATURES",
    "check_tree",
    "sentence_counts",
    "counts_in_chunks",
    "example_counts",
    "attachment_stats",
    "DependencyMetric",
    "figures",
    "state_report",
    "score",
    "score_files",
    "summary_files",
    "sentence_rows",
    "readout",
]


# ------------------------------------------------------------------------------------------------ figures
def _member_stats(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Suite member statistics from counts ``(n, len(METRICS), 4)``: ``(C, S, G)`` and ``(C, A, A)`` per figure."""
    counts = np.asarray(counts, dtype=np.float64)
    out: dict[str, np.ndarray] = {}
    for k, m in enumerate(METRICS):
        out[m] = counts[:, k, :3]
        if m in ALIGNED_METRICS:
            c, a = counts[:, k, 0], counts[:, k, 3]
            out[f"{m}_aligned"] = np.stack([c, a, a], axis=1)
    return out


def attachment_stats(predictions: Sequence[Any], references: Sequence[Any], **options: Any) -> dict[str, np.ndarray]:
    """Per-pair statistics of every member of :func:`DependencyMetric` (its batch function).

    Each pair is a predicted and a reference document (a sequence of :class:`DepSentence`), aligned on its own
    (see :func:`sentence_counts`), or sentence (a bare :class:`DepSentence`), which is refused where its counts could
    differ from the script's on the whole file (see :func:`~metametric_jax.tasks.dependency_counts.example_counts`).

    Returns:
        ``{figure: (n, 3) array of (correct, predicted, reference), figure_aligned: (n, 3) array of (correct,
        aligned, aligned)}`` as float64.

    Raises:
        InputFormatError: a sentence that is not a tree, texts that differ, or a sentence example whose alignment
            could run into the next sentence (score whole documents then).
    """
    check_lengths(predictions, references, "dependency")
    rows = np.zeros((len(predictions), len(METRICS), 4), dtype=np.int64)
    for k, (p, r) in enumerate(zip(predictions, references)):
        rows[k] = example_counts(p, r, example=k + 1, **options)
    return _member_stats(rows)


_MEMBER_DOC = "{figure}: {what} (per example: {stats}); ``precision``, ``recall``, ``f1`` as the CoNLL 2018 script."


@class_factory
def _suite(check_trees: bool, exclude_punct: bool, strip_subtypes: bool) -> type[Suite]:
    from metametric_jax.build import stats_metric  # JAX only for the accumulator: files score without it
    from metametric_jax.suite import make_suite

    options = {"check_trees": check_trees, "exclude_punct": exclude_punct, "strip_subtypes": strip_subtypes}
    members = {}
    for m in METRICS:
        members[m] = stats_metric(
            name=f"dependency_{m}",
            doc=_MEMBER_DOC.format(figure=m, what="correct / predicted / reference items", stats="C, S, G"),
        )
        if m in ALIGNED_METRICS:
            members[f"{m}_aligned"] = stats_metric(
                name=f"dependency_{m}_aligned",
                doc=_MEMBER_DOC.format(figure=m, what="aligned accuracy as recall", stats="C, A, A"),
            )

    # a module-level function: worker processes (parallel.from_model_output) unpickle it without importing JAX
    batch = functools.partial(
        attachment_stats, check_trees=check_trees, exclude_punct=exclude_punct, strip_subtypes=strip_subtypes
    )

    def table(results: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for m in METRICS:
            r = results[m]
            out[m] = {"precision": r["precision"], "recall": r["recall"], "f1": r["f1"]}
            if m in ALIGNED_METRICS:
                out[m]["aligned_accuracy"] = results[f"{m}_aligned"]["recall"]
        return out

    flags = "".join(str(int(v)) for v in options.values())
    return make_suite(
        f"dependency_{flags}",
        members,
        {"scores": table},
        batch_stats=batch,
        doc=(
            f"The CoNLL 2018 dependency figures ({', '.join(f'{k}={v}' for k, v in options.items())}): one member "
            "per figure with statistics (correct, predicted, reference) and one ``<figure>_aligned`` member per "
            "word-level figure with (correct, aligned, aligned); ``compute()['scores'][figure]`` holds "
            "``precision``, ``recall``, ``f1`` and (word-level figures) ``aligned_accuracy``. Inputs per "
            "example: a document (a sequence of DepSentence) or a sentence (a DepSentence, refused where its counts "
            "could differ from the script's on the whole file; see :mod:`metametric_jax.tasks.dependency`)."
        ),
    )


def DependencyMetric(  # noqa: N802 - a cached factory named as the task's metric class
    *, check_trees: bool = True, exclude_punct: bool = False, strip_subtypes: bool = True
) -> type[Suite]:
    """The accumulator of every CoNLL 2018 figure (a suite; the same options give the same class, so states merge).

    Each example is a document (a sequence of :class:`DepSentence` per side, scored as the script scores a file) or a
    sentence (a bare :class:`DepSentence`); sentence examples add up to the script's figures of their corpus or
    raise an :class:`~metametric_jax.errors.InputFormatError` telling to score whole documents (see the module's
    "Sentence by sentence").

    Args:
        check_trees: refuse sentences that are not trees (a cycle, no root or several), as the script does.
        exclude_punct: leave out words whose reference UPOS is ``PUNCT`` from the word-level figures.
        strip_subtypes: compare relations without subtypes (``acl:relcl`` → ``acl``), as the script does.

    Example:
        >>> M = DependencyMetric()
        >>> M is DependencyMetric(check_trees=True) and M is not DependencyMetric(exclude_punct=True)
        True
    """
    return _suite(bool(check_trees), bool(exclude_punct), bool(strip_subtypes))


def _counts_stats(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    """The member statistics of per-sentence counts given as the predictions: the counts suite's batch function."""
    counts = np.zeros((0, len(METRICS), 4)) if not len(predictions) else np.stack([np.asarray(c) for c in predictions])
    return _member_stats(counts)


@class_factory
def _counts_suite(check_trees: bool, exclude_punct: bool, strip_subtypes: bool) -> type[Suite]:
    from metametric_jax.suite import make_suite

    base = _suite(check_trees, exclude_punct, strip_subtypes).metric_config
    return make_suite(
        f"{base.name}_counts",
        dict(base.members),
        dict(base.derived),
        batch_stats=_counts_stats,
        doc="The CoNLL 2018 figures from per-sentence counts (see :func:`SentenceCountsMetric`).",
    )


def SentenceCountsMetric(  # noqa: N802 - a cached factory named as an accumulator class
    *, check_trees: bool = True, exclude_punct: bool = False, strip_subtypes: bool = True
) -> type[Suite]:
    """:func:`DependencyMetric` fed with each reference sentence's counts from :func:`sentence_counts`.

    The whole corpus is aligned once (as the script does) and each reference sentence becomes one example, the
    ``predictions``, with ``references`` ignored: the figures of the summed counts equal :func:`score`'s exactly, also
    where the alignment around a multiword token pairs words across a sentence boundary (where sentence examples of
    :func:`DependencyMetric` are refused): the accumulator form of :func:`sentence_rows`, which ``score dependency
    --bootstrap`` and ``compare dependency`` resample on the host.

    Example:
        >>> M = SentenceCountsMetric()
        >>> state = M.from_model_output([np.ones((len(METRICS), 4), int)], [None])
        >>> float(state.compute()["scores"]["las"]["f1"])
        1.0
    """
    return _counts_suite(bool(check_trees), bool(exclude_punct), bool(strip_subtypes))


def state_report(state: Suite) -> dict[str, dict[str, float | None]]:
    """The figures of a (reduced) :func:`DependencyMetric` or :func:`SentenceCountsMetric` state, in float64.

    :func:`readout` of the state's exact totals (each figure's correct, predicted, reference and aligned counts): the
    read-out of :func:`score`, so the same figures bit for bit on the same counts. ``compute()["scores"]`` is the
    jittable float32 twin.

    Returns:
        ``{figure: {"precision", "recall", "f1", "aligned_accuracy"}}`` as Python floats (``aligned_accuracy`` is
        ``None`` for ``tokens``, ``sentences`` and ``words``).

    Raises:
        TypeError: if ``state`` is not a state of a dependency accumulator.
    """
    members = getattr(state, "states", None)
    name = getattr(getattr(state, "config", None), "name", "")
    if not isinstance(members, Mapping) or not str(name).startswith("dependency_") or not set(METRICS) <= set(members):
        raise TypeError(f"state_report expects a DependencyMetric state; found {type(state).__name__}.")
    values = []
    for m in METRICS:
        t = members[m].totals()
        aligned = members[f"{m}_aligned"].totals()["xx"] if m in ALIGNED_METRICS else 0.0
        values += [t["xy"], t["xx"], t["yy"], aligned]
    return readout(np.array(values, np.float64))


def figures(state: Suite) -> dict[str, dict[str, float | None]]:
    """The figures of a (reduced) :func:`DependencyMetric` state: :func:`state_report`."""
    return state_report(state)


def score(predictions: Sequence[DepSentence], references: Sequence[DepSentence], **options: Any) -> dict[str, Any]:
    """Every CoNLL 2018 figure of predicted sentences against reference sentences (a corpus aligned at once).

    Args:
        predictions: the predicted sentences, in order (their tokenization and sentence splits may differ).
        references: the reference sentences, in order.
        **options: ``check_trees`` (default True), ``exclude_punct`` (False), ``strip_subtypes`` (True).

    Returns:
        ``{figure: {"precision", "recall", "f1", "aligned_accuracy"}}`` for each of :data:`METRICS`, Python floats
        equal to the script's. The headline is ``score(...)["las"]["f1"]``.

    Raises:
        InputFormatError: a sentence that is not a tree (unless ``check_trees=False``), or texts that differ.
    """
    return _score_counts(sentence_counts(predictions, references, **options))
