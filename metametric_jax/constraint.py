"""Matching constraints: which alignments between predicted and reference items are allowed.

Four constraints, two spellings each:

=========  =======  ==========================================================================
arrow      ratio    meaning
=========  =======  ==========================================================================
``<->``    ``1:1``  partial bijection (default)
``->``     ``1:*``  each predicted item aligned to at most one reference item
``<-``     ``*:1``  each reference item aligned to at most one predicted item
``~``      ``*:*``  any alignment (every pair counts)
=========  =======  ==========================================================================

On ``a = [1, 2, 2]`` (predicted) and ``b = [1, 1, 1, 2]`` (reference) with a discrete inner similarity the raw
overlaps are 2, 3, 4 and 5 respectively.

Note:
    The original ``metametric`` package maps ``1:*`` and ``*:1`` the other way round from its own documentation.
    This package follows the documentation: ``->`` and ``1:*`` mean "each *predicted* item to at most one".
"""

from __future__ import annotations

import enum

__all__ = ["Constraint", "parse_constraint", "CONSTRAINT_SPELLINGS"]


class Constraint(enum.Enum):
    """A matching constraint between a predicted collection (rows) and a reference collection (columns)."""

    ONE_TO_ONE = "<->"
    ONE_TO_MANY = "->"
    MANY_TO_ONE = "<-"
    MANY_TO_MANY = "~"

    @property
    def ratio(self) -> str:
        """The ``a:b`` spelling of this constraint."""
        return _RATIO[self]

    def __str__(self) -> str:
        return self.value


_RATIO = {
    Constraint.ONE_TO_ONE: "1:1",
    Constraint.ONE_TO_MANY: "1:*",
    Constraint.MANY_TO_ONE: "*:1",
    Constraint.MANY_TO_MANY: "*:*",
}

CONSTRAINT_SPELLINGS: dict[str, Constraint] = {}
for _c in Constraint:
    CONSTRAINT_SPELLINGS[_c.value] = _c
    CONSTRAINT_SPELLINGS[_RATIO[_c]] = _c


def parse_constraint(spec: str | Constraint) -> Constraint:
    """Parse a constraint spelling.

    Args:
        spec: a :class:`Constraint` or one of ``<->``, ``1:1``, ``->``, ``1:*``, ``<-``, ``*:1``, ``~``, ``*:*``.

    Returns:
        The constraint.

    Raises:
        ValueError: on an unknown spelling; the message lists the valid ones.

    >>> parse_constraint("1:*") is parse_constraint("->")
    True
    """
    if isinstance(spec, Constraint):
        return spec
    if isinstance(spec, str):
        key = spec.strip()
        if key in CONSTRAINT_SPELLINGS:
            return CONSTRAINT_SPELLINGS[key]
    valid = ", ".join(repr(s) for s in CONSTRAINT_SPELLINGS)
    raise ValueError(f"Unknown matching constraint {spec!r}; expected one of {valid}.")
