"""``--jobs N``: every task's output is the same for every number of worker processes, per-item tables in order."""

from __future__ import annotations

import pytest
from helpers import run

from metametric_jax import parallel

#: each task's bundled sample, with the options that print per-item figures (which must come back in order)
TASKS = {
    "amr": ["--per-pair", "--fine-grained"],
    "coref": ["--per-document"],
    "constituency": [],
    "dependency": [],
    "ie": ["--per-document"],
    "ner": [],
    "ranking": ["--per-query"],
    "rouge": [],
}


@pytest.mark.parametrize("task", sorted(TASKS))
def test_score_prints_the_same_json_for_every_number_of_jobs(capsys, task):
    outputs = []
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "score", task, *TASKS[task], "--format", "json", "--jobs", jobs)
        assert code == 0, err
        outputs.append(out)
    assert parallel.last_run().jobs == 2 and parallel.last_run().chunks > 1  # the sample was cut into chunks
    assert outputs[0] == outputs[1]


def test_bootstrap_and_compare_are_the_same_for_every_number_of_jobs(capsys):
    outputs = []
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "score", "amr", "--bootstrap", "200", "--format", "json", "--jobs", jobs)
        assert code == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1] and '"intervals"' in outputs[0]
    from importlib import resources

    base = resources.files("metametric_jax") / "data" / "coref"
    key, response = str(base / "sample.key"), str(base / "sample.response")
    compared = []
    for jobs in ("1", "2"):
        argv = ["compare", "coref", "--references", key, "--system", response, "--system", key, "--samples", "200"]
        code, out, err = run(capsys, *argv, "--format", "json", "--jobs", jobs)
        assert code == 0, err
        compared.append(out)
    assert compared[0] == compared[1]


def test_jobs_must_be_a_whole_number(capsys):
    code, _, err = run(capsys, "score", "amr", "--jobs", "-1")
    assert code == 2 and "--jobs" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["dependency", "--gold", "dependency/gold.conllu", "--pred", "dependency/pred-tokenization.conllu"],
        ["dependency", "--gold", "dependency/gold.conllu", "--pred", "dependency/pred-sentences.conllu"],
        ["constituency", "--gold", "constituency/gold.mrg", "--pred", "constituency/pred.mrg"],
        ["constituency", "--gold", "constituency/gold.mrg", "--pred", "constituency/pred.mrg", "--params"],
    ],
    ids=["tokenization", "sentences", "evalb", "evalb-custom"],
)
def test_chunks_of_whole_corpora_give_the_same_figures(capsys, argv):
    """Dependency parses cut where both sides start a sentence; EVALB's trees in chunks, errors and skips included."""
    from pathlib import Path

    data = Path(__file__).parent / "data"
    argv = [str(data / a) if "/" in a else a for a in argv]
    if argv[-1] == "--params":
        argv.append(str(data / "constituency" / "custom.prm"))
    outputs = []
    for jobs in ("1", "2"):
        code, out, err = run(capsys, "score", *argv, "--format", "json", "--jobs", jobs)
        assert code == 0, err
        outputs.append((out, err))
    assert outputs[0] == outputs[1]


def test_coreference_files_read_in_chunks_give_the_same_figures_and_warnings(capsys, tmp_path, monkeypatch):
    """Documents in the same order in both files are read and counted by workers: the same JSON and warnings.

    SciPy is imported here first (the workers do not import it): the figures depend on the input alone, not on the
    modules a process has imported (CEAF's alignment once took SciPy's path where it was imported, its sum in another
    order, the last bits of CEAFe differing from the workers').
    """
    from pathlib import Path

    import scipy.optimize  # noqa: F401

    from metametric_jax.tasks import coref_files

    data = Path(__file__).parent / "data" / "coref"
    for side in ("key", "response"):
        parts = []
        for k in range(3):  # repeated spans, bare entity numbers, LitBank: under new names, three times over
            for name in ("repeats", "bare_numbers", "litbank"):
                text = (data / f"{name}.{side}").read_text(encoding="utf-8")
                parts.append(text.replace("#begin document (", f"#begin document (r{k}_").rstrip("\n") + "\n")
        (tmp_path / f"all.{side}").write_text("".join(parts), encoding="utf-8")
    argv = ["score", "coref", str(tmp_path / "all.key"), str(tmp_path / "all.response"), "--per-document"]
    outputs = []
    for jobs in ("1", "2"):
        if jobs == "2":  # the workers read the files: this process does not
            monkeypatch.setattr(coref_files, "read_files", None)
        code, out, err = run(capsys, *argv, "--max-repeated-mentions", "-1", "--format", "json", "--jobs", jobs)
        assert code == 0, err
        outputs.append((out, err))
    assert parallel.last_run().chunks > 1
    assert outputs[0] == outputs[1] and "outside any mention" in outputs[0][1] and "repeated spans" in outputs[0][1]


