r"""Coreference metrics (MUC, B³, CEAF-m, CEAF-e, BLANC, LEA, CoNLL) as one JAX accumulator suite.

A document's coreference annotation is a partition of its mentions into entities. Every metric here is a function
of the key × response *contingency matrix* of a document,

.. math::

    n_{ij} = |K_i \cap R_j|, \qquad a_i = |K_i|, \qquad b_j = |R_j|,

computed once per document with NumPy (CEAF's optimal alignment with :func:`scipy.optimize.linear_sum_assignment`).
Mentions are compared by exact span, as in the CoNLL-2012 reference scorer v8.01 (Pradhan et al., "Scoring
Coreference Partitions of Predicted Mentions: A Reference Implementation", ACL 2014); a key mention missing from the
response and a response mention missing from the key ("twinless" mentions) are handled as the scorer does:

* MUC (Vilain et al., 1995): :math:`R = \sum_{ij} (n_{ij} - 1)^+ / \sum_i (a_i - 1)`, and the same numerator over
  :math:`\sum_j (b_j - 1)` for precision (a missing mention is its own part of the key entity).
* B³ (Bagga and Baldwin, 1998): :math:`R = \sum_{ij} n_{ij}^2 / a_i \,/\, \sum_i a_i`,
  :math:`P = \sum_{ij} n_{ij}^2 / b_j \,/\, \sum_j b_j`.
* CEAF (Luo, 2005): the one-to-one alignment :math:`g^*` maximizing :math:`\sum \phi(K_i, R_{g(i)})`, with
  :math:`\phi_3 = n_{ij}` (CEAF-m, denominators :math:`\sum a_i`, :math:`\sum b_j`) or
  :math:`\phi_4 = 2 n_{ij} / (a_i + b_j)` (CEAF-e, denominators the numbers of key and response entities).
* BLANC (Recasens and Hovy, 2011; Luo et al., 2014 for predicted mentions): coreference links
  :math:`C_k, C_r` and non-coreference links :math:`N_k, N_r`,

  .. math::

      |C_k \cap C_r| = \sum_{ij} \binom{n_{ij}}{2}, \qquad
      |N_k \cap N_r| = \binom{S}{2} - \sum_i \binom{n_{i\cdot}}{2} - \sum_j \binom{n_{\cdot j}}{2}
      + \sum_{ij} \binom{n_{ij}}{2},

  with :math:`S = \sum_{ij} n_{ij}`; BLANC averages the link-wise recall, precision and F1 of the two kinds, and
  uses one kind only when the key (of the whole corpus) has no link of the other kind.
* LEA (Moosavi and Strube, "Which Coreference Evaluation Metric Do You Trust?", ACL 2016):

  .. math::

      R = \frac{\sum_i a_i \sum_j \mathrm{link}(n_{ij}) / \mathrm{link}(a_i)}{\sum_i a_i}, \qquad
      \mathrm{link}(n) = \frac{n (n - 1)}{2},

  where a singleton key entity counts as resolved when its mention is a singleton response entity; precision swaps
  the roles of key and response.
* CoNLL = (F1(MUC) + F1(B³) + F1(CEAF-e)) / 3 (Pradhan et al., 2012).

Corpus figures are micro averages, like the scorer's: numerators and denominators are summed over documents and
divided at the end (:meth:`CorefMetrics.compute`); the per-document (macro) means are the members' ``macro_*`` figures.

Duplicate mentions: a span repeated in the response is kept once, at its first occurrence (entities in order, then
mentions in order), and entities left empty are dropped, as scorer v8.01 does for spans that are key mentions; the
scorer keeps repeated spans that are *not* key mentions, counting them twice in entity sizes, an artefact we do not
reproduce. A span repeated in the key is likewise kept once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import linear_sum_assignment

from metametric_jax.accumulate import stats_metric
from metametric_jax.normalizer import Normalizer, safe_divide
from metametric_jax.suite import Suite, make_suite

__all__ = [
    "Mention",
    "Entity",
    "CorefDocument",
    "Contingency",
    "contingency",
    "document_counts",
    "coref_batch_stats",
    "CorefMetrics",
    "coref_scores",
    "host_compute",
    "METRICS",
    "COUNT_NAMES",
    "REFERENCE_TOTAL",
]

#: The metrics of :func:`coref_scores`, in output order (``conll`` follows them).
METRICS: tuple[str, ...] = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "mentions")


# ---------------------------------------------------------------------------------------------------------- structures
@dataclasses.dataclass(frozen=True, order=True)
class Mention:
    """A mention: the token span ``start..end`` (both inclusive, 0-based) within its document.

    Attributes:
        start: index of the first token.
        end: index of the last token (``end >= start``).
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        for field in ("start", "end"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"Mention.{field} must be an int token index; found {type(v).__name__} {v!r}.")
        if self.start < 0 or self.end < self.start:
            raise ValueError(
                f"A mention is a span start..end with 0 <= start <= end (inclusive); found ({self.start}, {self.end})."
            )

    @classmethod
    def of(cls, value: Mention | int | tuple[int, int] | Sequence[int]) -> Mention:
        """A mention from a ``Mention``, a token index ``i`` (the span ``(i, i)``) or a ``(start, end)`` pair."""
        if isinstance(value, Mention):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return cls(int(value), int(value))
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return cls(int(value[0]), int(value[1]))
        raise TypeError(
            f"Expected a mention: a Mention, a token index (int) or a (start, end) pair; found {type(value).__name__} "
            f"{value!r}."
        )


