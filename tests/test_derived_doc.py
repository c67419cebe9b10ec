"""What ``help(metric_of(D))`` tells a user: the type it came from, its fields, the formula and the figures."""

from __future__ import annotations

import pydoc
from collections.abc import Collection
from dataclasses import dataclass

from metametric_jax import metametric, metric_of


@metametric(normalizer="none")
@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str


@metametric(normalizer="f1", constraint="->")
@dataclass
class Doc:
    spans: Collection[Span]
    title: str


@metametric(normalizer="jaccard")
@dataclass
class Tags:
    tags: frozenset[str]


def test_help_names_the_type_fields_formula_and_figures() -> None:
    text = pydoc.render_doc(metric_of(Doc), renderer=pydoc.plaintext)
    assert f"{__name__}.Doc" in text and "constraint ->" in text
    for field in ("spans", "start", "end", "label", "title"):
        assert f"``{field}``" in text
    assert "SetMatching (->)" in text
    assert r"F_1 = \frac{2 \sum_i \phi(P_i, R_i)}" in text
    for figure in ("overlap", "precision", "recall", "f1", "jaccard", "macro_"):
        assert figure in text
    assert 'compute()["f1"]' in text


def test_the_formula_follows_the_normalizer() -> None:
    doc = metric_of(Tags).__doc__ or ""
    assert "J = " in doc and 'compute()["jaccard"]' in doc
    doc = metric_of(Span).__doc__ or ""
    assert r"\mathrm{overlap}" in doc and 'compute()["overlap"]' in doc
