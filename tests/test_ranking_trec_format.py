"""``metametric-jax score ranking --format trec``: trec_eval's own printout, byte for byte.

The oracle is trec_eval 10.0's printouts of ``tests/data/ranking/expected`` (``cases.json`` holds the command that
produced each): the same command line, its qrels and run given as ``--qrels`` and ``--run``, must print the same bytes.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run

from metametric_jax.tasks import trec_format
from metametric_jax.tasks.trec_format import relstring, trec_line, trec_measures

DATA = Path(__file__).parent / "data" / "ranking"
CASES = json.loads((DATA / "cases.json").read_text())
TREC_EVAL_10 = sorted(name for name, case in CASES.items() if case["trec_eval"] == "10")


def argv_of(name: str) -> list[str]:
    """The case's trec_eval command line as ``score ranking`` options: its flags as given, the two files named."""
    words = shlex.split(CASES[name]["command"])
    assert words[0] == "trec_eval"
    flags, (qrels, ranked) = words[1:-2], words[-2:]
    return ["score", "ranking", *flags, "--qrels", str(DATA / qrels), "--run", str(DATA / ranked), "--format", "trec"]


def expected(name: str) -> str:
    return (DATA / "expected" / f"{name}.txt").read_bytes().decode("utf-8")


def test_every_trec_eval_10_case_is_covered() -> None:
    assert {path.stem for path in (DATA / "expected").glob("*.txt")} == set(CASES)
    assert set(CASES) - set(TREC_EVAL_10) == {"ties-complete-v9"} and len(TREC_EVAL_10) == 16
    assert all("-q" in shlex.split(CASES[name]["command"]) for name in TREC_EVAL_10)


@pytest.mark.parametrize("name", TREC_EVAL_10)
def test_per_query_printout_equals_trec_eval(capsys, name: str) -> None:
    code, out, err = run(capsys, *argv_of(name))
    assert code == 0, err
    assert out == expected(name)  # every byte: padding, tabs, order, integers, -nan, runid, relstring


@pytest.mark.parametrize("name", TREC_EVAL_10)
def test_summary_printout_equals_trec_eval(capsys, name: str) -> None:
    """Without -q trec_eval prints its run lines alone: those of the printout whose query field is ``all``."""
    code, out, err = run(capsys, *[a for a in argv_of(name) if a != "-q"])
    assert code == 0, err
    summary = [line for line in expected(name).splitlines(keepends=True) if line.split("\t")[1] == "all"]
    assert summary and out == "".join(summary)


def test_trec_eval_9_case_differs_only_where_the_versions_differ(capsys) -> None:
    """``ties-complete-v9`` is trec_eval 9's printout: its recall levels are rounded another way (see the README)."""
    code, out, err = run(capsys, *argv_of("ties-complete-v9"))
    assert code == 0 and "judged in" in err  # q12 left out, as trec_eval 9 does, with a warning
    theirs = expected("ties-complete-v9").splitlines()
    offered = {line.split("\t")[0] for line in theirs}  # trec_eval 9 has no rbp, rbp_resid, unj
    ours = [line for line in out.splitlines() if line.split("\t")[0] in offered]
    assert len(ours) == len(theirs) and len(offered) == 95  # 93 figures, runid, relstring
    differ = {a.split("\t")[0].rsplit("_", 1)[0] for a, b in zip(ours, theirs) if a != b}
    assert [a.split("\t")[:2] for a in ours] == [b.split("\t")[:2] for b in theirs]
    assert differ and differ <= {"iprec_at_recall", "11pt"}, differ


def test_bundled_sample_and_format_before_the_task(capsys) -> None:
    code, out, err = run(capsys, "score", "--format", "trec", "ranking", "-q", "-m", "all_trec")
    assert code == 0 and "bundled ranking sample" in err
    assert out == expected("sample")


