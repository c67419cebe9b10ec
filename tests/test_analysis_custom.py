"""``analyze TASK --bucket [NAME=]MODULE:FUNCTION``: user-defined buckets on the command line, end to end."""

from __future__ import annotations

import pickle
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import analysis_json, assert_one_line_errors, run

from metametric_jax import analysis_custom

DATA = Path(__file__).resolve().parents[1] / "metametric_jax" / "data"
NER = (DATA / "ner" / "gold.txt", [DATA / "ner" / "pred.txt", DATA / "ner" / "pred_b.txt"])
#: per task: the reference, the systems, a bucket function rebuilding one of the task's own analyses, that analysis, and
#: the task's options (as many equal-frequency bins as values, so that each value is its own bucket)
TASKS = {
    "ner": (*NER, "return x.label", "type", ()),
    "dependency": (
        DATA / "parsing" / "gold.conllu",
        [DATA / "parsing" / "pred.conllu"] * 2,
        "return x.deprel",
        "deprel",
        (),
    ),
    "constituency": (
        DATA / "parsing" / "gold.mrg",
        [DATA / "parsing" / "pred.mrg"] * 2,
        "from metametric_jax.tasks.constituency_analysis import length_bucket\n    return length_bucket(x.length)",
        "length",
        (),
    ),
    "ie": (DATA / "ie" / "gold.jsonl", [DATA / "ie" / "pred.jsonl"] * 2, "return 'all'", "overall", ()),
    "coref": (
        DATA / "coref" / "sample.key",
        [DATA / "coref" / "sample.response", DATA / "coref" / "sample.key"],
        "return str(len(x.key.first_occurrences().entities))",
        "entities",
        ("--bins", "100"),
    ),
    "amr": (
        DATA / "amr" / "gold.txt",
        [DATA / "amr" / "pred.txt"] * 2,
        "return str(x.variables)",
        "size",
        ("--bins", "100"),
    ),
    "ranking": (
        DATA / "ranking" / "sample.qrels",
        [DATA / "ranking" / "sample.run"] * 2,
        "from metametric_jax.tasks.ranking_analysis import relevant_bucket\n    return relevant_bucket(x.relevant)",
        "relevant",
        (),
    ),
    "rouge": (
        DATA / "rouge" / "references.txt",
        [DATA / "rouge" / "predictions.txt", DATA / "rouge" / "references.txt"],
        "from metametric_jax.tasks.rouge_analysis import length_bucket\n    return length_bucket(x.tokens)",
        "reference_length",
        (),
    ),
}

MODULE = """
def rebuilt(x):
    {body}

def capitalised(x):
    return "capitalised" if x.text[:1].isupper() else "other"

def number(x):
    return 3

def empty(x):
    return ""

def broken(x):
    return {{}}["missing"]

class Rules:
    @staticmethod
    def by_side(x):
        return x.side

not_a_function = 5
"""


@pytest.fixture(autouse=True)
def _restore_sys_path():
    """Loading a bucket function puts its folder (or the current one) on sys.path, as python does: undone here."""
    saved = list(sys.path)
    yield
    sys.path[:] = saved


@pytest.fixture()
def module_dir(tmp_path, monkeypatch, request) -> tuple[Path, str]:
    """A directory holding a bucket module of a name unique to the test, as the current directory."""
    name = f"user_buckets_{abs(hash(request.node.nodeid)) % 10**9}"
    yield tmp_path, name
    sys.modules.pop(name, None)


def _write(module_dir: tuple[Path, str], body: str) -> str:
    where, name = module_dir
    (where / f"{name}.py").write_text(textwrap.dedent(MODULE.format(body=body)), encoding="utf-8")
    return name


