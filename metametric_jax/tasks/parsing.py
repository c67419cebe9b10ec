"""Parsing metrics gathered in one namespace: :mod:`.dependency` (CoNLL 2018) and :mod:`.constituency` (EVALB).

Each lives in its own module; import from there in new code. ``ParsevalMetric`` is ``ConstituencyMetric()`` with
``COLLINS.prm``.
"""

from metametric_jax.tasks.constituency import COLLINS, ConstituencyMetric, EvalbParams, read_params
from metametric_jax.tasks.dependency import (
    DepSentence,
    DepToken,
    attachment_scores,
    attachment_stats,
    dependency_metric,
    parse_conllu,
    read_conllu,
)
from metametric_jax.tasks.readers.ptb import Tree, parse_trees, read_trees

ParsevalMetric = ConstituencyMetric(COLLINS)

__all__ = [
    "DepToken",
    "DepSentence",
    "parse_conllu",
    "read_conllu",
    "attachment_stats",
    "dependency_metric",
    "attachment_scores",
    "Tree",
    "parse_trees",
    "read_trees",
    "EvalbParams",
    "COLLINS",
    "read_params",
    "ConstituencyMetric",
    "ParsevalMetric",
]
