"""``metametric-jax analyze coref``: Kummerfeld and Klein's error categories and the gain of fixing each; buckets.

The task's file options are ``score coref``'s (``--repeated-mentions``, ``--max-repeated-mentions``,
``--check-words``; ``--metric`` picks the tested figure, the CoNLL F1 by default); the analyses are those of
:mod:`metametric_jax.tasks.coref_analysis`.
"""

from __future__ import annotations

import argparse
from typing import Any

from metametric_jax.commands._analysis import add_bins, analysis_hook

_FILES = "analyze coref reads --references (the key) and --system files; KEY RESPONSE and --response are not accepted"


def _derived(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "max_repeated_mentions": args.max_repeated_mentions,  # None for -1 (no limit), as the option reads it
        "metric": "conll" if args.metric == "all" else args.metric,
    }


ANALYZE = analysis_hook(
    "coref",
    reference="key",
    options=("repeated_mentions", "check_words", "bins"),
    derived=_derived,
    refused={
        "files": _FILES,
        "response": _FILES,
        "per_document": "analyze coref reports per bucket of documents; --per-document is not accepted",
    },
    add_arguments=lambda parser: add_bins(parser, "documents by length and by number of key entities"),
    custom="a document, Document(position, id, tokens, key) of metametric_jax.tasks.coref_analysis",
    description="Analyses (documents resampled): overall (score coref's F1 of MUC, B3, CEAF-e and LEA and the CoNLL "
    "average, with the tested metric's beside them when --metric picks CEAF-m, BLANC or mentions), "
    "length (tokens) and entities (key entities), in equal-frequency buckets of documents; each bucket's CoNLL F1 "
    "tested (--metric picks another), each system against the first. Also Kummerfeld and Klein's (2013) error "
    "categories (span error, conflated entities, extra mention, extra entity, divided entity, missing mention, missing "
    "entity): per system, the number of errors and how much each metric's F1 rises when they are fixed, in that order.",
)
