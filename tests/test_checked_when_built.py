"""Leaf types checked when an instance is built: frozen ``@metametric`` dataclasses of discrete fields.

Scoring such instances reads one mark per instance instead of every field's type; these tests hold that the figures
and the errors are exactly those of the full check, whatever the way an instance came to be.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import KW_ONLY, InitVar, dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metametric_jax import dsl, make_metric, metametric, metric_of
from metametric_jax.composite import Product


@metametric(normalizer="none")
@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class PlainSpan:  # the same fields, not decorated: checked field by field at every scoring
    start: int
    end: int
    label: str


@metametric(normalizer="f1")
@dataclass(frozen=True)
class Doc:
    spans: frozenset[Span]


@metametric(normalizer="f1")
@dataclass(frozen=True)
class PlainDoc:
    spans: frozenset[PlainSpan]


def _inner(doc_cls: type) -> Product:
    inner = metric_of(doc_cls).metric_config.source.fields["spans"].inner
    assert isinstance(inner, Product)
    return inner


def _outcome(fn):
    try:
        return ("ok", np.asarray(fn()).tolist())
    except TypeError as err:
        return ("TypeError", str(err).replace("PlainSpan", "Span"))


def test_the_decorated_class_is_checked_when_built_and_the_plain_one_is_not() -> None:
    assert _inner(Doc).checked_when_built and hasattr(Span.__init__, "__wrapped__")
    assert not _inner(PlainDoc).checked_when_built and not hasattr(PlainSpan.__init__, "__wrapped__")
    assert inspect.signature(Span) == inspect.signature(PlainSpan)


@pytest.mark.parametrize("bad", [("0", 1, "a"), (0.0, 1, "a"), (0, 1, 3), (None, 1, "a")])
def test_building_never_raises_and_scoring_raises_the_full_checks_error(bad: tuple) -> None:
    s = Span(*bad)  # no error here: tracers and placeholders construct
    good = Span(0, 1, "a")
    M = metric_of(Doc)
    with pytest.raises(TypeError, match=r"Span\.(start|label)") as fast:
        M.from_model_output([Doc(frozenset({good}))] * 2, [Doc(frozenset()), Doc(frozenset({s}))])
    with pytest.raises(TypeError) as plain:
        metric_of(PlainDoc).from_model_output(
            [PlainDoc(frozenset({PlainSpan(0, 1, "a")}))] * 2,
            [PlainDoc(frozenset()), PlainDoc(frozenset({PlainSpan(*bad)}))],
        )
    assert str(fast.value) == str(plain.value).replace("PlainSpan", "Span")
    with pytest.raises(TypeError, match="Span"):
        M.score(Doc(frozenset({s})), Doc(frozenset({good})))
    with pytest.raises(TypeError, match="Span"):
        make_metric(dsl.set_matching(dsl.auto(Span), constraint="~"), "f1").score([s], [good])


def test_copies_pickles_and_replacements_keep_or_redo_the_check() -> None:
    good, bad = Span(0, 1, "a"), Span("0", 1, "a")
    M = metric_of(Doc)
    for make in (copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        assert make(good) == good and M.score(Doc(frozenset({make(good)})), Doc(frozenset({good}))) == 1.0
        with pytest.raises(TypeError, match=r"Span\.start"):
            M.batch_stats([Doc(frozenset({make(bad)}))], [Doc(frozenset({good}))])
    with pytest.raises(TypeError, match=r"Span\.start"):
        M.batch_stats([Doc(frozenset({dataclasses.replace(good, start="0")}))], [Doc(frozenset({good}))])
    # state from elsewhere (an older definition of the class, say) goes through the check when it is restored
    old = Span.__new__(Span)
    old.__setstate__({"start": "0", "end": 1, "label": "a"})
    with pytest.raises(TypeError, match=r"Span\.start"):
        M.batch_stats([Doc(frozenset({old}))], [Doc(frozenset({good}))])
    fixed = pickle.loads(pickle.dumps(old))
    object.__setattr__(fixed, "start", 0)
    fixed.__setstate__(vars(fixed))  # a restored state that is correct clears the mark
    assert M.batch_stats([Doc(frozenset({fixed}))], [Doc(frozenset({good}))]).tolist() == [[1.0, 1.0, 1.0]]


def test_the_fast_path_reads_the_mark_instead_of_the_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    inner = _inner(Doc)
    calls: list[int] = []
    full = Product.check_fields
    monkeypatch.setattr(Product, "check_fields", lambda self, values: (calls.append(len(values)), full(self, values)))
    docs = [Doc(frozenset({Span(i, i + 1, "a"), Span(i, i + 2, "b")})) for i in range(5)]
    metric_of(Doc).batch_stats(docs, docs[::-1])
    assert calls == [] and not inner.unchecked([s for d in docs for s in d.spans])
    marked = Span(0, 1, 2)
    assert inner.unchecked([Span(0, 1, "a"), marked])
    with pytest.raises(TypeError, match=r"Span\.label"):
        metric_of(Doc).batch_stats([Doc(frozenset({marked}))], [Doc(frozenset())])
    assert calls  # a marked instance sends the batch through the full check


values = st.one_of(st.integers(-3, 3), st.sampled_from(["0", "1", "a", "b", 1.0, 0.0, True]))
labels = st.one_of(st.sampled_from(["a", "b", "é"]), st.integers(0, 1))
spans = st.tuples(values, values, labels)
docs = st.frozensets(spans, max_size=4)


@settings(max_examples=150, deadline=None)
@given(pairs=st.lists(st.tuples(docs, docs), min_size=1, max_size=5))
def test_checked_when_built_equals_checked_at_every_scoring(pairs) -> None:
    """Generated batches with wrong types, duplicates and empties: same statistics or the same error, every path."""

    def build(doc_cls, span_cls, side):
        return [doc_cls(frozenset(span_cls(*t) for t in pair[side])) for pair in pairs]

    M, P = metric_of(Doc), metric_of(PlainDoc)
    dp, dr = build(Doc, Span, 0), build(Doc, Span, 1)
    pp, pr = build(PlainDoc, PlainSpan, 0), build(PlainDoc, PlainSpan, 1)
    fast = _outcome(lambda: M.batch_stats(dp, dr))
    assert fast == _outcome(lambda: P.batch_stats(pp, pr))
    per_pair = _outcome(lambda: [M.stats(p, r) for p, r in zip(dp, dr)])
    assert per_pair[0] == fast[0]
    if fast[0] == "ok":
        assert per_pair[1] == fast[1]
    copies = [pickle.loads(pickle.dumps(d)) for d in dp]
    again = _outcome(lambda: M.batch_stats(copies, dr))
    if fast[0] == "ok":
        assert again == fast
    else:  # a copied frozenset may iterate in another order: the same field is named, maybe another value
        assert again[0] == "TypeError" and again[1].split(":")[0] == fast[1].split(":")[0]


def test_dataclass_features_behave_as_before() -> None:
    @metametric(normalizer="f1")
    @dataclass(frozen=True)
    class Rich:
        x: int
        y: str = "a"
        _: KW_ONLY
        z: float = 1.0
        w: tuple = field(default_factory=tuple)
        scale: InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "x", self.x * scale)

    assert _rich_product(Rich).checked_when_built
    params = inspect.signature(Rich).parameters
    assert [(p.name, p.kind.name, p.default) for p in params.values() if p.name != "w"] == [
        ("x", "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty),
        ("y", "POSITIONAL_OR_KEYWORD", "a"),
        ("z", "KEYWORD_ONLY", 1.0),
        ("scale", "KEYWORD_ONLY", 1),
    ]
    assert Rich(2, "b", z=3, scale=2) == Rich(4, "b", z=3)  # an int is a float: no mark
    assert "_metametric_wrong_leaf" not in vars(Rich(2, z=3))
    assert vars(Rich(2, z="3"))["_metametric_wrong_leaf"] is True
    with pytest.raises(TypeError, match="unexpected keyword"):
        Rich(1, q=2)  # type: ignore[call-arg]

    @metametric
    @dataclass(frozen=True)
    class Self:
        self: int  # dataclasses name the instance differently then
        other: str

    assert Self(1, "a") == Self(self=1, other="a") and "_metametric_wrong_leaf" in vars(Self("1", "a"))


def _rich_product(cls: type) -> Product:
    source = metric_of(cls).metric_config.source
    assert isinstance(source, Product)
    return source


def test_classes_whose_fields_can_change_or_nest_are_checked_at_every_scoring() -> None:
    @metametric
    @dataclass
    class Mutable:
        x: int

    @metametric
    @dataclass(frozen=True, slots=True)
    class Slotted:
        x: int

    @metametric
    @dataclass(frozen=True)
    class Nested:
        inner: Span
        n: int

    for cls in (Mutable, Slotted, Nested):
        assert not _rich_product(cls).checked_when_built
        assert "_metametric_built_check" not in vars(cls) and not hasattr(cls.__init__, "__wrapped__")
    m = Mutable(1)
    m.x = "1"  # type: ignore[assignment]
    with pytest.raises(TypeError, match=r"Mutable\.x"):
        make_metric(dsl.set_matching(dsl.auto(Mutable)), "f1").score([m], [Mutable(1)])
    with pytest.raises(TypeError, match=r"Slotted\.x"):
        make_metric(dsl.set_matching(dsl.auto(Slotted)), "f1").batch_stats([[Slotted("1")]], [[Slotted(1)]])


def test_tracers_construct_inside_jit() -> None:
    @metametric
    @dataclass(frozen=True)
    class Point:
        x: int
        y: int

    jax.tree_util.register_dataclass(Point, data_fields=["x", "y"], meta_fields=[])
    out = jax.jit(lambda p: jax.tree_util.tree_map(lambda v: v + 1, p))(Point(1, 2))
    assert int(out.x) == 2 and isinstance(out.x, jnp.ndarray)
    with pytest.raises(TypeError, match=r"Point\.x"):
        make_metric(dsl.set_matching(dsl.auto(Point)), "f1").batch_stats([[out]], [[Point(2, 3)]])


def test_the_callback_path_reads_the_same_marks() -> None:
    labels = ["a", "b", 7]  # 7: a wrong type in a str field, decoded on the host inside the callback

    def decode(row: np.ndarray) -> Doc:
        return Doc(frozenset(Span(int(s), int(s) + 1, labels[int(k)]) for s, k in row.reshape(-1, 2) if s >= 0))

    good = np.array([[[0, 0], [2, 1]], [[1, 1], [-1, 0]]])
    other = np.array([[[0, 0], [3, 1]], [[1, 0], [-1, 0]]])
    M = metric_of(Doc)
    host = M.from_model_output([decode(r) for r in good], [decode(r) for r in other]).totals()
    assert M.from_model_output(good, other, decode=decode).totals() == host
    assert jax.jit(lambda p, r: M.from_model_output(p, r, decode=decode))(good, other).totals() == host
    bad = np.array([[[0, 2], [-1, 0]], [[1, 1], [-1, 0]]])
    with pytest.raises(TypeError, match=r"Span\.label"):
        M.from_model_output(bad, other, decode=decode)


def test_marks_are_read_only_while_an_instance_that_failed_the_check_is_alive(monkeypatch) -> None:
    import gc

    from metametric_jax import composite

    product = _inner(Doc)
    reads: list[object] = []
    real = composite._WRONG_GETTER

    def counted(value: object) -> object:
        reads.append(value)
        return real(value)

    monkeypatch.setattr(composite, "_WRONG_GETTER", counted)
    valid = [Span(1, 2, "PER"), Span(3, 4, "LOC")]
    M = metric_of(Doc)
    gc.collect()
    assert not product.unchecked(valid) and reads == []  # no marked instance alive: no mark read
    wrong = Span("1", 2, "PER")  # type: ignore[arg-type]
    assert not product.unchecked(valid) and len(reads) == 2  # one alive: every mark read
    assert product.unchecked([*valid, wrong])
    with pytest.raises(TypeError, match="start"):
        M.batch_stats([Doc(frozenset([wrong]))], [Doc(frozenset(valid))])
    assert M.batch_stats([Doc(frozenset(valid))], [Doc(frozenset(valid[:1]))]).tolist() == [[1.0, 2.0, 1.0]]
    copied = pickle.loads(pickle.dumps(wrong))  # unpickled: checked and registered again
    del wrong
    gc.collect()
    assert product.unchecked([copied])
    del copied
    gc.collect()
    reads.clear()
    assert not product.unchecked(valid) and reads == []  # collected: the marks are not read again


def test_a_class_without_weak_references_reads_every_mark(monkeypatch) -> None:
    from metametric_jax import composite

    @metametric
    @dataclass(frozen=True)
    class NoWeak:
        __slots__ = ("__dict__",)  # a __dict__ (fields checked when built) but no weak references
        a: int

    product = _rich_product(NoWeak)
    assert product.checked_when_built and NoWeak.__weakrefoffset__ == 0
    reads: list[object] = []
    real = composite._WRONG_GETTER
    monkeypatch.setattr(composite, "_WRONG_GETTER", lambda v: reads.append(v) or real(v))
    assert not product.unchecked([NoWeak(1)]) and len(reads) == 1
    assert product.unchecked([NoWeak("1")])  # type: ignore[arg-type]


def test_a_class_pickled_by_value_carries_no_registry(tmp_path) -> None:
    import subprocess
    import sys

    import cloudpickle

    # classes made in a function: cloudpickle copies them and their constructors by value
    Local = metametric(dataclasses.make_dataclass("Local", [("a", int), ("b", str)], frozen=True))
    Bag = metametric(normalizer="f1")(dataclasses.make_dataclass("Bag", [("items", frozenset[Local])], frozen=True))
    assert _rich_product(Local).checked_when_built
    wrong = Local("1", "x")  # type: ignore[arg-type]  # a marked instance alive while the class is pickled
    good = [Local(1, "x"), Local(2, "y")]
    path = tmp_path / "classes.pkl"
    path.write_bytes(cloudpickle.dumps((Bag, Local, good, wrong)))
    script = f"""
import pickle
from metametric_jax import metric_of
Bag, Local, good, wrong = pickle.loads(open({str(path)!r}, "rb").read())
m = metric_of(Bag)
print(m.batch_stats([Bag(frozenset(good))], [Bag(frozenset(good[:1]))]).tolist())
for bad in (wrong, Local("2", "x")):  # marked in the pickle; built in the copy
    try:
        m.batch_stats([Bag(frozenset([bad]))], [Bag(frozenset())])
    except TypeError as err:
        print("TypeError", str(err).split(":")[0])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[[1.0, 2.0, 1.0]]", "TypeError Local.a", "TypeError Local.a"]
