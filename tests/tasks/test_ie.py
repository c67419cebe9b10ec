"""Information extraction: figures against plain counting on generated documents, Li, Ji and Huang (2013)'s example,
parity with the original metametric, the JSON Lines reader and its errors."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from metametric.metrics import event_extraction as mm_event
from metametric.structures import ie as mm_ie

import metametric_jax
from metametric_jax.errors import InputFormatError
from metametric_jax.tasks.ie import (
    FIGURES,
    Argument,
    Document,
    Event,
    IEMetric,
    Relation,
    document_stats,
    read_documents,
    score,
    score_files,
)
from metametric_jax.tasks.ner import Span
from metametric_jax.testing import check_accumulator_laws

SAMPLE = Path(metametric_jax.__file__).resolve().parent / "data" / "ie"


# ------------------------------------------------------------------------------------------ independent reference
def reference_keys(doc: Document, figure: str, strict: bool, directed: bool = True) -> list:
    """The items of a figure as plain tuples, from the definitions of the module docstring."""
    if figure == "entities":
        return [(s.start, s.end) + ((s.label,) if strict else ()) for s in doc.entities]
    if figure == "relations":
        out = []
        for r in doc.relations:
            h = (r.head.start, r.head.end) + ((r.head.label,) if strict else ())
            t = (r.tail.start, r.tail.end) + ((r.tail.label,) if strict else ())
            out.append((r.type, h, t) if directed else (r.type, frozenset(Counter([h, t]).items())))
        return out
    if figure == "triggers":
        return [(e.trigger.start, e.trigger.end) + ((e.trigger.label,) if strict else ()) for e in doc.events]
    return [
        (a.span.start, a.span.end, e.trigger.label) + ((a.role,) if strict else ())
        for e in doc.events
        for a in e.arguments
    ]


def reference_counts(preds, refs, figure, strict, directed=True) -> list[tuple[int, int, int]]:
    rows = []
    for p, r in zip(preds, refs):
        kp, kr = (
            Counter(reference_keys(p, figure, strict, directed)),
            Counter(reference_keys(r, figure, strict, directed)),
        )
        rows.append((sum((kp & kr).values()), sum(kp.values()), sum(kr.values())))
    return rows


def prf(m, p, r) -> tuple[float, float, float]:
    return (
        float(Fraction(m, p)) if p else 0.0,
        float(Fraction(m, r)) if r else 0.0,
        float(Fraction(2 * m, p + r)) if p + r else 0.0,
    )


# --------------------------------------------------------------------------------------------------- generators
LABELS = st.sampled_from(["PER", "ORG", "Ωμέγα", "人物", "a b"])
ROLES = st.sampled_from(["Attacker", "Target", "Place", "受害者"])


@st.composite
def spans(draw, labels=LABELS) -> Span:
    start = draw(st.integers(0, 4))
    return Span(start, start + draw(st.integers(1, 2)), draw(labels))


RELATION_TYPES = st.sampled_from(["Work-For", "Located-In"])
TRIGGERS = spans(st.sampled_from(["Attack", "Die"]))
ENTITIES = st.lists(spans(), max_size=5)


@st.composite
def documents(draw) -> Document:
    entities = draw(ENTITIES)
    pool = entities or [draw(spans())]
    # the arguments are members of the pool, drawn by position: strategies of fixed arguments are built once
    # (a strategy over the pool itself would be built and validated again for every document)
    member = st.integers(0, len(pool) - 1)
    relations = [
        Relation(kind, pool[head], pool[tail])
        for kind, head, tail in draw(st.lists(st.tuples(RELATION_TYPES, member, member), max_size=4))
    ]
    events = [
        Event(trigger, tuple(Argument(pool[k], role) for k, role in arguments))
        for trigger, arguments in draw(
            st.lists(st.tuples(TRIGGERS, st.lists(st.tuples(member, ROLES), max_size=3)), max_size=3)
        )
    ]
    doc = Document(tuple(entities), tuple(relations), tuple(events))
    if draw(st.booleans()):  # duplicates: repeat the whole annotation
        doc = Document(doc.entities * 2, doc.relations * 2, doc.events * 2)
    return doc


corpora = st.integers(0, 6).flatmap(lambda n: st.tuples(st.lists(documents(), min_size=n, max_size=n),
                                                         st.lists(documents(), min_size=n, max_size=n)))  # fmt: skip


# ------------------------------------------------------------------------------------ figures equal plain counting
@settings(max_examples=150, deadline=None)
@given(corpora, st.sampled_from(["strict", "boundaries"]), st.booleans())
def test_score_equals_plain_counting(corpus, mode, directed) -> None:
    preds, refs = corpus
    out = score(preds, refs, mode=mode, directed=directed)
    assert out["mode"] == mode and out["documents"] == len(refs)
    stats = document_stats(preds, refs, mode=mode, directed=directed)
    for figure in FIGURES:
        rows = reference_counts(preds, refs, figure, mode == "strict", directed)
        np.testing.assert_array_equal(stats[figure], np.asarray(rows, np.float64).reshape(-1, 3))
        m, p, r = (int(x) for x in np.asarray(rows, np.int64).reshape(-1, 3).sum(0))
        assert (out[figure]["matched"], out[figure]["predicted"], out[figure]["reference"]) == (m, p, r)
        assert (out[figure]["precision"], out[figure]["recall"], out[figure]["f1"]) == prf(m, p, r)


@settings(max_examples=30, deadline=None)
@given(corpora, st.sampled_from(["strict", "boundaries"]))
def test_accumulator_equals_score_micro_and_macro(corpus, mode) -> None:
    preds, refs = corpus
    out = IEMetric(mode).from_model_output(preds, refs).compute()
    expected = score(preds, refs, mode=mode)
    for figure in FIGURES:
        rows = reference_counts(preds, refs, figure, mode == "strict")
        for key in ("precision", "recall", "f1"):
            assert float(out[figure][key]) == pytest.approx(expected[figure][key], abs=1e-6)
        # macro: per-document F1, two documents without items of the figure score 1 (the empty-structure rule)
        per_doc = [1.0 if p == r == 0 else prf(m, p, r)[2] for m, p, r in rows]
        assert float(out[figure]["macro_f1"]) == pytest.approx(np.mean(per_doc) if rows else 0.0, abs=1e-6)


def test_li_ji_huang_2013_example() -> None:
    """The example sentence of Li, Ji and Huang (ACL 2013), as the original metametric's test encodes it."""
    baghdad, cameraman, died = (4, 11), (15, 24), (25, 29)
    tank, fired, hotel = (38, 51), (52, 57), (65, 80)

    def event(trigger, kind, args):
        return Event(Span(*trigger, kind), tuple(Argument(Span(*s, "X"), role) for s, role in args))

    ref = Document(
        events=(
            event(died, "die", [(baghdad, "place"), (cameraman, "victim"), (tank, "instrument")]),
            event(
                fired, "attack", [(tank, "instrument"), (baghdad, "place"), (cameraman, "target"), (hotel, "target")]
            ),
        )
    )
    pred = Document(
        events=(
            event(died, "die", [(hotel, "place"), (cameraman, "victim")]),
            event(fired, "attack", [(tank, "attacker"), (baghdad, "place"), (hotel, "target")]),
        )
    )
    strict, loose = score([pred], [ref]), score([pred], [ref], mode="boundaries")
    assert strict["triggers"]["f1"] == loose["triggers"]["f1"] == 1.0
    # (matched, predicted, reference) arguments, worked by hand in the paper's example
    assert (loose["arguments"]["matched"], loose["arguments"]["predicted"], loose["arguments"]["reference"]) == (
        4,
        5,
        7,
    )
    assert (strict["arguments"]["matched"], strict["arguments"]["predicted"]) == (3, 5)
    assert strict["arguments"]["f1"] == pytest.approx(0.5)
    assert loose["arguments"]["f1"] == pytest.approx(2 * 4 / 12)


