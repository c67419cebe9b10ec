r"""Documents of information extraction in JSON Lines: entities, relations and events (:mod:`metametric_jax.tasks.ie`).

A :class:`Document` holds typed entity mentions (:class:`~metametric_jax.tasks.tagging.Span`, ``end`` exclusive),
:class:`Relation` objects between two mentions and :class:`Event` objects (a typed trigger with its
:class:`Argument` objects). :func:`read_documents` reads them from a file, :func:`pair_documents` checks that two
files list the same documents in the same order.

One JSON object per line, one line per document; blank lines are skipped, a UTF-8 byte-order mark and CRLF line
endings are accepted::

    {"id": "doc-1",
     "entities": [{"start": 0, "end": 2, "type": "PER", "id": "e0"}, {"start": 5, "end": 6, "type": "ORG"}],
     "relations": [{"type": "Work-For", "head": "e0", "tail": 1}],
     "events": [{"type": "Attack", "trigger": {"start": 3, "end": 4},
                 "arguments": [{"entity": 0, "role": "Attacker"}]}]}

* ``id`` (optional, string or integer): the document's name; the files must list the same documents in the same
  order, and where both give ids they must be equal;
* ``entities`` (optional, default empty): ``start`` (integer ≥ 0), ``end`` (integer > ``start``, exclusive),
  ``type`` (string), ``id`` (optional string, unique in the document);
* ``relations`` (optional): ``type`` (string), ``head`` and ``tail``: an entity, given as its 0-based index in
  ``entities`` or its ``id``;
* ``events`` (optional): ``type`` (string), ``trigger``: ``{"start", "end"}``, ``arguments`` (optional): each
  ``{"entity": index or id, "role": string}``.

``tokens`` (optional, a list): where given, every offset lies within them (``end <= len(tokens)``); a prediction
and its reference that both give them give as many, and where only one of the two gives them, the other's offsets
lie within them too (:func:`pair_documents`).

Other keys (``text``, ``sentences``, ``doc_key``, ...) are ignored, with two exceptions for a key close to one of
the above (:func:`difflib.get_close_matches`, cutoff 0.7, letter case ignored; the keys of each object: the document
``id``, ``tokens``, ``entities``, ``relations``, ``events``; an entity ``start``, ``end``, ``type``, ``id``; a
relation ``type``, ``head``, ``tail``; an event ``type``, ``trigger``, ``arguments``; a trigger ``start``, ``end``;
an argument ``entity``, ``role``):

* an error where the key it resembles is missing and would be scored or is required (``relation`` without
  ``relations``, ``event``, ``argument``, ``Type`` without ``type``): read as an unknown key, it would drop that part
  unseen;
* a warning otherwise (``relation`` beside ``relations``, ``tokns`` without ``tokens``, ``ID`` without an entity's
  ``id``), naming the file, the first line where such an object holds that key, the key and the key it resembles,
  once per file, kind of object and key (:attr:`Documents.warnings`; :func:`~metametric_jax.tasks.ie.score_files`
  reports it).

Anything else is an :class:`~metametric_jax.errors.InputFormatError` naming the file, the line, what was expected and
what was found.

Example:
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
    >>> doc = {"id": "d", "entities": [{"start": 0, "end": 2, "type": "PER"}, {"start": 5, "end": 6, "type": "ORG"}],
    ...        "relations": [{"type": "Work-For", "head": 0, "tail": 1}]}
    >>> _ = open(path, "w").write(json.dumps(doc) + "\n")
    >>> [(line, d)] = read_documents(path)
    >>> line, d.relations[0]
    (1, Relation(type='Work-For', head=Span(start=0, end=2, label='PER'), tail=Span(start=5, end=6, label='ORG')))
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
from typing import Any

from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.readers.jsonl import describe, read_jsonl, require
from metametric_jax.tasks.tagging import Span

__all__ = ["Argument", "Event", "Relation", "Document", "Documents", "read_documents", "pair_documents"]


def _check_span(value: Any, what: str) -> None:
    if not isinstance(value, Span):
        raise TypeError(f"{what} must be a Span(start, end, label); found {type(value).__name__} {value!r}.")


def _as_tuple(obj: Any, name: str, kind: type) -> None:
    items = getattr(obj, name)
    if not isinstance(items, tuple):
        items = tuple(items)
        object.__setattr__(obj, name, items)
    for item in items:
        if not isinstance(item, kind):
            raise TypeError(f"{type(obj).__name__}.{name} items must be {kind.__name__} objects; found {item!r}.")


@dataclasses.dataclass(frozen=True)
class Relation:
    """A typed, directed binary relation between two entity mentions.

    Attributes:
        type: the relation type.
        head: the first (subject) argument; its label is the entity type.
        tail: the second (object) argument.
    """

    type: str
    head: Span
    tail: Span

    def __post_init__(self) -> None:
        _check_span(self.head, "Relation.head")
        _check_span(self.tail, "Relation.tail")


@dataclasses.dataclass(frozen=True)
class Argument:
    """A participant of an event.

    Attributes:
        span: the argument's mention (its label, the entity type, is not compared by the event figures).
        role: the argument's role in the event.
    """

    span: Span
    role: str

    def __post_init__(self) -> None:
        _check_span(self.span, "Argument.span")


@dataclasses.dataclass(frozen=True)
class Event:
    """An event: its trigger, whose label is the event type, and its arguments.

    Attributes:
        trigger: the trigger span, labelled with the event type.
        arguments: the arguments (a list is stored as a tuple).
    """

    trigger: Span
    arguments: tuple[Argument, ...] = ()

    def __post_init__(self) -> None:
        _check_span(self.trigger, "Event.trigger")
        _as_tuple(self, "arguments", Argument)


@dataclasses.dataclass(frozen=True)
class Document:
    """The information extracted from one document (or sentence): entity mentions, relations and events.

    Attributes:
        entities: the entity mentions.
        relations: the relations.
        events: the events.
        id: the document's name (not compared).
    """

    entities: tuple[Span, ...] = ()
    relations: tuple[Relation, ...] = ()
    events: tuple[Event, ...] = ()
    id: str | int | None = None

    def __post_init__(self) -> None:
        _as_tuple(self, "entities", Span)
        _as_tuple(self, "relations", Relation)
        _as_tuple(self, "events", Event)


# --------------------------------------------------------------------------------------------------------- reading
def _entity_ref(value: Any, entities: list[Span], ids: dict[str, int], path: str, line: int, where: str) -> Span:
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < len(entities):
            return entities[value]
        raise InputFormatError(
            path, line, f"{where}: expected an entity index 0..{len(entities) - 1}, found {value} (out of range)"
        )
    if isinstance(value, str):
        if value in ids:
            return entities[ids[value]]
        known = ", ".join(repr(k) for k in ids) or "none"
        raise InputFormatError(path, line, f"{where}: expected the id of an entity (ids: {known}), found {value!r}")
    raise InputFormatError(path, line, f"{where}: expected an entity index or id, found {describe(value)}")


def _offsets(obj: dict[str, Any], path: str, line: int, where: str) -> tuple[int, int]:
    start = require(obj, "start", int, path, line, where)
    end = require(obj, "end", int, path, line, where)
    if start < 0 or end <= start:
        raise InputFormatError(
            path, line, f"{where}: expected 0 <= start < end (end is exclusive), found start {start}, end {end}"
        )
    return start, end


def _items(doc: dict[str, Any], key: str, path: str, line: int) -> list[Any]:
    if key not in doc:
        return []
    items = require(doc, key, list, path, line, "the document")
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputFormatError(path, line, f"{key}[{k}]: expected a JSON object, found {describe(item)}")
    return items


#: The keys of each object of a document: ``(known keys, keys whose near-miss is an error while they are absent)``.
#: A key missing there would drop a scored part unseen (``entities``, ``relations``, ``events``, ``arguments``) or is
#: required; a near-miss of another key (``id``, ``tokens``), or of a key that is given too, is a warning.
_KEYS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "document": (("id", "tokens", "entities", "relations", "events"), frozenset({"entities", "relations", "events"})),
    "entity": (("start", "end", "type", "id"), frozenset({"start", "end", "type"})),
    "relation": (("type", "head", "tail"), frozenset({"type", "head", "tail"})),
    "event": (("type", "trigger", "arguments"), frozenset({"type", "trigger", "arguments"})),
    "trigger": (("start", "end"), frozenset({"start", "end"})),
    "argument": (("entity", "role"), frozenset({"entity", "role"})),
}


#: Keys of the common layouts that this reader ignores and that resemble none of its keys by intent (OneIE's
#: ``token_lens`` is close to ``tokens``): never reported.
_FOREIGN = frozenset(
    {"token_lens", "pieces", "sentence", "sentences", "sentence_starts", "doc_id", "wnd_id", "doc_key"}
)


@functools.lru_cache(maxsize=4096)
def _resembles(key: str, kind: str) -> str | None:
    """The known key of a ``kind`` of object that ``key`` (not one of them) is close to, if any."""
    if key in _FOREIGN:
        return None
    known = _KEYS[kind][0]
    close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.7)
    return close[0] if close else None


class _Reading:
    """What one file's reading reports besides errors: its warnings, each (kind of object, key) once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.warnings: list[str] = []
        self._seen: set[tuple[str, str]] = set()

    def check_keys(self, obj: dict[str, Any], kind: str, line: int, where: str) -> None:
        """Refuse (error) or report (warning) the keys of ``obj`` close to one of its kind's known keys."""
        known, needed = _KEYS[kind]
        for key in obj:
            if key in known or not isinstance(key, str):
                continue
            close = _resembles(key, kind)
            if close is None:
                continue
            if close not in obj and close in needed:
                raise InputFormatError(
                    self.path, line, f"{where}: expected the key {close!r}, found {key!r} (other keys are ignored)"
                )
            if (kind, key) not in self._seen:
                self._seen.add((kind, key))
                given = "given too" if close in obj else "absent"
                self.warnings.append(
                    f"{self.path}:{line}: {where}: ignored the key {key!r}, close to the key {close!r} ({given}); "
                    "later lines with it are not named"
                )


