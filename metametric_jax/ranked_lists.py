r"""Rankings and judgements as the ranking measures read them, and trec_eval's order of a scored run (NumPy only).

:func:`ranked_list` takes a ranking (an ordered sequence, best first; a set is refused), :func:`judgements` the
judgements of a query (``{item: grade}``, or the relevant items, each of grade 1) and :func:`rank` orders scored items
as trec_eval ranks a run. :mod:`metametric_jax.ranking` re-exports them beside its similarities; this module imports
no similarity machinery, so reading and scoring TREC files does not load it.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, ItemsView, Iterable, KeysView, Mapping, Sequence, Set, ValuesView
from typing import Any, TypeVar

import numpy as np

__all__ = ["judgements", "rank", "ranked_list"]

T = TypeVar("T", bound=Hashable)

_UNORDERED = (Set, KeysView, ValuesView, ItemsView, Mapping)


def ranked_list(x: Any, what: str = "ranking") -> list[Any]:
    """A ranking (an ordered sequence, best first) as a list.

    Raises:
        TypeError: for a set, frozenset, mapping, dict view or other unordered or non-sequence value, and for strings.

    >>> ranked_list(("b", "a"))
    ['b', 'a']
    >>> ranked_list({"a", "b"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: ranking: expected an ordered sequence of items, best first (a list or tuple); found a set, ...
    """
    if type(x) is list or type(x) is tuple:  # what most callers give: no ABC to ask
        return list(x)
    if isinstance(x, _UNORDERED):
        kind = "a set" if isinstance(x, Set) else f"a {type(x).__name__}"
        raise TypeError(
            f"{what}: expected an ordered sequence of items, best first (a list or tuple); found {kind}, whose order "
            "is arbitrary. Sort it first, e.g. with metametric_jax.tasks.ranking.rank."
        )
    if isinstance(x, np.ndarray) and x.ndim == 1:
        return x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise TypeError(
            f"{what}: expected an ordered sequence of items, best first (a list or tuple); found {type(x).__name__}."
        )
    return list(x)


def judgements(y: Any, what: str = "judgements") -> dict[Any, int]:
    """Judgements as ``{item: grade}``: a mapping ``item -> integer grade``, or the relevant items (each of grade 1).

    Raises:
        TypeError: for strings, non-collections and non-integer grades.

    >>> judgements({"d1": 2, "d2": 0})
    {'d1': 2, 'd2': 0}
    >>> judgements(["d1"])
    {'d1': 1}
    """
    if isinstance(y, Mapping):
        if all(type(grade) is int for grade in y.values()):
            return dict(y)
        out: dict[Any, int] = {}
        for item, grade in y.items():
            if not isinstance(grade, (int, np.integer)):
                raise TypeError(f"{what}: the grade of {item!r} must be an integer; found {grade!r}.")
            out[item] = int(grade)
        return out
    if isinstance(y, (str, bytes)) or not isinstance(y, Collection):
        raise TypeError(
            f"{what}: expected the relevant items (a collection) or a mapping item -> grade; found {type(y).__name__}."
        )
    return dict.fromkeys(y, 1)


def rank(scored: Mapping[T, float] | Iterable[tuple[T, float]]) -> list[T]:
    """Items in trec_eval's order: score descending, ties broken by item descending (trec_eval compares docnos).

    The order depends only on the scores and the items, never on the input order, so a set of pairs ranks the same
    in every process. Tied items must be comparable with each other.

    Raises:
        TypeError: if an entry is not an ``(item, score)`` pair, a score is not a real number, or tied items cannot
            be compared.
        ValueError: for a NaN score.

    >>> rank([("a", 0.1), ("b", 0.4), ("c", 0.2)])
    ['b', 'c', 'a']
    >>> rank({"d1": 1.0, "d3": 1.0, "d2": 1.0})  # a tie: document id descending
    ['d3', 'd2', 'd1']
    """
    if isinstance(scored, Mapping):
        items, scores = list(scored.keys()), list(scored.values())
    else:
        pairs = list(scored)
        for p in pairs:
            if not (isinstance(p, tuple) and len(p) == 2):
                raise TypeError(f"rank expects (item, score) pairs or a mapping item -> score; found {p!r}.")
        items, scores = [p[0] for p in pairs], [p[1] for p in pairs]
    values = np.asarray(scores) if scores else np.zeros(0)
    if values.ndim != 1 or values.dtype.kind not in "fiu":
        for item, s in zip(items, scores):
            if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)):
                raise TypeError(f"rank: the score of {item!r} must be a real number; found {s!r}.")
        values = np.asarray(scores, dtype=np.float64)
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(f"rank: the score of {items[int(np.flatnonzero(np.isnan(values))[0])]!r} is NaN.")
    keyed = list(zip(values.astype(np.float64).tolist(), items))
    try:
        keyed.sort(reverse=True)
    except TypeError:
        raise TypeError(
            "rank: items with equal scores must be comparable (ties are broken by item, descending)."
        ) from None
    return [item for _, item in keyed]
