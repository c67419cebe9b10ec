"""Coreference metrics: the CoNLL-2012 reference scorer's own test cases, scorch parity, definitions, accumulator laws.

References:

* ``tests/data/conll2012-scorer-tests``: key/response files and the figures published with scorer v8.01
  (Pradhan et al., ACL 2014);
* ``scorch`` 0.2.0 (an independent Python implementation of MUC, B³, CEAF and BLANC), per document;
* direct set-based definitions written below with exact fractions (MUC by partitions, B³ per mention, CEAF by
  enumerating alignments, BLANC by link sets, LEA by links, after Moosavi and Strube 2016).

Deliberate difference with scorch: BLANC of a document whose key has fewer than two mentions (no link of either
kind). Scorer v8.01 reports 0; scorch reports 1 or 0 depending on the response. Parity is checked on keys with at least
two mentions, and the scorer's convention separately.
"""

from __future__ import annotations

import itertools
import json
import random
import statistics
from fractions import Fraction
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scorch import scores as scorch_scores

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.conll2012 import parse_conll2012, read_conll2012, score_documents, score_files
from metametric_jax.tasks.coref import (
    METRICS,
    CorefDocument,
    CorefMetrics,
    Mention,
    contingency,
    coref_scores,
    host_compute,
)
from metametric_jax.testing import check_accumulator_laws

DATA = Path(__file__).resolve().parent / "data" / "conll2012-scorer-tests"
SAMPLE = Path(__file__).resolve().parents[1] / "metametric_jax" / "data" / "coref"
TIGHT = 1e-9


def _require_data() -> Path:
    if not (DATA / "expected.json").is_file():
        pytest.fail(
            f"The CoNLL-2012 scorer test data is missing: expected {DATA / 'expected.json'} (tests/data/"
            "conll2012-scorer-tests in the repository)."
        )
    return DATA


def _cases() -> list:
    path = DATA / "expected.json"
    if not path.is_file():
        return [pytest.param(None, id="missing-data")]
    return [pytest.param(case, id=case["id"]) for case in json.loads(path.read_text())["cases"]]


# ------------------------------------------------------------------------------------------- reference scorer's cases
def test_all_published_cases_present() -> None:
    cases = json.loads((_require_data() / "expected.json").read_text())["cases"]
    assert len(cases) == 36
    for case in cases:
        assert (DATA / case["key"]).is_file() and (DATA / case["response"]).is_file()


def _tolerance(published: float) -> float:
    """Five-digit (or shorter) decimals are the authors' roundings; longer ones are exact fractions.

    A rounding must be our value rounded to five decimals (half a unit of the fifth digit, tighter than 1e-4).
    """
    decimals = repr(float(published)).split(".")[-1]
    return 5e-6 + 1e-12 if len(decimals) <= 5 else TIGHT


@pytest.mark.parametrize("case", _cases())
def test_reference_scorer_case(case: dict | None) -> None:
    data = _require_data()
    assert case is not None
    scores, _ = score_files(data / case["key"], data / case["response"])
    checked = 0
    for metric, expected in case["expected"].items():
        for figure in ("recall", "precision", "f1"):
            published = float(expected[figure])
            got = scores[metric][figure]
            assert abs(got - published) <= _tolerance(published), (case["id"], metric, figure, got, published)
            checked += 1
    assert checked >= 3


def test_reference_fractions_exactly() -> None:
    """Fractions stated in TestCases.README, compared as fractions."""
    data = _require_data()
    a2, _ = score_files(data / "TC-A.key", data / "TC-A-2.response")
    assert Fraction(a2["bcub"]["recall"]).limit_denominator(1000) == Fraction(7, 18)
    assert Fraction(a2["ceafe"]["recall"]).limit_denominator(1000) == Fraction(3, 5)
    a4, _ = score_files(data / "TC-A.key", data / "TC-A-4.response")
    assert Fraction(a4["bcub"]["precision"]).limit_denominator(1000) == Fraction(17, 42)
    assert Fraction(a4["ceafm"]["f1"]).limit_denominator(1000) == Fraction(8, 13)
    a13, _ = score_files(data / "TC-A.key", data / "TC-A-13.response")
    assert Fraction(a13["bcub"]["precision"]).limit_denominator(1000) == Fraction(6, 49)
    assert abs(a13["bcub"]["recall"] - 17 / 36) < TIGHT


