r"""Named-entity recognition: tag schemes, chunking and span-level precision / recall / F1 as JAX accumulators.

A tag sequence is decoded into a set of typed spans (chunks); the prediction and the reference of a sentence are
compared as sets, so a predicted span counts as correct only if its start, end and type all match a reference span
(the CoNLL-2000 / CoNLL-2003 shared-task evaluation, Tjong Kim Sang & Buchholz 2000; Tjong Kim Sang & De Meulder
2003). For sentences :math:`i` with predicted spans :math:`P_i` and reference spans :math:`R_i`,

.. math::

    \mathrm{P} = \frac{\sum_i |P_i \cap R_i|}{\sum_i |P_i|}, \quad
    \mathrm{R} = \frac{\sum_i |P_i \cap R_i|}{\sum_i |R_i|}, \quad
    F_1 = \frac{2 \sum_i |P_i \cap R_i|}{\sum_i |P_i| + \sum_i |R_i|}

so the per-sentence statistics of the accumulator are (matched spans, predicted spans, reference spans).

Chunking follows ``conlleval`` (and seqeval's default, non-strict mode): ill-formed sequences are repaired rather
than rejected. A chunk starts at ``B``/``S``, at an ``I``/``E`` after ``O``/``E``/``S``, and at any tag whose type
differs from the previous tag's; it ends before ``B``/``S``/``O`` after ``B``/``I``, after every ``E``/``S``, and
before a change of type. Hence an ``I-`` after ``O`` or after another type starts a new chunk. The schemes only
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

A tag is ``O`` or ``<prefix>-<type>`` (``B-PER``); a bare prefix (``B``) has the type ``_``, as in seqeval.
Decoding is vectorized: the tags of a whole batch are factorized to integers once, the chunk boundaries are
boolean NumPy expressions over the concatenated batch, and matching is a sorted intersection of integer keys.

Spans are :class:`Span` ``(start, end, label)`` with ``end`` **exclusive** (Python slice convention): the chunk
covers tokens ``start .. end - 1``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from metametric_jax.accumulate import Metric, stats_metric
from metametric_jax.normalizer import Normalizer, safe_divide
from metametric_jax.suite import Suite, make_suite

__all__ = [
    "SCHEMES",
    "Span",
    "PREDICTED",
    "SUPPORT",
    "normalize_scheme",
    "tag_problem",
    "extract_spans",
    "extract_batch",
    "span_stats",
    "type_stats",
    "span_metric",
    "ner_metric",
    "ner_report",
    "state_report",
]

_O, _B, _I, _E, _S = 0, 1, 2, 3, 4

_PREFIXES: dict[str, dict[str, int]] = {
    "IOB1": {"B": _B, "I": _I},
    "IOB2": {"B": _B, "I": _I},
    "IOE1": {"I": _I, "E": _E},
    "IOE2": {"I": _I, "E": _E},
    "IOBES": {"B": _B, "I": _I, "E": _E, "S": _S},
    "BILOU": {"B": _B, "I": _I, "L": _E, "U": _S},
}
_ALIASES = {"BIO": "IOB2", "IOB": "IOB2", "IOE": "IOE2", "BIOES": "IOBES", "IOBES": "IOBES", "BILOU": "BILOU"}

#: The canonical scheme names (aliases: ``BIO``/``IOB`` → IOB2, ``IOE`` → IOE2, ``BIOES`` → IOBES).
SCHEMES: tuple[str, ...] = tuple(_PREFIXES)

#: Reported by the NER accumulators: the number of predicted spans (micro total).
PREDICTED = Normalizer("predicted", lambda xy, xx, yy, zd: xx)
#: Reported by the NER accumulators: the number of reference spans, i.e. the support (micro total).
SUPPORT = Normalizer("support", lambda xy, xx, yy, zd: yy)

_RESERVED = ("micro", "macro", "weighted")


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


# ---------------------------------------------------------------------------------------------------- tags
def normalize_scheme(scheme: str) -> str:
    """The canonical name of a tag scheme.

    >>> normalize_scheme("bioes")
    'IOBES'

    Raises:
        ValueError: if the scheme is unknown (the message lists the valid names).
    """
    key = str(scheme).strip().upper() if isinstance(scheme, str) else None
    if key in _PREFIXES:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(
        f"Unknown tag scheme {scheme!r}; expected one of {', '.join(SCHEMES)} (aliases: {', '.join(sorted(_ALIASES))})."
    )


def _valid_prefixes(scheme: str) -> str:
    return ", ".join(f"'{p}-'" for p in _PREFIXES[scheme]) + " (followed by an entity type) or the tag 'O'"


def _parse_tag(tag: Any, scheme: str) -> tuple[int, str] | None:
    """(prefix code, type) of a tag, or None if the tag is not valid in the scheme."""
    if not isinstance(tag, str):
        return None
    if tag == "O":
        return _O, ""
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
    if _parse_tag(tag, scheme) is not None:
        return None
    return f"tag {tag!r} is not valid in scheme {scheme}: expected one of the prefixes {_valid_prefixes(scheme)}"


class _Table(NamedTuple):
    """Spans of a batch as parallel arrays; ``label`` indexes the batch's shared label list."""

    sentence: np.ndarray
    start: np.ndarray
    end: np.ndarray
    label: np.ndarray
    lengths: np.ndarray | None  # sentence lengths when decoded from tags


