"""What a file-level scorer returns: the corpus figures, the figures of each item, and warnings.

Every task's ``score_files(*, predictions=..., references=..., **options)`` returns a :class:`Report`.

>>> r = Report({"f1": 0.5}, [{"id": "doc1", "f1": 0.5}], [])
>>> r.scores["f1"], len(r.items), r.warnings
(0.5, 1, [])
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Report"]


@dataclasses.dataclass(frozen=True)
class Report:
    """The result of scoring a prediction file against a reference file.

    Attributes:
        scores: the corpus figures, as the task's ``score`` returns them (plain Python floats and ints).
        items: per-item figures (one dict per document, sentence, graph pair or query, in file order), each with an
            ``"id"`` key naming the item.
        warnings: things the user should know that did not stop scoring (one line each).
    """

    scores: dict[str, Any]
    items: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