def test_argument_needs_event_type_not_trigger_offsets() -> None:
    arg = Argument(Span(0, 1, "PER"), "Attacker")
    ref = Document(events=(Event(Span(3, 4, "Attack"), (arg,)),))
    moved = Document(events=(Event(Span(5, 6, "Attack"), (arg,)),))  # wrong trigger offsets, right event type
    retyped = Document(events=(Event(Span(3, 4, "Die"), (arg,)),))
    assert score([moved], [ref])["arguments"]["f1"] == 1.0
    assert score([moved], [ref])["triggers"]["f1"] == 0.0
    assert score([retyped], [ref], mode="boundaries")["arguments"]["f1"] == 0.0
    assert score([retyped], [ref], mode="boundaries")["triggers"]["f1"] == 1.0


def test_relation_modes_and_direction() -> None:
    per, org = Span(0, 2, "PER"), Span(5, 6, "ORG")
    ref = Document(relations=(Relation("Work-For", per, org),))
    wrong_type = Document(relations=(Relation("Work-For", per, Span(5, 6, "GPE")),))
    swapped = Document(relations=(Relation("Work-For", org, per),))
    assert score([wrong_type], [ref])["relations"]["f1"] == 0.0
    assert score([wrong_type], [ref], mode="boundaries")["relations"]["f1"] == 1.0
    assert score([swapped], [ref])["relations"]["f1"] == 0.0
    assert score([swapped], [ref], directed=False)["relations"]["f1"] == 1.0


