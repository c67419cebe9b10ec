"""Tag schemes' names and prefix codes (no NumPy: the command line checks ``--scheme`` before a task is imported).

:mod:`metametric_jax.tasks.tagging` re-exports every name here and documents the schemes.
"""

from __future__ import annotations

__all__ = ["SCHEMES", "OUTSIDE", "BEGIN", "INSIDE", "END", "SINGLE", "normalize_scheme"]

#: Prefix codes of the chunk rule (:func:`metametric_jax.tasks.tagging.chunk_boundaries`).
OUTSIDE, BEGIN, INSIDE, END, SINGLE = 0, 1, 2, 3, 4

_PREFIXES: dict[str, dict[str, int]] = {
    "IOB1": {"B": BEGIN, "I": INSIDE},
    "IOB2": {"B": BEGIN, "I": INSIDE},
    "IOE1": {"I": INSIDE, "E": END},
    "IOE2": {"I": INSIDE, "E": END},
    "IOBES": {"B": BEGIN, "I": INSIDE, "E": END, "S": SINGLE},
    "BILOU": {"B": BEGIN, "I": INSIDE, "L": END, "U": SINGLE},
}
_ALIASES = {"BIO": "IOB2", "IOB": "IOB2", "IOE": "IOE2", "BIOES": "IOBES"}

#: The canonical scheme names (aliases: ``BIO``/``IOB`` → IOB2, ``IOE`` → IOE2, ``BIOES`` → IOBES).
SCHEMES: tuple[str, ...] = tuple(_PREFIXES)


def normalize_scheme(scheme: str) -> str:
    """The canonical name of a tag scheme.

    >>> normalize_scheme("bioes")
    'IOBES'

    Raises:
        ValueError: if the scheme is unknown (the message lists the valid names).
    """
    key = scheme.strip().upper() if isinstance(scheme, str) else None
    if key in _PREFIXES:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(
        f"Unknown tag scheme {scheme!r}; expected one of {', '.join(SCHEMES)} (aliases: {', '.join(sorted(_ALIASES))})."
    )
