r"""CoNLL-2012 coreference files: reading, aligning key and response documents, and scoring them.

A file holds documents between ``#begin document (name); part NNN`` and ``#end document``; each non-blank line is a
token (blank lines separate sentences, token indices run over the whole document) and its *last* column is the
coreference column: ``-`` (or ``_``) for none, else parts such as ``(12`` (a mention of entity 12 starts), ``12)``
(it ends), ``(12)`` (a one-token mention), joined with ``|`` or written one after the other (``(3|(12)``, ``(1(3``).
Both the full column format and the reference scorer's two-column test files (document name, coreference column)
are read.

Conventions of the reference scorer v8.01 (Pradhan et al., ACL 2014) that this module follows:

* a token's parts are applied in the scorer's order: one-token mentions, then openings, then closings; a closing
  ``12)`` ends the most recent open mention of entity 12; entities are numbered in order of first appearance;
* documents are matched by ``(name, part)``; a key document absent from the response is scored against an empty
  response; a response document absent from the key is ignored (both are reported as warnings);
* a span repeated in the response is kept once (see :mod:`metametric_jax.tasks.coref`), and, like the scorer, a
  response with more than 10 repeated spans is refused (``max_repeated_mentions``).

Malformed input raises :class:`metametric_jax.errors.InputFormatError` with the file and line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.coref import CorefDocument, CorefMetrics, Entity, Mention, host_compute

__all__ = [
    "DocumentId",
    "parse_conll2012",
    "read_conll2012",
    "align_documents",
    "score_documents",
    "score_files",
]

#: A document's identifier: ``(name, part)``; ``part`` is ``None`` when the begin line has no part number.
DocumentId = tuple[str, "int | None"]

_BEGIN = re.compile(r"^#\s*begin document\s+(.*?)\s*$")
_END = re.compile(r"^#\s*end document")
_NAME_PART = re.compile(r"^\((.*)\);?\s*part\s+(\d+)$")
_NAME_ONLY = re.compile(r"^\((.*)\);?$")
_PART = re.compile(r"\((\d+\+\d+)\)|\((\d+)\)|\((\d+)|(\d+)\)|\|")
_EXPECTED_COLUMN = "a coreference column such as '-', '(12', '12)', '(12)' or '(3|(12)'"


def _document_id(spec: str) -> DocumentId:
    m = _NAME_PART.match(spec)
    if m:
        return (m.group(1), int(m.group(2)))
    m = _NAME_ONLY.match(spec)
    if m:
        return (m.group(1), None)
    return (spec, None)


def _format_id(doc_id: DocumentId) -> str:
    name, part = doc_id
    return f"({name}); part {part:03d}" if part is not None else f"({name})"


def _parse_column(column: str, path: str, line_no: int) -> tuple[list[int], list[int], list[int]]:
    """The entity ids of the one-token mentions, openings and closings of one coreference column."""
    if column in ("-", "_"):
        return [], [], []
    singles: list[int] = []
    opens: list[int] = []
    closes: list[int] = []
    pos = 0
    for m in _PART.finditer(column):
        if m.start() != pos:
            break
        pos = m.end()
        # group 1, a double antecedent "(12+3)", is discarded as the scorer does; "|" separates parts.
        if m.group(2) is not None:
            singles.append(int(m.group(2)))
        elif m.group(3) is not None:
            opens.append(int(m.group(3)))
        elif m.group(4) is not None:
            closes.append(int(m.group(4)))
    if pos != len(column) or column == "|" * len(column):
        raise InputFormatError(path, line_no, f"expected {_EXPECTED_COLUMN}; found {column!r}.")
    return singles, opens, closes


class _DocumentBuilder:
    """Collects the mentions of one document while its lines are read."""

    def __init__(self, doc_id: DocumentId, line_no: int) -> None:
        self.doc_id = doc_id
        self.line_no = line_no
        self.order: dict[int, int] = {}
        self.entities: list[list[Mention]] = []
        self.open: dict[int, list[tuple[int, int]]] = {}
        self.token = 0

    def _entity(self, ident: int) -> list[Mention]:
        if ident not in self.order:
            self.order[ident] = len(self.entities)
            self.entities.append([])
        return self.entities[self.order[ident]]

    def token_line(self, column: str, path: str, line_no: int) -> None:
        singles, opens, closes = _parse_column(column, path, line_no)
        t = self.token
        for ident in singles:
            self._entity(ident).append(Mention(t, t))
        for ident in opens:
            self._entity(ident)
            self.open.setdefault(ident, []).append((t, line_no))
        for ident in closes:
            entity = self._entity(ident)
            stack = self.open.get(ident)
            if not stack:
                raise InputFormatError(
                    path,
                    line_no,
                    f"found '{ident})' closing a mention of entity {ident} in document {_format_id(self.doc_id)}, "
                    f"but no mention of entity {ident} is open; expected a matching '({ident}' on this or an earlier "
                    "line.",
                )
            start, _ = stack.pop()
            entity.append(Mention(start, t))
        self.token += 1

    def finish(self, path: str, line_no: int) -> CorefDocument:
        unclosed = [(ident, ln) for ident, stack in self.open.items() for _, ln in stack]
        if unclosed:
            ident, ln = min(unclosed, key=lambda x: x[1])
            raise InputFormatError(
                path,
                line_no,
                f"document {_format_id(self.doc_id)} ends with {len(unclosed)} unclosed mention(s); the mention of "
                f"entity {ident} opened on line {ln} needs a closing '{ident})' before '#end document'.",
            )
        return CorefDocument(
            tuple(Entity(tuple(ms)) for ms in self.entities if ms), name=self.doc_id[0], part=self.doc_id[1]
        )


def parse_conll2012(lines: Iterable[str], path: str = "<string>") -> dict[DocumentId, CorefDocument]:
    """The documents of a CoNLL-2012 file's lines, by ``(name, part)``, in file order.

    Args:
        lines: the file's lines (with or without line endings).
        path: the file name used in error messages.

    Raises:
        InputFormatError: on a token outside a document, a document opened twice or not ended, an unknown coreference
            column, a closing without opening or a mention left open.
    """
    docs: dict[DocumentId, CorefDocument] = {}
    current: _DocumentBuilder | None = None
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        begin = _BEGIN.match(line)
        if begin:
            if current is not None:
                raise InputFormatError(
                    path,
                    line_no,
                    f"expected '#end document' for document {_format_id(current.doc_id)} (begun on line "
                    f"{current.line_no}) before a new '#begin document'.",
                )
            doc_id = _document_id(begin.group(1))
            if doc_id in docs:
                raise InputFormatError(
                    path, line_no, f"document {_format_id(doc_id)} occurs twice; expected each (name, part) once."
                )
            current = _DocumentBuilder(doc_id, line_no)
            continue
        if _END.match(line):
            if current is None:
                raise InputFormatError(
                    path, line_no, "found '#end document' outside a document; expected '#begin document' first."
                )
            docs[current.doc_id] = current.finish(path, line_no)
            current = None
            continue
        columns = line.split()
        if not columns:
            continue
        if current is None:
            if line.lstrip().startswith("#"):
                continue
            raise InputFormatError(
                path,
                line_no,
                f"found a token line outside a document ({line[:40]!r}); expected '#begin document (name); part NNN' "
                "first.",
            )
        current.token_line(columns[-1], path, line_no)
    if current is not None:
        raise InputFormatError(
            path,
            line_no + 1,
            f"the file ends inside document {_format_id(current.doc_id)} (begun on line {current.line_no}); expected "
            "'#end document'.",
        )
    return docs


def read_conll2012(path: str | os.PathLike[str]) -> dict[DocumentId, CorefDocument]:
    """The documents of a CoNLL-2012 file, by ``(name, part)``, in file order (see :func:`parse_conll2012`)."""
    p = Path(path)
    with p.open(encoding="utf-8") as handle:
        return parse_conll2012(handle, str(p))


def align_documents(
    keys: Mapping[DocumentId, CorefDocument], responses: Mapping[DocumentId, CorefDocument]
) -> tuple[list[CorefDocument], list[CorefDocument], list[str]]:
    """Pair key and response documents by ``(name, part)``, as the reference scorer does.

    Every key document is scored: against its response, or against an empty response when there is none. Response
    documents without a key document are ignored.

    Returns:
        ``(keys, responses, warnings)``: aligned lists in key order, and one message per missing or extra document.
    """
    key_docs: list[CorefDocument] = []
    resp_docs: list[CorefDocument] = []
    warnings: list[str] = []
    for doc_id, key in keys.items():
        response = responses.get(doc_id)
        if response is None:
            warnings.append(
                f"document {_format_id(doc_id)} is in the key but not in the response; scored against an empty "
                "response."
            )
            response = CorefDocument((), name=doc_id[0], part=doc_id[1])
        key_docs.append(key)
        resp_docs.append(response)
    for doc_id in responses:
        if doc_id not in keys:
            warnings.append(f"document {_format_id(doc_id)} is in the response but not in the key; ignored.")
    return key_docs, resp_docs, warnings


def _repeat_warnings(docs: Iterable[CorefDocument], which: str) -> tuple[list[str], int]:
    warnings: list[str] = []
    total = 0
    for doc in docs:
        repeats: dict[Mention, int] = {}
        for m in doc.repeated_mentions():
            repeats[m] = repeats.get(m, 0) + 1
        for m, extra in repeats.items():
            total += extra
            warnings.append(
                f"{which} document {_format_id(doc.key)}: mention ({m.start}, {m.end}) occurs {extra + 1} times; its "
                "first occurrence is kept."
            )
    return warnings, total


def score_documents(
    keys: Mapping[DocumentId, CorefDocument],
    responses: Mapping[DocumentId, CorefDocument],
    *,
    progress: bool | Callable[[int, int], None] = False,
    batch_size: int = 256,
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Corpus scores of key and response documents matched by ``(name, part)`` (see :func:`score_files`).

    ``progress`` is ``True`` (print counts to standard error) or a callback ``(done, total)`` called per batch.
    """
    key_docs, resp_docs, warnings = align_documents(keys, responses)
    state = CorefMetrics.empty()
    n = len(key_docs)
    for lo in range(0, n, batch_size):
        hi = min(n, lo + batch_size)
        state = state.merge(CorefMetrics.from_model_output(resp_docs[lo:hi], key_docs[lo:hi]))
        if callable(progress):
            progress(hi, n)
        elif progress:
            print(f"scored {hi}/{n} documents", file=sys.stderr, flush=True)
    return host_compute(state), warnings


