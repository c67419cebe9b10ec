"""Plain run and qrels files coded straight from their bytes (``readers.trec_coded``) score as the dictionaries do.

Every comparison scores the same files twice, through :func:`coded_files` and through ``read_run``/``read_qrels``
(the coded path switched off), and asks for the same figures, per-query items, warnings and errors.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks import ranking_files
from metametric_jax.tasks.readers import trec_coded
from metametric_jax.tasks.readers.trec_coded import coded_files


def _files(tmp_path: Path, seed: int, shuffle: bool = False) -> tuple[Path, Path]:
    """A generated run and qrels: ties, long and short ids, unjudged and unranked queries, negative grades, 12."""
    rng = random.Random(seed)
    names = [f"d{n}" for n in range(60)] + ["msmarco_v2.1_doc_19_4624301049#19_31957775" + str(n) for n in range(20)]
    names += ["a" * 8, "a" * 9, "a" * 16, "a" * 17, "D7", "d7x", "z" * 40]
    queries = [f"q{n}" for n in rng.sample(range(100, 300), 12)] + ["2024-45222", "q1", "Q1", "q10"]
    lines = []
    for q in queries[:-2]:  # the last two queries: judged, not ranked
        docs = rng.sample(names, rng.randint(1, 45))
        scores = [rng.choice([0.5, 1.0, -2.25, 0.25, rng.random(), round(rng.random(), 3)]) for _ in docs]
        ranked = sorted(zip(docs, scores), key=lambda ds: (-ds[1], [-ord(c) for c in ds[0]]))  # trec_eval's order
        if shuffle:
            rng.shuffle(ranked)
        lines += [f"{q} Q0 {d} {i} {s!r} run{seed}" for i, (d, s) in enumerate(ranked, 1)]
    qrels = []
    for q in queries[2:]:  # the first two queries: ranked, not judged
        for d in rng.sample(names, rng.randint(1, 30)):
            qrels.append(f"{q} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3, 12])}")
    if shuffle:
        rng.shuffle(qrels)
    run_path, qrels_path = tmp_path / f"run{seed}", tmp_path / f"qrels{seed}"
    run_path.write_text("\n".join(lines) + "\n")
    qrels_path.write_text("\n".join(qrels) + "\n")
    return run_path, qrels_path


def _both(monkeypatch: pytest.MonkeyPatch, run: Path, qrels: Path, **options: object) -> tuple[object, object]:
    def score() -> object:
        try:
            report = ranking_files.score_files(predictions=run, references=qrels, measures="all_trec", **options)
            rows = ranking_files.file_rows(predictions=run, references=qrels, **options)
        except InputFormatError as err:
            return str(err)
        got = (report.scores, report.items, report.warnings, rows.rows.tolist(), rows.ids, rows.warnings)
        return json.dumps(got)  # NaN (Rndcg at level 0) written as NaN on both sides

    coded = score()
    with monkeypatch.context() as patched:
        patched.setattr(trec_coded, "coded_files", lambda *args, **kwargs: None)
        dictionaries = score()
    return coded, dictionaries


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shuffle", [False, True], ids=["in order", "shuffled"])
def test_coded_files_score_as_the_dictionaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seed, shuffle) -> None:
    run, qrels = _files(tmp_path, seed, shuffle)
    assert coded_files(run, qrels) is not None  # plain files: the coded path is the one taken
    for options in ({}, {"complete": True}, {"level": 2}, {"level": 0}, {"max_retrieved": 5}, {"max_retrieved": 0}):
        coded, dictionaries = _both(monkeypatch, run, qrels, **options)
        assert coded == dictionaries, options


def test_what_the_coded_path_leaves_to_the_dictionaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run, qrels = _files(tmp_path, 1)
    lines = run.read_text().splitlines()
    judged = qrels.read_text().splitlines()
    cases = {
        "run twice": ("\n".join([*lines, lines[0]]) + "\n", None),  # a document ranked twice: an error
        "judged twice": (None, "\n".join([*judged, judged[-1]]) + "\n"),  # judged twice: an error
        "comment": ("#c\n" + "\n".join(lines) + "\n", None),
        "seven fields": ("\n".join([lines[0] + " x", *lines[1:]]) + "\n", None),
        "grade 1_0": (None, "\n".join([*judged[:-1], judged[-1].rsplit(" ", 1)[0] + " 1_0"]) + "\n"),
        "score inf": ("\n".join([lines[0].replace(lines[0].split()[4], "inf"), *lines[1:]]) + "\n", None),
        "no common query": ("zz Q0 d1 1 1.0 r\n", None),
        "empty run": ("", None),
        "empty qrels": (None, ""),
    }
    for name, (run_text, qrels_text) in cases.items():
        r, q = tmp_path / f"{name}.run", tmp_path / f"{name}.qrels"
        r.write_text(run_text if run_text is not None else run.read_text())
        q.write_text(qrels_text if qrels_text is not None else qrels.read_text())
        if not name.startswith(("no common", "empty")):
            assert coded_files(r, q) is None, name
        coded, dictionaries = _both(monkeypatch, r, q)
        assert coded == dictionaries, name
        if name.startswith("empty"):  # coded, and as empty with -c: every judged query an empty ranking
            assert coded_files(r, q) is not None
            assert _both(monkeypatch, r, q, complete=True)[0] == _both(monkeypatch, r, q, complete=True)[1]
    assert "no query of the run has judgements" in str(_both(monkeypatch, tmp_path / "no common query.run", qrels)[0])


def test_ids_of_one_hash_are_left_to_the_dictionaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    run, qrels = _files(tmp_path, 2)
    expected = _both(monkeypatch, run, qrels)[1]
    monkeypatch.setattr(trec_coded, "_hash", lambda ids, salt: np.zeros(ids.shape[0], np.uint64))
    assert coded_files(run, qrels) is None
    assert _both(monkeypatch, run, qrels)[0] == expected


def test_run_ids_that_collide_with_judged_ones_are_not_judged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A run's id whose hash is a judged id's (of its query) is checked byte for byte: unjudged."""
    run, qrels = tmp_path / "r", tmp_path / "q"
    run.write_text("q Q0 aaaa 1 2.0 r\nq Q0 bbbb 2 1.0 r\n")
    qrels.write_text("q 0 aaaa 1\nq 0 cccc 2\n")
    expected = _both(monkeypatch, run, qrels)[1]
    real = trec_coded._hash

    def colliding(ids: np.ndarray, salt: np.ndarray) -> np.ndarray:
        h = real(ids, salt)
        return np.where(
            ids[:, 0] == ord("b"), real(np.full_like(ids, 0) + np.frombuffer(b"cccc\0\0\0\0", np.uint8), salt), h
        )

    monkeypatch.setattr(trec_coded, "_hash", colliding)
    coded = coded_files(run, qrels)
    assert coded is not None and coded.codes[0].tolist() == [1, -1]  # bbbb has cccc's hash, not its grade
    assert _both(monkeypatch, run, qrels)[0] == expected


