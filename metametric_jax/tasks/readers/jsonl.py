r"""JSON Lines files: one JSON value per line (https://jsonlines.org), with line numbers for messages.

:func:`read_jsonl` returns ``(line number, value)`` for every non-blank line. A UTF-8 byte-order mark at the start,
CRLF line endings and blank lines (including trailing ones) are accepted. A line that is not valid JSON, or whose
value is not of the expected kind, is an :class:`~metametric_jax.errors.InputFormatError` naming the file, the line,
what was expected and what was found. :func:`require` checks one key of a JSON object the same way, so a task's
schema reader reports every problem in one format.

Example:
    >>> parse_jsonl('{"id": "a"}\r\n\n{"id": "b"}\n', "docs.jsonl")
    [(1, {'id': 'a'}), (3, {'id': 'b'})]
    >>> parse_jsonl('{"id": "a"}\n{"id": }\n', "docs.jsonl")
    Traceback (most recent call last):
    ...
    metametric_jax.errors.InputFormatError: docs.jsonl:2: expected a JSON object (one per line), found invalid JSON: Expecting value at column 8: '{"id": }'
"""  # noqa: E501

from __future__ import annotations

import json
import os
from typing import Any

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.text import read_text

__all__ = ["parse_jsonl", "read_jsonl", "require", "describe"]

_KINDS: dict[type, str] = {dict: "a JSON object", list: "a JSON array", str: "a string", int: "an integer"}


def describe(value: Any) -> str:
    """A short description of a JSON value for messages (``"the string 'x'"``, ``"an array"``, ``"null"``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' * (len(value) != 1)}"
    return "an object"


def _snippet(line: str) -> str:
    return repr(line if len(line) <= 60 else line[:57] + "...")


def parse_jsonl(text: str, path: str = "<string>", *, kind: type = dict) -> list[tuple[int, Any]]:
    r"""The values of a JSON Lines text, each with its 1-based line number; blank lines are skipped.

    Args:
        text: the file's text (a leading byte-order mark is removed; ``\r\n`` and ``\n`` both end a line).
        path: the file name used in messages.
        kind: the JSON type every line must hold (``dict`` for objects, ``str`` for strings, ``object`` for any).

    Raises:
        InputFormatError: a line is not valid JSON or not of the expected kind.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    expected = _KINDS.get(kind, "a JSON value")
    out: list[tuple[int, Any]] = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFormatError(
                path,
                number,
                f"expected {expected} (one per line), found invalid JSON: {err.msg} at column {err.colno}: "
                f"{_snippet(line)}",
            ) from None
        if kind is not object and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputFormatError(path, number, f"expected {expected} (one per line), found {describe(value)}")
        out.append((number, value))
    return out


def read_jsonl(path: str | os.PathLike[str], *, kind: type = dict) -> list[tuple[int, Any]]:
    """:func:`parse_jsonl` of a UTF-8 file.

    Raises:
        InputFormatError: the file is not UTF-8, or a line is not valid JSON of the expected kind.
    """
    name = os.fspath(path)
    return parse_jsonl(read_text(name), name, kind=kind)


def require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str, line: int, where: str) -> Any:
    """``obj[key]`` checked to be of JSON type ``kind`` (``int`` excludes booleans).

    Args:
        obj: a JSON object.
        key: the key that must be present.
        kind: the allowed Python type(s) of the value.
        path: the file, for messages.
        line: the line, for messages.
        where: what ``obj`` is, for messages (``"relation 2 of the document"``).

    Raises:
        InputFormatError: the key is missing or its value has another type.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = " or ".join(_KINDS.get(k, k.__name__) for k in kinds)
    if key not in obj:
        present = ", ".join(repr(k) for k in obj) or "none"
        raise InputFormatError(path, line, f"{where}: expected the key {key!r} ({names}), found keys {present}")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise InputFormatError(path, line, f"{where}: expected {key!r} to be {names}, found {describe(value)}")
    return value
