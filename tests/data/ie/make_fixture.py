"""Build the IE fixture (gold.jsonl, pred.jsonl) and record the reference scorers' figures (expected.json).

Usage (see README.md): ``python make_fixture.py SCIERC_DIR DYGIEPP_DIR ONEIE_SCORER OUT_DIR`` where SCIERC_DIR holds
DyGIE++'s ``dygie/tests/fixtures/collate/scierc/{dev,test,train}.json``, DYGIEPP_DIR is a DyGIE++ checkout (for
``dygie/training/*_metrics.py``) and ONEIE_SCORER is OneIE's ``scorer.py``. The reference code is imported from
those paths, never copied here; allennlp's ``Metric`` base class and ``overrides`` are stubbed (the metrics do not use
them).
"""

import contextlib
import importlib.util
import io
import json
import random
import sys
import types

SCIERC, DYGIEPP, ONEIE, SPERT, OUT = sys.argv[1:6]
for name in ("allennlp", "allennlp.training", "allennlp.training.metrics"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["allennlp.training.metrics.metric"] = types.SimpleNamespace(Metric=object)
sys.modules["overrides"] = types.SimpleNamespace(overrides=lambda f: f)
for name, folder in (("dygie", "dygie"), ("dygie.training", "dygie/training")):  # skip the packages' __init__
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = [f"{DYGIEPP}/{folder}"]
spec = importlib.util.spec_from_file_location("oneie_scorer", ONEIE)
oneie = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oneie)
from dygie.training.event_metrics import EventMetrics  # noqa: E402
from dygie.training.relation_metrics import RelationMetrics  # noqa: E402

score_graphs = oneie.score_graphs

# SpERT's evaluator: its module imports torch, transformers and the rest of SpERT, none of which _score uses
for name in ("torch", "transformers", "spert", "spert.prediction", "spert.entities", "spert.input_reader", "spert.opt"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["torch"].tensor = sys.modules["torch"].Tensor = type("Tensor", (), {})
sys.modules["transformers"].BertTokenizer = object
sys.modules["spert.entities"].__dict__.update(Document=object, Dataset=object, EntityType=object)
sys.modules["spert.input_reader"].BaseInputReader = object
sys.modules["spert.opt"].jinja2 = None
spec = importlib.util.spec_from_file_location("spert_evaluator", SPERT)
spert = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spert)

rng = random.Random(2020)
docs = []
for split in ("dev", "test", "train"):
    for line in open(f"{SCIERC}/{split}.json"):
        docs.append(json.loads(line))

ROLES = ["Agent", "Patient", "Instrument", "Place"]
EVENTS = ["Propose", "Evaluate", "Use"]
ENT_TYPES = sorted({n[2] for d in docs for s in d["ner"] for n in s})


def uniq(seq, key):
    seen, out = set(), []
    for x in seq:
        k = key(x)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


