"""``analyze constituency``: the overall bucket is ``score constituency``'s figures and ``compare``'s test, the label
buckets equal brackets counted here tree by tree, the length buckets and EVALB's sentence table equal the scorer's
per-sentence counts."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest
from helpers import assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.normalizer import f_measure
from metametric_jax.tasks import constituency
from metametric_jax.tasks import constituency_analysis as ca

DATA = Path(__file__).parents[1] / "data" / "constituency"
GOLD = DATA / "gold.mrg"
PRED = DATA / "pred.mrg"
DELETED = {"TOP", "-NONE-", ",", ":", "``", "''", "."}  # COLLINS.prm


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The fixtures' prediction, and a second system: the reference with every fifth NP a VP and every PP an SBAR."""
    tmp = tmp_path_factory.mktemp("constituency_analysis")
    lines = GOLD.read_text(encoding="utf-8").splitlines()
    out = []
    for k, line in enumerate(lines):
        count = [0]

        def swap(m: re.Match, count: list[int] = count, k: int = k) -> str:
            count[0] += 1
            return "(VP " if count[0] % 5 == k % 5 else m.group(0)

        out.append(re.sub(r"\(NP ", swap, line).replace("(PP ", "(SBAR "))
    other = tmp / "other.mrg"
    other.write_text("\n".join(out) + "\n", encoding="utf-8")
    return {"gold": GOLD, "a": PRED, "b": other}


@pytest.fixture(scope="module")
def report(files) -> dict:
    got = ca.analyze_files(files["gold"], [files["a"], files["b"]], samples=200)
    return json.loads(json.dumps(got, allow_nan=False))


def test_overall_is_score_constituency_exactly(capsys, files, report) -> None:
    for s, name in enumerate(("a", "b")):
        score = run_json(capsys, "score", "constituency", "--gold", str(GOLD), "--pred", str(files[name]), "--format",
                         "json")  # fmt: skip
        figures = report["analyses"]["overall"]["all"]["figures"][s]
        for part in ("all", "len40"):
            assert figures[part] == {k: score[part][k] for k in ("recall", "precision", "f1")}
        if s == 0:  # a bucket's count is the baseline's: the reference brackets of its valid sentences
            assert report["analyses"]["overall"]["all"]["count"] == score["all"]["gold_brackets"]
    assert report["unit"] == "sentences" and report["n"] == 225
    assert any("length mismatch" in w for w in report["warnings"])


def brackets(tree: str) -> list[tuple[int, int, str]]:
    """EVALB's brackets of a tree under COLLINS.prm, counted here: (start, end, label) over the words kept."""
    tokens = re.findall(r"\(|\)|[^\s()]+", tree)
    out: list[tuple[int, int, str]] = []
    position = [0, 0]  # token index, words kept so far

    def node() -> None:
        assert tokens[position[0]] == "("
        position[0] += 1
        label = ""
        if tokens[position[0]] not in "()":
            label = tokens[position[0]]
            position[0] += 1
        if tokens[position[0]] not in "()":  # a part of speech and its word
            position[0] += 2
            position[1] += label not in DELETED
            return
        start = position[1]
        while tokens[position[0]] == "(":
            node()
        position[0] += 1
        cut = re.split(r"[-=]", label)[0] if label else ""
        cut = "ADVP" if cut == "PRT" else cut
        if position[1] > start and cut not in DELETED:
            out.append((start, position[1], cut or ca.UNLABELLED))

    node()
    return out


def test_label_buckets_equal_brackets_counted_here(files, report) -> None:
    gold = GOLD.read_text(encoding="utf-8").splitlines()
    for s, name in enumerate(("a", "b")):
        valid = [r[3] == "valid" for r in report["analyses"]["sentences"]["rows"] if r[1] == "AB"[s]]
        pred = files[name].read_text(encoding="utf-8").splitlines()
        counts: dict = collections.defaultdict(lambda: [0, 0, 0])
        for g, p, ok in zip(gold, pred, valid, strict=True):
            if not ok:
                continue
            bg, bp = collections.Counter(brackets(g)), collections.Counter(brackets(p))
            for (_, _, label), n in bg.items():
                counts[label][2] += n
            for key, n in bp.items():
                counts[key[2]][1] += n
                counts[key[2]][0] += min(n, bg.get(key, 0))
        table = report["analyses"]["label"]
        assert set(counts) <= set(table)
        for label, (m, t, g) in counts.items():
            r, p = (m / g if g else 0.0), (m / t if t else 0.0)
            assert table[label]["figures"][s] == {"recall": r, "precision": p, "f1": f_measure(p, r)}, (s, label)
            if s == 0:
                assert table[label]["count"] == g
        summary = constituency.score_files(predictions=files[name], references=GOLD).scores["all"]
        totals = [sum(c[j] for c in counts.values()) for j in range(3)]
        assert totals == [summary["matched_brackets"], summary["test_brackets"], summary["gold_brackets"]]
    assert list(report["analyses"]["label"]) == sorted(report["analyses"]["label"])
    assert report["analyses"]["label"]["VP"]["figures"][1]["precision"] < 1.0


