r"""Per-document coreference statistics as the CoNLL-2012 reference scorer v8.01 computes them.

Each metric of a document is four numbers, the scorer's own: recall numerator and denominator, precision numerator and
denominator (:func:`document_counts`, :func:`batch_counts` for many documents); a corpus sums them (micro average) and
:func:`figures` divides. Most documents are scored from their key × response contingency matrix (:func:`contingency`);
a document with a span repeated in the key, or a repeated response span that is not a key mention, is scored from the
scorer's chains of mention ids, where such a span counts once per occurrence in its entities' sizes (see
:mod:`metametric_jax.tasks.coref`). CEAF's alignments are solved in :mod:`~metametric_jax.tasks.coref_alignment`, and
the figures read out in :mod:`~metametric_jax.tasks.coref_readout`; their public names are importable from here too.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from metametric_jax.tasks.coref_alignment import (
    _alignments,
    _batch_alignments,
    _np_sum,
    _sparse_alignments,
    best_alignment,
    max_assignment,
)
from metametric_jax.tasks.coref_readout import (
    COUNT_NAMES,
    METRICS,
    Counts,
    count_rows,
    figures,
    readout,
    sum_counts,
    unpack_totals,
)

#: a :class:`metametric_jax.tasks.coref.CorefDocument` (entities of mentions); typed loosely so that this module,
#: which :mod:`~metametric_jax.tasks.coref` imports, does not import it back
CorefDocument = Any
#: a :class:`metametric_jax.tasks.coref.Mention`
Mention = Any

__all__ = [
    "Contingency",
    "contingency",
    "document_counts",
    "figures",
    "sum_counts",
    "count_rows",
    "unpack_totals",
    "readout",
    "max_assignment",
    "best_alignment",
    "METRICS",
    "COUNT_NAMES",
    "Counts",
    "batch_counts",
    "batch_document_counts",
]


# --------------------------------------------------------------------------------------------------------- contingency
@dataclasses.dataclass(frozen=True)
class Contingency:
    """The key × response contingency matrix of one document, with the entity sizes.

    Attributes:
        counts: int array ``(K, R)``: the number of spans shared by key entity ``i`` and response entity ``j``.
        key_sizes: int array ``(K,)``, the number of (distinct) spans of each key entity.
        response_sizes: int array ``(R,)``, the same for the response, twinless mentions included.
    """

    counts: np.ndarray
    key_sizes: np.ndarray
    response_sizes: np.ndarray


def _spans(doc: CorefDocument) -> tuple[np.ndarray, np.ndarray, int]:
    """Every mention as a span code ``start << 32 | end`` with its entity's index, and the number of entities."""
    rows = [(m.start, m.end, k) for k, e in enumerate(doc.entities) for m in e.mentions]
    arr = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    return (arr[:, 0] << 32) | arr[:, 1], arr[:, 2], len(doc.entities)


def _entity_codes(codes: np.ndarray, labels: np.ndarray, n_entities: int) -> tuple[np.ndarray, ...]:
    """Distinct span codes (sorted), their entity labels and entity sizes; a repeated span keeps its first entity."""
    if codes.size == 0:
        return codes, labels, labels
    unique, first = np.unique(codes, return_index=True)
    labels = labels[first]
    sizes = np.bincount(labels, minlength=n_entities)
    if not sizes.all():
        renumber = np.cumsum(sizes > 0) - 1
        labels, sizes = renumber[labels], sizes[sizes > 0]
    return unique, labels, sizes


def _contingency(key: tuple[np.ndarray, np.ndarray, int], response: tuple[np.ndarray, np.ndarray, int]) -> Contingency:
    k_codes, k_labels, k_sizes = _entity_codes(*key)
    r_codes, r_labels, r_sizes = _entity_codes(*response)
    n_k, n_r = len(k_sizes), len(r_sizes)
    if n_k == 0 or n_r == 0:
        return Contingency(np.zeros((n_k, n_r), dtype=np.int64), k_sizes, r_sizes)
    _, ki, ri = np.intersect1d(k_codes, r_codes, assume_unique=True, return_indices=True)
    flat = np.bincount(k_labels[ki] * n_r + r_labels[ri], minlength=n_k * n_r)
    return Contingency(flat.reshape(n_k, n_r), k_sizes, r_sizes)


