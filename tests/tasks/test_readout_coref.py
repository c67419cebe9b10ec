"""``score coref``'s resampling rows and read-out: ``readout(exact_totals(rows))`` is the JSON of ``score coref`` bit
for bit, at every path, on the bundled sample, the test fixtures and generated files; the warnings are the same."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metametric_jax._ratios import Undefined  # a 0/0 ratio: 0.0, marked
from metametric_jax.cli import build_parser
from metametric_jax.commands import Resampling, registry
from metametric_jax.intervals import bootstrap, exact_totals, flatten

DATA = resources.files("metametric_jax") / "data" / "coref"
SAMPLE = (str(DATA / "sample.key"), str(DATA / "sample.response"))
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "coref"
SCORER_TESTS = Path(__file__).resolve().parents[1] / "data" / "conll2012-scorer-tests"


def _args(key: str | Path, response: str | Path, *options: str) -> Any:
    args = build_parser().parse_args(["score", "coref", "--key", str(key), "--response", str(response), *options])
    args.progress = False
    return args


def _check(key: str | Path, response: str | Path, *options: str) -> Resampling:
    """``readout(exact_totals(rows))`` equals ``score coref``'s figures at every path; the warnings are equal."""
    command = registry()["coref"]
    args = _args(key, response, *options)
    assert command.resample is not None
    res = command.resample(args)
    scores, warnings = command.run(_args(key, response, *options))
    rows = np.asarray(res.rows)
    assert rows.dtype == np.float64 and rows.ndim == 2 and rows.shape[0] == len(res.ids or [])
    got = flatten(res.readout(exact_totals(rows)))
    assert got, "no figures"
    for path, value in got.items():
        node: Any = scores
        for part in path.split("/"):
            node = node[part]
        assert type(node) in (float, Undefined) and value == node, (path, value, node)
    assert {p.split("/")[0] for p in got} == set(scores) - {"per_document"}
    assert list(res.warnings) == list(warnings)
    assert res.unit == "documents"
    return res


def test_sample() -> None:
    res = _check(*SAMPLE)
    assert res.ids is not None and len(res.ids) == 3 and all("sample/news_00" in i for i in res.ids)


@pytest.mark.parametrize("metric", ["muc", "bcub", "ceafm", "ceafe", "blanc", "lea"])
def test_sample_one_metric(metric: str) -> None:
    res = _check(*SAMPLE, "--metric", metric)
    assert set(res.readout(exact_totals(res.rows))) == {"mentions", metric}


@pytest.mark.parametrize(
    "key, response",
    [
        (FIXTURES / "litbank.key", FIXTURES / "litbank.response"),
        (FIXTURES / "repeats.key", FIXTURES / "repeats.response"),
        (FIXTURES / "part_spelling.key", FIXTURES / "part_spelling.response"),
        (FIXTURES / "bare_numbers.key", FIXTURES / "bare_numbers.response"),
        (SCORER_TESTS / "TC-A.key", SCORER_TESTS / "TC-A-4.response"),
        (SCORER_TESTS / "TC-M.key", SCORER_TESTS / "TC-M-3.response"),
    ],
)
def test_fixtures(key: Path, response: Path) -> None:
    _check(key, response)
    _check(key, response, "--repeated-mentions", "first")


def test_repeated_mentions_warn_the_same() -> None:
    res = _check(FIXTURES / "repeats.key", FIXTURES / "repeats.response")
    assert res.warnings


# ----------------------------------------------------------------------------------------------- generated files
def _document(name: str, n_tokens: int, clusters: list[list[tuple[int, int]]]) -> str:
    cells: list[list[str]] = [[] for _ in range(n_tokens)]
    for label, cluster in enumerate(clusters):
        for start, end in cluster:
            if start == end:
                cells[start].append(f"({label})")
            else:
                cells[start].append(f"({label}")
                cells[end].append(f"{label})")
    lines = [f"#begin document ({name}); part 000"]
    lines += [f"{name}\t0\t{i}\tw{i}\t{'|'.join(c) or '-'}" for i, c in enumerate(cells)]
    return "\n".join([*lines, "#end document", ""])


