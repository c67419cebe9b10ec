"""CEAF's alignment solvers: the maximal total similarity of a one-to-one alignment of key and response entities.

A matrix splits into blocks of rows and columns linked by positive entries; a block with one row or one column
contributes its largest entry, a small block the best of its enumerated assignments, a larger one shortest augmenting
paths (:func:`max_assignment`) or SciPy. Three paths give the same floats: dense matrices (:func:`best_alignment`,
:func:`_alignments`), one document's positive entries in Python (:func:`_sparse_alignments`), and the blocks of a
batch's documents found at once (:func:`_batch_alignments`). :mod:`metametric_jax.tasks.coref_counts` counts with them.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["max_assignment", "best_alignment"]


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


# ----------------------------------------------------------------------------------------------- sparse alignment path
# The positive entries of a document's contingency (about 1.5 per entity) are solved in Python below, each float by
# the same operations, in the same order, as the dense solvers above (so the same bits).


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


# ---------------------------------------------------------------------------------------------------- batch alignments
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