def _tokens(doc: dict[str, Any], path: str, line: int) -> int | None:
    """The number of the document's ``tokens``, if it gives them."""
    if "tokens" not in doc:
        return None
    return len(require(doc, "tokens", list, path, line, "the document"))


def _within(end: int, tokens: int | None, path: str, line: int, where: str, whose: str = "") -> None:
    if tokens is not None and end > tokens:
        whose = whose or "the document's tokens"
        raise InputFormatError(path, line, f"{where}: expected end <= {tokens} ({whose}), found end {end}")


def _document(doc: dict[str, Any], path: str, line: int, reading: _Reading) -> Document:
    reading.check_keys(doc, "document", line, "the document")
    tokens = _tokens(doc, path, line)
    doc_id = doc.get("id")
    if doc_id is not None and (not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool)):
        raise InputFormatError(path, line, f"expected 'id' to be a string or an integer, found {describe(doc_id)}")
    entities: list[Span] = []
    ids: dict[str, int] = {}
    for k, e in enumerate(_items(doc, "entities", path, line)):
        where = f"entities[{k}]"
        reading.check_keys(e, "entity", line, where)
        start, end = _offsets(e, path, line, where)
        _within(end, tokens, path, line, where)
        entities.append(Span(start, end, require(e, "type", str, path, line, where)))
        if "id" in e:
            eid = require(e, "id", str, path, line, where)
            if eid in ids:
                raise InputFormatError(path, line, f"{where}: expected a new entity id, found {eid!r} again")
            ids[eid] = k
    relations = []
    for k, r in enumerate(_items(doc, "relations", path, line)):
        where = f"relations[{k}]"
        reading.check_keys(r, "relation", line, where)
        rtype = require(r, "type", str, path, line, where)
        heads = [_entity_ref(require(r, h, (int, str), path, line, where), entities, ids, path, line, f"{where}.{h}")
                 for h in ("head", "tail")]  # fmt: skip
        relations.append(Relation(rtype, *heads))
    events = []
    for k, e in enumerate(_items(doc, "events", path, line)):
        where = f"events[{k}]"
        reading.check_keys(e, "event", line, where)
        etype = require(e, "type", str, path, line, where)
        trigger = require(e, "trigger", dict, path, line, where)
        reading.check_keys(trigger, "trigger", line, f"{where}.trigger")
        start, end = _offsets(trigger, path, line, f"{where}.trigger")
        _within(end, tokens, path, line, f"{where}.trigger")
        args = []
        for j, a in enumerate(_items(e, "arguments", path, line)):
            at = f"{where}.arguments[{j}]"
            reading.check_keys(a, "argument", line, at)
            span = _entity_ref(require(a, "entity", (int, str), path, line, at), entities, ids, path, line, at)
            args.append(Argument(span, require(a, "role", str, path, line, at)))
        events.append(Event(Span(start, end, etype), tuple(args)))
    return Document(tuple(entities), tuple(relations), tuple(events), doc_id)


