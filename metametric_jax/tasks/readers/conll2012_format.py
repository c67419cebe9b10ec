"""The CoNLL-2012 format's pieces shared by its two readers: document ids, documents, the coreference column's rule.

See :mod:`metametric_jax.tasks.readers.conll2012` for the format and the scorer's reading of the column, which
:func:`parse_column` implements; :mod:`metametric_jax.tasks.readers.conll2012_bulk` reads plain files in bulk with it.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["DocumentId", "ConllDocument", "format_id", "parse_column"]

#: A document's identifier: ``(name, part)``; ``part`` is ``None`` when the begin line has no part number.
DocumentId = tuple[str, "int | None"]

_BEGIN = re.compile(r"^#\s*begin document\s?(.*)$")
_END = re.compile(r"^#\s*end document")
_NAME_PART = re.compile(r"^\((.*)\);?\s*part\s+(\d+)$")
_NAME_ONLY = re.compile(r"^\((.*)\);?$")
_DOUBLE = re.compile(r"\((\d+\+\d)\)")
_SINGLE = re.compile(r"\((\d+)\)")
_OPEN = re.compile(r"\((\d+)")
_CLOSE = re.compile(r"(\d+)\)")
_LEFTOVER = re.compile(r"^[\d|_-]*$")
#: the column of a token in no mention
_NO_MENTION = frozenset({"-"})
#: a column of one mention: ``(12)``, ``(12`` or ``12)``
_ONE_MENTION = re.compile(r"\((\d+)\)|\((\d+)|(\d+)\)")
_EXPECTED_COLUMN = "a coreference column such as '-', '(12', '12)', '(12)' or '(3|(12)'"


@dataclasses.dataclass(frozen=True)
class ConllDocument:
    """One document of a CoNLL-2012 file.

    Attributes:
        doc_id: ``(name, part)``.
        spec: the begin line's text after ``#begin document`` as written (the reference scorer matches documents by
            this text).
        begin_line: the line number of ``#begin document``.
        end_line: the line number of ``#end document``.
        entities: the entities in the scorer's order, each a tuple of ``(start, end)`` token spans (inclusive,
            0-based) in the order the mentions are completed; a span written twice is kept twice.
        token_lines: the line number of each token.
        words: the word (fourth column) of each token, or ``None`` for a line with fewer than five columns.
        bare_numbers: line numbers whose coreference column holds an entity number outside any mention.
    """

    doc_id: DocumentId
    spec: str
    begin_line: int
    end_line: int
    entities: tuple[tuple[tuple[int, int], ...], ...]
    token_lines: tuple[int, ...]
    words: tuple[str | None, ...]
    bare_numbers: tuple[int, ...] = ()

    @property
    def n_tokens(self) -> int:
        """The number of tokens."""
        return len(self.token_lines)


def format_id(doc_id: DocumentId) -> str:
    """A document identifier as the scorer's files write it: ``(name); part 000`` or ``(name)``."""
    name, part = doc_id
    return f"({name}); part {part:03d}" if part is not None else f"({name})"


def _document_id(spec: str) -> DocumentId:
    text = spec.strip()
    m = _NAME_PART.match(text)
    if m:
        return (m.group(1), int(m.group(2)))
    m = _NAME_ONLY.match(text)
    if m:
        return (m.group(1), None)
    return (text, None)


def _take(pattern: re.Pattern[str], text: str) -> tuple[list[str], str]:
    """Take out every match of ``pattern``, the leftmost first, until none is left (the scorer's ``while s///``)."""
    found: list[str] = []
    m = pattern.search(text)
    while m is not None:
        found.append(m.group(1))
        text = text[: m.start()] + text[m.end() :]
        m = pattern.search(text)
    return found, text


def parse_column(column: str) -> tuple[list[str], list[str], list[str], str]:
    """The entity numbers of one-token mentions, openings and closings of a coreference column, and what is left.

    >>> parse_column("(3|(12)")
    (['12'], ['3'], [], '|')
    >>> parse_column("322)|249")
    ([], [], ['322'], '|249')
    """
    if column == "_":
        return [], [], [], ""
    _, rest = _take(_DOUBLE, column)
    singles, rest = _take(_SINGLE, rest)
    opens, rest = _take(_OPEN, rest)
    closes, rest = _take(_CLOSE, rest)
    return singles, opens, closes, rest


def _column_parts(column: str) -> tuple[list[str], list[str], list[str], bool] | None:
    """A coreference column's one-token mentions, openings, closings and whether bare numbers are left over.

    As :func:`parse_column` reads it (each a list of entity numbers); ``None`` where the column cannot be read.
    """
    one = _ONE_MENTION.fullmatch(column)
    if one is not None:  # the common case: what parse_column gives for it, nothing left over
        single, opening, closing = one.groups()
        return [single] if single else [], [opening] if opening else [], [closing] if closing else [], False
    parts = [_ONE_MENTION.fullmatch(part) for part in column.split("|")]
    if all(parts):  # such parts joined with '|' (the '|' left between them keeps each match in its part)
        groups = [part.groups() for part in parts if part is not None]
        return [g[0] for g in groups if g[0]], [g[1] for g in groups if g[1]], [g[2] for g in groups if g[2]], False
    singles, opens, closes, rest = parse_column(column)
    recognized = singles or opens or closes or column in ("-", "_") or rest.strip("|-_") or _DOUBLE.search(column)
    if not _LEFTOVER.match(rest) or not recognized:
        return None
    return singles, opens, closes, any(c.isdigit() for c in rest)
