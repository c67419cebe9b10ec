"""Readers of the file formats of the task modules, each raising ``InputFormatError(file, line, message)``.

One module per format, each reading its files as text through :mod:`~metametric_jax.tasks.readers.text` (UTF-8; a
byte that is not UTF-8 is an error naming its line): ``conll`` (NER columns, conlleval's layout), ``conll2012``
(coreference), ``conllu`` (dependencies), ``ptb`` (bracketed trees), ``evalb`` (EVALB parameter files), ``penman``
(AMR graphs), ``jsonl`` (JSON Lines) and ``ie_jsonl`` (information extraction documents on it), ``trec`` (qrels and
runs), ``summaries`` (ROUGE's one example per line).
"""
