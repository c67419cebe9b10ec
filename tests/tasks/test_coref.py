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

import doctest
import itertools
import json
import math
import random
import re
import statistics
from collections import Counter
from fractions import Fraction
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scorch import scores as scorch_scores

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.coref import (
    METRICS,
    CorefDocument,
    CorefMetric,
    Mention,
    contingency,
    document_counts,
    score,
    score_files,
    state_scores,
)
from metametric_jax.tasks.coref_alignment import _alignments
from metametric_jax.tasks.coref_counts import best_alignment, max_assignment
from metametric_jax.tasks.readers.conll2012 import parse_conll2012, read_conll2012
from metametric_jax.testing import check_accumulator_laws

DATA = Path(__file__).resolve().parents[1] / "data" / "conll2012-scorer-tests"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "coref"
SAMPLE = Path(__file__).resolve().parents[2] / "metametric_jax" / "data" / "coref"
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
def files(key: Path, response: Path, **options):
    """Scores and warnings of a key and a response file."""
    report = score_files(predictions=response, references=key, **options)
    return report.scores, report.warnings


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
    scores, _ = files(data / case["key"], data / case["response"])
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
    a2, _ = files(data / "TC-A.key", data / "TC-A-2.response")
    assert Fraction(a2["bcub"]["recall"]).limit_denominator(1000) == Fraction(7, 18)
    assert Fraction(a2["ceafe"]["recall"]).limit_denominator(1000) == Fraction(3, 5)
    a4, _ = files(data / "TC-A.key", data / "TC-A-4.response")
    assert Fraction(a4["bcub"]["precision"]).limit_denominator(1000) == Fraction(17, 42)
    assert Fraction(a4["ceafm"]["f1"]).limit_denominator(1000) == Fraction(8, 13)
    a13, _ = files(data / "TC-A.key", data / "TC-A-13.response")
    assert Fraction(a13["bcub"]["precision"]).limit_denominator(1000) == Fraction(6, 49)
    assert abs(a13["bcub"]["recall"] - 17 / 36) < TIGHT


def test_duplicate_mentions_are_removed_like_the_scorer() -> None:
    data = _require_data()
    dedup, _ = files(data / "TC-A.key", data / "TC-A-4.response")
    for response in ("TC-A-7.response", "TC-A-8.response", "TC-A-9.response"):
        scores, warnings = files(data / "TC-A.key", data / response)
        repeats = [w for w in warnings if "repeated spans" in w]
        assert repeats and all("(3, 6) x" in w and "(LuoTestCase)" in w for w in repeats)
        for metric in METRICS:
            for figure in ("recall", "precision", "f1"):
                assert abs(scores[metric][figure] - dedup[metric][figure]) < TIGHT, (response, metric, figure)


# ------------------------------------------------------------------------------------------------------------- LEA
def test_lea_example_from_the_paper() -> None:
    a, b, c, d, e, f, g, h, i = range(9)
    key = CorefDocument.from_clusters([[a, b, c], [d, e, f, g]])
    response = CorefDocument.from_clusters([[a, b], [c, d], [f, g, h, i]])
    lea = score([response], [key])["lea"]
    assert abs(lea["recall"] - 5 / 21) < TIGHT
    assert abs(lea["precision"] - 1 / 3) < TIGHT
    assert abs(lea["f1"] - 2 * (5 / 21) * (1 / 3) / (5 / 21 + 1 / 3)) < TIGHT


def test_lea_singletons_resolved_only_as_singletons() -> None:
    key = CorefDocument.from_clusters([[0], [1], [2, 3]])
    response = CorefDocument.from_clusters([[0], [1, 2, 3]])
    lea = score([response], [key])["lea"]
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
        got = score([_doc(response)], [_doc(key)])
        for metric, figures in expected.items():
            for figure, value in figures.items():
                assert abs(got[metric][figure] - float(value)) < TIGHT, (key, response, metric, figure)


