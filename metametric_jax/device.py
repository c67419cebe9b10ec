r"""Device-native metric updates: exact matching of fixed-width integer records in ``jax.numpy``, no host round trip.

When a metric's similarity is exact equality of small records — typed spans ``(start, end, label)``, relation
tuples, dependency arcs, labels — matching needs no solver: with the pairwise equality
:math:`e_{ij} = [p_i = r_j]` of the valid predicted records :math:`p_i` and reference records :math:`r_j`,

.. math::

    \Phi_{1:1} = \sum_{v} \min(c_P(v), c_R(v)) = \sum_i \big[\, \#\{i' < i : p_{i'} = p_i\} < \#\{j : r_j = p_i\}
    \,\big], \qquad \Phi_{1:*} = \sum_i \max_j e_{ij}, \qquad \Phi_{*:1} = \sum_j \max_i e_{ij}, \qquad
    \Phi_{*:*} = \sum_{ij} e_{ij}

(multiset intersection under ``1:1``, row and column maxima under ``1:*`` and ``*:1``, all pairs under ``*:*``;
Chen et al., "A Unified View of Evaluation Metrics for Structured Prediction", EMNLP 2023). Self-overlaps are
counts, except under ``*:*`` where they are :math:`\sum_v c(v)^2`. Everything is ``jax.numpy``: jittable, vmappable,
usable inside ``pmap`` / ``shard_map``, and equal to the host path on the same records.

Which metrics qualify (see :func:`record_spec`):

* a class decorated with ``@metametric`` that has exactly one field, a collection (``frozenset[R]``, ``set[R]``,
  ``list[R]``, ``tuple[R, ...]``...) of records ``R``, under any constraint and any normalizer; or a metric built
  directly on :class:`~metametric_jax.matching.SetMatching` (``dsl.metric(dsl.set_matching(...))``);
* where a record ``R`` is a dataclass whose fields are all ``int``, ``bool``, ``str``, an ``enum.Enum`` or a
  ``Literal``, compared by exact equality (the derived similarity); or a fixed tuple of such types
  (``tuple[int, int, str]``); or a single such value (a set of labels).

Anything else (fuzzy or learned similarities, nested collections, latent variables, several fields) needs a solver
on the host: use ``D.metric.from_model_output(arrays, arrays, decode=fn)`` (:mod:`metametric_jax.jit`).

Encoding (:func:`encode_records`): a batch of ``n`` documents becomes ``records`` int32 ``(n, max_items, width)``
with one column per record field (in field order) and ``mask`` bool ``(n, max_items)``, True on real records. ``int``
and ``bool`` fields are stored as integers; an enum member as its position in the enum; strings and non-integer
``Literal`` values through a vocabulary (``{field: {value: code}}``) that the predictions and the references must
share. Only equality of codes matters, so any injective encoding shared by both sides is valid, e.g. a tagger's
type ids (:func:`bio_span_records`).
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Collection, Sequence
from typing import Any, Literal, NamedTuple, get_args, get_origin, get_type_hints

import jax
import jax.numpy as jnp
import numpy as np

from metametric_jax import _compensated as comp
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.matching import SetMatching
from metametric_jax.similarity import Discrete, Normalized, Product

__all__ = [
    "RecordSpec",
    "EncodedRecords",
    "record_spec",
    "encode_records",
    "record_stats",
    "sums_from_stats",
    "device_state",
    "bio_span_records",
    "vocab_from_labels",
]

_INT32 = np.iinfo(np.int32)


@dataclasses.dataclass(frozen=True)
class RecordSpec:
    """How a qualifying metric's structures are encoded as integer records.

    Attributes:
        constraint: the matching constraint of the record collection.
        field: the collection field of the decorated class (``None`` when the metric's similarity is the set
            matching itself).
        record_type: the record type (a dataclass, a fixed tuple type or a scalar type).
        columns: the record's column names (dataclass field names, tuple positions ``"0", "1", ...`` or ``"value"``).
    """

    constraint: Constraint
    field: str | None
    record_type: Any
    columns: tuple[str, ...]

    @property
    def width(self) -> int:
        """Number of integer columns of a record."""
        return len(self.columns)


class EncodedRecords(NamedTuple):
    """A batch of record collections as arrays.

    Attributes:
        records: int32 ``(n, max_items, width)``.
        mask: bool ``(n, max_items)``, True on real records.
        vocab: ``{column: {value: code}}`` for string / Literal columns (pass it to the other side's encoding).
    """

    records: np.ndarray
    mask: np.ndarray
    vocab: dict[str, dict[Any, int]]


# ------------------------------------------------------------------------------------------------ qualification
def _scalar_ok(tp: Any) -> bool:
    if get_origin(tp) is typing.Annotated:
        return _scalar_ok(get_args(tp)[0])
    if get_origin(tp) is Literal:
        return all(isinstance(v, (int, str, bool, enum.Enum)) for v in get_args(tp))
    return isinstance(tp, type) and (issubclass(tp, (int, str, bool, np.integer, enum.Enum)))


def _columns(inner: Any) -> tuple[Any, tuple[str, ...]]:
    """(record type, column names) of a record similarity, or raise ``_NotQualifiedError``."""
    while isinstance(inner, Normalized) and inner.discrete_key is not None:
        inner = inner.inner
    if isinstance(inner, Product):
        cls = inner.cls
        try:
            hints = get_type_hints(cls, include_extras=True)
        except Exception:  # noqa: BLE001 - unresolved annotations: fall back to the declared ones
            hints = {}
        for f, sim in inner.fields.items():
            tp = hints.get(f)
            if not isinstance(sim, Discrete) or not _scalar_ok(tp):
                raise _NotQualifiedError(
                    f"field {f!r} of the record type {cls.__name__} has type {tp!r} compared by {sim!r}; only int, "
                    "bool, str, enum and Literal fields compared by equality can be encoded as integers"
                )
        return cls, tuple(inner.fields)
    if isinstance(inner, Discrete):
        tp = inner.cls
        if get_origin(tp) is tuple:
            args = get_args(tp)
            if args and args[-1] is not Ellipsis and all(_scalar_ok(a) for a in args):
                return tp, tuple(str(k) for k in range(len(args)))
        elif _scalar_ok(tp):
            return tp, ("value",)
        raise _NotQualifiedError(
            f"the records have type {tp!r}; only dataclasses / fixed tuples of int, bool, str, enum and Literal "
            "values (or one such value) can be encoded as integers"
        )
    raise _NotQualifiedError(f"the records are compared by {inner!r}, which is not exact equality")


class _NotQualifiedError(Exception):
    pass


def record_spec(metric_cls: Any) -> RecordSpec:
    """The record encoding of a metric that qualifies for the device-native path.

    Args:
        metric_cls: a metric class (``D.metric``).

    Raises:
        TypeError: if the metric does not qualify; the message says why and points to the host-callback path.
    """
    cfg = getattr(metric_cls, "_config", None)
    if cfg is None:
        raise TypeError(f"The device path expects a metric class (such as D.metric); found {metric_cls!r}.")
    name = cfg.name
    try:
        source = getattr(cfg, "source", None)
        field: str | None = None
        if isinstance(source, Product):
            if len(source.fields) != 1:
                raise _NotQualifiedError(
                    f"class {source.name} has {len(source.fields)} fields ({', '.join(source.fields)}); the device "
                    "path needs exactly one field, a collection of records"
                )
            field, sim = next(iter(source.fields.items()))  # type: ignore[assignment]
        else:
            sim = source  # type: ignore[assignment]
        if type(sim) is not SetMatching:  # noqa: E721 - subclasses may change the semantics
            raise _NotQualifiedError(
                f"its similarity{'' if field is None else f' (field {field!r})'} is {sim!r}, not a set matching of "
                "records"
            )
        record_type, cols = _columns(sim.inner)
        return RecordSpec(sim.constraint, field, record_type, cols)
    except _NotQualifiedError as e:
        raise TypeError(
            f"Metric {name} cannot be computed on the device: {e}. Use the host-callback path instead, "
            f"{name}.from_model_output(predictions, references, decode=fn), which works inside jax.jit and pmap."
        ) from None


# ------------------------------------------------------------------------------------------------ encoding (host)
def _record_values(x: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x))
        return names, tuple(getattr(x, f) for f in names)
    if isinstance(x, tuple):
        return tuple(str(k) for k in range(len(x))), x
    return ("value",), (x,)


def _code(v: Any, column: str, vocab: dict[str, dict[Any, int]]) -> int:
    if isinstance(v, enum.Enum):
        return list(type(v)).index(v)
    if isinstance(v, (bool, int, np.integer)):
        iv = int(v)
        if not _INT32.min <= iv <= _INT32.max:
            raise ValueError(f"encode_records: column {column!r} holds {iv}, outside the int32 range.")
        return iv
    if isinstance(v, str):
        table = vocab.setdefault(column, {})
        return table.setdefault(v, len(table))
    raise TypeError(
        f"encode_records: column {column!r} holds {type(v).__name__} {v!r}; expected int, bool, str or an enum member."
    )


def encode_records(
    docs: Sequence[Any],
    field: str | None = None,
    max_items: int | None = None,
    vocab: dict[str, dict[Any, int]] | None = None,
    *,
    metric: Any = None,
) -> EncodedRecords:
    """Encode a batch of documents (decorated dataclass instances, or record collections) as integer records.

    Args:
        docs: one document per example: an instance of the decorated class (its record collection is read from
            ``field``, default its only field) or the record collection itself.
        field: the collection field to read.
        max_items: the padded number of records per document (default: the largest collection, at least 1).
        vocab: the vocabulary of string columns to extend (pass the one returned for the predictions when encoding
            the references); a new one is created when ``None``.
        metric: optional qualifying metric class: gives the default ``field`` and the record width (needed when a
            batch holds no record at all), and checks that the records have its columns.

    Returns:
        ``EncodedRecords(records int32 (n, max_items, width), mask bool (n, max_items), vocab)``.

    Raises:
        ValueError: if a document has more than ``max_items`` records, records differ in width, or an integer does
            not fit in int32.
        TypeError: if a document has no such field, or a value cannot be encoded.

    >>> enc = encode_records([[(0, 2, "PER")], [(1, 3, "LOC"), (4, 5, "PER")]])
    >>> enc.records.shape, enc.mask.tolist(), enc.vocab
    ((2, 2, 3), [[True, False], [True, True]], {'2': {'PER': 0, 'LOC': 1}})
    """
    vocab = {} if vocab is None else vocab
    spec = record_spec(metric) if metric is not None else None
    if spec is not None and field is None:
        field = spec.field
    colls: list[list[Any]] = []
    for k, doc in enumerate(docs):
        coll = doc
        if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
            names = [f.name for f in dataclasses.fields(doc)]
            key = field
            if key is None:
                if len(names) != 1:
                    raise TypeError(
                        f"encode_records: document {k} ({type(doc).__name__}) has fields {names}; pass field=<name> of "
                        "the record collection."
                    )
                key = names[0]
            if key not in names:
                raise TypeError(
                    f"encode_records: document {k} ({type(doc).__name__}) has no field {key!r}; fields: {names}."
                )
            coll = getattr(doc, key)
        if isinstance(coll, (str, bytes)) or not isinstance(coll, Collection):
            raise TypeError(
                f"encode_records: document {k} holds {type(coll).__name__}; expected a collection of records."
            )
        colls.append(list(coll))
    longest = max((len(c) for c in colls), default=0)
    size = max(longest, 1) if max_items is None else int(max_items)
    if longest > size:
        k = next(i for i, c in enumerate(colls) if len(c) > size)
        raise ValueError(f"encode_records: document {k} has {len(colls[k])} records, more than max_items={size}.")
    columns: tuple[str, ...] | None = None if spec is None else spec.columns
    rows: list[tuple[int, int, list[int]]] = []
    for k, coll in enumerate(colls):
        for j, x in enumerate(coll):
            cols, values = _record_values(x)
            if columns is None:
                columns = cols
            elif cols != columns:
                raise ValueError(f"encode_records: document {k}, record {j} has columns {cols}; expected {columns}.")
            rows.append((k, j, [_code(v, c, vocab) for v, c in zip(values, cols)]))
    width = len(columns) if columns is not None else 1
    records = np.zeros((len(colls), size, width), np.int32)
    mask = np.zeros((len(colls), size), bool)
    for k, j, codes in rows:
        records[k, j] = codes
        mask[k, j] = True
    return EncodedRecords(records, mask, vocab)


# ------------------------------------------------------------------------------------------------ device statistics
def _equal(a: jax.Array, am: jax.Array, b: jax.Array, bm: jax.Array) -> jax.Array:
    """``(n, A, B)`` bool: valid record ``a[i]`` equals valid record ``b[j]`` in every column."""
    eq = jnp.all(a[:, :, None, :] == b[:, None, :, :], axis=-1)
    return eq & am[:, :, None] & bm[:, None, :]


def record_stats(
    pred_records: Any, pred_mask: Any, ref_records: Any, ref_mask: Any, constraint: Constraint | str = "<->"
) -> jax.Array:
    """Per-example ``(overlap, predicted self-overlap, reference self-overlap)``, float32 ``(n, 3)``, in jnp.

    Args:
        pred_records: int ``(n, P, W)``.
        pred_mask: bool ``(n, P)``.
        ref_records: int ``(n, R, W)``.
        ref_mask: bool ``(n, R)``.
        constraint: the matching constraint.
    """
    cons = parse_constraint(constraint)
    p, r = jnp.asarray(pred_records), jnp.asarray(ref_records)
    pm, rm = jnp.asarray(pred_mask, bool), jnp.asarray(ref_mask, bool)
    e_pr = _equal(p, pm, r, rm)
    n_p = pm.sum(-1)
    n_r = rm.sum(-1)
    if cons is Constraint.ONE_TO_ONE:
        e_pp = _equal(p, pm, p, pm)
        earlier = jnp.tril(jnp.ones(e_pp.shape[-2:], bool), -1)
        rank = (e_pp & earlier).sum(-1)
        xy = (pm & (rank < e_pr.sum(-1))).sum(-1)
        xx, yy = n_p, n_r
    elif cons is Constraint.ONE_TO_MANY:
        xy, xx, yy = e_pr.any(-1).sum(-1), n_p, n_r
    elif cons is Constraint.MANY_TO_ONE:
        xy, xx, yy = e_pr.any(-2).sum(-1), n_p, n_r
    else:
        xy = e_pr.sum((-1, -2))
        xx = _equal(p, pm, p, pm).sum((-1, -2))
        yy = _equal(r, rm, r, rm).sum((-1, -2))
    return jnp.stack([xy, xx, yy], -1).astype(jnp.float32)


def _tree_sum(pairs: jax.Array) -> jax.Array:
    """Compensated sum over the leading axis of a ``(n, ..., 2)`` pair array (pairwise, log-depth)."""
    if pairs.shape[0] == 0:
        return jnp.zeros(pairs.shape[1:], jnp.float32)
    while pairs.shape[0] > 1:
        if pairs.shape[0] % 2:
            pairs = jnp.concatenate([pairs, jnp.zeros_like(pairs[:1])])
        pairs = comp._add(pairs[0::2], pairs[1::2])
    return pairs[0]


def sums_from_stats(metric_cls: Any, stats: Any, weights: Any = None) -> jax.Array:
    r"""The state's ``sums`` (float32 ``(rows, 2)``) from per-example statistics, in jnp (``Metric.host_sums``'s rule).

    Rows: :math:`\sum_i w_i (xy_i, xx_i, yy_i)`, then :math:`\sum_i w_i n_k(xy_i, xx_i, yy_i)` for each reported
    normalizer (two empty structures score ``empty_score``), then :math:`\sum_i w_i`; compensated pairs. Weights are
    not validated on the device: they must be finite and non-negative.
    """
    cfg = metric_cls._config
    stats = jnp.asarray(stats, jnp.float32)
    n = stats.shape[0]
    w = jnp.ones((n,), jnp.float32) if weights is None else jnp.broadcast_to(jnp.asarray(weights, jnp.float32), (n,))
    xy, xx, yy = stats[:, 0], stats[:, 1], stats[:, 2]
    both_empty = (xx == 0) & (yy == 0)
    cols = [xy, xx, yy]
    for normalizer in cfg.reported:
        s = jnp.asarray(normalizer(xy, xx, yy, cfg.zero_division), jnp.float32)
        if not normalizer.is_identity:
            s = jnp.where(both_empty, jnp.float32(cfg.empty_score), s)
        cols.append(jnp.broadcast_to(s, (n,)))
    cols.append(jnp.ones((n,), jnp.float32))
    values = w[:, None] * jnp.stack(cols, axis=1)
    return _tree_sum(jnp.stack([values, jnp.zeros_like(values)], axis=-1))


def _check_side(records: Any, mask: Any, side: str, spec: RecordSpec, name: str) -> tuple[jax.Array, jax.Array]:
    rs, ms = tuple(np.shape(records)), tuple(np.shape(mask))
    if len(rs) != 3 or len(ms) != 2 or rs[:2] != ms:
        raise ValueError(
            f"{name} device path: {side} records must have shape (n, max_items, {spec.width}) and the mask (n, "
            f"max_items); found {rs} and {ms}."
        )
    if rs[2] != spec.width:
        raise ValueError(
            f"{name} device path: {side} records have {rs[2]} columns; the record type {spec.record_type!r} has "
            f"{spec.width} ({', '.join(spec.columns)})."
        )
    dtype = np.dtype(records.dtype if hasattr(records, "dtype") else np.asarray(records).dtype)
    if not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_)):
        raise TypeError(f"{name} device path: {side} records must be integer arrays; found dtype {dtype}.")
    return jnp.asarray(records), jnp.asarray(mask, bool)


def device_state(
    metric_cls: Any,
    pred_records: Any,
    pred_mask: Any,
    ref_records: Any,
    ref_mask: Any,
    weights: Any = None,
) -> Any:
    """The state of one batch of encoded records, computed in jnp on the device (no callback).

    Args:
        metric_cls: a qualifying metric class (see :func:`record_spec`).
        pred_records: int ``(n, P, width)`` predicted records (see :func:`encode_records`).
        pred_mask: bool ``(n, P)``.
        ref_records: int ``(n, R, width)`` reference records, encoded with the same vocabulary.
        ref_mask: bool ``(n, R)``.
        weights: optional per-example weights ``(n,)`` or a scalar.

    Returns:
        A ``metric_cls`` state, equal to ``metric_cls.from_model_output`` on the decoded documents (counts exactly,
        normalized macro sums to float32 rounding).

    Raises:
        TypeError: if the metric does not qualify (pointing to the host-callback path) or records are not integers.
        ValueError: on inconsistent shapes (at trace time).
    """
    spec = record_spec(metric_cls)
    cfg = metric_cls._config
    p, pm = _check_side(pred_records, pred_mask, "predicted", spec, cfg.name)
    r, rm = _check_side(ref_records, ref_mask, "reference", spec, cfg.name)
    if p.shape[0] != r.shape[0]:
        raise ValueError(
            f"{cfg.name} device path: predictions and references must have the same batch size; found predicted "
            f"records {tuple(p.shape)} and reference records {tuple(r.shape)}."
        )
    if weights is not None and np.shape(weights) not in ((), (p.shape[0],)):
        raise ValueError(
            f"{cfg.name} device path: weights must have shape ({p.shape[0]},) or be a scalar; found "
            f"{np.shape(weights)}."
        )
    stats = record_stats(p, pm, r, rm, spec.constraint)
    return metric_cls(sums=sums_from_stats(metric_cls, stats, weights), config=cfg)


# ------------------------------------------------------------------------------------------------ tag decoding
def bio_span_records(tags: Any, mask: Any = None, max_spans: int | None = None) -> tuple[jax.Array, jax.Array]:
    """Typed spans of BIO (IOB2) tag ids as records ``(start, end, type)`` (end exclusive), in jnp.

    Tag ids: ``0`` is ``O``, ``1 + 2t`` is ``B-<type t>`` and ``2 + 2t`` is ``I-<type t>``. Chunking follows
    ``conlleval`` (and seqeval's default mode): a chunk starts at ``B``, or at an ``I`` after ``O`` or after a tag of
    another type, and ends before ``O``, before a chunk start, or at the end of the sentence.

    Args:
        tags: int ``(n, L)``.
        mask: bool ``(n, L)``, True on real tokens (a prefix of each row); default all True.
        max_spans: the records' padded length (default ``L``, which always suffices; spans beyond it are dropped).

    Returns:
        ``(records int32 (n, max_spans, 3), mask bool (n, max_spans))``; encode the references' ``Span`` labels
        with the same type ids (``vocab={"label": {name: t}}``).
    """
    tags = jnp.asarray(tags, jnp.int32)
    n, length = tags.shape
    valid = jnp.ones_like(tags, bool) if mask is None else jnp.asarray(mask, bool)
    size = length if max_spans is None else int(max_spans)
    inside = valid & (tags > 0)
    typ = jnp.where(inside, (tags - 1) // 2, -1)
    is_b = inside & ((tags - 1) % 2 == 0)
    prev_inside = jnp.pad(inside[:, :-1], ((0, 0), (1, 0)))
    prev_typ = jnp.pad(typ[:, :-1], ((0, 0), (1, 0)), constant_values=-1)
    start = is_b | (inside & (~prev_inside | (prev_typ != typ)))
    next_inside = jnp.pad(inside[:, 1:], ((0, 0), (0, 1)))
    next_start = jnp.pad(start[:, 1:], ((0, 0), (0, 1)))
    end_at = inside & ~(next_inside & ~next_start)
    idx = jnp.broadcast_to(jnp.arange(length, dtype=jnp.int32), (n, length))
    next_end = jax.lax.cummin(jnp.where(end_at, idx, length), axis=1, reverse=True)
    slot = jnp.where(start, jnp.cumsum(start, axis=1) - 1, size)
    rec = jnp.stack([idx, next_end + 1, typ], axis=-1).astype(jnp.int32)
    rows = jnp.broadcast_to(jnp.arange(n)[:, None], (n, length))
    records = jnp.zeros((n, size, 3), jnp.int32).at[rows, slot].set(rec, mode="drop")
    count = jnp.minimum(start.sum(axis=1), size)
    return records, jnp.arange(size)[None, :] < count[:, None]


def vocab_from_labels(labels: Sequence[str], column: str = "label") -> dict[str, dict[Any, int]]:
    """A vocabulary mapping label names to their type ids, ``{column: {label: t}}`` (for :func:`encode_records`)."""
    return {column: {lab: t for t, lab in enumerate(labels)}}
