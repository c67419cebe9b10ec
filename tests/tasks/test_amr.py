"""Smatch: triples and scores against smatch 1.0.4, fine-grained scores against amr-evaluation, files, options."""

from __future__ import annotations

import io
import logging
import random
import re
import warnings
from collections import Counter
from pathlib import Path

import amr as smatch_amr
import numpy as np
import penman
import pytest
import smatch
from amr_graphs import random_pairs

from metametric_jax import Report
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import amr as ours
from metametric_jax.tasks import amr_fine
from metametric_jax.tasks.amr import (
    SmatchMetric,
    SolverBudgetWarning,
    score,
    score_files,
    smatch_match,
    smatch_triples,
)
from metametric_jax.tasks.readers.penman import parse_tree

DATA = Path(ours.__file__).resolve().parents[1] / "data" / "amr"
GOLD, PRED = DATA / "gold.txt", DATA / "pred.txt"
FIXTURES = Path(__file__).parents[1] / "data" / "amr"
FINE_GOLD, FINE_PRED = FIXTURES / "fine_gold.txt", FIXTURES / "fine_pred.txt"


# ----------------------------------------------------------------------------------------------------- references
class _FixedRandom(random.Random):
    """smatch calls ``random.seed()`` before each restart; keep the seeded stream instead."""

    def seed(self, a=None, version=2):  # noqa: D102
        if a is not None:
            super().seed(a, version)


@pytest.fixture
def seeded_smatch(monkeypatch):
    monkeypatch.setattr(smatch, "random", _FixedRandom(1234))
    monkeypatch.setattr(smatch, "iteration_num", 5)  # smatch.py's default: 4 restarts + 1
    smatch.match_triple_dict.clear()
    yield smatch
    smatch.match_triple_dict.clear()


def one_line(text: str) -> str:
    return smatch_amr.AMR.get_amr_line(io.StringIO(text))


def smatch_reference(pred: str, gold: str) -> tuple[int, int, int]:
    """(matched, test triples, gold triples) of the smatch package (hill climbing)."""
    smatch.match_triple_dict.clear()
    result = smatch.get_amr_match(one_line(pred), one_line(gold))
    smatch.match_triple_dict.clear()
    return result


def smatch_package_triples(text: str) -> Counter:
    graph = smatch_amr.AMR.parse_AMR_line(one_line(text))
    graph.rename_node("v")
    instances, attributes, relations = graph.get_triples()
    # smatch marks a closed quote with a trailing "_" and strips it when comparing.
    return Counter([tuple(t) for t in instances + relations] + [(r, s, t.rstrip("_")) for r, s, t in attributes])


def renamed(triples) -> Counter:
    names = {}
    for role, source, _ in triples:
        if role == "instance" and source not in names:
            names[source] = f"v{len(names)}"
    return Counter((r, names.get(s, s), names.get(t, t) if r not in ("instance", "TOP") else t) for r, s, t in triples)


def blocks(path: Path) -> list[str]:
    return [b for b in path.read_text().split("\n\n") if b.strip()]


def no_repeated_triples(text: str) -> bool:
    return all(c == 1 for c in smatch_package_triples(text).values())


def smatch_pairs_fixture(name: str) -> list[tuple[float, float, float]]:
    """Per-pair (precision, recall, F1) printed by ``smatch.py --pr --ms`` (see tests/data/amr/README.md)."""
    values = [float(x) for x in re.findall(r": ([0-9.]+)", (FIXTURES / name).read_text())]
    return [tuple(values[k : k + 3]) for k in range(0, len(values), 3)]


def amr_evaluation_fixture(name: str) -> dict[str, tuple[str, str, str]]:
    """``amr-evaluation``'s printed figures: {metric: (P, R, F)} as the two-decimal strings it prints."""
    out = {}
    for line in (FIXTURES / name).read_text().splitlines():
        metric = line.split("->")[0].strip()
        out[metric] = tuple(re.findall(r"[PRF]: ([0-9.]+)", line))
    return out