@pytest.mark.parametrize("block", [1, 20, 1 << 19])
def test_files_read_in_blocks_score_as_the_dictionaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, block) -> None:
    """Blocks of one line, of a few, the whole file: ties across two blocks checked, the order kept or sorted."""
    from metametric_jax.tasks.readers import trec

    monkeypatch.setattr(trec, "_BLOCK", block)
    run, qrels = tmp_path / "r", tmp_path / "q"
    run.write_text("q Q0 a 1 1.0 r\nq Q0 b 2 1.0 r\nq Q0 c 3 0.5 r\np Q0 b 1 2 r\np Q0 a 2 2 r\n")  # q's tie ascending
    qrels.write_text("q 0 b 1\nq 0 c 2\np 0 a 3\n")
    coded = coded_files(run, qrels)
    assert coded is not None and coded.ids == ["p", "q"] and [c.tolist() for c in coded.codes] == [[-1, 3], [1, -1, 2]]
    for seed in range(3):
        run, qrels = _files(tmp_path, seed, shuffle=seed == 1)
        assert coded_files(run, qrels) is not None
        coded_figures, dictionaries = _both(monkeypatch, run, qrels)
        assert coded_figures == dictionaries


@pytest.mark.parametrize("per_query", [False, True], ids=["run", "-q"])
@pytest.mark.parametrize("options", [{"complete": True}, {"max_retrieved": 3}, {}], ids=["-c", "-M3", "plain"])
def test_trec_printout_from_coded_files_as_from_the_dictionaries(
    monkeypatch, tmp_path: Path, per_query, options
) -> None:
    """``--format trec`` (its runid line and -q's relstring lines included) codes plain files too."""
    from metametric_jax.tasks.trec_format import printout

    run, qrels = _files(tmp_path, 4, shuffle=True)
    real = trec_coded.coded_files
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    options = {"predictions": run, "references": qrels, "per_query": per_query, **options}
    for measures in (["all_trec", "runid"], ["official"], ["P.5", "relstring.10", "runid"], ["relstring.2"]):
        calls.clear()
        monkeypatch.setattr(trec_coded, "coded_files", counted)
        coded = printout(measures=measures, **options)  # type: ignore[arg-type]
        assert calls
        monkeypatch.setattr(trec_coded, "coded_files", lambda *args, **kwargs: None)
        assert coded == printout(measures=measures, **options)  # type: ignore[arg-type]
        if "runid" in measures or "official" in measures:
            assert any(line.split() == ["runid", "all", "run4"] for line in coded[0].splitlines())
        shown = [line.split("\t")[2] for line in coded[0].splitlines() if line.startswith("relstring")]
        queries = 14 if options.get("complete") else 12
        assert len(shown) == (queries if per_query and measures != ["official"] else 0)
        if per_query and "all_trec" in measures and "max_retrieved" not in options:  # every kind of character, blanks
            assert {".", ">", "-", "0"} <= set("".join(shown)) and ("''" in shown) == bool(options.get("complete"))