def test_duplicates_match_once() -> None:
    e = Span(0, 1, "PER")
    out = score([Document(entities=(e, e))], [Document(entities=(e,))])
    assert (out["entities"]["matched"], out["entities"]["predicted"], out["entities"]["reference"]) == (1, 2, 1)
    assert out["entities"]["recall"] == 1.0 and out["entities"]["precision"] == 0.5


def test_bad_arguments_raise() -> None:
    doc = Document()
    with pytest.raises(ValueError, match="strict, boundaries"):
        score([doc], [doc], mode="lenient")
    with pytest.raises(TypeError):
        score([doc], [doc], directd=False)  # a typo is not ignored
    with pytest.raises(TypeError, match="predictions\\[0\\] must be a Document"):
        score([[]], [doc])
    with pytest.raises(ValueError, match="one entry per document; found 1 prediction and 2 references"):
        score([doc], [doc, doc])
    with pytest.raises(TypeError, match="Relation.head must be a Span"):
        Relation("r", (0, 1), Span(0, 1, "X"))
    with pytest.raises(TypeError, match="Document.entities items must be Span objects"):
        Document(entities=[(0, 1, "PER")])
    assert Document(entities=[Span(0, 1, "X")]).entities == (Span(0, 1, "X"),)


# ------------------------------------------------------------------------------------------- metametric parity
def _mm_events(doc: Document) -> mm_ie.EventSet:
    def mention(s: Span) -> mm_ie.Mention:
        return mm_ie.Mention(left=s.start, right=s.end)

    return mm_ie.EventSet(
        events=[
            mm_ie.Event(
                trigger=mm_ie.Trigger(mention=mention(e.trigger), type=e.trigger.label),
                args=[mm_ie.Argument(mention=mention(a.span), role=a.role) for a in e.arguments],
            )
            for e in doc.events
        ]
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(documents(), min_size=1, max_size=1), st.lists(documents(), min_size=1, max_size=1))
def test_triggers_equal_original_metametric(pred, ref) -> None:
    # metametric matches events one-to-one on their triggers: on non-empty event lists that is the multiset count
    assume(pred[0].events and ref[0].events)
    mp, mr = _mm_events(pred[0]), _mm_events(ref[0])
    for mode, theirs in (("boundaries", mm_event.trigger_identification), ("strict", mm_event.trigger_classification)):
        stats = document_stats(pred, ref, mode=mode)["triggers"][0]
        assert tuple(stats) == (theirs.score(mp, mr), theirs.score_self(mp), theirs.score_self(mr))


@settings(max_examples=60, deadline=None)
@given(st.lists(documents(), min_size=1, max_size=1), st.lists(documents(), min_size=1, max_size=1))
def test_boundaries_relations_equal_original_metametric(pred, ref) -> None:
    assume(pred[0].relations and ref[0].relations)

    def rel_set(doc: Document) -> mm_ie.RelationSet:
        def mention(s: Span) -> mm_ie.Mention:
            return mm_ie.Mention(left=s.start, right=s.end)

        return mm_ie.RelationSet(
            relations=[mm_ie.Relation(type=r.type, subj=mention(r.head), obj=mention(r.tail)) for r in doc.relations]
        )

    m = mm_ie.RelationSet.metric
    mp, mr = rel_set(pred[0]), rel_set(ref[0])
    stats = document_stats(pred, ref, mode="boundaries")["relations"][0]
    assert tuple(stats) == (m.score(mp, mr), m.score_self(mp), m.score_self(mr))


def random_document(rng: random.Random) -> Document:
    def span(labels=("PER", "ORG")) -> Span:
        start = rng.randrange(5)
        return Span(start, start + rng.randint(1, 2), rng.choice(labels))

    entities = tuple(span() for _ in range(rng.randrange(4)))
    relations = tuple(Relation(rng.choice("rs"), span(), span()) for _ in range(rng.randrange(3)))
    events = tuple(
        Event(span(("Attack", "Die")), tuple(Argument(span(), rng.choice("xy")) for _ in range(rng.randrange(3))))
        for _ in range(rng.randrange(3))
    )
    return Document(entities, relations, events)


def test_accumulator_laws() -> None:
    rng = random.Random(12)
    preds = [random_document(rng) for _ in range(9)]
    refs = [random_document(rng) for _ in range(9)]
    check_accumulator_laws(IEMetric("strict"), preds, refs)
    check_accumulator_laws(IEMetric("boundaries", directed=False), preds, refs)


def test_accumulator_refuses_other_inputs() -> None:
    with pytest.raises(TypeError, match="references\\[1\\] must be a Document"):
        IEMetric("strict").from_model_output([Document(), Document()], [Document(), [Span(0, 1, "X")]])
    with pytest.raises(ValueError, match="strict, boundaries"):
        IEMetric("loose")


