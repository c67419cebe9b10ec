r"""Constituency parsing: PARSEVAL brackets as EVALB scores them, with a parameter file (``COLLINS.prm`` by default).

EVALB (Sekine and Collins, 1997, http://nlp.cs.nyu.edu/evalb/) is the scorer of constituency parsers since Collins
(1997); PARSEVAL is Black et al., "A Procedure for Quantitatively Comparing the Syntactic Coverage of English
Grammars" (1991). This module computes every figure of EVALB's report, per sentence and in its summary (all
sentences and sentences of at most ``CUTOFF_LEN`` words), equal to the program's output; the default parameters are
those of ``COLLINS.prm``:

* ``DELETE_LABEL TOP -NONE- , : `` '' .``: a part-of-speech node whose tag is one of these is removed with its word
  (traces and punctuation); a phrase whose label (function tags cut) is one of these is not counted (only ``TOP``:
  a root labelled ``ROOT``, or an unlabelled root ``( (S ...))``, **is** a bracket, as in EVALB); a phrase left
  covering no word is not counted;
* function tags are cut from phrase labels at the first ``-`` or ``=`` (``NP-SBJ-1`` and ``NP=2`` are ``NP``);
* ``EQ_LABEL ADVP PRT``: the two labels are the same (for phrases and for tags);
* ``DELETE_LABEL_FOR_LENGTH -NONE-``: a sentence's length, which decides whether it is in the ``len<=40`` summary,
  counts the words of the reference tree except traces (punctuation included);
* brackets are multisets of ``(label, start, end)`` over the words left: :math:`n` identical reference brackets and
  :math:`m` predicted ones match :math:`\min(n, m)` times.

A sentence is **skipped** (status 2) when the prediction has no word left (an empty line: the parser failed), and is
an **error** (status 1) when the two trees have different numbers of words left or a different word at some
position: a part of speech that is deleted on one side only (``.`` tagged ``NN``) is such an error. Skipped and error
sentences are left out of every figure but the sentence counts, and each is reported as a warning. (David Ellis'
2006 change to EVALB puts back a quote word ``'``, ``"`` or ``/`` whose tag is deleted on one side only, before the
lengths are compared; it acts only through ``QUOTE_LABEL`` lines, which ``COLLINS.prm`` has none of, and is followed
exactly when a parameter file has them, as ``new.prm`` and ``nk.prm`` do.) Unlike the program, scoring does not stop
after ``MAX_ERROR`` errors: a warning says that EVALB would have stopped; and where EVALB prints ``nan`` for a 0/0 F1,
the figure is 0. Sentences are lines when no tree spans two lines (several trees on one line are one sentence, a
blank line is a failed parse), else trees; the program's limits (200 words, 5,000 characters a line) do not apply.

.. math::

    \mathrm{LR} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(T_i)|}, \quad
    \mathrm{LP} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(\hat T_i)|}, \quad
    F_1 = \frac{2\,\mathrm{LP}\,\mathrm{LR}}{\mathrm{LP} + \mathrm{LR}}

summed over the valid sentences :math:`i` (micro, as EVALB). A predicted bracket :math:`(a, b)` **crosses** the
reference when some reference bracket :math:`(c, d)` has :math:`c < a < d < b` or :math:`a < c < b < d`; "average
crossing" is the number of crossing predicted brackets per valid sentence, "no crossing" and "2 or less crossing"
the share of valid sentences with none and with at most two. Complete match: the share of valid sentences whose
predicted and reference brackets are all matched. Tagging accuracy: correct tags over the words left.

The headline figure is labeled bracket F1 over all sentences, ``score(...)["f1"]``.

Every figure is one read-out, :func:`readout`, of summed sentence rows (:func:`sentence_rows`), in :func:`score`,
:func:`score_files` and the command line. :func:`state_report` reads a state of the accumulators
:func:`ConstituencyMetric` and :func:`SentenceStatsMetric` in float64 through it: the state's counts are exact, so its
figures are :func:`score`'s bit for bit on the same sentences; ``compute()`` is its jittable float32 twin for training
loops (``brackets``, ``tagging``, ... members; read ``precision`` where the member is a ratio of sentences). The state
counts error and skipped sentences together (sentences not valid): their counts come from :func:`score` only.

The rows and their read-out are :mod:`~metametric_jax.tasks.constituency_readout`'s, the files counted in chunks and
their report :mod:`~metametric_jax.tasks.constituency_files`'; this module holds the scorer of trees and the
accumulators, and gives the names of both.

Example:
    >>> gold = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PRT (RP down))) (. .)))"
    >>> pred = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (ADVP (RB down)) (. .)))"
    >>> s = score([pred], [gold])
    >>> round(s["f1"], 4), s["all"]["matched_brackets"], s["all"]["gold_brackets"], s["all"]["test_brackets"]
    (0.75, 3, 4, 4)
    >>> s["all"]["tagging_accuracy"], s["all"]["complete_match"]
    (0.75, 0.0)
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax._portable import class_factory
from metametric_jax.inputs import check_lengths
from metametric_jax.tasks.constituency_counts import (
    COLLINS,
    EvalbParams,
    SentenceCounts,
    evalb_counts,
    read_params,
)
from metametric_jax.tasks.constituency_files import (
    brackets_in_chunks,
    counts_in_chunks,
    file_warnings,
    resolve_params,
    score_files,
    summary_files,
)
from metametric_jax.tasks.constituency_readout import ROW_FIELDS, readout, sentence_rows, summarize
from metametric_jax.tasks.readers.ptb import Tree, Treebank, scan_trees

__all__ = [
    "EvalbParams",
    "COLLINS",
    "read_params",
    "SentenceCounts",
    "evalb_counts",
    "counts_in_chunks",
    "brackets_in_chunks",
    "summarize",
    "sentence_rows",
    "readout",
    "ROW_FIELDS",
    "file_warnings",
    "ConstituencyMetric",
    "score",
    "score_files",
    "summary_files",
    "sentence_stats",
    "SentenceStatsMetric",
    "state_report",
    "parse_bank",
]


def _bank(items: Sequence[Any], what: str) -> Treebank:
    """A one-tree-per-line treebank of trees or bracketed strings (an empty string is an empty parse)."""
    lines = []
    for k, x in enumerate(items):
        if isinstance(x, Tree):
            x = str(x)
        if not isinstance(x, str):
            raise TypeError(f"{what} {k}: expected a Tree or a bracketed string; found {type(x).__name__}")
        lines.append(x.replace("\r", " ").replace("\n", " ").strip())
    bank = scan_trees(("\n".join(lines) + "\n").encode("utf-8"), f"<{what}s>", one_per_line=True)
    n = len(items)
    if bank.sentences < n:  # trailing empty parses
        extra = n - bank.sentences
        bank = bank._replace(
            sentences=n,
            line=np.arange(1, n + 1),
            leaf_offsets=np.concatenate((bank.leaf_offsets, np.full(extra, bank.leaf_offsets[-1]))),
        )
    return bank


def score(
    predictions: Sequence[Tree | str],
    references: Sequence[Tree | str],
    *,
    params: EvalbParams | str | os.PathLike[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """EVALB's summary of predicted trees against reference trees, one per sentence in the same order.

    Args:
        predictions: :class:`~metametric_jax.tasks.readers.ptb.Tree` objects or bracketed strings (``""``: the
            parser gave no tree; the sentence is skipped).
        references: the same for the references.
        params: :class:`EvalbParams`, or the path of an EVALB parameter file; default ``COLLINS.prm``.
        **options: fields of :class:`EvalbParams` overriding ``params`` (``delete_labels=``, ``cutoff_len=``, ...).

    Returns:
        :func:`summarize`'s dict; the headline, labeled bracket F1 over all sentences, is ``["f1"]``.

    Raises:
        InputFormatError: on malformed brackets; ValueError if the two sequences differ in length.
    """
    p = resolve_params(params, options)
    check_lengths(predictions, references, "constituency", "sentence")
    return summarize(evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), p), p)


def sentence_stats(c: SentenceCounts, params: EvalbParams = COLLINS) -> dict[str, np.ndarray]:
    """Per-sentence statistics ``{member: (n, 3)}`` of :func:`ConstituencyMetric`'s members from EVALB's counts."""
    valid = (c.status == 0).astype(np.float64)
    one = np.ones_like(valid)
    crossing = c.crossing.astype(np.float64)
    per = {
        "brackets": (c.matched, c.test, c.gold),
        "tagging": (c.correct_tags, c.words, c.words),
        "complete_match": (valid * ((c.gold == c.test) & (c.test == c.matched)), valid, valid),
        "crossing": (crossing, valid, valid),
        "no_crossing": (valid * (crossing == 0), valid, valid),
        "two_or_less_crossing": (valid * (crossing <= 2), valid, valid),
        "valid": (valid, one, one),
    }
    short = (c.length <= params.cutoff_len).astype(np.float64)
    out = {}
    for name, cols in per.items():
        arr = np.stack([np.asarray(x, np.float64) for x in cols], axis=1)
        out[name] = arr
        out[name + "_len40"] = arr * short[:, None]
    return out


def _evalb_stats(params: EvalbParams, predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    """:func:`sentence_stats` of trees: the batch function of :func:`ConstituencyMetric`.

    A module-level function, so that worker processes unpickle it without importing JAX.
    """
    c = evalb_counts(_bank(predictions, "prediction"), _bank(references, "reference"), params)
    return sentence_stats(c, params)


def _row_stats(names: tuple[str, ...], predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    """Each member's statistics from rows of :func:`sentence_stats` given as the predictions (references ignored)."""
    return {k: np.asarray([row[k] for row in predictions], np.float64).reshape(-1, 3) for k in names}