def contingency(prediction: CorefDocument, reference: CorefDocument) -> Contingency:
    """The key × response contingency matrix of a response (prediction) and a key (reference) partition of a document.

    A repeated span is kept once, at its first occurrence.

    >>> from metametric_jax.tasks.coref import CorefDocument
    >>> c = contingency(CorefDocument.from_clusters([[0, 1], [2, 7]]), CorefDocument.from_clusters([[0, 1, 2]]))
    >>> c.counts.tolist(), c.key_sizes.tolist(), c.response_sizes.tolist()
    ([[2, 1]], [3], [2, 2])
    """
    return _contingency(_spans(reference), _spans(prediction))


def _links(n: np.ndarray) -> np.ndarray:
    return n * (n - 1) // 2


def _lea_side(counts: np.ndarray, sizes: np.ndarray, other_sizes: np.ndarray) -> float:
    """LEA numerator of one side: ``sum_i |e_i| * resolution(e_i)`` (rows of ``counts`` are this side's entities)."""
    multi = sizes > 1
    total = 0.0
    if multi.any():
        total += float((sizes[multi] * _links(counts[multi]).sum(axis=1) / _links(sizes[multi])).sum())
    single = ~multi
    if single.any() and other_sizes.size:
        total += float((counts[single] * (other_sizes == 1)[None, :]).sum())
    return total


def _contingency_counts(table: Contingency, lea_only: bool = False) -> Counts:
    n, a, b = table.counts, table.key_sizes, table.response_sizes
    n_key, n_resp, shared = int(a.sum()), int(b.sum()), int(n.sum())
    out: Counts = {"lea": (_lea_side(n, a, b), float(n_key), _lea_side(n.T, b, a), float(n_resp))}
    if lea_only:
        return out
    muc = float(shared - np.count_nonzero(n))
    out["muc"] = (muc, float(n_key - a.size), muc, float(n_resp - b.size))
    if shared:
        sq = (n * n).astype(np.float64)
        out["bcub"] = (float((sq / a[:, None]).sum()), float(n_key), float((sq / b[None, :]).sum()), float(n_resp))
        ceafm, ceafe = _alignments([n.astype(np.float64), 2.0 * n / (a[:, None] + b[None, :])])
    else:
        out["bcub"] = (0.0, float(n_key), 0.0, float(n_resp))
        ceafm = ceafe = 0.0
    out["ceafm"] = (ceafm, float(n_key), ceafm, float(n_resp))
    out["ceafe"] = (ceafe, float(a.size), ceafe, float(b.size))
    out["mentions"] = (float(shared), float(n_key), float(shared), float(n_resp))
    same = int(_links(n).sum())
    key_coref, resp_coref = int(_links(a).sum()), int(_links(b).sum())
    diff = shared * (shared - 1) // 2 - int(_links(n.sum(axis=1)).sum()) - int(_links(n.sum(axis=0)).sum()) + same
    out["blanc_coref"] = (float(same), float(key_coref), float(same), float(resp_coref))
    key_non, resp_non = n_key * (n_key - 1) // 2 - key_coref, n_resp * (n_resp - 1) // 2 - resp_coref
    out["blanc_noncoref"] = (float(diff), float(key_non), float(diff), float(resp_non))
    return out


# ------------------------------------------------------------------------------------------- sparse contingency path
# A document's contingency has few nonzero entries (about 1.5 per entity); the path below works on them in Python,
# each float computed by the same operations, in the same order, as the dense rules above (so the same bits).