def test_ie_metric_is_cached_and_named() -> None:
    assert IEMetric("strict") is IEMetric(mode="strict") is IEMetric("strict", directed=1)
    assert IEMetric("strict") is not IEMetric("boundaries")
    assert "Taillé" in IEMetric("strict").__doc__


# ------------------------------------------------------------------------------------------------ JSON Lines files
def to_json(doc: Document, ids: bool = True) -> dict:
    """The schema of the module docstring, entities referenced by index (relations) and by id (arguments)."""
    entities = list(doc.entities)
    for s in [
        *(s for r in doc.relations for s in (r.head, r.tail)),
        *(a.span for e in doc.events for a in e.arguments),
    ]:
        if s not in entities:
            entities.append(s)
    index = {s: entities.index(s) for s in entities}
    out: dict = {"id": doc.id} if ids and doc.id is not None else {}
    out["tokens"] = ["t"] * 8  # every generated offset ends by 6; both files give as many
    out["entities"] = [{"start": s.start, "end": s.end, "type": s.label, "id": f"e{k}"} for k, s in enumerate(entities)]
    out["relations"] = [{"type": r.type, "head": index[r.head], "tail": index[r.tail]} for r in doc.relations]
    out["events"] = [
        {
            "type": e.trigger.label,
            "trigger": {"start": e.trigger.start, "end": e.trigger.end},
            "arguments": [{"entity": f"e{index[a.span]}", "role": a.role} for a in e.arguments],
        }
        for e in doc.events
    ]
    return out


def write(path: Path, objects, *, bom: bool = False, newline: str = "\n") -> Path:
    text = newline.join(o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in objects) + newline
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


@settings(max_examples=25, deadline=None)
@given(corpora, st.sampled_from(["strict", "boundaries"]))
def test_score_files_equals_score(tmp_path_factory, corpus, mode) -> None:
    preds, refs = corpus
    tmp = tmp_path_factory.mktemp("ie")
    # entities listed for relations/arguments only are extra entities: score the documents as they are read back
    ref_path = write(tmp / "gold.jsonl", [{**to_json(d), "id": f"d{k}"} for k, d in enumerate(refs)])
    pred_path = write(tmp / "pred.jsonl", [{**to_json(d), "id": f"d{k}"} for k, d in enumerate(preds)], bom=True,
                      newline="\r\n")  # fmt: skip
    report = score_files(predictions=pred_path, references=ref_path, mode=mode)
    read_p, read_r = [d for _, d in read_documents(pred_path)], [d for _, d in read_documents(ref_path)]
    assert report.scores == score(read_p, read_r, mode=mode)
    for doc, back in zip(refs, read_r):  # read back exactly (plus the entities only relations or events name)
        assert (back.relations, back.events) == (doc.relations, doc.events)
        assert back.entities[: len(doc.entities)] == doc.entities
    assert [item["id"] for item in report.items] == [f"d{k}" for k in range(len(refs))]
    for k, item in enumerate(report.items):
        for figure in FIGURES:
            m, p, r = reference_counts(read_p[k : k + 1], read_r[k : k + 1], figure, mode == "strict")[0]
            expected = (1.0, 1.0, 1.0) if p == r == 0 else prf(m, p, r)
            assert (item[figure]["precision"], item[figure]["recall"], item[figure]["f1"]) == expected
    expected = [] if refs else [f"{ref_path} holds no documents; every figure is 0"]
    for name in ("entities", "relations", "events"):
        if any(getattr(d, name) for d in read_r) and not any(getattr(d, name) for d in read_p):
            expected.append(f"{pred_path} has no {name} in any document, while the reference has some")
    assert report.warnings == expected


def test_sample_files_figures_worked_by_hand() -> None:
    # counted by hand from the files (see the differences between gold.jsonl and pred.jsonl)
    report = score_files(predictions=SAMPLE / "pred.jsonl", references=SAMPLE / "gold.jsonl")
    counts = {f: (report.scores[f]["matched"], report.scores[f]["predicted"], report.scores[f]["reference"])
              for f in FIGURES}  # fmt: skip
    assert counts == {"entities": (6, 8, 8), "relations": (2, 3, 4), "triggers": (2, 3, 3), "arguments": (2, 5, 6)}
    assert [item["relations"]["f1"] for item in report.items] == [0.5, 1.0, pytest.approx(2 / 3)]  # doc-2: none
    loose = score_files(predictions=SAMPLE / "pred.jsonl", references=SAMPLE / "gold.jsonl", mode="boundaries")
    counts = {f: (loose.scores[f]["matched"], loose.scores[f]["predicted"], loose.scores[f]["reference"])
              for f in FIGURES}  # fmt: skip
    assert counts == {"entities": (7, 8, 8), "relations": (3, 3, 4), "triggers": (3, 3, 3), "arguments": (3, 5, 6)}
    assert report.warnings == loose.warnings == []