# ----------------------------------------------------------------------------------------------------- triples
def test_triples_equal_smatch_extraction_on_sample():
    graphs = blocks(GOLD) + blocks(PRED)
    assert len(graphs) == 20
    for text in graphs:
        expected = smatch_package_triples(text)
        found = renamed(smatch_triples(text))
        assert sum(found.values()) == sum(expected.values())
        assert found == expected, text


@pytest.mark.parametrize("seed", [0, 1])
def test_triples_equal_smatch_extraction_on_random_graphs(seed):
    for pred, gold in random_pairs(seed, 25, 20):
        for text in (pred, gold):
            assert renamed(smatch_triples(text)) == smatch_package_triples(text), text


def test_inverse_roles_mod_and_top():
    triples = smatch_triples('(a / a-concept :ARG0-of (b / bb) :mod (c / cc) :consist-of (d / dd) :op1 "New")')
    assert ("ARG0", "b", "a") in triples
    assert ("domain", "c", "a") in triples
    assert ("consist-of", "a", "d") in triples
    assert ("op1", "a", "New") in triples
    assert ("TOP", "a", "top") in triples


def test_documented_differences_from_smatch_triples():
    """`:mod` with a constant and quoted constants with spaces: smatch 1.0.4 drops or truncates, we keep."""
    text = '(c / city :mod "old" :name (n / name :op1 "New York"))'
    theirs = smatch_package_triples(text)
    mine = renamed(smatch_triples(text))
    assert ("mod", "v0", "old") in mine and not any(r in ("mod", "domain") for r, _, _ in theirs)
    assert ("op1", "v1", "New York") in mine and ("op1", "v1", "New") in theirs
    # a repeated triple: smatch counts each pair of copies, we match each copy at most once
    twice = "(a / and :op1 (b / boy) :op1 b)"
    assert smatch_match(smatch_triples(twice), smatch_triples(twice))[:3] == (5, 5, 5)
    assert smatch_reference(twice, twice) == (7, 5, 5)  # precision 7/5


def test_graph_tree_and_triple_inputs_agree():
    text = blocks(GOLD)[3]
    expected = smatch_triples(text)
    assert sorted(smatch_triples(penman.decode(text))) == sorted(expected)
    assert sorted(smatch_triples(penman.parse(text))) == sorted(expected)
    assert smatch_triples(expected) == expected


# ----------------------------------------------------------------------------------------------------- alignments
def test_alignment_markers_removed_by_default():
    aligned = '(b / boy~e.2 :ARG0-of~e.1 (g / go-02~3) :name (n / name :op1 "Kim"~e.0,1) :polarity -~e.4)'
    plain = '(b / boy :ARG0-of (g / go-02) :name (n / name :op1 "Kim") :polarity -)'
    assert smatch_triples(aligned) == smatch_triples(plain)
    kept = smatch_triples(aligned, keep_alignments=True)
    assert ("instance", "b", "boy~e.2") in kept and kept != smatch_triples(plain)
    assert score([aligned], [plain])["f1"] == 1.0
    assert score([aligned], [plain], keep_alignments=True)["f1"] < 1.0


def test_aligned_parser_output_file():
    """Alignment markers in the prediction file: removed by default; kept, the figures equal smatch 1.0.4's."""
    default = score_files(predictions=FINE_PRED, references=FINE_GOLD)
    stripped = [re.sub(r"~e\.\d+", "", b) for b in blocks(FINE_PRED)]
    assert default.scores == score(stripped, blocks(FINE_GOLD))
    kept = score_files(predictions=FINE_PRED, references=FINE_GOLD, keep_alignments=True)
    assert kept.scores["f1"] < default.scores["f1"]
    for theirs_file, report in (
        ("smatch_1.0.4_fine_aligned_pairs.txt", kept),
        ("smatch_1.0.4_fine_pairs.txt", default),
    ):
        theirs = smatch_pairs_fixture(theirs_file)
        assert len(theirs) == len(report.items) == 6
        for (p, r, f), item in zip(theirs, report.items):
            assert (item["precision"], item["recall"], item["f1"]) == pytest.approx((p, r, f), abs=5e-7)