@class_factory
def ConstituencyMetric(params: EvalbParams = COLLINS) -> Any:  # noqa: N802 - a cached factory named as the class
    r"""The accumulator suite of EVALB's figures for ``params`` (cached: one class per setting).

    Members (each a :func:`~metametric_jax.stats_metric` with per-sentence statistics :math:`(xy, xx, yy)`):
    ``brackets`` (matched, predicted, reference brackets: ``precision``, ``recall``, ``f1`` are EVALB's), ``tagging``
    (correct tags, words, words: read ``precision``), ``complete_match``, ``no_crossing``, ``two_or_less_crossing``
    (sentences, valid, valid: read ``precision``), ``crossing`` (crossing brackets, valid, valid: ``precision`` is
    the average crossing), ``valid`` (1 for a valid sentence, 1, 1: ``precision`` is the share of valid sentences),
    and the same with ``_len40`` for sentences of at most ``params.cutoff_len`` words. Inputs: trees or bracketed
    strings, one per sentence. State attributes: each member's ``micro`` (``xy``, ``xx``, ``yy``), ``macro`` and
    ``count`` leaves. The micro figures are EVALB's (Sekine and Collins, 1997):

    .. math::

        \mathrm{LP} = \frac{\sum_i m_i}{\sum_i t_i}, \quad \mathrm{LR} = \frac{\sum_i m_i}{\sum_i g_i}

    with :math:`m_i, t_i, g_i` the matched, predicted and reference brackets of valid sentence :math:`i` (error and
    skipped sentences add zeros). The ``macro_*`` figures are not EVALB's: they average over every sentence, error
    and skipped ones included, and count a sentence without brackets on either side as 1.0.

    Example:
        >>> M = ConstituencyMetric()
        >>> gold = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (NP (NN c)) (VP (VB d)))"]
        >>> pred = ["(TOP (S (NP (NN a)) (VP (VB b))))", "(S (VP (NN c) (VB d)))"]
        >>> out = M.from_model_output(pred, gold).compute()
        >>> round(float(out["brackets"]["recall"]), 4), round(float(out["brackets"]["precision"]), 4)
        (0.6667, 0.8)
    """
    from metametric_jax.build import stats_metric
    from metametric_jax.suite import make_suite

    names = ("brackets", "tagging", "complete_match", "crossing", "no_crossing", "two_or_less_crossing", "valid")
    members = {}
    for name in names:
        for suffix in ("", "_len40"):
            members[name + suffix] = stats_metric(name=f"evalb_{name}{suffix}", doc=f"EVALB {name}{suffix}.")
    return make_suite(
        "evalb",
        members,
        batch_stats=functools.partial(_evalb_stats, params),
        doc="EVALB's figures as an accumulator suite (see :func:`ConstituencyMetric`).",
    )