def _is_tag_batch(batch: Sequence[Any], side: str) -> bool:
    """Whether a batch holds tag sequences (True) or span collections (False)."""
    for item in batch:
        if isinstance(item, str):
            raise TypeError(
                f"{side}: expected one tag sequence (or span collection) per sentence; found the string {item!r}. "
                "Wrap a single sentence in a list: [['B-PER', 'O']]."
            )
        if isinstance(item, (set, frozenset)):
            return False
        for x in item:
            return isinstance(x, str)
    return True


def _decode_tags(
    batches: Sequence[tuple[str, Sequence[Sequence[str]]]], scheme: str, labels: dict[str, int]
) -> list[_Table]:
    """Decode several named batches of tag sequences in one vectorized pass (one table per batch)."""
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

    try:
        uniq = set(flat)
    except TypeError:
        bad = next(i for i, t in enumerate(flat) if not isinstance(t, str))
        raise TypeError(where_flat(bad) + f"tags must be strings; found {flat[bad]!r}.") from None
    index: dict[str, int] = {}
    prefix = np.zeros(len(uniq), np.int8)
    typ = np.full(len(uniq), -1, np.int64)
    for u, tag in enumerate(uniq):
        parsed = _parse_tag(tag, scheme)
        if parsed is None:
            raise ValueError(where_flat(flat.index(tag)) + f"{tag_problem(tag, scheme)}.")
        index[tag] = u
        prefix[u] = parsed[0]
        if parsed[0] != _O:
            typ[u] = labels.setdefault(parsed[1], len(labels))
    codes = np.fromiter(map(index.__getitem__, flat), np.int64, total)
    p, ty = prefix[codes], typ[codes]

    # the previous tag of every token, with "O" before the first token of each sentence
    nonempty = lengths > 0
    prev_p = np.empty_like(p)
    prev_t = np.empty_like(ty)
    prev_p[1:], prev_t[1:] = p[:-1], ty[:-1]
    firsts = offsets[:-1][nonempty]
    prev_p[firsts] = _O
    prev_t[firsts] = -1

    c_o, c_b, c_s = p == _O, p == _B, p == _S
    c_ie = (p == _I) | (p == _E)
    p_o = prev_p == _O
    p_bi = (prev_p == _B) | (prev_p == _I)
    p_es = (prev_p == _E) | (prev_p == _S)
    changed = prev_t != ty
    start = c_b | c_s | ((p_es | p_o) & c_ie) | (~c_o & changed)
    end_before = p_es | (p_bi & (c_b | c_s | c_o)) | (~p_o & changed)
    end_at = np.zeros(total, bool)
    end_at[:-1] = end_before[1:]
    lasts = offsets[1:][nonempty] - 1
    end_at[lasts] = ~c_o[lasts]

    starts = np.flatnonzero(start)
    ends = np.flatnonzero(end_at)
    sent = np.repeat(np.arange(n, dtype=np.int64), lengths)[starts]
    local_start = starts - offsets[sent]
    local_end = ends - offsets[sent] + 1
    label = ty[starts]
    cut = np.searchsorted(sent, bounds)
    return [
        _Table(
            sent[cut[j] : cut[j + 1]] - bounds[j],
            local_start[cut[j] : cut[j + 1]],
            local_end[cut[j] : cut[j + 1]],
            label[cut[j] : cut[j + 1]],
            lengths[bounds[j] : bounds[j + 1]],
        )
        for j in range(len(batches))
    ]


