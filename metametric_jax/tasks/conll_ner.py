"""CoNLL column files for NER: reading, validating and scoring a gold file against a prediction file.

The format (CoNLL-2000 / CoNLL-2003, Tjong Kim Sang & De Meulder 2003): one token per line, whitespace-separated
columns, the **last column** the tag, the first the token (when there are two columns or more); a blank line ends a
sentence; ``-DOCSTART-`` lines are ignored. Every non-blank line of a file has the same number of columns.

:func:`score_files` reads both files, checks that they describe the same sentences (same number of sentences,
same number of tokens in each, and the same tokens when the prediction file has a token column) and returns the
report of :func:`metametric_jax.tasks.ner.ner_report`.
"""

from __future__ import annotations

import dataclasses
import os
from importlib import resources
from typing import Any

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.ner import ner_report, normalize_scheme, tag_problem

__all__ = ["ConllSentences", "read_conll", "check_aligned", "score_files", "sample_paths"]

DOCSTART = "-DOCSTART-"


@dataclasses.dataclass(frozen=True)
class ConllSentences:
    """The sentences of a CoNLL column file.

    Attributes:
        path: the file read.
        tags: the tags of each sentence (last column).
        tokens: the tokens of each sentence (first column), or None when the file has a single column.
        lines: the 1-based line number of each token.
        n_columns: the number of columns of the file (0 if it has no token line).
    """

    path: str
    tags: list[list[str]]
    tokens: list[list[str]] | None
    lines: list[list[int]]
    n_columns: int

    def sentence_lines(self, k: int) -> str:
        """The line range of sentence ``k`` (0-based) as ``"a-b"``."""
        return f"{self.lines[k][0]}-{self.lines[k][-1]}" if self.lines[k] else "?"


def read_conll(path: str | os.PathLike[str], scheme: str | None = None) -> ConllSentences:
    """Read a CoNLL column file.

    Args:
        path: the file (UTF-8).
        scheme: if given, every tag is checked against this tag scheme.

    Raises:
        InputFormatError: on a line whose number of columns differs from the file's first token line, or (with
            ``scheme``) on a tag that is not valid in the scheme; the error names the file and line.
        FileNotFoundError: if the file does not exist.
    """
    path = os.fspath(path)
    if scheme is not None:
        scheme = normalize_scheme(scheme)
    tags: list[list[str]] = []
    tokens: list[list[str]] = []
    lines: list[list[int]] = []
    cur_tags: list[str] = []
    cur_tokens: list[str] = []
    cur_lines: list[int] = []
    n_columns = 0
    first_line = 0

    def flush() -> None:
        nonlocal cur_tags, cur_tokens, cur_lines
        if cur_tags:
            tags.append(cur_tags)
            tokens.append(cur_tokens)
            lines.append(cur_lines)
            cur_tags, cur_tokens, cur_lines = [], [], []

    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            fields = line.split()
            if not fields:
                flush()
                continue
            if fields[0] == DOCSTART:
                flush()
                continue
            if not n_columns:
                n_columns, first_line = len(fields), number
            elif len(fields) != n_columns:
                raise InputFormatError(
                    path,
                    number,
                    f"expected {n_columns} whitespace-separated columns (as on line {first_line}), found "
                    f"{len(fields)}: {line.rstrip()!r}",
                )
            cur_tags.append(fields[-1])
            cur_tokens.append(fields[0])
            cur_lines.append(number)
    flush()
    out = ConllSentences(path, tags, tokens if n_columns >= 2 else None, lines, n_columns)
    if scheme is not None:
        _check_tags(out, scheme)
    return out


def _check_tags(doc: ConllSentences, scheme: str) -> None:
    seen: set[str] = set()
    for sent_tags, sent_lines in zip(doc.tags, doc.lines):
        for tag, number in zip(sent_tags, sent_lines):
            if tag in seen:
                continue
            problem = tag_problem(tag, scheme)
            if problem is not None:
                raise InputFormatError(doc.path, number, problem)
            seen.add(tag)


def check_aligned(gold: ConllSentences, pred: ConllSentences) -> None:
    """Check that two files hold the same sentences: counts of sentences and tokens, and tokens when both have them.

    Raises:
        InputFormatError: at the first mismatch, on the prediction file's line, naming the sentence (1-based) and
            the lines in both files.
    """
    for k, (g, p) in enumerate(zip(gold.tags, pred.tags)):
        if len(g) != len(p):
            raise InputFormatError(
                pred.path,
                pred.lines[k][0],
                f"sentence {k + 1} has {len(p)} tokens (lines {pred.sentence_lines(k)}) but sentence {k + 1} of "
                f"{gold.path} has {len(g)} tokens (lines {gold.sentence_lines(k)}); the files must hold the same "
                "sentences with the same tokenization",
            )
        if gold.tokens is not None and pred.tokens is not None:
            for j, (tg, tp) in enumerate(zip(gold.tokens[k], pred.tokens[k])):
                if tg != tp:
                    raise InputFormatError(
                        pred.path,
                        pred.lines[k][j],
                        f"token {tp!r} (sentence {k + 1}, token {j + 1}) differs from token {tg!r} at "
                        f"{gold.path}:{gold.lines[k][j]}; the files must hold the same tokens",
                    )
    ng, np_ = len(gold.tags), len(pred.tags)
    if ng != np_:
        k = min(ng, np_)
        longer = gold if ng > np_ else pred
        raise InputFormatError(
            pred.path,
            pred.lines[k][0] if np_ > ng else None,
            f"{np_} sentences but {gold.path} has {ng}; sentence {k + 1} (line {longer.lines[k][0]} of "
            f"{longer.path}) has no counterpart in the other file",
        )


def score_files(
    gold_path: str | os.PathLike[str], pred_path: str | os.PathLike[str], scheme: str = "IOB2"
) -> dict[str, Any]:
    """Span-level NER scores of a prediction file against a gold file.

    Args:
        gold_path: the reference CoNLL column file.
        pred_path: the predicted file (tags in the last column; the token column is optional).
        scheme: the tag scheme of both files.

    Returns:
        ``{"micro": {"precision", "recall", "f1"}, "macro": {...}, "per_type": {type: {"precision", "recall", "f1",
        "support"}}}``: floats and integer supports; ``macro`` is the unweighted mean over types (seqeval's
        ``macro avg``).

    Raises:
        InputFormatError: on a malformed file, an invalid tag, or files that do not hold the same sentences.
    """
    gold = read_conll(gold_path, scheme)
    pred = read_conll(pred_path, scheme)
    check_aligned(gold, pred)
    return ner_report(pred.tags, gold.tags, scheme)


def sample_paths() -> tuple[str, str]:
    """Paths of the bundled sample (gold, predicted): a few dozen CoNLL-2003-style sentences, IOB2 tags."""
    base = resources.files("metametric_jax") / "data" / "ner"
    return str(base / "gold.txt"), str(base / "pred.txt")