def test_bom_crlf_and_blank_lines_accepted(tmp_path) -> None:
    doc = {"id": "a", "entities": [{"start": 0, "end": 1, "type": "PER"}]}
    plain = write(tmp_path / "plain.jsonl", [doc])
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode() + b"\r\n\r\n")
    assert read_documents(odd) == read_documents(plain)
    assert score_files(predictions=odd, references=plain).scores["entities"]["f1"] == 1.0


def _error(tmp_path, gold, pred=None) -> str:
    g = write(tmp_path / "gold.jsonl", gold)
    p = write(tmp_path / "pred.jsonl", pred if pred is not None else gold)
    with pytest.raises(InputFormatError) as info:
        score_files(predictions=p, references=g)
    message = str(info.value)
    assert "\n" not in message
    return message


ENT = {"start": 0, "end": 1, "type": "PER"}


@pytest.mark.parametrize(
    "gold,expected",
    [
        (['{"id": "a", "entities": [}'], "gold.jsonl:1: expected a JSON object (one per line), found invalid JSON"),
        (["[1, 2]"], "gold.jsonl:1: expected a JSON object (one per line), found an array of 2 items"),
        ([{"entities": [{"start": 0, "type": "PER"}]}], "gold.jsonl:1: entities[0]: expected the key 'end'"),
        ([{"entities": [{"start": "0", "end": 1, "type": "PER"}]}], "expected 'start' to be an integer, found the str"),
        ([{"entities": [{"start": True, "end": 1, "type": "PER"}]}], "found the boolean true"),
        ([{"entities": [{"start": 2, "end": 2, "type": "PER"}]}], "expected 0 <= start < end (end is exclusive)"),
        ([{"entities": [{"start": 0, "end": 1, "type": None}]}], "expected 'type' to be a string, found null"),
        ([{"entities": {"start": 0}}], "expected 'entities' to be a JSON array, found an object"),
        ([{"entities": [ENT], "relations": [{"type": "r", "head": 0, "tail": 1}]}], "relations[0].tail: expected an "
         "entity index 0..0, found 1 (out of range)"),
        ([{"entities": [ENT], "relations": [{"type": "r", "head": "x", "tail": 0}]}], "expected the id of an entity"),
        ([{"entities": [ENT], "relations": [{"type": "r", "head": 0}]}], "relations[0]: expected the key 'tail'"),
        ([{"events": [{"type": "Attack", "trigger": [3, 4]}]}], "events[0]: expected 'trigger' to be a JSON object"),
        ([{"events": [{"type": "A", "trigger": {"start": 3, "end": 4}, "arguments": [{"entity": 0, "role": "x"}]}]}],
         "events[0].arguments[0]: expected an entity index 0..-1"),
        ([{"entities": [{**ENT, "id": "e"}, {**ENT, "id": "e"}]}], "entities[1]: expected a new entity id, found 'e'"),
        ([{"id": "a"}, {"id": "a"}], "gold.jsonl:2: expected a new document id, found 'a' again (line 1)"),
        ([{"id": 1.5}], "expected 'id' to be a string or an integer, found the number 1.5"),
    ],
)  # fmt: skip
def test_malformed_reference_is_one_line_error(tmp_path, gold, expected) -> None:
    assert expected in _error(tmp_path, gold)


def test_documents_paired_by_order_and_id(tmp_path) -> None:
    gold = [{"id": "a"}, {"id": "b"}]
    message = _error(tmp_path, gold, [{"id": "b"}, {"id": "a"}])
    assert "pred.jsonl:1: expected the document id 'a' (" in message and "it is on line 2 of" in message
    assert "not in" in _error(tmp_path, gold, [{"id": "a"}, {"id": "c"}])
    assert "expected 2 documents" in _error(tmp_path, gold, [{"id": "a"}])
    assert "pred.jsonl:3: expected 2 documents" in _error(tmp_path, gold, [{"id": "a"}, {"id": "b"}, {"id": "c"}])
    assert "give ids in both files or in neither" in _error(tmp_path, gold, [{}, {}])


def test_not_utf8_is_an_error(tmp_path) -> None:
    (tmp_path / "gold.jsonl").write_bytes(b'{"id": "a"}\n{"id": "\xff"}\n')
    with pytest.raises(InputFormatError, match="gold.jsonl:2: expected UTF-8 text; found the byte 0xff"):
        read_documents(tmp_path / "gold.jsonl")