# ----------------------------------------------------------------------------------------------------- scores
def test_cai_knight_example():
    """Cai & Knight (2013), Section 2: 'the boy wants to go' vs 'the boy wants the football', F1 = 0.73."""
    go = [
        ("instance", "a", "want-01"),
        ("instance", "b", "boy"),
        ("instance", "c", "go-01"),
        ("ARG0", "a", "b"),
        ("ARG1", "a", "c"),
        ("ARG0", "c", "b"),
    ]
    football = [
        ("instance", "x", "want-01"),
        ("instance", "y", "boy"),
        ("instance", "z", "football"),
        ("ARG0", "x", "y"),
        ("ARG1", "x", "z"),
    ]
    found = smatch_match(football, go)
    assert found[:3] == (4, 5, 6) and found.optimal and found.upper_bound == 4
    assert found.mapping["x"] == "a" and found.mapping["y"] == "b"
    assert SmatchMetric.from_stats([found[:3]]).compute()["f1"] == pytest.approx(0.73, abs=0.005)


def test_cai_knight_penman_matches_smatch_package(seeded_smatch):
    go = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))"
    football = "(w / want-01 :ARG0 (b / boy) :ARG1 (f / football))"
    expected = smatch_reference(football, go)
    assert SmatchMetric.stats(football, go) == tuple(float(x) for x in expected)
    assert SmatchMetric.score(football, go) == pytest.approx(2 * expected[0] / (expected[1] + expected[2]))


def test_case_and_quotes_compare_like_smatch(seeded_smatch):
    pred = "(W / Want-01 :arg0 (b / BOY :Polarity -) :ARG1 (c / city :name (n / name :op1 Paris)))"
    gold = '(w / want-01 :ARG0 (x / boy :polarity -) :ARG1 (y / city :name (z / name :op1 "paris")))'
    expected = smatch_reference(pred, gold)
    assert expected[0] == expected[1] == expected[2]
    assert SmatchMetric.stats(pred, gold) == tuple(float(v) for v in expected)


@pytest.mark.parametrize("n_triples", [10, 25])
def test_never_below_smatch_package(seeded_smatch, n_triples):
    pairs = random_pairs(7 + n_triples, n_triples, 40)
    pairs = [(p, g) for p, g in pairs if no_repeated_triples(p) and no_repeated_triples(g)]
    assert len(pairs) >= 30
    strictly_better = 0
    for pred, gold in pairs:
        ref = smatch_reference(pred, gold)
        mine = SmatchMetric.stats(pred, gold)
        assert mine[1:] == (ref[1], ref[2])
        assert mine[0] >= ref[0], (pred, gold)
        strictly_better += mine[0] > ref[0]
    assert strictly_better <= len(pairs) // 4


def test_equals_smatch_with_many_restarts(seeded_smatch, monkeypatch):
    monkeypatch.setattr(smatch, "iteration_num", 60)
    pairs = [(p, g) for p, g in random_pairs(3, 12, 30) if no_repeated_triples(p) and no_repeated_triples(g)]
    pairs += list(zip(blocks(PRED), blocks(GOLD)))
    for pred, gold in pairs:
        assert SmatchMetric.stats(pred, gold) == tuple(float(x) for x in smatch_reference(pred, gold)), (pred, gold)


def test_sample_equals_smatch_fixture_per_pair_and_corpus():
    report = score_files(predictions=PRED, references=GOLD)
    theirs = smatch_pairs_fixture("smatch_1.0.4_sample_pairs.txt")
    assert len(theirs) == len(report.items) == 10
    for (p, r, f), item in zip(theirs, report.items):
        assert (item["precision"], item["recall"], item["f1"]) == pytest.approx((p, r, f), abs=5e-7)
    (total,) = smatch_pairs_fixture("smatch_1.0.4_sample.txt")
    assert tuple(report.scores[k] for k in ("precision", "recall", "f1")) == pytest.approx(total, abs=5e-7)