@pytest.mark.parametrize("task", sorted(TASKS))
def test_a_bucket_function_by_module_rebuilds_the_task_s_own_analysis(capsys, monkeypatch, module_dir, task) -> None:
    references, systems, body, own, options = TASKS[task]
    name = _write(module_dir, body)
    monkeypatch.chdir(module_dir[0])
    report = analysis_json(capsys, task, references, systems, "--bucket", f"mine={name}:rebuilt", *options, samples=50)
    mine, theirs = report["analyses"]["mine"], report["analyses"][own]
    assert set(mine) == set(theirs) and mine
    for bucket, entry in theirs.items():
        for figures, expected in zip(mine[bucket]["figures"], entry["figures"]):
            expected = expected.get("all", expected)  # constituency's overall nests its all/len40 figures
            assert {k: figures[k] for k in expected} == expected, (task, bucket)
        assert mine[bucket]["units"] == entry["units"]
    assert report["titles"]["mine"] == "mine"


def test_a_file_path_a_default_name_a_dotted_attribute_and_several_buckets(capsys, tmp_path) -> None:
    path = tmp_path / "elsewhere" / "rules.py"
    path.parent.mkdir()
    path.write_text(textwrap.dedent(MODULE.format(body="return x.label")), encoding="utf-8")
    references, systems = NER
    report = analysis_json(
        capsys, "ner", references, systems,
        "--bucket", f"{path}:capitalised", "--bucket", f"{path}:Rules.by_side", "--bucket", f"label={path}:rebuilt",
        samples=50,
    )  # fmt: skip
    analyses = report["analyses"]
    assert list(analyses)[:6] == ["overall", "type", "length", "capitalised", "by_side", "label"]
    assert set(analyses["by_side"]) == {"reference", "predicted"}
    # a bucket's count is its reference entities: all of them on the reference side, none on the predicted side
    assert analyses["by_side"]["reference"]["count"] == analyses["overall"]["all"]["count"] > 0
    assert analyses["by_side"]["predicted"]["count"] == 0
    counts = [analyses["capitalised"][b]["count"] for b in analyses["capitalised"]]
    assert sum(counts) == analyses["overall"]["all"]["count"]


def test_every_format_shows_the_user_s_buckets(capsys, tmp_path) -> None:
    path = tmp_path / "b.py"
    path.write_text(textwrap.dedent(MODULE.format(body="return x.label")), encoding="utf-8")
    references, systems = NER
    base = ["analyze", "ner", "--references", str(references), "--system", str(systems[0]), "--system", str(systems[1])]
    for form, needle in (("table", "capitalised"), ("latex", "capitalised"), ("html", "capitalised")):
        code, out, err = run(capsys, *base, "--samples", "20", "--bucket", f"{path}:capitalised", "--format", form)
        assert code == 0, err
        assert needle in out and "other" in out, form


def test_bad_bucket_functions_end_in_one_line_naming_function_and_item(capsys, monkeypatch, module_dir) -> None:
    name = _write(module_dir, "return x.label")
    (module_dir[0] / "raising_at_import.py").write_text("raise RuntimeError('no config here')\n", encoding="utf-8")
    monkeypatch.chdir(module_dir[0])
    references, systems = NER
    base = ["--references", str(references), "--system", str(systems[0])]
    item = "Entity(sentence=0, start=0, end=2, label='PER', text='Ana Ferreira', side='reference')"
    cases = [
        ([*base, "--bucket", "no_such_module:f"], "--bucket no_such_module:f: cannot import module 'no_such_module'"),
        ([*base, "--bucket", "missing.py:f"], "--bucket missing.py:f: cannot import missing.py: no such file"),
        ([*base, "--bucket", "raising_at_import:f"], "raised RuntimeError: no config here"),
        ([*base, "--bucket", f"{name}:nothing"], f"{name} has no attribute 'nothing'"),
        ([*base, "--bucket", f"{name}:Rules.none"], f"{name}:Rules has no attribute 'none'"),
        ([*base, "--bucket", f"{name}:not_a_function"], "is not callable (it is int 5)"),
        ([*base, "--bucket", f"{name}:number"], f"--bucket {name}:number: the bucket function returned int 3 for "
         f"the item {item}; expected a non-empty string"),
        ([*base, "--bucket", f"{name}:empty"], "returned an empty string for the item Entity("),
        ([*base, "--bucket", f"{name}:broken"], f"--bucket {name}:broken: the bucket function raised KeyError: "
         f"'missing' on the item {item}"),
        ([*base, "--bucket", f"{name}:rebuilt", "--bucket", f"{name}:rebuilt"], "two bucketings named 'rebuilt'"),
        ([*base, "--bucket", f"type={name}:rebuilt"], "may not be named 'type'"),
    ]  # fmt: skip
    assert_one_line_errors(capsys, "ner", cases)


