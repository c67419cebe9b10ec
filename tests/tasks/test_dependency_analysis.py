"""``analyze dependency``: the overall bucket is ``score dependency``'s UAS and LAS and ``compare dependency``'s test,
the buckets equal direct counts word by word, and every bucketing adds up to the scorer's counts."""

from __future__ import annotations

import collections
import html.parser
import json
from pathlib import Path

import pytest
from helpers import assert_one_line_errors
from helpers import cli_json as run_json

from metametric_jax.cli import main
from metametric_jax.normalizer import f_measure, prf
from metametric_jax.tasks import dependency_analysis as da
from metametric_jax.tasks.readers.conllu import parse_conllu, read_conllu

DATA = Path(__file__).parents[1] / "data" / "dependency"
GOLD = DATA / "gold.conllu"
HEADS = DATA / "pred-heads.conllu"  # the reference's tokens, other heads and relations
TOKENS = DATA / "pred-tokenization.conllu"  # other tokens, a few heads and relations


@pytest.fixture(scope="module")
def report() -> dict:
    got = da.analyze_files(GOLD, [HEADS, TOKENS], unit="sentence", samples=200)
    return json.loads(json.dumps(got, allow_nan=False))


def test_overall_is_score_dependency_exactly(capsys, report) -> None:
    for s, pred in enumerate((HEADS, TOKENS)):
        score = run_json(capsys, "score", "dependency", "--gold", str(GOLD), "--pred", str(pred), "--format", "json")
        figures = report["analyses"]["overall"]["all"]["figures"][s]
        for f in ("uas", "las"):
            assert figures[f] == {k: score[f][k] for k in ("precision", "recall", "f1")}, (pred, f)
    counts = run_json(
        capsys, "score", "dependency", "--gold", str(GOLD), "--pred", str(HEADS), "-c", "--format", "json"
    )
    assert report["analyses"]["overall"]["all"]["count"] == counts["las"]["gold"]
    assert report["unit"] == "sentences" and report["n"] == 42


def test_word_items_add_up_to_the_scorer_exactly() -> None:
    """Every word in one custom bucket: its split read-out is score dependency's UAS and LAS bit for bit, other
    tokenizations included."""
    gold = read_conllu(GOLD)
    got = da.analyze(gold, [read_conllu(HEADS), read_conllu(TOKENS)], samples=20, buckets={"one": lambda w: "all"})
    for s in range(2):
        assert got["analyses"]["one"]["all"]["figures"][s] == got["analyses"]["overall"]["all"]["figures"][s]
    assert got["analyses"]["one"]["all"]["count"] == got["analyses"]["overall"]["all"]["count"]
    for name in ("deprel", "arc_length", "direction", "depth"):
        assert sum(e["count"] for e in got["analyses"][name].values()) == got["analyses"]["overall"]["all"]["count"]


def words(path: Path):
    """Each word of a file: (sentence, id, head, deprel without subtype, head's id chain depth)."""
    out = []
    for k, sentence in enumerate(read_conllu(path)):
        heads = {w.id: w.head for w in sentence.words}
        for w in sentence.words:
            depth, node = 0, w.id
            while node:
                depth, node = depth + 1, heads[node]
            out.append((k, w.id, w.head, w.deprel.split(":")[0], depth))
    return out


def direct(gold, pred, bucket_of):
    """{bucket: {figure: [correct predicted, predicted, correct reference, reference]}}, words paired by position."""
    table: dict = collections.defaultdict(lambda: {"uas": [0, 0, 0, 0], "las": [0, 0, 0, 0]})
    for g, p in zip(gold, pred, strict=True):
        assert g[:2] == p[:2]
        uas = g[2] == p[2]
        las = uas and g[3] == p[3]
        for f, ok in (("uas", uas), ("las", las)):
            table[bucket_of(p)][f][0] += ok
            table[bucket_of(p)][f][1] += 1
            table[bucket_of(g)][f][2] += ok
            table[bucket_of(g)][f][3] += 1
    return table


