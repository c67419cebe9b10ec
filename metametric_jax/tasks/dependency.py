r"""Dependency parsing metrics: attachment scores (UAS / LAS / LA) from CoNLL-U.

For sentences with reference tokens :math:`T_i` (words only: multiword-token ranges ``1-2`` and
empty nodes ``1.1`` are skipped),

.. math::

    \mathrm{UAS} = \frac{\sum_i |\{t \in T_i : \hat h_t = h_t\}|}{\sum_i |T_i|}, \qquad
    \mathrm{LAS} = \frac{\sum_i |\{t \in T_i : \hat h_t = h_t \wedge \hat\ell_t = \ell_t\}|}{\sum_i |T_i|}

(Buchholz and Marsi, "CoNLL-X Shared Task on Multilingual Dependency Parsing", 2006; Zeman et al., CoNLL 2018). The
prediction must have the same words as the reference (gold tokenization); a sentence whose word counts differ raises
:class:`~metametric_jax.errors.InputFormatError` naming the file, the sentence and its first line. With
``exclude_punct=True`` the words whose *reference* UPOS is ``PUNCT`` are left out of both numerator and denominator
(the CoNLL-X convention of scoring without punctuation, with UD's part-of-speech deciding what punctuation is). With
``strip_subtypes=True`` labels are compared without their subtype (``nsubj:pass`` → ``nsubj``), as the CoNLL 2018
evaluation does. CoNLL-U is read with the ``conllu`` package (``pip install metametric-jax[formats]``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.accumulate import stats_metric
from metametric_jax.errors import InputFormatError
from metametric_jax.suite import Suite, make_suite

__all__ = [
    "DepToken",
    "DepSentence",
    "parse_conllu",
    "read_conllu",
    "attachment_stats",
    "dependency_metric",
    "attachment_scores",
]


@dataclasses.dataclass(frozen=True)
class DepToken:
    """A syntactic word of a CoNLL-U sentence.

    Attributes:
        id: the word index (1-based).
        form: the word form.
        upos: the universal part of speech.
        head: the index of the head word (0 for the root), or ``None`` if unannotated (``_``).
        deprel: the dependency relation.
    """

    id: int
    form: str
    upos: str
    head: int | None
    deprel: str


@dataclasses.dataclass(frozen=True)
class DepSentence:
    """The words of a sentence and where it was read from (for error messages).

    Attributes:
        tokens: the syntactic words, in order (no multiword ranges, no empty nodes).
        source: the file name (or ``"<string>"``).
        line: the 1-based line of the sentence's first line in ``source``.
    """

    tokens: tuple[DepToken, ...]
    source: str = "<string>"
    line: int | None = None

    def __len__(self) -> int:
        return len(self.tokens)


def _conllu() -> Any:
    try:
        import conllu
    except ImportError:
        raise ImportError("Reading CoNLL-U needs the `conllu` package: pip install metametric-jax[formats]") from None
    return conllu


def _blocks(text: str) -> list[tuple[int, list[tuple[int, str]]]]:
    """Sentence blocks: (first line number, [(line number, line), ...]) of maximal runs of non-blank lines."""
    out: list[tuple[int, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] = []
    for k, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            current.append((k, line))
        elif current:
            out.append((current[0][0], current))
            current = []
    if current:
        out.append((current[0][0], current))
    return out


def parse_conllu(text: str, source: str = "<string>") -> list[DepSentence]:
    """Sentences of a CoNLL-U document (read with the ``conllu`` package).

    Multiword-token ranges (``1-2``) and empty nodes (``1.1``) are skipped; comment-only blocks are ignored.

    Raises:
        InputFormatError: on a token line without 10 tab-separated fields, an unparsable field (e.g. a non-integer
            HEAD) or a word id out of sequence, naming ``source`` and the line.
        ImportError: if ``conllu`` is not installed.
    """
    conllu = _conllu()
    sentences: list[DepSentence] = []
    for start, lines in _blocks(text):
        token_lines = [(k, line) for k, line in lines if not line.startswith("#")]
        if not token_lines:
            continue
        for k, line in token_lines:
            n_fields = len(line.split("\t"))
            if n_fields != 10:
                raise InputFormatError(
                    source, k, f"expected a CoNLL-U token line of 10 tab-separated fields; found {n_fields}: {line!r}"
                )
        block = "\n".join(line for _, line in lines) + "\n"
        try:
            tokens = conllu.parse(block)[0]
        except Exception as e:  # conllu.exceptions.ParseException and friends
            bad = start
            for k, line in token_lines:
                try:
                    conllu.parse(line + "\n")
                except Exception:
                    bad = k
                    break
            raise InputFormatError(source, bad, f"invalid CoNLL-U token line: {e}") from None
        words: list[DepToken] = []
        for (k, _), tok in zip(token_lines, tokens):
            tid = tok["id"]
            if not isinstance(tid, int):
                continue  # multiword range (tuple with '-') or empty node (tuple with '.')
            if tid != len(words) + 1:
                raise InputFormatError(source, k, f"expected word id {len(words) + 1}; found {tid}")
            head = tok["head"]
            words.append(DepToken(tid, str(tok["form"]), str(tok["upos"]), head, str(tok["deprel"])))
        sentences.append(DepSentence(tuple(words), source, start))
    return sentences


def read_conllu(source: str | os.PathLike[str]) -> list[DepSentence]:
    """Sentences of a CoNLL-U file, or of CoNLL-U text when ``source`` is a string that is not an existing file."""
    if isinstance(source, os.PathLike) or ("\n" not in source and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return parse_conllu(f.read(), path)
    return parse_conllu(source)


def _as_sentence(x: Any, what: str, k: int) -> DepSentence:
    if isinstance(x, DepSentence):
        return x
    if isinstance(x, (list, tuple)) and all(isinstance(t, DepToken) for t in x):
        return DepSentence(tuple(x))
    raise TypeError(f"{what} {k}: expected a DepSentence or a list of DepToken; found {type(x).__name__}.")


def attachment_stats(
    predictions: Sequence[Any],
    references: Sequence[Any],
    exclude_punct: bool = False,
    strip_subtypes: bool = False,
) -> dict[str, np.ndarray]:
    """Per-sentence ``(correct, scored words, scored words)`` for ``uas``, ``las`` and ``la`` (label accuracy).

    Raises:
        InputFormatError: if a predicted sentence has a different number of words than its reference (naming the
            prediction's source, the sentence number and its line).
    """
    n = len(predictions)
    if len(references) != n:
        raise ValueError(
            f"predictions and references must have the same number of sentences; found {n} and {len(references)}."
        )
    out = {key: np.zeros((n, 3), dtype=np.float64) for key in ("uas", "las", "la")}
    for k, (p, r) in enumerate(zip(predictions, references)):
        p, r = _as_sentence(p, "prediction", k), _as_sentence(r, "reference", k)
        if len(p) != len(r):
            where = f" (reference {r.source}:{r.line})" if r.line is not None else ""
            raise InputFormatError(
                p.source,
                p.line,
                f"sentence {k + 1} has {len(p)} predicted words but {len(r)} reference words{where}; the prediction "
                "must use the reference tokenization",
            )
        u = lab = both = total = 0
        for tp, tr in zip(p.tokens, r.tokens):
            if exclude_punct and tr.upos == "PUNCT":
                continue
            total += 1
            head_ok = tp.head == tr.head
            lp, lr = tp.deprel, tr.deprel
            if strip_subtypes:
                lp, lr = lp.split(":", 1)[0], lr.split(":", 1)[0]
            label_ok = lp == lr
            u += head_ok
            lab += label_ok
            both += head_ok and label_ok
        out["uas"][k] = (u, total, total)
        out["las"][k] = (both, total, total)
        out["la"][k] = (lab, total, total)
    return out


_ATTACHMENT_DOC = r"""{what} ({options}): the share of scored words with {correct}.

Per-sentence statistics (correct, scored words, scored words), so ``precision`` = ``recall`` = ``f1`` = the score;
micro over words by default (as the CoNLL scripts), ``macro_*`` = mean over sentences.
"""


@functools.cache
def _dependency_suite(exclude_punct: bool, strip_subtypes: bool) -> type[Suite]:
    options = f"exclude_punct={exclude_punct}, strip_subtypes={strip_subtypes}"
    members = {
        "uas": stats_metric(
            name="uas",
            doc=_ATTACHMENT_DOC.format(what="UAS", options=options, correct="the correct head"),
        ),
        "las": stats_metric(
            name="las",
            doc=_ATTACHMENT_DOC.format(what="LAS", options=options, correct="the correct head and relation"),
        ),
        "la": stats_metric(
            name="la",
            doc=_ATTACHMENT_DOC.format(what="Label accuracy", options=options, correct="the correct relation"),
        ),
    }

    def batch(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
        return attachment_stats(predictions, references, exclude_punct, strip_subtypes)

    def figures(results: Mapping[str, Any]) -> dict[str, Any]:
        return {key: results[key]["recall"] for key in ("uas", "las", "la")}

    return make_suite(
        f"dependency_{int(exclude_punct)}{int(strip_subtypes)}",
        members,
        {"scores": figures},
        batch_stats=batch,
        doc=(
            f"Dependency attachment scores ({options}): members ``uas``, ``las``, ``la`` (label accuracy), each with "
            "micro and ``macro_`` figures; ``compute()['scores']`` holds the three micro scores. Inputs: "
            ":class:`DepSentence` (or lists of :class:`DepToken`) per example."
        ),
    )


def dependency_metric(exclude_punct: bool = False, strip_subtypes: bool = False) -> type[Suite]:
    """The UAS / LAS / label-accuracy accumulator (a suite; the same options give the same class, so states merge).

    Args:
        exclude_punct: leave out words whose reference UPOS is ``PUNCT``.
        strip_subtypes: compare relations without their subtype (``acl:relcl`` → ``acl``).
    """
    return _dependency_suite(bool(exclude_punct), bool(strip_subtypes))


def attachment_scores(
    prediction: str | os.PathLike[str] | Sequence[DepSentence],
    reference: str | os.PathLike[str] | Sequence[DepSentence],
    exclude_punct: bool = False,
    strip_subtypes: bool = False,
) -> dict[str, float]:
    """UAS, LAS and label accuracy of a predicted CoNLL-U file (or text, or sentences) against a reference.

    Returns:
        ``{"uas", "las", "la"}`` (micro over words) as Python floats.

    Raises:
        InputFormatError: on malformed CoNLL-U, different numbers of sentences, or different word counts.
    """
    pred = read_conllu(prediction) if isinstance(prediction, (str, os.PathLike)) else list(prediction)
    ref = read_conllu(reference) if isinstance(reference, (str, os.PathLike)) else list(reference)
    if len(pred) != len(ref):
        src = pred[0].source if pred else "<prediction>"
        raise InputFormatError(src, None, f"the prediction has {len(pred)} sentences but the reference has {len(ref)}")
    stats = attachment_stats(pred, ref, exclude_punct, strip_subtypes)
    out = {}
    for key, s in stats.items():
        total = s[:, 2].sum()
        out[key] = float(s[:, 0].sum() / total) if total else 0.0
    return out
