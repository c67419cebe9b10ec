"""Worker processes never import JAX: the task suites' statistics functions pickle by reference from NumPy modules.

One fresh process (so that no module imported by another test is in the fork server) builds, for the suites of
dependency parsing, EVALB, trec_eval, IE and ROUGE, each state by ``parallel.from_model_output(M, ..., jobs=2)`` and in
one process, and runs ``score TASK --jobs 2`` for each task; it reports, per case, whether a worker had imported JAX
and whether the states' sums are equal.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import json, sys
from importlib import resources

import numpy as np

from metametric_jax import parallel
from metametric_jax.cli import main

DATA = resources.files("metametric_jax") / "data"


def text(name):
    return (DATA / name).read_text(encoding="utf-8")


def sums(state):
    import jax

    return [np.asarray(x, np.float64).tolist() for x in jax.tree_util.tree_leaves(state)]


def cases():
    from metametric_jax.tasks.constituency import ConstituencyMetric
    from metametric_jax.tasks.dependency import DependencyMetric
    from metametric_jax.tasks.ie import IEMetric, read_documents
    from metametric_jax.tasks.ranking import RankingMetric
    from metametric_jax.tasks.readers.conllu import read_conllu
    from metametric_jax.tasks.text import RougeMetric

    gold = read_conllu(str(DATA / "parsing/gold.conllu"))
    yield "dependency", DependencyMetric(), [gold[:2], gold[2:]], [gold[:2], gold[2:]]
    from metametric_jax.tasks.readers.ptb import read_trees

    trees, preds = read_trees(str(DATA / "parsing/gold.mrg")), read_trees(str(DATA / "parsing/pred.mrg"))
    yield "constituency", ConstituencyMetric(), preds, trees
    runs = [["a", "b", "c", "d"], ["b", "e"], ["c"], ["d", "a"]]
    yield "ranking", RankingMetric(["map", "P.2", "ndcg"]), runs, [{"c", "d"}, {"e"}, {"x"}, {"a"}]
    gold_docs = [d for _, d in read_documents(str(DATA / "ie/gold.jsonl"))]
    pred_docs = [d for _, d in read_documents(str(DATA / "ie/pred.jsonl"))]
    yield "ie", IEMetric(), pred_docs, gold_docs
    summaries = [s for s in text("rouge/predictions.txt").splitlines()]
    references = [s for s in text("rouge/references.txt").splitlines()]
    yield "rouge", RougeMetric(), summaries, references


if __name__ == "__main__":
    out = {}
    for name, metric, predictions, references in cases():
        state = parallel.from_model_output(metric, predictions, references, jobs=2, chunk_size=1)
        info = parallel.last_run()
        one = metric.from_model_output(predictions, references)
        out[f"from_model_output {name}"] = [info.jobs, info.chunks, info.jax_in_workers, sums(state) == sums(one)]
    for task in ("dependency", "constituency", "ranking", "ie", "rouge"):
        code = main(["score", task, "--format", "json", "--jobs", "2"])
        info = parallel.last_run()
        out[f"score {task} --jobs 2"] = [info.jobs, info.chunks, info.jax_in_workers, code == 0]
    print(json.dumps(out))
"""


def test_workers_do_not_import_jax(tmp_path):
    script = tmp_path / "jax_free.py"  # a file: the workers import the __main__ of a script, not of -c
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert len(got) == 10
    for case, (jobs, chunks, jax_in_workers, same) in got.items():
        assert jobs == 2 and chunks > 1, case  # workers ran, on several chunks
        assert same, case  # the same state (from_model_output), a successful run (score)
        assert not jax_in_workers, case
