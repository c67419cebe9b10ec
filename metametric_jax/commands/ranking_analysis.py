"""``metametric-jax analyze ranking``: trec_eval's measures by the number of relevant documents; per-query wins.

The task's file options are ``score ranking``'s (``-m``, ``-l``, ``-c``, ``-M``); the analyses are those of
:mod:`metametric_jax.tasks.ranking_analysis`.
"""

from __future__ import annotations

from metametric_jax.commands._analysis import analysis_hook

ANALYZE = analysis_hook(
    "ranking",
    reference="qrels",
    options=("measures", "level", "complete", "max_retrieved"),
    custom="a query, Query(id, relevant) of metametric_jax.tasks.ranking_analysis",
    refused={
        "run": "analyze ranking reads --references (the qrels) and --system run files; --run is not accepted",
        "per_query": "analyze ranking compares queries in its wins table; --per-query is a score option",
    },
    description="Analyses: overall (score ranking's figures, exactly, counts left out) and relevant (queries with 0, "
    "1, 2-5, 6-20, 21+ relevant documents); each bucket's MAP tested, each system against the first. Also the "
    "per-query wins, ties and losses of each system against the first for each measure.",
)