gold_docs, pred_docs = [], []
for d in docs:
    tokens = [t for s in d["sentences"] for t in s]
    ents = [(s, e + 1, t) for sent in d["ner"] for s, e, t in sent]
    assert len(set((s, e) for s, e, _ in ents)) == len(ents)
    index = {(s, e): k for k, (s, e, _) in enumerate(ents)}
    rels = [(index[(s1, e1 + 1)], index[(s2, e2 + 1)], t) for sent in d["relations"] for s1, e1, s2, e2, t in sent]
    # synthetic events on the real text: single-token triggers on verbs-ish positions, arguments among the entities
    nev = rng.randint(0, 3)
    trig_tokens = rng.sample([i for i in range(len(tokens)) if (i, i + 1) not in index], nev)
    events = []
    for tok in trig_tokens:
        etype = rng.choice(EVENTS)
        args = [(k, rng.choice(ROLES)) for k in rng.sample(range(len(ents)), min(len(ents), rng.randint(0, 3)))]
        events.append((tok, etype, args))
    # unique (argument span, event type) keys per document, as the scripts and the one-to-one count then agree
    seen = set()
    ev2 = []
    for tok, etype, args in events:
        a2 = []
        for k, r in args:
            if (k, etype) not in seen:
                seen.add((k, etype))
                a2.append((k, r))
        ev2.append((tok, etype, a2))
    events = ev2
    gold = {"ents": ents, "rels": rels, "events": events, "tokens": tokens, "id": d["doc_key"]}
    # predictions: drop, retype, shift entities; drop, relabel, reverse, add relations; perturb events
    pents, pmap = [], {}
    for k, (s, e, t) in enumerate(ents):
        u = rng.random()
        if u < 0.12:
            continue
        if u < 0.22:
            t = rng.choice([x for x in ENT_TYPES if x != t])
        elif u < 0.30 and e - s > 1:
            s = s + 1
        pmap[k] = len(pents)
        pents.append((s, e, t))
    pents2 = uniq(pents, lambda x: (x[0], x[1]))
    remap = {i: pents2.index(next(p for p in pents2 if p[:2] == pents[i][:2])) for i in range(len(pents))}
    pents = pents2
    pmap = {k: remap[v] for k, v in pmap.items()}
    for _ in range(rng.randint(0, 3)):  # spurious entities
        s = rng.randrange(len(tokens) - 2)
        e = s + rng.randint(1, 2)
        if all((s, e) != p[:2] for p in pents):
            pents.append((s, e, rng.choice(ENT_TYPES)))
    prels = []
    for h, t, r in rels:
        u = rng.random()
        if h not in pmap or t not in pmap or u < 0.15:
            continue
        h, t = pmap[h], pmap[t]
        if u < 0.25:
            r = rng.choice(sorted({x[2] for x in rels} - {r}) or [r])
        elif u < 0.32:
            h, t = t, h
        prels.append((h, t, r))
    for _ in range(rng.randint(0, 2)):
        if len(pents) > 1:
            h, t = rng.sample(range(len(pents)), 2)
            prels.append((h, t, rng.choice(sorted({x[2] for x in rels} or {"USED-FOR"}))))

    def span(k, ee):
        return ee[k][:2]

    prels = uniq(prels, lambda x, ee=pents: (x[2], frozenset([span(x[0], ee), span(x[1], ee)])))
    pevents = []
    for tok, etype, args in events:
        u = rng.random()
        if u < 0.15:
            continue
        if u < 0.3:
            etype = rng.choice([x for x in EVENTS if x != etype])
        pargs = []
        for k, r in args:
            v = rng.random()
            if k not in pmap or v < 0.15:
                continue
            if v < 0.3:
                r = rng.choice([x for x in ROLES if x != r])
            pargs.append((pmap[k], r))
        pevents.append((tok, etype, pargs))
    if rng.random() < 0.3:
        tok = rng.randrange(len(tokens))
        if all(tok != e[0] for e in pevents) and pents:
            pevents.append((tok, rng.choice(EVENTS), [(rng.randrange(len(pents)), rng.choice(ROLES))]))
    seen = set()
    ev2 = []
    for tok, etype, args in pevents:
        a2 = []
        for k, r in args:
            if (span(k, pents), etype) not in seen:
                seen.add((span(k, pents), etype))
                a2.append((k, r))
        ev2.append((tok, etype, a2))
    pred = {"ents": pents, "rels": prels, "events": ev2, "id": d["doc_key"]}
    gold_docs.append(gold)
    pred_docs.append(pred)


def to_json(doc, with_tokens):
    out = {"id": doc["id"]}
    if with_tokens:
        out["tokens"] = doc["tokens"]
    out["entities"] = [{"start": s, "end": e, "type": t} for s, e, t in doc["ents"]]
    out["relations"] = [{"type": r, "head": h, "tail": t} for h, t, r in doc["rels"]]
    out["events"] = [
        {
            "type": et,
            "trigger": {"start": tok, "end": tok + 1},
            "arguments": [{"entity": k, "role": r} for k, r in args],
        }
        for tok, et, args in doc["events"]
    ]
    return out


out_dir = OUT
with open(f"{out_dir}/gold.jsonl", "w") as f:
    for d in gold_docs:
        f.write(json.dumps(to_json(d, True), ensure_ascii=False) + "\n")