@dataclasses.dataclass(frozen=True)
class Entity:
    """An entity (a coreference cluster): its mentions, in document order.

    Attributes:
        mentions: one or more mentions.
    """

    mentions: tuple[Mention, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.mentions, tuple):
            object.__setattr__(self, "mentions", tuple(self.mentions))
        if not self.mentions:
            raise ValueError("An entity needs at least one mention; found an empty entity.")
        for m in self.mentions:
            if not isinstance(m, Mention):
                raise TypeError(f"Entity.mentions must be Mention objects; found {type(m).__name__} {m!r}.")

    @classmethod
    def of(cls, mentions: Entity | Iterable[Mention | int | tuple[int, int]]) -> Entity:
        """An entity from mentions given as ``Mention`` objects, token indices or ``(start, end)`` pairs."""
        if isinstance(mentions, Entity):
            return mentions
        return cls(tuple(Mention.of(m) for m in mentions))

    def __len__(self) -> int:
        return len(self.mentions)


@dataclasses.dataclass(frozen=True)
class CorefDocument:
    """A document's coreference partition: its entities (name and part identify it; they are not scored).

    Attributes:
        entities: the entities, each a non-empty tuple of mentions.
        name: the document's name (CoNLL-2012 ``#begin document (name); part NNN``).
        part: the document's part number, or ``None``.
    """

    entities: tuple[Entity, ...]
    name: str = ""
    part: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.entities, tuple):
            object.__setattr__(self, "entities", tuple(self.entities))
        for e in self.entities:
            if not isinstance(e, Entity):
                raise TypeError(
                    f"CorefDocument.entities must be Entity objects; found {type(e).__name__} {e!r} "
                    "(use CorefDocument.from_clusters for lists of mentions)."
                )

    @classmethod
    def from_clusters(
        cls,
        clusters: Iterable[Iterable[Mention | int | tuple[int, int]]],
        name: str = "",
        part: int | None = None,
    ) -> CorefDocument:
        """A document from clusters of mentions (``Mention`` objects, token indices or ``(start, end)`` pairs).

        >>> doc = CorefDocument.from_clusters([[(0, 1), (5, 5)], [3]])
        >>> [len(e) for e in doc.entities], doc.entities[1].mentions[0]
        ([2, 1], Mention(start=3, end=3))
        """
        return cls(tuple(Entity.of(c) for c in clusters), name=name, part=part)

    @classmethod
    def of(cls, value: CorefDocument | Iterable[Iterable[Any]]) -> CorefDocument:
        """A ``CorefDocument`` passed through, or one built by :meth:`from_clusters`."""
        if isinstance(value, CorefDocument):
            return value
        try:
            return cls.from_clusters(value)
        except TypeError as err:
            raise TypeError(
                f"Expected a CorefDocument or a list of clusters (lists of mentions); found {type(value).__name__} "
                f"({err})."
            ) from None

    @property
    def key(self) -> tuple[str, int | None]:
        """The identifier ``(name, part)``."""
        return (self.name, self.part)

    def mentions(self) -> list[Mention]:
        """All mentions, entity by entity (repeated spans included)."""
        return [m for e in self.entities for m in e.mentions]

    def clusters(self) -> list[list[tuple[int, int]]]:
        """The entities as lists of ``(start, end)`` pairs."""
        return [[(m.start, m.end) for m in e.mentions] for e in self.entities]

    def repeated_mentions(self) -> list[Mention]:
        """Spans that occur more than once (each listed once per extra occurrence)."""
        seen: set[Mention] = set()
        out = []
        for m in self.mentions():
            if m in seen:
                out.append(m)
            seen.add(m)
        return out