class Documents(list):  # type: ignore[type-arg]
    """:func:`read_documents`' ``(line, document)`` pairs, with what the file says besides.

    Attributes:
        tokens: each document's number of ``tokens`` (None: not given).
        warnings: the file's ignored keys that resemble a known one (see the module docstring), one line each.
    """

    tokens: list[int | None]
    warnings: list[str]


def read_documents(path: str | os.PathLike[str]) -> Documents:
    """The documents of a JSON Lines file (schema in the module docstring), each with its line number.

    Returns:
        A list of ``(line, document)`` (a :class:`Documents`, whose ``tokens`` and ``warnings`` tell the rest).

    Raises:
        InputFormatError: bad JSON, a missing key (or one spelt close to it), a value of the wrong type, an unknown
            entity reference, offsets out of order or past the document's tokens, or a repeated document id (file,
            line, what was expected, what was found).
    """
    name = os.fspath(path)
    out = Documents()
    out.tokens = []
    reading = _Reading(name)
    seen: dict[str | int, int] = {}
    for line, obj in read_jsonl(name):
        document = _document(obj, name, line, reading)
        out.tokens.append(_tokens(obj, name, line))
        if document.id is not None:
            if document.id in seen:
                raise InputFormatError(
                    name, line, f"expected a new document id, found {document.id!r} again (line {seen[document.id]})"
                )
            seen[document.id] = line
        out.append((line, document))
    out.warnings = reading.warnings
    return out


