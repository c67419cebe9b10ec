"""``metametric-jax score coref``: JSON equal to the task module, the table equal to what scorer.pl prints, positional
files in scorer.pl's order, options, exit statuses, warnings and the progress bar."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from helpers import run, run_json

from metametric_jax.cli import LARGE_INPUT
from metametric_jax.tasks import coref

DATA = resources.files("metametric_jax") / "data"
SAMPLE = (DATA / "coref" / "sample.key", DATA / "coref" / "sample.response")
SCORER_TESTS = Path(__file__).resolve().parents[1] / "data" / "conll2012-scorer-tests"
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "coref"


def test_sample_json_equals_score_files(capsys):
    got, err = run_json(capsys, "score", "coref")
    expected = coref.score_files(predictions=SAMPLE[1], references=SAMPLE[0]).scores
    assert got == expected
    assert set(got) == {"muc", "bcub", "ceafm", "ceafe", "blanc", "lea", "conll", "mentions"}
    assert set(got["conll"]) == {"f1"}
    assert "bundled coref sample" in err


def test_positional_files_in_scorer_order(capsys):
    key, response = FIXTURES / "litbank.key", FIXTURES / "litbank.response"
    positional, _ = run_json(capsys, "score", "coref", str(key), str(response))
    options, _ = run_json(capsys, "score", "coref", "--response", str(response), "--key", str(key))
    assert positional == options == coref.score_files(predictions=response, references=key).scores


def _scorer_line(output: Path, metric: str, kind: str) -> tuple[str, ...]:
    lines = output.read_text().split(f"METRIC {metric}:")[1]
    m = re.search(
        rf"^{kind}: Recall: \((\S+) / (\S+)\) (\S+)%\tPrecision: \((\S+) / (\S+)\) (\S+)%\tF1: (\S+)%$", lines, re.M
    )
    assert m is not None, (metric, kind)
    return m.groups()


def _two_decimals(perl: str) -> str:
    return f"{float(perl):.2f}"


@pytest.mark.parametrize("name", ["litbank", "repeats", "TC-A-4", "TC-M-3"])
def test_table_prints_what_scorer_pl_prints(capsys, name):
    if name.startswith("TC-"):
        key, response = SCORER_TESTS / f"{name[:4]}.key", SCORER_TESTS / f"{name}.response"
    else:
        key, response = FIXTURES / f"{name}.key", FIXTURES / f"{name}.response"
    code, out, err = run(capsys, "score", "coref", str(key), str(response))
    assert code == 0, err
    output = FIXTURES / "scorer" / f"{name}.txt"
    rows = {"muc": "MUC", "bcub": "B3", "ceafm": "CEAFm", "ceafe": "CEAFe"}
    cells = [line.split("│") for line in out.splitlines() if "│" in line]
    for metric, label in rows.items():
        nr, dr, r, np_, dp, p, f1 = _scorer_line(output, metric, "Coreference")
        i = next(k for k, c in enumerate(cells) if c[0].strip() == label)
        assert [c.strip() for c in cells[i][1:]] == [_two_decimals(r), _two_decimals(p), _two_decimals(f1)]
        assert [c.strip() for c in cells[i + 1][1:3]] == [f"({nr} / {dr})", f"({np_} / {dp})"]
    nr, dr, r, np_, dp, p, f1 = _scorer_line(output, "blanc", "BLANC")
    i = next(k for k, c in enumerate(cells) if c[0].strip() == "BLANC" and cells[k + 1][0].strip() == "")
    assert [c.strip() for c in cells[i][1:]] == [_two_decimals(r), _two_decimals(p), _two_decimals(f1)]
    assert [c.strip() for c in cells[i + 1][1:3]] == [f"({nr} / 1)", f"({np_} / 1)"]


def test_truncated_not_rounded(capsys, tmp_path):
    # MUC recall 2/3 = 66.666...%: scorer.pl prints 66.66, rounding would give 66.67
    key, response = tmp_path / "k", tmp_path / "r"
    key.write_text("#begin document (d);\nd (1)\nd (1)\nd (1)\nd (1)\n#end document\n")
    response.write_text("#begin document (d);\nd (1)\nd (1)\nd (1)\nd -\n#end document\n")
    code, out, _ = run(capsys, "score", "coref", str(key), str(response))
    assert code == 0 and "66.66" in out and "66.67" not in out and "(2 / 3)" in out
    got, _ = run_json(capsys, "score", "coref", str(key), str(response))
    assert got["muc"]["recall"] == 2 / 3  # JSON keeps full precision


def test_metric_option(capsys):
    got, _ = run_json(capsys, "score", "coref", "--metric", "ceafe")
    full, _ = run_json(capsys, "score", "coref")
    assert got == {"mentions": full["mentions"], "ceafe": full["ceafe"]}
    code, out, _ = run(capsys, "score", "coref", "--metric", "muc")
    assert code == 0 and "MUC" in out and "CEAFe" not in out and "CoNLL" not in out


def test_per_document(capsys):
    key, response = FIXTURES / "repeats.key", FIXTURES / "repeats.response"
    got, _ = run_json(capsys, "score", "coref", "--per-document", str(key), str(response))
    report = coref.score_files(predictions=response, references=key)
    assert got["all"] == report.scores
    assert got["per_document"] == {item["id"]: {k: v for k, v in item.items() if k != "id"} for item in report.items}
    code, out, _ = run(capsys, "score", "coref", "--per-document", "--metric", "muc", str(key), str(response))
    assert code == 0 and "(rep_a); part 000" in out and "(rep_b); part 000" in out and "TOTAL" in out


def test_repeated_mention_options(capsys):
    key, response = FIXTURES / "repeats.key", FIXTURES / "too_many_repeats.response"
    code, out, err = run(capsys, "score", "coref", str(key), str(response))
    assert code == 1 and out == "" and "too many repeated mentions (12 > 10)" in err and "Traceback" not in err
    assert "--max-repeated-mentions -1" in err and err.count("\n") == 1  # the way out, as the command line spells it
    code, _, err = run(capsys, "score", "coref", "--max-repeated-mentions", "-1", str(key), str(response))
    assert code == 0 and "x12" in err
    code, _, err = run(capsys, "score", "coref", "--max-repeated-mentions", "12", str(key), str(response))
    assert code == 0 and "x12" in err
    for bad in ("-2", "-100", "ten"):  # only -1 means no limit
        code, out, err = run(capsys, "score", "coref", "--max-repeated-mentions", bad, str(key), str(response))
        assert code == 2 and out == "" and "expected a count of 0 or more, or -1 for no limit" in err, bad
        code, out, err = run(capsys, "analyze", "coref", "--references", str(key), "--system", str(response),
                             "--max-repeated-mentions", bad)  # fmt: skip
        assert code == 2 and out == "" and "expected a count of 0 or more, or -1 for no limit" in err, bad
    first, _ = run_json(
        capsys, "score", "coref", "--repeated-mentions", "first", str(key), str(FIXTURES / "repeats.response")
    )
    assert (
        first
        == coref.score_files(
            predictions=FIXTURES / "repeats.response", references=key, repeated_mentions="first"
        ).scores
    )


def test_scorer_test_cases_published_figures(capsys):
    cases = {c["id"]: c for c in json.loads((SCORER_TESTS / "expected.json").read_text())["cases"]}
    for case_id in ("A1", "A2", "A3", "D1", "N1"):
        case = cases[case_id]
        got, _ = run_json(
            capsys, "score", "coref", str(SCORER_TESTS / case["key"]), str(SCORER_TESTS / case["response"])
        )
        for metric, figures in case["expected"].items():
            for name, value in figures.items():
                assert got[metric][name] == pytest.approx(value, abs=1e-4), (case_id, metric, name)


def test_malformed_file_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_text("#begin document (a); part 000\na 0 0 x (1\na 0 1 y -\n#end document\n")
    code, _, err = run(capsys, "score", "coref", "--key", str(bad), "--response", str(bad))
    assert code == 1 and err.startswith(f"metametric-jax: error: {bad}:4: ") and "Traceback" not in err


def test_misaligned_response_is_an_error(capsys, tmp_path):
    key = FIXTURES / "litbank.key"
    lines = key.read_text().splitlines(keepends=True)
    response = tmp_path / "short.response"
    response.write_text("".join(lines[:40] + lines[41:]))
    code, out, err = run(capsys, "score", "coref", str(key), str(response))
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{response}:41: document (1023_bleak_house_brat); part 000 has" in err and str(key) in err


def test_bom_and_crlf_accepted(capsys, tmp_path):
    key, response = FIXTURES / "litbank.key", FIXTURES / "litbank.response"
    odd = tmp_path / "odd.response"
    odd.write_bytes(b"\xef\xbb\xbf" + response.read_bytes().replace(b"\n", b"\r\n"))
    plain, _ = run_json(capsys, "score", "coref", str(key), str(response))
    got, _ = run_json(capsys, "score", "coref", str(key), str(odd))
    assert got == plain


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["score", "coref", "--key", "k.txt"], "--response"),
        (["score", "coref", "--response", "r.txt"], "--key"),
        (["score", "coref", "k.txt"], "expected two files"),
        (["score", "coref", "k.txt", "r.txt", "--key", "k.txt"], "not both"),
        (["score", "coref", "--metric", "smatch"], "invalid choice"),
    ],
)
def test_bad_usage_exits_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err


def test_missing_documents_are_warned_on_stderr(capsys, tmp_path):
    key, response = tmp_path / "k.txt", tmp_path / "r.txt"
    key.write_text("#begin document (a); part 000\na (1)\na (1)\n#end document\n")
    response.write_text("#begin document (b); part 000\nb (1)\n#end document\n")
    got, err = run_json(capsys, "score", "coref", "--key", str(key), "--response", str(response))
    assert "warning" in err and "(a); part 000" in err and "(b); part 000" in err
    assert (got["muc"]["recall"], got["muc"]["precision"], got["muc"]["f1"]) == (0.0, 0.0, 0.0)


def test_part_spelling_warned(capsys):
    key, response = FIXTURES / "part_spelling.key", FIXTURES / "part_spelling.response"
    got, err = run_json(capsys, "score", "coref", str(key), str(response))
    same, _ = run_json(capsys, "score", "coref", str(key), str(FIXTURES / "part_spelling_same.response"))
    assert got == same and "'(ps_one); part 0' in the key and '(ps_one); part 000' in the response" in err


def test_empty_reference_file_warns(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, out, err = run(capsys, "score", "coref", "--key", str(empty), "--response", str(empty), "--format", "json")
    assert code == 0
    json.loads(out)
    assert "holds no documents" in err


def test_progress_bar_on_large_file(capsys, tmp_path):
    rng = random.Random(3)
    key_lines, response_lines = [], []
    for d in range(2 * LARGE_INPUT):
        key_cols = ["(1", "1)", "-", "(1)", "(2)"]
        response_cols = [rng.choice(["(1)", "-", "(2)"]) for _ in key_cols]
        for lines, cols in ((key_lines, key_cols), (response_lines, response_cols)):
            lines.append(f"#begin document (d{d}); part 000")
            lines.extend(f"d{d} {c}" for c in cols)
            lines.append("#end document")
    key, response = tmp_path / "big.key", tmp_path / "big.response"
    key.write_text("\n".join(key_lines) + "\n")
    response.write_text("\n".join(response_lines) + "\n")
    got, err = run_json(capsys, "score", "coref", "--key", str(key), "--response", str(response))
    assert "coref: scoring documents" in err and f"{2 * LARGE_INPUT}/{2 * LARGE_INPUT}" in err
    assert got == coref.score_files(predictions=response, references=key).scores


def test_no_progress_bar_on_small_input(capsys):
    _, err = run_json(capsys, "score", "coref")
    assert "scoring documents" not in err


def test_command_does_not_import_jax():
    code = (
        "import sys; from metametric_jax.cli import main; "
        "rc = main(['score', 'coref', '--format', 'json']); "
        "assert rc == 0; assert 'jax' not in sys.modules, 'jax imported'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr


def _corpus(tmp_path: Path, n_docs: int = 40, seed: int = 5) -> tuple[Path, Path]:
    rng = random.Random(seed)
    key_lines, response_lines = [], []
    for d in range(n_docs):
        key_cols = ["(1", "1)", "-", "(1)", "(2)", "(2)", "(3)", "-", "(3)"]
        response_cols = [rng.choice(["(1)", "-", "(2)", "(3)"]) for _ in key_cols]
        for lines, cols in ((key_lines, key_cols), (response_lines, response_cols)):
            lines.append(f"#begin document (d{d}); part 000")
            lines.extend(f"d{d} {c}" for c in cols)
            lines.append("#end document")
    key, response = tmp_path / "corpus.key", tmp_path / "corpus.response"
    key.write_text("\n".join(key_lines) + "\n")
    response.write_text("\n".join(response_lines) + "\n")
    return key, response


def test_bootstrap_intervals_around_the_figures(capsys, tmp_path):
    key, response = _corpus(tmp_path)
    got, _ = run_json(capsys, "score", "coref", str(key), str(response), "--bootstrap", "60")
    plain = coref.score_files(predictions=response, references=key).scores
    assert got["replicates"] == 60 and got["level"] == 0.95
    for metric in ("muc", "bcub", "ceafe", "blanc", "lea", "mentions"):
        for figure in ("recall", "precision", "f1"):
            low, high = got["intervals"][metric][figure]
            assert low - 1e-6 <= plain[metric][figure] <= high + 1e-6, (metric, figure)
    low, high = got["intervals"]["conll"]["f1"]
    assert low <= plain["conll"]["f1"] <= high


def test_compare_a_system_with_itself(capsys, tmp_path):
    key, response = _corpus(tmp_path)
    argv = ["compare", "coref", "--references", str(key), "--system", str(response), "--system", str(response)]
    got, _ = run_json(capsys, *argv, "--samples", "50")
    assert got["delta"]["conll"]["f1"] == 0.0 and got["p_value"]["conll"]["f1"] == 1.0
    assert got["a"]["muc"]["f1"] == pytest.approx(
        coref.score_files(predictions=response, references=key).scores["muc"]["f1"], abs=1e-6
    )