# --------------------------------------------------------------------------------------------------------- contingency
@dataclasses.dataclass(frozen=True)
class Contingency:
    """The key × response contingency matrix of one document, with the entity sizes.

    Attributes:
        counts: int array ``(K, R)``; ``counts[i, j]`` is the number of mentions shared by key entity ``i`` and response
            entity ``j`` (same span).
        key_sizes: int array ``(K,)``, the number of (distinct) mentions of each key entity.
        response_sizes: int array ``(R,)``, the same for the response, twinless mentions included.
    """

    counts: np.ndarray
    key_sizes: np.ndarray
    response_sizes: np.ndarray


def _entity_codes(doc: CorefDocument) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct span codes (sorted), their entity labels and the entity sizes; a repeated span keeps its first entity.

    Entities left without mentions are dropped and the others renumbered in order.
    """
    rows = [(m.start, m.end, k) for k, e in enumerate(doc.entities) for m in e.mentions]
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    arr = np.asarray(rows, dtype=np.int64)
    codes = (arr[:, 0] << 32) | arr[:, 1]
    unique, first = np.unique(codes, return_index=True)
    labels = arr[first, 2]
    sizes = np.bincount(labels, minlength=len(doc.entities))
    if not sizes.all():
        renumber = np.cumsum(sizes > 0) - 1
        labels, sizes = renumber[labels], sizes[sizes > 0]
    return unique, labels, sizes


def contingency(key: CorefDocument, response: CorefDocument) -> Contingency:
    """The contingency matrix of a key and a response partition of the same document (repeated spans kept once).

    >>> c = contingency(CorefDocument.from_clusters([[0, 1, 2]]), CorefDocument.from_clusters([[0, 1], [2, 7]]))
    >>> c.counts.tolist(), c.key_sizes.tolist(), c.response_sizes.tolist()
    ([[2, 1]], [3], [2, 2])
    """
    k_codes, k_labels, k_sizes = _entity_codes(key)
    r_codes, r_labels, r_sizes = _entity_codes(response)
    n_k, n_r = len(k_sizes), len(r_sizes)
    if n_k == 0 or n_r == 0:
        return Contingency(np.zeros((n_k, n_r), dtype=np.int64), k_sizes, r_sizes)
    _, ki, ri = np.intersect1d(k_codes, r_codes, assume_unique=True, return_indices=True)
    flat = np.bincount(k_labels[ki] * n_r + r_labels[ri], minlength=n_k * n_r)
    return Contingency(flat.reshape(n_k, n_r), k_sizes, r_sizes)


def _links(n: np.ndarray) -> np.ndarray:
    return n * (n - 1) // 2


def _ceaf_total(similarity: np.ndarray, counts: np.ndarray) -> float:
    """The maximal total similarity of a one-to-one alignment (rows and columns without any overlap dropped)."""
    rows = np.flatnonzero(counts.any(axis=1))
    if rows.size == 0:
        return 0.0
    cols = np.flatnonzero(counts.any(axis=0))
    sub = similarity[np.ix_(rows, cols)]
    if sub.shape == (1, 1):
        return float(sub[0, 0])
    r, c = linear_sum_assignment(sub, maximize=True)
    return float(sub[r, c].sum())


def _lea_side(counts: np.ndarray, sizes: np.ndarray, other_sizes: np.ndarray) -> float:
    """LEA numerator of one side: ``sum_i |e_i| * resolution(e_i)`` (rows of ``counts`` are this side's entities)."""
    if sizes.size == 0:
        return 0.0
    multi = sizes > 1
    total = 0.0
    if multi.any():
        common = _links(counts[multi]).sum(axis=1)
        total += float((sizes[multi] * common / _links(sizes[multi])).sum())
    single = ~multi
    if single.any() and other_sizes.size:
        resolved = (counts[single] * (other_sizes == 1)[None, :]).sum(axis=1)
        total += float(resolved.sum())
    return total


#: Statistics per document: (recall numerator, recall denominator, precision numerator, precision denominator).
COUNT_NAMES: tuple[str, ...] = (
    "muc",
    "bcub",
    "ceafm",
    "ceafe",
    "lea",
    "mentions",
    "blanc_coref",
    "blanc_noncoref",
)


def document_counts(table: Contingency) -> dict[str, tuple[float, float, float, float]]:
    """Each metric's (recall numerator, recall denominator, precision numerator, precision denominator) of a document.

    BLANC is reported as two link kinds, ``blanc_coref`` (coreference links) and ``blanc_noncoref``.
    """
    n, a, b = table.counts, table.key_sizes, table.response_sizes
    n_key, n_resp = int(a.sum()), int(b.sum())
    shared = int(n.sum())
    nonzero = int(np.count_nonzero(n))
    out: dict[str, tuple[float, float, float, float]] = {}

    muc = float(shared - nonzero)
    out["muc"] = (muc, float(n_key - a.size), muc, float(n_resp - b.size))

    if shared:
        sq = (n * n).astype(np.float64)
        out["bcub"] = (float((sq / a[:, None]).sum()), float(n_key), float((sq / b[None, :]).sum()), float(n_resp))
        ceafm = _ceaf_total(n.astype(np.float64), n)
        ceafe = _ceaf_total(2.0 * n / (a[:, None] + b[None, :]), n)
    else:
        out["bcub"] = (0.0, float(n_key), 0.0, float(n_resp))
        ceafm = ceafe = 0.0
    out["ceafm"] = (ceafm, float(n_key), ceafm, float(n_resp))
    out["ceafe"] = (ceafe, float(a.size), ceafe, float(b.size))
    out["lea"] = (_lea_side(n, a, b), float(n_key), _lea_side(n.T, b, a), float(n_resp))
    out["mentions"] = (float(shared), float(n_key), float(shared), float(n_resp))

    same_both = int(_links(n).sum())
    key_coref, resp_coref = int(_links(a).sum()), int(_links(b).sum())
    key_non = n_key * (n_key - 1) // 2 - key_coref
    resp_non = n_resp * (n_resp - 1) // 2 - resp_coref
    diff_both = (
        shared * (shared - 1) // 2 - int(_links(n.sum(axis=1)).sum()) - int(_links(n.sum(axis=0)).sum()) + same_both
    )
    out["blanc_coref"] = (float(same_both), float(key_coref), float(same_both), float(resp_coref))
    out["blanc_noncoref"] = (float(diff_both), float(key_non), float(diff_both), float(resp_non))
    return out


# ------------------------------------------------------------------------------------------------------------- members
def _reference_total(xy: Any, xx: Any, yy: Any, zd: float) -> Any:
    return yy


#: Reported by the recall members: the summed recall denominator (BLANC needs to know whether it is zero).
REFERENCE_TOTAL = Normalizer("reference_total", _reference_total)

_MEMBER_DOC = {
    "muc": "MUC (Vilain et al., 1995)",
    "bcub": "B³ (Bagga and Baldwin, 1998)",
    "ceafm": "mention-based CEAF, φ3 (Luo, 2005)",
    "ceafe": "entity-based CEAF, φ4 (Luo, 2005)",
    "lea": "LEA (Moosavi and Strube, 2016)",
    "mentions": "mention identification (exact spans)",
    "blanc_coref": "BLANC coreference links (Luo et al., 2014)",
    "blanc_noncoref": "BLANC non-coreference links (Luo et al., 2014)",
}


def _members() -> dict[str, type]:
    members: dict[str, type] = {}
    for name in COUNT_NAMES:
        members[f"{name}_recall"] = stats_metric(
            normalizer="recall",
            name=f"{name}_recall",
            zero_division=0.0,
            empty_score=0.0,
            report=[REFERENCE_TOTAL],
            doc=f"Recall of {_MEMBER_DOC[name]}: statistics (numerator, 0, denominator) per document.",
        )
        members[f"{name}_precision"] = stats_metric(
            normalizer="precision",
            name=f"{name}_precision",
            zero_division=0.0,
            empty_score=0.0,
            doc=f"Precision of {_MEMBER_DOC[name]}: statistics (numerator, denominator, 0) per document.",
        )
    return members


def coref_batch_stats(
    predictions: Sequence[CorefDocument | Iterable[Any]], references: Sequence[CorefDocument | Iterable[Any]]
) -> dict[str, np.ndarray]:
    """Every member's ``(n, 3)`` statistics in one pass (one contingency matrix per document).

    Args:
        predictions: the response documents.
        references: the key documents, aligned with ``predictions``.
    """
    stats = {
        f"{name}_{side}": np.zeros((len(references), 3)) for name in COUNT_NAMES for side in ("recall", "precision")
    }
    for i, (resp, key) in enumerate(zip(predictions, references)):
        counts = document_counts(contingency(CorefDocument.of(key), CorefDocument.of(resp)))
        for name, (nr, dr, np_, dp) in counts.items():
            stats[f"{name}_recall"][i] = (nr, 0.0, dr)
            stats[f"{name}_precision"][i] = (np_, dp, 0.0)
    return stats


# ------------------------------------------------------------------------------------------------------------- derived
def _xp(*values: Any) -> Any:
    return jnp if any(isinstance(v, jax.Array) for v in values) else np


def _f1(r: Any, p: Any) -> Any:
    return safe_divide(2 * r * p, r + p, 0.0)


def _prf(name: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def derive(results: Mapping[str, Any]) -> dict[str, Any]:
        r = results[f"{name}_recall"]["recall"]
        p = results[f"{name}_precision"]["precision"]
        return {"recall": r, "precision": p, "f1": _f1(r, p)}

    derive.__name__ = f"{name}_prf"
    return derive


def _blanc(results: Mapping[str, Any]) -> dict[str, Any]:
    r"""BLANC from the corpus link counts, with scorer v8.01's cases for a key without one kind of link.

    .. math::

        R = \tfrac12 (R_c + R_n), \quad P = \tfrac12 (P_c + P_n), \quad F = \tfrac12 (F_c + F_n);

    only the non-coreference figures when the key has no coreference link, only the coreference figures when it has
    no non-coreference link, and 0 when it has neither.
    """
    rc, rn = results["blanc_coref_recall"], results["blanc_noncoref_recall"]
    r_c, r_n = rc["recall"], rn["recall"]
    p_c, p_n = results["blanc_coref_precision"]["precision"], results["blanc_noncoref_precision"]["precision"]
    f_c, f_n = _f1(r_c, p_c), _f1(r_n, p_n)
    xp = _xp(r_c, r_n, p_c, p_n, rc["reference_total"])
    has_c = xp.asarray(rc["reference_total"]) > 0
    has_n = xp.asarray(rn["reference_total"]) > 0

    def pick(c: Any, n: Any) -> Any:
        return xp.where(has_c & has_n, (c + n) / 2, xp.where(has_c, c, xp.where(has_n, n, 0.0)))

    return {"recall": pick(r_c, r_n), "precision": pick(p_c, p_n), "f1": pick(f_c, f_n)}


def _conll(results: Mapping[str, Any]) -> dict[str, Any]:
    return {"f1": (results["muc"]["f1"] + results["bcub"]["f1"] + results["ceafe"]["f1"]) / 3}


_DERIVED: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "muc": _prf("muc"),
    "bcub": _prf("bcub"),
    "ceafm": _prf("ceafm"),
    "ceafe": _prf("ceafe"),
    "blanc": _blanc,
    "lea": _prf("lea"),
    "mentions": _prf("mentions"),
    "conll": _conll,
}

CorefMetrics: type[Suite] = make_suite(
    "coref",
    _members(),
    _DERIVED,
    batch_stats=coref_batch_stats,
    doc=(
        "Coreference metrics of the CoNLL-2012 scorer (MUC, B³, CEAF-m, CEAF-e, BLANC) with LEA, mention "
        "identification and the CoNLL average, as one accumulator. ``CorefMetrics.from_model_output(responses, keys)`` "
        "takes :class:`CorefDocument` objects (or lists of clusters); ``compute()`` returns each member's figures and "
        "the derived ``{metric: {recall, precision, f1}}`` and ``conll: {f1}`` (micro averages)."
    ),
)


def host_compute(state: Suite) -> dict[str, dict[str, float]]:
    """The derived figures of a :data:`CorefMetrics` state, computed on the host in float64.

    ``state.compute()`` divides float32 totals on the device; this reads the compensated totals as float64 first, so
    ratios of exact counts come out to within about ``1e-14``.

    Returns:
        ``{"muc": {"recall", "precision", "f1"}, ..., "conll": {"f1"}}`` with Python floats (see :func:`coref_scores`).
    """
    if not isinstance(state, CorefMetrics):
        raise TypeError(f"host_compute expects a CorefMetrics state; found {type(state).__name__}.")
    member_results: dict[str, Any] = {}
    for name, member in state.states.items():
        sums = np.asarray(member.sums, dtype=np.float64)
        if sums.ndim != 2:
            raise ValueError(f"host_compute: the state is still stacked (shape {sums.shape}); call reduce() first.")
        xy, xx, yy = (float(sums[k, 0] + sums[k, 1]) for k in range(3))
        member_results[name] = {
            "overlap": xy,
            "recall": safe_divide(xy, yy, 0.0),
            "precision": safe_divide(xy, xx, 0.0),
            "reference_total": yy,
        }
    out: dict[str, Any] = {}
    for key, fn in _DERIVED.items():
        value = fn({**member_results, **out})
        out[key] = value
    return {m: {k: float(v) for k, v in out[m].items()} for m in (*METRICS, "conll")}


def coref_scores(
    keys: Sequence[CorefDocument | Iterable[Any]], responses: Sequence[CorefDocument | Iterable[Any]]
) -> dict[str, dict[str, float]]:
    """Corpus-level (micro) coreference scores of aligned key and response documents.

    Args:
        keys: the key (gold) documents: :class:`CorefDocument` objects or lists of clusters.
        responses: the response (system) documents, ``responses[i]`` scored against ``keys[i]``.

    Returns:
        ``{"muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "mentions": {"recall", "precision", "f1"},
        "conll": {"f1"}}`` with Python floats.

    Raises:
        ValueError: if ``keys`` and ``responses`` differ in length.

    >>> key = [[0, 1, 2], [3, 4, 5, 6]]
    >>> response = [[0, 1], [2, 3], [5, 6, 7, 8]]
    >>> s = coref_scores([key], [response])["lea"]
    >>> round(s["recall"] * 21, 9), round(s["precision"] * 3, 9)
    (5.0, 1.0)
    """
    if len(keys) != len(responses):
        raise ValueError(
            f"coref_scores needs one response per key document; found {len(keys)} keys and {len(responses)} responses."
        )
    state = CorefMetrics.from_model_output(list(responses), list(keys))
    return host_compute(state)