def _read_spans(batch: Sequence[Iterable[Any]], labels: dict[str, int], side: str) -> _Table:
    sent: list[int] = []
    start: list[int] = []
    end: list[int] = []
    lab: list[int] = []
    for k, spans in enumerate(batch):
        seen = set()
        for x in spans:
            if isinstance(x, Span):
                s, e, label = x.start, x.end, x.label
            else:
                try:
                    s, e, label = x
                except (TypeError, ValueError):
                    raise TypeError(
                        f"{side}: sentence {k}: expected a Span or a (start, end, label) triple; found {x!r}."
                    ) from None
            if not (isinstance(s, (int, np.integer)) and isinstance(e, (int, np.integer)) and 0 <= s < e):
                raise ValueError(f"{side}: sentence {k}: span {x!r} needs integers 0 <= start < end (end exclusive).")
            if not isinstance(label, str):
                raise TypeError(f"{side}: sentence {k}: span {x!r} needs a string label; found {label!r}.")
            key = (int(s), int(e), label)
            if key in seen:
                continue
            seen.add(key)
            sent.append(k)
            start.append(key[0])
            end.append(key[1])
            lab.append(labels.setdefault(label, len(labels)))
    return _Table(
        np.asarray(sent, np.int64),
        np.asarray(start, np.int64),
        np.asarray(end, np.int64),
        np.asarray(lab, np.int64),
        None,
    )


def extract_batch(sentences: Sequence[Sequence[str]], scheme: str = "IOB2") -> list[list[Span]]:
    """The spans of each tag sequence of a batch, in order of their start.

    >>> extract_batch([["B-PER", "I-PER", "O", "I-LOC"]])
    [[Span(start=0, end=2, label='PER'), Span(start=3, end=4, label='LOC')]]

    Raises:
        ValueError: on a tag that is not valid in ``scheme`` (naming the tag, its position and the valid prefixes).
    """
    scheme = normalize_scheme(scheme)
    labels: dict[str, int] = {}
    (t,) = _decode_tags([("sentences", sentences)], scheme, labels)
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


# ---------------------------------------------------------------------------------------------------- counting
class _Counts(NamedTuple):
    """Per-sentence, per-type counts of a batch: arrays of shape (n, T) and the type names."""

    matched: np.ndarray
    predicted: np.ndarray
    gold: np.ndarray
    labels: tuple[str, ...]

    def micro(self) -> np.ndarray:
        return np.stack([self.matched.sum(1), self.predicted.sum(1), self.gold.sum(1)], 1).astype(np.float64)

    def of(self, label: str) -> np.ndarray:
        n = self.matched.shape[0]
        if label not in self.labels:
            return np.zeros((n, 3))
        j = self.labels.index(label)
        return np.stack([self.matched[:, j], self.predicted[:, j], self.gold[:, j]], 1).astype(np.float64)


