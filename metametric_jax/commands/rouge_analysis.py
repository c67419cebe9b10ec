"""``metametric-jax analyze rouge``: ROUGE by the length of the reference.

The task's file options are ``score rouge``'s (``--references``, repeatable; ``--types``, ``--use-stemmer``); the
analyses are those of :mod:`metametric_jax.tasks.rouge_analysis`.
"""

from __future__ import annotations

from metametric_jax.commands._analysis import analysis_hook

ANALYZE = analysis_hook(
    "rouge",
    reference="references",
    options=("types", "use_stemmer"),
    custom="an example, Example(position, references, tokens) of metametric_jax.tasks.rouge_analysis",
    refused={"predictions": "analyze rouge reads --references and --system files; --predictions is not accepted"},
    description="Analyses: overall (score rouge's figures, exactly) and reference_length (0-50, 51-100, 101-200, "
    "201+ tokens of the first reference); each bucket's F1 of the first --types type tested, each system against the "
    "first.",
)