@pytest.mark.parametrize("value", ["just_a_module", "mod:", ":f", "mod:not-a-name", "=mod:f", "a b:f"])
def test_a_malformed_bucket_option_is_a_usage_error(capsys, value) -> None:
    references, systems = NER
    code, out, err = run(
        capsys, "analyze", "ner", "--references", str(references), "--system", str(systems[0]), "--bucket", value
    )
    assert code == 2 and out == "" and "argument --bucket: expected" in err and "Traceback" not in err


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_s_help_names_the_option_and_what_the_function_is_given(capsys, task) -> None:
    code, out, _ = run(capsys, "analyze", task, "--help")
    text = " ".join(out.split())
    assert code == 0 and "--bucket [NAME=]MODULE:FUNCTION" in text
    assert f"of metametric_jax.tasks.{task}_analysis" in text


def test_a_loaded_function_pickles_by_its_spec(tmp_path) -> None:
    path = tmp_path / "b.py"
    path.write_text("def f(x):\n    return x.upper()\n", encoding="utf-8")
    function = analysis_custom.load(analysis_custom.parse(f"up={path}:f"))
    again = pickle.loads(pickle.dumps(function))
    assert again("a") == "A" and again.spec == function.spec
    with pytest.raises(ValueError, match=r"returned an empty string for the item ''"):
        again("")


def test_the_readme_s_bucket_example_runs_as_written(capsys, monkeypatch, tmp_path) -> None:
    import re
    import shlex

    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text(encoding="utf-8")
    section = text[text.index("Your own buckets: `--bucket") : text.index("## All cores")]
    (code_block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    (command,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    name = code_block.splitlines()[0].removeprefix("# ").strip()
    module = f"readme_buckets_{abs(hash(str(tmp_path))) % 10**9}"
    (tmp_path / f"{module}.py").write_text(code_block, encoding="utf-8")
    argv = [a.replace(name.removesuffix(".py") + ":", module + ":") for a in shlex.split(command.strip())[1:]]
    argv = [str(root / a) if a.startswith("metametric_jax/data") else a for a in argv]
    monkeypatch.chdir(tmp_path)
    try:
        code, out, err = run(capsys, *argv, "--samples", "20", "--format", "json")
    finally:
        sys.modules.pop(module, None)
    assert code == 0, err
    import json

    case = json.loads(out)["analyses"]["case"]
    assert set(case) == {"capitalised", "lower case"} or set(case) == {"capitalised"}


def test_a_bucket_file_imports_modules_beside_it_at_load_and_at_call(capsys, tmp_path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    suffix = abs(hash(str(tmp_path))) % 10**9
    (folder / f"labels_{suffix}.py").write_text(
        "def group(label):\n    return 'person' if label == 'PER' else 'other'\n"
    )
    (folder / f"lazy_{suffix}.py").write_text("def length(e):\n    return f'{e.end - e.start} tokens'\n")
    (folder / "b.py").write_text(
        f"from labels_{suffix} import group\n\n"
        "def by_group(e):\n    return group(e.label)\n\n"
        f"def by_length(e):\n    from lazy_{suffix} import length\n    return length(e)\n",
        encoding="utf-8",
    )
    references, systems = NER
    try:
        report = analysis_json(
            capsys, "ner", references, systems[:1],
            "--bucket", f"{folder / 'b.py'}:by_group", "--bucket", f"{folder / 'b.py'}:by_length", samples=20,
        )  # fmt: skip
    finally:
        for name in (f"labels_{suffix}", f"lazy_{suffix}"):
            sys.modules.pop(name, None)
    assert set(report["analyses"]["by_group"]) == {"person", "other"}
    assert "1 tokens" in report["analyses"]["by_length"]