def _keys(a: _Table, b: _Table, n: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys of (sentence, start, end, label), equal iff the spans are equal."""
    r_start = int(max(a.start.max(initial=0), b.start.max(initial=0))) + 1
    r_end = int(max(a.end.max(initial=0), b.end.max(initial=0))) + 1
    if max(n, 1) * r_start * r_end * max(n_labels, 1) < 2**62:

        def key(t: _Table) -> np.ndarray:
            return ((t.sentence * r_start + t.start) * r_end + t.end) * n_labels + t.label

        return key(a), key(b)
    rows = np.concatenate([np.stack([t.sentence, t.start, t.end, t.label], 1) for t in (a, b)])
    _, inv = np.unique(rows, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    return inv[: len(a.start)], inv[len(a.start) :]


def _count(predictions: Sequence[Any], references: Sequence[Any], scheme: str) -> _Counts:
    scheme = normalize_scheme(scheme)
    n = len(references)
    if len(predictions) != n:
        raise ValueError(
            f"predictions and references must have the same number of sentences; found {len(predictions)} "
            f"predictions and {n} references."
        )
    labels: dict[str, int] = {}
    sides = [("predictions", predictions), ("references", references)]
    kinds = [_is_tag_batch(batch, side) for side, batch in sides]
    decoded = iter(_decode_tags([x for x, is_tags in zip(sides, kinds) if is_tags], scheme, labels))
    pt, gt = (next(decoded) if is_tags else _read_spans(b, labels, side) for (side, b), is_tags in zip(sides, kinds))
    if pt.lengths is not None and gt.lengths is not None and not np.array_equal(pt.lengths, gt.lengths):
        k = int(np.flatnonzero(pt.lengths != gt.lengths)[0])
        raise ValueError(
            f"sentence {k} (0-based) has {int(pt.lengths[k])} predicted tags but {int(gt.lengths[k])} reference "
            "tags; a prediction needs one tag per reference token."
        )
    n_labels = len(labels)
    kp, kg = _keys(pt, gt, n, n_labels)
    _, ip, _ = np.intersect1d(kp, kg, assume_unique=True, return_indices=True)
    size = n * n_labels

    def grid(sent: np.ndarray, lab: np.ndarray) -> np.ndarray:
        return np.bincount(sent * n_labels + lab, minlength=size).reshape(n, n_labels)

    return _Counts(
        grid(pt.sentence[ip], pt.label[ip]),
        grid(pt.sentence, pt.label),
        grid(gt.sentence, gt.label),
        tuple(labels),
    )


def span_stats(predictions: Sequence[Any], references: Sequence[Any], scheme: str = "IOB2") -> np.ndarray:
    """Per-sentence (matched, predicted, reference) span counts, an ``(n, 3)`` float array.

    Each of ``predictions`` and ``references`` is either a list of tag sequences (``list[list[str]]``) or a list of
    span collections (``Span`` objects or ``(start, end, label)`` triples, end exclusive; duplicates count once).

    >>> span_stats([["B-PER", "I-PER", "O"]], [["B-PER", "O", "B-LOC"]]).tolist()
    [[0.0, 1.0, 2.0]]
    """
    return _count(predictions, references, scheme).micro()


def type_stats(
    predictions: Sequence[Any], references: Sequence[Any], labels: Sequence[str], scheme: str = "IOB2"
) -> dict[str, np.ndarray]:
    """Per-sentence (matched, predicted, reference) counts for every type in ``labels`` and for all spans (``micro``).

    Returns:
        ``{"micro": (n, 3), label: (n, 3), ...}``; spans of types outside ``labels`` count in ``micro`` only.
    """
    c = _count(predictions, references, scheme)
    out = {"micro": c.micro()}
    for label in labels:
        out[label] = c.of(label)
    return out


# ---------------------------------------------------------------------------------------------------- accumulators
_DOC_SPAN = r"""Span-level precision / recall / F1 of NER tag sequences ({scheme}), micro-averaged over sentences.

Per-sentence statistics: (matched spans, predicted spans, reference spans); ``compute()`` also reports
``predicted`` and ``support`` (total predicted and reference spans). Equals seqeval's default-mode ``f1_score``,
``precision_score`` and ``recall_score`` (Tjong Kim Sang & Buchholz 2000, ``conlleval``).

.. math::

    F_1 = \frac{{2 \sum_i |P_i \cap R_i|}}{{\sum_i |P_i| + \sum_i |R_i|}}
"""


@functools.cache
def _span_metric(scheme: str) -> type[Metric]:
    def batch(predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        return span_stats(predictions, references, scheme)

    return stats_metric(
        name=f"span_f1_{scheme.lower()}",
        batch_stats=batch,
        report=(PREDICTED, SUPPORT),
        doc=_DOC_SPAN.format(scheme=scheme),
    )


def span_metric(scheme: str = "IOB2") -> type[Metric]:
    """The micro span-F1 accumulator class for a tag scheme (one class per scheme, so states of it merge).

    >>> M = span_metric("IOB2")
    >>> state = M.from_model_output([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "O"]])
    >>> float(state.compute()["f1"])
    1.0
    """
    return _span_metric(normalize_scheme(scheme))


def _masked_mean(values: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    return safe_divide(jnp.sum(jnp.where(mask, values, 0.0)), jnp.sum(mask.astype(jnp.float32)), 0.0)


def _averages(labels: tuple[str, ...]) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    def stacked(results: Mapping[str, Any], key: str) -> jnp.ndarray:
        return jnp.stack([jnp.asarray(results[lab][key], jnp.float32) for lab in labels])

    def macro(results: Mapping[str, Any]) -> dict[str, jnp.ndarray]:
        present = (stacked(results, "support") + stacked(results, "predicted")) > 0
        return {k: _masked_mean(stacked(results, k), present) for k in ("precision", "recall", "f1")}

    def weighted(results: Mapping[str, Any]) -> dict[str, jnp.ndarray]:
        support = stacked(results, "support")
        total = jnp.sum(support)
        return {
            k: safe_divide(jnp.sum(stacked(results, k) * support), total, 0.0) for k in ("precision", "recall", "f1")
        }

    return {"macro": macro, "weighted": weighted}


@functools.cache
def _ner_metric(labels: tuple[str, ...], scheme: str) -> type[Suite]:
    members: dict[str, type[Metric]] = {"micro": span_metric(scheme)}
    for label in labels:

        def batch(predictions: Sequence[Any], references: Sequence[Any], label: str = label) -> np.ndarray:
            return _count(predictions, references, scheme).of(label)

        members[label] = stats_metric(
            name=f"ner_{scheme.lower()}_{label}",
            batch_stats=batch,
            report=(PREDICTED, SUPPORT),
            doc=f"Span precision / recall / F1 of the entity type {label!r} ({scheme}).",
        )

    def suite_batch(predictions: Sequence[Any], references: Sequence[Any]) -> dict[str, np.ndarray]:
        return type_stats(predictions, references, labels, scheme)

    return make_suite(
        f"ner_{scheme.lower()}",
        members,
        _averages(labels),
        batch_stats=suite_batch,
        doc=_DOC_SUITE.format(scheme=scheme, labels=", ".join(labels)),
    )


_DOC_SUITE = r"""NER report accumulator ({scheme}; types {labels}): per-type and averaged span precision / recall / F1.

