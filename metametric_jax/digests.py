"""A 64-bit digest of any reference structure, the same in every process: the fingerprint of a paired test's examples.

:func:`reference_digests` hashes a canonical, self-delimiting encoding of each reference (BLAKE2b), never Python's
``hash`` (salted per process), so that two systems scored in different processes, or a state merged from workers, pair
their examples by id *and* reference (:func:`metametric_jax.resampling.fingerprint` sums the digests).
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct as _struct
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["reference_digests"]

# the canonical encoding of a reference: one encoder per type (found once per type), each self-delimiting
_Encoder = Callable[[Any, bytearray], None]


def _encode(x: Any, out: bytearray) -> None:
    """Append a canonical, self-delimiting encoding of ``x`` to ``out`` (the same bytes in every process)."""
    _encoder_of(type(x))(x, out)


def _encoded(x: Any) -> bytes:
    out = bytearray()
    _encode(x, out)
    return bytes(out)


def _none(x: Any, out: bytearray) -> None:
    out += b"N"


def _bool(x: Any, out: bytearray) -> None:
    out += b"B1" if x else b"B0"


def _int(x: Any, out: bytearray) -> None:
    out += b"I%d;" % int(x)


def _float(x: Any, out: bytearray) -> None:
    out += b"F" + _struct.pack("<d", float(x))


def _str(x: str, out: bytearray) -> None:
    data = x.encode("utf-8", "surrogatepass")
    out += b"S%d:" % len(data)
    out += data


def _bytes(x: Any, out: bytearray) -> None:
    out += b"Y%d:" % len(x)
    out += bytes(x)


def _sequence(tag: bytes) -> _Encoder:
    def encode(x: Any, out: bytearray) -> None:
        out += b"%s%d:" % (tag, len(x))
        kind: type | None = None
        encoder: _Encoder = _none
        for item in x:
            if type(item) is not kind:  # items of one type (the usual case) look their encoder up once
                kind = type(item)
                encoder = _encoder_of(kind)
            encoder(item, out)

    return encode


def _encoder_of(kind: type) -> _Encoder:
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        encoder = _ENCODERS[kind] = _encoder_for(kind)
    return encoder


def _sorted(tag: bytes, items: list[Any], out: bytearray) -> None:
    out += b"%s%d:" % (tag, len(items))
    for item in sorted(items):
        out += item


def _set(x: Any, out: bytearray) -> None:
    items: list[bytes | bytearray] = []
    kind: type | None = None
    encoder: _Encoder = _none
    to_bytes: Callable[[Any], bytes] | None = None
    for item in x:
        if type(item) is not kind:  # as in _sequence: one lookup for items of one type
            kind = type(item)
            encoder = _encoder_of(kind)
            to_bytes = _ITEM_BYTES.get(kind)
        if to_bytes is not None:
            items.append(to_bytes(item))
            continue
        encoded = bytearray()
        encoder(item, encoded)
        items.append(encoded)
    _sorted(b"E", items, out)


def _mapping(x: Any, out: bytearray) -> None:
    _sorted(b"D", [_encoded(k) + _encoded(v) for k, v in x.items()], out)


def _array(x: Any, out: bytearray) -> None:
    arr = np.ascontiguousarray(np.asarray(x))
    if arr.dtype == object:
        out += b"O%s:" % repr(arr.shape).encode()
        for item in arr.ravel().tolist():
            _encode(item, out)
        return
    data = arr.tobytes()
    out += b"A%s%s%d:" % (arr.dtype.str.encode(), repr(arr.shape).encode(), len(data))
    out += data


def _dataclass(cls: type) -> _Encoder:
    """A dataclass by class name and fields, in a straight-line encoder of its own.

    Fields annotated ``int`` or ``str`` are formatted inline when they hold one, the others appended by their own
    encoders; the bytes are :func:`_object`'s (a field whose value is not of its annotated type takes that encoder).
    """
    fields = dataclasses.fields(cls)
    generic = _object(cls, [f.name for f in fields])
    if not fields:
        return generic
    kinds = [f.type if f.type in ("int", "str") else getattr(f.type, "__name__", None) for f in fields]
    name = cls.__qualname__.encode("utf-8")
    lines: list[str] = []
    guards: list[str] = []
    body: list[str] = []
    args: list[str] = []  # the formatting's arguments since the last flush
    patterns: list[bytes] = []
    formats: list[str] = []  # the expression of each formatting, in order
    pattern = [b"C%d:%s%d:" % (len(name), name, len(fields))]

    def flush() -> None:  # one formatting of the bytes gathered since the last field of another kind
        patterns.append(b"".join(pattern))
        formats.append(f"patterns[{len(patterns) - 1}]" + (f" % ({', '.join(args)},)" if args else ""))
        body.append(f"    out += {formats[-1]}")
        pattern.clear()
        args.clear()

    for k, (f, kind) in enumerate(zip(fields, kinds)):
        lines.append(f"    v{k} = x.{f.name}")
        if kind == "int":
            guards.append(f"type(v{k}) is int")
            pattern.extend([_encoded(f.name).replace(b"%", b"%%"), b"I%d;"])
            args.append(f"v{k}")
        elif kind == "str":
            guards.append(f"type(v{k}) is str")
            lines.append(f"    b{k} = v{k}.encode('utf-8', 'surrogatepass') if type(v{k}) is str else b''")
            pattern.extend([_encoded(f.name).replace(b"%", b"%%"), b"S%d:%s"])
            args.append(f"len(b{k}), b{k}")
        else:
            pattern.append(_encoded(f.name).replace(b"%", b"%%"))
            flush()
            body.append(f"    _encode(v{k}, out)")
    if pattern:
        flush()
    condition = f"    if not ({' and '.join(guards)}):"
    guard = [condition, "        return generic(x, out)"] if guards else []
    source = "\n".join(["def encode(x, out):", *lines, *guard, *body])
    inline = len(guards) == len(fields)  # every field int or str: one formatting gives the bytes
    if inline:  # the bytes alone, for the items of a set
        slow = [condition, "        out = bytearray()", "        generic(x, out)", "        return out"]
        source += "\n" + "\n".join(["def encoded(x):", *lines, *slow, f"    return {formats[0]}"])
    namespace: dict[str, Any] = {"generic": generic, "patterns": patterns, "_encode": _encode}
    exec(source, namespace)  # noqa: S102 - a straight-line encoder of this class's fields, from its field names
    if inline:
        _ITEM_BYTES[cls] = namespace["encoded"]
    return namespace["encode"]


def _object(cls: type, names: list[str] | None) -> _Encoder:
    """Objects by class name and fields (``names``; ``None``: the instance's attributes, sorted)."""
    name = cls.__qualname__.encode("utf-8")
    keys = None if names is None else [(k, _encoded(k)) for k in names]

    def encode(x: Any, out: bytearray) -> None:
        fields = keys if keys is not None else [(k, _encoded(k)) for k in sorted(_attributes(x))]
        out += b"C%d:%s%d:" % (len(name), name, len(fields))
        for key, encoded_key in fields:
            out += encoded_key
            value = getattr(x, key)
            kind = type(value)
            if kind is int:  # the commonest fields inline (the bytes of _int and _str)
                out += b"I%d;" % value
            elif kind is str:
                data = value.encode("utf-8", "surrogatepass")
                out += b"S%d:" % len(data)
                out += data
            else:
                _encode(value, out)

    return encode


def _attributes(x: Any) -> list[str]:
    """The attribute names of an object without a repr of its own (its ``__dict__``, else its slots)."""
    if hasattr(x, "__dict__"):
        return list(vars(x))
    names: list[str] = []
    for c in type(x).__mro__:
        slots = c.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [k for k in dict.fromkeys(names) if hasattr(x, k)]


def _repr(x: Any, out: bytearray) -> None:
    text = f"{type(x).__qualname__}:{x!r}".encode("utf-8", "surrogatepass")
    out += b"R%d:" % len(text)
    out += text


def _encoder_for(cls: type) -> _Encoder:
    if cls is type(None):
        return _none
    if issubclass(cls, (bool, np.bool_)):
        return _bool
    if issubclass(cls, (int, np.integer)):
        return _int
    if issubclass(cls, (float, np.floating)):
        return _float
    if issubclass(cls, str):
        return _str
    if issubclass(cls, (bytes, bytearray)):
        return _bytes
    if issubclass(cls, (list, tuple)):
        return _sequence(b"L" if issubclass(cls, list) else b"T")
    if issubclass(cls, (set, frozenset)):
        return _set
    if issubclass(cls, Mapping):
        return _mapping
    if dataclasses.is_dataclass(cls):
        return _dataclass(cls)
    if issubclass(cls, np.ndarray) or _is_jax_array_type(cls):
        return _array
    if cls.__repr__ is object.__repr__:  # the default repr names an address: the attributes instead
        return _object(cls, None)
    return _repr


_ENCODERS: dict[type, _Encoder] = {}
#: dataclasses whose fields are all annotated ``int`` or ``str``: their encoding as a value (for sets' items)
_ITEM_BYTES: dict[type, Callable[[Any], bytes]] = {}


def _is_jax_array_type(cls: type) -> bool:
    """Whether ``cls`` is JAX's array type (without importing JAX: an array exists only once JAX is imported)."""
    jax = sys.modules.get("jax")
    return jax is not None and issubclass(cls, jax.Array)


def reference_digests(references: Sequence[Any]) -> np.ndarray:
    """A 64-bit digest of each reference, uint64 ``(n,)``: the same in every process (never Python's ``hash``).

    The digest is BLAKE2b of a canonical encoding: dataclasses by class name and fields, lists and tuples in order,
    sets, frozensets and mappings by their items' sorted encodings, strings, bytes and numbers by type and value,
    NumPy arrays by dtype, shape and bytes, anything else by its class name and ``repr``.

    >>> d = reference_digests([frozenset({"a", "b"}), frozenset({"b", "a"}), ["a", "b"]])
    >>> bool(d[0] == d[1]), bool(d[0] == d[2])
    (True, False)
    """
    digests = []
    blake2b = hashlib.blake2b
    for ref in references:
        encoded = bytearray()
        _encode(ref, encoded)
        digests.append(blake2b(encoded, digest_size=8).digest())
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)
