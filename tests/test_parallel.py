"""parallel.from_model_output: worker processes match, the parent builds the state, equal to one process's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from amr_graphs import unrelated_pair
from helpers import flat, thread_settings, worker_pids

from metametric_jax import parallel
from metametric_jax._solvers import SolverBudgetWarning
from metametric_jax.errors import InputFormatError
from metametric_jax.significance import bootstrap, randomization
from metametric_jax.tasks.amr import SmatchMetric, smatch_metric
from metametric_jax.tasks.coref import CorefMetric
from metametric_jax.tasks.ner import NerMetric

GRAPHS = ["(b / boy)", "(g / girl :mod (t / tall))", "(a / and :op1 (b / boy) :op2 (g / girl))", "(r / run-01)"]
PREDS = [GRAPHS[i % 4] for i in range(22)]
REFS = [GRAPHS[(i * 3 + 1) % 4] for i in range(22)]
TAGS = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-LOC", "O", "O"]] * 5
GOLD = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-ORG"], ["B-LOC", "B-LOC", "O"]] * 5


def test_every_sum_equals_one_process_and_workers_do_not_import_jax():
    one = SmatchMetric.from_model_output(PREDS, REFS)
    seen: list[tuple[int, int]] = []
    par = parallel.from_model_output(
        SmatchMetric, PREDS, REFS, jobs=2, chunk_size=3, progress=lambda d, t: seen.append((d, t))
    )
    info = parallel.last_run()
    assert info.jobs == 2 and info.chunks == 8 and info.start_method in ("forkserver", "spawn")
    assert not info.jax_in_workers  # the workers matched with the task's functions only
    np.testing.assert_array_equal(flat(par), flat(one))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1] == (22, 22)

    docs = ([[[0, 1], [2, 3]], [[5, 6]], [[1, 2], [7, 9]]] * 4, [[[0, 1, 2]], [[5, 6]], [[1, 2, 7]]] * 4)
    np.testing.assert_array_equal(
        flat(parallel.from_model_output(CorefMetric, *docs, jobs=2, chunk_size=5)),
        flat(CorefMetric.from_model_output(*docs)),
    )
    assert not parallel.last_run().jax_in_workers
    ner = NerMetric(["LOC", "PER"])
    np.testing.assert_array_equal(
        flat(parallel.from_model_output(ner, TAGS, GOLD, jobs=2, chunk_size=4)), flat(ner.from_model_output(TAGS, GOLD))
    )


def test_bootstrap_and_randomization_states_equal_one_process():
    boot = bootstrap(NerMetric(["LOC"]), 50, seed=2)
    ids = np.arange(len(TAGS)) * 7 + 3
    one = boot.from_model_output(TAGS, GOLD, example_ids=ids)
    par = parallel.from_model_output(boot, TAGS, GOLD, jobs=2, chunk_size=4, example_ids=ids + 1000)
    again = parallel.from_model_output(boot, TAGS, GOLD, jobs=1, example_ids=ids + 2000)
    for state in (par, again):
        np.testing.assert_array_equal(flat(state.plain), flat(one.plain))
    np.testing.assert_array_equal(  # the same examples under other ids: the same plain sums, other replicates
        flat(parallel.from_model_output(boot, TAGS, GOLD, jobs=2, chunk_size=4, example_ids=ids).replicas),
        flat(one.replicas),
    )
    rand = randomization(SmatchMetric, 40, seed=1)
    other = list(reversed(PREDS))
    one_r = rand.from_model_output(PREDS, other, REFS, example_ids=np.arange(22))
    par_r = parallel.from_model_output(rand, (PREDS, other), REFS, jobs=2, chunk_size=5, example_ids=np.arange(22))
    np.testing.assert_array_equal(flat(par_r), flat(one_r))
    with pytest.raises(TypeError, match="example_ids are for bootstrap"):
        parallel.from_model_output(SmatchMetric, PREDS, REFS, jobs=1, example_ids=np.arange(22))


def test_worker_errors_and_warnings_reach_the_parent():
    bad = list(PREDS)
    bad[13] = "(a / b"
    with pytest.raises(InputFormatError, match=r"<prediction\[13\]>") as caught:
        parallel.from_model_output(SmatchMetric, bad, REFS, jobs=2, chunk_size=4)
    assert "Traceback" in str(caught.value.__cause__)  # the worker's traceback
    items = [*range(13), 300, *range(6)]  # bytes() refuses 300
    with pytest.raises(ValueError, match=r"range\(0, 256\) \(example 13, matched in a worker process\)"):
        parallel.map_items(bytes, items, jobs=2, chunk_size=4)

    quick = smatch_metric(work_limit=10**4)
    hard = unrelated_pair(0, 30)
    preds, refs = [*PREDS[:6], hard[0], *PREDS[6:9], hard[0]], [*REFS[:6], hard[1], *REFS[6:9], hard[1]]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        state = parallel.from_model_output(quick, preds, refs, jobs=2, chunk_size=4)
    budget = [str(w.message) for w in records if issubclass(w.category, SolverBudgetWarning)]
    assert len(budget) == 2 and all(m.startswith("smatch: 1 of ") for m in budget)  # one per chunk that had one
    assert float(state.compute()["not_optimal"]) == 2.0  # the count of the whole batch, in the state


def test_map_items_keeps_order_and_jobs_are_checked():
    items = [(x * 37) % 256 for x in range(50)]
    assert parallel.map_items(bytes, items, jobs=2, chunk_size=7) == items  # a function of the standard library
    assert not parallel.last_run().jax_in_workers
    assert parallel.map_items(bytes, [], jobs=2) == []
    assert parallel.resolve_jobs(0) == parallel.available_cores() >= 1
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="jobs"):
            parallel.resolve_jobs(bad)
    with pytest.raises(ValueError, match="chunk_size"):
        parallel.map_items(bytes, [1, 2], jobs=1, chunk_size=0)


def test_a_reusing_block_shares_one_pool_and_workers_run_one_thread_each(monkeypatch):
    """Map calls inside ``reusing`` run in the same workers; outside, each call has its own; BLAS threads are 1."""
    import os
    import subprocess
    import sys

    for name in parallel.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    from metametric_jax import _pool

    items = list(range(12))
    with parallel.reusing(2):
        first = set(parallel.map_items(worker_pids, items, jobs=2, chunk_size=2))
        pool = _pool._SHARED[-1].pool
        second = set(parallel.map_items(worker_pids, items, jobs=2, chunk_size=3))
        settings = set(parallel.map_items(thread_settings, items, jobs=2, chunk_size=2))
        assert set(parallel.map_items(worker_pids, items, jobs=1)) == {os.getpid()}  # jobs=1 stays in this process
        assert pool is not None and _pool._SHARED[-1].pool is pool  # every call went to the first call's pool
        workers = set(pool._processes)
    assert len(workers) == 2 and first | second <= workers and os.getpid() not in workers
    assert not _pool._SHARED
    with pytest.raises(RuntimeError, match="shutdown"):  # the block stopped its pool
        pool.submit(os.getpid)
    assert settings == {("1", "1", "1")}
    assert all(name not in os.environ for name in parallel.THREAD_VARIABLES)  # this process's environment is as it was
    third = set(parallel.map_items(worker_pids, items, jobs=2, chunk_size=2))
    fourth = set(parallel.map_items(worker_pids, items, jobs=2, chunk_size=2))
    assert not third & first and not third & fourth  # a pool per call outside the block
    # a value the user set is kept (in a fresh process: workers inherit the fork server's environment)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from helpers import thread_settings\n"
        "from metametric_jax import parallel\n"
        "print(sorted(set(parallel.map_items(thread_settings, list(range(8)), jobs=2, chunk_size=2))))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "3"}
    here = os.path.dirname(__file__)
    done = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "[('3', '1', '1')]"