def test_score_files_report_shape():
    report = score_files(predictions=PRED, references=GOLD)
    assert isinstance(report, Report) and report.warnings == []
    assert report.scores["pairs"] == report.scores["pairs_optimal"] == 10
    assert [item["id"] for item in report.items] == [f"sample.{k}" for k in range(1, 11)]
    for key in ("matched", "predicted", "reference"):
        assert sum(item[key] for item in report.items) == report.scores[key]
    assert all(item["optimal"] and item["upper_bound"] == item["matched"] for item in report.items)
    assert report.scores == score(blocks(PRED), blocks(GOLD))
    assert all(isinstance(report.scores[k], float) for k in ("precision", "recall", "f1"))


def test_metric_is_micro_over_pairs_and_merges(seeded_smatch):
    preds, golds = blocks(PRED), blocks(GOLD)
    refs = [smatch_reference(p, g) for p, g in zip(preds, golds)]
    m, t, g = (sum(r[k] for r in refs) for k in range(3))
    state = SmatchMetric.from_model_output(preds, golds)
    result = state.compute()
    assert float(result["precision"]) == pytest.approx(m / t, rel=1e-6)
    assert float(result["recall"]) == pytest.approx(m / g, rel=1e-6)
    assert float(result["f1"]) == pytest.approx(2 * m / (t + g), rel=1e-6)
    macro = np.mean([2 * a / (b + c) for a, b, c in refs])
    assert float(result["macro_f1"]) == pytest.approx(macro, rel=1e-6)
    merged = SmatchMetric.from_model_output(preds[:4], golds[:4]).merge(
        SmatchMetric.from_model_output(preds[4:], golds[4:])
    )
    np.testing.assert_allclose(np.asarray(merged.compute()["f1"]), np.asarray(result["f1"]), rtol=1e-6)
    mixed_preds = [penman.decode(p) if k % 2 else smatch_triples(p) for k, p in enumerate(preds)]
    mixed = SmatchMetric.from_model_output(mixed_preds, [penman.parse(x) for x in golds]).compute()
    assert float(mixed["f1"]) == pytest.approx(float(result["f1"]), rel=1e-6)


# ----------------------------------------------------------------------------------------------------- fine-grained
@pytest.mark.parametrize(
    ("fixture", "pred", "gold"),
    [("amr_evaluation_sample.txt", PRED, GOLD), ("amr_evaluation_fine.txt", FINE_PRED, FINE_GOLD)],
)
def test_fine_grained_counts_equal_amr_evaluation(fixture, pred, gold):
    """Every fine-grained figure is amr-evaluation's as it prints them (two decimals); more in test_amr_fine."""
    theirs = amr_evaluation_fixture(fixture)
    scores = score_files(predictions=pred, references=gold, fine_grained=True).scores
    names = {
        "Unlabeled": "unlabeled",
        "No WSD": "no_wsd",
        "Concepts": "concepts",
        "Named Ent.": "named_entities",
        "Negations": "negations",
        "Wikification": "wikification",
        "Reentrancies": "reentrancies",
        "SRL": "srl",
    }
    for printed, name in names.items():
        mine = tuple(f"{scores[name][k]:.2f}" for k in ("precision", "recall", "f1"))
        assert mine == theirs[printed], (printed, mine, theirs[printed])


def test_fine_grained_definitions():
    gold = smatch_triples(
        '(w / want-01 :ARG0 (g / girl :polarity - :wiki "Kim" :name (n / name :op1 "Kim")) '
        ":ARG1 (b / believe-01 :ARG0 (b2 / boy) :ARG1 g))"
    )
    assert sorted(amr_fine.named_entities(gold)) == ["girl"]
    assert amr_fine.negations(gold) == ["girl"] and amr_fine.wikification(gold) == ["kim"]
    reentrant = amr_fine.reentrancies(gold)
    assert sorted(t for t in reentrant if t[0] != "instance") == [("ARG0", "w", "g"), ("ARG1", "b", "g")]
    assert {t[1] for t in reentrant if t[0] == "instance"} == {"w", "g", "b"}
    srl = amr_fine.srl(gold)
    assert sorted(t[0] for t in srl if t[0] != "instance") == ["ARG0", "ARG0", "ARG1", "ARG1"]
    assert ("instance", "n", "name") not in srl
    labels = {r for r, _, _ in amr_fine.unlabeled(gold)}
    assert labels == {"instance", "TOP", "label"}
    assert ("instance", "w", "want-01") in amr_fine.no_wsd([("instance", "w", "want-02")])
    assert amr_fine.no_wsd([("instance", "x", "have-org-role-91")]) == [("instance", "x", "have-org-role-01")]


