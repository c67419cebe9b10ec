r"""nervaluate's error categories of NER: each predicted entity correct, incorrect, partial or spurious, per scheme.

The categories of nervaluate (David Batista and Matthew Upson; after the SemEval-2013 task 9.1 evaluation of
Segura-Bedmar, Martínez and Herrero-Zazo 2013) under its four schemes, ``strict``, ``exact``, ``partial`` and ``type``
(nervaluate's ``ent_type``): ``correct``, ``incorrect``, ``partial``, ``missed``, ``spurious``, with ``possible``
(correct + incorrect + partial + missed), ``actual`` (correct + incorrect + partial + spurious) and nervaluate's
precision, recall and F1 (partial matches count half under ``partial`` and ``type``).

The categories follow nervaluate 1.x's matching, sentence by sentence: each predicted entity, in order, takes the
first reference entity it matches (strict: same bounds and type; exact and partial: same bounds; type: the same type
and an overlap, the closest bounds first) or else the first one it overlaps that no earlier prediction took, as
``incorrect`` (``partial`` under the partial scheme; under the type scheme, an overlap of another type), else it is
``spurious``; reference entities no prediction took are ``missed``. An overlap is at least 1% of the reference
entity's tokens, nervaluate's default. The ``errors`` of ``metametric-jax analyze ner``
(:mod:`metametric_jax.tasks.ner_analysis`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metametric_jax._ratios import f_measure

__all__ = ["SCHEMES", "CATEGORIES", "scheme_counts"]

#: nervaluate's schemes (``type`` is its ``ent_type``)
SCHEMES = ("strict", "exact", "partial", "type")
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious")

#: an entity of a sentence: ``(start, end, label)``
Entity = tuple[int, int, int]


def _overlaps(pred: Entity, true: Entity) -> bool:
    """Whether ``pred`` covers at least 1% of ``true``'s tokens (nervaluate's default minimum overlap)."""
    overlap = min(pred[1], true[1]) - max(pred[0], true[0])
    return overlap > 0 and 100 * overlap >= true[1] - true[0]


def _categorize(scheme: str, gold: list[Entity], pred: list[Entity]) -> list[int]:
    """``[correct, incorrect, partial, missed, spurious]`` of one sentence under one scheme (see the module)."""
    counts = [0, 0, 0, 0, 0]
    taken: set[int] = set()
    for p in pred:
        hit: int | None = None
        other: int | None = None
        best = -1
        for j, t in enumerate(gold):
            if j in taken:
                continue
            if scheme == "type":
                if _overlaps(p, t):
                    distance = abs(p[0] - t[0]) + abs(p[1] - t[1])
                    if p[2] == t[2]:
                        if hit is None or distance < best:
                            hit, best = j, distance
                    elif other is None:
                        other = j
                continue
            same = p[0] == t[0] and p[1] == t[1] and (scheme != "strict" or p[2] == t[2])
            if same:
                hit = j
                break
            if other is None and _overlaps(p, t):
                other = j
        if hit is not None:
            counts[0] += 1
            taken.add(hit)
        elif other is not None:
            counts[2 if scheme == "partial" else 1] += 1
            taken.add(other)
        else:
            counts[4] += 1
    counts[3] = len(gold) - len(taken)
    return counts


def _error_entry(scheme: str, counts: Sequence[int]) -> dict[str, Any]:
    correct, incorrect, partial, missed, spurious = (int(c) for c in counts)
    actual = correct + incorrect + partial + spurious
    possible = correct + incorrect + partial + missed
    credit = correct + 0.5 * partial if scheme in ("partial", "type") else correct
    precision = credit / actual if actual > 0 else 0.0
    recall = credit / possible if possible > 0 else 0.0
    out: dict[str, Any] = dict(zip(CATEGORIES, (correct, incorrect, partial, missed, spurious)))
    out.update(possible=possible, actual=actual, precision=float(precision), recall=float(recall))
    out["f1"] = f_measure(precision, recall)
    return out


def scheme_counts(gold: Sequence[list[Entity]], pred: Sequence[list[Entity]]) -> dict[str, dict[str, Any]]:
    """The categories and figures of one system per scheme: ``{scheme: {category: count, ...}}``.

    Args:
        gold: each sentence's reference entities, in order of start.
        pred: each sentence's predicted entities, in order of start.

    >>> scheme_counts([[(0, 2, 0)]], [[(0, 1, 0)]])["partial"]["partial"]
    1
    """
    out = {}
    for scheme in SCHEMES:
        total = [0, 0, 0, 0, 0]
        for g, p in zip(gold, pred):
            if g == p:  # every predicted entity takes its twin, whatever the scheme
                total[0] += len(g)
            elif g or p:
                for j, c in enumerate(_categorize(scheme, g, p)):
                    total[j] += c
        out[scheme] = _error_entry(scheme, total)
    return out
