"""``constituency``'s resampling rows and read-out: EVALB's figures bit for bit, sentences as the unit, no JAX."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.cli import build_parser, main
from metametric_jax.commands import registry
from metametric_jax.intervals import exact_totals, flatten
from metametric_jax.tasks import constituency as con
from metametric_jax.tasks.readers.ptb import read_treebank

DATA = Path(__file__).parents[1] / "data" / "constituency"
SAMPLE = resources.files("metametric_jax") / "data" / "parsing"
GOLD, PRED = str(DATA / "gold.mrg"), str(DATA / "pred.mrg")
PARAMS = [None, "COLLINS.prm", "nk.prm", "labeled.prm", "custom.prm"]
COUNTS = {
    "sentences",
    "error_sentences",
    "skipped_sentences",
    "valid_sentences",
    "matched_brackets",
    "gold_brackets",
    "test_brackets",
    "crossing_brackets",
    "words",
    "correct_tags",
    "max_length",
}


def resample(*argv: str):
    args = build_parser().parse_args(["score", "constituency", *argv])
    return registry()["constituency"].resample(args)


def cli_scores(capsys, gold: str, pred: str, *extra: str) -> dict:
    assert main(["score", "constituency", "--gold", gold, "--pred", pred, *extra, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_readout_is_the_score(res, scores: dict) -> None:
    got = flatten(res.readout(exact_totals(res.rows)))
    want = {p: v for p, v in flatten(scores).items() if p.split("/")[-1] not in COUNTS}
    assert set(got) == set(want)
    for path, value in want.items():
        assert got[path] == value, path


def test_sample_readout_is_the_score_json(capsys) -> None:
    gold, pred = str(SAMPLE / "gold.mrg"), str(SAMPLE / "pred.mrg")
    res = resample("--gold", gold, "--pred", pred)
    assert_readout_is_the_score(res, cli_scores(capsys, gold, pred))
    assert res.unit == "sentences" and res.groups is None and res.ids is None and res.scale == 100


@pytest.mark.parametrize("params", PARAMS)
def test_fixture_readout_is_the_score(capsys, params: str | None) -> None:
    extra = [] if params is None else ["--params", str(DATA / params)]
    for gold, pred in ((GOLD, PRED), (PRED, GOLD)):
        res = resample("--gold", gold, "--pred", pred, *extra)
        assert_readout_is_the_score(res, cli_scores(capsys, gold, pred, *extra))
        # the counts of the summary are the rows' exact sums
        scores = con.score_files(predictions=pred, references=gold, params=extra[1] if extra else None).scores
        totals = exact_totals(res.rows).reshape(2, len(con.ROW_FIELDS))
        for part, row in zip(("all", "len40"), totals):
            for key, value in zip(con.ROW_FIELDS, row.tolist()):
                if key in COUNTS:
                    assert scores[part][key] == value, (part, key)


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def flat(tree: str) -> str:
    """The tree's words and tags under one bracket: no phrase of the gold but the root."""
    leaves = re.findall(r"\(([^\s()]+) ([^\s()]+)\)", tree)
    return "(S " + " ".join(f"({t} {w})" for t, w in leaves) + ")" if leaves else ""


@pytest.mark.parametrize(
    "case", ["empty prediction", "flat prediction", "no trees", "one tree", "duplicates", "error", "shuffled"]
)
def test_edge_files_readout_is_the_score(tmp_path: Path, capsys, case: str) -> None:
    gold, pred = lines(GOLD), lines(PRED)
    if case == "empty prediction":  # parses failed (all but the last, which ends the file): skipped sentences
        pred = [""] * (len(gold) - 1) + pred[-1:]
    elif case == "flat prediction":
        pred = [flat(t) for t in pred]
    elif case == "no trees":
        gold = pred = []
    elif case == "one tree":
        gold, pred = gold[:1], pred[:1]
    elif case == "duplicates":
        gold, pred = gold * 2, pred * 2
    elif case == "error":  # a word differs: an error sentence, left out
        pred[3] = pred[3].replace("(NNP ", "(NNP x", 1)
    else:
        order = list(range(len(gold)))
        random.Random(0).shuffle(order)
        gold, pred = [gold[k] for k in order], [pred[k] for k in order]
    g, p = tmp_path / "gold.mrg", tmp_path / "pred.mrg"
    g.write_text("\n".join(gold) + "\n", encoding="utf-8")
    p.write_text("\n".join(pred) + "\n", encoding="utf-8")
    res = resample("--gold", str(g), "--pred", str(p))
    assert_readout_is_the_score(res, cli_scores(capsys, str(g), str(p)))
    assert res.rows.shape == (len(gold), 2 * len(con.ROW_FIELDS))
    if case == "error":
        assert any("left out, as evalb does" in w for w in res.warnings)
    if case == "no trees":
        assert res.warnings and not flatten(res.readout(exact_totals(res.rows)))["all/f1"]


def test_rows_are_one_per_sentence_and_len40_a_subset() -> None:
    res = resample("--gold", GOLD, "--pred", PRED)
    counts = con.evalb_counts(read_treebank(PRED), read_treebank(GOLD))
    width = len(con.ROW_FIELDS)
    short = counts.length <= con.COLLINS.cutoff_len
    assert np.array_equal(res.rows[short, width:], res.rows[short, :width])
    assert not res.rows[~short, width:].any()
    assert np.array_equal(res.rows[:, con.ROW_FIELDS.index("sentences")], np.ones(len(res.rows)))


def test_readout_of_weighted_totals_never_raises() -> None:
    res = resample("--gold", GOLD, "--pred", PRED)
    for totals in (np.zeros(res.rows.shape[1]), exact_totals(res.rows) * 0.61):
        assert all(np.isfinite(v) for v in flatten(res.readout(totals)).values())
    assert flatten(res.readout(np.zeros(res.rows.shape[1])))["all/f1"] == 0.0


def test_resampling_imports_no_jax(tmp_path: Path) -> None:
    other = tmp_path / "other.mrg"
    other.write_text("\n".join(flat(t) for t in lines(PRED)) + "\n", encoding="utf-8")
    code = f"""
import sys
from metametric_jax.cli import main
assert main(["compare", "constituency", "--references", {GOLD!r}, "--system", {PRED!r}, "--system", {str(other)!r},
             "--samples", "20", "--format", "json"]) == 0
assert main(["score", "constituency", "--gold", {GOLD!r}, "--pred", {PRED!r}, "--bootstrap", "20",
             "--format", "json"]) == 0
print("jax" in sys.modules, file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False"
