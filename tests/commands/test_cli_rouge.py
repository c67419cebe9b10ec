"""``metametric-jax score rouge``: JSON equal to rouge-score on real summaries, the bundled sample, options, errors."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from helpers import run
from rouge_score import rouge_scorer

from metametric_jax.tasks.text import score_files

DATA = Path(__file__).resolve().parents[1] / "data" / "rouge"
SAMPLE = resources.files("metametric_jax") / "data" / "rouge"


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "score", "rouge", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def gum() -> list[dict]:
    with open(DATA / "gum_summaries.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def rouge_score_means(predictions, references, types, use_stemmer=False) -> dict:
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer)
    rows = [scorer.score_multi(list(r), p) for p, r in zip(predictions, references)]
    return {
        k: {
            "precision": float(np.mean([s[k].precision for s in rows])),
            "recall": float(np.mean([s[k].recall for s in rows])),
            "f1": float(np.mean([s[k].fmeasure for s in rows])),
        }
        for k in types
    }


def assert_close(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for kind, figs in expected.items():
        assert set(got[kind]) == {"precision", "recall", "f1"}
        for name, value in figs.items():
            assert got[kind][name] == pytest.approx(value, abs=1e-12), (kind, name)


def write_lines(path: Path, lines: list[str], jsonl: bool = False) -> str:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write((json.dumps(line, ensure_ascii=False) if jsonl else line) + "\n")
    return str(path)


def test_bundled_sample_equals_rouge_score(capsys) -> None:
    code, out, err = run(capsys, "score", "rouge", "--format", "json")
    assert code == 0 and "bundled rouge sample" in err
    preds = (SAMPLE / "predictions.txt").read_text(encoding="utf-8").splitlines()
    refs = (SAMPLE / "references.txt").read_text(encoding="utf-8").splitlines()
    assert len(preds) == len(refs) == 20
    types = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert_close(json.loads(out), rouge_score_means(preds, [[r] for r in refs], types))


def test_table_output(capsys) -> None:
    code, out, _ = run(capsys, "score", "rouge", "--types", "rouge1,rougeL", "--use-stemmer")
    assert code == 0
    assert "rouge1" in out and "rougeL" in out and "rouge2" not in out and "Porter-stemmed" in out


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_jsonl_sentences_and_several_references_equal_rouge_score(tmp_path, capsys, use_stemmer: bool) -> None:
    docs = gum()
    preds = [d["lead3"] for d in docs]
    refs = [[d["summaries"][0]["text"], d["summaries"][2]["text"]] for d in docs]
    p = write_lines(tmp_path / "lead3.jsonl", preds, jsonl=True)
    r1 = write_lines(tmp_path / "human.txt", [r[0] for r in refs])
    r2 = write_lines(tmp_path / "edited.jsonl", [r[1] for r in refs], jsonl=True)
    argv = ["--references", r1, "--references", r2, "--predictions", p, "--types", "rouge1,rouge3,rougeL,rougeLsum"]
    got = run_json(capsys, *argv, *(["--use-stemmer"] if use_stemmer else []))
    expected = rouge_score_means(preds, refs, ["rouge1", "rouge3", "rougeL", "rougeLsum"], use_stemmer)
    assert_close(got, expected)
    assert got["rougeLsum"]["f1"] != got["rougeL"]["f1"]  # the sentences were kept apart
    report = score_files(predictions=p, references=[r1, r2], types=list(expected), use_stemmer=use_stemmer)
    assert got == report.scores


def test_progress_path_gives_the_same_figures(tmp_path, capsys) -> None:
    docs = gum() * 20  # 1,200 examples: more than one chunk
    p = write_lines(tmp_path / "p.txt", [d["summaries"][3]["text"] for d in docs])
    r = write_lines(tmp_path / "r.txt", [d["summaries"][0]["text"] for d in docs])
    quiet = run_json(capsys, "--references", r, "--predictions", p, "--no-progress")
    shown = run_json(capsys, "--references", r, "--predictions", p, "--progress")
    for kind in quiet:
        for name in quiet[kind]:
            assert shown[kind][name] == pytest.approx(quiet[kind][name], abs=1e-12)


def test_bom_and_crlf_are_accepted(tmp_path, capsys) -> None:
    docs = gum()[:10]
    preds = [d["summaries"][4]["text"] for d in docs]
    refs = [d["summaries"][0]["text"] for d in docs]
    plain_p, plain_r = write_lines(tmp_path / "p.txt", preds), write_lines(tmp_path / "r.txt", refs)
    bom_p = tmp_path / "p_bom.txt"
    bom_p.write_bytes(b"\xef\xbb\xbf" + "".join(x + "\r\n" for x in preds).encode("utf-8"))
    bom_r = tmp_path / "r_bom.jsonl"
    bom_r.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(x) + "\r\n" for x in refs).encode("utf-8"))
    a = run_json(capsys, "--references", plain_r, "--predictions", plain_p)
    b = run_json(capsys, "--references", str(bom_r), "--predictions", str(bom_p))
    assert a == b


@pytest.mark.parametrize(
    "files, message",
    [
        ({"p.txt": "a\nb\n", "r.txt": "a\n"}, r"r\.txt:2: expected 2 examples, one per line, as in .*p\.txt; found 1"),
        ({"p.txt": "a\n", "r.txt": "a\nb\nc\n"}, r"p\.txt:2: expected 3 examples, one per line, as in .*r\.txt"),
        ({"p.txt": "a\nb\n", "r.jsonl": '"a"\nb\n'}, r"r\.jsonl:2: expected a JSON string .*invalid JSON"),
        ({"p.txt": "a\nb\n", "r.jsonl": '"a"\n["b"]\n'}, r"r\.jsonl:2: expected a JSON string .*found a JSON list"),
        ({"p.txt": "a\nb\n", "r.jsonl": '"a"\n\n'}, r"r\.jsonl:2: expected a JSON string .*found an empty line"),
        ({"p.txt": b"a\n\xff\n", "r.txt": "a\nb\n"}, r"p\.txt:2: expected UTF-8 text; found the byte 0xff"),
    ],
)
def test_bad_input_is_one_line_with_file_and_line(tmp_path, capsys, files: dict, message: str) -> None:
    paths = {}
    for name, body in files.items():
        path = tmp_path / name
        path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
        paths[name[0]] = str(path)
    code, out, err = run(capsys, "score", "rouge", "--references", paths["r"], "--predictions", paths["p"])
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("metametric-jax: error: ")
    assert re.search(message, err), err


def test_missing_file_and_usage_errors(tmp_path, capsys) -> None:
    p = write_lines(tmp_path / "p.txt", ["a"])
    code, _, err = run(capsys, "score", "rouge", "--references", str(tmp_path / "nope.txt"), "--predictions", p)
    assert code == 1 and "nope.txt" in err and "Traceback" not in err
    code, _, err = run(capsys, "score", "rouge", "--types", "rouge1,rougeW")
    assert code == 2 and "unknown ROUGE type 'rougeW'" in err
    code, _, err = run(capsys, "score", "rouge", "--references", p)
    assert code == 2 and "--predictions" in err
