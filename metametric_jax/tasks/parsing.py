"""Parsing metrics: dependency attachment scores and PARSEVAL brackets (see :mod:`.dependency`, :mod:`.constituency`).

This module gathers both for convenience; each lives in its own module.
"""

from metametric_jax.tasks.constituency import (
    PUNCT_TAGS,
    ROOT_LABELS,
    ParsevalMetric,
    Tree,
    bracket_stats,
    brackets,
    parse_trees,
    parseval_scores,
    read_trees,
)
from metametric_jax.tasks.dependency import (
    DepSentence,
    DepToken,
    attachment_scores,
    attachment_stats,
    dependency_metric,
    parse_conllu,
    read_conllu,
)

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
    "brackets",
    "bracket_stats",
    "ParsevalMetric",
    "parseval_scores",
    "PUNCT_TAGS",
    "ROOT_LABELS",
]
