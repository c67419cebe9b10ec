"""The sparse path of ``coref_counts`` against the dense rules it stands in for, bit for bit.

A document with no repeated span is scored from its contingency's nonzero entries in Python
(``_sparse_counts``); documents with repeated spans keep the dense NumPy path (``_contingency`` and
``_contingency_counts``) or the scorer's chains. Every float of the sparse path must be the float of the dense path:
the same operations in the same order (NumPy's pairwise sums replayed, the same alignment per block). These tests
compare the two on generated documents and matrices (empty documents, singletons, ties in the alignment, blocks of
every solver's size), comparing floats by their bits.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from metametric_jax.tasks import coref_alignment as ca
from metametric_jax.tasks import coref_counts as cc
from metametric_jax.tasks.coref import CorefDocument


def _bits(counts: dict) -> dict:
    """The statistics with every float by its bits (``0.0`` and ``-0.0`` differ)."""
    return {name: tuple(float(x).hex() for x in values) for name, values in counts.items()}


def _dense(key: CorefDocument, response: CorefDocument) -> dict:
    return cc._contingency_counts(cc._contingency(cc._spans(key), cc._spans(response)))


def _document(rng: random.Random, kind: str) -> tuple[CorefDocument, CorefDocument]:
    """A key and a response without repeated spans; ``kind`` picks the shape of the contingency."""
    n_mentions = rng.choice([0, 1, 2, 5, 20, 60, 200])
    n_tokens = max(1, 6 * n_mentions)
    spans = sorted({(s, min(n_tokens, s + rng.choice((0, 0, 1, 2)))) for s in rng.sample(range(n_tokens), n_mentions)})
    if kind == "singletons":
        key = [[s] for s in spans]
    else:
        n_entities = max(1, rng.randint(1, max(1, n_mentions // rng.choice((1, 2, 4, 8)))))
        key = [[] for _ in range(n_entities)]
        for s in spans:
            key[rng.randrange(n_entities)].append(s)
        key = [e for e in key if e]
    if kind == "same":
        response = [list(e) for e in key]
    elif kind == "tied":  # entities of equal sizes swapped in pairs: CEAF-e ties between alignments
        response = []
        for e in key:
            half = len(e) // 2
            response += [e[:half], e[half:]] if half else [e]
        response = [e for e in response if e]
        rng.shuffle(response)
    else:
        move = {"giant": 0.5, "perturbed": 0.15, "singletons": 0.3}[kind]
        response = [[m for m in e if rng.random() > 0.1] for e in key] or [[]]
        for e in response:
            for m in list(e):
                if rng.random() < move:
                    e.remove(m)
                    rng.choice(response).append(m)
        known = set(spans)
        for _ in range(n_mentions // 10 + rng.randint(0, 2)):
            s = rng.randrange(n_tokens + 5)
            span = (s, s + rng.choice((0, 1)))
            if span not in known:
                known.add(span)
                rng.choice(response).append(span)
        response = [e for e in response if e]
    rng.shuffle(key)
    if rng.random() < 0.1:
        key, response = response, key
    return CorefDocument.from_clusters(key), CorefDocument.from_clusters(response)


_KINDS = ["perturbed", "giant", "singletons", "same", "tied"]


@pytest.mark.parametrize("kind", _KINDS)
def test_sparse_counts_are_the_dense_counts_bit_for_bit(kind: str) -> None:
    rng = random.Random(f"sparse-{kind}")
    for _ in range(120):
        key, response = _document(rng, kind)
        sparse = cc._sparse_counts(key, response)
        assert sparse is not None
        assert _bits(sparse) == _bits(_dense(key, response))
        assert _bits(cc.document_counts(response, key)) == _bits({n: sparse[n] for n in cc.COUNT_NAMES})


def test_empty_documents() -> None:
    empty, one = CorefDocument.from_clusters([]), CorefDocument.from_clusters([[(0, 1), (3, 3)], [5]])
    for key, response in [(empty, empty), (empty, one), (one, empty), (one, one)]:
        sparse = cc._sparse_counts(key, response)
        assert sparse is not None and _bits(sparse) == _bits(_dense(key, response))


def test_repeated_spans_take_the_dense_or_chain_path() -> None:
    """A repeated span on either side: no sparse counts, and document_counts gives what it gave before."""
    key = CorefDocument.from_clusters([[(0, 0), (2, 3)], [(5, 5), (7, 7)]])
    in_key = CorefDocument.from_clusters([[(0, 0), (2, 3)], [(0, 0), (5, 5)]])  # a key span given twice
    outside = CorefDocument.from_clusters([[(0, 0), (9, 9)], [(9, 9), (5, 5)]])  # a repeated span not in the key
    assert cc._sparse_counts(key, in_key) is None and cc._sparse_counts(in_key, key) is None
    assert cc._sparse_counts(key, outside) is None
    assert _bits(cc.document_counts(in_key, key)) == _bits({n: _dense(key, in_key)[n] for n in cc.COUNT_NAMES})
    chains = cc._chain_counts(key, outside)
    chains.update(cc._contingency_counts(cc._contingency(cc._spans(key), cc._spans(outside)), lea_only=True))
    assert _bits(cc.document_counts(outside, key)) == _bits({n: chains[n] for n in cc.COUNT_NAMES})


def test_numpy_sum_replayed() -> None:
    """``_np_sum`` is NumPy's float64 sum (pairwise, 8 lanes) at every length, zeros included."""
    rng = np.random.default_rng(0)
    for n in [*range(0, 300), 511, 1000, 2400, 8192, 8200]:
        x = rng.random(n) * 10.0 ** rng.integers(-4, 4, n)
        x[rng.random(n) < 0.5] = 0.0
        assert ca._np_sum(x.tolist()).hex() == float(x.sum()).hex(), n
    assert ca._np_sum([]).hex() == float(np.zeros(0).sum()).hex()


