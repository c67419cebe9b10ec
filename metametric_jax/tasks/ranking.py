r"""Ranking metrics: precision@k, recall@k and average precision, as JAX accumulators.

A prediction is a ranked sequence of items (best first; see :func:`rank` for ``(item, score)`` pairs) and a reference
is the collection of relevant items. With :math:`\mathrm{rel}_i = 1` if the item at rank :math:`i` is relevant (an
item repeated in the ranking counts at its first rank only) and :math:`h_k = \sum_{i \le k} \mathrm{rel}_i`,

.. math::

    \mathrm{P@}k = \frac{h_k}{k}, \qquad \mathrm{R@}k = \frac{h_k}{|R|}, \qquad
    \mathrm{AP} = \frac{1}{|R|} \sum_{i} \mathrm{P@}i \cdot \mathrm{rel}_i

(Manning, Raghavan and Schütze, *Introduction to Information Retrieval*, 2008, §8.4; ``trec_eval``'s ``P_k``,
``recall_k`` and ``map``). P@k divides by :math:`k` even when fewer than :math:`k` items are ranked (missing ranks
count as non-relevant, as in ``trec_eval``); relevant items never ranked count as misses in AP.

The standard corpus figure of each is the mean over queries: the accumulators' ``macro_*`` entries (``macro_precision``
of P@k, ``macro_recall`` of R@k and of AP — the latter is MAP). The plain entries are micro figures from totals
(:math:`\sum h_k / \sum k`, :math:`\sum h_k / \sum |R|`, :math:`\sum_q \sum_i \mathrm{P@}i\, \mathrm{rel}_i / \sum_q
|R_q|`). A query with no relevant item has recall@k and AP 0; ``trec_eval`` leaves such queries out, so drop them
(or give them weight 0) to match it.

Example (metametric's documentation): ranking ``a, b, c, d`` against ``{c, d, e}`` gives
:math:`\mathrm{AP} = (1/3 + 2/4) / 3 \approx 0.2778`.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np

from metametric_jax import dsl
from metametric_jax.accumulate import Metric, make_metric
from metametric_jax.ranking import AveragePrecision
from metametric_jax.suite import Suite, make_suite

__all__ = ["rank", "precision_at_k", "recall_at_k", "AveragePrecisionMetric", "ranking_metric", "ranking_stats"]


def rank(scored: Mapping[Hashable, float] | Iterable[tuple[Hashable, float]]) -> list[Hashable]:
    """Items sorted by decreasing score (ties keep their input order).

    >>> rank([("a", 0.1), ("b", 0.4), ("c", 0.2)])
    ['b', 'c', 'a']
    """
    pairs = list(scored.items()) if isinstance(scored, Mapping) else list(scored)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2):
            raise TypeError(f"rank expects (item, score) pairs or a mapping item -> score; found {p!r}.")
    order = sorted(range(len(pairs)), key=lambda i: -float(pairs[i][1]))
    return [pairs[i][0] for i in order]


def _check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer; found {k!r}.")
    return k


@functools.lru_cache(maxsize=None, typed=True)
def precision_at_k(k: int) -> type[Metric]:
    r"""The precision@k accumulator class: :math:`h_k / k` per query; mean over queries is ``macro_precision``.

    >>> P2 = precision_at_k(2)
    >>> float(P2.from_model_output([["a", "c", "b"]], [{"c"}]).compute()["macro_precision"])
    0.5
    """
    cls = dsl.precision_at_k(_check_k(k))
    cls.__doc__ = f"Precision@{k}: hits in the top {k} over {k} (mean over queries: ``macro_precision``)."
    return cls


@functools.lru_cache(maxsize=None, typed=True)
def recall_at_k(k: int) -> type[Metric]:
    r"""The recall@k accumulator class: :math:`h_k / |R|` per query; mean over queries is ``macro_recall``."""
    cls = dsl.recall_at_k(_check_k(k))
    cls.__doc__ = f"Recall@{k}: hits in the top {k} over the relevant items (mean over queries: ``macro_recall``)."
    return cls


AveragePrecisionMetric: type[Metric] = make_metric(
    AveragePrecision(), "recall", name="average_precision", empty_score=0.0
)
AveragePrecisionMetric.__doc__ = r"""Average precision of a ranking; the mean over queries (``macro_recall``) is MAP.

.. math::

    \mathrm{AP} = \frac{1}{|R|} \sum_i \mathrm{P@}i \cdot \mathrm{rel}_i

