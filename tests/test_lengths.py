"""Predictions beside references: one length check, one wording, at every entry point of the package."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from metametric_jax import testing
from metametric_jax.inputs import check_lengths
from metametric_jax.tasks import (
    amr,
    constituency,
    constituency_analysis,
    coref,
    coref_analysis,
    dependency,
    ie,
    ie_analysis,
    ner,
    ner_analysis,
    ranking,
    rouge,
    rouge_analysis,
    spans,
    text,
)

TREE = "(S (X a))"
DOCS = [ie.Document(id="a"), ie.Document(id="b")]

#: (who checks, what one entry is, a call with one prediction and two references)
CASES: list[tuple[str, str, Callable[[], Any]]] = [
    ("ner", "sentence", lambda: ner.score([["O"]], [["O"], ["O"]])),
    ("count_spans", "sentence", lambda: spans.count_spans([["O"]], [["O"], ["O"]])),
    ("coref", "document", lambda: coref.score([[[0]]], [[[0]], [[0]]])),
    ("ie", "document", lambda: ie.score(DOCS[:1], DOCS)),
    ("dependency", "example", lambda: dependency.attachment_stats([None], [None, None])),
    ("ROUGE", "example", lambda: rouge.score(["a"], ["a", "b"])),
    ("ranking", "query", lambda: ranking.score([["d"]], [{"d": 1}, {"d": 1}])),
    ("amr", "graph", lambda: amr.score([TREE], [TREE, TREE])),
    ("constituency", "sentence", lambda: constituency.score([TREE], [TREE, TREE])),
    ("split_batches", "example", lambda: testing.split_batches([1], [1, 2])),
    ("rouge.from_model_output", "example", lambda: text.RougeMetric(("rouge1",)).from_model_output(["a"], ["a", "b"])),
    ("ner analysis, system 1", "sentence", lambda: ner_analysis.analyze([["O"], ["O"]], [[["O"]]])),
    ("coref analysis, system 1", "document", lambda: coref_analysis.analyze([[[0]], [[0]]], [[[[0]]]])),
    ("error_analysis", "document", lambda: coref_analysis.error_analysis([[[0]]], [[[0]], [[0]]])),
    ("ie analysis, system 1", "document", lambda: ie_analysis.analyze(DOCS, [DOCS[:1]])),
    ("rouge analysis, system 1", "example", lambda: rouge_analysis.analyze(["a", "b"], [["a"]])),
    ("constituency analysis, system 1", "sentence", lambda: constituency_analysis.analyze([TREE, TREE], [[TREE]])),
]


@pytest.mark.parametrize("what, unit, call", CASES, ids=[c[0] for c in CASES])
def test_one_message_everywhere(what: str, unit: str, call: Callable[[], Any]) -> None:
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == (
        f"{what}: predictions and references must have the same length, one entry per {unit}; found 1 prediction "
        "and 2 references."
    )


def test_precomputed_statistics() -> None:
    from metametric_jax.resampling import Precomputed, example_rows

    with pytest.raises(ValueError, match="^example_rows \\(precomputed statistics\\): predictions and references must"):
        example_rows(amr.AmrMetric, Precomputed(np.zeros((1, 3))), ["a", "b"])


def test_check_lengths() -> None:
    check_lengths([1, 2], (3, 4), "x")
    check_lengths(np.zeros((2, 3)), [[], []], "x")
    with pytest.raises(
        ValueError,
        match=re.escape(
            "x: predictions and references must have the same length, one "
            "entry per query; found 3 predictions and 1 reference."
        ),
    ):
        check_lengths([1, 2, 3], [1], "x", "query")
