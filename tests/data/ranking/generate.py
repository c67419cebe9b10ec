"""Rebuild the ranking fixtures: copy trec_eval's test files, make the generated files, run trec_eval on every case.

Usage (see README.md): ``python tests/data/ranking/generate.py TREC_EVAL_10_DIR TREC_EVAL_9_DIR [PRECISE_DIR]`` where
each directory is a built checkout of https://github.com/usnistgov/trec_eval (``make`` there); ``PRECISE_DIR``, a
build of the 10.0 checkout whose print formats ``%6.4f`` read ``%.17g`` (``meas_print_single.c``,
``meas_print_final.c``), writes ``expected/precise/`` (every figure to the last bit) for the cases of ``PRECISE``.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SAMPLE = HERE.parents[2] / "metametric_jax" / "data" / "ranking"
RAG_QUERIES = ("2024-12875", "2024-36302", "2024-41198", "2024-43905", "2024-214126", "2024-152259", "2024-224279")
RAG_UNJUDGED = ("2024-224960", "2024-134964")  # ranked in the run, never judged


def copy_trec_eval_tests(src: Path) -> None:
    out = HERE / "trec_eval"
    out.mkdir(exist_ok=True)
    for name in ("qrels.test", "results.test", "results.trunc", "qrels.rel_level"):
        shutil.copyfile(src / "test" / name, out / name)
    keep = set(RAG_QUERIES)
    with open(src / "test" / "qrels.comment.test") as f:
        qrels = [line for line in f if line.split()[0] in keep]
    with open(src / "test" / "results.comment.test") as f:
        run = [line for line in f if line.split()[0] in keep | set(RAG_UNJUDGED)]
    (out / "rag24.qrels").write_text("".join(qrels))
    (out / "rag24.run").write_text("".join(run))


def make_ties() -> None:
    """Graded judgements (-1 to 4), scores with one decimal (many ties, some spelled differently), odd doc ids."""
    rng = random.Random(20261123)
    spell = {1.0: ["1", "1.0", "1e0", "1.00"], 0.5: ["0.5", "5e-1", ".5"], 0.0: ["0", "-0.0", "0.0"]}
    qrels, run = [], []
    for q in range(1, 15):
        qid = f"q{q:02d}"
        pool = [f"D{n}" for n in rng.sample(range(1, 400), 60)] + ["Dé1", "Dß2", "D\u4e2d3", "d1", "D-1"]
        rng.shuffle(pool)
        ranked = pool[:40]
        if qid != "q12":  # q12: judged, never ranked (for -c)
            for rank, doc in enumerate(ranked, 1):
                s = round(rng.choice([rng.random(), rng.random() * 2 - 1, 1.0, 0.5, 0.0]), 1)
                text = rng.choice(spell.get(s, [repr(s)]))
                run.append(f"{qid} Q0 {doc} {rank} {text} tierun\n")
        if qid == "q13":  # q13: ranked, never judged
            continue
        judged = rng.sample(pool, 35)
        for doc in judged:
            if qid == "q05":  # judged, nothing relevant
                grade = rng.choice([0, 0, -1])
            elif qid == "q06":  # relevant documents, none of them ranked
                grade = rng.choice([1, 2, 3]) if doc not in ranked else rng.choice([0, -1])
            else:
                grade = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4])
            qrels.append(f"{qid} 0 {doc} {grade}\n")
    rng.shuffle(run)  # file order plays no part
    (HERE / "ties.run").write_text("".join(run))
    complete = "".join(qrels)
    (HERE / "ties-complete.qrels").write_text(complete)
    (HERE / "ties.qrels").write_text("".join(line for line in qrels if not line.startswith("q12 ")))


def make_sample() -> None:
    """The bundled sample of ``metametric-jax score ranking``: 5 queries, graded judgements, tied scores."""
    rng = random.Random(7)
    qrels, run = [], []
    for q in range(1, 6):
        qid = f"Q{q}"
        pool = [f"doc{n:03d}" for n in rng.sample(range(1, 200), 25)]
        for rank, doc in enumerate(pool[:15], 1):
            run.append(f"{qid} Q0 {doc} {rank} {round(rng.random() * 4, 1)} sample\n")
        for doc in rng.sample(pool, 12):
            qrels.append(f"{qid} 0 {doc} {rng.choice([0, 0, 1, 1, 2, 3]) if q != 4 else 0}\n")
    SAMPLE.mkdir(exist_ok=True)
    (SAMPLE / "sample.qrels").write_text("".join(qrels))
    (SAMPLE / "sample.run").write_text("".join(run))


#: Measures with parameters (``rbp.p=...`` left out: trec_eval 10.0 reads uninitialized memory there).
PARAMS = (
    "utility.2,-0.5,-1,0.25",
    "11pt_avg.0.2,0.5,0.8",
    "set_F.0.5",
    "rbp_resid.p=0.75",
    "Rprec_mult.0.3,1.5,3",
    "relative_P.3,50",
    "unj.2,7",
    "iprec_at_recall.0.15,0.33,0.77",
    "infAP",
    "G",
    "Rndcg",
    "ndcg_rel",
    "binG",
    "rbp",
)

#: name -> (qrels, run, trec_eval binary, trec_eval options, our options)
CASES = {
    "test-official": ("trec_eval/qrels.test", "trec_eval/results.test", "10", [], {}),
    "test-all": ("trec_eval/qrels.test", "trec_eval/results.test", "10", ["-m", "all_trec"], {"measures": "all"}),
    "test-params": (
        "trec_eval/qrels.test",
        "trec_eval/results.test",
        "10",
        [
            "-m",
            "P.3,7",
            "-m",
            "recall.20,2000",
            "-m",
            "ndcg_cut.10,20,23",
            "-m",
            "success.2,5,20",
            "-m",
            "iprec_at_recall..10,.20,.25,.75,.50",
            "-m",
            "map_cut.7",
            "-m",
            "ndcg",
        ],
        {
            "measures": [
                "P.3,7",
                "recall.20,2000",
                "ndcg_cut.10,20,23",
                "success.2,5,20",
                "iprec_at_recall..10,.20,.25,.75,.50",
                "map_cut.7",
                "ndcg",
            ]
        },
    ),
    "trunc-c": (
        "trec_eval/qrels.test",
        "trec_eval/results.trunc",
        "10",
        ["-c", "-m", "all_trec"],
        {"measures": "all", "complete": True},
    ),
    "trunc-c-M100": (
        "trec_eval/qrels.test",
        "trec_eval/results.trunc",
        "10",
        ["-c", "-M100", "-m", "all_trec"],
        {"measures": "all", "complete": True, "max_retrieved": 100},
    ),
    "rel_level": ("trec_eval/qrels.rel_level", "trec_eval/results.test", "10", ["-m", "all_trec"], {"measures": "all"}),
    "rel_level-l2": (
        "trec_eval/qrels.rel_level",
        "trec_eval/results.test",
        "10",
        ["-l2", "-m", "all_trec"],
        {"measures": "all", "level": 2},
    ),
    "rag24": ("trec_eval/rag24.qrels", "trec_eval/rag24.run", "10", ["-m", "all_trec"], {"measures": "all"}),
    "rag24-l2": (
        "trec_eval/rag24.qrels",
        "trec_eval/rag24.run",
        "10",
        ["-l2", "-m", "all_trec"],
        {"measures": "all", "level": 2},
    ),
    "ties": ("ties.qrels", "ties.run", "10", ["-m", "all_trec"], {"measures": "all"}),
    "ties-l3": ("ties.qrels", "ties.run", "10", ["-l3", "-m", "all_trec"], {"measures": "all", "level": 3}),
    "ties-l0": ("ties.qrels", "ties.run", "10", ["-l0", "-m", "all_trec"], {"measures": "all", "level": 0}),
    "ties-complete-c": (
        "ties-complete.qrels",
        "ties.run",
        "10",
        ["-c", "-m", "all_trec"],
        {"measures": "all", "complete": True},
    ),
    "sample": (
        "../../../metametric_jax/data/ranking/sample.qrels",
        "../../../metametric_jax/data/ranking/sample.run",
        "10",
        ["-m", "all_trec"],
        {"measures": "all"},
    ),
    "ties-complete-v9": ("ties-complete.qrels", "ties.run", "9", ["-m", "all_trec"], {"measures": "all"}),
    "ties-c-M5": (
        "ties-complete.qrels",
        "ties.run",
        "10",
        ["-c", "-M5", "-m", "all_trec"],
        {"measures": "all", "complete": True, "max_retrieved": 5},
    ),
    "ties-params": (
        "ties-complete.qrels",
        "ties.run",
        "10",
        ["-c", "-l2", *(arg for m in PARAMS for arg in ("-m", m))],
        {"measures": list(PARAMS), "complete": True, "level": 2},
    ),
}

#: The cases also written with every digit (``expected/precise/``).
PRECISE = ("test-all", "rag24", "rag24-l2", "ties-l0", "ties-complete-c", "ties-c-M5", "ties-params", "trunc-c-M100")


#: Option sets whose printouts with ``-c`` and with ``-c -q`` are stored in ``expected/option-sets.json``: how trec_eval
#: reads ``-m`` (a family's first parameters win), ``runid`` and ``relstring`` asked alone, summaries, ``-M``, ``-l0``,
#: the query that ``-c`` adds, and ``-c`` with a relevance level above 1 (the run's ``num_rel`` then counts every
#: judgement with a positive grade, where each query's counts the grades at the level or above).
OPTION_SETS = (
    [],
    ["-m", "set"],
    ["-m", "official", "-m", "ndcg"],
    ["-m", "P.5", "-m", "P.10", "-m", "official"],
    ["-m", "P", "-m", "P.5"],
    ["-m", "all_trec", "-m", "P.17"],
    ["-m", "ndcg_cut.10", "-m", "ndcg_cut.5"],
    ["-m", "set", "-m", "utility.2,0,0,0"],
    ["-m", "utility.1.5,-1.25,0.5,0.75", "-m", "P.7,3"],
    ["-m", "iprec_at_recall.0.5,0.1", "-m", "Rprec_mult.2,0.5"],
    ["-l0", "-m", "Rndcg", "-m", "runid"],
    ["-m", "relstring"],
    ["-m", "relstring.3", "-m", "all_trec"],
    ["-M7", "-m", "relstring.20", "-m", "unj.3,1"],
    ["-M3", "-m", "all_trec"],
    ["-l2", "-m", "num_rel", "-m", "num_rel_ret", "-m", "num_q"],
    ["-l3", "-m", "all_trec"],
)
OPTION_FILES = (("trec_eval/qrels.test", "trec_eval/results.test"), ("ties-complete.qrels", "ties.run"))


def write_option_sets(trec10: Path) -> None:
    """trec_eval 10.0's printout of every option set of :data:`OPTION_SETS` on each pair of :data:`OPTION_FILES`."""
    entries = []
    for qrels, run in OPTION_FILES:
        for options in OPTION_SETS:
            for flags in (["-c", *options], ["-c", "-q", *options]):
                command = [str(trec10 / "trec_eval"), *flags, qrels, run]
                done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=True)
                entries.append({"qrels": qrels, "run": run, "flags": flags, "printout": done.stdout})
    (HERE / "expected" / "option-sets.json").write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")


def main(trec10: Path, trec9: Path, precise: Path | None = None) -> None:
    copy_trec_eval_tests(trec10)
    shutil.copyfile(trec10 / "LICENSE.md", HERE / "trec_eval" / "LICENSE.md")
    make_ties()
    make_sample()
    (HERE / "expected").mkdir(exist_ok=True)
    manifest = {}
    for name, (qrels, run, version, args, ours) in CASES.items():
        binary = (trec10 if version == "10" else trec9) / "trec_eval"
        command = [str(binary), "-q", *args, qrels, run]
        done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=True)
        (HERE / "expected" / f"{name}.txt").write_text(done.stdout)
        if precise is not None and name in PRECISE:
            (HERE / "expected" / "precise").mkdir(exist_ok=True)
            command[0] = str(precise / "trec_eval")
            done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=True)
            (HERE / "expected" / "precise" / f"{name}.txt").write_text(done.stdout)
        shown = " ".join(["trec_eval", "-q", *args, qrels, run])
        manifest[name] = {"qrels": qrels, "run": run, "trec_eval": version, "command": shown, "options": ours}
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    write_option_sets(trec10)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else None)
