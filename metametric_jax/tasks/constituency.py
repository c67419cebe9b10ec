r"""Constituency parsing metrics: PARSEVAL labeled brackets.

PARSEVAL (Black et al., "A Procedure for Quantitatively Comparing the Syntactic Coverage of English
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
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.accumulate import stats_metric
from metametric_jax.errors import InputFormatError
from metametric_jax.suite import Suite, make_suite

__all__ = [
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