#: values whose float sums depend on their order (0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1)
_DECIMALS = np.array([0.1, 0.2, 0.3, 0.7, 1 / 3, 0.6])


def _sparse_matrix(rng: np.random.Generator, n: int, m: int, density: float, tied: bool) -> np.ndarray:
    counts = (rng.random((n, m)) < density) * rng.integers(1, 4 if tied else 9, (n, m))
    return counts.astype(np.float64)


def _entries(sim: np.ndarray) -> tuple[list[int], list[int]]:
    r, c = np.nonzero(sim > 0)
    return r.tolist(), c.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_sparse_alignments_are_the_block_rule_bit_for_bit(seed: int) -> None:
    """Blocks of every size (enumerated, augmenting paths, SciPy) and ties: the floats of ``_alignments``."""
    rng = np.random.default_rng(seed)
    shapes = set()
    for t in range(250):
        n, m = (int(x) for x in rng.integers(1, 45, size=2))
        tied = t % 3 == 0
        counts = _sparse_matrix(rng, n, m, rng.uniform(0.01, 0.15), tied)
        sizes_r, sizes_c = rng.integers(1, 30, n), rng.integers(1, 30, m)
        fractions = 2.0 * counts / (sizes_r[:, None] + sizes_c[None, :])
        if tied:  # a few decimal values: optimal alignments that tie in exact terms but not as floats
            fractions = (counts > 0) * rng.choice(_DECIMALS, (n, m))
        rows, cols = _entries(counts)
        values = [counts[rows, cols].tolist(), fractions[rows, cols].tolist()]
        want = [x.hex() for x in ca._alignments([counts, fractions])]
        assert [x.hex() for x in ca._sparse_alignments(rows, cols, values, n, m)] == want
        # the counts marked whole numbers: solved together by SciPy where a block needs it, the same floats
        assert [x.hex() for x in ca._sparse_alignments(rows, cols, values, n, m, integral=(True, False))] == want
        simple, larger = ca._blocks(rows, cols, n)
        shapes.update(min(len(b[0]), len(b[1])) for b in larger)
    assert {2, 3, 5, 8, 9} <= shapes  # enumerated, augmenting-path and SciPy blocks all met