def test_duplicate_mentions_are_removed_like_the_scorer() -> None:
    data = _require_data()
    dedup, _ = score_files(data / "TC-A.key", data / "TC-A-4.response")
    for response in ("TC-A-7.response", "TC-A-8.response", "TC-A-9.response"):
        scores, warnings = score_files(data / "TC-A.key", data / response)
        assert warnings and all("(3, 6)" in w for w in warnings)
        for metric in METRICS:
            for figure in ("recall", "precision", "f1"):
                assert abs(scores[metric][figure] - dedup[metric][figure]) < TIGHT, (response, metric, figure)


# ------------------------------------------------------------------------------------------------------------- LEA
def test_lea_example_from_the_paper() -> None:
    a, b, c, d, e, f, g, h, i = range(9)
    key = CorefDocument.from_clusters([[a, b, c], [d, e, f, g]])
    response = CorefDocument.from_clusters([[a, b], [c, d], [f, g, h, i]])
    lea = coref_scores([key], [response])["lea"]
    assert abs(lea["recall"] - 5 / 21) < TIGHT
    assert abs(lea["precision"] - 1 / 3) < TIGHT
    assert abs(lea["f1"] - 2 * (5 / 21) * (1 / 3) / (5 / 21 + 1 / 3)) < TIGHT


def test_lea_singletons_resolved_only_as_singletons() -> None:
    key = CorefDocument.from_clusters([[0], [1], [2, 3]])
    response = CorefDocument.from_clusters([[0], [1, 2, 3]])
    lea = coref_scores([key], [response])["lea"]
    # key: {0} resolved (1), {1} not (0), {2,3} resolved (2); response: {0} resolved (1), {1,2,3}: 1 of 3 links.
    assert abs(lea["recall"] - 3 / 4) < TIGHT
    assert abs(lea["precision"] - (1 + 3 * Fraction(1, 3)) / 4) < TIGHT


# ---------------------------------------------------------------------------------------- direct definitions (exact)
def _entity_of(partition: list[set[int]]) -> dict[int, int]:
    return {m: i for i, e in enumerate(partition) for m in e}


def _muc_side(key: list[set[int]], response: list[set[int]]) -> tuple[Fraction, Fraction]:
    owner = _entity_of(response)
    num = den = Fraction(0)
    for k in key:
        parts = {owner.get(m, ("missing", m)) for m in k}
        num += len(k) - len(parts)
        den += len(k) - 1
    return num, den


def _bcub_side(key: list[set[int]], response: list[set[int]]) -> tuple[Fraction, Fraction]:
    owner = _entity_of(response)
    num = Fraction(0)
    for k in key:
        for m in k:
            r = response[owner[m]] if m in owner else set()
            num += Fraction(len(k & r), len(k))
    return num, Fraction(sum(len(k) for k in key))


def _ceaf_best(key: list[set[int]], response: list[set[int]], phi) -> Fraction:
    best = Fraction(0)
    slots = list(range(len(response))) + [None] * len(key)
    for perm in itertools.permutations(slots, len(key)):
        total = sum((phi(k, response[j]) for k, j in zip(key, perm) if j is not None), Fraction(0))
        best = max(best, total)
    return best


def _links(partition: list[set[int]]) -> tuple[set, set]:
    coref, non = set(), set()
    for e in partition:
        coref |= {frozenset(p) for p in itertools.combinations(e, 2)}
    for e, f in itertools.combinations(partition, 2):
        non |= {frozenset((x, y)) for x in e for y in f}
    return coref, non


