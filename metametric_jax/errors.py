"""Exceptions raised on malformed input files."""

from __future__ import annotations

__all__ = ["InputFormatError"]


class InputFormatError(ValueError):
    """A malformed input file: carries the file name, the 1-based line number and what was expected there.

    >>> str(InputFormatError("gold.txt", 3, "expected a tag, found ''"))
    "gold.txt:3: expected a tag, found ''"
    """

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