def _offsets_within(document: Document, tokens: int, path: str, line: int, whose: str) -> None:
    """Every offset of ``document`` (read from ``path`` line ``line``) within the ``tokens`` of the other file."""
    for k, span in enumerate(document.entities):
        _within(span.end, tokens, path, line, f"entities[{k}]", whose)
    for k, event in enumerate(document.events):
        _within(event.trigger.end, tokens, path, line, f"events[{k}].trigger", whose)


def pair_documents(
    predictions: list[tuple[int, Document]], references: list[tuple[int, Document]], pred_path: str, ref_path: str
) -> None:
    """Check that two files list the same documents in the same order (by count and, where given, by id).

    Where both lists are :func:`read_documents`' (:class:`Documents`), a document's ``tokens`` count too: a
    prediction and its reference that both give them give as many, and where one of the two gives them, the other's
    offsets lie within them.

    Raises:
        InputFormatError: on the first document where they differ, naming the prediction file and line (the
            reference's where its offsets pass the prediction's tokens).
    """
    ref_lines = {d.id: line for line, d in references if d.id is not None}
    for (pline, p), (rline, r) in zip(predictions, references):
        if p.id == r.id:
            continue
        if p.id is None or r.id is None:
            raise InputFormatError(
                pred_path,
                pline,
                f"expected the document id {r.id!r} ({ref_path} line {rline}), found {p.id!r}; give ids in both "
                "files or in neither",
            )
        where = f"; it is on line {ref_lines[p.id]} of {ref_path}" if p.id in ref_lines else f", not in {ref_path}"
        raise InputFormatError(
            pred_path,
            pline,
            f"expected the document id {r.id!r} ({ref_path} line {rline}), found {p.id!r}{where} (documents must "
            "come in the same order in both files)",
        )
    counts = zip(getattr(predictions, "tokens", ()), getattr(references, "tokens", ()), predictions, references)
    for pred_tokens, ref_tokens, (pline, p), (rline, r) in counts:
        if pred_tokens is not None and ref_tokens is not None and pred_tokens != ref_tokens:
            raise InputFormatError(
                pred_path,
                pline,
                f"expected {ref_tokens} tokens (as {ref_path} line {rline}), found {pred_tokens}: the offsets of "
                "both files count the same tokens",
            )
        if ref_tokens is not None and pred_tokens is None:
            _offsets_within(p, ref_tokens, pred_path, pline, f"the tokens of {ref_path} line {rline}")
        elif pred_tokens is not None and ref_tokens is None:
            _offsets_within(r, pred_tokens, ref_path, rline, f"the tokens of {pred_path} line {pline}")
    if len(predictions) != len(references):
        line = predictions[len(references)][0] if len(predictions) > len(references) else None
        raise InputFormatError(
            pred_path,
            line,
            f"expected {len(references)} documents (as in {ref_path}), found {len(predictions)}",
        )
