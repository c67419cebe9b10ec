"""Every task's HTML report in headless chromium: the DOM's numbers are the JSON's, nothing logged or fetched.

One test per task over the bundled sample data (two systems: the sample system and a second one, so the tests' cells
are shown too): ``analyze TASK --format json`` and ``--format html`` of the same request; the page is opened in
Debian's ``chromium`` (``.ci/run`` installs it; where it is absent the test is skipped and says why, as
:mod:`test_analysis_html`'s browser tests do). Checked on the rendered DOM:

* every number of the JSON's analyses has its cell (``data-key`` = its path), whose full value (``data-value``) equals
  the JSON's exactly and whose text is the value as rounded for the report's scale; every cell's key is a path of the
  JSON (nothing shown that the JSON does not hold);
* the console is empty (no script error, no blocked load);
* no request leaves the page: chromium's network log (``--log-net-log``) holds no request made for the page (the
  browser's own background requests, made for no page, are told apart by their initiator);
* the sorting script ran (its headers are focusable).

A probe page that logs an error and loads an image shows that both detectors see what they look for.
"""

from __future__ import annotations

import json
import math
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from helpers import run
from test_analysis_html import Cells, chromium, valued_cells

DATA = Path(__file__).resolve().parents[1] / "metametric_jax" / "data"

#: per task: the reference file, the two systems (the baseline first) and the task's options
SAMPLES: dict[str, tuple[Path, tuple[Path, Path], tuple[str, ...]]] = {
    "ner": (DATA / "ner/gold.txt", (DATA / "ner/pred.txt", DATA / "ner/pred_b.txt"), ("--unit", "sentence")),
    "coref": (DATA / "coref/sample.key", (DATA / "coref/sample.response", DATA / "coref/sample.key"), ()),
    "amr": (DATA / "amr/gold.txt", (DATA / "amr/pred.txt", DATA / "amr/gold.txt"), ()),
    "dependency": (DATA / "parsing/gold.conllu", (DATA / "parsing/pred.conllu", DATA / "parsing/gold.conllu"), ()),
    "constituency": (DATA / "parsing/gold.mrg", (DATA / "parsing/pred.mrg", DATA / "parsing/gold.mrg"), ()),
    "ranking": (DATA / "ranking/sample.qrels", (DATA / "ranking/sample.run", DATA / "ranking/sample.run"), ()),
    "rouge": (DATA / "rouge/references.txt", (DATA / "rouge/predictions.txt", DATA / "rouge/references.txt"), ()),
    "ie": (DATA / "ie/gold.jsonl", (DATA / "ie/pred.jsonl", DATA / "ie/gold.jsonl"), ()),
}

#: numbers of the JSON the page does not show: nervaluate's derived totals (``possible``, ``actual``)
NOT_SHOWN = ("/possible", "/actual")


def render(capsys, task: str, tmp: Path) -> tuple[dict[str, Any], Path]:
    """``analyze TASK`` of the bundled sample: its JSON, and its HTML page written under ``tmp``."""
    references, systems, options = SAMPLES[task]
    argv = ["analyze", task, "--references", str(references), "--system", str(systems[0]), "--system", str(systems[1])]
    argv += [*options, "--samples", "100", "--min-units", "2"]
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    page = tmp / f"{task}.html"
    code, _, err = run(capsys, *argv, "--format", "html", "--out", str(page))
    assert code == 0, err
    return json.loads(out), page


def browse(page: Path, tmp: Path) -> tuple[str, list[str], list[str]]:
    """The page's DOM after its scripts ran, the console's lines, and the URLs of the requests made for the page."""
    net = tmp / f"{page.stem}.netlog.json"
    argv = [
        chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0", f"--log-net-log={net}",
        page.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console, page_requests(net)


def page_requests(net: Path) -> list[str]:
    """The URLs of the network log's requests made for a page (not the browser's own, whose initiator is none)."""
    text = net.read_text(encoding="utf-8").rstrip()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut at exit ends with "," inside its list of events
        log = json.loads(text.rstrip(",") + "]}")
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        e["params"]["url"]
        for e in log["events"]
        if e["type"] == start and e.get("params", {}).get("initiator", "not an origin") != "not an origin"
    ]


def numbers(tree: Any, prefix: str) -> set[str]:
    """The paths of the numbers (not booleans, not None) under ``tree``, joined with ``/`` as the cells' keys."""
    if isinstance(tree, dict):
        return {p for k, v in tree.items() for p in numbers(v, f"{prefix}/{k}")}
    if isinstance(tree, list):
        return {p for k, v in enumerate(tree) for p in numbers(v, f"{prefix}/{k}")}
    return {prefix} if isinstance(tree, int | float) and not isinstance(tree, bool) else set()


def shown_as(report: dict[str, Any], key: str, expected: Any) -> str | None:
    """A cell's text for the JSON's value: ``None`` where any text near the value will do (p-values)."""
    scale = report["scale"]
    if isinstance(expected, bool) or isinstance(expected, int):
        return str(expected)
    if key.endswith(("/p_value", "/p_adjusted", "/p_error")):
        return None
    signed = "+" if key.endswith("/delta") or "/gain/" in key else ""
    digits = 2 if scale == 100 else 4
    if report["of_counts"] and not signed:  # EVALB, conlleval: 100.0 * a / b of the counts
        share = Fraction(expected).limit_denominator(1 << 26)
        return f"{100.0 * share.numerator / share.denominator:.{digits}f}"
    if report["truncated"]:  # coreference: scorer.pl's int(x * 10000) / 100, the last digit cut
        return f"{math.trunc(expected * (scale * 10**digits)) / 10**digits:{signed}.{digits}f}"
    return f"{scale * expected:{signed}.{digits}f}"


def check_dom(report: dict[str, Any], dom: str) -> int:
    """Every number of the JSON's analyses is in a cell of the DOM, the same value; no cell holds another one."""
    parser = Cells()
    parser.feed(dom)
    for key, shown, expected in valued_cells(report, parser):
        text = shown_as(report, key, expected)
        if text is None:
            assert float(shown) == pytest.approx(expected, rel=1e-3, abs=1e-4), key
        else:
            assert shown == text, key
    wanted = {p for name, section in report["analyses"].items() for p in numbers(section, name)}
    missing = sorted(p for p in wanted - set(parser.cells) if not p.endswith(NOT_SHOWN))
    assert not missing, missing[:10]
    assert sum(h.get("tabindex") == "0" for h in parser.headers) >= len(report["analyses"])  # the sorting script ran
    return len(parser.cells)


@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_the_dom_shows_the_json_s_numbers_logs_nothing_and_fetches_nothing(capsys, tmp_path, task) -> None:
    chromium()
    report, page = render(capsys, task, tmp_path)
    assert report["task"] == task and len(report["systems"]) == 2
    dom, console, requests = browse(page, tmp_path)
    assert not console, console
    assert not requests, requests
    assert check_dom(report, dom) >= 40


def test_the_detectors_see_a_console_error_and_a_request(tmp_path) -> None:
    chromium()
    probe = tmp_path / "probe.html"
    probe.write_text(
        '<!doctype html><html><body><script>console.error("probe")</script>'
        '<img src="http://metametric-jax.invalid/probe.png"></body></html>',
        encoding="utf-8",
    )
    _, console, requests = browse(probe, tmp_path)
    assert any("probe" in line for line in console), console
    assert requests == ["http://metametric-jax.invalid/probe.png"]