def test_fine_grained_per_pair_and_exact():
    report = score_files(predictions=FINE_PRED, references=FINE_GOLD, fine_grained="normalized")
    for name in amr_fine.NAMES:
        totals = [
            sum(item["fine_grained"][name][k] for item in report.items) for k in ("matched", "predicted", "reference")
        ]
        m, p, g = totals
        assert report.scores[name]["f1"] == pytest.approx(2 * m / (p + g) if p + g else 0.0)
    # the Smatch-based figures are exact: each equals the Smatch of the extracted triples
    pred_graphs, gold_graphs = blocks(FINE_PRED), blocks(FINE_GOLD)
    for item, p, g in zip(report.items, pred_graphs, gold_graphs):
        pt, gt = smatch_triples(p), smatch_triples(g)
        for name in ("unlabeled", "no_wsd", "reentrancies", "srl"):
            view = getattr(amr_fine, name)
            assert item["fine_grained"][name]["matched"] == smatch_match(view(pt), view(gt), work_limit=None)[0]


# ----------------------------------------------------------------------------------------------------- budget
def test_hard_pair_is_bounded_flagged_and_warned_once():
    from amr_graphs import unrelated_pair

    pairs = [unrelated_pair(seed, 60) for seed in (0, 1)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score([p for p, _ in pairs], [g for _, g in pairs], work_limit=10**6)
    budget = [w for w in caught if issubclass(w.category, SolverBudgetWarning)]
    assert len(budget) == 1 and "2 of 2 graph pairs: the work budget of 1,000,000 units" in str(budget[0].message)
    assert "reproducible" not in str(budget[0].message)
    assert result["pairs"] == 2 and result["pairs_optimal"] == 0 and "pairs_timed_out" not in result
    found = smatch_match(smatch_triples(pairs[0][0]), smatch_triples(pairs[0][1]), work_limit=10**6)
    assert not found.optimal and found.matched < found.upper_bound


def test_the_accumulator_takes_a_work_budget():
    from amr_graphs import unrelated_pair

    from metametric_jax.tasks.amr import DEFAULT_WORK_LIMIT, SmatchMetric, smatch_metric

    assert smatch_metric() is SmatchMetric and smatch_metric(work_limit=float(DEFAULT_WORK_LIMIT)) is SmatchMetric
    quick = smatch_metric(work_limit=10**6)
    assert quick is smatch_metric(work_limit=10**6) and quick is not SmatchMetric
    p, g = unrelated_pair(0, 60)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state = quick.from_model_output([p], [g])
    budget = [w for w in caught if issubclass(w.category, SolverBudgetWarning)]
    assert len(budget) == 1 and "1,000,000 units per pair" in str(budget[0].message)
    found = smatch_match(smatch_triples(p), smatch_triples(g), work_limit=10**6)
    assert state.totals()["yy"] == found.reference and state.totals()["xy"] == found.matched and not found.optimal
    easy = ["(b / boy :mod (t / tall))"], ["(b / boy)"]
    assert smatch_metric(work_limit=None).batch_stats(*easy).tolist() == SmatchMetric.batch_stats(*easy).tolist()
    for bad in (0, -1.0, "1", float("nan"), 0.5, True):
        with pytest.raises(ValueError, match="work_limit"):
            smatch_metric(work_limit=bad)
    for bad in (0, -1.0, "1", float("nan"), float("inf")):
        with pytest.raises(ValueError, match="time_limit"):
            smatch_metric(time_limit=bad)


def test_report_counts_flagged_pairs(tmp_path):
    from amr_graphs import unrelated_pair

    p, g = unrelated_pair(3, 50)
    (tmp_path / "p.txt").write_text(f"{p}\n\n(a / b)\n")
    (tmp_path / "g.txt").write_text(f"{g}\n\n(a / b)\n")
    report = score_files(predictions=tmp_path / "p.txt", references=tmp_path / "g.txt", work_limit=10**6)
    assert report.scores["pairs"] == 2 and report.scores["pairs_optimal"] == 1
    assert [item["optimal"] for item in report.items] == [False, True]
    assert len(report.warnings) == 1 and "1 of 2 graph pairs" in report.warnings[0]


# ----------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("(a / b :ARG0 (c / d)", "unbalanced"),
        ("(a / b :ARG0 (c / d) (e / f))", "invalid PENMAN"),
        ("a / b", "starting with '('"),
        ("(a / b) (c / d)", "found 2"),
        ("(a / b :ARG0 (a / c))", "defined twice"),
        ("(a :ARG0 (b / c))", "no concept"),
    ],
)
def test_bad_penman_in_file(tmp_path, text, fragment):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"# ::snt fine\n(x / fine)\n\n# ::snt broken\n{text}\n")
    good = tmp_path / "good.txt"
    good.write_text("(x / fine)\n\n(y / fine)\n")
    with pytest.raises(InputFormatError) as info:
        score_files(predictions=bad, references=good)
    assert info.value.path == str(bad)
    assert info.value.line == 5
    assert fragment in info.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("()", "expected '(variable / concept ...)'; found an empty graph '()'"),
        (
            "(w / want-01 :ARG0 ())",
            "expected '(variable / concept ...)' as the value of role ':ARG0' of variable 'w'; "
            "found an empty node '()'",
        ),
        ("(w /)", "variable 'w' has no concept; expected '(w / concept ...)'"),
        ("(w / want-01 :ARG0)", "role ':ARG0' of variable 'w' has no value"),
    ],
)
def test_incomplete_graph_names_what_was_found(tmp_path, caplog, text, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"(x / fine)\n\n{text}\n")
    good = tmp_path / "good.txt"
    good.write_text("(x / fine)\n\n(y / fine)\n")
    for predictions, references in ((bad, good), (good, bad)):
        with caplog.at_level(logging.DEBUG, logger="penman"):
            with pytest.raises(InputFormatError) as info:
                score_files(predictions=predictions, references=references)
        assert str(info.value) == f"{bad}:3: {message}"
        assert [r for r in caplog.records if r.name.startswith("penman")] == []  # penman's warning is not logged
    with pytest.raises(InputFormatError, match=re.escape(f"<graph>:1: {message}")):
        smatch_triples(text)