def test_warnings(tmp_path) -> None:
    gold = write(tmp_path / "gold.jsonl", [{"entities": [ENT], "relations": [{"type": "r", "head": 0, "tail": 0}]}])
    pred = write(tmp_path / "pred.jsonl", [{"entities": [ENT], "notes": [{"type": "r", "head": 0, "tail": 0}]}])
    report = score_files(predictions=pred, references=gold)
    assert report.warnings == [f"{pred} has no relations in any document, while the reference has some"]
    assert report.scores["relations"]["recall"] == 0.0
    empty = write(tmp_path / "empty.jsonl", [])
    assert score_files(predictions=empty, references=empty).warnings == [
        f"{empty} holds no documents; every figure is 0"
    ]


# ----------------------------------------------------------------------------------- the reference scorers' figures
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "ie"


def test_equal_to_oneie_dygiepp_and_spert_scorers_on_scierc_documents() -> None:
    """Figures of OneIE's ``score_graphs``, DyGIE++'s ``RelationMetrics`` / ``EventMetrics`` and SpERT's evaluator,
    run on the fixture files (tests/data/ie/README.md): entity and relation annotations of 30 SciERC abstracts,
    perturbed predictions and generated events, with no key repeated in a document (where the scripts' any-match
    counting and the one-to-one count agree)."""
    expected = json.loads((FIXTURE / "expected.json").read_text())
    gold, pred = FIXTURE / "gold.jsonl", FIXTURE / "pred.jsonl"
    strict = score_files(predictions=pred, references=gold).scores
    loose = score_files(predictions=pred, references=gold, mode="boundaries").scores
    undirected = score_files(predictions=pred, references=gold, mode="boundaries", directed=False).scores
    assert (
        strict["documents"] == 30 and strict["entities"]["reference"] == 512 and strict["relations"]["reference"] == 273
    )
    oneie = {
        "entity": strict["entities"],
        "trigger_id": loose["triggers"],
        "trigger": strict["triggers"],
        "role_id": loose["arguments"],
        "role": strict["arguments"],
        "relation_directed": loose["relations"],
        "relation_undirected": undirected["relations"],
    }
    for name, ours in oneie.items():
        theirs = expected["oneie"][name]
        for key, their_key in (("precision", "prec"), ("recall", "rec"), ("f1", "f")):
            assert ours[key] == pytest.approx(theirs[their_key], abs=1e-12), (name, key)
    dygiepp = expected["dygiepp"]
    for key in ("precision", "recall", "f1"):
        assert loose["relations"][key] == pytest.approx(dygiepp["relation"][key], abs=1e-12)
    for theirs, ours in (("trig_id", loose["triggers"]), ("trig_class", strict["triggers"]),
                         ("arg_id", loose["arguments"]), ("arg_class", strict["arguments"])):  # fmt: skip
        for key in ("precision", "recall", "f1"):
            assert ours[key] == pytest.approx(dygiepp[f"{theirs}_{key}"], abs=1e-12), (theirs, key)
    spert = expected["spert"]  # its "with NEC" relations are the strict evaluation of Taillé et al. (2020)
    for theirs, ours in (("entity", strict["entities"]), ("relation", loose["relations"]),
                         ("relation_nec", strict["relations"])):  # fmt: skip
        for key in ("precision", "recall", "f1"):
            assert ours[key] == pytest.approx(spert[theirs][key], abs=1e-12), (theirs, key)
    # strict relations differ from boundaries here (entity types were changed in the predictions)
    assert strict["relations"]["matched"] < loose["relations"]["matched"]


# ------------------------------------------------------------------------------------------------- reader fuzzing
CORRUPTIONS = ["truncate", "drop_line", "duplicate_line", "flip_byte", "bom", "crlf", "tabs"]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(CORRUPTIONS), st.integers(0, 10**6), st.integers(0, 255))
def test_corrupted_files_score_as_clean_or_one_line_error(tmp_path_factory, corruption, where, byte) -> None:
    """A corrupted prediction file scores exactly as the clean one, or gives a one-line error naming file and line;
    a line dropped or duplicated (a misaligned pair) is always an error, never a different score."""
    clean = (SAMPLE / "pred.jsonl").read_bytes()
    lines = clean.split(b"\n")[:-1]
    k = where % len(lines)
    if corruption == "truncate":
        data = clean[: where % len(clean)]
    elif corruption == "drop_line":
        data = b"\n".join(lines[:k] + lines[k + 1 :]) + b"\n"
    elif corruption == "duplicate_line":
        data = b"\n".join(lines[: k + 1] + lines[k:]) + b"\n"
    elif corruption == "flip_byte":
        i = where % len(clean)
        data = clean[:i] + bytes([byte]) + clean[i + 1 :]
    elif corruption == "bom":
        data = b"\xef\xbb\xbf" + clean
    elif corruption == "crlf":
        data = clean.replace(b"\n", b"\r\n")
    else:
        data = clean.replace(b", ", b",\t")
    path = tmp_path_factory.mktemp("fuzz") / "pred.jsonl"
    path.write_bytes(data)
    expected = score_files(predictions=SAMPLE / "pred.jsonl", references=SAMPLE / "gold.jsonl")
    try:
        got = score_files(predictions=path, references=SAMPLE / "gold.jsonl")
    except InputFormatError as err:
        assert "\n" not in str(err) and str(err).startswith(f"{path}")
        return
    if corruption in ("drop_line", "duplicate_line"):
        pytest.fail(f"a {corruption} scored without an error")
    if corruption in ("bom", "crlf", "tabs") or data == clean:
        assert got.scores == expected.scores
    else:  # a flipped byte that still parses: the documents are still paired one to one, by id
        assert [item["id"] for item in got.items] == [item["id"] for item in expected.items]