@class_factory
def SentenceStatsMetric(params: EvalbParams = COLLINS) -> Any:  # noqa: N802 - a cached factory named as the class
    """:func:`ConstituencyMetric` fed with each sentence's statistics (a row of :func:`sentence_stats` per example).

    The files are read and counted once, as :func:`score_files` does (error and skipped sentences included, as zero
    rows); each sentence becomes one example, the ``predictions``, with ``references`` ignored: the accumulator form of
    :func:`sentence_rows`, which ``score constituency --bootstrap`` and ``compare constituency`` resample on the host.

    Example:
        >>> counts = evalb_counts(parse_bank(["(S (NN a))"]), parse_bank(["(S (NN a))"]))
        >>> rows = sentence_stats(counts)
        >>> M = SentenceStatsMetric()
        >>> float(M.from_model_output([{k: v[0] for k, v in rows.items()}], [None]).compute()["brackets"]["f1"])
        1.0
    """
    from metametric_jax.suite import make_suite

    base = ConstituencyMetric(params).metric_config
    batch = functools.partial(_row_stats, tuple(k for k, _ in base.members))
    return make_suite(
        "evalb_sentences", dict(base.members), batch_stats=batch, doc="EVALB's figures from sentence statistics."
    )


#: The (row field, member, statistic) of each column of :data:`ROW_FIELDS` that a state carries; ``error_sentences``
#: and ``skipped_sentences`` it does not (it counts them together, as sentences not valid), and no figure reads them.
_STATE_FIELDS = (
    ("matched_brackets", "brackets", "xy"),
    ("gold_brackets", "brackets", "yy"),
    ("test_brackets", "brackets", "xx"),
    ("words", "tagging", "xx"),
    ("correct_tags", "tagging", "xy"),
    ("valid_sentences", "valid", "xy"),
    ("complete_match", "complete_match", "xy"),
    ("crossing_brackets", "crossing", "xy"),
    ("no_crossing", "no_crossing", "xy"),
    ("two_or_less_crossing", "two_or_less_crossing", "xy"),
    ("sentences", "valid", "xx"),
)