def test_penman_warnings_are_dropped_only_while_a_graph_is_read(caplog):
    log = logging.getLogger("penman")
    filters = list(log.filters)
    with caplog.at_level(logging.WARNING, logger="penman"):
        tree = parse_tree("(w /)", "g.txt", 1)
        assert tree.node == ("w", [("/", None)])  # penman's tree, as penman parses it
        assert caplog.records == []
        penman.parse("(w /)")  # outside the reader, penman's warning is logged as before
    assert [r.getMessage() for r in caplog.records] == ["Missing concept: (w /)"]
    assert log.filters == filters


def test_bom_and_crlf_are_accepted(tmp_path):
    text = GOLD.read_text()
    odd = tmp_path / "gold.txt"
    odd.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    assert score_files(predictions=PRED, references=odd).scores == score_files(predictions=PRED, references=GOLD).scores


def test_not_utf8(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"(a / caf\xe9)\n")
    with pytest.raises(InputFormatError, match="UTF-8"):
        score_files(predictions=bad, references=GOLD)


def test_bad_penman_string_in_batch():
    with pytest.raises(InputFormatError, match=r"<prediction\[1\]>.*unbalanced"):
        SmatchMetric.from_model_output(["(a / b)", "(a / b"], ["(a / b)", "(a / b)"])


