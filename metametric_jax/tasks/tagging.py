r"""Tag schemes and chunking, on the host (NumPy) and on the device (``jax.numpy``) side by side.

A tag is ``O`` or ``<prefix>-<type>`` (``B-PER``); a bare prefix (``B``) has the type ``_``, as in seqeval. A tag
sequence is decoded into typed chunks (spans). Chunking follows ``conlleval`` (the CoNLL-2000 script of Tjong Kim
Sang) and seqeval's default mode: ill-formed sequences are repaired, never rejected. Between the previous tag
:math:`(p', t')` and the current tag :math:`(p, t)` (prefix, type; ``O`` before the first token and after the
last),

.. math::

    \mathrm{start} &= p \in \{B, S\} \;\lor\; (p' \in \{E, S, O\} \land p \in \{I, E\})
        \;\lor\; (p \ne O \land t' \ne t) \\
    \mathrm{end\ before} &= p' \in \{E, S\} \;\lor\; (p' \in \{B, I\} \land p \in \{B, S, O\})
        \;\lor\; (p' \ne O \land t' \ne t)

so an ``I-`` after ``O`` or after another type starts a chunk. :func:`chunk_boundaries` is this rule, written once
and evaluated on NumPy arrays by the host decoder (:func:`decode_tags`, a whole batch concatenated) and on
``jax.numpy`` arrays by the device decoder (:func:`span_records`, padded rows inside ``jax.jit``). The schemes only
differ in the prefixes they allow:

=========  ======================  =====================================================================
scheme     prefixes (besides O)    notes
=========  ======================  =====================================================================
IOB1       B, I                    chunks start with I; B only between adjacent chunks of one type
IOB2, BIO  B, I                    every chunk starts with B
IOE1       I, E                    chunks end with I; E only between adjacent chunks of one type
IOE2, IOE  I, E                    every chunk ends with E
IOBES      B, I, E, S              alias BIOES; S = single-token chunk
BILOU      B, I, L, U              L is read as E and U as S
=========  ======================  =====================================================================

``conlleval`` knows the prefixes B, I, E and O only, so on IOB1, IOB2, IOE1 and IOE2 its chunks are these; on IOBES
it merges ``S-X S-X`` into one chunk and does not start a chunk at ``B-X`` after ``E-X``, where this module (and
seqeval) follows the scheme.

Spans are :class:`Span` ``(start, end, label)`` with ``end`` **exclusive**. This module imports JAX only inside the
device functions, so the command line scores files without loading it.

>>> extract_spans(["B-PER", "I-PER", "O", "I-LOC"])
[Span(start=0, end=2, label='PER'), Span(start=3, end=4, label='LOC')]
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from metametric_jax.tasks.schemes import (  # re-exported: the scheme names and prefix codes
    _PREFIXES,
    BEGIN,
    END,
    INSIDE,
    OUTSIDE,
    SCHEMES,
    SINGLE,
    normalize_scheme,
)

__all__ = [  # grouped: constants, types, host, device
    "SCHEMES", "OUTSIDE", "BEGIN", "INSIDE", "END", "SINGLE", "Span", "SpanTable", "normalize_scheme",
    "parse_tag", "tag_problem", "recode_tags", "chunk_boundaries", "decode_tags", "extract_batch", "extract_spans",
    "tag_codes", "TagCodes", "device_span_stats", "span_records", "bio_span_records",
]  # fmt: skip


@dataclasses.dataclass(frozen=True, order=True)
class Span:
    """A typed chunk of a sentence.

    Attributes:
        start: index of the first token (0-based).
        end: index one past the last token (exclusive), so ``tokens[start:end]`` is the chunk.
        label: the entity type (``"PER"``).
    """

    start: int
    end: int
    label: str


# ------------------------------------------------------------------------------------------------------------ tags
def parse_tag(tag: Any, scheme: str) -> tuple[int, str] | None:
    """``(prefix code, type)`` of a tag in a canonical scheme, or None if the tag is not valid there.

    >>> parse_tag("B-GPE-LOC", "IOB2"), parse_tag("O", "IOB2"), parse_tag("S-PER", "IOB2")
    ((1, 'GPE-LOC'), (0, ''), None)
    """
    if not isinstance(tag, str):
        return None
    if tag == "O":
        return OUTSIDE, ""
    if len(tag) == 1:
        code, label = _PREFIXES[scheme].get(tag), "_"
    elif len(tag) >= 3 and tag[1] == "-":
        code, label = _PREFIXES[scheme].get(tag[0]), tag[2:]
    else:
        return None
    return None if code is None else (code, label)


def tag_problem(tag: Any, scheme: str) -> str | None:
    """Why ``tag`` is not valid in ``scheme`` (a message), or None if it is valid.

    >>> tag_problem("E-PER", "IOB2")
    "tag 'E-PER' is not valid in scheme IOB2: expected one of the prefixes 'B-', 'I-' (followed by an entity type) or the tag 'O'"
    """  # noqa: E501
    scheme = normalize_scheme(scheme)
    if parse_tag(tag, scheme) is not None:
        return None
    valid = ", ".join(f"'{p}-'" for p in _PREFIXES[scheme]) + " (followed by an entity type) or the tag 'O'"
    hint = "" if isinstance(tag, str) and "-" in tag else "; for tags without prefixes use raw mode (-r)"
    return f"tag {tag!r} is not valid in scheme {scheme}: expected one of the prefixes {valid}{hint}"


def recode_tags(sentences: Sequence[Sequence[str]], outside: str = "O", raw: bool = False) -> list[list[str]]:
    """Tags rewritten as ``conlleval``'s ``-o`` and ``-r`` options read them.

    ``outside`` becomes ``O``; with ``raw`` every other tag ``X`` becomes ``B-X`` (tags without prefixes, one token
    per chunk).

    >>> recode_tags([["PER", "NONE", "PER"]], outside="NONE", raw=True)
    [['B-PER', 'O', 'B-PER']]
    """
    if outside == "O" and not raw:
        return [list(s) for s in sentences]
    if raw:
        return [["O" if t == outside or t == "O" else "B-" + t for t in s] for s in sentences]
    return [["O" if t == outside else t for t in s] for s in sentences]


# ------------------------------------------------------------------------------------------------------ the rule
def chunk_boundaries(prev_prefix: Any, prev_type: Any, prefix: Any, type_: Any) -> tuple[Any, Any]:
    """The chunk rule: ``(start, end_before)`` from the previous and current prefix codes and type ids.

    Works elementwise on NumPy and ``jax.numpy`` arrays alike (``O`` has the type id -1). ``start``: a chunk starts
    at the current token; ``end_before``: the chunk of the previous token ends before the current one.

    >>> s, e = chunk_boundaries(np.array([OUTSIDE, BEGIN]), np.array([-1, 0]), np.array([INSIDE, INSIDE]),
    ...                         np.array([0, 1]))
    >>> s.tolist(), e.tolist()
    ([True, True], [False, True])
    """
    c_o = prefix == OUTSIDE
    c_bs = (prefix == BEGIN) | (prefix == SINGLE)
    c_ie = (prefix == INSIDE) | (prefix == END)
    p_o = prev_prefix == OUTSIDE
    p_es = (prev_prefix == END) | (prev_prefix == SINGLE)
    p_bi = (prev_prefix == BEGIN) | (prev_prefix == INSIDE)
    changed = prev_type != type_
    start = c_bs | ((p_es | p_o) & c_ie) | ((prefix != OUTSIDE) & changed)
    end_before = p_es | (p_bi & (c_bs | c_o)) | ((prev_prefix != OUTSIDE) & changed)
    return start, end_before


# ------------------------------------------------------------------------------------------------------------ host
class SpanTable(NamedTuple):
    """The spans of a batch as parallel int64 arrays; ``label`` indexes the batch's shared label list.

    Attributes:
        sentence: the sentence of each span (0-based).
        start: first token (0-based).
        end: one past the last token.
        label: type id.
        lengths: the sentence lengths when decoded from tags, else None.
        codes: every token's tag id (concatenated sentences; ids shared by the batches decoded together), or None.
    """

    sentence: np.ndarray
    start: np.ndarray
    end: np.ndarray
    label: np.ndarray
    lengths: np.ndarray | None = None
    codes: np.ndarray | None = None


def decode_tags(
    batches: Sequence[tuple[str, Sequence[Sequence[str]]]], scheme: str, labels: dict[str, int]
) -> list[SpanTable]:
    """Decode several named batches of tag sequences in one vectorized pass (one table per batch).

    Args:
        batches: ``(name, sentences)`` pairs; the name is used in error messages (``"predictions"``).
        scheme: a canonical scheme name.
        labels: the type vocabulary, extended in place (type name → id).

    Raises:
        TypeError: on a sentence that is a string or a tag that is not a string.
        ValueError: on a tag that is not valid in ``scheme`` (naming batch, sentence, token and the valid prefixes).
    """
    sides = [side for side, _ in batches]
    bounds = np.zeros(len(batches) + 1, np.int64)
    np.cumsum([len(b) for _, b in batches], out=bounds[1:])
    batch = list(itertools.chain.from_iterable(b for _, b in batches))
    n = len(batch)

    def where(sentence: int, token: int | None = None) -> str:
        j = int(np.searchsorted(bounds, sentence, side="right") - 1)
        at = f", token {token}" if token is not None else ""
        return f"{sides[j]}: sentence {sentence - int(bounds[j])}{at} (0-based): "

    if any(issubclass(t, str) for t in set(map(type, batch))):
        k = next(k for k, x in enumerate(batch) if isinstance(x, str))
        raise TypeError(where(k) + f"found the string {batch[k]!r}; expected a sequence of tags.")
    lengths = np.fromiter(map(len, batch), np.int64, n)
    flat = list(itertools.chain.from_iterable(batch))
    total = len(flat)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])

    def where_flat(i: int) -> str:
        k = int(np.searchsorted(offsets, i, side="right") - 1)
        return where(k, i - int(offsets[k]))

    unique: set[Any]
    try:
        unique = set(flat)
    except TypeError:  # an unhashable tag
        unique = {0}
    if not all(isinstance(t, str) for t in unique):
        bad = next(i for i, t in enumerate(flat) if not isinstance(t, str))
        raise TypeError(where_flat(bad) + f"tags must be strings; found {flat[bad]!r}.")
    uniq = sorted(unique)
    index: dict[str, int] = {}
    prefix = np.zeros(len(uniq), np.int8)
    typ = np.full(len(uniq), -1, np.int64)
    for u, tag in enumerate(uniq):
        parsed = parse_tag(tag, scheme)
        if parsed is None:
            raise ValueError(where_flat(flat.index(tag)) + f"{tag_problem(tag, scheme)}.")
        index[tag] = u
        prefix[u] = parsed[0]
        if parsed[0] != OUTSIDE:
            typ[u] = labels.setdefault(parsed[1], len(labels))
    codes = np.fromiter(map(index.__getitem__, flat), np.int64, total)
    p, ty = prefix[codes], typ[codes]

    # the previous tag of every token, with O before the first token of each sentence; O after the last
    nonempty = lengths > 0
    prev_p = np.empty_like(p)
    prev_t = np.empty_like(ty)
    prev_p[1:], prev_t[1:] = p[:-1], ty[:-1]
    prev_p[offsets[:-1][nonempty]] = OUTSIDE
    prev_t[offsets[:-1][nonempty]] = -1
    start, end_before = chunk_boundaries(prev_p, prev_t, p, ty)
    end_at = np.zeros(total, bool)
    end_at[:-1] = end_before[1:]
    lasts = offsets[1:][nonempty] - 1
    end_at[lasts] = p[lasts] != OUTSIDE

    starts = np.flatnonzero(start)
    ends = np.flatnonzero(end_at)
    sent = np.repeat(np.arange(n, dtype=np.int64), lengths)[starts]
    local_start = starts - offsets[sent]
    local_end = ends - offsets[sent] + 1
    label = ty[starts]
    cut = np.searchsorted(sent, bounds)
    return [
        SpanTable(
            sent[cut[j] : cut[j + 1]] - bounds[j],
            local_start[cut[j] : cut[j + 1]],
            local_end[cut[j] : cut[j + 1]],
            label[cut[j] : cut[j + 1]],
            lengths[bounds[j] : bounds[j + 1]],
            codes[offsets[bounds[j]] : offsets[bounds[j + 1]]],
        )
        for j in range(len(batches))
    ]


def extract_batch(sentences: Sequence[Sequence[str]], scheme: str = "IOB2") -> list[list[Span]]:
    """The spans of each tag sequence of a batch, in order of their start.

    >>> extract_batch([["B-PER", "I-PER", "O", "I-LOC"]])
    [[Span(start=0, end=2, label='PER'), Span(start=3, end=4, label='LOC')]]

    Raises:
        ValueError: on a tag that is not valid in ``scheme`` (naming the tag, its position and the valid prefixes).
    """
    labels: dict[str, int] = {}
    (t,) = decode_tags([("sentences", sentences)], normalize_scheme(scheme), labels)
    names = list(labels)
    out: list[list[Span]] = [[] for _ in range(len(sentences))]
    for k, s, e, lab in zip(t.sentence.tolist(), t.start.tolist(), t.end.tolist(), t.label.tolist()):
        out[k].append(Span(s, e, names[lab]))
    return out


def extract_spans(tags: Sequence[str], scheme: str = "IOB2") -> list[Span]:
    """The spans of one tag sequence, in order of their start.

    >>> extract_spans(["S-PER", "B-ORG", "E-ORG", "I-ORG"], "IOBES")
    [Span(start=0, end=1, label='PER'), Span(start=1, end=3, label='ORG'), Span(start=3, end=4, label='ORG')]
    """
    if isinstance(tags, str):
        raise TypeError(f"extract_spans expects a sequence of tags; found the string {tags!r}.")
    return extract_batch([tags], scheme)[0]


# ---------------------------------------------------------------------------------------------------------- device
class TagCodes(NamedTuple):
    """A tagger's tag vocabulary as lookup arrays for :func:`span_records`.

    Attributes:
        prefix: int32 ``(K,)`` prefix code of each tag id.
        type: int32 ``(K,)`` type id of each tag id (-1 for ``O``).
        labels: the type names, by type id.
    """

    prefix: np.ndarray
    type: np.ndarray
    labels: tuple[str, ...]


def tag_codes(tags: Sequence[str], scheme: str = "IOB2", labels: Sequence[str] = ()) -> TagCodes:
    """Lookup arrays from a tag vocabulary (tag id → prefix code and type id), for the device decoder.

    Args:
        tags: the tag of each id (``["O", "B-PER", "I-PER", ...]``).
        scheme: the tag scheme.
        labels: type names to number first (so several vocabularies share type ids); others follow in order.

    >>> tag_codes(["O", "B-PER", "I-PER", "B-LOC"])
    TagCodes(prefix=array([0, 1, 2, 1], dtype=int32), type=array([-1,  0,  0,  1], dtype=int32), labels=('PER', 'LOC'))

    Raises:
        ValueError: on a tag that is not valid in the scheme.
    """
    scheme = normalize_scheme(scheme)
    names: dict[str, int] = {lab: k for k, lab in enumerate(labels)}
    prefix = np.zeros(len(tags), np.int32)
    typ = np.full(len(tags), -1, np.int32)
    for k, tag in enumerate(tags):
        parsed = parse_tag(tag, scheme)
        if parsed is None:
            raise ValueError(f"tag id {k}: {tag_problem(tag, scheme)}.")
        prefix[k] = parsed[0]
        if parsed[0] != OUTSIDE:
            typ[k] = names.setdefault(parsed[1], len(names))
    return TagCodes(prefix, typ, tuple(names))


def _device_chunks(prefix: Any, types: Any, mask: Any) -> tuple[Any, Any, Any, Any]:
    """``(types, start, chunk_end, length)`` of padded rows in jnp.

    ``chunk_end[i]`` is the last token of the chunk that a start at ``i`` opens (``length`` where no chunk ends at
    or after ``i``); ``types`` is -1 on ``O``.
    """
    import jax
    import jax.numpy as jnp

    prefix = jnp.asarray(prefix, jnp.int32)
    n, length = prefix.shape
    valid = jnp.ones_like(prefix, bool) if mask is None else jnp.asarray(mask, bool)
    p = jnp.where(valid, prefix, OUTSIDE)
    t = jnp.where(p != OUTSIDE, jnp.asarray(types, jnp.int32), -1)
    prev_p = jnp.pad(p[:, :-1], ((0, 0), (1, 0)), constant_values=OUTSIDE)
    prev_t = jnp.pad(t[:, :-1], ((0, 0), (1, 0)), constant_values=-1)
    start, _ = chunk_boundaries(prev_p, prev_t, p, t)
    next_p = jnp.pad(p[:, 1:], ((0, 0), (0, 1)), constant_values=OUTSIDE)
    next_t = jnp.pad(t[:, 1:], ((0, 0), (0, 1)), constant_values=-1)
    _, end_next = chunk_boundaries(p, t, next_p, next_t)
    end_at = (p != OUTSIDE) & end_next
    idx = jnp.broadcast_to(jnp.arange(length, dtype=jnp.int32), (n, length))
    chunk_end = jax.lax.cummin(jnp.where(end_at, idx, length), axis=1, reverse=True)
    return t, start, chunk_end, length


def device_span_stats(
    pred_prefix: Any,
    pred_types: Any,
    ref_prefix: Any,
    ref_types: Any,
    mask: Any = None,
    n_types: int | None = None,
) -> Any:
    """Per-sentence (matched, predicted, reference) span counts of padded tag rows, in ``jax.numpy``.

    The device side of :func:`metametric_jax.tasks.spans.count_spans`: chunks by :func:`chunk_boundaries` on both
    sides; a predicted chunk is matched when a reference chunk starts at the same token, has the same type and ends at
    the same token.
    Jittable and vmappable; ``span_metric(scheme).from_stats(...)`` of :mod:`metametric_jax.tasks.ner` turns the
    result into an accumulator state inside ``jax.jit``.

    Args:
        pred_prefix: int ``(n, L)`` predicted prefix codes (see :func:`tag_codes`).
        pred_types: int ``(n, L)`` predicted type ids.
        ref_prefix: int ``(n, L)`` reference prefix codes.
        ref_types: int ``(n, L)`` reference type ids (the same type numbering as the predictions).
        mask: bool ``(n, L)``, True on real tokens (a prefix of each row).
        n_types: if given, counts per type: ``(n, n_types, 3)`` instead of ``(n, 3)``.

    Returns:
        float32 ``(n, 3)`` (or ``(n, n_types, 3)``).
    """
    import jax
    import jax.numpy as jnp

    pt, ps, pe, _ = _device_chunks(pred_prefix, pred_types, mask)
    rt, rs, re_, _ = _device_chunks(ref_prefix, ref_types, mask)
    matched = ps & rs & (pt == rt) & (pe == re_)
    if n_types is None:
        cols = [matched.sum(1), ps.sum(1), rs.sum(1)]
        return jnp.stack(cols, -1).astype(jnp.float32)

    def per_type(flags: Any, types: Any) -> Any:
        return (jax.nn.one_hot(types, n_types, dtype=jnp.int32) * flags[..., None]).sum(1)

    cols = [per_type(matched, pt), per_type(ps, pt), per_type(rs, rt)]
    return jnp.stack(cols, -1).astype(jnp.float32)


def span_records(prefix: Any, types: Any, mask: Any = None, max_spans: int | None = None) -> tuple[Any, Any]:
    """Typed chunks of padded tag rows as records ``(start, end, type)`` (end exclusive), in ``jax.numpy``.

    The device side of :func:`decode_tags`: the same rule (:func:`chunk_boundaries`) on ``(n, L)`` arrays, jittable
    and vmappable. Map a tagger's tag ids with :func:`tag_codes` first (``codes.prefix[ids]``, ``codes.type[ids]``).

    Args:
        prefix: int ``(n, L)`` prefix codes (``OUTSIDE`` ... ``SINGLE``).
        types: int ``(n, L)`` type ids (ignored where the prefix is ``OUTSIDE``).
        mask: bool ``(n, L)``, True on real tokens (a prefix of each row; a masked token reads as ``O``).
        max_spans: the records' padded length (default ``L``, which always suffices; spans beyond it are dropped).

    Returns:
        ``(records int32 (n, max_spans, 3), mask bool (n, max_spans))``, spans in order of their start.
    """
    import jax.numpy as jnp

    t, start, next_end, length = _device_chunks(prefix, types, mask)
    n = t.shape[0]
    size = length if max_spans is None else int(max_spans)
    idx = jnp.broadcast_to(jnp.arange(length, dtype=jnp.int32), (n, length))
    slot = jnp.where(start, jnp.cumsum(start, axis=1) - 1, size)
    rec = jnp.stack([idx, next_end + 1, t], axis=-1).astype(jnp.int32)
    rows = jnp.broadcast_to(jnp.arange(n)[:, None], (n, length))
    records = jnp.zeros((n, size, 3), jnp.int32).at[rows, slot].set(rec, mode="drop")
    count = jnp.minimum(start.sum(axis=1), size)
    return records, jnp.arange(size)[None, :] < count[:, None]


def bio_span_records(tags: Any, mask: Any = None, max_spans: int | None = None) -> tuple[Any, Any]:
    """Typed spans of BIO (IOB2) tag ids as records ``(start, end, type)`` (end exclusive), in ``jax.numpy``.

    Tag ids: ``0`` is ``O``, ``1 + 2t`` is ``B-<type t>`` and ``2 + 2t`` is ``I-<type t>``; chunking as
    :func:`span_records` (which takes any scheme).

    Args:
        tags: int ``(n, L)``.
        mask: bool ``(n, L)``, True on real tokens (a prefix of each row); default all True.
        max_spans: the records' padded length (default ``L``).

    Returns:
        ``(records int32 (n, max_spans, 3), mask bool (n, max_spans))``; encode the references' ``Span`` labels
        with the same type ids.
    """
    import jax.numpy as jnp

    tags = jnp.asarray(tags, jnp.int32)
    prefix = jnp.where(tags > 0, jnp.where((tags - 1) % 2 == 0, BEGIN, INSIDE), OUTSIDE)
    return span_records(prefix, (tags - 1) // 2, mask, max_spans)