def test_augmenting_paths_are_max_assignment_bit_for_bit() -> None:
    """The Python shortest augmenting paths: the assignment and float of ``max_assignment``, ties included."""
    rng = np.random.default_rng(1)
    for t in range(400):
        n = int(rng.integers(1, 9))
        m = int(rng.integers(n, 14))
        if t % 2:  # many equal entries and order-dependent sums: ties broken as max_assignment breaks them
            w = (rng.random((n, m)) < 0.7) * rng.choice(_DECIMALS, (n, m))
        else:
            w = (rng.random((n, m)) < 0.4) * rng.random((n, m)) * 10.0 ** rng.integers(-2, 3)
        assert ca._augmenting_paths(w.tolist()).hex() == cc.max_assignment(w).hex()


def test_best_matching_is_the_enumerated_maximum() -> None:
    """The largest float over all one-to-one assignments summed line by line, as enumeration finds it."""
    rng = np.random.default_rng(2)
    for _ in range(400):
        n = int(rng.integers(1, 6))
        m = int(rng.integers(n, 8))
        w = (rng.random((n, m)) < 0.5) * rng.random((n, m)) * 10.0 ** rng.integers(-3, 3)
        lines = [[(1 << j, float(w[i, j])) for j in range(m) if w[i, j] > 0] for i in range(n)]
        best = 0.0
        for chosen in itertools.permutations(range(m), n):
            total = 0.0
            for i, j in enumerate(chosen):
                total += float(w[i, j])
            best = max(best, total)
        assert ca._best_matching(lines).hex() == best.hex()


def test_figures_of_a_corpus_unchanged() -> None:
    """Summed statistics of many documents, through document_counts: equal to the dense path's, figure by figure."""
    rng = random.Random("corpus")
    docs = [_document(rng, rng.choice(_KINDS)) for _ in range(150)]
    sparse = cc.figures(cc.sum_counts([cc.document_counts(r, k) for k, r in docs]))
    dense = cc.figures(cc.sum_counts([_dense(k, r) for k, r in docs]))
    assert sparse == dense
    assert math.isfinite(sparse["conll"]["f1"])


@pytest.mark.parametrize(
    "shape", [(2, 2), (2, 4), (3, 3), (3, 4), (4, 4), (5, 6), (6, 7), (7, 7), (7, 8), (8, 8), (6, 9), (9, 9), (10, 12)]
)
def test_each_block_solver_is_the_one_it_replaces(shape: tuple[int, int]) -> None:
    """One block at a time, dense with order-dependent decimals (its optimum often tied): ``_solve_blocks`` gives the
    float of ``_small_block`` / ``_large_block`` (enumeration, shortest augmenting paths or SciPy, by size)."""
    rng = np.random.default_rng(sum(shape))
    n, m = shape
    for t in range(40):
        w = (rng.random((n, m)) < 0.75) * rng.choice(_DECIMALS, (n, m))
        if t % 2:
            w = w.T
        short, long = (
            (range(w.shape[0]), range(w.shape[1]))
            if w.shape[0] <= w.shape[1]
            else (range(w.shape[1]), range(w.shape[0]))
        )
        oriented = w if w.shape[0] <= w.shape[1] else w.T
        at_s, at_l = (x.tolist() for x in np.nonzero(oriented))
        got = ca._solve_blocks(list(short), list(long), at_s, at_l, [oriented[at_s, at_l].tolist()])[0]
        if w.size <= ca._PYTHON_BLOCK:
            r, c = (x.tolist() for x in np.nonzero(w))
            want = ca._small_block(
                list(range(w.shape[0])), list(range(w.shape[1])), {(i, j): w[i, j] for i, j in zip(r, c)}
            )
        else:
            want = ca._large_block(w)
        assert got.hex() == want.hex(), (shape, t)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limits", [(1 << 22, 4096), (60, 4096), (1 << 22, 0), (1, 300)], ids=str)
