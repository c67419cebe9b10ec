r"""Per-document coreference statistics as the CoNLL-2012 reference scorer v8.01 computes them, and their figures.

Each metric of a document is four numbers, the scorer's own: recall numerator and denominator, precision numerator and
denominator (:func:`document_counts`); a corpus sums them (micro average) and :func:`figures` divides. Most documents
are scored from their key × response contingency matrix (:func:`contingency`); a document with a span repeated in the
key, or a repeated response span that is not a key mention, is scored from the scorer's chains of mention ids, where
such a span counts once per occurrence in its entities' sizes (see :mod:`metametric_jax.tasks.coref`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.intervals import exact_totals
from metametric_jax.normalizer import f_measure

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
]

#: The metrics of :func:`figures`, in output order (``conll`` follows them).
METRICS: tuple[str, ...] = ("muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "mentions")
#: Per-document statistics: ``(recall numerator, recall denominator, precision numerator, precision denominator)``.
COUNT_NAMES: tuple[str, ...] = ("muc", "bcub", "ceafm", "ceafe", "lea", "mentions", "blanc_coref", "blanc_noncoref")


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


#: Blocks with at most this many one-to-one assignments are solved by enumerating them.
_ENUMERATED = 5040
#: Larger blocks with more rows and more columns than this are solved by :func:`scipy.optimize.linear_sum_assignment`.
_SMALL_BLOCK = 8


@functools.cache
def _injections(rows: int, cols: int) -> np.ndarray:
    """Every one-to-one map of ``rows`` rows into ``cols`` columns, as an array ``(count, rows)`` of column indices."""
    return np.array(list(itertools.permutations(range(cols), rows)), dtype=np.intp).reshape(-1, rows)


def max_assignment(weights: np.ndarray) -> float:
    """The largest total weight of a one-to-one assignment of rows to columns (all of the shorter side assigned).

    Shortest augmenting paths with dual potentials (Crouse, "On implementing 2D rectangular assignment algorithms",
    IEEE TAES 2016), vectorized over columns, so that scoring a file needs no optimization package.

    >>> max_assignment(np.array([[1.0, 2.0], [3.0, 1.0], [0.0, 5.0]]))
    8.0
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape[0] > w.shape[1]:
        w = w.T
    n, m = w.shape
    cost = -w
    u, v = np.zeros(n), np.zeros(m)
    row4col, col4row = np.full(m, -1), np.full(n, -1)
    for current in range(n):
        shortest, path = np.full(m, np.inf), np.full(m, -1)
        scanned = np.zeros(m, dtype=bool)
        rows, i, low = [current], current, 0.0
        while True:
            reduced = low + cost[i] - u[i] - v
            better = ~scanned & (reduced < shortest)
            path[better], shortest[better] = i, reduced[better]
            open_ = np.where(scanned, np.inf, shortest)
            low = float(open_.min())
            ties = np.flatnonzero(open_ == low)
            free = ties[row4col[ties] < 0]
            j = int(free[0] if free.size else ties[0])
            scanned[j] = True
            if row4col[j] < 0:
                break
            i = int(row4col[j])
            rows.append(i)
        u[current] += low
        for r in rows[1:]:
            u[r] += low - shortest[col4row[r]]
        v[scanned] -= low - shortest[scanned]
        while True:  # augment along the path to the free column j
            i = int(path[j])
            row4col[j] = i
            col4row[i], j = j, int(col4row[i])
            if i == current:
                break
    return float(w[np.arange(n), col4row].sum())


#: CEAF-m's larger blocks (whole numbers) are solved by one SciPy call when a block needs SciPy anyway and the
#: table solved at once has at most this many cells; beyond, block by block (a dense solve grows as its cube).
_TOGETHER_CELLS = 4096
#: The contingency tables of a batch are built at most about this many cells at a time (memory).
_BATCH_CELLS = 1 << 22

#: Blocks of at most this many cells (2 × 2, 2 × 3, 2 × 4, 3 × 3: most of a document's) are enumerated in Python.
_PYTHON_BLOCK = 9