def test_micro_average_over_documents_equals_definitions() -> None:
    rng = random.Random(123)
    for _ in range(6):
        docs = [_random_pair(rng, n=rng.randint(1, 7), max_entities=4) for _ in range(rng.randint(2, 5))]
        expected = _direct_scores(docs)
        got = score([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
        for metric, figures in expected.items():
            for figure, value in figures.items():
                assert abs(got[metric][figure] - float(value)) < TIGHT, (docs, metric, figure)
        conll = (got["muc"]["f1"] + got["bcub"]["f1"] + got["ceafe"]["f1"]) / 3
        assert abs(got["conll"]["f1"] - conll) < TIGHT


def test_contingency_matrix() -> None:
    key = CorefDocument.from_clusters([[(0, 1), 3, 5], [7, 8]])
    response = CorefDocument.from_clusters([[(0, 1), 7], [3, 5, 8, 9], [(0, 1)]])
    table = contingency(response, key)
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
        ours = score([_doc(response)], [_doc(key)])
        for metric, (r, p, f) in _scorch(key, response).items():
            assert abs(ours[metric]["recall"] - r) < TIGHT, (key, response, metric)
            assert abs(ours[metric]["precision"] - p) < TIGHT, (key, response, metric)
            assert abs(ours[metric]["f1"] - f) < TIGHT, (key, response, metric)
            compared += 1
    assert compared >= 50


def test_blanc_without_key_links_is_zero_like_the_scorer() -> None:
    key = CorefDocument.from_clusters([[4]])
    for response in ([[4]], [[4, 5]], []):
        blanc = score([CorefDocument.from_clusters(response)], [key])["blanc"]
        assert (blanc["recall"], blanc["precision"], blanc["f1"]) == (0.0, 0.0, 0.0)


# --------------------------------------------------------------------------------------------------- accumulator laws
def _states(docs):
    return [CorefMetric.from_model_output([_doc(r)], [_doc(k)]) for k, r in docs]


def flat(tree, prefix: str = "") -> dict[str, float]:
    """Nested dicts of numbers as ``{"a.b.c": value}``."""
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = float(v)
    return out


def _assert_same(a, b) -> None:
    sa = flat({k: v.totals() for k, v in a.states.items()})
    sb = flat({k: v.totals() for k, v in b.states.items()})
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k] == pytest.approx(sb[k], rel=1e-12, abs=1e-12), k


def test_merge_per_document_equals_one_batch() -> None:
    rng = random.Random(7)
    docs = [_random_pair(rng, n=rng.randint(1, 12), max_entities=5) for _ in range(9)]
    batch = CorefMetric.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
    states = _states(docs)
    merged = CorefMetric.empty()
    for s in states:
        merged = merged.merge(s)
    _assert_same(batch, merged)
    # commutativity / associativity / identity
    _assert_same(states[0].merge(states[1]), states[1].merge(states[0]))
    _assert_same(states[0].merge(states[1]).merge(states[2]), states[0].merge(states[1].merge(states[2])))
    _assert_same(CorefMetric.empty().merge(states[3]), states[3])
    # stacked states reduce to the merge
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    _assert_same(stacked.reduce(), merged)
    # the host figures agree
    a, b = flat(state_scores(batch)), flat(state_scores(merged))
    assert a.keys() == b.keys()
    for figure in a:
        assert abs(a[figure] - b[figure]) < TIGHT, figure
    # and they are the figures of score()
    direct = flat(score([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs]))
    assert direct.keys() == a.keys()
    for figure in a:
        assert abs(a[figure] - direct[figure]) < TIGHT, figure


def test_library_accumulator_laws() -> None:
    rng = random.Random(3)
    docs = [_random_pair(rng, n=rng.randint(1, 12), max_entities=5) for _ in range(6)]
    responses, keys = [_doc(r) for _, r in docs], [_doc(k) for k, _ in docs]
    check_accumulator_laws(CorefMetric, responses, keys, batch_size=2, weights=np.arange(1.0, 7.0))


def test_compute_jits_and_matches_host_figures() -> None:
    rng = random.Random(11)
    docs = [_random_pair(rng, n=rng.randint(2, 12), max_entities=5) for _ in range(5)]
    state = CorefMetric.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
    device = jax.jit(lambda s: s.compute())(state)
    host = state_scores(state)
    for metric in (*METRICS, "conll"):
        for figure in ("recall", "precision", "f1") if metric != "conll" else ("f1",):
            assert abs(float(device[metric][figure]) - host[metric][figure]) < 1e-5, (metric, figure)


def test_macro_figures_are_means_of_documents() -> None:
    rng = random.Random(5)
    docs = [_random_pair(rng, n=rng.randint(2, 10), max_entities=4) for _ in range(6)]
    state = CorefMetric.from_model_output([_doc(r) for _, r in docs], [_doc(k) for k, _ in docs])
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
    with pytest.raises(ValueError, match="one entry per document; found 0 predictions and 1 reference"):
        score([], [[[0]]])
    doc = CorefDocument.from_clusters([[(0, 1), 4], [4]], name="d", part=2)
    assert doc.key == ("d", 2)
    assert doc.repeated_mentions() == [Mention(4, 4)]
    assert doc.clusters() == [[(0, 1), (4, 4)], [(4, 4)]]


# ------------------------------------------------------------------------------------------------------------- reader
def test_reader_full_column_format_and_sample() -> None:
    keys = read_conll2012(SAMPLE / "sample.key")
    responses = read_conll2012(SAMPLE / "sample.response")
    assert list(keys) == [("sample/news_001", 0), ("sample/news_002", 0), ("sample/news_002", 1)]
    assert keys[("sample/news_001", 0)].entities == (
        ((0, 1), (3, 3), (18, 18)),
        ((6, 7), (9, 10), (12, 12)),
        ((12, 14), (20, 20)),
    )
    scores, warnings = files(SAMPLE / "sample.key", SAMPLE / "sample.response")
    assert warnings == []
    expected = _direct_scores(
        [([set(c) for c in keys[d].entities], [set(c) for c in responses[d].entities]) for d in keys]
    )
    for metric, figures in expected.items():
        for figure, value in figures.items():
            assert abs(scores[metric][figure] - float(value)) < TIGHT
    perfect, _ = files(SAMPLE / "sample.key", SAMPLE / "sample.key")
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
        "x 1 3 w (5+2)|(322",
        "x 1 4 w 322)|249",
        "x 1 5 w (01)|(1)",
        "#end document",
    ]
    doc = parse_conll2012(text)[("x", 1)]
    # entities in the scorer's order (one-token mentions, then openings, then closings of each line), numbers compared
    # as written ("01" is not "1"), "(5+2)" dropped, "249" outside any mention ignored
    assert doc.entities == (((0, 0),), ((0, 2), (3, 4)), ((3, 4), (7, 7)), ((5, 6),), ((7, 7),))
    assert doc.bare_numbers == (9,)
    assert doc.n_tokens == 8 and doc.words == ("w",) * 8