def test_batch_counts_are_each_document_s_counts_bit_for_bit(seed: int, limits: tuple[int, int], monkeypatch) -> None:
    """Documents scored together (blocks of all documents found at once): each row is that document's counts, by
    ``document_counts`` and by the dense path; documents with repeated spans or no mention among them. Also with
    small batches (``_BATCH_CELLS``) and CEAF-m solved block by block (``_TOGETHER_CELLS``)."""
    monkeypatch.setattr(cc, "_BATCH_CELLS", limits[0])
    monkeypatch.setattr(ca, "_TOGETHER_CELLS", limits[1])
    rng = random.Random(f"batch-{seed}")
    keys, responses = [], []
    for _ in range(rng.choice([1, 2, 30, 80])):
        key, response = _document(rng, rng.choice(_KINDS))
        if rng.random() < 0.1:  # a repeated span: scored alone, by the dense path or the chains
            clusters = response.clusters() or [[(0, 0)]]
            clusters[0].append(rng.choice([m for c in clusters for m in c]))
            response = CorefDocument.from_clusters(clusters)
        keys.append(key)
        responses.append(response)
    rows = cc.batch_counts(responses, keys)
    each = [cc.document_counts(r, k) for r, k in zip(responses, keys)]
    one_by_one = cc.count_rows(each)
    together = cc.batch_document_counts(responses, keys)  # what score coref and coref.score count
    assert [{k: tuple(map(float.hex, v)) for k, v in d.items()} for d in together] == [
        {k: tuple(map(float.hex, d[k])) for k in cc.COUNT_NAMES} for d in each
    ]
    assert rows.shape == one_by_one.shape
    assert (rows.view(np.int64) == one_by_one.view(np.int64)).all()
    for k, r, row in zip(keys, responses, rows):
        if cc._front(k, r) is not None:
            dense = _dense(k, r)
            assert row.tolist() == [x for name in cc.COUNT_NAMES for x in dense[name]]


def test_batch_counts_of_no_document() -> None:
    assert cc.batch_counts([], []).shape == (0, 4 * len(cc.COUNT_NAMES))
    assert cc.batch_document_counts([], []) == []
    with pytest.raises(ValueError, match="1 response documents for 0 key documents"):
        cc.batch_document_counts([CorefDocument.from_clusters([])], [])
    empty = CorefDocument.from_clusters([])
    assert cc.batch_counts([empty], [empty]).tolist() == cc.count_rows([cc.document_counts(empty, empty)]).tolist()


@pytest.mark.parametrize("seed", range(3))
def test_block_labels_are_the_connected_sets(seed: int) -> None:
    """Labels spread with pointer jumping: each entry's smallest connected row, as the union-find of ``_blocks``."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n, m = (int(x) for x in rng.integers(1, 60, size=2))
        linked = rng.random((n, m)) < rng.uniform(0.005, 0.1)
        rows, cols = (x.astype(np.int64) for x in np.nonzero(linked))
        label, simple = ca._block_labels(rows, cols, n, m)
        one, larger = ca._blocks(rows.tolist(), cols.tolist(), n)
        want = np.empty(rows.size, dtype=np.int64)
        want_simple = np.zeros(rows.size, dtype=bool)
        for ks in one:
            want[ks] = min(rows[ks])
            want_simple[ks] = True
        for block_rows, _, ks in larger:
            want[ks] = block_rows[0]
        assert label.tolist() == want.tolist() and simple.tolist() == want_simple.tolist()


def test_batch_stats_refuse_unequal_lengths() -> None:
    from metametric_jax.tasks.coref import coref_batch_stats

    with pytest.raises(ValueError, match="same length"):
        coref_batch_stats([[[0, 1]]], [[[0, 1]], [[2, 3]]])
    stats = coref_batch_stats([[[0, 1]], [[2, 3]]], [[[0, 1]], [[2, 3]]])
    assert {v.shape for v in stats.values()} == {(2, 3)}
    assert stats["muc_recall"].tolist() == [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
