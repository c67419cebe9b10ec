"""Explanations of a score: which sub-structures were matched to which, with their paths and scores.

Built lazily, on request (``D.metric.explain(p, r)``): scoring never pays for it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Match", "Explanation"]


@dataclasses.dataclass(frozen=True)
class Match:
    """One aligned pair of sub-structures.

    Attributes:
        pred_path: where the predicted part sits, e.g. ``triggers[0].mention`` (``""`` for the root).
        ref_path: where the reference part sits.
        pred: the predicted part.
        ref: the reference part.
        score: its similarity φ(pred, ref).
    """

    pred_path: str
    ref_path: str
    pred: Any
    ref: Any
    score: float


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The raw similarity of a pair and every matched sub-structure below it (pre-order).

    Attributes:
        score: the raw (unnormalized) similarity φ(P, R).
        matches: the matched pairs, outermost first.
    """

    score: float
    matches: tuple[Match, ...]

    def pairs(self) -> list[tuple[str, str, float]]:
        """``(pred_path, ref_path, score)`` for every match."""
        return [(m.pred_path, m.ref_path, m.score) for m in self.matches]

    def __str__(self) -> str:
        lines = [f"score = {self.score:g}"]
        for m in self.matches:
            lines.append(f"  {m.pred_path or '<root>'} <-> {m.ref_path or '<root>'}  ({m.score:g})")
        return "\n".join(lines)


def join(path: str, part: str) -> str:
    """Append a field name or an index to a path: ``join("a", "b") == "a.b"``, ``join("a", "[0]") == "a[0]"``."""
    if part.startswith("["):
        return path + part
    return f"{path}.{part}" if path else part
