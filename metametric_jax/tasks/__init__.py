"""Ready-made task metrics, equal to their fields' official scorers, with readers for their file formats.

Every task module has the same surface: ``<Task>Metric`` (the accumulator class, or a cached factory so named),
``score(predictions, references, **options) -> dict`` with the field's headline figure under a documented key, and
``score_files(*, predictions, references, **options) -> Report`` (corpus figures, per-item figures, warnings). File
readers live in :mod:`metametric_jax.tasks.readers`, tag schemes and chunking in :mod:`~metametric_jax.tasks.tagging`.

* :mod:`~metametric_jax.tasks.coref` — MUC, B³, CEAF-m, CEAF-e, BLANC, LEA and the CoNLL average, equal to the
  CoNLL-2012 reference scorer v8.01 (its reading of repeated spans and bare entity numbers included);
* :mod:`~metametric_jax.tasks.ner` — span F1 per type, micro and macro, from IOB1/IOB2/IOE1/IOE2/IOBES/BILOU tags,
  equal to conlleval (its one-file layout and options too) and seqeval's default mode;
* :mod:`~metametric_jax.tasks.amr` — exact Smatch within a work budget, per-pair and fine-grained scores (Damonte et
  al. 2017), alignment markers removed;
* :mod:`~metametric_jax.tasks.ie` — entities, relations (strict, boundaries) and events from JSON Lines, as OneIE,
  DyGIE++ and SpERT count them;
* :mod:`~metametric_jax.tasks.dependency` — every figure of the CoNLL 2018 script (Tokens to BLEX, with the word
  alignment of retokenized output and its tree checks); :mod:`~metametric_jax.tasks.constituency` — EVALB with a
  parameter file (COLLINS.prm by default);
* :mod:`~metametric_jax.tasks.text` — ROUGE-N, ROUGE-L and rougeLsum with rouge-score's tokenizer and Porter
  stemmer, several references per example; multiset F-scores;
* :mod:`~metametric_jax.tasks.ranking` — trec_eval's measures (MAP, P@k, recall@k, nDCG, nDCG@k, bpref, R-precision,
  reciprocal rank, success@k) and its TREC qrels / run readers.
"""

__all__ = [
    "amr",
    "constituency",
    "coref",
    "dependency",
    "ie",
    "ner",
    "ranking",
    "readers",
    "tagging",
    "text",
]
