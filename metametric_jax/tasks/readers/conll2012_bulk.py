"""CoNLL-2012 files read in bulk: one pass over the bytes with NumPy, the same documents as the line-by-line reader.

:func:`parse_bulk` reads a plain file (ASCII white space, no byte order mark, nothing but documents); anything else,
and any error, gives ``None``, and :func:`metametric_jax.tasks.readers.conll2012.parse_conll2012` reads the file line
by line, naming the first bad line. The column's rule is ``conll2012_format``'s.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from metametric_jax.tasks.readers.conll2012_format import (
    _BEGIN,
    _END,
    ConllDocument,
    DocumentId,
    _column_parts,
    _document_id,
)

__all__ = ["parse_bulk"]


#: the characters that ``str.split()`` splits at, in ASCII (as a lookup table of byte values)
_SPACE = np.zeros(256, bool)
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: white space beyond ASCII, which ``str.split()`` also splits at
_WIDE_SPACE = re.compile(r"[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _strings(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[str]:
    """The texts of the byte ranges ``start[i]:end[i]`` of ``data`` (UTF-8; each range followed by a blank byte)."""
    if not start.size:
        return []
    size = end - start + 1  # each range and the blank byte after it, which becomes a newline
    first = np.cumsum(size) - size
    picked = data[np.repeat(start - first, size) + np.arange(int(size.sum()))]
    picked[first + size - 1] = 10
    return picked.tobytes().decode("utf-8").split("\n")[:-1]


def parse_bulk(text: str, path: str) -> dict[DocumentId, ConllDocument] | None:
    """The documents of a CoNLL-2012 file's text read in one pass over its bytes, or ``None`` to read it line by line.

    The lines are cut into fields with NumPy; the begin and end lines, the coreference columns other than ``-`` and
    the words are then read as :func:`parse_conll2012` reads them. Text that is not plain (a byte order mark, white
    space beyond ASCII, a line starting with ``#`` inside a document, a non-blank line outside one) or any error
    gives ``None``: the line-by-line reader reads it, and names the first bad line.
    """
    if text.startswith("\ufeff") or (not text.isascii() and _WIDE_SPACE.search(text)):
        return None
    raw = text.encode("utf-8")
    if not raw.endswith(b"\n"):
        raw += b"\n"
    data = np.frombuffer(raw, np.uint8)
    space = data <= 32
    if ((data < 9) | ((data > 13) & (data < 28))).any():  # a control character that str.split() keeps
        space = _SPACE[data]
    change = np.empty(space.size, bool)
    change[0] = not space[0]
    np.not_equal(space[1:], space[:-1], out=change[1:])
    edges = np.flatnonzero(change)  # alternately a field's start and its end
    starts, ends = edges[0::2], edges[1::2]
    newlines = np.flatnonzero(data == 10)
    before = np.searchsorted(starts, newlines)  # the fields before each line's end
    fields = np.diff(before, prepend=0)  # each line's number of fields
    last = before - 1  # each line's last field (where it has one)
    line_starts = np.concatenate([[0], newlines[:-1] + 1])
    hashed = np.flatnonzero(data[line_starts] == 35)  # lines starting with '#'
    # the begin and end lines, read as parse_conll2012 reads them
    docs: list[tuple[DocumentId, str, int, int]] = []  # (id, spec, begin line, end line), lines 0-based
    seen: set[DocumentId] = set()
    begun: tuple[DocumentId, str, int] | None = None
    for i in hashed.tolist():
        line = raw[line_starts[i] : newlines[i]].decode("utf-8").rstrip("\r\n")
        begin = _BEGIN.match(line)
        if begin:
            if begun is not None:
                return None
            spec = begin.group(1)
            doc_id = _document_id(spec)
            if doc_id in seen:
                return None
            seen.add(doc_id)
            begun = (doc_id, spec, i)
        elif _END.match(line):
            if begun is None:
                return None
            docs.append((*begun, i))
            begun = None
        elif begun is not None:
            return None  # a token line that starts with '#'
    if begun is not None:
        return None
    # the token lines: the non-blank lines inside documents, none outside
    token = fields > 0
    token[hashed] = False
    n_tokens = int(np.count_nonzero(token))
    bounds = np.array([[b, e] for _, _, b, e in docs], np.int64).reshape(-1, 2)
    tokens_before = np.concatenate([[0], np.cumsum(token)])  # token lines before each line
    inside = tokens_before[bounds[:, 1]] - tokens_before[bounds[:, 0]]
    if int(inside.sum()) != n_tokens:
        return None  # a token line outside a document
    token_line = np.flatnonzero(token)
    firsts = [0, *np.cumsum(inside).tolist()]  # each document's first token
    # the words: the fourth of five or more fields
    wordy = fields[token_line] >= 5
    word_field = last[token_line[wordy]] - fields[token_line[wordy]] + 4
    written = _strings(data, starts[word_field], ends[word_field])
    if wordy.all():
        words: list[str | None] = list(written)
    else:
        words = [None] * n_tokens
        for i, word in zip(np.flatnonzero(wordy).tolist(), written):
            words[i] = word
    # the coreference columns other than '-'
    column = last[token_line]
    dash = (ends[column] - starts[column] == 1) & (data[starts[column]] == 45)
    marked = np.flatnonzero(~dash)  # their tokens
    found = _mentions(_strings(data, starts[column[marked]], ends[column[marked]]), marked, firsts)
    if found is None:
        return None
    entities, bare = found
    line_numbers = (token_line + 1).tolist()
    bare_lines = operator.itemgetter(*bare.tolist())(line_numbers) if bare.size > 1 else (token_line[bare] + 1).tolist()
    cut_bare = np.searchsorted(bare, firsts).tolist()
    return {
        doc_id: ConllDocument(
            doc_id=doc_id,
            spec=spec,
            begin_line=b + 1,
            end_line=e + 1,
            entities=entities[k],
            token_lines=tuple(line_numbers[firsts[k] : firsts[k + 1]]),
            words=tuple(words[firsts[k] : firsts[k + 1]]),
            bare_numbers=tuple(bare_lines[cut_bare[k] : cut_bare[k + 1]]),
        )
        for k, (doc_id, spec, b, e) in enumerate(docs)
    }


def _mentions(
    columns: list[str], tokens: np.ndarray, firsts: list[int]
) -> tuple[list[tuple[tuple[tuple[int, int], ...], ...]], np.ndarray] | None:
    """Each document's entities from its coreference columns other than ``-``, and the tokens with bare numbers.

    Args:
        columns: the columns, in file order.
        tokens: the token of each column, counted over the whole file.
        firsts: each document's first token, then the number of tokens.

    Returns:
        ``(entities, bare)``: per document, the entities as :class:`ConllDocument` holds them; and the tokens whose
        column holds a bare entity number. ``None`` where a column cannot be read, a closing has no opening or a
        mention is left open (the line-by-line reader says where).

    Each distinct column is read once (:func:`_column_parts`) into events, one-token mentions, then openings, then
    closings, as :class:`_Builder` takes them; the rest is array work. An entity is a document and an entity number,
    numbered in the order of their first events; an opening at depth ``d`` (after it) of its entity is closed by the
    next closing of that entity at depth ``d`` (before it), so sorting openings and closings by entity, depth and
    position puts each opening just before its closing.
    """
    n_docs = len(firsts) - 1
    codes = {c: i for i, c in enumerate(dict.fromkeys(columns))}
    code = np.array(list(map(codes.__getitem__, columns)), np.int64)
    idents: dict[str, int] = {}
    kinds: list[list[int]] = []
    names: list[list[int]] = []
    has_bare = np.zeros(len(codes), bool)
    for c, i in codes.items():
        parts = _column_parts(c)
        if parts is None:
            return None
        singles, opens, closes, has_bare[i] = parts
        kinds.append([0] * len(singles) + [1] * len(opens) + [2] * len(closes))
        names.append([idents.setdefault(x, len(idents)) for x in (*singles, *opens, *closes)])
    width = max(map(len, kinds), default=0)
    kind_of = np.full((len(codes), width), -1, np.int64)
    name_of = np.zeros((len(codes), width), np.int64)
    for i, (k, n) in enumerate(zip(kinds, names)):
        kind_of[i, : len(k)], name_of[i, : len(n)] = k, n
    per_column = (kind_of >= 0).sum(axis=1)[code]
    column_of = np.repeat(np.arange(code.size), per_column)  # each event's column
    slot = np.arange(column_of.size) - np.repeat(np.cumsum(per_column) - per_column, per_column)
    kind, name = kind_of[code[column_of], slot], name_of[code[column_of], slot]
    token = tokens[column_of]
    doc = np.searchsorted(np.asarray(firsts), token, side="right") - 1
    local = token - np.asarray(firsts)[doc]
    # entities, numbered by their first events (documents in file order)
    _, first_event, entity = np.unique(doc * max(1, len(idents)) + name, return_index=True, return_inverse=True)
    rank = np.empty_like(first_event)
    rank[np.argsort(first_event)] = np.arange(first_event.size)
    entity = rank[entity.reshape(-1)]
    # openings matched with closings
    brackets = np.flatnonzero(kind > 0)
    step = np.where(kind[brackets] == 1, 1, -1)
    order = np.argsort(entity[brackets], kind="stable")
    brackets, step = brackets[order], step[order]
    ent = entity[brackets]
    depth = np.cumsum(step)
    group_start = np.flatnonzero(np.diff(ent, prepend=-1))
    base = np.repeat(depth[group_start] - step[group_start], np.diff(np.append(group_start, ent.size)))
    depth -= base  # each entity's depth after each event
    if (depth < 0).any() or (ent.size and (depth[np.append(group_start[1:], ent.size) - 1] != 0).any()):
        return None
    level = np.where(step > 0, depth, depth + 1)
    paired = brackets[np.lexsort((brackets, level, ent))].reshape(-1, 2)  # (opening, closing) events
    alone = np.flatnonzero(kind == 0)  # one-token mentions
    done = np.concatenate([alone, paired[:, 1]])  # the event that completes each mention
    begin = np.concatenate([local[alone], local[paired[:, 0]]])
    owner = entity[done]
    order = np.lexsort((done, owner))
    spans = list(zip(begin[order].tolist(), local[done[order]].tolist()))
    sizes = np.bincount(owner, minlength=first_event.size)
    cuts = np.cumsum(sizes).tolist()
    clusters = [tuple(spans[a:b]) for a, b in zip([0, *cuts[:-1]], cuts)]
    ent_doc = doc[np.sort(first_event)]  # each entity's document, entities in order
    doc_cuts = np.searchsorted(ent_doc, np.arange(n_docs + 1)).tolist()
    entities = [tuple(clusters[a:b]) for a, b in zip(doc_cuts, doc_cuts[1:])]
    return entities, tokens[has_bare[code]] if code.size else np.zeros(0, np.int64)