def test_measures_as_trec_eval_reads_them(capsys) -> None:
    files = ["--qrels", str(DATA / "trec_eval" / "qrels.test"), "--run", str(DATA / "trec_eval" / "results.test")]
    base = ["score", "ranking", *files, "--format", "trec"]
    all_lines = {
        line.split("\t")[0].rstrip(): line
        for line in expected("test-all").splitlines(keepends=True)
        if "\tall\t" in line
    }
    # a family's first explicit parameters win over later ones, over nicknames and over its bare name
    for measures in (["P.5", "P.10"], ["P.5", "P"], ["P", "P.5"], ["official", "P.5"]):
        code, out, err = run(capsys, *base, *[x for m in measures for x in ("-m", m)])
        assert code == 0, err
        assert "P_5 " in out and "P_10 " not in out, measures
    code, out, _ = run(capsys, *base, "-m", "official", "-m", "P.5")
    assert out.startswith(all_lines["runid"] + all_lines["num_q"])
    assert out.endswith(all_lines["iprec_at_recall_1.00"] + all_lines["P_5"])
    # runid and relstring on their own; relstring.N names its lines relstring_N
    code, out, _ = run(capsys, *base, "-q", "-m", "relstring.3", "-m", "runid", "-m", "map")
    assert code == 0
    assert out.splitlines()[:2] == ["map                   \t301\t0.0324", "relstring_3           \t301\t'000'"]
    assert out.endswith(all_lines["runid"] + all_lines["map"])


def test_judged_query_absent_from_the_run_with_c(capsys) -> None:
    """trec_eval blanks the line named ``relstring`` of such a query, not ``relstring_10`` (one document, '-')."""
    files = ["--qrels", str(DATA / "ties-complete.qrels"), "--run", str(DATA / "ties.run")]
    lines = {}
    for measure in ("relstring", "relstring.10"):
        code, out, err = run(capsys, "score", "ranking", *files, "-c", "-q", "-m", measure, "--format", "trec")
        assert code == 0, err
        lines[measure] = [line for line in out.splitlines() if "\tq12\t" in line]
    assert lines == {
        "relstring": ["relstring             \tq12\t''"],
        "relstring.10": ["relstring_10          \tq12\t'-'"],
    }


def test_trec_line_and_relstring() -> None:
    assert trec_line("map", "all", 0.17854506039656948, "mean") == "map                   \tall\t0.1785\n"
    assert trec_line("num_q", "all", 3, "sum") == "num_q                 \tall\t3\n"
    assert trec_line("utility", "301", -358.0, "mean") == "utility               \t301\t-358.0000\n"
    assert trec_line("Rndcg", "q05", float("nan"), "mean") == "Rndcg                 \tq05\t  -nan\n"
    long = "utility_1.5,-1.25,0.5,0.75"  # longer than the column: not cut
    assert trec_line(long, "all", -1.0, "mean") == f"{long}\tall\t-1.0000\n"
    judged = {"a": 0, "b": 3, "c": -1, "d": 10, "e": 9}
    assert relstring(["a", "b", "c", "d", "e", "x"], judged) == "'03.>9-'"
    more = {**judged, **{f"f{i}": i for i in range(6)}}
    assert relstring(list("abcde") + [f"f{i}" for i in range(6)], more) == "'03.>901234'"  # the first 10
    with pytest.raises(ValueError, match="document 'b' is ranked twice"):  # as trec_eval and the figures refuse it
        relstring(["b", "a", "b", "c", "b"], judged)
    assert relstring(["a", "b"], judged, length=1) == "'0'"
    assert relstring([], judged) == "''"


def test_trec_measures() -> None:
    assert trec_measures(None) == trec_format.TrecMeasures(["official"], True, None, 10)
    assert trec_measures(["P.10", "all_trec", "P.5"]).measures == ["P.10", "all_trec"]
    assert trec_measures(["map"]).runid is False
    assert trec_measures(["set"]).runid is True
    assert trec_measures(["all"]).relstring == "relstring"
    assert trec_measures(["utility.2,0,0,0", "set", "utility.1,1,1,1"]).measures == ["utility.2,0,0,0", "set"]
    for bad in (["P.5,10,5"], ["iprec_at_recall.0.1,0.10"], ["relstring.x"], ["nope.3"]):
        with pytest.raises(ValueError):
            trec_measures(bad)