def score_files(
    key_path: str | os.PathLike[str],
    response_path: str | os.PathLike[str],
    progress: bool | Callable[[int, int], None] = False,
    *,
    max_repeated_mentions: int | None = 10,
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Score a CoNLL-2012 response file against a key file (corpus-level, micro over documents).

    Args:
        key_path: the key (gold) file.
        response_path: the response (system) file.
        progress: print progress to standard error, or a callback ``(done, total)``.
        max_repeated_mentions: refuse a response with more repeated spans than this (the scorer's limit, 10);
            ``None`` for no limit.

    Returns:
        ``(scores, warnings)``: scores as :func:`metametric_jax.tasks.coref.coref_scores` returns them, and messages
        for documents missing on either side and repeated mentions.

    Raises:
        InputFormatError: on a malformed file, or a response with too many repeated mentions.
    """
    keys = read_conll2012(key_path)
    responses = read_conll2012(response_path)
    key_warnings, _ = _repeat_warnings(keys.values(), "key")
    resp_warnings, repeated = _repeat_warnings((responses[d] for d in keys if d in responses), "response")
    if max_repeated_mentions is not None and repeated > max_repeated_mentions:
        raise InputFormatError(
            str(response_path),
            None,
            f"found {repeated} repeated mentions in the response, more than the {max_repeated_mentions} the reference "
            "scorer accepts; expected each span once per document (or pass max_repeated_mentions=None).",
        )
    scores, warnings = score_documents(keys, responses, progress=progress)
    return scores, warnings + key_warnings + resp_warnings
