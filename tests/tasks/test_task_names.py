"""One name per task (``<Task>Metric``), every file reader in ``tasks.readers`` (re-exported where it was), and task
modules on the public API of the layers below (no solver internals)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import metametric_jax
from metametric_jax.tasks import amr, constituency, constituency_counts, ie, rouge, text
from metametric_jax.tasks.readers import evalb, ie_jsonl, ptb, summaries

TASKS = Path(metametric_jax.__file__).parent / "tasks"

#: task module -> its accumulator's name
METRICS = {
    "amr": "AmrMetric",
    "constituency": "ConstituencyMetric",
    "coref": "CorefMetric",
    "dependency": "DependencyMetric",
    "ie": "IEMetric",
    "ner": "NerMetric",
    "ranking": "RankingMetric",
    "text": "RougeMetric",
}


@pytest.mark.parametrize("module, name", sorted(METRICS.items()))
def test_every_task_has_its_metric(module: str, name: str) -> None:
    mod = importlib.import_module(f"metametric_jax.tasks.{module}")
    assert name in mod.__all__ and getattr(mod, name) is not None


def test_amr_metric_is_smatch_metric() -> None:
    assert amr.AmrMetric is amr.SmatchMetric is amr.smatch_metric()
    assert amr.AmrMetric.__name__ == "AmrMetric" and "AmrMetric" in dir(amr)
    state = amr.AmrMetric.from_model_output(["(b / boy)"], ["(b / boy :mod (t / tall))"])
    assert amr.state_report(state)["f1"] == amr.score(["(b / boy)"], ["(b / boy :mod (t / tall))"])["f1"]


@pytest.mark.parametrize(
    "old, new",
    [
        (ie.read_documents, ie_jsonl.read_documents),
        (ie.pair_documents, ie_jsonl.pair_documents),
        (ie.Document, ie_jsonl.Document),
        (ie.Relation, ie_jsonl.Relation),
        (ie.Event, ie_jsonl.Event),
        (ie.Argument, ie_jsonl.Argument),
        (rouge.read_texts, summaries.read_texts),
        (rouge.read_pairs, summaries.read_pairs),
        (text.read_texts, summaries.read_texts),
        (constituency.read_params, evalb.read_params),
        (constituency.EvalbParams, evalb.EvalbParams),
        (constituency.COLLINS, evalb.COLLINS),
        (constituency_counts.read_params, evalb.read_params),
        (ptb.parse_params, evalb.parse_params),
    ],
)
def test_readers_live_in_readers_and_keep_their_old_names(old: object, new: object) -> None:
    assert old is new


def test_no_reader_outside_readers() -> None:
    """A task module opens no file itself: its files are read through ``tasks.readers``."""
    for path in TASKS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
                pytest.fail(f"{path.name}:{node.lineno} opens a file; read it through tasks.readers")


def test_task_modules_use_no_solver_internals() -> None:
    private = {"metametric_jax._solvers", "metametric_jax._budget", "metametric_jax._latent"}
    for path in [*TASKS.glob("*.py"), *TASKS.glob("readers/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.module not in private, f"{path.name}:{node.lineno} imports {node.module}"
