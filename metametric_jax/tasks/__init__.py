"""Ready-made task metrics, equal to their fields' official scorers, with readers for their file formats.

Modules (import the one you need; file-format libraries are optional extras, imported lazily):

* :mod:`~metametric_jax.tasks.coref` and :mod:`~metametric_jax.tasks.conll2012` — MUC, B³, CEAF-m, CEAF-e, BLANC,
  LEA and the CoNLL average, equal to the CoNLL-2012 reference scorer v8.01; CoNLL-2012 reader;
* :mod:`~metametric_jax.tasks.ner` and :mod:`~metametric_jax.tasks.conll_ner` — span F1 from IOB1/IOB2/IOE/IOBES/
  BILOU tags, equal to conlleval / seqeval's default mode; CoNLL column reader;
* :mod:`~metametric_jax.tasks.amr` — exact Smatch (an integer program, not hill climbing); PENMAN via ``penman``;
* :mod:`~metametric_jax.tasks.ie` — relation and event extraction;
* :mod:`~metametric_jax.tasks.dependency` (UAS / LAS from CoNLL-U, via ``conllu``) and
  :mod:`~metametric_jax.tasks.constituency` (PARSEVAL brackets), gathered in :mod:`~metametric_jax.tasks.parsing`;
* :mod:`~metametric_jax.tasks.text` — ROUGE-N, ROUGE-L (equal to rouge-score) and multiset F-scores;
* :mod:`~metametric_jax.tasks.ranking` — precision@k, recall@k, average precision.
"""

__all__ = [
    "amr",
    "conll2012",
    "conll_ner",
    "constituency",
    "coref",
    "dependency",
    "ie",
    "ner",
    "parsing",
    "ranking",
    "text",
]