def _small_block(rows: list[int], cols: list[int], entries: dict[tuple[int, int], float]) -> float:
    """The best one-to-one total of a small block: its rows and columns, in order, and nonzero entries.

    Every assignment of the shorter side is enumerated; each total is summed in row order from the first row (the
    same float as NumPy's sum along a row of the enumerated assignments, which larger blocks use).
    """
    if len(rows) > len(cols):
        rows, cols = cols, rows
        entries = {(j, i): x for (i, j), x in entries.items()}
    grid = [[entries.get((i, j), 0.0) for j in cols] for i in rows]
    best = 0.0
    for chosen in itertools.permutations(range(len(cols)), len(rows)):
        total = 0.0
        for row, j in zip(grid, chosen):
            total += row[j]
        best = max(best, total)
    return best


def best_alignment(similarity: np.ndarray, *, solver: str = "auto") -> float:
    """The maximal total similarity of a one-to-one alignment of rows to columns (CEAF's numerator).

    The matrix splits into blocks of rows and columns linked by nonzero entries (reading and scoring files need not
    import SciPy); a block with one row or one column contributes its largest entry, a small block the best of its
    enumerated assignments, a larger one :func:`max_assignment` (or :func:`scipy.optimize.linear_sum_assignment`
    beyond ``_SMALL_BLOCK`` rows and columns). ``solver="scipy"`` solves the whole matrix by SciPy instead: the same
    optimum, its float sum taken in another order (its last bits may differ). ``"auto"`` (the default) is ``"blocks"``,
    whatever modules this process has imported: the figures are a function of the input alone (the same in one
    process and in worker processes).

    >>> best_alignment(np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]))
    7.0
    """
    if solver not in ("auto", "blocks", "scipy"):
        raise ValueError(f"solver must be 'auto', 'blocks' or 'scipy'; found {solver!r}.")
    sim = np.asarray(similarity)
    if solver == "scipy":
        restricted = sim[np.ix_(sim.any(axis=1), sim.any(axis=0))]
        if min(restricted.shape) > 1:
            from scipy.optimize import linear_sum_assignment

            i, j = linear_sum_assignment(restricted, maximize=True)
            return float(restricted[i, j].sum())
    return _alignments([sim])[0]


#: a block of linked rows and columns: its rows and its columns (each in order), and its entries' positions
_Block = tuple[list[int], list[int], list[int]]


def _blocks(rows: list[int], cols: list[int], n_rows: int) -> tuple[list[list[int]], list[_Block]]:
    """The blocks of the entries ``(rows[k], cols[k])``, in the order of their smallest rows.

    Returned: the positions of the entries of each block with one row or one column, and the other blocks.
    Union-find over the rows (each set's root its smallest row), a column joining the rows of its entries.
    """
    parent = list(range(n_rows))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[int, int] = {}  # a column's first row
    for i, j in zip(rows, cols):
        k = first.setdefault(j, i)
        if k != i:
            a, b = root(i), root(k)
            if a != b:
                parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for k, i in enumerate(rows):
        members.setdefault(root(i), []).append(k)
    simple: list[list[int]] = []
    larger: list[_Block] = []
    for label in sorted(members):
        ks = members[label]
        block_rows, block_cols = sorted({rows[k] for k in ks}), sorted({cols[k] for k in ks})
        if len(block_rows) == 1 or len(block_cols) == 1:
            simple.append(ks)
        else:
            larger.append((block_rows, block_cols, ks))
    return simple, larger


def _alignments(similarities: Sequence[np.ndarray]) -> list[float]:
    """:func:`best_alignment` of several matrices with the same nonzero entries (CEAF-m's and CEAF-e's).

    Each is the same float as alone; their blocks are found once.
    """
    if not similarities:
        return []
    r, c = np.nonzero(np.asarray(similarities[0]) > 0)
    rows, cols = r.tolist(), c.tolist()
    simple, larger = _blocks(rows, cols, np.shape(similarities[0])[0])
    out = []
    for similarity in similarities:
        sim = np.asarray(similarity)
        values = sim[r, c].tolist()
        total = float(np.array([max(values[k] for k in ks) for ks in simple], dtype=np.float64).sum())
        for block_rows, block_cols, ks in larger:
            if len(block_rows) * len(block_cols) <= _PYTHON_BLOCK:
                total += _small_block(block_rows, block_cols, {(rows[k], cols[k]): values[k] for k in ks})
            else:
                total += _large_block(sim[np.ix_(block_rows, block_cols)])
        out.append(total)
    return out


