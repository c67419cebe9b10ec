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
    """Documents in the same order in both files are read and counted by workers: the same JSON and warnings."""
    from pathlib import Path

    from metametric_jax.tasks import coref

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
            monkeypatch.setattr(coref, "read_files", None)
        code, out, err = run(capsys, *argv, "--max-repeated-mentions", "-1", "--format", "json", "--jobs", jobs)
        assert code == 0, err
        outputs.append((out, err))
    assert parallel.last_run().chunks > 1
    assert outputs[0] == outputs[1] and "outside any mention" in outputs[0][1] and "repeated spans" in outputs[0][1]
