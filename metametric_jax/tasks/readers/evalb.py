r"""EVALB parameter files (``.prm``): their settings (:class:`EvalbParams`) and their reader.

A line is ``KEYWORD value``; :func:`parse_params` gives the settings as written, :func:`read_params` the
:class:`EvalbParams` of a file (:mod:`metametric_jax.tasks.constituency` scores with them). ``COLLINS`` holds the
settings of ``COLLINS.prm``, the default.

Example:
    >>> params = read_params("new.prm", "DELETE_LABEL TOP\nLABELED 0\nEQ_LABEL ADVP PRT\n")
    >>> params.delete_labels, params.labeled, params.equivalent_labels
    (('TOP',), False, (('ADVP', 'PRT'),))
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text

__all__ = ["EvalbParams", "COLLINS", "parse_params", "read_params", "equivalence_classes"]


def equivalence_classes(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each label of an ``EQ_LABEL`` pair mapped to its class's smallest member; the pairs must be transitive."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    pairs = list(pairs)
    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    out = {x: find(x) for x in list(parent)}
    linked = {(a, b) for a, b in pairs} | {(b, a) for a, b in pairs}
    for x in out:
        for y in out:
            if x < y and out[x] == out[y] and (x, y) not in linked:
                raise ValueError(
                    f"EQ_LABEL pairs must form equivalence classes: {x} and {y} are each paired with a common label "
                    "but not with each other (evalb's result would then depend on the order of the brackets)"
                )
    return out


class EvalbParams(NamedTuple):
    """The settings of an EVALB parameter file; the defaults are ``COLLINS.prm``'s.

    ``EvalbParams(cutoff_len=100)``, ``COLLINS._replace(labeled=False)``: ``EQ_LABEL`` pairs that do not form
    equivalence classes are refused where the settings are read (:func:`read_params`), resolved for a run or used.

    Attributes:
        delete_labels: ``DELETE_LABEL``: tags whose words are removed, phrase labels not counted.
        delete_labels_for_length: ``DELETE_LABEL_FOR_LENGTH``: tags not counted in a sentence's length.
        equivalent_labels: ``EQ_LABEL`` pairs of labels that are the same (they must form equivalence classes).
        equivalent_words: ``EQ_WORD`` pairs of words that are the same.
        quote_labels: ``QUOTE_LABEL``: tags of a quote or slash word (``'``, ``"``, ``/``) that EVALB puts back
            when one side deletes the word and the other does not (``new.prm``, ``nk.prm``), before it decides
            that the lengths differ.
        labeled: ``LABELED``: False to match brackets on their spans alone.
        cutoff_len: ``CUTOFF_LEN``: the length limit of the second summary.
        max_errors: ``MAX_ERROR``: EVALB stops after more errors than this (here: a warning).
    """

    delete_labels: tuple[str, ...] = ("TOP", "-NONE-", ",", ":", "``", "''", ".")
    delete_labels_for_length: tuple[str, ...] = ("-NONE-",)
    equivalent_labels: tuple[tuple[str, str], ...] = (("ADVP", "PRT"),)
    equivalent_words: tuple[tuple[str, str], ...] = ()
    quote_labels: tuple[str, ...] = ()
    labeled: bool = True
    cutoff_len: int = 40
    max_errors: int = 10


COLLINS = EvalbParams()
"""``COLLINS.prm``: the parameters of Collins (1997), the default."""


def parse_params(text: str, source: str = "<string>") -> dict[str, list[str]]:
    r"""The settings of an evalb parameter file: ``{KEYWORD: [value, ...]}`` in file order.

    A line is ``KEYWORD value``; lines starting with ``#`` and lines shorter than three characters are skipped, as
    evalb skips them. Keywords: ``DEBUG``, ``MAX_ERROR``, ``CUTOFF_LEN``, ``LABELED``, ``DELETE_LABEL``,
    ``DELETE_LABEL_FOR_LENGTH``, ``QUOTE_LABEL``, ``EQ_LABEL``, ``EQ_WORD``.

    Raises:
        InputFormatError: on an unknown keyword or a keyword without a value (evalb only warns; a typo would
            silently change the scores).

    Example:
        >>> parse_params("# comment\nDELETE_LABEL TOP\nDELETE_LABEL -NONE-\nEQ_LABEL ADVP PRT\n")
        {'DELETE_LABEL': ['TOP', '-NONE-'], 'EQ_LABEL': ['ADVP PRT']}
    """
    return {keyword: [value for _, value in entries] for keyword, entries in _settings(text, source).items()}


_KEYWORDS = frozenset(
    {
        "DEBUG",
        "MAX_ERROR",
        "CUTOFF_LEN",
        "LABELED",
        "DELETE_LABEL",
        "DELETE_LABEL_FOR_LENGTH",
        "QUOTE_LABEL",
        "EQ_LABEL",
        "EQ_WORD",
    }
)


def _settings(text: str, source: str) -> dict[str, list[tuple[int, str]]]:
    """:func:`parse_params` with the 1-based line of each value: ``{KEYWORD: [(line, value), ...]}``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    out: dict[str, list[tuple[int, str]]] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if line.startswith("#") or len(line) < 3:
            continue
        keyword, _, value = line.partition(" ") if " " in line.split("\t")[0] else line.partition("\t")
        value = value.strip()
        if keyword not in _KEYWORDS:
            raise InputFormatError(
                source, number, f"unknown keyword {keyword!r}; expected one of {', '.join(sorted(_KEYWORDS))}"
            )
        if not value:
            raise InputFormatError(source, number, f"{keyword} without a value")
        out.setdefault(keyword, []).append((number, value))
    return out


def read_params(source: str | os.PathLike[str], text: str | None = None) -> EvalbParams:
    """The :class:`EvalbParams` of an EVALB parameter file (or of ``text``, named ``source`` in messages).

    Settings not in the file keep EVALB's built-in defaults (no deleted or equivalent labels, labeled, cut-off 40,
    ``MAX_ERROR`` 10), not ``COLLINS.prm``'s. ``DEBUG`` is ignored.

    Raises:
        InputFormatError: on an unknown keyword or a bad value (naming the file and the line), or a file that cannot
            be read (naming the file).
    """
    path = os.fspath(source)
    if text is None:
        try:
            text = read_text(path)
        except OSError as err:
            raise InputFormatError(path, None, f"cannot read the parameter file ({err.strerror or err})") from None
    values = _settings(text, path)

    def integer(key: str, default: int) -> int:
        if key not in values:
            return default
        number, value = values[key][-1]  # the last setting counts
        raw = value.split()[0]
        try:
            return int(raw)
        except ValueError:
            raise InputFormatError(path, number, f"{key} must be an integer; found {raw!r}") from None

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        out = []
        for number, value in values.get(key, []):
            parts = value.split()
            if len(parts) != 2:
                raise InputFormatError(path, number, f"{key} takes two values; found {value!r}")
            out.append((parts[0], parts[1]))
        return tuple(out)

    equivalent_labels = pairs("EQ_LABEL")
    try:
        equivalence_classes(equivalent_labels)
    except ValueError:
        # The line of the first EQ_LABEL pair whose addition breaks the classes, with the message for the pairs
        # up to it; the whole list is the last prefix tried, so the loop raises.
        for k in range(1, len(equivalent_labels) + 1):
            try:
                equivalence_classes(equivalent_labels[:k])
            except ValueError as err:
                raise InputFormatError(path, values["EQ_LABEL"][k - 1][0], str(err)) from None
        raise
    return EvalbParams(
        delete_labels=tuple(value for _, value in values.get("DELETE_LABEL", [])),
        delete_labels_for_length=tuple(value for _, value in values.get("DELETE_LABEL_FOR_LENGTH", [])),
        equivalent_labels=equivalent_labels,
        equivalent_words=pairs("EQ_WORD"),
        quote_labels=tuple(value for _, value in values.get("QUOTE_LABEL", [])),
        labeled=integer("LABELED", 1) != 0,
        cutoff_len=integer("CUTOFF_LEN", 40),
        max_errors=integer("MAX_ERROR", 10),
    )