def test_different_graph_counts(tmp_path):
    gold = tmp_path / "gold.txt"
    pred = tmp_path / "pred.txt"
    gold.write_text("(a / b)\n\n(c / d)\n\n(e / f)\n")
    pred.write_text("(a / b)\n\n(c / d)\n")
    with pytest.raises(InputFormatError, match=r"2 graphs.*has 3"):
        score_files(predictions=pred, references=gold)


def test_wrong_types_and_options():
    with pytest.raises(TypeError, match="PENMAN string"):
        smatch_triples(42)
    with pytest.raises(TypeError, match="item 1"):
        smatch_triples([("instance", "a", "b"), ("ARG0", "a")])
    with pytest.raises(ValueError, match="same length"):
        SmatchMetric.from_model_output(["(a / b)"], [])
    with pytest.raises(ValueError, match="same length"):
        score(["(a / b)"], [])
    with pytest.raises(TypeError, match="keep_alignment"):
        score(["(a / b)"], ["(a / b)"], keep_alignment=True)
    with pytest.raises(TypeError):
        score_files(PRED, GOLD)  # keyword-only: a swap cannot happen silently


# ----------------------------------------------------------------------------------------------------- reader fuzzing
def _corrupt(lines: list[str], rng: random.Random) -> list[str]:
    out = list(lines)
    kind = rng.choice(["drop", "duplicate", "truncate", "flip", "tabs", "swap"])
    k = rng.randrange(len(out))
    if kind == "drop":
        del out[k]
    elif kind == "duplicate":
        out.insert(k, out[k])
    elif kind == "truncate":
        out = out[: k + 1]
        out[-1] = out[-1][: rng.randrange(len(out[-1]) + 1)]
    elif kind == "flip" and out[k]:
        j = rng.randrange(len(out[k]))
        out[k] = out[k][:j] + rng.choice('()/:"~ x') + out[k][j + 1 :]
    elif kind == "tabs":
        out[k] = out[k].replace("   ", "\t")
    elif kind == "swap" and k + 1 < len(out):
        out[k], out[k + 1] = out[k + 1], out[k]
    return out


@pytest.mark.parametrize("seed", range(4))
def test_corrupted_files_error_cleanly_or_score(tmp_path, seed):
    """Truncated, dropped, duplicated, flipped lines: a one-line InputFormatError naming the file, or a score."""
    rng = random.Random(seed)
    clean = GOLD.read_text().splitlines()
    outcomes = Counter()
    for trial in range(40):
        bad = tmp_path / f"bad{trial}.txt"
        bad.write_text("\n".join(_corrupt(clean, rng)) + "\n")
        try:
            report = score_files(predictions=bad, references=GOLD)
        except InputFormatError as err:
            assert err.path == str(bad) and "\n" not in str(err)
            outcomes["error"] += 1
        else:
            assert report.scores["pairs"] == 10  # never a silently misaligned pair
            outcomes["scored"] += 1
    assert outcomes["error"] > 0


def test_different_ids_warn(tmp_path):
    (tmp_path / "g.txt").write_text("# ::id a\n(x / boy)\n\n# ::id b\n(y / girl)\n")
    (tmp_path / "p.txt").write_text("# ::id b\n(y / girl)\n\n# ::id a\n(x / boy)\n")
    report = score_files(predictions=tmp_path / "p.txt", references=tmp_path / "g.txt")
    assert len(report.warnings) == 1 and "2 graph pairs have different '# ::id'" in report.warnings[0]
    assert [item["id"] for item in report.items] == ["a", "b"]


def test_read_files_feeds_the_accumulator():
    preds, refs, ids = ours.read_files(predictions=FINE_PRED, references=FINE_GOLD)
    assert ids == [f"fine.{k}" for k in range(1, 7)]
    report = score_files(predictions=FINE_PRED, references=FINE_GOLD)
    stats = [SmatchMetric.stats(p, r) for p, r in zip(preds, refs)]
    assert [s[0] for s in stats] == [item["matched"] for item in report.items]
    kept, _, _ = ours.read_files(predictions=FINE_PRED, references=FINE_GOLD, keep_alignments=True)
    assert kept != preds