>>> float(AveragePrecisionMetric.score(["a", "b", "c", "d"], {"c", "d", "e"}))  # (1/3 + 2/4) / 3
0.2777777777777778
"""


def ranking_stats(
    predictions: Sequence[Sequence[Hashable]], references: Sequence[Iterable[Hashable]], ks: Sequence[int]
) -> dict[str, np.ndarray]:
    """Per-query statistics of every member of :func:`ranking_metric` in one pass.

    Returns:
        ``{"precision@k": (n, 3), "recall@k": (n, 3), ..., "ap": (n, 3)}``.
    """
    n = len(predictions)
    kmax = max(ks)
    hits = np.zeros((n, kmax), dtype=np.float64)
    n_rel = np.zeros(n, dtype=np.float64)
    ap = np.zeros((n, 3), dtype=np.float64)
    for q, (p, r) in enumerate(zip(predictions, references)):
        if isinstance(p, (str, bytes)) or isinstance(r, (str, bytes)):
            raise TypeError(f"query {q}: a ranking and a collection of relevant items are expected, not strings.")
        relevant = set(r)
        seen: set[Hashable] = set()
        rel = np.zeros(len(p), dtype=np.float64)
        for i, x in enumerate(p):
            if x in relevant and x not in seen:
                rel[i] = 1.0
            seen.add(x)
        cum = np.cumsum(rel)
        top = cum[:kmax]
        hits[q, : top.size] = top
        if top.size < kmax:
            hits[q, top.size :] = top[-1] if top.size else 0.0
        n_rel[q] = len(relevant)
        total = float((cum / np.arange(1, rel.size + 1) * rel).sum()) if rel.size else 0.0
        ap[q] = (total, cum[-1] if cum.size else 0.0, n_rel[q])
    out: dict[str, np.ndarray] = {}
    for k in ks:
        h = hits[:, k - 1]
        out[f"precision@{k}"] = np.stack([h, np.full(n, float(k)), n_rel], 1)
        out[f"recall@{k}"] = np.stack([h, np.full(n, float(k)), n_rel], 1)
    out["ap"] = ap
    return out


@functools.cache
def _ranking_suite(ks: tuple[int, ...]) -> type[Suite]:
    members: dict[str, type[Metric]] = {}
    for k in ks:
        members[f"precision@{k}"] = precision_at_k(k)
        members[f"recall@{k}"] = recall_at_k(k)
    members["ap"] = AveragePrecisionMetric

    def mean_figures(results: Mapping[str, Any]) -> dict[str, Any]:
        out = {f"P@{k}": results[f"precision@{k}"]["macro_precision"] for k in ks}
        out.update({f"R@{k}": results[f"recall@{k}"]["macro_recall"] for k in ks})
        out["MAP"] = jnp.asarray(results["ap"]["macro_recall"])
        return out

    def batch(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
        return ranking_stats(predictions, references, ks)

    return make_suite(
        "ranking_" + "_".join(map(str, ks)),
        members,
        {"mean": mean_figures},
        batch_stats=batch,
        doc=(
            f"Ranking report for k in {list(ks)}: members ``precision@k``, ``recall@k`` and ``ap`` (each an "
            "accumulator with micro and ``macro_`` figures); ``compute()['mean']`` has the usual per-query means "
            "``P@k``, ``R@k`` and ``MAP``."
        ),
    )


def ranking_metric(ks: Sequence[int] = (1, 5, 10)) -> type[Suite]:
    """A suite of precision@k and recall@k for each ``k`` in ``ks`` and average precision, computed in one pass.

    ``compute()`` returns the members' results and ``"mean": {"P@k", "R@k", "MAP"}`` (means over queries).

    >>> S = ranking_metric((1, 2))
    >>> out = S.from_model_output([["a", "b", "c", "d"]], [{"c", "d", "e"}]).compute()
    >>> round(float(out["mean"]["MAP"]), 4), float(out["mean"]["P@2"])
    (0.2778, 0.0)

    Raises:
        ValueError: if ``ks`` is empty or holds a non-positive or repeated ``k``.
    """
    ks = tuple(_check_k(k) for k in ks)
    if not ks:
        raise ValueError("ranking_metric needs at least one cut-off k.")
    if len(set(ks)) != len(ks):
        raise ValueError(f"ranking_metric: repeated cut-offs in {list(ks)}.")
    return _ranking_suite(ks)
