r"""CoNLL-2012 coreference files: documents, their mentions as the reference scorer v8.01 reads them, and alignment.

A file holds documents between ``#begin document (name); part NNN`` and ``#end document``; each non-blank line is a
token (blank lines separate sentences; token indices run over the whole document) and its *last* column is the
coreference column: ``-`` or ``_`` for none, else parts such as ``(12`` (a mention of entity 12 starts), ``12)`` (it
ends) and ``(12)`` (a one-token mention), joined with ``|`` or written one after the other (``(3|(12)``, ``(1(3``).
The full column format (word in the fourth column) and the scorer's two-column test files (document name,
coreference column) are both read; columns are separated by tabs or spaces.

The coreference column is read by the scorer's rule: double antecedents ``(12+3)`` are dropped, then every one-token
mention ``(N)``, then every opening ``(N``, then every closing ``N)`` is taken out of the column, in that order and
each time the leftmost first; a closing ends the most recent open mention of its entity; entities are numbered by
their first appearance in that order, and entity numbers are compared as written (``(01)`` and ``(1)`` are two
entities). What remains of the column must be separators (``|``, ``-``, ``_``) or bare entity numbers: the scorer
ignores a number that neither opens nor closes a mention (``322)|249`` closes a mention of entity 322; ``249`` is
ignored), and so does this reader, with a warning. Any other leftover text is an error.

Where the scorer would read a malformed or mismatched file without a word, this reader raises
:class:`~metametric_jax.errors.InputFormatError` with the file and line: text that is not UTF-8, a token outside a
document, a document begun twice or not ended (the scorer scores a file cut short as it stands), a closing without
opening, a mention left open, the same document twice in a file, and (in :func:`pair_documents`) key and response
documents with different tokens. A UTF-8 byte order mark and CRLF line endings are accepted.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.conll2012_bulk import parse_bulk
from metametric_jax.tasks.readers.conll2012_format import (
    _BEGIN,
    _END,
    _EXPECTED_COLUMN,
    _NO_MENTION,
    ConllDocument,
    DocumentId,
    _column_parts,
    _document_id,
    format_id,
    parse_column,
)
from metametric_jax.tasks.readers.text import decode_text, read_text, read_utf8, split_lines

__all__ = [
    "DocumentId",
    "ConllDocument",
    "parse_conll2012",
    "read_conll2012",
    "document_offsets",
    "count_documents",
    "read_conll2012_part",
    "pair_documents",
    "bare_number_warnings",
    "format_id",
    "parse_column",
]


class _Builder:
    """Collects the mentions of one document while its lines are read."""

    def __init__(self, doc_id: DocumentId, spec: str, line_no: int) -> None:
        self.doc_id, self.spec, self.begin_line = doc_id, spec, line_no
        self.order: dict[str, int] = {}
        self.entities: list[list[tuple[int, int]]] = []
        self.open: dict[str, list[tuple[int, int]]] = {}
        self.token_lines: list[int] = []
        self.words: list[str | None] = []
        self.bare: list[int] = []

    def _entity(self, ident: str) -> list[tuple[int, int]]:
        if ident not in self.order:
            self.order[ident] = len(self.entities)
            self.entities.append([])
        return self.entities[self.order[ident]]

    def token(self, columns: list[str], path: str, line_no: int) -> None:
        column = columns[-1]
        parts = _column_parts(column)
        if parts is None:
            raise InputFormatError(path, line_no, f"expected {_EXPECTED_COLUMN} as the last column; found {column!r}")
        singles, opens, closes, bare = parts
        if bare:
            self.bare.append(line_no)
        t = len(self.token_lines)
        for ident in singles:
            self._entity(ident).append((t, t))
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
                    f"found '{ident})' closing a mention of entity {ident} in document {format_id(self.doc_id)}, but "
                    f"no mention of entity {ident} is open; expected a matching '({ident}' on this or an earlier line",
                )
            entity.append((stack.pop()[0], t))
        self.token_lines.append(line_no)
        self.words.append(columns[3] if len(columns) >= 5 else None)

    def finish(self, path: str, line_no: int) -> ConllDocument:
        unclosed = [(ln, ident) for ident, stack in self.open.items() for _, ln in stack]
        if unclosed:
            ln, ident = min(unclosed)
            raise InputFormatError(
                path,
                line_no,
                f"document {format_id(self.doc_id)} ends with {len(unclosed)} unclosed mention(s); the mention of "
                f"entity {ident} opened on line {ln} needs a closing '{ident})' before '#end document'",
            )
        return ConllDocument(
            doc_id=self.doc_id,
            spec=self.spec,
            begin_line=self.begin_line,
            end_line=line_no,
            entities=tuple(tuple(ms) for ms in self.entities if ms),
            token_lines=tuple(self.token_lines),
            words=tuple(self.words),
            bare_numbers=tuple(self.bare),
        )


def parse_conll2012(lines: Iterable[str], path: str = "<string>") -> dict[DocumentId, ConllDocument]:
    """The documents of a CoNLL-2012 file's lines, by ``(name, part)``, in file order.

    Args:
        lines: the file's lines (with or without line endings; a byte order mark on the first is dropped).
        path: the file name used in error messages.

    Raises:
        InputFormatError: on a token outside a document, a document begun twice or not ended, the same document twice,
            a coreference column that cannot be read, a closing without opening or a mention left open.

    >>> docs = parse_conll2012(["#begin document (d); part 000", "d 0 0 Mary (1)", "d 0 1 she (1)", "#end document"])
    >>> doc = docs[("d", 0)]
    >>> doc.entities, doc.words
    ((((0, 0), (1, 1)),), ('Mary', 'she'))
    """
    docs: dict[DocumentId, ConllDocument] = {}
    current: _Builder | None = None
    line_no = 0
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if line_no == 1:
            line = line.removeprefix("\ufeff")
        begin = _BEGIN.match(line) if line[:1] == "#" else None  # both document lines start with '#'
        if begin:
            if current is not None:
                raise InputFormatError(
                    path,
                    line_no,
                    f"expected '#end document' for document {format_id(current.doc_id)} (begun on line "
                    f"{current.begin_line}) before a new '#begin document'",
                )
            spec = begin.group(1)
            doc_id = _document_id(spec)
            if doc_id in docs:
                raise InputFormatError(
                    path,
                    line_no,
                    f"document {format_id(doc_id)} occurs twice (first on line {docs[doc_id].begin_line}); expected "
                    "each (name, part) once",
                )
            current = _Builder(doc_id, spec, line_no)
            continue
        if line[:1] == "#" and _END.match(line):
            if current is None:
                raise InputFormatError(
                    path, line_no, "found '#end document' outside a document; expected '#begin document' first"
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
                "first",
            )
        if columns[-1] in _NO_MENTION:  # most tokens: what token() would record, without parsing
            current.token_lines.append(line_no)
            current.words.append(columns[3] if len(columns) >= 5 else None)
        else:
            current.token(columns, path, line_no)
    if current is not None:
        raise InputFormatError(
            path,
            line_no,
            f"the file ends inside document {format_id(current.doc_id)} (begun on line {current.begin_line}); "
            "expected '#end document' (is the file cut short?)",
        )
    return docs


#: texts shorter than this are read line by line: below it the bulk reading's fixed cost (about 0.4 ms) is more
#: than it saves
_BULK_FROM = 1 << 15


def _parse_text(text: str, path: str) -> dict[DocumentId, ConllDocument]:
    """The documents of a CoNLL-2012 file's text: read in bulk where it is long and plain, else line by line."""
    docs = parse_bulk(text, path) if len(text) >= _BULK_FROM else None
    return parse_conll2012(split_lines(text), path) if docs is None else docs