def test_bare_entity_numbers_read_as_the_scorer_reads_them() -> None:
    doc = read_conll2012(FIXTURES / "bare_numbers.key")[("bare", 0)]
    assert doc.entities == (((0, 1), (3, 3)), ((2, 2),), ((4, 4),), ((6, 7),))
    scores, warnings = files(FIXTURES / "bare_numbers.key", FIXTURES / "bare_numbers.response")
    assert any("bare_numbers.key: 2 coreference column(s) hold an entity number outside" in w for w in warnings)
    assert any("bare_numbers.response: 2 coreference column(s)" in w for w in warnings)


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
    report = score_files(predictions=tmp_path / "resp", references=tmp_path / "key")
    assert any("(b)" in w and "empty response" in w for w in report.warnings)
    assert any("(c)" in w and "ignored" in w for w in report.warnings)
    assert [item["id"] for item in report.items] == ["(a); part 000", "(b); part 000"]
    key_a = CorefDocument.from_clusters([[0, 1], [2]])
    key_b = CorefDocument.from_clusters([[(0, 1), 2]])
    resp_a = CorefDocument.from_clusters([[0], [1, 2]])
    expected = flat(score([resp_a, CorefDocument(())], [key_a, key_b]))
    got = flat(report.scores)
    assert got.keys() == expected.keys()
    for figure in expected:
        assert abs(got[figure] - expected[figure]) < TIGHT, figure
    direct = _direct_scores([([{0, 1}, {2}], [{0}, {1, 2}]), ([{(0, 1), 2}], [])])
    assert abs(report.scores["muc"]["recall"] - float(direct["muc"]["recall"])) < TIGHT
    per_doc = flat({k: v for k, v in report.items[0].items() if k != "id"})
    alone = flat(score([resp_a], [key_a]))
    assert all(abs(per_doc[k] - alone[k]) < TIGHT for k in alone)
    assert report.items[1]["muc"]["recall"] == 0.0 and report.items[1]["muc"]["recall_den"] == 1.0


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (["#begin document (d); part 000", "d 0 0 w (1", "d 0 1 w -", "#end document"], 4, "opened on line 2"),
        (["#begin document (d); part 000", "d 0 0 w -", "d 0 1 w 7)", "#end document"], 3, "no mention of entity 7"),
        (["#begin document (d); part 000", "d 0 0 w (1x", "#end document"], 2, "coreference column"),
        (["#begin document (d); part 000", "d 0 0 w |", "#end document"], 2, "coreference column"),
        (["#begin document (d); part 000", "d 0 0 Mary", "#end document"], 2, "coreference column"),
        (["d 0 0 w -", "#begin document (d); part 000", "#end document"], 1, "outside a document"),
        (["#begin document (d); part 000", "d 0 0 w (1)"], 2, "ends inside document"),
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
    assert "\n" not in str(info.value)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.conll"
    path.write_bytes("#begin document (d); part 000\nd 0 0 caf\u00e9 (1)\n#end document\n".encode("latin-1"))
    with pytest.raises(InputFormatError, match="expected UTF-8 text; found the byte 0xe9") as info:
        read_conll2012(path)
    assert info.value.line == 2