def _lea_side(key: list[set[int]], response: list[set[int]]) -> tuple[Fraction, Fraction]:
    owner = _entity_of(response)
    num = Fraction(0)
    for k in key:
        if len(k) == 1:
            (m,) = k
            resolved = Fraction(int(m in owner and len(response[owner[m]]) == 1))
        else:
            common = sum(1 for x, y in itertools.combinations(k, 2) if x in owner and owner.get(y) == owner[x])
            resolved = Fraction(common, len(k) * (len(k) - 1) // 2)
        num += len(k) * resolved
    return num, Fraction(sum(len(k) for k in key))


def _direct_counts(key: list[set[int]], response: list[set[int]]) -> dict[str, tuple[Fraction, ...]]:
    """(recall num, recall den, precision num, precision den) of every metric, from the definitions."""
    out = {}
    rn, rd = _muc_side(key, response)
    pn, pd = _muc_side(response, key)
    out["muc"] = (rn, rd, pn, pd)
    rn, rd = _bcub_side(key, response)
    pn, pd = _bcub_side(response, key)
    out["bcub"] = (rn, rd, pn, pd)
    m = _ceaf_best(key, response, lambda k, r: Fraction(len(k & r)))
    out["ceafm"] = (m, Fraction(sum(map(len, key))), m, Fraction(sum(map(len, response))))
    e = _ceaf_best(key, response, lambda k, r: Fraction(2 * len(k & r), len(k) + len(r)))
    out["ceafe"] = (e, Fraction(len(key)), e, Fraction(len(response)))
    rn, rd = _lea_side(key, response)
    pn, pd = _lea_side(response, key)
    out["lea"] = (rn, rd, pn, pd)
    shared = len(set().union(*key, set()) & set().union(*response, set()))
    out["mentions"] = (
        Fraction(shared),
        Fraction(sum(map(len, key))),
        Fraction(shared),
        Fraction(sum(map(len, response))),
    )
    kc, kn = _links(key)
    rc, rn_ = _links(response)
    out["blanc_c"] = tuple(Fraction(x) for x in (len(kc & rc), len(kc), len(kc & rc), len(rc)))
    out["blanc_n"] = tuple(Fraction(x) for x in (len(kn & rn_), len(kn), len(kn & rn_), len(rn_)))
    return out


def _div(a: Fraction, b: Fraction) -> Fraction:
    return a / b if b else Fraction(0)


def _f1(r: Fraction, p: Fraction) -> Fraction:
    return 2 * r * p / (r + p) if r + p else Fraction(0)


def _direct_scores(docs: list[tuple[list[set[int]], list[set[int]]]]) -> dict[str, dict[str, Fraction]]:
    """Micro (summed over documents) figures from the direct definitions, BLANC with scorer v8.01's cases."""
    totals: dict[str, list[Fraction]] = {}
    for key, response in docs:
        for name, counts in _direct_counts(key, response).items():
            acc = totals.setdefault(name, [Fraction(0)] * 4)
            totals[name] = [x + y for x, y in zip(acc, counts)]
    out = {}
    for name in ("muc", "bcub", "ceafm", "ceafe", "lea", "mentions"):
        rn, rd, pn, pd = totals[name]
        r, p = _div(rn, rd), _div(pn, pd)
        out[name] = {"recall": r, "precision": p, "f1": _f1(r, p)}
    c, n = totals["blanc_c"], totals["blanc_n"]
    rc, pc, rn_, pn_ = _div(c[0], c[1]), _div(c[2], c[3]), _div(n[0], n[1]), _div(n[2], n[3])
    if c[1] and n[1]:
        out["blanc"] = {"recall": (rc + rn_) / 2, "precision": (pc + pn_) / 2, "f1": (_f1(rc, pc) + _f1(rn_, pn_)) / 2}
    elif c[1]:
        out["blanc"] = {"recall": rc, "precision": pc, "f1": _f1(rc, pc)}
    elif n[1]:
        out["blanc"] = {"recall": rn_, "precision": pn_, "f1": _f1(rn_, pn_)}
    else:
        out["blanc"] = {"recall": Fraction(0), "precision": Fraction(0), "f1": Fraction(0)}
    return out


def _random_partition(rng: random.Random, mentions: list[int], max_entities: int) -> list[set[int]]:
    k = rng.randint(1, max_entities)
    groups: list[set[int]] = [set() for _ in range(k)]
    for m in mentions:
        groups[rng.randrange(k)].add(m)
    return [g for g in groups if g]


def _random_pair(rng: random.Random, n: int, max_entities: int) -> tuple[list[set[int]], list[set[int]]]:
    universe = list(range(n + 3))
    key_mentions = rng.sample(universe, rng.randint(1, n))
    resp_mentions = rng.sample(universe, rng.randint(0, n))
    key = _random_partition(rng, key_mentions, max_entities)
    response = _random_partition(rng, resp_mentions, max_entities) if resp_mentions else []
    return key, response


def _doc(partition: list[set[int]]) -> CorefDocument:
    return CorefDocument.from_clusters([sorted(e) for e in partition])


@pytest.mark.parametrize("seed", range(8))
def test_contingency_solver_equals_definitions(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(12):
        key, response = _random_pair(rng, n=rng.randint(1, 8), max_entities=4)
        expected = _direct_scores([(key, response)])
        got = coref_scores([_doc(key)], [_doc(response)])
        for metric, figures in expected.items():
            for figure, value in figures.items():
                assert abs(got[metric][figure] - float(value)) < TIGHT, (key, response, metric, figure)


def test_micro_average_over_documents_equals_definitions() -> None:
    rng = random.Random(123)
    for _ in range(6):
        docs = [_random_pair(rng, n=rng.randint(1, 7), max_entities=4) for _ in range(rng.randint(2, 5))]
        expected = _direct_scores(docs)
        got = coref_scores([_doc(k) for k, _ in docs], [_doc(r) for _, r in docs])
        for metric, figures in expected.items():
            for figure, value in figures.items():
                assert abs(got[metric][figure] - float(value)) < TIGHT, (docs, metric, figure)
        conll = (got["muc"]["f1"] + got["bcub"]["f1"] + got["ceafe"]["f1"]) / 3
        assert abs(got["conll"]["f1"] - conll) < TIGHT


def test_contingency_matrix() -> None:
    key = CorefDocument.from_clusters([[(0, 1), 3, 5], [7, 8]])
    response = CorefDocument.from_clusters([[(0, 1), 7], [3, 5, 8, 9], [(0, 1)]])
    table = contingency(key, response)
    assert table.counts.tolist() == [[1, 2], [1, 1]]
    assert table.key_sizes.tolist() == [3, 2]
    assert table.response_sizes.tolist() == [2, 4]  # the repeated (0, 1) is dropped with its entity


# ------------------------------------------------------------------------------------------------------ scorch parity
def _scorch(key: list[set[int]], response: list[set[int]]) -> dict[str, tuple[float, float, float]]:
    out = {}
    for name, fn in (
        ("muc", scorch_scores.muc),
        ("bcub", scorch_scores.b_cubed),
        ("ceafm", scorch_scores.ceaf_m),
        ("ceafe", scorch_scores.ceaf_e),
        ("blanc", scorch_scores.blanc),
    ):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[name] = tuple(float(x) for x in fn(key, response))
        except statistics.StatisticsError:
            # scorch's CEAF passes NumPy zeros to statistics.harmonic_mean, which then fails: only when key and
            # response share no mention, where R = P = F = 0.
            assert name.startswith("ceaf") and not set().union(*key) & set().union(*response, set())
            out[name] = (0.0, 0.0, 0.0)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_parity_with_scorch(seed: int) -> None:
    rng = random.Random(1000 + seed)
    compared = 0
    for _ in range(25):
        key, response = _random_pair(rng, n=rng.randint(2, 30), max_entities=rng.randint(1, 10))
        if sum(map(len, key)) < 2:
            continue
        ours = coref_scores([_doc(key)], [_doc(response)])
        for metric, (r, p, f) in _scorch(key, response).items():
            assert abs(ours[metric]["recall"] - r) < TIGHT, (key, response, metric)
            assert abs(ours[metric]["precision"] - p) < TIGHT, (key, response, metric)
            assert abs(ours[metric]["f1"] - f) < TIGHT, (key, response, metric)
            compared += 1
    assert compared >= 50


def test_blanc_without_key_links_is_zero_like_the_scorer() -> None:
    key = CorefDocument.from_clusters([[4]])
    for response in ([[4]], [[4, 5]], []):
        assert coref_scores([key], [CorefDocument.from_clusters(response)])["blanc"] == {
            "recall": 0.0,
            "precision": 0.0,
            "f1": 0.0,
        }


# --------------------------------------------------------------------------------------------------- accumulator laws
def _states(docs):
    return [CorefMetrics.from_model_output([_doc(r)], [_doc(k)]) for k, r in docs]


def _sums(state) -> dict[str, np.ndarray]:
    return {k: np.asarray(v.sums, dtype=np.float64).sum(axis=-1) for k, v in state.states.items()}


def _assert_same(a, b) -> None:
    sa, sb = _sums(a), _sums(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_allclose(sa[k], sb[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_merge_per_document_equals_one_batch() -> None:
    rng = random.Random(7)
    docs = [_random_pair(rng, n=rng.randint(1, 12), max_entities=5) for _ in range(9)]
    batch = CorefMetrics.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
    states = _states(docs)
    merged = CorefMetrics.empty()
    for s in states:
        merged = merged.merge(s)
    _assert_same(batch, merged)
    # commutativity / associativity / identity
    _assert_same(states[0].merge(states[1]), states[1].merge(states[0]))
    _assert_same(states[0].merge(states[1]).merge(states[2]), states[0].merge(states[1].merge(states[2])))
    _assert_same(CorefMetrics.empty().merge(states[3]), states[3])
    # stacked states reduce to the merge
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    _assert_same(stacked.reduce(), merged)
    # the host figures agree
    a, b = host_compute(batch), host_compute(merged)
    for metric in a:
        for figure in a[metric]:
            assert abs(a[metric][figure] - b[metric][figure]) < TIGHT


def test_library_accumulator_laws() -> None:
    rng = random.Random(3)
    docs = [_random_pair(rng, n=rng.randint(1, 12), max_entities=5) for _ in range(6)]
    responses, keys = [_doc(r) for _, r in docs], [_doc(k) for k, _ in docs]
    check_accumulator_laws(CorefMetrics, responses, keys, batch_size=2, weights=np.arange(1.0, 7.0))


def test_compute_jits_and_matches_host_figures() -> None:
    rng = random.Random(11)
    docs = [_random_pair(rng, n=rng.randint(2, 12), max_entities=5) for _ in range(5)]
    state = CorefMetrics.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
    device = jax.jit(lambda s: s.compute())(state)
    host = host_compute(state)
    for metric in (*METRICS, "conll"):
        for figure, value in host[metric].items():
            assert abs(float(device[metric][figure]) - value) < 1e-5, (metric, figure)


def test_macro_figures_are_means_of_documents() -> None:
    rng = random.Random(5)
    docs = [_random_pair(rng, n=rng.randint(2, 10), max_entities=4) for _ in range(6)]
    state = CorefMetrics.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
    results = state.compute()
    per_doc = [_direct_scores([d]) for d in docs]
    for metric in ("muc", "bcub", "ceafe", "lea"):
        mean_r = float(sum(s[metric]["recall"] for s in per_doc) / len(docs))
        mean_p = float(sum(s[metric]["precision"] for s in per_doc) / len(docs))
        assert abs(float(results[f"{metric}_recall"]["macro_recall"]) - mean_r) < 1e-5
        assert abs(float(results[f"{metric}_precision"]["macro_precision"]) - mean_p) < 1e-5


# -------------------------------------------------------------------------------------------------------- structures
def test_structures_validate() -> None:
    with pytest.raises(ValueError, match="0 <= start <= end"):
        Mention(3, 2)
    with pytest.raises(TypeError, match="token index"):
        Mention("a", 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one mention"):
        CorefDocument.from_clusters([[]])
    with pytest.raises(TypeError, match="Expected a mention"):
        CorefDocument.from_clusters([[(1, 2, 3)]])
    with pytest.raises(ValueError, match="one response per key"):
        coref_scores([[[0]]], [])
    doc = CorefDocument.from_clusters([[(0, 1), 4], [4]], name="d", part=2)
    assert doc.key == ("d", 2)
    assert doc.repeated_mentions() == [Mention(4, 4)]
    assert doc.clusters() == [[(0, 1), (4, 4)], [(4, 4)]]


# ------------------------------------------------------------------------------------------------------------- reader
def test_reader_full_column_format_and_sample() -> None:
    keys = read_conll2012(SAMPLE / "sample.key")
    responses = read_conll2012(SAMPLE / "sample.response")
    assert list(keys) == [("sample/news_001", 0), ("sample/news_002", 0), ("sample/news_002", 1)]
    assert keys[("sample/news_001", 0)].clusters() == [
        [(0, 1), (3, 3), (18, 18)],
        [(6, 7), (9, 10), (12, 12)],
        [(12, 14), (20, 20)],
    ]
    scores, warnings = score_files(SAMPLE / "sample.key", SAMPLE / "sample.response")
    assert warnings == []
    expected = _direct_scores(
        [
            ([set(map(tuple, c)) for c in keys[d].clusters()], [set(map(tuple, c)) for c in responses[d].clusters()])
            for d in keys
        ]
    )
    for metric, figures in expected.items():
        for figure, value in figures.items():
            assert abs(scores[metric][figure] - float(value)) < TIGHT
    perfect, _ = score_files(SAMPLE / "sample.key", SAMPLE / "sample.key")
    assert all(perfect[m]["f1"] == pytest.approx(1.0, abs=TIGHT) for m in (*METRICS, "conll"))


def test_reader_column_syntax() -> None:
    text = [
        "#begin document (x); part 001",
        "x 1 0 w (3|(12)",
        "x 1 1 w -",
        "",
        "x 1 0 w 3)",
        "x 1 1 w (1(3",
        "x 1 2 w 3)1)",
        "x 1 3 w (5+2)",
        "#end document",
    ]
    docs = parse_conll2012(text)
    doc = docs[("x", 1)]
    assert doc.clusters() == [[(0, 0)], [(0, 2), (3, 4)], [(3, 4)]]  # entities in the scorer's order


def test_missing_and_extra_documents(tmp_path: Path) -> None:
    def write(path: Path, docs: dict[str, list[str]]) -> None:
        lines = []
        for name, column in docs.items():
            lines.append(f"#begin document ({name}); part 000")
            lines += [f"{name}\t0\t{i}\tw\t{c}" for i, c in enumerate(column)]
            lines.append("#end document")
        path.write_text("\n".join(lines) + "\n")

    write(tmp_path / "key", {"a": ["(1)", "(1)", "(2)"], "b": ["(1", "1)", "(1)"]})
    write(tmp_path / "resp", {"a": ["(1)", "(2)", "(2)"], "c": ["(1)", "(1)", "-"]})
    scores, warnings = score_files(tmp_path / "key", tmp_path / "resp")
    assert any("(b)" in w and "empty response" in w for w in warnings)
    assert any("(c)" in w and "ignored" in w for w in warnings)
    key_a = CorefDocument.from_clusters([[0, 1], [2]])
    key_b = CorefDocument.from_clusters([[(0, 1), 2]])
    resp_a = CorefDocument.from_clusters([[0], [1, 2]])
    expected = coref_scores([key_a, key_b], [resp_a, CorefDocument(())])
    for metric in expected:
        for figure in expected[metric]:
            assert abs(scores[metric][figure] - expected[metric][figure]) < TIGHT
    direct = _direct_scores([([{0, 1}, {2}], [{0}, {1, 2}]), ([{(0, 1), 2}], [])])
    assert abs(scores["muc"]["recall"] - float(direct["muc"]["recall"])) < TIGHT
    again, _ = score_documents(read_conll2012(tmp_path / "key"), read_conll2012(tmp_path / "resp"), batch_size=1)
    for metric in scores:
        for figure in scores[metric]:
            assert abs(again[metric][figure] - scores[metric][figure]) < TIGHT


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (["#begin document (d); part 000", "d 0 0 w (1", "d 0 1 w -", "#end document"], 4, "opened on line 2"),
        (["#begin document (d); part 000", "d 0 0 w -", "d 0 1 w 7)", "#end document"], 3, "no mention of entity 7"),
        (["#begin document (d); part 000", "d 0 0 w (1x", "#end document"], 2, "coreference column"),
        (["#begin document (d); part 000", "d 0 0 w |", "#end document"], 2, "coreference column"),
        (["d 0 0 w -", "#begin document (d); part 000", "#end document"], 1, "outside a document"),
        (["#begin document (d); part 000", "d 0 0 w (1)"], 3, "ends inside document"),
        (["#begin document (d); part 000", "#begin document (e); part 000"], 2, "before a new"),
        (["#end document"], 1, "outside a document"),
        (
            ["#begin document (d); part 000", "#end document", "#begin document (d); part 000", "#end document"],
            3,
            "occurs twice",
        ),
    ],
)
def test_bad_files_raise_with_line_numbers(tmp_path: Path, lines: list[str], line: int, message: str) -> None:
    path = tmp_path / "bad.conll"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFormatError, match=message) as info:
        read_conll2012(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert f"{path}:{line}:" in str(info.value)


def test_too_many_repeated_mentions_refused(tmp_path: Path) -> None:
    (tmp_path / "key").write_text("#begin document (d); part 000\nd 0 0 w (1)\nd 0 1 w (1)\n#end document\n")
    column = "(1)" + "(2)" * 11
    (tmp_path / "resp").write_text(f"#begin document (d); part 000\nd 0 0 w {column}\nd 0 1 w (1)\n#end document\n")
    with pytest.raises(InputFormatError, match="11 repeated mentions"):
        score_files(tmp_path / "key", tmp_path / "resp")
    scores, warnings = score_files(tmp_path / "key", tmp_path / "resp", max_repeated_mentions=None)
    assert scores["muc"]["recall"] == pytest.approx(1.0, abs=TIGHT)
    assert any("occurs 12 times" in w for w in warnings)


def test_progress_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    quiet, _ = score_files(SAMPLE / "sample.key", SAMPLE / "sample.response")
    loud, _ = score_files(SAMPLE / "sample.key", SAMPLE / "sample.response", progress=True)
    captured = capsys.readouterr()
    assert "scored 3/3 documents" in captured.err and captured.out == ""
    assert loud == quiet