def read_conll2012(path: str | os.PathLike[str]) -> dict[DocumentId, ConllDocument]:
    """The documents of a CoNLL-2012 file, by ``(name, part)``, in file order (see :func:`parse_conll2012`)."""
    p = Path(path)
    return _parse_text(read_text(p), str(p))


#: what comes before ``begin document`` on a begin line: ``#`` and blanks
_BEGIN_PREFIX = re.compile(rb"#[ \t\f\v]*")
_BEGIN_WORDS = b"begin document"


def _begin_lines(data: bytes) -> list[int]:
    """The byte offset of each line that starts with ``#``, blanks (no newline) and ``begin document``, in order.

    The words are searched for (a C scan of the bytes), then the line's start checked: about ten times quicker than a
    multi-line regular expression over a large file, and the same offsets.
    """
    out = []
    at = data.find(_BEGIN_WORDS)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        if _BEGIN_PREFIX.fullmatch(data, start, at):
            out.append(start)
        at = data.find(_BEGIN_WORDS, at + len(_BEGIN_WORDS))
    return out


def count_documents(path: str | os.PathLike[str]) -> int:
    """The number of begin lines of a CoNLL-2012 file (a progress bar's total; the file is not checked).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as handle:
        return len(_begin_lines(handle.read()))


def document_offsets(path: str | os.PathLike[str]) -> tuple[list[int], list[int], list[DocumentId]] | None:
    """Where each document of a CoNLL-2012 file begins: its byte offset, its line and its identifier, in file order.

    The offsets end with the file's size (one more than the documents), so that document ``i`` is the byte range
    ``offsets[i]:offsets[i + 1]`` (text before the first begin line belongs to the first range). ``None`` where a begin
    line does not name a document; the whole file's reader then says why.

    Raises:
        InputFormatError: on a byte that is not UTF-8.
        OSError: the file cannot be read.
    """
    data = read_utf8(path)
    starts = _begin_lines(data)
    ids: list[DocumentId] = []
    for a in starts:
        end = data.find(b"\n", a)
        match = _BEGIN.match(data[a : len(data) if end < 0 else end].decode("utf-8").rstrip("\r"))
        if match is None:
            return None
        ids.append(_document_id(match.group(1)))
    offsets = [0, *starts[1:], len(data)] if starts else [0, len(data)]
    lines = [1]
    for a, b in itertools.pairwise(offsets[:-1]):  # each range's newlines counted once: linear in the file's size
        lines.append(lines[-1] + data.count(b"\n", a, b))
    return offsets, lines, ids


def read_conll2012_part(
    path: str | os.PathLike[str], first_line: int, start: int, end: int
) -> dict[DocumentId, ConllDocument]:
    """The documents in bytes ``start:end`` of a CoNLL-2012 file that begin on line ``first_line``, numbered as in it.

    The ranges of :func:`document_offsets` hold whole documents, so that reading each range gives the documents and
    line numbers (in messages and warnings) that :func:`read_conll2012` gives for the whole file.
    """
    with open(path, "rb") as handle:
        handle.seek(start)
        text = decode_text(handle.read(end - start), path)
    shift = first_line - 1
    return {
        doc_id: dataclasses.replace(
            doc,
            begin_line=doc.begin_line + shift,
            end_line=doc.end_line + shift,
            token_lines=tuple(line + shift for line in doc.token_lines),
            bare_numbers=tuple(line + shift for line in doc.bare_numbers),
        )
        for doc_id, doc in _parse_text(text, str(path)).items()
    }


def _divergence(key: ConllDocument, response: ConllDocument) -> int | None:
    """The index of the first token where two documents differ in their words or number of tokens (or ``None``)."""
    if key.words == response.words:
        return None
    for i, (a, b) in enumerate(zip(key.words, response.words)):
        if a is not None and b is not None and a != b:
            return i
    if key.n_tokens != response.n_tokens:
        return min(key.n_tokens, response.n_tokens)
    return None


def _token_at(doc: ConllDocument, i: int) -> str:
    if i >= doc.n_tokens:
        return f"line {doc.end_line} ('#end document', after its {doc.n_tokens} tokens)"
    word = doc.words[i]
    return f"line {doc.token_lines[i]} (token {i + 1}" + (f", {word!r})" if word is not None else ")")


def pair_documents(
    *,
    predictions: Mapping[DocumentId, ConllDocument],
    references: Mapping[DocumentId, ConllDocument],
    prediction_path: str,
    reference_path: str,
    check_words: bool = False,
    bare_numbers: bool = True,
) -> tuple[list[tuple[ConllDocument | None, ConllDocument]], list[str]]:
    """Pair response and key documents by ``(name, part)`` and check that each pair holds the same tokens.

    Every key document is paired: with its response, or with ``None`` when the response lacks it (the scorer scores it
    against an empty response). Response documents without a key document are left out. Both cases, and documents
    whose begin lines are spelled differently (``part 0`` and ``part 000``: the scorer matches the text and would score
    the key document against an empty response), are reported as warnings.

    Args:
        predictions: the response file's documents.
        references: the key file's documents.
        prediction_path: the response file's name, for messages.
        reference_path: the key file's name, for messages.
        check_words: refuse documents with as many tokens but other words (the fourth of five or more columns)
            instead of warning; the words of documents with different numbers of tokens locate where they diverge.
        bare_numbers: end with the warnings of :func:`bare_number_warnings` (False: left to the caller, who reads
            the files in chunks).

    Returns:
        ``(pairs, warnings)``: ``(response or None, key)`` in key order, and one message per finding.

    Raises:
        InputFormatError: on the response file, when a pair differs in its number of tokens (or, with
            ``check_words``, in a word), naming the document, both files and the first lines where they diverge.
    """
    keys, responses, key_path, response_path = references, predictions, reference_path, prediction_path
    pairs: list[tuple[ConllDocument | None, ConllDocument]] = []
    warnings: list[str] = []
    for doc_id, key in keys.items():
        response = responses.get(doc_id)
        if response is None:
            warnings.append(
                f"document {format_id(doc_id)} is in the key but not in the response; scored against an empty response"
            )
        else:
            at = _divergence(key, response)
            if at is not None and response.n_tokens == key.n_tokens and not check_words:
                warnings.append(
                    f"document {format_id(doc_id)}: {response_path} has other words than {key_path}, first at "
                    f"{_token_at(response, at)} and {_token_at(key, at)}; scored token by token"
                )
            elif at is not None:
                line = response.token_lines[at] if at < response.n_tokens else response.end_line
                counts = (
                    f"has {response.n_tokens} tokens here and {key.n_tokens} in {key_path}"
                    if response.n_tokens != key.n_tokens
                    else f"has other words here than in {key_path}"
                )
                raise InputFormatError(
                    response_path,
                    line,
                    f"document {format_id(doc_id)} {counts}; the files diverge at {_token_at(response, at)} here and "
                    f"{_token_at(key, at)} of {key_path}; expected the key's tokens, line for line",
                )
            if response.spec != key.spec:
                warnings.append(
                    f"document {format_id(doc_id)} is begun as {key.spec!r} in the key and {response.spec!r} in the "
                    "response; matched by name and part number (the reference scorer matches the text exactly and "
                    "would score this key document against an empty response)"
                )
        pairs.append((response, key))
    for doc_id in responses:
        if doc_id not in keys:
            warnings.append(f"document {format_id(doc_id)} is in the response but not in the key; ignored")
    if bare_numbers:
        warnings += bare_number_warnings(
            [
                (key_path, [ln for doc in keys.values() for ln in doc.bare_numbers]),
                (response_path, [ln for d in keys if d in responses for ln in responses[d].bare_numbers]),
            ]
        )
    return pairs, warnings


def bare_number_warnings(sides: Iterable[tuple[str, list[int]]]) -> list[str]:
    """One warning per file whose coreference columns hold entity numbers outside any mention.

    Args:
        sides: ``(path, lines)``: the lines of a file's bare entity numbers, in file order (the key file's, then the
            response file's documents that have a key).
    """
    return [
        f"{path}: {len(lines)} coreference column(s) hold an entity number outside any mention (first on line "
        f"{lines[0]}); ignored, as the reference scorer ignores them"
        for path, lines in sides
        if lines
    ]
