r"""ROUGE's input files: one example per line, plain text or JSON Lines strings (:mod:`metametric_jax.tasks.rouge`).

:func:`read_texts` reads one file, :func:`read_pairs` a prediction file beside one or several reference files, checked
to hold as many examples.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "summaries.txt")
    >>> _ = open(path, "w").write("the cat sat\r\n\nthe end\n")
    >>> read_texts(path)
    ['the cat sat', '', 'the end']
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text, split_lines

__all__ = ["read_texts", "read_pairs"]


def read_texts(path: str | os.PathLike[str]) -> list[str]:
    r"""The examples of a ROUGE input file, one per line.

    ``.jsonl``: each line one JSON string (a summary, its sentences separated by ``"\n"``). Any other name: plain text,
    each line one example (an empty line is an empty summary). A UTF-8 byte order mark and CRLF line ends are accepted.

    Raises:
        InputFormatError: on a line that is not a JSON string (``.jsonl``) or bytes that are not UTF-8.
        OSError: if the file cannot be read.
    """
    name = os.fspath(path)
    lines = [x[:-1] if x.endswith("\r") else x for x in split_lines(read_text(name))]
    if not name.lower().endswith(".jsonl"):
        return lines
    out: list[str] = []
    for number, row in enumerate(lines, start=1):
        if not row.strip():
            raise InputFormatError(name, number, "expected a JSON string (one example per line); found an empty line")
        try:
            value = json.loads(row)
        except json.JSONDecodeError as err:
            raise InputFormatError(
                name,
                number,
                f"expected a JSON string (one example per line); found invalid JSON ({err.msg}): {row:.60}",
            ) from None
        if not isinstance(value, str):
            raise InputFormatError(
                name, number, f"expected a JSON string (one example per line); found a JSON {type(value).__name__}"
            )
        out.append(value)
    return out


def read_pairs(
    predictions: str | os.PathLike[str], references: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
) -> tuple[list[str], list[list[str]]]:
    """The predictions and, per example, its references (one per reference file), checked to have equal lengths.

    Raises:
        InputFormatError: when the files hold different numbers of examples (naming the first line one lacks), or as
            :func:`read_texts`.
    """
    ref_paths = [references] if isinstance(references, (str, os.PathLike)) else list(references)
    if not ref_paths:
        raise ValueError("ROUGE: no reference file given.")
    preds = read_texts(predictions)
    columns = [read_texts(p) for p in ref_paths]
    for path, refs in zip(ref_paths, columns):
        if len(refs) != len(preds):
            shorter, longer = (path, predictions) if len(refs) < len(preds) else (predictions, path)
            line = min(len(refs), len(preds)) + 1
            raise InputFormatError(
                os.fspath(shorter),
                line,
                f"expected {max(len(refs), len(preds))} examples, one per line, as in {os.fspath(longer)}; found "
                f"{min(len(refs), len(preds))} (the file ends before line {line})",
            )
    return preds, [list(x) for x in zip(*columns)] if columns else []