def test_buckets_equal_direct_counts_word_by_word(report) -> None:
    gold, pred = words(GOLD), words(HEADS)
    bucketings = {
        "deprel": lambda w: w[3],
        "arc_length": lambda w: da.arc_length_bucket(w[1], w[2]),
        "direction": lambda w: da.direction_bucket(w[1], w[2]),
        "depth": lambda w: da.depth_bucket(w[4]),
    }
    for name, bucket_of in bucketings.items():
        expected = direct(gold, pred, bucket_of)
        assert set(expected) <= set(report["analyses"][name]), name
        for bucket in set(report["analyses"][name]) - set(expected):  # the other system's buckets
            assert report["analyses"][name][bucket]["figures"][0]["las"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
        for bucket, per in expected.items():
            entry = report["analyses"][name][bucket]
            assert entry["count"] == per["las"][3]
            for f, (cp, n_p, cr, n_r) in per.items():
                figures = entry["figures"][0][f]
                assert figures["precision"] == (cp / n_p if n_p else 0.0), (name, bucket, f)
                assert figures["recall"] == (cr / n_r if n_r else 0.0), (name, bucket, f)
                p, r = (cp / n_p if n_p else 0.0), (cr / n_r if n_r else 0.0)
                f1 = prf(cp, n_p, n_r)["f1"] if cp == cr else f_measure(p, r)
                assert figures["f1"] == f1, (name, bucket, f)
    assert list(report["analyses"]["arc_length"]) == [
        b for b in da.ARC_LENGTHS if b in report["analyses"]["arc_length"]
    ]
    assert list(report["analyses"]["deprel"]) == sorted(report["analyses"]["deprel"])
    assert report["correction"]["figures"]["deprel"] == "las/f1"


def test_confusion_matrix_equals_direct_counts(report) -> None:
    conf = report["analyses"]["confusion"]
    gold, pred = words(GOLD), words(HEADS)
    grid = collections.Counter((g[3], p[3]) for g, p in zip(gold, pred))
    labels = conf["gold"][:-1]
    assert conf["gold"][-1] == conf["predicted"][-1] == da.UNALIGNED
    for i, g in enumerate(labels):
        for j, p in enumerate(labels):
            assert conf["matrices"][0][i][j] == grid[(g, p)], (g, p)
    assert sum(conf["matrices"][0][-1]) == 0 and all(row[-1] == 0 for row in conf["matrices"][0])
    # the other tokenization leaves words unaligned on both sides
    assert sum(conf["matrices"][1][-1]) > 0 and sum(row[-1] for row in conf["matrices"][1]) > 0


def test_documents_as_units_and_compare_s_test(capsys) -> None:
    argv = ["--references", str(GOLD), "--samples", "200", "--format", "json"]
    report = run_json(capsys, "analyze", "dependency", *argv, "--system", str(HEADS), "--system", str(TOKENS),
                      "--correction", "none", "--min-units", "1")  # fmt: skip
    assert report["unit"] == "documents" and report["n"] == 5
    assert all(e["units"] <= 5 for e in report["analyses"]["deprel"].values())
    compare = run_json(capsys, "compare", "dependency", *argv, "--system", str(TOKENS), "--system", str(HEADS))
    test = report["analyses"]["overall"]["all"]["test"]
    assert test["delta"] == compare["delta"]["las"]["f1"]
    assert test["p_value"] == compare["p_value"]["las"]["f1"] and test["p_adjusted"] == test["p_value"]
    sentences = run_json(capsys, "analyze", "dependency", *argv, "--system", str(HEADS), "--unit", "sentence")
    assert sentences["n"] == 42 and sentences["unit"] == "sentences"
    assert sentences["analyses"]["overall"]["all"]["figures"] == [report["analyses"]["overall"]["all"]["figures"][0]]


def test_custom_buckets_in_memory_and_three_systems() -> None:
    gold, heads = read_conllu(GOLD), read_conllu(HEADS)
    got = da.analyze(gold, [heads, gold, heads], names=["h", "gold", "h2"], samples=50,
                     buckets={"upos": lambda w: w.upos})  # fmt: skip
    json.dumps(got, allow_nan=False)
    entry = got["analyses"]["upos"]["NOUN"]
    assert len(entry["figures"]) == 3 and len(entry["tests"]) == 2
    assert entry["figures"][1]["las"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert entry["figures"][0] == entry["figures"][2] and entry["tests"][1]["delta"] == 0.0
    nouns = sum(1 for s in gold for w in s.words if w.upos == "NOUN")
    assert entry["count"] == nouns


def test_depth_of_a_cycle_and_the_buckets() -> None:
    row = "{}\tw{}\t_\tX\t_\t_\t{}\tdep\t_\t_"
    cyclic = parse_conllu("\n".join(row.format(i, i, h) for i, h in ((1, 0), (2, 3), (3, 2))) + "\n")
    got = da.analyze(cyclic, [cyclic], samples=20, check_trees=False, min_units=1)
    assert got["analyses"]["depth"]["cycle"]["count"] == 2 and got["analyses"]["depth"]["1"]["count"] == 1
    assert [da.arc_length_bucket(5, h) for h in (0, 4, 7, 8, 11, 12)] == ["root", "1", "2", "3-6", "3-6", "7+"]
    assert [da.direction_bucket(5, h) for h in (0, 2, 9)] == ["root", "left", "right"]


class Cells(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[str, tuple[str, str]] = {}
        self._open: tuple[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-key" in a:
            self._open, self._text = (a["data-key"], a.get("data-value") or ""), []

    def handle_data(self, data):
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            self.cells[self._open[0]] = (self._open[1], "".join(self._text).strip())
            self._open = None


def test_formats_render_and_the_page_holds_the_json_s_numbers(capsys, tmp_path) -> None:
    base = ["analyze", "dependency", "--references", str(GOLD), "--system", str(HEADS), "--system", str(TOKENS)]
    base += ["--samples", "50", "--unit", "sentence"]
    report = run_json(capsys, *base, "--format", "json")
    for form, needle in (("table", "Arc length"), ("latex", "\\toprule")):
        assert main([*base, "--format", form]) == 0
        assert needle in capsys.readouterr().out
    page = tmp_path / "report.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    parser = Cells()
    parser.feed(page.read_text(encoding="utf-8"))
    assert len(parser.cells) > 500
    for key, (value, _) in parser.cells.items():
        node = report["analyses"]
        for part in key.split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert (value == "") if node is None else float(value) == node, key
    assert "Relation confusion" in page.read_text(encoding="utf-8")


def test_bad_requests_end_in_one_line(capsys, tmp_path) -> None:
    other = tmp_path / "other.conllu"
    other.write_text("1\tHello\t_\tX\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    plain = tmp_path / "plain.conllu"
    plain.write_text(GOLD.read_text(encoding="utf-8").replace("# newdoc", "# nodoc"), encoding="utf-8")
    cases = [
        (["--references", str(GOLD), "--system", str(tmp_path / "missing.conllu")], "missing.conllu"),
        (["--references", str(GOLD), "--system", str(other)], "different text"),
        (["--references", str(plain), "--system", str(HEADS), "--unit", "document"], "newdoc"),
        (["--references", str(GOLD), "--system", str(HEADS), "--pred", str(HEADS)], "--pred"),
        (["--references", str(GOLD), "--system", str(HEADS), "-c"], "--counts"),
    ]
    assert_one_line_errors(capsys, "dependency", cases)
