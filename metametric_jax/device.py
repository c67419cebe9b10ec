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
  directly on :class:`~metametric_jax.matching.SetMatching` (``make_metric(dsl.set_matching(...))``);
* where a record ``R`` is a dataclass whose fields are all ``int``, ``bool``, ``str``, an ``enum.Enum`` or a
  ``Literal``, compared by exact equality (the derived similarity); or a fixed tuple of such types
  (``tuple[int, int, str]``); or a single such value (a set of labels).

Anything else (fuzzy or learned similarities, nested collections, latent variables, several fields) needs a solver
on the host: use ``metric.from_model_output(arrays, arrays, decode=fn)`` (:mod:`metametric_jax.jit`).

Encoding. Both sides of a batch are encoded in one call, :func:`encode_pairs`, so they share one vocabulary: a batch
of ``n`` documents becomes ``records`` int32 ``(n, max_items, width)`` with one column per record field (in field
order) and ``mask`` bool ``(n, max_items)``, True on real records. ``int`` and ``bool`` fields are stored as integers;
an enum member as its position in the enum; a ``Literal`` value as its position among the literal's values; strings
through the shared vocabulary (``{field: {value: code}}``). Each value must have its field's declared type: a string
(or a float) in an ``int`` field is a ``TypeError`` naming the field, as on the host path, never a code that could
collide with a real integer. A side built on the device (a tagger's spans, :mod:`metametric_jax.tasks.tagging`) is
paired with references encoded by :func:`encode_records` under a *fixed* vocabulary (the tagger's type ids): a value
missing from a fixed vocabulary is an error, never a new code.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from collections.abc import Collection, Sequence
from typing import Any, Literal, NamedTuple, get_args, get_origin, get_type_hints

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from metametric_jax.composite import Product
from metametric_jax.constraint import Constraint, parse_constraint
from metametric_jax.inputs import check_lengths
from metametric_jax.matching import SetMatching
from metametric_jax.similarity import Discrete, Normalized

__all__ = [
    "RecordSpec",
    "RecordPair",
    "EncodedRecords",
    "record_spec",
    "encode_pairs",
    "encode_records",
    "record_stats",
    "device_stats",
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
    kinds: tuple[Any, ...] = ()
    """Per column the declared type: ``int``, ``bool``, ``str``, an enum class or a ``Literal[...]``."""

    @property
    def width(self) -> int:
        """Number of integer columns of a record."""
        return len(self.columns)


class EncodedRecords(NamedTuple):
    """One side of a batch of record collections as arrays (see :func:`encode_records`).

    Attributes:
        records: int32 ``(n, max_items, width)``.
        mask: bool ``(n, max_items)``, True on real records.
    """

    records: np.ndarray
    mask: np.ndarray


class RecordPair(struct.PyTreeNode):
    """Both sides of a batch as integer records encoded with one vocabulary (what ``from_records`` takes).

    Attributes:
        pred_records: int ``(n, P, width)``.
        pred_mask: bool ``(n, P)``.
        ref_records: int ``(n, R, width)``.
        ref_mask: bool ``(n, R)``.
        vocab: the shared vocabulary of string columns, as sorted ``(column, ((value, code), ...))`` pairs (static).
    """

    pred_records: Any
    pred_mask: Any
    ref_records: Any
    ref_mask: Any
    vocab: tuple[tuple[str, tuple[tuple[Any, int], ...]], ...] = struct.field(pytree_node=False, default=())

    @property
    def vocabulary(self) -> dict[str, dict[Any, int]]:
        """The shared vocabulary as ``{column: {value: code}}``."""
        return {column: dict(table) for column, table in self.vocab}


# ------------------------------------------------------------------------------------------------ qualification
def _scalar_ok(tp: Any) -> bool:
    if get_origin(tp) is typing.Annotated:
        return _scalar_ok(get_args(tp)[0])
    if get_origin(tp) is Literal:
        return all(isinstance(v, (int, str, bool, enum.Enum)) for v in get_args(tp))
    return isinstance(tp, type) and (issubclass(tp, (int, str, bool, np.integer, enum.Enum)))


def _columns(inner: Any) -> tuple[Any, tuple[str, ...], tuple[Any, ...]]:
    """(record type, column names, column types) of a record similarity, or raise ``_NotQualifiedError``."""
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
        return cls, tuple(inner.fields), tuple(_plain(hints[f]) for f in inner.fields)
    if isinstance(inner, Discrete):
        tp = inner.cls
        if get_origin(tp) is tuple:
            args = get_args(tp)
            if args and args[-1] is not Ellipsis and all(_scalar_ok(a) for a in args):
                return tp, tuple(str(k) for k in range(len(args))), tuple(_plain(a) for a in args)
        elif _scalar_ok(tp):
            return tp, ("value",), (_plain(tp),)
        raise _NotQualifiedError(
            f"the records have type {tp!r}; only dataclasses / fixed tuples of int, bool, str, enum and Literal "
            "values (or one such value) can be encoded as integers"
        )
    raise _NotQualifiedError(f"the records are compared by {inner!r}, which is not exact equality")


def _plain(tp: Any) -> Any:
    return _plain(get_args(tp)[0]) if get_origin(tp) is typing.Annotated else tp


class _NotQualifiedError(Exception):
    pass


def record_spec(metric_cls: Any) -> RecordSpec:
    """The record encoding of a metric that qualifies for the device-native path.

    Args:
        metric_cls: a metric class (``D.metric``).

    Raises:
        TypeError: if the metric does not qualify; the message says why and points to the host-callback path.
    """
    cfg = getattr(metric_cls, "metric_config", None)
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
        record_type, cols, kinds = _columns(sim.inner)
        return RecordSpec(sim.constraint, field, record_type, cols, kinds)
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


def _kind_name(kind: Any) -> str:
    return getattr(kind, "__name__", None) or repr(kind)


def _code(v: Any, column: str, kind: Any, vocab: dict[str, dict[Any, int]] | None, fixed: bool, where: str) -> int:
    """The integer code of value ``v`` of a column of declared type ``kind``; refuses a value of another type."""
    if get_origin(kind) is Literal:
        allowed = get_args(kind)
        for k, a in enumerate(allowed):
            if v == a and type(v) is type(a):
                return k
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        if isinstance(v, kind):
            return list(kind).index(v)
    elif kind is str:
        if isinstance(v, str):
            table = vocab.setdefault(column, {}) if vocab is not None else {}
            if v not in table:
                if fixed:
                    raise ValueError(
                        f"{where}: field {column!r} holds {v!r}, which is not in the fixed vocabulary "
                        f"({sorted(table)[:10]}...); encode both sides with encode_pairs, or add it to the vocabulary."
                    )
                table[v] = len(table)
            return table[v]
    elif kind is bool:
        if isinstance(v, (bool, np.bool_)):
            return int(v)
    elif isinstance(kind, type) and issubclass(kind, (int, np.integer)) and isinstance(v, (int, np.integer)):
        iv = int(v)
        if not _INT32.min <= iv <= _INT32.max:
            raise ValueError(f"{where}: field {column!r} holds {iv}, outside the int32 range.")
        return iv
    raise TypeError(f"{where}: field {column!r} is {_kind_name(kind)}; found {type(v).__name__} {v!r}.")


def _collections(docs: Sequence[Any], field: str | None, what: str) -> list[list[Any]]:
    colls: list[list[Any]] = []
    for k, doc in enumerate(docs):
        coll = doc
        if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
            names = [f.name for f in dataclasses.fields(doc)]
            key = field
            if key is None:
                if len(names) != 1:
                    raise TypeError(
                        f"{what}: document {k} ({type(doc).__name__}) has fields {names}; pass field=<name> of the "
                        "record collection."
                    )
                key = names[0]
            if key not in names:
                raise TypeError(f"{what}: document {k} ({type(doc).__name__}) has no field {key!r}; fields: {names}.")
            coll = getattr(doc, key)
        if isinstance(coll, (str, bytes)) or not isinstance(coll, Collection):
            raise TypeError(f"{what}: document {k} holds {type(coll).__name__}; expected a collection of records.")
        colls.append(list(coll))
    return colls


def _encode(
    colls: list[list[Any]], spec: RecordSpec, size: int, vocab: dict[str, dict[Any, int]], fixed: bool, what: str
) -> EncodedRecords:
    longest = max((len(c) for c in colls), default=0)
    if longest > size:
        k = next(i for i, c in enumerate(colls) if len(c) > size)
        raise ValueError(f"{what}: document {k} has {len(colls[k])} records, more than max_items={size}.")
    records = np.zeros((len(colls), size, spec.width), np.int32)
    mask = np.zeros((len(colls), size), bool)
    for k, coll in enumerate(colls):
        for j, x in enumerate(coll):
            cols, values = _record_values(x)
            if cols != spec.columns:
                raise TypeError(
                    f"{what}: document {k}, record {j} is {type(x).__name__} {x!r}; expected a "
                    f"{_kind_name(spec.record_type)} record with fields {spec.columns}."
                )
            where = f"{what}: document {k}, record {j}"
            records[k, j] = [_code(v, c, t, vocab, fixed, where) for v, c, t in zip(values, cols, spec.kinds)]
            mask[k, j] = True
    return EncodedRecords(records, mask)


def encode_pairs(
    predictions: Sequence[Any],
    references: Sequence[Any],
    *,
    metric: Any,
    max_items: int | None = None,
    field: str | None = None,
) -> RecordPair:
    """Encode a batch of predicted and reference documents as integer records with one shared vocabulary.

    Args:
        predictions: one document per example: an instance of the decorated class (its record collection is read
            from ``field``, default its only field) or the record collection itself.
        references: the reference documents, same length.
        metric: the qualifying metric class (its record type gives the columns and their declared types).
        max_items: the padded number of records per document (default: the largest collection, at least 1).
        field: the collection field to read.

    Returns:
        a :class:`RecordPair` for ``metric.from_records``.

    Raises:
        TypeError: if a value does not have its field's declared type (naming the field), a document has no such
            field, or the metric does not qualify.
        ValueError: if the sides differ in length, a document has more than ``max_items`` records, or an integer
            does not fit in int32.

    >>> from dataclasses import dataclass
    >>> from metametric_jax import metametric
    >>> @metametric(normalizer="f1")
    ... @dataclass
    ... class Doc:
    ...     spans: frozenset[tuple[int, int, str]]
    >>> pair = encode_pairs([Doc(frozenset({(0, 2, "PER")}))], [Doc(frozenset({(0, 2, "LOC")}))], metric=Doc.metric)
    >>> pair.pred_records.tolist(), pair.ref_records.tolist(), pair.vocabulary
    ([[[0, 2, 0]]], [[[0, 2, 1]]], {'2': {'PER': 0, 'LOC': 1}})
    """
    spec = record_spec(metric)
    field = spec.field if field is None else field
    check_lengths(predictions, references, "encode_pairs")
    preds = _collections(predictions, field, "encode_pairs (predictions)")
    refs = _collections(references, field, "encode_pairs (references)")
    size = max(max((len(c) for c in preds + refs), default=0), 1) if max_items is None else int(max_items)
    vocab: dict[str, dict[Any, int]] = {}
    p = _encode(preds, spec, size, vocab, False, "encode_pairs (predictions)")
    r = _encode(refs, spec, size, vocab, False, "encode_pairs (references)")
    frozen = tuple(sorted((c, tuple(t.items())) for c, t in vocab.items()))
    return RecordPair(p.records, p.mask, r.records, r.mask, frozen)


def encode_records(
    docs: Sequence[Any],
    *,
    metric: Any,
    vocab: dict[str, dict[Any, int]] | None = None,
    max_items: int | None = None,
    field: str | None = None,
) -> EncodedRecords:
    """Encode one side of a batch under a fixed vocabulary (for pairing with records built on the device).

    Use :func:`encode_pairs` when both sides are Python documents. Here ``vocab`` (``{field: {value: code}}``, e.g.
    :func:`vocab_from_labels` of a tagger's types) is never extended: a string missing from it is a ``ValueError``,
    so the codes always mean what the other side's codes mean. ``vocab`` is required when the records have string
    fields.

    Raises:
        TypeError: if a value does not have its field's declared type (naming the field).
        ValueError: on a string missing from ``vocab``, too many records, or an integer outside int32.
    """
    spec = record_spec(metric)
    if vocab is None and str in spec.kinds:
        raise TypeError(
            "encode_records: the records have string fields, so the codes need a fixed vocabulary shared with the "
            "other side (vocab=...); to encode both sides from Python documents use encode_pairs."
        )
    colls = _collections(docs, spec.field if field is None else field, "encode_records")
    size = max(max((len(c) for c in colls), default=0), 1) if max_items is None else int(max_items)
    return _encode(colls, spec, size, {} if vocab is None else vocab, True, "encode_records")


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
    # one program (per shape and constraint) when called eagerly, rather than a small one for each operation
    return _record_stats(pred_records, pred_mask, ref_records, ref_mask, parse_constraint(constraint))


@functools.partial(jax.jit, static_argnums=4)
def _record_stats(pred_records: Any, pred_mask: Any, ref_records: Any, ref_mask: Any, cons: Constraint) -> jax.Array:
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


def device_stats(metric_cls: Any, pair: RecordPair) -> jax.Array:
    """Per-example statistics ``(n, 3)`` of a :class:`RecordPair` for a qualifying metric, in jnp (jittable).

    Raises:
        TypeError: if the metric does not qualify (pointing to the host-callback path), records are not integers, or
            ``pair`` is not a :class:`RecordPair`.
        ValueError: on inconsistent shapes (at trace time).
    """
    spec = record_spec(metric_cls)
    name = metric_cls.metric_config.name
    if not isinstance(pair, RecordPair):
        raise TypeError(
            f"{name}.from_records expects a RecordPair (from encode_pairs, or built with one vocabulary); found "
            f"{type(pair).__name__}."
        )
    p, pm = _check_side(pair.pred_records, pair.pred_mask, "predicted", spec, name)
    r, rm = _check_side(pair.ref_records, pair.ref_mask, "reference", spec, name)
    check_lengths(p, r, f"{name} device path")
    return record_stats(p, pm, r, rm, spec.constraint)


def vocab_from_labels(labels: Sequence[str], column: str = "label") -> dict[str, dict[Any, int]]:
    """A vocabulary mapping label names to their type ids, ``{column: {label: t}}`` (for :func:`encode_records`)."""
    return {column: {lab: t for t, lab in enumerate(labels)}}
