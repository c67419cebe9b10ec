r"""Composite similarities: the product of a dataclass's fields and the per-case similarity of a union type.

Chen et al., "A Unified View of Evaluation Metrics for Structured Prediction" (EMNLP 2023), §3: a dataclass compares
as the product of its fields' similarities (with empty fields neutral, see :class:`Product`), a union type case by
case (0 across cases).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from metametric_jax.explain import Match, join
from metametric_jax.normalizer import is_empty_pair
from metametric_jax.similarity import IDENTITY, Discrete, Mode, Similarity, accepted_types, discrete_gram

__all__ = ["Product", "UnionSim", "check_when_built"]


# ------------------------------------------------------------------------------------------------------ composites
class Product(Similarity):
    r"""A dataclass's similarity: the product of its fields' similarities, :math:`\prod_f \phi_f(x.f, y.f)`.

    A field empty on both sides is neutral: it neither adds nor removes agreement, so it is left out of the product
    (as in the original metametric, where an empty collection matches an empty one). A field is empty when its
    self-similarity is 0 (:func:`metametric_jax.normalizer.is_empty_pair`); for :math:`\phi(x, y)` the field is left
    out when both :math:`\phi_f(x.f, x.f)` and :math:`\phi_f(y.f, y.f)` are 0, for :math:`\phi(x, x)` when
    :math:`\phi_f(x.f, x.f)` is 0. Only when every field is left out are the two structures empty: then the product
    is 0 (an empty pair adds nothing to micro totals, and a normalized score of two empty structures is
    ``empty_score``). So ``Doc(entities=[e], relations=[])`` against ``Doc(entities=[e'], relations=[])`` is scored
    on its entities alone, and a document with entities and no relations keeps its entities in precision and recall.

    Args:
        cls: the dataclass (instances are type-checked, their fields' leaves too).
        fields: similarity per field name, in field order.
    """

    def __init__(self, cls: type, fields: Mapping[str, Similarity]) -> None:
        self.cls = cls
        self.fields = dict(fields)
        self.name = getattr(cls, "__name__", "product")
        self._getters = {f: operator.attrgetter(f) for f in self.fields}

    def _check(self, x: Any) -> None:
        if not isinstance(x, self.cls):
            raise TypeError(f"{self.name} similarity expects {self.name} instances; found {type(x).__name__}: {x!r}.")

    def _check_instances(self, values: Sequence[Any]) -> None:
        for t in set(map(type, values)):
            if not issubclass(t, self.cls):
                self._check(next(v for v in values if type(v) is t))

    def check(self, values: Sequence[Any]) -> None:
        values = values if isinstance(values, list) else list(values)
        self._check_instances(values)
        self.check_fields(values)

    def check_fields(self, values: Sequence[Any]) -> None:
        """Check the field values of instances of the class (see :meth:`Similarity.check`)."""
        for f, sim in self.fields.items():
            getter = self._getters[f]
            accept = sim.accepted if isinstance(sim, Discrete) else None
            if accept is not None and all(issubclass(t, accept) for t in set(map(type, map(getter, values)))):
                continue  # the common case, in one C-level pass: every value has the declared type
            try:
                sim.check(list(map(getter, values)))
            except TypeError as err:
                raise TypeError(f"{self.name}.{f}: {err}") from None

    @functools.cached_property
    def leaf_types(self) -> tuple[tuple[str, tuple[type, ...]], ...] | None:
        """``(field, accepted types)`` of every type-checked field; ``None`` if a field is not discrete."""
        if not all(isinstance(sim, Discrete) for sim in self.fields.values()):
            return None
        return tuple((f, sim.accepted) for f, sim in self.fields.items() if sim.accepted is not None)  # type: ignore

    @property
    def checked_when_built(self) -> bool:
        """Whether instances of exactly ``cls`` had their fields checked when built (see :func:`check_when_built`)."""
        spec = self.cls.__dict__.get(_BUILT_CHECK)
        return spec is not None and spec == self.leaf_types

    def unchecked(self, values: Sequence[Any]) -> bool:
        """Whether some of ``values`` (instances of exactly ``cls``) still need :meth:`check_fields`.

        Where no instance that failed the check when built is alive (:data:`_ALIVE`), none of ``values`` is marked:
        no mark is read.
        """
        if not self.checked_when_built:
            return True
        alive = self.cls.__dict__.get(_ALIVE)
        return (alive is None or bool(alive)) and any(map(_WRONG_GETTER, values))

    @functools.cached_property
    def never_empty(self) -> bool:  # type: ignore[override]
        return any(sim.never_empty for sim in self.fields.values())

    @staticmethod
    def combine(parts: Sequence[tuple[Any, Any, Any]]) -> tuple[Any, Any, Any]:
        """Combine per-field ``(φ(x, y), φ(x, x), φ(y, y))`` arrays by the neutral-field rule (class docstring)."""
        xy = xx = yy = None
        for fxy, fxx, fyy in parts:
            both = is_empty_pair(fxx, fyy)
            xy = _times(xy, fxy, both)
            xx = _times(xx, fxx, fxx == 0)
            yy = _times(yy, fyy, fyy == 0)
        return _finish(xy), _finish(xx), _finish(yy)

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        self._check(x)
        self._check(y)
        prod, taken = 1.0, False
        for f, sim in self.fields.items():
            fx, fy = getattr(x, f), getattr(y, f)
            s = sim.score(fx, fy, mode)
            if s == 0.0:
                if sim.never_empty or sim.self_score(fx, mode[0]) != 0.0 or sim.self_score(fy, mode[1]) != 0.0:
                    return 0.0
                continue  # empty on both sides: neutral
            prod, taken = prod * s, True
        return prod if taken else 0.0

    def self_score(self, x: Any, side: str = "p") -> float:
        self._check(x)
        s, any_part = 1.0, False
        for f, sim in self.fields.items():
            v = sim.self_score(getattr(x, f), side)
            if v != 0.0:
                s, any_part = s * v, True
        return s if any_part else 0.0

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        key = self.discrete_key
        self.check(xs)
        self.check(ys)
        if key is IDENTITY and any(type(v) is not self.cls for v in (*xs, *ys)):
            key = self.field_key  # subclass instances: dataclass equality would demand the exact class
        if key is not None:
            return discrete_gram(xs, ys, key)
        parts = []
        shape = (len(xs), len(ys))
        for f, sim in self.fields.items():
            g = sim.gram([getattr(x, f) for x in xs], [getattr(y, f) for y in ys], mode)
            if sim.never_empty:
                parts.append((g, np.ones(shape), np.ones(shape)))
            else:
                sx = sim.self_scores([getattr(x, f) for x in xs], mode[0])[:, None]
                sy = sim.self_scores([getattr(y, f) for y in ys], mode[1])[None, :]
                parts.append((g, np.broadcast_to(sx, shape), np.broadcast_to(sy, shape)))
        return np.asarray(self.combine(parts)[0], dtype=np.float64).reshape(shape)

    def self_scores(self, xs: Sequence[Any], side: str = "p") -> np.ndarray:
        self.check(xs)
        parts = []
        for f, sim in self.fields.items():
            v = sim.self_scores([getattr(x, f) for x in xs], side)
            parts.append((v, v, v))
        return np.asarray(self.combine(parts)[1], dtype=np.float64).reshape(len(xs))

    def batch_stats(self, predictions: Sequence[Any], references: Sequence[Any]) -> np.ndarray:
        self._check_instances(predictions)  # the fields' own batch_stats check their values
        self._check_instances(references)
        parts = []
        for f, sim in self.fields.items():
            getter = self._getters[f]
            st = sim.batch_stats(list(map(getter, predictions)), list(map(getter, references)))
            if len(self.fields) == 1:  # one field: the neutral rule leaves its statistics as they are
                return np.asarray(st, dtype=np.float64).reshape(-1, 3)
            parts.append((st[:, 0], st[:, 1], st[:, 2]))
        if not parts:
            return np.zeros((len(predictions), 3), dtype=np.float64)
        return np.stack(self.combine(parts), axis=1).astype(np.float64)

    @functools.cached_property
    def discrete_key(self) -> Any:
        keys = {f: sim.discrete_key for f, sim in self.fields.items()}
        if any(k is None for k in keys.values()):
            return None
        if all(k is IDENTITY for k in keys.values()) and _eq_is_fieldwise(self.cls, list(self.fields)):
            return IDENTITY
        return self.field_key

    @functools.cached_property
    def field_key(self) -> Any:
        """A key function equal on two instances iff every field's discrete key is (``None`` if a field is soft)."""
        keys = {f: sim.discrete_key for f, sim in self.fields.items()}
        if any(k is None for k in keys.values()):
            return None
        names = list(self.fields)
        fns = [(lambda v: v) if keys[f] is IDENTITY else keys[f] for f in names]
        return lambda x: tuple(fn(getattr(x, f)) for fn, f in zip(fns, names))

    @property
    def has_variables(self) -> bool:
        return any(sim.has_variables for sim in self.fields.values())

    @functools.cached_property
    def self_bounded(self) -> bool:  # type: ignore[override]
        return all(sim.self_bounded for sim in self.fields.values())

    def bindings(self, x: Any, y: Any) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        for f, sim in self.fields.items():
            out.extend(sim.bindings(getattr(x, f), getattr(y, f)))
        return out

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        out: list[Match] = []
        for f, sim in self.fields.items():
            fx, fy = getattr(x, f), getattr(y, f)
            qx, qy = join(px, f), join(py, f)
            s = sim.score(fx, fy, mode)
            if s > 0:
                out.append(Match(qx, qy, fx, fy, s))
                out.extend(sim.explain_matches(fx, fy, qx, qy, mode))
        return out


def _times(acc: Any, value: Any, left_out: Any) -> Any:
    """One factor of a product by the neutral-field rule: ``(product, taken)``, ``value`` skipped where left out."""
    if acc is None:
        acc = (np.ones_like(np.asarray(value, dtype=np.float64)), np.zeros(np.shape(value), dtype=bool))
    prod, taken = acc
    return np.where(left_out, prod, prod * value), taken | ~np.asarray(left_out, dtype=bool)


def _finish(acc: Any) -> Any:
    if acc is None:
        return np.float64(0.0)
    prod, taken = acc
    return np.where(taken, prod, 0.0)


def _eq_is_fieldwise(cls: type, names: list[str]) -> bool:
    """Whether ``cls`` instances are hashable with dataclass equality over exactly ``names``."""
    if not dataclasses.is_dataclass(cls) or getattr(cls, "__hash__", None) is None:
        return False
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.eq:
        return False
    compared = [f.name for f in dataclasses.fields(cls) if f.compare]
    if compared != names:
        return False
    eq_code = getattr(getattr(cls, "__eq__", None), "__code__", None)
    return eq_code is not None and eq_code.co_filename == "<string>"  # generated by @dataclass, not user-written


def _runtime_test(t: Any) -> Callable[[Any], bool]:
    """A predicate telling whether a value belongs to the case type ``t`` (generics by their origin)."""
    if t is None or t is type(None):
        return lambda x: x is None
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        return _runtime_test(typing.get_args(t)[0])
    if origin is typing.Literal:
        allowed = typing.get_args(t)
        return lambda x: any(x == a and type(x) is type(a) for a in allowed)
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(t, types.UnionType)):
        tests = [_runtime_test(a) for a in typing.get_args(t)]
        return lambda x: any(test(x) for test in tests)
    if origin is not None and isinstance(origin, type):
        return lambda x: isinstance(x, origin) and not (origin is not str and isinstance(x, str))
    if isinstance(t, type):
        accept = accepted_types(t) or (object,)
        return lambda x: isinstance(x, accept)
    return lambda x: True


class UnionSim(Similarity):
    """Per-case similarity of a union type; 0 across cases.

    Args:
        cases: similarity per case type, tried in order with ``isinstance``.
    """

    def __init__(self, cases: Mapping[Any, Similarity]) -> None:
        self.cases = dict(cases)
        self.name = " | ".join(getattr(t, "__name__", str(t)) for t in self.cases)
        self._tests = [(t, _runtime_test(t)) for t in self.cases]

    def case_of(self, x: Any) -> Any:
        """The case type of ``x`` (the first case whose runtime check accepts it)."""
        for t, test in self._tests:
            if test(x):
                return t
        raise TypeError(f"Union similarity over ({self.name}) found a value of type {type(x).__name__}: {x!r}.")

    def check(self, values: Sequence[Any]) -> None:
        by_case: dict[Any, list[Any]] = {}
        for v in values:
            by_case.setdefault(self.case_of(v), []).append(v)
        for t, vs in by_case.items():
            self.cases[t].check(vs)

    @functools.cached_property
    def never_empty(self) -> bool:  # type: ignore[override]
        return all(sim.never_empty for sim in self.cases.values())

    def score(self, x: Any, y: Any, mode: Mode = "pr") -> float:
        t = self.case_of(x)
        if self.case_of(y) is not t:
            return 0.0
        return self.cases[t].score(x, y, mode)

    def self_score(self, x: Any, side: str = "p") -> float:
        return self.cases[self.case_of(x)].self_score(x, side)

    def gram(self, xs: Sequence[Any], ys: Sequence[Any], mode: Mode = "pr") -> np.ndarray:
        g = np.zeros((len(xs), len(ys)), dtype=np.float64)
        tx = [self.case_of(x) for x in xs]
        ty = [self.case_of(y) for y in ys]
        for t, sim in self.cases.items():
            ix = [i for i, c in enumerate(tx) if c is t]
            iy = [j for j, c in enumerate(ty) if c is t]
            if ix and iy:
                g[np.ix_(ix, iy)] = sim.gram([xs[i] for i in ix], [ys[j] for j in iy], mode)
        return g

    @functools.cached_property
    def discrete_key(self) -> Any:
        keys = {t: sim.discrete_key for t, sim in self.cases.items()}
        if any(k is None for k in keys.values()):
            return None

        def key(x: Any) -> Any:
            t = self.case_of(x)
            k = keys[t]
            return (t, x if k is IDENTITY else k(x))

        return key

    @property
    def has_variables(self) -> bool:
        return any(sim.has_variables for sim in self.cases.values())

    @functools.cached_property
    def self_bounded(self) -> bool:  # type: ignore[override]
        return all(sim.self_bounded for sim in self.cases.values())

    def bindings(self, x: Any, y: Any) -> list[tuple[Any, Any]]:
        t = self.case_of(x)
        return self.cases[t].bindings(x, y) if self.case_of(y) is t else []

    def explain_matches(self, x: Any, y: Any, px: str, py: str, mode: Mode = "pr") -> list[Match]:
        t = self.case_of(x)
        if self.case_of(y) is not t:
            return []
        return self.cases[t].explain_matches(x, y, px, py, mode)


# ---------------------------------------------------------------------------------------- checks when built
_BUILT_CHECK = "_metametric_built_check"  # class attribute: the leaf types its constructor checks
_WRONG = "_metametric_wrong_leaf"  # True on an instance whose fields failed the check when it was built
_WRONG_GETTER = operator.attrgetter(_WRONG)
# class attribute: the marked instances still alive (:class:`_Alive`), or None for a class whose instances take no
# weak reference (then every mark is read)
_ALIVE = "_metametric_wrong_alive"


class _Alive(weakref.WeakValueDictionary):  # type: ignore[type-arg]
    """A class's marked instances still alive, by id (weak references: an instance leaves when it is collected).

    Pickled as a new empty registry: a class pickled by value (cloudpickle, for a class defined in ``__main__`` or in
    a function) carries its registry, and weak references cannot be pickled; the copy's own marked instances fill it.
    """

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return (_Alive, ())


def check_when_built(product: Product) -> bool:
    """Check the fields of each new instance of ``product.cls`` once, when it is built; ``False`` where unsound.

    ``@metametric`` calls this for the classes it decorates. It applies to a frozen dataclass whose instances have a
    ``__dict__`` (no ``slots=True``) and whose fields are all discrete (ints, strings, enums, ...): the fields of
    such an instance cannot change after ``__init__``. The class's ``__init__`` is wrapped (same signature) and so is
    ``__setstate__`` (copies, unpickling): after the original runs, the fields are checked by the rule of
    :meth:`Product.check_fields`, and an instance that fails it is marked. Nothing is raised when an instance is
    built (tracers and placeholders still construct); a marked instance raises the usual ``TypeError`` when it is
    scored. A marked instance is also held, by a weak reference, in its class's registry (:class:`_Alive`) until it
    is collected. The vectorized fast path of collections then reads no mark while that registry is empty, and one
    mark per instance of exactly this class otherwise, instead of every field's type: about 1% of a streamed span F1;
    building an instance costs about 0.1 µs more. Bypassing the constructor (``object.__setattr__`` on a frozen
    instance) is not covered.
    """
    cls = product.cls
    params = getattr(cls, "__dataclass_params__", None)
    if (
        product.leaf_types is None
        or params is None
        or not params.frozen
        or getattr(cls, "__dictoffset__", 0) == 0
        or _BUILT_CHECK in cls.__dict__
    ):
        return False

    alive = _Alive() if getattr(cls, "__weakrefoffset__", 0) else None

    def recheck(self: Any) -> None:
        try:
            product.check_fields([self])
        except Exception:  # noqa: BLE001  # any failure: scoring runs the full check and raises its error
            self.__dict__[_WRONG] = True
            if alive is not None:
                alive[id(self)] = self
        else:
            self.__dict__.pop(_WRONG, None)
            if alive is not None:
                alive.pop(id(self), None)

    init = _wrapped_init(cls.__init__, product.leaf_types, recheck)  # type: ignore[misc]
    if init is None:
        return False
    own_setstate = getattr(cls, "__setstate__", None)

    def setstate(self: Any, state: Any) -> None:
        if own_setstate is not None:
            own_setstate(self, state)
        else:
            state, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
            if state:
                self.__dict__.update(state)
            for k, v in (slots or {}).items():
                object.__setattr__(self, k, v)
        recheck(self)

    cls.__init__ = init  # type: ignore[misc]
    cls.__setstate__ = functools.wraps(own_setstate)(setstate) if own_setstate else setstate  # type: ignore
    setattr(cls, _WRONG, False)
    setattr(cls, _ALIVE, alive)
    setattr(cls, _BUILT_CHECK, product.leaf_types)
    return True


def _wrapped_init(init: Any, leaves: Any, recheck: Callable[[Any], None]) -> Any:
    """``init`` followed by the leaf check, with ``init``'s own signature (no ``*args`` forwarding cost).

    The common case (every leaf value of exactly its declared type) is one identity test per field; anything else
    goes to ``recheck``, which applies the full rule.
    """
    try:
        sig = inspect.signature(init)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if not params or any(p.name.startswith("_mm_") for p in params):
        return None
    ns: dict[str, Any] = {"_mm_init": init, "_mm_recheck": recheck, "_mm_type": type}
    head, call, marker_done = [], [], False
    for i, p in enumerate(params):
        text = p.name
        if p.default is not inspect.Parameter.empty:
            ns[f"_mm_d{i}"] = p.default
            text += f"=_mm_d{i}"
        if p.kind is p.VAR_POSITIONAL:
            head.append("*" + p.name)
            call.append("*" + p.name)
            marker_done = True
            continue
        if p.kind is p.VAR_KEYWORD:
            head.append("**" + p.name)
            call.append("**" + p.name)
            continue
        if p.kind is p.KEYWORD_ONLY:
            if not marker_done:
                head.append("*")
                marker_done = True
            call.append(f"{p.name}={p.name}")
        else:
            call.append(p.name)
        head.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            head.append("/")
    self_name = params[0].name
    tests = []
    for j, (f, accepted) in enumerate(leaves):
        ns[f"_mm_t{j}"] = accepted[0]
        tests.append(f"_mm_type({self_name}.{f}) is _mm_t{j}")
    body = " and ".join(tests) or "True"
    src = (
        f"def __init__({', '.join(head)}):\n"
        f"    _mm_init({', '.join(call)})\n"
        f"    try:\n"
        f"        _mm_ok = {body}\n"
        f"    except AttributeError:\n"
        f"        _mm_ok = False\n"
        f"    if not _mm_ok:\n"
        f"        _mm_recheck({self_name})\n"
    )
    exec(src, ns)  # noqa: S102  # generated from the signature above, as dataclasses generates __init__
    return functools.wraps(init)(ns["__init__"])