def _large_block(block: np.ndarray) -> float:
    if block.shape[0] > block.shape[1]:
        block = block.T
    if math.perm(block.shape[1], block.shape[0]) <= _ENUMERATED:
        return float(block[np.arange(block.shape[0]), _injections(*block.shape)].sum(axis=1).max())
    if block.shape[0] <= _SMALL_BLOCK:
        return max_assignment(block)
    from scipy.optimize import linear_sum_assignment  # the same optimum, from compiled code (imported for such blocks)

    i, j = linear_sum_assignment(block, maximize=True)
    return float(block[i, j].sum())


# ------------------------------------------------------------------------------------------- sparse contingency path
# A document's contingency has few nonzero entries (about 1.5 per entity); the path below works on them in Python,
# each float computed by the same operations, in the same order, as the dense rules above (so the same bits).


def _pairwise_sum(values: list[float], lo: int, n: int) -> float:
    """NumPy's pairwise float64 sum of ``values[lo:lo + n]``: under 8 terms in order, to 128 in 8 lanes, or halves."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += values[i]
        return res
    if n <= 128:
        lanes = values[lo : lo + 8]
        end = lo + n - n % 8
        for i in range(lo + 8, end, 8):
            for k in range(8):
                lanes[k] += values[i + k]
        res = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
        for i in range(end, lo + n):
            res += values[i]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(values, lo, half) + _pairwise_sum(values, lo + half, n - half)


def _np_sum(values: list[float]) -> float:
    """The float ``np.array(values, dtype=np.float64).sum()`` (a reduction from 0.0, pairwise), without NumPy."""
    return 0.0 + _pairwise_sum(values, 0, len(values))


def _best_matching(lines: list[list[tuple[int, float]]]) -> float:
    """The largest float of a one-to-one assignment summed line by line: what enumerating every assignment gives.

    ``lines[s]`` holds the nonzero entries ``(column bit, value)`` of the shorter side's ``s``-th line (values >= 0).
    A partial assignment's sum is its full assignments' sum (each further term 0.0), and float addition is monotone,
    so keeping the largest sum for each set of used columns, line by line, gives the largest total.
    """
    if len(lines) == 2:  # two lines (most blocks): each entry alone, or one of each line in other columns
        best_two = 0.0
        for bit, x in lines[0]:
            best_two = max(best_two, x)
            for bit2, y in lines[1]:
                if bit != bit2 and x + y > best_two:
                    best_two = x + y
        return max([best_two] + [y for _, y in lines[1]])
    best: dict[int, float] = {0: 0.0}
    for entries in lines:
        grown = dict(best)  # the line assigned to a zero
        for used, total in best.items():
            for bit, x in entries:
                if not used & bit:
                    key, value = used | bit, total + x
                    if value > grown.get(key, -1.0):
                        grown[key] = value
        best = grown
    return max(best.values())


def _augmenting_paths(w: list[list[float]]) -> float:
    """:func:`max_assignment` of a matrix with no more rows than columns, in Python floats (the same operations).

    Its sum is NumPy's sum of the assigned entries in row order (at most 8 rows: in order, or 8 lanes).
    """
    n, m = len(w), len(w[0])
    inf = math.inf
    cost = [[-x for x in row] for row in w]
    u, v = [0.0] * n, [0.0] * m
    row4col, col4row = [-1] * m, [-1] * n
    columns = range(m)
    for current in range(n):
        shortest, path, scanned = [inf] * m, [-1] * m, [False] * m
        rows, i, low = [current], current, 0.0
        while True:
            cost_i, u_i = cost[i], u[i]
            for j in columns:
                if not scanned[j]:
                    reduced = low + cost_i[j] - u_i - v[j]
                    if reduced < shortest[j]:
                        path[j], shortest[j] = i, reduced
            low = min(inf if scanned[j] else shortest[j] for j in columns)
            j = -1
            for k in columns:
                if not scanned[k] and shortest[k] == low:
                    if row4col[k] < 0:
                        j = k
                        break
                    if j < 0:
                        j = k
            scanned[j] = True
            if row4col[j] < 0:
                break
            i = row4col[j]
            rows.append(i)
        u[current] += low
        for r in rows[1:]:
            u[r] += low - shortest[col4row[r]]
        for k in columns:
            if scanned[k]:
                v[k] -= low - shortest[k]
        while True:
            i = path[j]
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == current:
                break
    return _np_sum([w[i][col4row[i]] for i in range(n)])


def _solve_blocks(
    short: Sequence[int], long: Sequence[int], at_short: list[int], at_long: list[int], values: Sequence[list[float]]
) -> list[float]:
    """A larger block's term in each matrix of ``values``, as :func:`_small_block` or :func:`_large_block` gives it.

    The block's lines are ``short`` (its shorter side, rows if square) and ``long``; its nonzero entries are at
    ``(at_short[k], at_long[k])`` (indices into ``short`` and ``long``), with the values ``values[m][k]``.
    """
    n_short, n_long = len(short), len(long)
    if n_short * n_long <= _PYTHON_BLOCK or math.perm(n_long, n_short) <= _ENUMERATED:
        out = []
        for vals in values:
            lines: list[list[tuple[int, float]]] = [[] for _ in short]
            for s, c, x in zip(at_short, at_long, vals):
                lines[s].append((1 << c, x))
            out.append(_best_matching(lines))
        return out
    if n_short <= _SMALL_BLOCK:
        out = []
        for vals in values:
            grid = [[0.0] * n_long for _ in short]
            for s, c, x in zip(at_short, at_long, vals):
                grid[s][c] = x
            out.append(_augmenting_paths(grid))
        return out
    from scipy.optimize import linear_sum_assignment  # as _large_block

    out = []
    for vals in values:
        block = np.zeros((n_short, n_long))
        block[at_short, at_long] = vals
        i, j = linear_sum_assignment(block, maximize=True)
        out.append(float(block[i, j].sum()))
    return out


def _sparse_alignments(
    rows: list[int],
    cols: list[int],
    values: Sequence[list[float]],
    n_rows: int,
    n_cols: int,
    integral: Sequence[bool] = (),
) -> list[float]:
    """:func:`_alignments` of matrices given by their positive entries: the same floats.

    The entries are at ``(rows[k], cols[k])``, in row-major order, each matrix's values in ``values``. The blocks
    are the connected sets of rows and columns, each labelled by its smallest row. A matrix marked ``integral`` holds
    whole numbers (CEAF-m's counts): every sum is exact, so any optimal alignment gives its float, and where a block
    needs SciPy anyway, its larger blocks are solved together by one SciPy call.
    """
    row_cols: list[list[int]] = [[] for _ in range(n_rows)]
    col_rows: list[list[int]] = [[] for _ in range(n_cols)]
    for k, (i, j) in enumerate(zip(rows, cols)):
        row_cols[i].append(k)
        col_rows[j].append(k)
    simple: list[list[float]] = [[] for _ in values]
    blocks: list[tuple[list[int], list[int], list[int]]] = []
    seen_row, seen_col = [False] * n_rows, [False] * n_cols
    for start in range(n_rows):
        if seen_row[start] or not row_cols[start]:
            continue
        seen_row[start] = True
        ks = row_cols[start]
        for k in ks:
            if len(col_rows[cols[k]]) != 1:
                break
        else:  # one row: no other row shares its columns
            if len(ks) == 1:
                for out, vals in zip(simple, values):
                    out.append(vals[ks[0]])
            else:
                for out, vals in zip(simple, values):
                    out.append(max([vals[k] for k in ks]))
            continue
        block_rows, block_cols, entries, stack = [start], [], [], [start]
        while stack:
            for k in row_cols[stack.pop()]:
                entries.append(k)
                j = cols[k]
                if not seen_col[j]:
                    seen_col[j] = True
                    block_cols.append(j)
                    for k2 in col_rows[j]:
                        i = rows[k2]
                        if not seen_row[i]:
                            seen_row[i] = True
                            block_rows.append(i)
                            stack.append(i)
        if len(block_rows) == 1 or len(block_cols) == 1:
            for out, vals in zip(simple, values):
                out.append(max([vals[k] for k in entries]))
        else:
            blocks.append((block_rows, block_cols, entries))
    together = any(min(len(r), len(c)) > _SMALL_BLOCK for r, c, _ in blocks) and (
        len({i for r, _, _ in blocks for i in r}) * len({j for _, c, _ in blocks for j in c}) <= _TOGETHER_CELLS
    )
    solo = [m for m in range(len(values)) if not (together and m < len(integral) and integral[m])]
    larger: list[list[float]] = [[] for _ in values]
    for block_rows, block_cols, entries in blocks:
        block_rows.sort()
        block_cols.sort()
        row_at = {i: x for x, i in enumerate(block_rows)}
        col_at = {j: x for x, j in enumerate(block_cols)}
        at_rows, at_cols = [row_at[rows[k]] for k in entries], [col_at[cols[k]] for k in entries]
        block_values = [[values[m][k] for k in entries] for m in solo]
        if len(block_rows) > len(block_cols):
            terms = _solve_blocks(block_cols, block_rows, at_cols, at_rows, block_values)
        else:
            terms = _solve_blocks(block_rows, block_cols, at_rows, at_cols, block_values)
        for m, term in zip(solo, terms):
            larger[m].append(term)
    if len(solo) < len(values):
        from scipy.optimize import linear_sum_assignment  # imported for the SciPy block already

        ks = [k for _, _, entries in blocks for k in entries]
        row_at = {i: x for x, i in enumerate(sorted({rows[k] for k in ks}))}
        col_at = {j: x for x, j in enumerate(sorted({cols[k] for k in ks}))}
        at_rows, at_cols = [row_at[rows[k]] for k in ks], [col_at[cols[k]] for k in ks]
        for m in range(len(values)):
            if m not in solo:
                union = np.zeros((len(row_at), len(col_at)))
                union[at_rows, at_cols] = [values[m][k] for k in ks]
                i, j = linear_sum_assignment(union, maximize=True)
                larger[m].append(float(union[i, j].sum()))
    totals = []
    for maxima, terms in zip(simple, larger):
        total = _np_sum(maxima)
        for term in terms:
            total += term
        totals.append(total)
    return totals


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


Counts = dict[str, tuple[float, float, float, float]]


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


def _block_labels(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's block (the smallest row of its connected rows and columns), and whether it has one row or column.

    ``rows`` and ``cols`` index the entries of a block-diagonal matrix ``(n_rows, n_cols)`` (several documents').
    """
    row_degree, col_degree = np.bincount(rows, minlength=n_rows), np.bincount(cols, minlength=n_cols)
    one_row = np.bincount(rows[col_degree[cols] > 1], minlength=n_rows) == 0  # no other row shares its columns
    one_col = np.bincount(cols[row_degree[rows] > 1], minlength=n_cols) == 0
    simple = one_row[rows] | one_col[cols]
    first_row = np.full(n_cols, n_rows)
    np.minimum.at(first_row, cols, rows)
    label = np.where(one_row[rows], rows, first_row[cols])
    linked_rows, linked_cols = rows[~simple], cols[~simple]
    row_label = np.arange(n_rows)
    while linked_rows.size:  # smallest labels spread through columns, with pointer jumping
        col_label = np.full(n_cols, n_rows)
        np.minimum.at(col_label, linked_cols, row_label[linked_rows])
        new = row_label.copy()
        np.minimum.at(new, linked_rows, col_label[linked_cols])
        new = new[new[new]]
        if (new == row_label).all():
            break
        row_label = new
    label[~simple] = row_label[linked_rows]
    return label, simple


def _ranks(label: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's rank of ``index`` among the distinct indices of its block (``label``), and their number per block.

    The blocks are in the order of their labels.
    """
    order = np.lexsort((index, label))
    sorted_label, sorted_index = label[order], index[order]
    block_start = np.ones(order.size, dtype=bool)
    block_start[1:] = sorted_label[1:] != sorted_label[:-1]
    new = block_start.copy()
    new[1:] |= sorted_index[1:] != sorted_index[:-1]
    distinct = np.cumsum(new) - 1
    starts = np.flatnonzero(block_start)
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = distinct - np.repeat(distinct[starts], np.diff(np.append(starts, order.size)))
    return rank, np.diff(np.append(distinct[starts], distinct[-1] + 1))


def _batch_alignments(
    rows: np.ndarray,
    cols: np.ndarray,
    counts: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    key_start: np.ndarray,
    cells: list[int],
) -> tuple[list[list[float]], list[list[float]], list[list[float]], list[list[float]], list[bool]]:
    """The CEAF blocks of several documents' contingency tables at once, as :func:`_sparse_alignments` takes them.

    The entries ``counts`` are at global entity indices ``(rows, cols)`` (into the sizes ``a`` and ``b``), document
    by document in row-major order; ``key_start[x]`` is document ``x``'s first key entity. Returned, per document:
    CEAF-m's and CEAF-e's largest values of the one-row or one-column blocks, and the terms of the larger blocks (each
    in the order of the blocks' smallest rows), and whether a block needs SciPy (CEAF-m's terms are then left out:
    the whole table, of ``cells[x]`` cells, is solved by one SciPy call instead, the same whole number; only where it
    has at most ``_TOGETHER_CELLS``).
    """
    n_docs = key_start.size
    m_values = counts.astype(np.float64)
    e_values = 2.0 * counts / (a[rows] + b[cols])
    label, simple = _block_labels(rows, cols, a.size, b.size)

    def per_document(labels: np.ndarray) -> list[int]:
        owner = np.searchsorted(key_start, labels, side="right") - 1
        return np.searchsorted(owner, np.arange(n_docs + 1)).tolist()  # type: ignore[no-any-return]

    s_label = label[simple]
    best_m, best_e = np.zeros(a.size), np.zeros(a.size)
    np.maximum.at(best_m, s_label, m_values[simple])
    np.maximum.at(best_e, s_label, e_values[simple])
    s_labels = np.unique(s_label)
    bounds = per_document(s_labels)
    maxima_m, maxima_e = best_m[s_labels].tolist(), best_e[s_labels].tolist()
    simple_m = [maxima_m[bounds[x] : bounds[x + 1]] for x in range(n_docs)]
    simple_e = [maxima_e[bounds[x] : bounds[x + 1]] for x in range(n_docs)]
    terms_m: list[list[float]] = [[] for _ in range(n_docs)]
    terms_e: list[list[float]] = [[] for _ in range(n_docs)]
    together = [False] * n_docs
    linked = ~simple
    if not linked.any():
        return simple_m, simple_e, terms_m, terms_e, together
    l_label, l_rows, l_cols = label[linked], rows[linked], cols[linked]
    row_rank, block_rows = _ranks(l_label, l_rows)
    col_rank, block_cols = _ranks(l_label, l_cols)
    order = np.argsort(l_label, kind="stable")
    labels, starts = np.unique(l_label[order], return_index=True)
    block_bounds = np.append(starts, order.size).tolist()
    block_doc = (np.searchsorted(key_start, labels, side="right") - 1).tolist()
    at_rows, at_cols = row_rank[order].tolist(), col_rank[order].tolist()
    vals_m, vals_e = m_values[linked][order].tolist(), e_values[linked][order].tolist()
    shapes = list(zip(block_rows.tolist(), block_cols.tolist()))
    for x, (n_r, n_c) in zip(block_doc, shapes):
        if min(n_r, n_c) > _SMALL_BLOCK and cells[x] <= _TOGETHER_CELLS:
            together[x] = True
    for k, (x, (n_r, n_c)) in enumerate(zip(block_doc, shapes)):
        lo, hi = block_bounds[k], block_bounds[k + 1]
        values = [vals_e[lo:hi]] if together[x] else [vals_m[lo:hi], vals_e[lo:hi]]
        if n_r > n_c:
            terms = _solve_blocks(range(n_c), range(n_r), at_cols[lo:hi], at_rows[lo:hi], values)
        else:
            terms = _solve_blocks(range(n_r), range(n_c), at_rows[lo:hi], at_cols[lo:hi], values)
        terms_e[x].append(terms[-1])
        if not together[x]:
            terms_m[x].append(terms[0])
    return simple_m, simple_e, terms_m, terms_e, together


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


# ------------------------------------------------------------------------------------------------------------- figures
def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _f1(r: float, p: float) -> float:
    return f_measure(p, r)


def _prf(num_r: float, den_r: float, num_p: float, den_p: float) -> dict[str, float]:
    r, p = _ratio(num_r, den_r), _ratio(num_p, den_p)
    return {
        "recall": r,
        "precision": p,
        "f1": _f1(r, p),
        "recall_num": num_r,
        "recall_den": den_r,
        "precision_num": num_p,
        "precision_den": den_p,
    }


def figures(totals: Mapping[str, Sequence[float]]) -> dict[str, dict[str, Any]]:
    """The figures of summed statistics ``{name: (recall num, recall den, precision num, precision den)}``.

    Returns:
        ``{metric: {"recall", "precision", "f1", "recall_num", "recall_den", "precision_num", "precision_den"}}`` for
        MUC, B³, CEAF-m, CEAF-e, LEA and mentions; ``blanc: {"recall", "precision", "f1", "coreference_links": {...},
        "non_coreference_links": {...}}`` (BLANC with the scorer's cases); ``conll: {"f1"}``.
    """
    out: dict[str, dict[str, Any]] = {m: _prf(*totals[m]) for m in METRICS if m != "blanc"}
    c, n = _prf(*totals["blanc_coref"]), _prf(*totals["blanc_noncoref"])
    if c["recall_den"] and n["recall_den"]:
        blanc = {k: (c[k] + n[k]) / 2 for k in ("recall", "precision", "f1")}
    else:
        use = c if c["recall_den"] else n if n["recall_den"] else dict.fromkeys(("recall", "precision", "f1"), 0.0)
        blanc = {k: use[k] for k in ("recall", "precision", "f1")}
    out["blanc"] = {**blanc, "coreference_links": c, "non_coreference_links": n}
    out = {m: out[m] for m in METRICS}
    out["conll"] = {"f1": (out["muc"]["f1"] + out["bcub"]["f1"] + out["ceafe"]["f1"]) / 3}
    return out


def count_rows(per_document: Sequence[Counts]) -> np.ndarray:
    """The statistics of each document as one float64 row, ``(n, 4 * len(COUNT_NAMES))``.

    Each of :data:`COUNT_NAMES` in turn: its recall numerator, recall denominator, precision numerator and precision
    denominator (the additive rows of :mod:`metametric_jax.intervals`).
    """
    rows = np.zeros((len(per_document), 4 * len(COUNT_NAMES)))
    for i, d in enumerate(per_document):
        rows[i] = [x for name in COUNT_NAMES for x in d[name]]
    return rows


def unpack_totals(totals: np.ndarray | Sequence[float]) -> dict[str, tuple[float, ...]]:
    """``{name: (recall num, recall den, precision num, precision den)}`` of totals laid out as :func:`count_rows`."""
    values = [float(x) for x in totals]
    if len(values) != 4 * len(COUNT_NAMES):
        raise ValueError(f"expected {4 * len(COUNT_NAMES)} coreference totals; found {len(values)}.")
    return {name: tuple(values[4 * k : 4 * k + 4]) for k, name in enumerate(COUNT_NAMES)}


def sum_counts(per_document: Sequence[Counts]) -> dict[str, tuple[float, ...]]:
    """The statistics of several documents summed, each rounded once whatever the order (``exact_totals``)."""
    return unpack_totals(exact_totals(count_rows(per_document)))


_FIGURES = ("recall", "precision", "f1")


def readout(totals: np.ndarray | Sequence[float], metric: str = "all") -> dict[str, dict[str, Any]]:
    """The read-out of totals laid out as :func:`count_rows`: :func:`figures` without the counts.

    Recall, precision and F1 of each metric (BLANC's two link kinds too) and the CoNLL average, the figures of
    ``score coref`` (bit for bit, from the same totals).

    Args:
        totals: the summed statistics (any non-negative reals: a 0 denominator gives 0).
        metric: ``"all"``, or one of :data:`METRICS` but ``mentions``: that metric and the mentions only.
    """
    full = figures(unpack_totals(totals))
    out: dict[str, dict[str, Any]] = {m: {k: full[m][k] for k in _FIGURES} for m in METRICS}
    for kind in ("coreference_links", "non_coreference_links"):
        out["blanc"][kind] = {k: full["blanc"][kind][k] for k in _FIGURES}
    out["conll"] = {"f1": full["conll"]["f1"]}
    if metric == "all":
        return out
    if metric not in METRICS or metric == "mentions":
        raise ValueError(f"metric must be 'all' or one of {[m for m in METRICS if m != 'mentions']}; found {metric!r}.")
    return {"mentions": out["mentions"], metric: out[metric]}
