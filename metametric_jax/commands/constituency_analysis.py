"""``metametric-jax analyze constituency``: bracket figures per label and sentence length; EVALB's sentence table.

The task's file options are ``score constituency``'s (``--params``); the analyses are those of
:mod:`metametric_jax.tasks.constituency_analysis`.
"""

from __future__ import annotations

from metametric_jax.commands._analysis import analysis_hook

ANALYZE = analysis_hook(
    "constituency",
    reference="gold",
    options=("params",),
    custom="a sentence, Sentence(position, length, line) of metametric_jax.tasks.constituency_analysis",
    refused={"pred": "analyze constituency reads --references and --system files; --pred is not accepted"},
    description="Analyses: overall (score constituency's bracket recall, precision and F1, all and len<=40, "
    "exactly), label (per phrase label), length (1-10, 11-20, 21-30, 31-40, 41+ words); each bucket's F1 tested, each "
    "system against the first. Also EVALB's per-sentence table of each system.",
)