#: each task's analysis request on its bundled sample: reference, two systems (so the paired tests run), options
ANALYZED = {
    "amr": ("amr/gold.txt", ("amr/pred.txt", "amr/gold.txt"), ()),
    "constituency": ("parsing/gold.mrg", ("parsing/pred.mrg", "parsing/gold.mrg"), ()),
    "coref": ("coref/sample.key", ("coref/sample.response", "coref/sample.key"), ()),
    "dependency": ("parsing/gold.conllu", ("parsing/pred.conllu", "parsing/gold.conllu"), ()),
    "ie": ("ie/gold.jsonl", ("ie/pred.jsonl", "ie/gold.jsonl"), ()),
    "ner": ("ner/gold.txt", ("ner/pred.txt", "ner/pred_b.txt"), ("--unit", "sentence")),
    "ranking": ("ranking/sample.qrels", ("ranking/sample.run", "ranking/sample.run"), ()),
    "rouge": ("rouge/references.txt", ("rouge/predictions.txt", "rouge/references.txt"), ()),
}


def test_analyze_prints_the_same_json_for_every_number_of_jobs(capsys, monkeypatch):
    """``analyze TASK --jobs 2`` (and ``0``, every core) of every task: the JSON of one process, chunked for real.

    Each command starts one pool of workers, however many times it maps (each system, each stage).
    """
    import concurrent.futures
    from importlib import resources

    started: list[int] = []

    class Counted(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            started.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)

    from metametric_jax.commands import registry

    assert sorted(ANALYZED) == sorted(name for name, c in registry().items() if c.analyze is not None)
    base = resources.files("metametric_jax") / "data"
    for task, (reference, systems, options) in ANALYZED.items():
        argv = ["analyze", task, "--references", str(base / reference)]
        argv += [x for s in systems for x in ("--system", str(base / s))]
        argv += [*options, "--samples", "50", "--min-units", "2", "--format", "json"]
        outputs = []
        for jobs in ("1", "2", "0") if task == "ner" else ("1", "2"):
            started.clear()
            code, out, err = run(capsys, *argv, "--jobs", jobs)
            assert code == 0, err
            if jobs == "2":
                info = parallel.last_run()
                assert info.jobs == 2 and info.chunks > 1, (task, info)  # the sample was cut into chunks
                assert len(started) == 1, (task, len(started))
            outputs.append(out)
        assert '"analyses"' in outputs[0] and all(out == outputs[0] for out in outputs), task


def test_brackets_counted_in_chunks_are_one_process_brackets():
    """EVALB's labelled brackets in chunks (errors and skips included): the same counts, the same named brackets."""
    from pathlib import Path

    import numpy as np

    from metametric_jax.tasks import constituency
    from metametric_jax.tasks.constituency_counts import evalb_brackets
    from metametric_jax.tasks.readers.ptb import read_treebank

    data = Path(__file__).parent / "data" / "constituency"
    gold, pred = read_treebank(data / "gold.mrg"), read_treebank(data / "pred.mrg")
    one_counts, one = evalb_brackets(pred, gold)
    counts, got = constituency.brackets_in_chunks(pred, gold, jobs=2)
    assert parallel.last_run().chunks > 1
    for field in ("status", "length", "matched", "gold", "test", "crossing", "words", "correct_tags", "line"):
        np.testing.assert_array_equal(getattr(counts, field), getattr(one_counts, field))
    assert counts.messages == one_counts.messages

    def named(brackets, side):
        return sorted((*row[:3], brackets.labels[row[3]]) for row in getattr(brackets, side).tolist())

    assert got.labels != one.labels  # numbered in another order: the test below compares names
    for side in ("gold", "test"):
        assert named(got, side) == named(one, side) and len(named(got, side)) > 100
