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

import dataclasses
import os
from collections.abc import Iterable

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


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file; the defaults are ``COLLINS.prm``'s.

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

    def __post_init__(self) -> None:
        equivalence_classes(self.equivalent_labels)  # refuses a relation that is not an equivalence


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
    known = {
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
    if text.startswith("\ufeff"):
        text = text[1:]
    out: dict[str, list[str]] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if line.startswith("#") or len(line) < 3:
            continue
        keyword, _, value = line.partition(" ") if " " in line.split("\t")[0] else line.partition("\t")
        value = value.strip()
        if keyword not in known:
            raise InputFormatError(
                source, number, f"unknown keyword {keyword!r}; expected one of {', '.join(sorted(known))}"
            )
        if not value:
            raise InputFormatError(source, number, f"{keyword} without a value")
        out.setdefault(keyword, []).append(value)
    return out


def read_params(source: str | os.PathLike[str], text: str | None = None) -> EvalbParams:
    """The :class:`EvalbParams` of an EVALB parameter file (or of ``text``, named ``source`` in messages).

    Settings not in the file keep EVALB's built-in defaults (no deleted or equivalent labels, labeled, cut-off 40,
    ``MAX_ERROR`` 10), not ``COLLINS.prm``'s. ``DEBUG`` is ignored.

    Raises:
        InputFormatError: on an unknown keyword or a bad value.
    """
    path = os.fspath(source)
    if text is None:
        try:
            text = read_text(path)
        except OSError as err:
            raise InputFormatError(path, None, f"cannot read the parameter file ({err.strerror or err})") from None
    values = parse_params(text, path)

    def integer(key: str, default: int) -> int:
        raw = values.get(key, [str(default)])[-1].split()[0]
        try:
            return int(raw)
        except ValueError:
            raise InputFormatError(path, None, f"{key} must be an integer; found {raw!r}") from None

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        out = []
        for v in values.get(key, []):
            parts = v.split()
            if len(parts) != 2:
                raise InputFormatError(path, None, f"{key} takes two values; found {v!r}")
            out.append((parts[0], parts[1]))
        return tuple(out)

    try:
        return EvalbParams(
            delete_labels=tuple(values.get("DELETE_LABEL", [])),
            delete_labels_for_length=tuple(values.get("DELETE_LABEL_FOR_LENGTH", [])),
            equivalent_labels=pairs("EQ_LABEL"),
            equivalent_words=pairs("EQ_WORD"),
            quote_labels=tuple(values.get("QUOTE_LABEL", [])),
            labeled=integer("LABELED", 1) != 0,
            cutoff_len=integer("CUTOFF_LEN", 40),
            max_errors=integer("MAX_ERROR", 10),
        )
    except ValueError as err:
        raise InputFormatError(path, None, str(err)) from None