def _lea_sparse(sizes: list[int], links: list[int], singles: list[int] | None) -> float:
    """:func:`_lea_side` from each entity's resolved links.

    ``singles[i]`` is 1 where entity ``i`` is a singleton whose mention is a singleton of the other side; None where
    the other side has no entity.
    """
    multi = [(s * x) / (s * (s - 1) // 2) for s, x in zip(sizes, links) if s > 1]
    total = 0.0
    if multi:
        total += _np_sum(multi)
    if len(multi) < len(sizes) and singles is not None:
        total += float(sum(x for s, x in zip(sizes, singles) if s == 1))
    return total


#: a document without repeated spans: key and response entity sizes, each key span's entity, the response spans
_Front = tuple[list[int], list[int], dict[tuple[int, int], int], list[tuple[int, int]]]


def _front(key: CorefDocument, response: CorefDocument) -> _Front | None:
    """The entity sizes, the key's spans and the response's spans of a document; None if a span is repeated."""
    a = [len(e.mentions) for e in key.entities]
    b = [len(e.mentions) for e in response.entities]
    key_of = {(m.start, m.end): i for i, e in enumerate(key.entities) for m in e.mentions}
    spans = [(m.start, m.end) for e in response.entities for m in e.mentions]
    if len(key_of) != sum(a) or len(set(spans)) != len(spans):
        return None
    return a, b, key_of, spans


def _matched(front: _Front) -> Any:
    """Each response span's key entity, -1 where it is no key span: an iterator."""
    _, _, key_of, spans = front
    return map(key_of.get, spans, itertools.repeat(-1, len(spans)))


def _sparse_counts(key: CorefDocument, response: CorefDocument) -> Counts | None:
    """:func:`_contingency_counts` of a document from its contingency's nonzero entries; None if a span is repeated.

    The same floats: every sum is taken as the dense rules take it.
    """
    front = _front(key, response)
    if front is None:
        return None
    a, b, _, spans = front
    n_k, n_r = len(a), len(b)
    matched = np.array(list(_matched(front)), dtype=np.int64).reshape(-1)
    hit = matched >= 0
    if not hit.any():
        return _entry_counts(front, [], [], [], None)
    cells = matched * n_r + np.repeat(np.arange(n_r), b)
    dense = np.bincount(cells[hit], minlength=n_k * n_r)
    where = np.flatnonzero(dense)
    rows, cols = np.divmod(where, n_r)
    return _entry_counts(front, rows.tolist(), cols.tolist(), dense[where].tolist(), dense)


def _entry_counts(
    front: _Front, rows: list[int], cols: list[int], counts: list[int], dense: Any, ceaf: list[float] | None = None
) -> Counts:
    """The statistics of a document from its contingency's nonzero entries.

    ``counts`` are at ``(rows, cols)``, in row-major order; ``dense`` is the contingency (int64, flat; None where no
    span is shared); ``ceaf``: CEAF-m's and CEAF-e's alignment totals where they are known already.
    """
    a, b, key_of, spans = front
    n_k, n_r, n_key, n_resp = len(a), len(b), len(key_of), len(spans)
    shared = sum(counts)
    out: Counts = {}
    key_links, resp_links = [0] * n_k, [0] * n_r
    key_single, resp_single = [0] * n_k, [0] * n_r
    if shared:
        same = 0
        key_shared, resp_shared = [0] * n_k, [0] * n_r
        for i, j, x in zip(rows, cols, counts):
            link = x * (x - 1) // 2
            same += link
            key_links[i] += link
            resp_links[j] += link
            key_shared[i] += x
            resp_shared[j] += x
            if a[i] == 1 and b[j] == 1:
                key_single[i] = resp_single[j] = 1
        sq = (dense * dense).astype(np.float64).reshape(n_k, n_r)
        a_arr, b_arr = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
        out["bcub"] = (
            float((sq / a_arr[:, None]).sum()),
            float(n_key),
            float((sq / b_arr[None, :]).sum()),
            float(n_resp),
        )
        if ceaf is None:
            ceaf = _sparse_alignments(
                rows,
                cols,
                [[float(x) for x in counts], [2.0 * x / (a[i] + b[j]) for i, j, x in zip(rows, cols, counts)]],
                n_k,
                n_r,
                integral=(True, False),
            )
        ceafm, ceafe = ceaf
        muc = float(shared - len(counts))
        diff = (
            shared * (shared - 1) // 2
            - sum(x * (x - 1) // 2 for x in key_shared)
            - sum(x * (x - 1) // 2 for x in resp_shared)
            + same
        )
    else:
        out["bcub"] = (0.0, float(n_key), 0.0, float(n_resp))
        ceafm = ceafe = muc = 0.0
        same = diff = 0
    out["lea"] = (
        _lea_sparse(a, key_links, key_single if n_r else None),
        float(n_key),
        _lea_sparse(b, resp_links, resp_single if n_k else None),
        float(n_resp),
    )
    out["muc"] = (muc, float(n_key - n_k), muc, float(n_resp - n_r))
    out["ceafm"] = (ceafm, float(n_key), ceafm, float(n_resp))
    out["ceafe"] = (ceafe, float(n_k), ceafe, float(n_r))
    out["mentions"] = (float(shared), float(n_key), float(shared), float(n_resp))
    key_coref = sum(s * (s - 1) // 2 for s in a)
    resp_coref = sum(s * (s - 1) // 2 for s in b)
    out["blanc_coref"] = (float(same), float(key_coref), float(same), float(resp_coref))
    key_non, resp_non = n_key * (n_key - 1) // 2 - key_coref, n_resp * (n_resp - 1) // 2 - resp_coref
    out["blanc_noncoref"] = (float(diff), float(key_non), float(diff), float(resp_non))
    return out


#: The contingency tables of a batch are built at most about this many cells at a time (memory).
_BATCH_CELLS = 1 << 22


def batch_counts(predictions: Sequence[CorefDocument], references: Sequence[CorefDocument]) -> np.ndarray:
    """:func:`count_rows` of each document's :func:`document_counts` (``method="auto"``), the same floats.

    The contingency tables of the documents without repeated spans are built together (NumPy passes over about
    ``_BATCH_CELLS`` cells at a time), each document's statistics then from its table's nonzero entries.
    """
    fronts = [_front(key, response) for response, key in zip(predictions, references)]
    rows = np.zeros((len(fronts), 4 * len(COUNT_NAMES)))
    group: list[int] = []
    cells = 0
    for d, front in enumerate(fronts):
        if front is not None and group and cells + len(front[0]) * len(front[1]) > _BATCH_CELLS:
            _batch_rows(predictions, references, fronts, group, rows)
            group, cells = [], 0
        group.append(d)
        cells += len(front[0]) * len(front[1]) if front is not None else 0
    _batch_rows(predictions, references, fronts, group, rows)
    return rows


def batch_document_counts(predictions: Sequence[CorefDocument], references: Sequence[CorefDocument]) -> list[Counts]:
    """Each document pair's :func:`document_counts`, the same floats, counted together (:func:`batch_counts`)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} response documents for {len(references)} key documents")
    return [
        {name: (row[4 * j], row[4 * j + 1], row[4 * j + 2], row[4 * j + 3]) for j, name in enumerate(COUNT_NAMES)}
        for row in batch_counts(predictions, references).tolist()
    ]


def _batch_rows(
    predictions: Sequence[CorefDocument],
    references: Sequence[CorefDocument],
    fronts: list[_Front | None],
    group: list[int],
    rows: np.ndarray,
) -> None:
    """:func:`batch_counts` of the documents ``group``, written into their ``rows``."""
    plain = [d for d in group if fronts[d] is not None]
    for d in group:
        if fronts[d] is None:
            counts = document_counts(predictions[d], references[d])
            rows[d] = [x for name in COUNT_NAMES for x in counts[name]]
    if not plain:
        return
    n_k = np.array([len(fronts[d][0]) for d in plain], dtype=np.int64)  # type: ignore[index]
    n_r = np.array([len(fronts[d][1]) for d in plain], dtype=np.int64)  # type: ignore[index]
    n_resp = np.array([len(fronts[d][3]) for d in plain], dtype=np.int64)  # type: ignore[index]
    sizes = np.array([x for d in plain for x in fronts[d][1]], dtype=np.int64)  # type: ignore[index]
    matched = np.array(
        list(itertools.chain.from_iterable(_matched(fronts[d]) for d in plain)),  # type: ignore[arg-type]
        dtype=np.int64,
    ).reshape(-1)
    n_cells = n_k * n_r
    cell_start = np.cumsum(n_cells) - n_cells
    entity_start = np.cumsum(n_r) - n_r
    # each response mention's entity within its document, its document's row length and first cell
    local = np.arange(sizes.size) - np.repeat(entity_start, n_r)
    label = np.repeat(local, sizes)
    doc = np.repeat(np.arange(len(plain)), n_resp)
    hit = matched >= 0
    cells = (cell_start[doc] + matched * n_r[doc] + label)[hit]
    dense = np.bincount(cells, minlength=int(n_cells.sum()))
    where = np.flatnonzero(dense)
    owner = np.searchsorted(cell_start, where, side="right") - 1
    offset = where - cell_start[owner]
    rows_all, cols_all = np.divmod(offset, n_r[owner])
    counts_all = dense[where]
    key_start = np.cumsum(n_k) - n_k
    key_sizes = np.array([x for d in plain for x in fronts[d][0]], dtype=np.int64)  # type: ignore[index]
    simple_m, simple_e, terms_m, terms_e, together = _batch_alignments(
        key_start[owner] + rows_all,
        entity_start[owner] + cols_all,
        counts_all,
        key_sizes,
        sizes,
        key_start,
        n_cells.tolist(),
    )
    bounds = np.searchsorted(owner, np.arange(len(plain) + 1)).tolist()
    rows_all, cols_all, counts_all = rows_all.tolist(), cols_all.tolist(), counts_all.tolist()
    starts, ends = cell_start.tolist(), (cell_start + n_cells).tolist()
    for x, d in enumerate(plain):
        lo, hi = bounds[x], bounds[x + 1]
        table = dense[starts[x] : ends[x]] if hi > lo else None
        ceaf = None
        if table is not None:
            if together[x]:
                from scipy.optimize import linear_sum_assignment  # a block of the document needs it

                square = table.reshape(int(n_k[x]), int(n_r[x]))
                i, j = linear_sum_assignment(square, maximize=True)
                ceafm = float(square[i, j].sum())  # a whole number: the optimum, however found
            else:
                ceafm = _np_sum(simple_m[x])
                for term in terms_m[x]:
                    ceafm += term
            ceafe = _np_sum(simple_e[x])
            for term in terms_e[x]:
                ceafe += term
            ceaf = [ceafm, ceafe]
        out = _entry_counts(
            fronts[d],  # type: ignore[arg-type]
            rows_all[lo:hi],
            cols_all[lo:hi],
            counts_all[lo:hi],
            table,
            ceaf,
        )
        rows[d] = [v for name in COUNT_NAMES for v in out[name]]


def _link_matrices(chains: list[list[int]], n_ids: int) -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangular (diagonal included) coreference and non-coreference link indicators of id chains.

    ``{x, y}`` is a coreference link when one chain holds both (``x = y`` when a chain holds ``x`` twice), a
    non-coreference link when two different chains hold one each.
    """
    incidence = np.zeros((n_ids, len(chains)), dtype=np.float64)
    for j, chain in enumerate(chains):
        np.add.at(incidence[:, j], chain, 1.0)
    member = (incidence > 0).astype(np.int64)
    common = member @ member.T  # integer: exact, and no BLAS threads (they spin on after the call)
    coref = common > 0
    np.fill_diagonal(coref, (incidence >= 2).any(axis=1))
    degree = member.sum(axis=1)
    present = degree > 0
    noncoref = ((degree[:, None] + degree[None, :] - common) >= 2) & present[:, None] & present[None, :]
    np.fill_diagonal(noncoref, degree >= 2)
    upper = np.triu(np.ones((n_ids, n_ids), dtype=bool))
    return coref & upper, noncoref & upper


def _chain_counts(key: CorefDocument, response: CorefDocument) -> Counts:
    """Scorer v8.01's statistics of a document with repeated spans, from its chains of mention ids."""
    ids: dict[Mention, int] = {}
    key_chains = [[ids.setdefault(m, len(ids)) for m in e.mentions] for e in key.entities]
    n_key_ids = len(ids)
    found: set[Mention] = set()
    resp_chains: list[list[int]] = []
    for e in response.entities:
        chain = []
        for m in e.mentions:
            if m in found and ids[m] < n_key_ids:
                continue  # a key mention given again: the scorer drops it
            found.add(m)
            chain.append(ids.setdefault(m, len(ids)))
        if chain:
            resp_chains.append(chain)
    n_ids, exact = len(ids), sum(1 for m in found if ids[m] < n_key_ids)
    owner = {x: i for i, chain in enumerate(key_chains) for x in chain}  # the last key chain holding x
    key_sets = [set(chain) for chain in key_chains]
    key_sizes = np.array([len(c) for c in key_chains], dtype=np.float64)
    resp_sizes = np.array([len(c) for c in resp_chains], dtype=np.float64)
    n_key, n_resp = float(key_sizes.sum()), float(resp_sizes.sum())
    out: Counts = {"mentions": (float(exact), float(n_key_ids), float(exact), float(n_ids - n_key_ids + exact))}
    muc = sum(c - 1 for chain in resp_chains for c in Counter(owner[x] for x in chain if x in owner).values())
    out["muc"] = (float(muc), n_key - len(key_chains), float(muc), n_resp - len(resp_chains))
    rec = prec = 0.0
    for chain in resp_chains:
        for x in chain:
            if x in owner:
                i = owner[x]
                common = sum(1 for y in chain if y in key_sets[i])
                prec += common / len(chain)
                rec += common / key_sizes[i]
    out["bcub"] = (rec, n_key, prec, n_resp)
    overlap = np.array([[sum(1 for x in k if x in set(r)) for r in resp_chains] for k in key_chains], dtype=np.float64)
    overlap = overlap.reshape(len(key_chains), len(resp_chains))
    ceafm = best_alignment(overlap)
    ceafe = best_alignment(2.0 * overlap / (key_sizes[:, None] + resp_sizes[None, :]))
    out["ceafm"] = (ceafm, n_key, ceafm, n_resp)
    out["ceafe"] = (ceafe, float(len(key_chains)), ceafe, float(len(resp_chains)))
    key_c, key_n = _link_matrices(key_chains, n_ids)
    resp_c, resp_n = _link_matrices(resp_chains, n_ids)
    same, diff = float((key_c & resp_c).sum()), float((key_n & resp_n).sum())
    out["blanc_coref"] = (same, float(key_c.sum()), same, float(resp_c.sum()))
    out["blanc_noncoref"] = (diff, float(key_n.sum()), diff, float(resp_n.sum()))
    return out


def _repeats_matter(key_codes: np.ndarray, response_codes: np.ndarray) -> bool:
    """Whether the scorer counts a repeated span otherwise than once: a key span, or a response span not in the key."""
    if np.unique(key_codes).size < key_codes.size:
        return True
    spans, counts = np.unique(response_codes, return_counts=True)
    repeated = spans[counts > 1]
    return bool(repeated.size) and not np.isin(repeated, key_codes).all()


def document_counts(prediction: CorefDocument, reference: CorefDocument, *, method: str = "auto") -> Counts:
    """Each metric's (recall numerator, recall denominator, precision numerator, precision denominator) of a document.

    BLANC is given as its two link kinds, ``blanc_coref`` and ``blanc_noncoref``.

    Args:
        prediction: the response document.
        reference: the key document.
        method: ``"contingency"`` (each span once, at its first occurrence), ``"chains"`` (the scorer's chains of
            mention ids, repeated spans counted as the scorer counts them), or ``"auto"``: chains only where a repeated
            span makes a difference.
    """
    if method not in ("auto", "contingency", "chains"):
        raise ValueError(f"method must be 'auto', 'contingency' or 'chains'; found {method!r}.")
    key, response = reference, prediction
    if method != "chains":
        quick = _sparse_counts(key, response)  # no repeated span: the contingency's few entries, in Python
        if quick is not None:
            return {name: quick[name] for name in COUNT_NAMES}
    key_spans, response_spans = _spans(key), _spans(response)
    if method == "chains" or (method == "auto" and _repeats_matter(key_spans[0], response_spans[0])):
        out = _chain_counts(key, response)
        out.update(_contingency_counts(_contingency(key_spans, response_spans), lea_only=True))
    else:
        out = _contingency_counts(_contingency(key_spans, response_spans))
    return {name: tuple(float(x) for x in out[name]) for name in COUNT_NAMES}  # type: ignore[misc]
