"""Percentages at a tie print as the official scorer prints them, in every table of the task.

EVALB and conlleval compute a percentage from its counts, ``100.0 * a / b`` in doubles; 100 times the fraction
``a / b`` rounds the other way where the percentage is a tie: 23 of 160 is 14.375, which EVALB and conlleval print
as 14.38 (``evalb -p COLLINS.prm`` of the trees below: "Complete match = 14.38"; ``conlleval.pl`` of the tags below:
"precision: 14.38%" and "accuracy: 14.38%"), where ``f"{100 * (23 / 160):.2f}"`` is 14.37. The CoNLL 2018 script
prints ``100 * fraction``, so the dependency table keeps that.
"""

from __future__ import annotations

from pathlib import Path

from helpers import run


def _row(out: str, label: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith(f"│ {label}"))
    return [cell.strip() for cell in line.strip("│").split("│")[1:]]


def test_the_tie_is_one_where_rounding_the_fraction_differs() -> None:
    assert f"{100 * (23 / 160):.2f}" == "14.37" and f"{100.0 * 23 / 160:.2f}" == "14.38"


def test_constituency_tables_print_evalb_s_percentages(capsys, tmp_path: Path) -> None:
    gold = ["(TOP (S (NP (NN a)) (VP (VB b))))"] * 160
    pred = gold[:23] + ["(TOP (S (ADJP (NN a)) (VP (VB b))))"] * 137
    (tmp_path / "g.mrg").write_text("\n".join(gold) + "\n")
    (tmp_path / "p.mrg").write_text("\n".join(pred) + "\n")
    files = ["--gold", str(tmp_path / "g.mrg"), "--pred", str(tmp_path / "p.mrg")]
    code, out, err = run(capsys, "score", "constituency", *files)
    assert code == 0, err
    assert _row(out, "Complete match") == ["14.38", "14.38"]
    code, out, err = run(capsys, "score", "constituency", *files, "--bootstrap", "20")
    assert code == 0, err
    assert _row(out, "all/complete_match")[0] == "14.38" and _row(out, "len40/complete_match")[0] == "14.38"
    system = str(tmp_path / "p.mrg")
    compared = ["--references", str(tmp_path / "g.mrg"), "--system", system, "--system", system, "--samples", "20"]
    code, out, err = run(capsys, "compare", "constituency", *compared)
    assert code == 0, err
    assert _row(out, "all/complete_match")[:2] == ["14.38", "14.38"]


def test_ner_tables_print_conlleval_s_percentages(capsys, tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("\n".join(f"w{k} B-PER\n" for k in range(160)))
    (tmp_path / "p.txt").write_text("\n".join(f"w{k} {'B-PER' if k < 23 else 'B-LOC'}\n" for k in range(160)))
    files = ["--gold", str(tmp_path / "g.txt"), "--pred", str(tmp_path / "p.txt")]
    code, out, err = run(capsys, "score", "ner", *files)
    assert code == 0, err
    assert _row(out, "PER")[:2] == ["100.00", "14.38"] and _row(out, "micro avg")[:3] == ["14.38"] * 3
    assert "accuracy 14.38%" in out
    code, out, err = run(capsys, "score", "ner", *files, "--bootstrap", "20")
    assert code == 0, err
    assert _row(out, "per_type/PER/recall")[0] == "14.38" and _row(out, "accuracy")[0] == "14.38"


def test_average_crossing_prints_as_a_number_in_every_table(capsys) -> None:
    data = Path(__file__).parent / "data" / "constituency"
    files = ["--gold", str(data / "gold.mrg"), "--pred", str(data / "pred.mrg")]
    code, out, err = run(capsys, "score", "constituency", *files)
    assert code == 0, err
    shown = _row(out, "Average crossing")[0]
    assert 0 < float(shown) < 5  # brackets per sentence, not a percentage
    code, out, err = run(capsys, "score", "constituency", *files, "--bootstrap", "20")
    assert code == 0, err
    assert _row(out, "all/average_crossing")[0] == shown and "average_crossing as a number" in out.replace("\n", " ")