``compute()`` returns ``{{"micro": {{...}}, <type>: {{...}}, ..., "macro": {{...}}, "weighted": {{...}}}}``: each
member reports ``precision``, ``recall``, ``f1``, ``predicted`` and ``support`` (its ``macro_*`` entries are
averages over *sentences*). ``macro`` is the unweighted mean over the types that occur (support or predictions
> 0) and ``weighted`` the support-weighted mean, as in seqeval's ``classification_report``:

.. math::

    \mathrm{{macro}}\,F_1 = \frac{{1}}{{|T|}} \sum_{{t \in T}} F_1^{{(t)}}, \quad
    \mathrm{{weighted}}\,F_1 = \frac{{\sum_t n_t F_1^{{(t)}}}}{{\sum_t n_t}}
"""


def ner_metric(labels: Sequence[str], scheme: str = "IOB2") -> type[Suite]:
    """The NER report accumulator for a fixed set of entity types: one member per type, plus ``micro``.

    Spans of a type outside ``labels`` count in ``micro`` only. The same arguments give the same class (so states
    merge).

    Args:
        labels: the entity types (e.g. ``["LOC", "MISC", "ORG", "PER"]``).
        scheme: the tag scheme (see :data:`SCHEMES`).

    Raises:
        ValueError: on an empty, duplicated or reserved (``micro``, ``macro``, ``weighted``) label.
    """
    if isinstance(labels, str):
        raise TypeError(f"ner_metric expects a sequence of entity types; found the string {labels!r}.")
    labels = tuple(labels)
    for label in labels:
        if not isinstance(label, str) or not label:
            raise ValueError(f"ner_metric: entity types must be non-empty strings; found {label!r}.")
        if label in _RESERVED:
            raise ValueError(f"ner_metric: {label!r} is reserved for an average ({', '.join(_RESERVED)}).")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise ValueError(f"ner_metric: duplicated entity types {dup}.")
    return _ner_metric(labels, normalize_scheme(scheme))


def _totals(state: Metric) -> tuple[float, float, float]:
    """Exact (matched, predicted, reference) totals of a member state, read on the host in float64."""
    sums = np.asarray(state.sums, np.float64)
    if sums.ndim != 2:
        raise ValueError(f"the state is still stacked (sums shape {sums.shape}); call reduce() first.")
    v = sums[:, 0] + sums[:, 1]
    return float(v[0]), float(v[1]), float(v[2])


def _prf(xy: float, xx: float, yy: float) -> dict[str, float]:
    return {
        "precision": float(safe_divide(xy, xx)),
        "recall": float(safe_divide(xy, yy)),
        "f1": float(safe_divide(2 * xy, xx + yy)),
    }


def _report(micro: tuple[float, float, float], per_type: Mapping[str, tuple[float, float, float]]) -> dict[str, Any]:
    """The stable JSON report from exact (matched, predicted, reference) totals."""
    types: dict[str, dict[str, Any]] = {}
    present: list[dict[str, Any]] = []
    for label, (xy, xx, yy) in per_type.items():
        types[label] = {**_prf(xy, xx, yy), "support": int(round(yy))}
        if xx + yy > 0:
            present.append(types[label])
    macro = {k: (float(np.mean([r[k] for r in present])) if present else 0.0) for k in ("precision", "recall", "f1")}
    return {"micro": _prf(*micro), "macro": macro, "per_type": types}


def state_report(state: Suite) -> dict[str, Any]:
    """The stable JSON report of a :func:`ner_metric` state, computed in float64 from its exact span counts.

    Returns:
        ``{"micro": {"precision", "recall", "f1"}, "macro": {...}, "per_type": {type: {"precision", "recall",
        "f1", "support"}}}`` with Python floats and integer supports; ``macro`` is the unweighted mean over the
        types that occur, as seqeval's ``macro avg``.
    """
    if not isinstance(state, Suite) or "micro" not in state.states:
        raise TypeError(f"state_report expects a state of a ner_metric suite; found {type(state).__name__}.")
    per_type = {label: _totals(member) for label, member in state.states.items() if label != "micro"}
    return _report(_totals(state.states["micro"]), per_type)


def ner_report(
    predictions: Sequence[Any],
    references: Sequence[Any],
    scheme: str = "IOB2",
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The stable JSON report (see :func:`state_report`) of one batch, computed on the host from its span counts.

    Equals ``state_report(ner_metric(labels, scheme).from_model_output(predictions, references))``.

    Args:
        predictions: tag sequences or span collections, one per sentence.
        references: the same for the reference.
        scheme: the tag scheme.
        labels: the entity types to report; default the sorted types found in either side (seqeval's choice).
    """
    counts = _count(predictions, references, scheme)
    if labels is None:
        labels = sorted(counts.labels)
    else:
        ner_metric(labels, scheme)  # validates the label set
    micro = tuple(float(x) for x in counts.micro().sum(0))
    per_type = {label: tuple(float(x) for x in counts.of(label).sum(0)) for label in labels}
    return _report(micro, per_type)  # type: ignore[arg-type]
