r"""Parsing metrics: dependency attachment scores (UAS / LAS) from CoNLL-U, and PARSEVAL labeled brackets.

**Dependencies.** For sentences with reference tokens :math:`T_i` (words only: multiword-token ranges ``1-2`` and
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

**Constituents.** PARSEVAL (Black et al., "A Procedure for Quantitatively Comparing the Syntactic Coverage of English
Grammars", 1991) labeled bracket precision, recall and F1 with the conventions of ``evalb``'s ``COLLINS.prm`` (Sekine
and Collins, 1997), as its README documents them:

* the root bracket ``TOP`` / ``ROOT`` / the unlabeled outer ``( ... )`` is not counted (``DELETE_LABEL TOP``), and
  preterminals (part-of-speech tags) are not brackets;
* traces — leaves tagged ``-NONE-`` — are removed from each tree, with every constituent that then dominates nothing
  (``DELETE_LABEL -NONE-``);
* punctuation — words whose **reference** tag is one of ``,`` ``:`` ````` ``''`` ``.`` — is removed from both trees
  before spans are computed (``DELETE_LABEL`` of those tags; deciding by the reference tag is the behaviour of the
  bug-fixed evalb, so a mis-tagged punctuation mark cannot cause a length mismatch), again removing constituents left
  empty;
* function tags are stripped: a label is cut at its first ``-`` or ``=`` (``NP-SBJ-1`` → ``NP``, ``NP=2`` → ``NP``)
  unless it starts with ``-``;
* ``ADVP`` and ``PRT`` are the same label (``EQ_LABEL ADVP PRT``);
* brackets are compared as multisets of ``(label, start, end)``: :math:`n` identical reference brackets and :math:`m`
  predicted ones match :math:`\min(n, m)` times.

.. math::

    \mathrm{LP} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(\hat T_i)|}, \quad
    \mathrm{LR} = \frac{\sum_i |B(\hat T_i) \cap B(T_i)|}{\sum_i |B(T_i)|}

summed over the corpus as evalb does (micro); per-sentence means are the ``macro_*`` figures. The two trees must have
the same words after removing traces (otherwise :class:`~metametric_jax.errors.InputFormatError`). Not implemented:
evalb's 40-word length cut-off summary and its error-skipping of mismatched sentences (we raise instead).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
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
    "Tree",
    "parse_trees",
    "read_trees",
    "brackets",
    "bracket_stats",
    "ParsevalMetric",
    "parseval_scores",
    "PUNCT_TAGS",
    "ROOT_LABELS",
]


# ================================================================================================ dependencies
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


# ================================================================================================ constituents
PUNCT_TAGS: frozenset[str] = frozenset({",", ":", "``", "''", "."})
"""Part-of-speech tags whose words ``COLLINS.prm`` deletes before scoring."""

ROOT_LABELS: frozenset[str] = frozenset({"", "TOP", "ROOT"})
"""Root labels that are not counted as brackets."""

_TRACE = "-NONE-"


@dataclasses.dataclass(frozen=True)
class Tree:
    """A constituency tree node: a label and children (subtrees or words).

    Attributes:
        label: the node label (``""`` for the unlabeled outer bracket of Penn Treebank files).
        children: subtrees and word strings.
    """

    label: str
    children: tuple[Tree | str, ...]

    @property
    def is_preterminal(self) -> bool:
        """Whether the node is a part-of-speech tag over one word."""
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def words(self) -> list[str]:
        """The words under this node, in order."""
        out: list[str] = []
        for c in self.children:
            out.extend([c] if isinstance(c, str) else c.words())
        return out

    def tagged(self) -> list[tuple[str, str]]:
        """``(word, tag)`` pairs of the words under this node, in order (tag ``""`` for a bare word under a phrase)."""
        if self.is_preterminal:
            return [(self.children[0], self.label)]  # type: ignore[list-item]
        out: list[tuple[str, str]] = []
        for c in self.children:
            out.extend(c.tagged() if isinstance(c, Tree) else [(c, "")])  # a bare word under a phrase: no tag
        return out

    def __str__(self) -> str:
        inner = " ".join(str(c) for c in self.children)
        return f"({self.label} {inner})" if self.label else f"( {inner})"


def _tokenize(text: str) -> Iterable[tuple[str, int]]:
    line = 1
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif ch in "()":
            yield ch, line
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "()":
                j += 1
            yield text[i:j], line
            i = j


def parse_trees(text: str, source: str = "<string>") -> list[Tree]:
    """Trees of a bracketed (s-expression) text, e.g. Penn Treebank ``( (S (NP (DT the) (NN cat)) (VP (VBD sat))))``.

    Any number of trees, one or more lines each. A node is ``(label child ...)``; a node without a label is written
    ``( child ...)``.

    Raises:
        InputFormatError: on unbalanced parentheses, a word outside a bracket, or an empty node (with the line).
    """
    trees: list[Tree] = []
    stack: list[tuple[str | None, list[Any], int]] = []
    for tok, line in _tokenize(text):
        if tok == "(":
            stack.append((None, [], line))
        elif tok == ")":
            if not stack:
                raise InputFormatError(source, line, "unbalanced ')': no bracket is open")
            label, children, opened = stack.pop()
            if not children and label is None:
                raise InputFormatError(source, opened, "empty bracket '()': expected (label child ...)")
            if label is not None and not children:
                raise InputFormatError(source, opened, f"node ({label}) has no children")
            node = Tree(label or "", tuple(children))
            if stack:
                stack[-1][1].append(node)
            else:
                trees.append(node)
        else:
            if not stack:
                raise InputFormatError(source, line, f"word {tok!r} outside any bracket")
            label, children, opened = stack[-1]
            if label is None and not children:
                stack[-1] = (tok, children, opened)
            else:
                children.append(tok)
    if stack:
        raise InputFormatError(source, stack[-1][2], f"unbalanced '(': {len(stack)} bracket(s) never closed")
    return trees


def read_trees(source: str | os.PathLike[str]) -> list[Tree]:
    """Trees of a bracketed file, or of bracketed text when ``source`` is a string that is not an existing file."""
    if isinstance(source, os.PathLike) or ("(" not in source and os.path.isfile(source)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return parse_trees(f.read(), path)
    return parse_trees(source)


def _label(label: str, equivalent: Mapping[str, str]) -> str:
    if label and label[0] != "-":
        cut = min((i for i in (label.find("-"), label.find("=")) if i > 0), default=len(label))
        label = label[:cut]
    return equivalent.get(label, label)


_EQUIVALENT = {"PRT": "ADVP"}


def _brackets_of(
    tree: Tree, keep: Sequence[bool], equivalent: Mapping[str, str], root_labels: frozenset[str]
) -> Counter:
    """Multiset of (label, start, end) over kept words, with traces already excluded from ``keep`` positions."""
    out: Counter = Counter()
    position = 0  # index among trace-free words
    kept_before = np.concatenate([[0], np.cumsum(np.asarray(keep, dtype=np.int64))]) if keep else np.zeros(1, int)

    def walk(node: Tree, top: bool) -> tuple[int, int] | None:
        nonlocal position
        if node.is_preterminal:
            if node.label == _TRACE:
                return None
            i = position
            position += 1
            return (i, i + 1)
        first: int | None = None
        last: int | None = None
        for c in node.children:
            if isinstance(c, str):  # a bare word under a phrase: count it as a word
                i = position
                position += 1
                r: tuple[int, int] | None = (i, i + 1)
            else:
                r = walk(c, False)
            if r is not None:
                first = r[0] if first is None else first
                last = r[1]
        if first is None or last is None:
            return None
        start, end = int(kept_before[first]), int(kept_before[last])
        if end > start and not (top and node.label in root_labels):
            out[(_label(node.label, equivalent), start, end)] += 1
        return (first, last)

    walk(tree, True)
    return out


def _words_and_tags(tree: Tree) -> list[tuple[str, str]]:
    return [(w, t) for w, t in tree.tagged() if t != _TRACE]


def brackets(tree: Tree, reference: Tree | None = None) -> Counter:
    """The evalb brackets of ``tree``: a multiset of ``(label, start, end)`` (see module docstring).

    Punctuation positions are those whose tag in ``reference`` (default: ``tree`` itself) is in :data:`PUNCT_TAGS`.
    """
    tags = [t for _, t in _words_and_tags(reference if reference is not None else tree)]
    keep = [t not in PUNCT_TAGS for t in tags]
    if len(_words_and_tags(tree)) != len(keep):
        raise ValueError("brackets: the tree and its reference have different numbers of words (traces excluded).")
    return _brackets_of(tree, keep, _EQUIVALENT, ROOT_LABELS)


def _tree(x: Any, what: str, k: int) -> Tree:
    if isinstance(x, Tree):
        return x
    if isinstance(x, str):
        trees = parse_trees(x)
        if len(trees) != 1:
            raise ValueError(f"{what} {k}: expected one bracketed tree; found {len(trees)}.")
        return trees[0]
    raise TypeError(f"{what} {k}: expected a Tree or a bracketed string; found {type(x).__name__}.")


def bracket_stats(
    predictions: Sequence[Any], references: Sequence[Any], source: str = "<prediction>"
) -> dict[str, np.ndarray]:
    """Per-sentence statistics of :data:`ParsevalMetric`'s members.

    ``brackets``: (matched, predicted, reference brackets); ``tagging``: (correct tags, scored words, scored words);
    ``exact``: (1 if the bracket multisets are equal else 0, 1, 1).

    Raises:
        InputFormatError: if a sentence's trees have different numbers of words (traces excluded), naming
            ``source`` and the sentence.
    """
    n = len(predictions)
    if len(references) != n:
        raise ValueError(
            f"predictions and references must have the same number of trees; found {n} and {len(references)}."
        )
    out = {key: np.zeros((n, 3), dtype=np.float64) for key in ("brackets", "tagging", "exact")}
    for k, (p, r) in enumerate(zip(predictions, references)):
        tp, tr = _tree(p, "prediction", k), _tree(r, "reference", k)
        wp, wr = _words_and_tags(tp), _words_and_tags(tr)
        if len(wp) != len(wr):
            raise InputFormatError(
                source,
                None,
                f"sentence {k + 1}: the predicted tree has {len(wp)} words but the reference has {len(wr)} (traces "
                "excluded); the trees must cover the same words",
            )
        keep = [t not in PUNCT_TAGS for _, t in wr]
        bp = _brackets_of(tp, keep, _EQUIVALENT, ROOT_LABELS)
        br = _brackets_of(tr, keep, _EQUIVALENT, ROOT_LABELS)
        hit = sum((bp & br).values())
        n_p, n_r = sum(bp.values()), sum(br.values())
        out["brackets"][k] = (hit, n_p, n_r)
        scored = sum(keep)
        correct = sum(1 for (_, a), (_, b), kk in zip(wp, wr, keep) if kk and a == b)
        out["tagging"][k] = (correct, scored, scored)
        out["exact"][k] = (1.0 if bp == br else 0.0, 1.0, 1.0)
    return out


def _parseval_batch(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
    return bracket_stats(predictions, references)


ParsevalMetric: type[Suite] = make_suite(
    "parseval",
    {
        "brackets": stats_metric(
            name="parseval_brackets",
            doc=(
                "PARSEVAL labeled brackets (evalb COLLINS.prm conventions): precision = matched / predicted "
                "brackets, recall = matched / reference brackets, micro over the corpus; ``macro_*`` per sentence."
            ),
        ),
        "tagging": stats_metric(
            name="parseval_tagging", doc="Tagging accuracy over the words evalb scores (punctuation excluded)."
        ),
        "exact": stats_metric(
            name="parseval_exact", doc="Complete match: the share of sentences whose brackets are all correct."
        ),
    },
    batch_stats=_parseval_batch,
    doc=(
        "PARSEVAL with evalb's COLLINS.prm conventions (see :mod:`metametric_jax.tasks.parsing`): members "
        "``brackets`` (labeled precision / recall / F1), ``tagging`` (accuracy, read ``recall``) and ``exact`` "
        "(complete match, read ``recall``). Inputs: :class:`Tree` or bracketed strings, one per sentence."
    ),
)


def parseval_scores(
    prediction: str | os.PathLike[str] | Sequence[Any], reference: str | os.PathLike[str] | Sequence[Any]
) -> dict[str, float]:
    """Corpus PARSEVAL figures of bracketed files (or texts, or trees), as evalb's summary reports them.

    Returns:
        ``{"precision", "recall", "f1", "tagging_accuracy", "exact_match"}`` as Python floats.

    Raises:
        InputFormatError: on malformed brackets, different numbers of trees or a word-count mismatch.
    """
    src = os.fspath(prediction) if isinstance(prediction, os.PathLike) else "<prediction>"
    if isinstance(prediction, str) and "(" not in prediction:
        src = prediction
    pred = read_trees(prediction) if isinstance(prediction, (str, os.PathLike)) else list(prediction)
    ref = read_trees(reference) if isinstance(reference, (str, os.PathLike)) else list(reference)
    if len(pred) != len(ref):
        raise InputFormatError(src, None, f"the prediction has {len(pred)} trees but the reference has {len(ref)}")
    stats = bracket_stats(pred, ref, src)
    hit, n_p, n_r = stats["brackets"].sum(0)
    p = hit / n_p if n_p else 0.0
    r = hit / n_r if n_r else 0.0
    t = stats["tagging"].sum(0)
    return {
        "precision": float(p),
        "recall": float(r),
        "f1": float(2 * hit / (n_p + n_r)) if n_p + n_r else 0.0,
        "tagging_accuracy": float(t[0] / t[2]) if t[2] else 0.0,
        "exact_match": float(stats["exact"][:, 0].mean()) if len(pred) else 0.0,
    }