def test_bom_crlf_and_spaces_are_read_alike(tmp_path: Path) -> None:
    clean = (FIXTURES / "repeats.key").read_text()
    variants = {
        "bom": "\ufeff" + clean,
        "crlf": clean.replace("\n", "\r\n"),
        "spaces": clean.replace("\t", "   "),
        "bom_crlf_spaces": "\ufeff" + clean.replace("\t", " ").replace("\n", "\r\n"),
    }
    expected = read_conll2012(FIXTURES / "repeats.key")
    for name, text in variants.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        got = read_conll2012(path)
        assert [d.entities for d in got.values()] == [d.entities for d in expected.values()], name
        assert [d.doc_id for d in got.values()] == [d.doc_id for d in expected.values()], name


# ------------------------------------------------------------------------------------------- key/response alignment
def _doc_lines(name: str, columns: list[str], words: list[str] | None = None, part: str = "000") -> list[str]:
    words = words or [f"w{i}" for i in range(len(columns))]
    rows = [f"{name}\t0\t{i}\t{w}\t{c}" for i, (w, c) in enumerate(zip(words, columns))]
    return [f"#begin document ({name}); part {part}", *rows, "#end document"]


def test_response_missing_a_token_line_is_an_error(tmp_path: Path) -> None:
    key, response = tmp_path / "key.conll", tmp_path / "response.conll"
    key.write_text("\n".join(_doc_lines("d", ["(1)", "-", "(2)", "(1)", "-", "(2)"])) + "\n")
    lines = _doc_lines("d", ["(1)", "-", "(2)", "(1)", "-", "(2)"])
    del lines[3]  # the token line of w2
    response.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFormatError) as info:
        score_files(predictions=response, references=key)
    message = str(info.value)
    assert info.value.path == str(response) and info.value.line == 4
    assert "document (d); part 000 has 5 tokens here and 6 in" in message and str(key) in message
    assert "line 4 (token 3, 'w3') here and line 4 (token 3, 'w2')" in message
    assert "\n" not in message


def test_response_with_a_duplicated_line_is_an_error(tmp_path: Path) -> None:
    key, response = tmp_path / "key.conll", tmp_path / "response.conll"
    lines = _doc_lines("d", ["(1)", "-", "(1)"])
    key.write_text("\n".join(lines) + "\n")
    response.write_text("\n".join([*lines[:3], lines[2], *lines[3:]]) + "\n")
    with pytest.raises(InputFormatError, match=r"has 4 tokens here and 3 in .*token 3, 'w1'\) here") as info:
        score_files(predictions=response, references=key)
    assert info.value.line == 4


def test_two_column_files_compare_token_counts(tmp_path: Path) -> None:
    key, response = tmp_path / "key", tmp_path / "response"
    key.write_text("#begin document (d);\nd (1)\nd -\nd (1)\n#end document\n")
    response.write_text("#begin document (d);\nd (1)\nd (1)\n#end document\n")
    with pytest.raises(InputFormatError, match=r"has 2 tokens here and 3 in .*line 4 \('#end document'") as info:
        score_files(predictions=response, references=key)
    assert info.value.line == 4


def test_other_words_warn_or_refuse(tmp_path: Path) -> None:
    key, response = tmp_path / "key", tmp_path / "response"
    key.write_text("\n".join(_doc_lines("d", ["(1)", "-", "(1)"], ["a", "b", "c"])) + "\n")
    response.write_text("\n".join(_doc_lines("d", ["(1)", "-", "(1)"], ["a", "x", "c"])) + "\n")
    report = score_files(predictions=response, references=key)
    assert any("other words" in w and "'x'" in w and "'b'" in w for w in report.warnings)
    assert report.scores["muc"]["f1"] == 1.0
    with pytest.raises(InputFormatError, match="has other words here"):
        score_files(predictions=response, references=key, check_words=True)


def test_part_spelling_matched_with_a_warning() -> None:
    report = score_files(predictions=FIXTURES / "part_spelling.response", references=FIXTURES / "part_spelling.key")
    same = score_files(predictions=FIXTURES / "part_spelling_same.response", references=FIXTURES / "part_spelling.key")
    assert report.scores == same.scores
    assert [w for w in report.warnings if "'(ps_one); part 0' in the key and '(ps_one); part 000'" in w]
    assert not same.warnings
    # scorer v8.01 scores the differently spelled document against an empty response (its output is stored)
    assert parse_scorer_output(FIXTURES / "scorer" / "part_spelling.txt")[("muc", "Coreference")][0] == "0"