def test_padding_mutant_is_caught(capsys, monkeypatch) -> None:
    """The comparison sees one byte of padding: a printout padded to 21 or 23 characters is not trec_eval's."""
    for width in (21, 23):
        monkeypatch.setattr(trec_format, "WIDTH", width)
        code, out, _ = run(capsys, *argv_of("test-official"))
        assert code == 0 and out != expected("test-official")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "ner", "--format", "trec"], "argument --format: invalid choice: 'trec'"),
        (["score", "--format", "trec", "ner"], "argument --format: invalid choice: 'trec'"),
        (["compare", "ranking", "--format", "trec"], "argument --format: invalid choice: 'trec'"),
        (["score", "ranking", "--format", "trec", "--bootstrap", "10"], "no form for --bootstrap"),
        (["score", "ranking", "--format", "trec", "-M", "0"], "refuses -M 0"),
        (["score", "ranking", "--format", "trec", "-m", "P.5,5"], "a cut-off is given twice"),
        (["score", "ranking", "--format", "json", "-m", "runid"], "give it with --format trec"),
        (["score", "ranking", "-m", "relstring"], "give it with --format trec"),
    ],
)
def test_refused(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert message in last and "Traceback" not in err, err


def test_help_lists_the_format(capsys) -> None:
    code, out, _ = run(capsys, "score", "ranking", "--help")
    assert code == 0 and "{table,json,trec}" in out and "trec: trec_eval 10.0's own printout" in " ".join(out.split())
    code, out, _ = run(capsys, "score", "ner", "--help")
    assert code == 0 and "{table,json}" in out and "trec" not in out


IMPORTED = """import sys
from metametric_jax.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(code, sorted({m.split(".")[0] for m in sys.modules} & {"rich", "jax"}), file=sys.stderr)
"""


@pytest.mark.parametrize(("form", "heavy"), [("trec", "[]"), ("table", "[]")])
def test_trec_format_does_not_import_rich(form: str, heavy: str) -> None:
    """The printout is plain text: neither rich nor JAX is imported; nor for the table into a pipe (drawn as plain
    text, as rich would print it there)."""
    argv = argv_of("test-all")
    argv[-1] = form
    done = subprocess.run([sys.executable, "-c", IMPORTED, *argv], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == f"0 {heavy}", done.stderr
    if form == "trec":
        assert done.stdout == expected("test-all")


# trec_eval 10.0's printouts of option sets that the cases do not hold (how it reads -m, runid and relstring asked
# alone, summaries, -M, -l0, the absent query of -c, -c with -l2 and -l3 where the run's num_rel is not the queries'
# sum), stored by tests/data/ranking/generate.py (write_option_sets); with a trec_eval binary at $TREC_EVAL, the
# stored printouts are also checked against it.
OPTION_SETS = json.loads((DATA / "expected" / "option-sets.json").read_text(encoding="utf-8"))
TREC_EVAL = os.environ.get("TREC_EVAL")


@pytest.mark.parametrize("case", OPTION_SETS, ids=lambda c: f"{c['qrels']} {' '.join(c['flags'])}")
def test_equals_trec_eval_on_option_sets(capsys, case: dict) -> None:
    qrels, ranked = (str(DATA / case[k]) for k in ("qrels", "run"))
    code, out, err = run(
        capsys, "score", "ranking", *case["flags"], "--qrels", qrels, "--run", ranked, "--format", "trec"
    )
    assert code == 0, err
    assert out.encode("utf-8") == case["printout"].encode("utf-8"), case["flags"]


def test_stored_option_sets_cover_both_readings_and_equal_the_binary_when_given() -> None:
    assert len(OPTION_SETS) == 68 and sum("-q" in c["flags"] for c in OPTION_SETS) == 34
    levels = [c for c in OPTION_SETS if {"-l2", "-l3"} & set(c["flags"])]
    assert len(levels) == 8 and all("-c" in c["flags"] and "num_rel " in c["printout"] for c in levels)
    if TREC_EVAL is None:
        return  # the stored printouts alone (run ``generate.py`` with the binaries to rebuild them)
    for case in OPTION_SETS:
        command = [TREC_EVAL, *case["flags"], case["qrels"], case["run"]]
        assert subprocess.run(command, cwd=DATA, capture_output=True, check=True).stdout == case["printout"].encode()


# trec_eval 10.0 (the build of tests/data/ranking/README.md), `trec_eval OPTIONS -m num_rel qrels run` on the files
# below: with -c the run's num_rel is every judgement with a positive grade, whatever -l (each query's counts grades
# at the level or above), a judged query absent from the run included
NUM_REL_QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 3\nq2 0 d5 2\nq2 0 d6 1\nq3 0 d7 0\nq3 0 d8 1\n"
NUM_REL_RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 2.0 r\nq1 Q0 d9 3 1.0 r\nq3 Q0 d8 1 1.0 r\n"
NUM_REL_PRINTED = {
    ("-c", "-l", "2"): "num_rel               \tall\t6\n",
    ("-c", "-l", "0"): "num_rel               \tall\t6\n",
    ("-c", "-q", "-l", "3"): "".join(
        f"num_rel               \t{q}\t{n}\n" for q, n in (("q1", 1), ("q2", 0), ("q3", 0), ("all", 6))
    ),
}


@pytest.mark.parametrize("options", sorted(NUM_REL_PRINTED))
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_run_num_rel_with_c_counts_every_positive_judgement(capsys, tmp_path: Path, options, jobs: str) -> None:
    (tmp_path / "q.txt").write_text(NUM_REL_QRELS)
    (tmp_path / "r.txt").write_text(NUM_REL_RUN)
    files = ["--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--jobs", jobs]
    code, out, err = run(capsys, "score", "ranking", "--format", "trec", *options, "-m", "num_rel", *files)
    assert code == 0, err
    assert out == NUM_REL_PRINTED[options]
    level = int(options[-1])
    code, out, err = run(capsys, "score", "ranking", "--format", "json", "-c", "-l", str(level), *files)
    assert code == 0 and json.loads(out)["all"]["num_rel"] == 6, err


def test_run_num_rel_with_complete_in_python() -> None:
    from metametric_jax.tasks import ranking

    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 3}, "q2": {"d5": 2, "d6": 1}, "q3": {"d7": 0, "d8": 1}}
    run_ = {"q1": ["d1", "d3", "d9"], "q3": ["d8"]}
    assert ranking.score(run_, qrels, measures=["num_rel"], level=2, complete=True)["num_rel"] == 6
    assert (
        ranking.score(run_, qrels, measures=["num_rel"], level=2)["num_rel"] == 2
    )  # the sum over q1 and q3 without it


