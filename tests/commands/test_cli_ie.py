"""``metametric-jax score ie``: JSON equal to the task module, table output, options, errors and exit statuses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import metametric_jax
from metametric_jax.cli import main
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import ie

SAMPLE = Path(metametric_jax.__file__).resolve().parent / "data" / "ie"
GOLD, PRED = SAMPLE / "gold.jsonl", SAMPLE / "pred.jsonl"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return main_run(capsys, "score", "ie", *argv)


def main_run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("options", [[], ["--mode", "boundaries"], ["--undirected"], ["--mode", "strict"]])
def test_json_equals_score_files(capsys, options) -> None:
    code, out, err = run(capsys, "--gold", str(GOLD), "--pred", str(PRED), *options, "--format", "json")
    assert code == 0, err
    mode = options[1] if options[:1] == ["--mode"] else "strict"
    expected = ie.score_files(predictions=PRED, references=GOLD, mode=mode, directed="--undirected" not in options)
    assert json.loads(out) == expected.scores
    assert set(json.loads(out)) == {"mode", "documents", "entities", "relations", "triggers", "arguments"}
    assert err == ""


def test_bundled_sample_and_per_document(capsys) -> None:
    code, out, err = run(capsys, "--per-document", "--format", "json")
    assert code == 0 and "bundled ie sample" in err
    got = json.loads(out)
    report = ie.score_files(predictions=PRED, references=GOLD)
    assert got["per_document"] == report.items
    assert [item["id"] for item in got["per_document"]] == ["doc-1", "doc-2", "doc-3"]
    del got["per_document"]
    assert got == report.scores


def test_progress_path_gives_the_same_figures(capsys) -> None:
    base = run(capsys, "--gold", str(GOLD), "--pred", str(PRED), "--format", "json")
    shown = run(capsys, "--gold", str(GOLD), "--pred", str(PRED), "--format", "json", "--progress")
    assert base[0] == shown[0] == 0
    assert json.loads(base[1]) == json.loads(shown[1])


def test_table(capsys) -> None:
    code, out, _ = run(capsys, "--gold", str(GOLD), "--pred", str(PRED))
    assert code == 0
    for text in ("Relations", "Triggers (cls.)", "Arguments (cls.)", "57.14", "36.36", "mode strict; 3 documents"):
        assert text in out
    code, out, _ = run(capsys, "--gold", str(GOLD), "--pred", str(PRED), "--mode", "boundaries", "--per-document")
    assert code == 0 and "Arguments (id.)" in out and "doc-2: Relations" in out


def test_bad_input_is_one_line_exit_1(capsys, tmp_path) -> None:
    bad = tmp_path / "pred.jsonl"
    bad.write_text('{"id": "doc-1"}\n{"id": "doc-2", "entities": [{"start": 0, "end": "2", "type": "PER"}]}\n')
    code, out, err = run(capsys, "--gold", str(GOLD), "--pred", str(bad))
    assert code == 1 and out == ""
    assert err.strip() == (
        f"metametric-jax: error: {bad}:2: entities[0]: expected 'end' to be an integer, found the string '2'"
    )
    code, _, err = run(capsys, "--gold", str(GOLD), "--pred", str(tmp_path / "missing.jsonl"))
    assert code == 1 and "missing.jsonl" in err and "Traceback" not in err


def test_usage_errors_exit_2(capsys) -> None:
    assert run(capsys, "--gold", str(GOLD))[0] == 2
    assert run(capsys, "--mode", "lenient")[0] == 2


def test_bom_crlf_and_warnings(capsys, tmp_path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(b"\xef\xbb\xbf" + GOLD.read_bytes().replace(b"\n", b"\r\n"))
    code, out, err = run(capsys, "--gold", str(gold), "--pred", str(PRED), "--format", "json")
    assert code == 0 and json.loads(out) == ie.score_files(predictions=PRED, references=GOLD).scores
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = run(capsys, "--gold", str(empty), "--pred", str(empty), "--format", "json")
    assert code == 0 and "holds no documents" in err and json.loads(out)["relations"]["f1"] == 0.0


def test_whole_process_no_traceback(tmp_path) -> None:
    bad = tmp_path / "gold.jsonl"
    bad.write_text("{not json}\n")
    done = subprocess.run(
        [sys.executable, "-m", "metametric_jax", "score", "ie", "--gold", str(bad), "--pred", str(PRED)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{bad}:1: expected a JSON object (one per line), found invalid JSON" in done.stderr


def _paths(gold: Path, pred: Path) -> dict[str, list[str]]:
    """Every command line that reads an IE prediction file against a reference file."""
    tests = ["--samples", "20"]
    return {
        "score": ["score", "ie", "--gold", str(gold), "--pred", str(pred)],
        "jobs": ["score", "ie", "--gold", str(gold), "--pred", str(pred), "--jobs", "2"],
        "bootstrap": ["score", "ie", "--gold", str(gold), "--pred", str(pred), "--bootstrap", "20"],
        "compare": ["compare", "ie", "--references", str(gold), "--system", str(pred), "--system", str(PRED), *tests],
        "analyze": ["analyze", "ie", "--references", str(gold), "--system", str(pred), "--system", str(PRED), *tests],
    }


def _jsonl(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def _docs(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_path_warns_of_a_key_resembling_a_known_one(capsys, tmp_path) -> None:
    gold_docs, pred_docs = _docs(GOLD), _docs(PRED)
    gold_docs[2]["evnts"] = []
    for doc in pred_docs[:2]:
        doc["relation"] = []
        doc["sentences"] = [["a"]]  # a key of real datasets, unlike any known one: silent
    gold, pred = _jsonl(tmp_path / "gold.jsonl", gold_docs), _jsonl(tmp_path / "pred.jsonl", pred_docs)
    tail = "; later lines with it are not named"
    of_gold = f"{gold}:3: the document: ignored the key 'evnts', close to the key 'events' (given too){tail}"
    of_pred = f"{pred}:1: the document: ignored the key 'relation', close to the key 'relations' (given too){tail}"
    for name, argv in _paths(gold, pred).items():
        code, out, err = main_run(capsys, *argv, "--format", "json")
        assert code == 0, (name, err)
        warned = [line.removeprefix("metametric-jax: warning: ") for line in err.splitlines()]
        # compare reads the reference once per system and gives the warning both runs give once, as analyze does
        assert sum(line.endswith(of_gold) for line in warned) == 1, (name, err)
        assert sum(line.endswith(of_pred) for line in warned) == 1, (name, err)
        assert not any("sentences" in line for line in warned)
        if name in ("score", "jobs"):
            assert json.loads(out) == ie.score_files(predictions=PRED, references=GOLD).scores


def test_every_path_refuses_offsets_past_the_tokens_of_the_reference(capsys, tmp_path) -> None:
    docs = _docs(PRED)
    docs[1]["entities"][2]["end"] = 12  # doc-2 has 9 tokens in the reference; the prediction gives none
    pred = _jsonl(tmp_path / "pred.jsonl", docs)
    message = f"{pred}:2: entities[2]: expected end <= 9 (the tokens of {GOLD} line 2), found end 12"
    with pytest.raises(InputFormatError, match=re.escape(message)):
        ie.score_files(predictions=pred, references=GOLD)
    for name, argv in _paths(GOLD, pred).items():
        code, out, err = main_run(capsys, *argv)
        assert code == 1 and out == "" and err == f"metametric-jax: error: {message}\n", (name, err)