_DOC = {
    "id": "d1",
    "tokens": ["a", "b", "c", "d", "e", "f"],
    "entities": [{"start": 0, "end": 2, "type": "PER"}, {"start": 4, "end": 6, "type": "ORG"}],
    "relations": [{"type": "Work-For", "head": 0, "tail": 1}],
    "events": [{"type": "Attack", "trigger": {"start": 3, "end": 4}, "arguments": [{"entity": 0, "role": "A"}]}],
}


def _write(path: Path, *docs: dict) -> str:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return str(path)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            lambda d: d.update(relation=d.pop("relations")),
            "the document: expected the key 'relations', found 'relation'",
        ),
        (lambda d: d.update(event=d.pop("events")), "the document: expected the key 'events', found 'event'"),
        (
            lambda d: d.update(entitie=d.pop("entities"), relations=[], events=[]),
            "the document: expected the key 'entities'",
        ),
        (
            lambda d: d["events"][0].update(argument=d["events"][0].pop("arguments")),
            "events[0]: expected the key 'arguments'",
        ),
        (
            lambda d: d["entities"][1].update(end=7),
            "entities[1]: expected end <= 6 (the document's tokens), found end 7",
        ),
        (lambda d: d["events"][0]["trigger"].update(start=6, end=9), "events[0].trigger: expected end <= 6"),
        (
            lambda d: d.update(Relations=d.pop("relations")),
            "the document: expected the key 'relations', found 'Relations'",
        ),
        (
            lambda d: d["entities"][0].update(Type=d["entities"][0].pop("type")),
            "entities[0]: expected the key 'type', found 'Type'",
        ),
        (
            lambda d: d["relations"][0].update(head_id=d["relations"][0].pop("head")),
            "relations[0]: expected the key 'head', found 'head_id'",
        ),
        (
            lambda d: d["events"][0]["arguments"][0].update(rol=d["events"][0]["arguments"][0].pop("role")),
            "events[0].arguments[0]: expected the key 'role', found 'rol'",
        ),
    ],
)
def test_what_would_drop_a_part_unseen_is_refused(capsys, tmp_path: Path, change, needle: str) -> None:
    from helpers import run

    bad = json.loads(json.dumps(_DOC))
    change(bad)
    gold, pred = _write(tmp_path / "g.jsonl", _DOC), _write(tmp_path / "p.jsonl", bad)
    with pytest.raises(InputFormatError, match="p.jsonl:1: " + re.escape(needle)):
        score_files(predictions=pred, references=gold)
    for argv in (
        ["score", "ie", "--gold", gold, "--pred", pred],
        ["analyze", "ie", "--references", gold, "--system", pred, "--system", gold],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "" and err.count("\n") == 1 and needle in err, err
    code, out, err = run(capsys, "score", "ie", "--gold", pred, "--pred", gold)  # on the reference side too
    assert code == 1 and needle in err


def test_a_prediction_counting_other_tokens_is_refused(tmp_path: Path) -> None:
    shorter = dict(_DOC, tokens=_DOC["tokens"][:-1], entities=[_DOC["entities"][0]], relations=[])
    gold, pred = _write(tmp_path / "g.jsonl", _DOC), _write(tmp_path / "p.jsonl", shorter)
    with pytest.raises(InputFormatError, match=r"p.jsonl:1: expected 6 tokens \(as .*g.jsonl line 1\), found 5"):
        score_files(predictions=pred, references=gold)
    kept = {k: v for k, v in _DOC.items() if k != "tokens"}  # a side without tokens: nothing to compare
    assert score_files(predictions=_write(tmp_path / "k.jsonl", kept), references=gold).scores["entities"]["f1"] == 1.0
    extra = dict(_DOC, relationship_notes="x", sentences=[[0, 6]], token_lens=[1] * 6)  # other layouts' keys: ignored
    report = score_files(predictions=_write(tmp_path / "e.jsonl", extra), references=gold)
    assert report.scores["entities"]["f1"] == 1.0 and report.warnings == []


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _near_misses(tmp_path: Path) -> tuple[Path, Path]:
    """The bundled sample with ignored keys that resemble known ones, and keys of real datasets that do not."""
    gold, pred = _lines(SAMPLE / "gold.jsonl"), _lines(SAMPLE / "pred.jsonl")
    gold[2]["evnts"] = [{"type": "Born"}]  # beside "events" (line 3)
    for doc in pred[:2]:
        doc["relation"] = []  # beside "relations", on lines 1 and 2: named once, at line 1
    pred[1]["tokns"] = ["x"]  # "tokens" absent: nothing is checked against them
    pred[2]["entities"][0]["ID"] = "e9"  # an entity's "id" absent
    for doc in gold + pred:  # DyGIE++'s and others' keys stay silent
        doc.update(doc_key="k", sentences=[["a"]], clusters=[], text="t")
        for entity in doc["entities"]:
            entity["text"] = "x"
    return write(tmp_path / "gold.jsonl", gold), write(tmp_path / "pred.jsonl", pred)


def near_miss_warnings(gold: Path, pred: Path) -> list[str]:
    """The warnings of :func:`_near_misses`' files, in the order the files are read (reference first)."""
    tail = "; later lines with it are not named"
    return [
        f"{gold}:3: the document: ignored the key 'evnts', close to the key 'events' (given too){tail}",
        f"{pred}:1: the document: ignored the key 'relation', close to the key 'relations' (given too){tail}",
        f"{pred}:2: the document: ignored the key 'tokns', close to the key 'tokens' (absent){tail}",
        f"{pred}:3: entities[0]: ignored the key 'ID', close to the key 'id' (absent){tail}",
    ]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_key_resembling_a_known_one_is_a_warning_once_per_file_and_key(tmp_path: Path, jobs: int) -> None:
    from metametric_jax.tasks import ie_analysis

    gold, pred = _near_misses(tmp_path)
    report = score_files(predictions=pred, references=gold, jobs=jobs)
    assert report.warnings == near_miss_warnings(gold, pred)
    clean = score_files(predictions=SAMPLE / "pred.jsonl", references=SAMPLE / "gold.jsonl")
    assert report.scores == clean.scores  # ignored, as every other key
    assert read_documents(pred).warnings == near_miss_warnings(gold, pred)[1:]
    found = ie_analysis.analyze_files(gold, [pred, SAMPLE / "pred.jsonl"], samples=20, jobs=jobs)
    assert found["warnings"] == near_miss_warnings(gold, pred)


def test_offsets_lie_within_the_tokens_of_the_other_file(tmp_path: Path) -> None:
    bare = {k: v for k, v in _DOC.items() if k != "tokens"}
    gold = _write(tmp_path / "g.jsonl", _DOC)
    past = json.loads(json.dumps(bare))
    past["entities"][1]["end"] = 9
    pred = _write(tmp_path / "p.jsonl", past)
    expected = f"{pred}:1: entities[1]: expected end <= 6 (the tokens of {gold} line 1), found end 9"
    with pytest.raises(InputFormatError, match=re.escape(expected)):
        score_files(predictions=pred, references=gold)
    past = json.loads(json.dumps(bare))
    past["events"][0]["trigger"] = {"start": 6, "end": 7}
    pred = _write(tmp_path / "p.jsonl", past)
    with pytest.raises(InputFormatError, match=re.escape(f"{pred}:1: events[0].trigger: expected end <= 6 (the")):
        score_files(predictions=pred, references=gold)
    # a reference without tokens, against a prediction that gives them: the reference's offsets are checked
    short = dict(_DOC, tokens=_DOC["tokens"][:5], entities=[_DOC["entities"][0]], relations=[], events=[])
    gold, pred = _write(tmp_path / "g.jsonl", bare), _write(tmp_path / "p.jsonl", short)
    expected = f"{gold}:1: entities[1]: expected end <= 5 (the tokens of {pred} line 1), found end 6"
    with pytest.raises(InputFormatError, match=re.escape(expected)):
        score_files(predictions=pred, references=gold)
    # offsets within the other side's tokens are scored as before
    within = score_files(predictions=_write(tmp_path / "p.jsonl", bare), references=_write(tmp_path / "g.jsonl", _DOC))
    assert [within.scores[f]["f1"] for f in FIGURES] == [1.0] * 4 and within.warnings == []