SAMPLE_QRELS = Path(__file__).resolve().parents[1] / "metametric_jax" / "data" / "ranking" / "sample.qrels"


@pytest.mark.parametrize("score", ["1_5", "١٠", "５０", "inf", "nan", "0x1p3", "5e", "1e400", "--1"])
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("plain", [True, False])  # read in bulk, or line by line (a comment line makes it so)
def test_a_score_only_python_reads_is_refused(capsys, tmp_path: Path, score: str, jobs: str, plain: bool) -> None:
    # trec_eval's atof reads 1_5 as 1 and other scripts' digits as 0: a score that is not a decimal number in ASCII
    # would rank the documents otherwise than trec_eval, so it is refused
    lines = [f"Q1 Q0 doc062 1 {score} r1", "Q1 Q0 doc142 2 5 r1", "Q1 Q0 doc500 3 4 r1"]
    (tmp_path / "r.txt").write_text(("" if plain else "# a comment\n") + "\n".join(lines) + "\n", encoding="utf-8")
    argv = ["--qrels", str(SAMPLE_QRELS), "--run", str(tmp_path / "r.txt"), "--jobs", jobs]
    code, out, err = run(capsys, "score", "ranking", "--format", "trec", "-m", "map", *argv)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"r.txt:{1 if plain else 2}: expected a number in field 5 (score), found {score!r}" in err


@pytest.mark.parametrize("grade", ["1_0", "٢", "1.0", "+1.0", "0x1"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_grade_only_python_reads_is_refused(capsys, tmp_path: Path, grade: str, jobs: str) -> None:
    (tmp_path / "q.txt").write_text(f"Q1 0 doc062 {grade}\nQ1 0 doc142 2\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("Q1 Q0 doc062 1 3 r1\nQ1 Q0 doc142 2 2 r1\n")
    argv = ["--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--jobs", jobs]
    code, out, err = run(capsys, "score", "ranking", *argv)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"q.txt:1: expected an integer grade in field 4, found {grade!r}" in err


def test_decimal_forms_trec_eval_reads_whole_are_read(capsys, tmp_path: Path) -> None:
    from metametric_jax.tasks.readers.trec import parse_qrels, parse_run

    run_ = parse_run("Q1 Q0 a 1 1e-3 r\nQ1 Q0 b 2 .5 r\nQ1 Q0 c 3 -4. r\nQ1 Q0 d 4 +2E+1 r\n")
    assert run_.rankings == {"Q1": ["d", "b", "a", "c"]}
    assert parse_qrels("Q1 0 a +1\nQ1 0 b -1\nQ1 0 c 007\n") == {"Q1": {"a": 1, "b": -1, "c": 7}}