def state_report(state: Any) -> dict[str, dict[str, float]]:
    """EVALB's figures of a (reduced) :func:`ConstituencyMetric` or :func:`SentenceStatsMetric` state, in float64.

    :func:`readout` of the state's exact totals laid out as :func:`sentence_rows` (``error_sentences`` and
    ``skipped_sentences``, which no figure reads, as 0): the read-out of :func:`score`, so its figures bit for bit on
    the same sentences. ``compute()`` is the jittable float32 twin.

    Returns:
        ``{"all": {...}, "len40": {...}}`` as :func:`readout`.

    Raises:
        TypeError: if ``state`` is not a state of an EVALB accumulator.
    """
    members = getattr(state, "states", None)
    name = getattr(getattr(state, "config", None), "name", None)
    if not isinstance(members, Mapping) or name not in ("evalb", "evalb_sentences"):
        raise TypeError(f"state_report expects a ConstituencyMetric state; found {type(state).__name__}.")
    totals = np.zeros(2 * len(ROW_FIELDS))
    for k, suffix in enumerate(("", "_len40")):
        member = {m: members[m + suffix].totals() for m in dict.fromkeys(m for _, m, _ in _STATE_FIELDS)}
        for field, m, stat in _STATE_FIELDS:
            totals[k * len(ROW_FIELDS) + ROW_FIELDS.index(field)] = member[m][stat]
    return readout(totals)


def parse_bank(trees: Sequence[Any]) -> Treebank:
    """A treebank of trees or bracketed strings, one per sentence (an empty string is a failed parse)."""
    return _bank(trees, "tree")
