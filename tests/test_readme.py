"""The README's quickstart block runs as written and prints what it claims."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_quickstart_block_runs_and_its_comments_hold():
    block = _python_blocks()[0]
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    lines = block.splitlines()
    checked = 0
    for node in ast.parse(block).body:
        if not isinstance(node, ast.Expr):
            continue
        comment = re.search(r"#\s*([0-9.]+)\s*$", lines[node.end_lineno - 1])
        if comment:
            value = eval(compile(ast.Expression(node.value), "<readme>", "eval"), namespace)  # noqa: S307
            assert value == float(comment.group(1)), ast.unparse(node)
            checked += 1
    assert checked >= 3, "the quickstart block documents its results in trailing comments"


def test_accumulation_and_dsl_blocks_run():
    blocks = _python_blocks()
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # noqa: S102
    T, t1, t2, t3 = (namespace[k] for k in ("TriggerExtractionOutput", "t1", "t2", "t3"))
    namespace["eval_batches"] = [([T([t1, t2])], [T([t1, t2, t3])]), ([T([])], [T([t3])])]
    exec(compile(blocks[1], str(README), "exec"), namespace)  # noqa: S102
    assert float(namespace["results"]["f1"]) == pytest.approx(2 * 2 / (2 + 4))
    dsl_block = next(b for b in blocks if "make_metric(dsl.set_matching(span" in b)
    exec(compile(dsl_block, str(README), "exec"), namespace)  # noqa: S102
    Span, SpanF1 = namespace["Span"], namespace["SpanF1"]
    assert SpanF1.score([Span(0, 1, "A")], [Span(0, 1, "A"), Span(2, 3, "B")]) == pytest.approx(2 / 3)


def test_two_setup_commands_are_documented():
    text = README.read_text(encoding="utf-8")
    assert "pip install . && metametric-jax score coref" in text
    assert 'pip install -e ".[test]" && pytest -q' in text


def test_significance_block_runs():
    block = next(b for b in _python_blocks() if "significance.bootstrap" in b)
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102
    interval, test, ar = namespace["interval"], namespace["test"], namespace["ar"]
    assert float(interval["low"]["f1"]) <= float(interval["estimate"]["f1"]) <= float(interval["high"]["f1"])
    assert test["delta"] == pytest.approx(
        float(interval["estimate"]["f1"]) - float(namespace["b"].compute()["estimate"]["f1"])
    )
    assert 0 < test["p_value"] <= 1 and 0 < ar["p_value"] <= 1


def test_command_line_block_runs_as_written(capsys, monkeypatch):
    """Every line of the README's command-line block exits 0 when run from the repository root."""
    import shlex

    from metametric_jax.cli import main

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Command line") :]
    block = re.findall(r"```bash\n(.*?)```", section, flags=re.S)[0]
    lines = [line for line in block.splitlines() if line.startswith("metametric-jax ")]
    assert len(lines) >= 10
    monkeypatch.chdir(README.parent)
    for line in lines:
        argv = shlex.split(line)[1:]
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 0, f"{line}: exit {code}: {err[-500:]}"
