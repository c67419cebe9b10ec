"""Apache Beam: MetricCombineFn on the DirectRunner with two worker processes equals one process."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from helpers import flat

beam = pytest.importorskip("apache_beam")

from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402

from metametric_jax.beam import MetricCombineFn  # noqa: E402
from metametric_jax.significance import bootstrap  # noqa: E402
from metametric_jax.tasks.amr import SmatchMetric  # noqa: E402
from metametric_jax.tasks.ner import NerMetric  # noqa: E402

GRAPHS = ["(b / boy)", "(g / girl :mod (t / tall))", "(a / and :op1 (b / boy) :op2 (g / girl))", "(r / run-01)"]
AMR = [(GRAPHS[i % 4], GRAPHS[(i * 3 + 1) % 4]) for i in range(40)]
TAGS = [
    (["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O", "B-ORG"]),
    (["O", "B-ORG"], ["O", "B-ORG"]),
    (["B-LOC", "O", "O"], ["B-LOC", "B-LOC", "O"]),
] * 20
NER = NerMetric(["LOC", "PER"])
BOOT = bootstrap(SmatchMetric, 50, seed=4)


def _save(state, path):
    with open(path, "wb") as handle:
        pickle.dump(state, handle)


def test_two_worker_processes_give_one_process_state(tmp_path, monkeypatch):
    """A bootstrap of Smatch over 40 graph pairs, combined by two worker processes: the state of one process."""
    here = os.path.dirname(os.path.abspath(__file__))  # the workers import this module (for _save)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    options = PipelineOptions(["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    with beam.Pipeline(options=options) as p:
        graphs = p | "graphs" >> beam.Create(list(enumerate(AMR)), reshuffle=True)
        boot_state = graphs | "boot" >> beam.CombineGlobally(MetricCombineFn(BOOT, batch_size=8, output="state"))
        _ = boot_state | "save boot" >> beam.Map(_save, str(tmp_path / "boot.pkl"))
    boot = pickle.loads((tmp_path / "boot.pkl").read_bytes())
    one = BOOT.from_model_output(*zip(*AMR), example_ids=np.arange(len(AMR)))
    assert type(boot) is BOOT
    for k in ("xy", "xx", "yy", "count"):
        assert boot.plain.totals()[k] == one.plain.totals()[k]
    np.testing.assert_allclose(flat(boot.replicas), flat(one.replicas), rtol=1e-6, atol=1e-5)  # float32 batch sums
    got, want = boot.compute(), one.compute()
    assert float(got["estimate"]["f1"]) == pytest.approx(float(want["estimate"]["f1"]), abs=1e-6)


def test_combine_fn_contract_and_refusals():
    fn = MetricCombineFn(NER, batch_size=4)
    accs = []
    for lo in range(0, len(TAGS), 25):
        acc = fn.create_accumulator()
        for element in TAGS[lo : lo + 25]:
            acc = fn.add_input(acc, element)
        accs.append(fn.compact(acc) if lo else acc)
    merged = fn.merge_accumulators(pickle.loads(pickle.dumps(a)) for a in accs)
    figures = fn.extract_output(merged)
    one = NER.from_model_output(*zip(*TAGS))
    assert float(figures["micro"]["f1"]) == float(one.compute()["micro"]["f1"])
    state = MetricCombineFn(NER, batch_size=4, output="state").extract_output(merged)
    for key, member in one.states.items():  # counts exact; sums of per-sentence fractions to float32 rounding
        got, want = state.states[key].totals(), member.totals()
        assert [got[k] for k in ("xy", "xx", "yy", "count")] == [want[k] for k in ("xy", "xx", "yy", "count")]
        for k, v in want["macro"].items():
            assert got["macro"][k] == pytest.approx(v, rel=1e-6, abs=1e-6)
    assert fn.extract_output(fn.create_accumulator())["micro"]["f1"] == 0.0
    assert pickle.loads(pickle.dumps(fn)).metric is NER
    boot = MetricCombineFn(BOOT)
    with pytest.raises(ValueError, match="example_id"):
        boot.add_input(boot.create_accumulator(), AMR[0])
    with pytest.raises(ValueError, match=r"\(prediction, reference\)"):
        fn.add_input(fn.create_accumulator(), ("only one",))
    with pytest.raises(TypeError):
        MetricCombineFn(NER.from_model_output(*zip(*TAGS)))