def test_too_many_repeated_mentions_refused_by_the_scorers_rule(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("#begin document (d); part 000\nd 0 0 w (1)\nd 0 1 w (1)\n#end document\n")
    for repeats, refused in ((10, False), (11, True)):
        response = tmp_path / f"resp{repeats}"
        column = "(1)" * (repeats + 1) + "(7(7(7"  # (0, 1) is not a key mention: the scorer does not count it
        response.write_text(f"#begin document (d); part 000\nd 0 0 w {column}\nd 0 1 w (1)7)7)7)\n#end document\n")
        if refused:
            with pytest.raises(InputFormatError, match=r"too many repeated mentions \(11 > 10\) in the response"):
                score_files(predictions=response, references=key)
        else:
            assert score_files(predictions=response, references=key).scores["muc"]["recall"] == 1.0
    report = score_files(predictions=response, references=key, max_repeated_mentions=None)
    assert report.scores["muc"]["recall"] == pytest.approx(1.0, abs=TIGHT)
    assert any("(0, 0) x12" in w for w in report.warnings)
    stored = (FIXTURES / "scorer" / "too_many_repeats.txt").read_text()
    assert "Found too many repeated mentions (> 10) in the response, so refusing to score." in stored
    with pytest.raises(InputFormatError, match="too many repeated mentions"):
        score_files(predictions=FIXTURES / "too_many_repeats.response", references=FIXTURES / "repeats.key")


def test_progress_callback() -> None:
    calls = []
    report = score_files(
        predictions=SAMPLE / "sample.response", references=SAMPLE / "sample.key", progress=lambda *a: calls.append(a)
    )
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert report.scores == score_files(predictions=SAMPLE / "sample.response", references=SAMPLE / "sample.key").scores


def test_unknown_options_raise() -> None:
    with pytest.raises(TypeError):
        score_files(SAMPLE / "sample.response", SAMPLE / "sample.key")  # type: ignore[misc]
    with pytest.raises(TypeError):
        score_files(predictions=SAMPLE / "sample.response", references=SAMPLE / "sample.key", metric="muc")
    with pytest.raises(ValueError, match="repeated_mentions must be one of"):
        score([[[0]]], [[[0]]], repeated_mentions="once")


# ----------------------------------------------------------------------------------------- scorer.pl's own outputs
_SCORER_LINE = re.compile(
    r"^(Identification of Mentions|Coreference|Coreference links|Non-coreference links|BLANC)?:? ?Recall: "
    r"\((\S+) / (\S+)\) (\S+)%\tPrecision: \((\S+) / (\S+)\) (\S+)%\tF1: (\S+)%$"
)


def parse_scorer_output(path: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(metric, line kind): (R num, R den, R %, P num, P den, P %, F1 %)}`` of scorer.pl's totals, as printed."""
    out, metric = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("METRIC "):
            metric = line.split()[1].rstrip(":")
        m = _SCORER_LINE.match(line)
        if m and m.group(1):
            out[(metric, m.group(1))] = m.groups()[1:]
    return out


def parse_scorer_documents(path: Path) -> tuple[dict, dict]:
    """Per-document figures ``{(metric, document): (...)}`` and entity dumps ``{document: [key, response]}``."""
    figures_, entities, metric, document, current = {}, {}, None, None, None
    for line in path.read_text().splitlines():
        if line.startswith("METRIC "):
            metric = line.split()[1].rstrip(":")
        elif line.startswith("File "):
            current = []
            if metric == "muc":
                entities.setdefault(line[5:-1], []).append(current)
        elif line.startswith("Entity "):
            current.append(tuple(tuple(int(x) for x in p.strip("()").split(",")) for p in line.split(": ")[1].split()))
        elif line.startswith("Recall: "):
            figures_[(metric, document)] = _SCORER_LINE.match(line).groups()[1:]
        elif line.endswith(":") and not line.startswith(("====>", "version")):
            document = line[:-1]
    return figures_, entities


def printed(value: float) -> str:
    """A number as Perl prints it (15 significant digits)."""
    return f"{value:.15g}"


def truncated(value: float) -> str:
    """A fraction as scorer.pl prints a percentage: ``int(x * 10000) / 100``."""
    return printed(math.trunc(value * 10000) / 100)


def as_printed(f: dict) -> tuple[str, ...]:
    return (
        printed(f["recall_num"]),
        printed(f["recall_den"]),
        truncated(f["recall"]),
        printed(f["precision_num"]),
        printed(f["precision_den"]),
        truncated(f["precision"]),
        truncated(f["f1"]),
    )


def _ours(scores: dict, metric: str, kind: str) -> tuple[str, ...]:
    if kind == "Identification of Mentions":
        return as_printed(scores["mentions"])
    if kind == "Coreference":
        return as_printed(scores[metric])
    if kind == "Coreference links":
        return as_printed(scores["blanc"]["coreference_links"])
    if kind == "Non-coreference links":
        return as_printed(scores["blanc"]["non_coreference_links"])
    b = scores["blanc"]
    return as_printed(
        {**b, "recall_num": b["recall"], "precision_num": b["precision"], "recall_den": 1, "precision_den": 1}
    )


SCORER_FIXTURES = [
    pytest.param(DATA / (r.name.rsplit("-", 1)[0] + ".key"), r, FIXTURES / "scorer" / f"{r.stem}.txt", id=r.stem)
    for r in sorted(DATA.glob("TC-*.response"))
] + [
    pytest.param(FIXTURES / f"{n}.key", FIXTURES / f"{n}.response", FIXTURES / "scorer" / f"{n}.txt", id=n)
    for n in ("litbank", "repeats", "bare_numbers")
]


def test_scorer_fixtures_present() -> None:
    assert len(SCORER_FIXTURES) == 39
    for p in SCORER_FIXTURES:
        assert all(Path(x).is_file() for x in p.values), p.id


@pytest.mark.parametrize(("key", "response", "output"), SCORER_FIXTURES)
def test_equal_to_scorer_pl_as_printed(key: Path, response: Path, output: Path) -> None:
    """Every number scorer.pl v8.01 prints (numerators, denominators, truncated percentages), for every metric."""
    expected = parse_scorer_output(output)
    assert len(expected) == 12  # mentions and coreference of muc, bcub, ceafm, ceafe; mentions and 3 lines of blanc
    scores = score_files(predictions=response, references=key).scores
    for (metric, kind), printed_by_scorer in expected.items():
        assert _ours(scores, metric, kind) == printed_by_scorer, (metric, kind)


@pytest.mark.parametrize("name", ["litbank", "repeats"])
def test_equal_to_scorer_pl_per_document(name: str) -> None:
    expected, entities = parse_scorer_documents(FIXTURES / "scorer" / f"{name}.per_document.txt")
    key, response = FIXTURES / f"{name}.key", FIXTURES / f"{name}.response"
    report = score_files(predictions=response, references=key)
    items = {item["id"]: item for item in report.items}
    assert len(expected) == 4 * len(items)
    for (metric, document), figures_ in expected.items():
        assert as_printed(items[document.strip()][metric]) == figures_, (metric, document)
    # the reader's entities and their order are the scorer's
    keys, responses = read_conll2012(key), read_conll2012(response)
    assert len(entities) == len(keys)
    for doc in keys.values():
        assert list(entities[doc.spec]) == [list(doc.entities), list(responses[doc.doc_id].entities)]


def test_figures_beyond_one_with_repeated_key_spans_as_the_scorer() -> None:
    key = CorefDocument.from_clusters([[0, 1, 1], [2, 3]])
    response = CorefDocument.from_clusters([[0, 1], [2, 3]])
    s = score([response], [key])
    assert (s["ceafm"]["recall_num"], s["ceafm"]["precision_den"]) == (5.0, 4.0)  # scorer.pl: (5 / 5) and (5 / 4)
    assert s["ceafm"]["precision"] == 1.25 and s["ceafe"]["precision"] == pytest.approx(1.1, abs=TIGHT)
    assert s["bcub"]["recall_num"] == pytest.approx(10 / 3, abs=TIGHT) and s["bcub"]["recall_den"] == 5
    once = score([response], [key], repeated_mentions="first")
    assert all(once[m]["f1"] == pytest.approx(1.0, abs=TIGHT) for m in METRICS)


def test_repeated_mention_warnings() -> None:
    report = score_files(predictions=FIXTURES / "repeats.response", references=FIXTURES / "repeats.key")
    text = "\n".join(report.warnings)
    assert "key document (rep_a); part 000: repeated spans (2, 3) x2, (5, 5) x2; each counted" in text
    assert "response document (rep_a); part 000: repeated spans (0, 0) x2, (6, 6) x2; key mentions kept once" in text
    first = score_files(
        predictions=FIXTURES / "repeats.response", references=FIXTURES / "repeats.key", repeated_mentions="first"
    )
    assert "at its first occurrence" in "\n".join(first.warnings)
    assert first.scores["ceafm"]["precision_den"] == 12  # each span once
    assert report.scores["ceafm"]["precision_den"] == 14  # as scorer.pl


@pytest.mark.parametrize("seed", range(4))
def test_chains_equal_contingency_without_repeats(seed: int) -> None:
    rng = random.Random(500 + seed)
    for _ in range(15):
        key, response = _random_pair(rng, n=rng.randint(1, 14), max_entities=5)
        a = document_counts(_doc(response), _doc(key), method="chains")
        b = document_counts(_doc(response), _doc(key), method="contingency")
        assert a.keys() == b.keys()
        for name in a:
            assert a[name] == pytest.approx(b[name], abs=1e-12), (name, key, response)


def test_coref_metric_docstring_example() -> None:
    # the class is built on first use, so doctest.testmod of the module does not see it
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(CorefMetric, "CorefMetric", globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).attempted >= 3 and runner.summarize(verbose=False).failed == 0


# ------------------------------------------------------------------------------------------------------ reader fuzzing
def _outcome(key_text: bytes, response_text: bytes, tmp_path: Path):
    key, response = tmp_path / "k.conll", tmp_path / "r.conll"
    key.write_bytes(key_text)
    response.write_bytes(response_text)
    try:
        report = score_files(predictions=response, references=key)
    except InputFormatError as err:
        assert "\n" not in str(err) and err.path in (str(key), str(response)), str(err)
        assert err.line is not None and str(err).startswith(f"{err.path}:{err.line}: "), str(err)
        return "error", None
    return "scored", report


def _annotation(text: bytes, tmp_path: Path):
    path = tmp_path / "a.conll"
    path.write_bytes(text)
    try:
        return [(d.doc_id, d.n_tokens, d.entities) for d in read_conll2012(path).values()]
    except InputFormatError:
        return None


def _corruptions(rng: random.Random, text: bytes) -> list[tuple[str, bytes]]:
    lines = text.splitlines(keepends=True)
    out = []
    for _ in range(12):
        out.append(("truncated", text[: rng.randrange(1, len(text))]))
        i = rng.randrange(len(lines))
        out.append(("line dropped", b"".join(lines[:i] + lines[i + 1 :])))
        out.append(("line duplicated", b"".join(lines[: i + 1] + lines[i:])))
        pos = rng.randrange(len(text))
        out.append(("byte flipped", text[:pos] + bytes([rng.randrange(256)]) + text[pos + 1 :]))
    out.append(("bom", b"\xef\xbb\xbf" + text))
    out.append(("crlf", text.replace(b"\n", b"\r\n")))
    out.append(("spaces", text.replace(b"\t", b"  ")))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("side", ["response", "key"])
@pytest.mark.parametrize("name", ["litbank", "repeats"])
def test_reader_fuzz(tmp_path: Path, name: str, side: str) -> None:
    """A corrupted file scores exactly as the clean one, or is a one-line error with file and line; a different score
    only with a warning, or where the corruption changed the annotation itself (a flipped entity number is another
    valid annotation of the same tokens), never where key and response lost their alignment."""
    key, response = (FIXTURES / f"{name}.key").read_bytes(), (FIXTURES / f"{name}.response").read_bytes()
    _, clean = _outcome(key, response, tmp_path)
    clean_annotation = _annotation(response if side == "response" else key, tmp_path)
    rng = random.Random(f"{name}-{side}")
    counts = Counter()
    for kind, corrupted in _corruptions(rng, response if side == "response" else key):
        pair = (key, corrupted) if side == "response" else (corrupted, response)
        status, report = _outcome(*pair, tmp_path)
        if status == "error":
            counts["error"] += 1
            continue
        if report.scores == clean.scores:
            counts["same"] += 1
            continue
        annotation = _annotation(corrupted, tmp_path)
        assert annotation is not None
        new_warnings = set(report.warnings) - set(clean.warnings)
        changed_annotation = [(d, n) for d, n, _ in annotation] == [(d, n) for d, n, _ in clean_annotation]
        assert kind in ("byte flipped", "truncated", "line dropped", "line duplicated"), kind
        assert new_warnings or changed_annotation, (kind, new_warnings)
        counts["different, explained"] += 1
    assert counts["error"] >= 10 and counts["same"] >= 3, counts


@pytest.mark.parametrize("seed", range(3))
def test_alignment_solvers_equal_scipy(seed: int) -> None:
    """CEAF's alignment (per block: enumeration, shortest augmenting paths or scipy) equals linear_sum_assignment."""
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(seed)
    for t in range(300):
        n, m = rng.integers(1, 30, size=2)
        w = (rng.random((n, m)) < rng.random()) * rng.integers(1, 5, (n, m)).astype(float)
        if t % 2:
            w = w * rng.random((n, m))
        r, c = linear_sum_assignment(w, maximize=True)
        assert max_assignment(w) == pytest.approx(w[r, c].sum(), abs=1e-9)
        for solver in ("blocks", "scipy", "auto"):
            assert best_alignment(w, solver=solver) == pytest.approx(w[r, c].sum(), abs=1e-9)


def _blocks_the_plain_way(sim: np.ndarray) -> float | None:
    """CEAF's block rule with dense NumPy: labels by repeated minima, one-row or one-column blocks' maxima summed by
    NumPy in label order, then each larger block's best enumerated assignment (rows summed by NumPy), in label order.

    None where a block has more than 5,040 assignments (those are solved otherwise).
    """
    import itertools

    sim = sim[np.ix_(sim.any(axis=1), sim.any(axis=0))]
    if sim.size == 0:
        return 0.0
    linked = sim > 0
    n = linked.shape[0]
    row_label = np.arange(n)
    while True:
        col_label = np.where(linked, row_label[:, None], n).min(axis=0)
        new = np.where(linked, col_label[None, :], n).min(axis=1)
        if (new == row_label).all():
            break
        row_label = new
    rows_in, cols_in = np.bincount(row_label, minlength=n), np.bincount(col_label, minlength=n)
    simple = (rows_in == 1) | (cols_in == 1)
    best = np.zeros(n)
    r, c = np.nonzero(linked)
    np.maximum.at(best, row_label[r], sim[r, c])
    total = float(best[simple].sum())
    for k in np.flatnonzero(~simple & (rows_in > 0)):
        block = sim[np.ix_(row_label == k, col_label == k)]
        if block.shape[0] > block.shape[1]:
            block = block.T
        if math.perm(block.shape[1], block.shape[0]) > 5040:
            return None
        maps = np.array(list(itertools.permutations(range(block.shape[1]), block.shape[0])))
        total += float(block[np.arange(block.shape[0]), maps].sum(axis=1).max())
    return total


@pytest.mark.parametrize("seed", range(3))
def test_alignment_blocks_are_bit_for_bit_the_plain_rule(seed: int) -> None:
    """Sparse matrices of small blocks (what documents give): the same float as the rule written with dense NumPy."""
    rng = np.random.default_rng(seed)
    compared = 0
    for _ in range(200):
        n, m = rng.integers(1, 40, size=2)
        counts = (rng.random((n, m)) < rng.uniform(0.02, 0.08)) * rng.integers(1, 9, (n, m)).astype(float)
        fractions = counts * rng.random((n, m)) * 10.0 ** rng.integers(-3, 3)  # CEAF-e's, on the same entries
        plain = [_blocks_the_plain_way(counts), _blocks_the_plain_way(fractions)]
        if None not in plain:
            assert [best_alignment(counts), best_alignment(fractions)] == plain
            assert _alignments([counts, fractions]) == plain  # the blocks found once for both
            compared += 1
    assert compared >= 120


def test_equal_to_scorer_pl_without_scipy() -> None:
    """In a fresh process, where scoring files imports neither scipy nor JAX, the figures are printed alike too."""
    import subprocess
    import sys

    pairs = [[str(p.values[0]), str(p.values[1])] for p in SCORER_FIXTURES]
    code = (
        "import json, sys\n"
        "from metametric_jax.tasks.coref import score_files\n"
        f"pairs = {pairs!r}\n"
        "out = [score_files(predictions=r, references=k).scores for k, r in pairs]\n"
        "assert 'scipy.optimize' not in sys.modules and 'jax' not in sys.modules, 'imported'\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    for p, scores in zip(SCORER_FIXTURES, json.loads(proc.stdout)):
        for (metric, kind), printed_by_scorer in parse_scorer_output(p.values[2]).items():
            assert _ours(scores, metric, kind) == printed_by_scorer, (p.id, metric, kind)


_COLUMNS = ["-", "_", "(1", "1)", "(1)", "(2", "2)", "(2)", "(12)", "(1|(2)", "2)|1)", "(1+2)", "-|3", "x", "(", "()"]


@pytest.mark.parametrize("seed", range(40))
def test_the_reader_s_quick_paths_read_as_the_full_parser(seed: int, monkeypatch) -> None:
    """Columns of no mention or of one mention are read without the full parse: the same documents or the same error."""
    from metametric_jax.tasks.readers import conll2012 as reader
    from metametric_jax.tasks.readers import conll2012_format as column_rule

    rng = random.Random(seed)
    lines = ["#begin document (d); part 000"]
    for t in range(rng.randint(0, 30)):
        if rng.random() < 0.05:
            lines.append("" if rng.random() < 0.5 else "# a comment")
        words = [f"w{t}"] if rng.random() < 0.2 else ["d", "0", str(t), f"w{t}", "x", "y"]
        lines.append("\t".join([*words, rng.choice(_COLUMNS[:10] if seed % 2 else _COLUMNS)]))
    lines.append("#end document")

    def read() -> object:
        try:
            return parse_conll2012(lines, "f")
        except InputFormatError as err:
            return str(err)

    quick = read()
    monkeypatch.setattr(reader, "_NO_MENTION", frozenset())
    monkeypatch.setattr(column_rule, "_ONE_MENTION", re.compile(r"(?!)"))
    assert read() == quick
