"""``metametric-jax analyze dependency``: UAS and LAS per relation, arc length, direction and depth; a confusion matrix.

The task's file options are ``score dependency``'s (``--no-check-trees``, ``--exclude-punct``, ``--keep-subtypes``,
``--unit``); the analyses are those of :mod:`metametric_jax.tasks.dependency_analysis`.
"""

from __future__ import annotations

from metametric_jax.commands._analysis import analysis_hook

ANALYZE = analysis_hook(
    "dependency",
    reference="gold",
    options=("unit", "check_trees", "exclude_punct", "strip_subtypes"),
    custom="a word, Word(sentence, id, form, upos, deprel, head, side) of metametric_jax.tasks.dependency_analysis",
    refused={
        "files": "analyze dependency reads --references and --system files; GOLD PRED are not accepted",
        "pred": "analyze dependency reads --references and --system files; --pred is not accepted",
        "counts": "analyze dependency gives figures per bucket; --counts is a score option",
    },
    description="Analyses (MaltEval's groupings): overall (score dependency's UAS and LAS, exactly), deprel, "
    "arc_length (root, 1, 2, 3-6, 7+), direction (left, right, root) and depth (arcs from the root); precision by the "
    "predicted word's own attribute, recall by the reference word's; each bucket's LAS F1 tested, each system "
    "against the first. Also a gold x predicted relation confusion matrix of the aligned words.",
)
