"""The coreference contingency-matrix solver equals the metrics derived with the library's own DSL.

The unified view (Chen et al., EMNLP 2023, §5) writes CEAF and B³ as matchings:

* CEAF-m: a 1:1 matching of entities with φ3(K, R) = |K ∩ R| (itself a 1:1 matching of mentions);
* CEAF-e: the same with φ4 = dice(K, R), an inner normalized similarity;
* B³: a 1:1 matching of (mention, entity) pairs, φ = [m = m'] · |K ∩ R|, normalized per mention by the predicted
  (precision) or reference (recall) entity size.
"""

from __future__ import annotations

import random

import pytest

from metametric_jax import dsl, make_metric
from metametric_jax.tasks.coref import score


def _random_partition(rng: random.Random, mentions: list[tuple[int, int]]) -> list[frozenset]:
    clusters: list[set] = []
    for m in mentions:
        if clusters and rng.random() < 0.6:
            rng.choice(clusters).add(m)
        else:
            clusters.append({m})
    return [frozenset(c) for c in clusters]


def _corpus(seed: int, n_docs: int = 12) -> tuple[list[list[frozenset]], list[list[frozenset]]]:
    rng = random.Random(seed)
    keys, responses = [], []
    for _ in range(n_docs):
        key_mentions = [(i, i + rng.randrange(0, 2)) for i in rng.sample(range(0, 60, 2), rng.randrange(1, 12))]
        resp_mentions = [m for m in key_mentions if rng.random() < 0.8]
        resp_mentions += [(i, i) for i in rng.sample(range(61, 90), rng.randrange(0, 3))]  # twinless mentions
        keys.append(_random_partition(rng, key_mentions))
        responses.append(_random_partition(rng, resp_mentions) if resp_mentions else [])
    return keys, responses


mention_set = dsl.set_matching(dsl.discrete(), constraint="<->")
CEAF_M = dsl.set_matching(mention_set, constraint="<->")
CEAF_E = dsl.set_matching(dsl.normalize(mention_set, normalizer="dice"), constraint="<->")
_pair = dsl.from_function(
    lambda a, b: float(len(a[1] & b[1])) if a[0] == b[0] else 0.0, name="mention_in_entity", self_fn=lambda a: len(a[1])
)
B3_P = dsl.set_matching(dsl.normalize(_pair, normalizer="precision"), constraint="<->")
B3_R = dsl.set_matching(dsl.normalize(_pair, normalizer="recall"), constraint="<->")


def _mention_items(doc: list[frozenset]) -> list[tuple[tuple[int, int], frozenset]]:
    return [(m, c) for c in doc for m in sorted(c)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ceaf_and_bcub_equal_their_derived_definitions(seed):
    keys, responses = _corpus(seed)
    ours = score([[sorted(c) for c in d] for d in responses], [[sorted(c) for c in d] for d in keys])

    for name, sim in (("ceafm", CEAF_M), ("ceafe", CEAF_E)):
        state = make_metric(sim, normalizer="f1").from_model_output(responses, keys)
        res = state.compute()
        assert float(res["precision"]) == pytest.approx(ours[name]["precision"], abs=1e-6), name
        assert float(res["recall"]) == pytest.approx(ours[name]["recall"], abs=1e-6), name
        assert float(res["f1"]) == pytest.approx(ours[name]["f1"], abs=1e-6), name

    preds = [_mention_items(d) for d in responses]
    refs = [_mention_items(d) for d in keys]
    p = make_metric(B3_P, normalizer="precision").from_model_output(preds, refs).compute()["precision"]
    r = make_metric(B3_R, normalizer="recall").from_model_output(preds, refs).compute()["recall"]
    assert float(p) == pytest.approx(ours["bcub"]["precision"], abs=1e-6)
    assert float(r) == pytest.approx(ours["bcub"]["recall"], abs=1e-6)
