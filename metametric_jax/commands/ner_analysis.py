"""``metametric-jax analyze ner``: NER figures per entity type, length and training frequency; error categories.

The task's file options are ``score ner``'s (``--scheme``, ``-d``, ``-o``, ``-r``, ``--unit``); the analyses are
those of :mod:`metametric_jax.tasks.ner_analysis`.
"""

from __future__ import annotations

import argparse

from metametric_jax.commands._analysis import analysis_hook


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--frequency-from",
        metavar="TRAIN",
        default=None,
        help="a training file in the same column format (tokens in the first column): adds the analysis by how often "
        "the entity's surface form is an entity there (0, 1-2, 3-9, 10+)",
    )


ANALYZE = analysis_hook(
    "ner",
    reference="gold",
    options=("scheme", "delimiter", "outside", "raw", "unit", "frequency_from"),
    refused={
        "file": "analyze ner reads --references and --system files (two-file layout); --file is not accepted",
        "pred": "analyze ner reads --references and --system files; --pred is not accepted",
    },
    add_arguments=_add_arguments,
    custom="an entity, Entity(sentence, start, end, label, text, side) of metametric_jax.tasks.ner_analysis",
    description="Analyses: overall (score ner's micro figures), type (score ner's per-type figures, exactly), length "
    "(1, 2, 3, 4+ tokens), frequency (with --frequency-from); each bucket's F1 tested, each system against the first. "
    "Also nervaluate's error categories (strict, exact, partial, type) and a gold x predicted type confusion matrix.",
)