def test_length_buckets_and_the_sentence_table_equal_the_scorer_s_sentences(files, report) -> None:
    rows = report["analyses"]["sentences"]["rows"]
    assert report["analyses"]["sentences"]["columns"] == list(ca.SENTENCE_COLUMNS)
    for s, name in enumerate(("a", "b")):
        items = constituency.score_files(predictions=files[name], references=GOLD).items
        mine = [r for r in rows if r[1] == "AB"[s]]
        assert len(mine) == len(items) == 225
        for row, item in zip(mine, items):
            expected = [item["id"], "AB"[s], item["length"], item["status"], item["recall"], item["precision"]]
            expected += [item[k] for k in ("matched_brackets", "gold_brackets", "test_brackets", "crossing_brackets")]
            expected += [item["words"], item["correct_tags"]]
            assert row == expected
        by_length: dict = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
        for item in items:
            b = by_length[ca.length_bucket(item["length"])]
            valid = item["status"] == "valid"
            complete = valid and item["matched_brackets"] == item["gold_brackets"] == item["test_brackets"]
            for j, v in enumerate((item["matched_brackets"], item["gold_brackets"], item["test_brackets"], valid,
                                   complete)):  # fmt: skip
                b[j] += v
        assert list(report["analyses"]["length"]) == [b for b in ca.LENGTHS if b in by_length]
        for bucket, (m, g, t, v, c) in by_length.items():
            r, p = (m / g if g else 0.0), (m / t if t else 0.0)
            figures = report["analyses"]["length"][bucket]["figures"][s]
            assert figures == {"recall": r, "precision": p, "f1": f_measure(p, r), "complete_match": c / v}
    assert [ca.length_bucket(x) for x in (0, 10, 11, 20, 21, 40, 41, 300)] == [
        "1-10", "1-10", "11-20", "11-20", "21-30", "31-40", "41+", "41+"
    ]  # fmt: skip


def test_overall_test_is_compare_s_test(capsys, files) -> None:
    base = ["--references", str(GOLD), "--samples", "200", "--format", "json"]
    report = run_json(capsys, "analyze", "constituency", *base, "--system", str(files["a"]), "--system",
                      str(files["b"]), "--correction", "none")  # fmt: skip
    compare = run_json(capsys, "compare", "constituency", *base, "--system", str(files["b"]), "--system",
                       str(files["a"]))  # fmt: skip
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["all"]["f1"]
    assert test["p_value"] == compare["p_value"]["all"]["f1"] == test["p_adjusted"]
    tests = [e["test"] for name in ("overall", "label", "length") for e in report["analyses"][name].values()]
    assert report["correction"]["tests"] == sum(t["p_value"] is not None for t in tests)
    assert all((t["p_value"] is None) == t["too_small"] for t in tests)


def test_in_memory_custom_buckets_and_an_unlabelled_bracket() -> None:
    gold = ["( (S (NP (NN a)) (VP (VB b))))", "(S (NP (NN c)) (VP (VB d) (NP (NN e))))"] * 6
    pred = ["( (S (NP (NN a)) (NP (VB b))))", "(S (NP (NN c)) (VP (VB d) (NP (NN e))))"] * 6
    got = ca.analyze(gold, [pred, gold], samples=50, min_units=1, buckets={"parity": lambda x: x.position % 2})
    json.dumps(got, allow_nan=False)
    assert got["analyses"]["label"][ca.UNLABELLED]["count"] == 6
    assert got["analyses"]["parity"]["1"]["figures"][0]["f1"] == 1.0
    assert got["analyses"]["parity"]["0"]["figures"][0]["recall"] == 3 / 4  # "", S, NP of four
    assert got["analyses"]["label"]["VP"]["figures"][0] == {"recall": 0.5, "precision": 1.0, "f1": 2 / 3}


def test_formats_render(capsys, files, tmp_path) -> None:
    base = ["analyze", "constituency", "--references", str(GOLD), "--system", str(files["a"]), "--system",
            str(files["b"]), "--samples", "50"]  # fmt: skip
    assert main([*base, "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert "EVALB's sentence table" in out and "Phrase label" in out
    assert main([*base, "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert "\\toprule" in out and "450 rows, in the JSON and HTML forms" in out
    page = tmp_path / "r.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert 'data-key="sentences/rows/449/11"' in text and "<svg" in text
    report = run_json(capsys, *base, "--format", "json")
    cells = re.findall(r'<td[^>]* data-key="([^"]*)" data-value="([^"]*)">([^<]*)</td>', text)
    assert len(cells) > 4500  # 450 sentence rows of 10 numbers, and the buckets
    for key, value, shown in cells:
        node = report["analyses"]
        for part in key.split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert (value == "") if node is None else float(value) == node, key
        if key.startswith("sentences/") and isinstance(node, float):
            assert shown == f"{100 * node:.2f}", key


def test_bad_requests_end_in_one_line(capsys, tmp_path) -> None:
    short = tmp_path / "short.mrg"
    short.write_text("\n".join(GOLD.read_text(encoding="utf-8").splitlines()[:10]) + "\n", encoding="utf-8")
    bad = tmp_path / "bad.mrg"
    bad.write_text("(S (NP (NN a))\n", encoding="utf-8")
    params = tmp_path / "bad.prm"
    params.write_text("FROBNICATE 3\n", encoding="utf-8")
    cases = [
        (["--references", str(GOLD), "--system", str(tmp_path / "missing.mrg")], "missing.mrg"),
        (["--references", str(GOLD), "--system", str(short)], "sentence"),
        (["--references", str(GOLD), "--system", str(bad)], "bad.mrg"),
        (["--references", str(GOLD), "--system", str(PRED), "--pred", str(PRED)], "--pred"),
        (["--references", str(GOLD), "--system", str(PRED), "--params", str(params)], "FROBNICATE"),
    ]
    assert_one_line_errors(capsys, "constituency", cases)