def _clusters(rng: random.Random, n_tokens: int) -> list[list[tuple[int, int]]]:
    spans = set()
    for _ in range(rng.randint(0, n_tokens)):
        start = rng.randrange(n_tokens)
        spans.add((start, min(n_tokens - 1, start + rng.choice((0, 0, 1)))))
    ordered = sorted(spans)
    rng.shuffle(ordered)
    out: list[list[tuple[int, int]]] = []
    for span in ordered:
        if out and rng.random() < 0.5:
            rng.choice(out).append(span)
        else:
            out.append([span])
    return out


def _write(path: Path, docs: list[str]) -> Path:
    path.write_text("".join(docs))
    return path


def _corpus(rng: random.Random, n_docs: int) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    shapes = [(f"doc{k}", rng.randint(1, 14)) for k in range(n_docs)]
    keys = [_document(name, n, _clusters(rng, n)) for name, n in shapes]
    responses = [_document(name, n, _clusters(rng, n)) for name, n in shapes]
    return shapes, keys, responses


@pytest.mark.parametrize("seed", range(8))
def test_generated(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _, keys, responses = _corpus(rng, rng.randint(2, 6))
    key = _write(tmp_path / "key.conll", keys)
    _check(key, _write(tmp_path / "response.conll", responses))
    for metric in ("blanc", "ceafe"):
        _check(key, tmp_path / "response.conll", "--metric", metric)


def test_empty_response(tmp_path: Path) -> None:
    rng = random.Random(11)
    shapes, keys, _ = _corpus(rng, 4)
    key = _write(tmp_path / "key.conll", keys)
    _check(key, _write(tmp_path / "response.conll", [_document(name, n, []) for name, n in shapes]))


def test_response_missing_documents(tmp_path: Path) -> None:
    rng = random.Random(12)
    _, keys, responses = _corpus(rng, 5)
    key = _write(tmp_path / "key.conll", keys)
    res = _check(key, _write(tmp_path / "response.conll", responses[:2] + responses[3:]))
    assert any("doc2" in w for w in res.warnings), res.warnings
    assert len(res.rows) == 5
    res = _check(key, _write(tmp_path / "nothing.conll", []))
    assert len(res.warnings) >= 1


def test_single_document(tmp_path: Path) -> None:
    rng = random.Random(13)
    _, keys, responses = _corpus(rng, 1)
    res = _check(_write(tmp_path / "key.conll", keys), _write(tmp_path / "response.conll", responses))
    assert np.asarray(res.rows).shape[0] == 1


def test_empty_key(tmp_path: Path) -> None:
    res = _check(_write(tmp_path / "key.conll", []), _write(tmp_path / "response.conll", []))
    assert np.asarray(res.rows).shape[0] == 0 and res.warnings


def test_readout_of_zero_and_weighted_totals() -> None:
    res = registry()["coref"].resample(_args(*SAMPLE))  # type: ignore[misc]
    width = np.asarray(res.rows).shape[1]
    zero = flatten(res.readout(np.zeros(width)))
    assert all(v == 0.0 for v in zero.values())
    weights = np.array([0.0, 2.5, 1.0])
    assert all(v is None or np.isfinite(v) for v in flatten(res.readout(weights @ res.rows)).values())


def test_no_jax_on_the_resampling_path() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from metametric_jax.cli import build_parser
        from metametric_jax.commands import registry
        from metametric_jax.intervals import bootstrap
        args = build_parser().parse_args(["score", "coref", "--key", {SAMPLE[0]!r}, "--response", {SAMPLE[1]!r}])
        args.progress = False
        res = registry()["coref"].resample(args)
        bootstrap(res.readout, res.rows, samples=20, seed=0, level=0.9)
        print("jax" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_bootstrap_runs_on_the_rows() -> None:
    res = registry()["coref"].resample(_args(*SAMPLE))  # type: ignore[misc]
    out = bootstrap(res.readout, res.rows, samples=50, seed=3, level=0.9)
    assert out["estimate"] == res.readout(exact_totals(res.rows))
