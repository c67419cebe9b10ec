"""Coreference on CoNLL-2012 files: the documents read and paired, counted in chunks by worker processes, the report.

:func:`read_files` reads and pairs a response file and a key file as the reference scorer v8.01 does (see
:mod:`metametric_jax.tasks.readers.conll2012`), refusing a response that gives key mentions again more than 10 times;
:func:`count_files` and :func:`counts_per_document` count the documents in ``jobs`` worker processes (the same counts
for every number) and :func:`score_files` gives the report. The metrics and conventions are those of
:mod:`metametric_jax.tasks.coref`, which re-exports these functions.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from metametric_jax._collector import paused_collector
from metametric_jax.errors import InputFormatError
from metametric_jax.report import Report
from metametric_jax.tasks.coref_counts import batch_document_counts, figures, sum_counts
from metametric_jax.tasks.coref_documents import CorefDocument, check_repeated_mentions, documents_of_spans

if TYPE_CHECKING:
    from metametric_jax.tasks.readers.conll2012 import ConllDocument, DocumentId

__all__ = ["read_files", "count_files", "counts_per_document", "score_files"]


def _repeated(clusters: Sequence[Sequence[tuple[int, int]]]) -> list[tuple[int, int]]:
    """:meth:`CorefDocument.repeated_mentions` of the document of these clusters, as spans."""
    spans = [m for cluster in clusters for m in cluster]
    if len(set(spans)) == len(spans):
        return []
    seen: set[tuple[int, int]] = set()
    out = []
    for m in spans:
        if m in seen:
            out.append(m)
        seen.add(m)
    return out


def _first_occurrences(clusters: Sequence[Sequence[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """:meth:`CorefDocument.first_occurrences` of the document of these clusters, as clusters of spans."""
    seen: set[tuple[int, int]] = set()
    out = []
    for cluster in clusters:
        kept = [m for m in cluster if not (m in seen or seen.add(m))]  # type: ignore[func-returns-value]
        if kept:
            out.append(kept)
    return out


def _repeat_warnings(
    repeated: list[tuple[int, int]], doc_id: str, side: str, key_spans: set[tuple[int, int]], first: bool
) -> list[str]:
    repeats = Counter(repeated)
    if not repeats:
        return []
    spans = ", ".join(f"({s}, {e}) x{n + 1}" for (s, e), n in list(repeats.items())[:5])
    more = f" and {len(repeats) - 5} more" if len(repeats) > 5 else ""
    if first:
        how = "each kept once, at its first occurrence"
    elif side == "key":
        how = (
            "each counted in its entities' sizes under one mention, as the reference scorer does (figures may exceed 1)"
        )
    elif all(m in key_spans for m in repeats):
        how = "each kept once, at its first occurrence, as the reference scorer does"
    else:
        how = "key mentions kept once; the others counted in their entities' sizes, as the reference scorer does"
    return [f"{side} document {doc_id}: repeated spans {spans}{more}; {how}"]


def read_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    key_documents: Mapping[DocumentId, ConllDocument] | None = None,
) -> tuple[list[CorefDocument], list[CorefDocument], list[str], list[str]]:
    """The response and key documents of two CoNLL-2012 files, paired as :func:`score_files` pairs them.

    Args:
        predictions: the response (system) file.
        references: the key (gold) file.
        repeated_mentions: ``"scorer"`` or ``"first"`` (then each repeated span is already kept once).
        max_repeated_mentions: see :func:`score_files`.
        check_words: see :func:`score_files`.
        key_documents: the key file as ``read_conll2012(references)`` reads it, where the caller has read it already
            (``analyze coref`` pairs several responses with one key).

    Returns:
        ``(responses, keys, ids, warnings)``: one response (empty when the file lacks it) per key document, in key
        order, the documents' ids as the key file writes them, and warnings.

    Raises:
        InputFormatError: on a malformed file, documents that do not hold the same tokens, or too many repeated
            mentions in the response.
    """
    from metametric_jax.tasks.readers.conll2012 import pair_documents, read_conll2012

    check_repeated_mentions(repeated_mentions)
    key_path, resp_path = str(references), str(predictions)
    with paused_collector():
        pairs, warnings = pair_documents(
            predictions=read_conll2012(resp_path),
            references=read_conll2012(key_path) if key_documents is None else key_documents,
            prediction_path=resp_path,
            reference_path=key_path,
            check_words=check_words,
        )
        responses, keys, ids, repeats, given_again = _documents_of(pairs, repeated_mentions == "first")
    _check_repeats(given_again, max_repeated_mentions, resp_path)
    warnings += repeats
    if not pairs:
        warnings.append(f"{key_path} holds no documents; every figure is 0")
    return responses, keys, ids, warnings


def _documents_of(
    pairs: Sequence[tuple[Any, Any]], first: bool
) -> tuple[list[CorefDocument], list[CorefDocument], list[str], list[str], int]:
    """Paired file documents as ``(responses, keys, ids, warnings on repeated spans, key mentions given again)``."""
    from metametric_jax.tasks.readers.conll2012 import format_id

    ids: list[str] = []
    warnings: list[str] = []
    given_again = 0
    documents: list[tuple[Any, str, int | None]] = []
    for r, k in pairs:
        name, part = k.doc_id
        key, response = k.entities, r.entities if r is not None else ()
        key_repeated, response_repeated = _repeated(key), _repeated(response)
        key_spans = {m for cluster in key for m in cluster} if response_repeated else set()  # only then needed
        given_again += sum(1 for m in response_repeated if m in key_spans)
        doc_id = format_id(k.doc_id)
        warnings += _repeat_warnings(key_repeated, doc_id, "key", key_spans, first)
        warnings += _repeat_warnings(response_repeated, doc_id, "response", key_spans, first)
        if first:
            key = _first_occurrences(key) if key_repeated else key
            response = _first_occurrences(response) if response_repeated else response
        documents += [(response, name, part), (key, name, part)]
        ids.append(k.spec.strip())
    built = documents_of_spans(documents)
    return built[0::2], built[1::2], ids, warnings, given_again


def _check_repeats(given_again: int, limit: int | None, resp_path: str) -> None:
    if limit is not None and given_again > limit:
        raise InputFormatError(
            resp_path,
            None,
            f"found too many repeated mentions ({given_again} > {limit}) in the response, so refusing to score, as "
            "the reference scorer does; expected each key mention once per document (fix the output, or lift the "
            "limit: --max-repeated-mentions -1 on the command line, max_repeated_mentions=None in Python)",
        )


def _chunk_of_files(
    options: dict[str, Any], key_part: list[tuple[str, int, int, int]], response_part: list[tuple[str, int, int, int]]
) -> dict[str, Any]:
    """Read, pair and count a chunk of whole documents of both files (``[(path, first line, start, end)]`` each)."""
    from metametric_jax.tasks.readers.conll2012 import pair_documents, read_conll2012_part

    (key,), (response,) = key_part, response_part
    key_docs, resp_docs = read_conll2012_part(*key), read_conll2012_part(*response)
    pairs, warnings = pair_documents(
        predictions=resp_docs,
        references=key_docs,
        prediction_path=response[0],
        reference_path=key[0],
        check_words=options["check_words"],
        bare_numbers=False,
    )
    responses, keys, ids, repeats, given_again = _documents_of(pairs, options["repeated_mentions"] == "first")
    return {
        "ids": ids,
        "counts": _counts_of(responses, keys),
        "pair_warnings": warnings,
        "repeat_warnings": repeats,
        "given_again": given_again,
        "key_bare": [ln for doc in key_docs.values() for ln in doc.bare_numbers],
        "response_bare": [ln for d in key_docs if d in resp_docs for ln in resp_docs[d].bare_numbers],
    }


def count_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[str], list[Any], list[str]]:
    """The key documents' ids, their :func:`document_counts` and the warnings, as :func:`score_files` reads them.

    With ``jobs`` other than 1 (0: every core), when both files hold the same documents in the same order, worker
    processes read, pair and count chunks of whole documents; the ids, counts and warnings are those of one process
    (which reads the files when they do not pair up so simply, or when a chunk raises an error, for its message).
    """
    options = {"repeated_mentions": repeated_mentions, "check_words": check_words}
    got = None if jobs == 1 else _count_in_chunks(str(references), str(predictions), options, jobs, progress)
    if got is None:
        responses, keys, ids, warnings = read_files(
            predictions=predictions,
            references=references,
            repeated_mentions=repeated_mentions,
            max_repeated_mentions=max_repeated_mentions,
            check_words=check_words,
        )
        return ids, counts_per_document(responses, keys, jobs=jobs, progress=progress), warnings
    _check_repeats(sum(c["given_again"] for c in got), max_repeated_mentions, str(predictions))
    from metametric_jax.tasks.readers.conll2012 import bare_number_warnings

    ids = [i for c in got for i in c["ids"]]
    warnings = [w for c in got for w in c["pair_warnings"]]
    warnings += bare_number_warnings(
        [
            (str(references), [ln for c in got for ln in c["key_bare"]]),
            (str(predictions), [ln for c in got for ln in c["response_bare"]]),
        ]
    )
    warnings += [w for c in got for w in c["repeat_warnings"]]
    return ids, [x for c in got for x in c["counts"]], warnings


def _count_in_chunks(
    key_path: str,
    resp_path: str,
    options: dict[str, Any],
    jobs: int,
    progress: Callable[[int, int], None] | None,
) -> list[dict[str, Any]] | None:
    """Chunks of whole documents counted by workers, or ``None`` where the files do not pair up document by document."""
    from metametric_jax import parallel
    from metametric_jax.tasks.readers.conll2012 import document_offsets

    try:
        key_found, resp_found = (document_offsets(path) for path in (key_path, resp_path))
    except (OSError, InputFormatError):
        return None  # one process reads them, for its message
    if key_found is None or resp_found is None:
        return None
    n = len(key_found[2])
    if n < 2 or key_found[2] != resp_found[2] or len(set(key_found[2])) != n:
        return None
    size = max(1, -(-n // (parallel.CHUNKS_PER_WORKER * parallel.resolve_jobs(jobs))))
    cuts = list(range(0, n, size))
    ends = [*cuts[1:], n]
    chunks = [
        [(path, lines[c], offsets[c], offsets[e]) for c, e in zip(cuts, ends)]
        for path, (offsets, lines, _) in ((key_path, key_found), (resp_path, resp_found))
    ]
    done = [0]

    def report(finished: int, total: int) -> None:
        done[0] += 1
        if progress is not None:
            progress(min(n, done[0] * size), n)

    try:
        return parallel.map_chunks(
            functools.partial(_chunk_of_files, options),
            chunks[0],
            chunks[1],
            jobs=jobs,
            chunk_size=1,
            progress=report,
            preload=[__name__],
        )
    except InputFormatError:
        return None  # one process reads the files again and raises the error as it reads it


def _counts_of(responses: Sequence[CorefDocument], keys: Sequence[CorefDocument]) -> list[Any]:
    return batch_document_counts(responses, keys)


#: the most documents counted together between two progress reports in this process
_PROGRESS_CHUNK = 32


def counts_per_document(
    responses: Sequence[CorefDocument],
    keys: Sequence[CorefDocument],
    *,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """:func:`document_counts` of each (response, key) document pair, in order, in ``jobs`` worker processes.

    ``jobs`` 0 means every core, 1 (the default) this process (see :mod:`metametric_jax.parallel`); the counts are the
    same for every number. ``progress(done, total)`` is called as documents are counted.
    """
    from metametric_jax import parallel

    # in this process: progress at least 50 times, documents counted together between two reports
    chunk = max(1, min(_PROGRESS_CHUNK, len(keys) // 50)) if jobs == 1 and progress is not None else None
    return parallel.map_items(
        _counts_of, list(responses), list(keys), jobs=jobs, chunk_size=chunk, progress=progress, preload=[__name__]
    )


def score_files(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    repeated_mentions: str = "scorer",
    max_repeated_mentions: int | None = 10,
    check_words: bool = False,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
) -> Report:
    """Score a CoNLL-2012 response file against a key file, as the reference scorer v8.01 does.

    Documents are matched by name and part number (see
    :func:`metametric_jax.tasks.readers.conll2012.pair_documents`); a key document the response lacks is scored
    against an empty response, a response document without a key is ignored.

    Args:
        predictions: the response (system) file.
        references: the key (gold) file.
        repeated_mentions: ``"scorer"`` or ``"first"`` (see :func:`~metametric_jax.tasks.coref.score`).
        max_repeated_mentions: refuse a response that gives key mentions again more than this many times in all (the
            scorer's rule, 10); ``None`` for no limit.
        check_words: refuse documents with as many tokens but other words (where both files have a word column)
            instead of warning.
        progress: called with ``(documents done, documents)`` as scoring goes.
        jobs: worker processes that count the documents (0: every core; default 1: this process); the report is the
            same for every number.

    Returns:
        A :class:`~metametric_jax.report.Report`: ``scores`` as :func:`~metametric_jax.tasks.coref.score` returns
        them, ``items`` one per key document (``{"id": "(name); part 000", metric: figures, ...}``), and warnings.

    Raises:
        InputFormatError: on a malformed file, documents that do not hold the same tokens, or too many repeated
            mentions in the response.
    """
    ids, per_document, warnings = count_files(
        predictions=predictions,
        references=references,
        repeated_mentions=repeated_mentions,
        max_repeated_mentions=max_repeated_mentions,
        check_words=check_words,
        jobs=jobs,
        progress=progress,
    )
    items = [{"id": doc_id, **figures(counts)} for doc_id, counts in zip(ids, per_document)]
    return Report(figures(sum_counts(per_document)), items, warnings)