with open(f"{out_dir}/pred.jsonl", "w") as f:
    for d in pred_docs:
        f.write(json.dumps(to_json(d, False), ensure_ascii=False) + "\n")


# ---------------- OneIE scorer
def graph(doc):
    triggers = [(tok, tok + 1, et) for tok, et, _ in doc["events"]]
    roles = [(i, k, r) for i, (_, _, args) in enumerate(doc["events"]) for k, r in args]
    return types.SimpleNamespace(
        entities=list(doc["ents"]), mentions=[], relations=list(doc["rels"]), triggers=triggers, roles=roles
    )


expected = {"oneie": {}, "dygiepp": {}}
for directional in (True, False):
    with contextlib.redirect_stdout(io.StringIO()) as buf:
        s = score_graphs([graph(d) for d in gold_docs], [graph(d) for d in pred_docs], relation_directional=directional)
    print(buf.getvalue())
    if directional:
        for k in ("entity", "trigger_id", "trigger", "role_id", "role"):
            expected["oneie"][k] = s[k]
    expected["oneie"]["relation_directed" if directional else "relation_undirected"] = s["relation"]

# ---------------- DyGIE++ metrics
rm, em = RelationMetrics(), EventMetrics()
for g, p in zip(gold_docs, pred_docs):
    gold_rel = {(g["ents"][h][:2], g["ents"][t][:2]): r for h, t, r in g["rels"]}
    pred_rel = {(p["ents"][h][:2], p["ents"][t][:2]): r for h, t, r in p["rels"]}
    assert len(gold_rel) == len(g["rels"]) and len(pred_rel) == len(p["rels"])
    rm([pred_rel], [types.SimpleNamespace(relation_dict=gold_rel)])
    gt = {tok: et for tok, et, _ in g["events"]}
    ga = {(tok, g["ents"][k][:2]): r for tok, et, args in g["events"] for k, r in args}
    pt = {tok: (et, 1.0) for tok, et, _ in p["events"]}
    pa = {(tok, p["ents"][k][:2]): (r, 1.0) for tok, et, args in p["events"] for k, r in args}
    em(
        [{"trigger_dict": pt, "argument_dict": pa}],
        [types.SimpleNamespace(events=types.SimpleNamespace(trigger_dict=gt, argument_dict=ga))],
    )
pr, rr, fr = rm.get_metric()
expected["dygiepp"]["relation"] = {"precision": pr, "recall": rr, "f1": fr}
expected["dygiepp"].update(em.get_metric())


# ---------------- SpERT evaluator (entities with types; relations without and with entity types)
class Type:  # SpERT's EntityType / RelationType: hashable, with an index (0 is "no type")
    def __init__(self, index):
        self.index = index


type_of = {}


def typed(name):
    return type_of.setdefault(name, Type(len(type_of) + 1))


evaluator = spert.Evaluator.__new__(spert.Evaluator)
evaluator._pseudo_entity_type = typed("<pseudo>")


def spert_tuples(doc):
    ents = [(s, e, typed("E:" + t)) for s, e, t in doc["ents"]]
    rels = [(ents[h], ents[t], typed("R:" + r)) for h, t, r in doc["rels"]]
    return ents, rels


gold_t, pred_t = [spert_tuples(d) for d in gold_docs], [spert_tuples(d) for d in pred_docs]
for name, which, with_types in (("entity", 0, True), ("relation", 1, False), ("relation_nec", 1, True)):
    gt, pred = evaluator._convert_by_setting(
        [g[which] for g in gold_t], [p[which] for p in pred_t], include_entity_types=with_types
    )
    with contextlib.redirect_stdout(io.StringIO()):
        micro = evaluator._score(gt, pred)[:3]
    expected.setdefault("spert", {})[name] = dict(zip(("precision", "recall", "f1"), (m / 100 for m in micro)))
print(json.dumps(expected["spert"], indent=1))
json.dump(expected, open(f"{out_dir}/expected.json", "w"), indent=2)
print(json.dumps(expected, indent=1))
