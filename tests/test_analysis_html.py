"""The HTML report: one self-contained file whose numbers are the JSON's, checked in a real headless browser.

Static checks run everywhere (no external URL or resource, a Content-Security-Policy, every number's full value equal
to the JSON's, the page without matplotlib). The browser checks need Debian's ``chromium`` (``.ci/run`` installs it):
the rendered DOM's numbers equal the JSON's, nothing is logged to the console (no error, no blocked request, every
host name unresolvable), the tables read with scripts disabled, and a header click sorts a table.
"""

from __future__ import annotations

import builtins
import html.parser
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from metametric_jax import analysis_report
from metametric_jax.cli import main

TYPES = ("PER", "LOC", "ORG", "MISC")


def corpus(n: int = 240, seed: int = 0) -> dict[str, list[str]]:
    """Lines of a reference file and two system files (two-file layout, a document every 6 sentences)."""
    rng = random.Random(seed)
    out: dict[str, list[str]] = {"gold": [], "a": [], "b": []}
    for k in range(n):
        if k % 6 == 0:
            for side in out.values():
                side += ["-DOCSTART- O", ""]
        length = rng.randint(3, 14)
        tokens = [f"w{rng.randint(0, 30)}" for _ in range(length)]
        tags = ["O"] * length
        i = 0
        while i < length:
            if rng.random() < 0.3:
                size = min(rng.choice((1, 2, 2, 3, 5)), length - i)
                t = rng.choice(TYPES)
                tags[i : i + size] = [f"B-{t}"] + [f"I-{t}"] * (size - 1)
                i += size + 1
            else:
                i += 1
        sides = {"gold": tags}
        for name, rate in (("a", 0.12), ("b", 0.05)):
            sides[name] = [t if rng.random() > rate else rng.choice(["O", "B-PER", "B-LOC"]) for t in tags]
        for name, side_tags in sides.items():
            out[name] += [f"{w} {t}" for w, t in zip(tokens, side_tags)] + [""]
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("report")
    out = {}
    for name, lines in corpus().items():
        out[name] = tmp / f"{name}.txt"
        out[name].write_text("\n".join(lines), encoding="utf-8")
    return out


def render(capsys, files: dict[str, Path], tmp: Path, *extra: str) -> tuple[dict, str, Path]:
    base = ["analyze", "ner", "--references", str(files["gold"]), "--system", str(files["a"])]
    base += ["--system", str(files["b"]), "--samples", "300", *extra]
    assert main([*base, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    page = tmp / "report.html"
    assert main([*base, "--format", "html", "--out", str(page)]) == 0
    capsys.readouterr()
    return report, page.read_text(encoding="utf-8"), page


class Cells(html.parser.HTMLParser):
    """Every ``<td data-key data-value>`` of a page, with its shown text; the ``<th>`` attributes; the body's."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[str, tuple[str, str]] = {}
        self.headers: list[dict[str, str | None]] = []
        self.body: dict[str, str | None] = {}
        self._open: tuple[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-key" in a:
            self._open = (a["data-key"], a.get("data-value") or "")
            self._text = []
        elif tag == "th":
            self.headers.append(a)
        elif tag == "body":
            self.body = a

    def handle_data(self, data):
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            key, value = self._open
            self.cells[key] = (value, "".join(self._text).strip())
            self._open = None


def json_value(report: dict, key: str):
    node = report["analyses"]
    for part in key.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def valued_cells(report: dict, parser: Cells):
    """``(key, shown text, JSON value)`` of each cell holding a value, its full value checked equal to the JSON's.

    A cell of a JSON ``null`` holds no value and shows a dash (or "too small"): checked, and not yielded.
    """
    for key, (value, shown) in parser.cells.items():
        expected = json_value(report, key)
        if expected is None:
            assert value == "" and shown in ("–", "too small"), key
            continue
        assert float(value) == expected, key
        yield key, shown, expected


def check_numbers(report: dict, page: str) -> int:
    """Every number of the page equals the JSON's: its full value exactly, and its shown text as rounded."""
    parser = Cells()
    parser.feed(page)
    scale = report["scale"]
    for key, shown, expected in valued_cells(report, parser):
        if isinstance(expected, bool):
            continue
        if key.endswith(("/p_value", "/p_adjusted", "/p_error")):
            assert float(shown) == pytest.approx(expected, rel=1e-3, abs=1e-4), key
        elif isinstance(expected, int) or key.endswith(("/count", "/units")) or "/matrices/" in key:
            assert shown == str(expected), key
        elif key.endswith("/delta"):
            assert shown == f"{scale * expected:+.2f}", key
        else:
            assert shown == f"{scale * expected:.2f}", key
    expected = 0
    for name in analysis_report.bucketed(report):
        for entry in report["analyses"][name].values():
            tests = [entry["test"]] if "test" in entry else entry.get("tests", [])
            expected += 2 + sum(len(f) for f in entry["figures"]) + sum(2 if t["too_small"] else 4 for t in tests)
    shown = [k for k in parser.cells if k.split("/")[0] in analysis_report.bucketed(report)]
    assert len(shown) == expected
    return len(parser.cells)


def test_page_is_self_contained(capsys, files, tmp_path) -> None:
    report, page, _ = render(capsys, files, tmp_path)
    assert f'<meta http-equiv="Content-Security-Policy" content="{analysis_report.CSP}">' in page
    assert not re.search(r"https?://", page), re.search(r".{40}https?://.{40}", page)
    assert not re.search(r"\ssrc\s*=", page)
    assert all(h.startswith("#") for h in re.findall(r"\shref\s*=\s*[\"']?([^\"'\s>]*)", page))
    assert not re.search(r"url\((?!#)", page) and "@import" not in page and "<link" not in page
    assert page.count("<svg") == len(analysis_report.bucketed(report)) + 1  # one chart per analysis, and the errors
    assert check_numbers(report, page) > 50


def test_page_without_matplotlib_says_so(capsys, files, tmp_path, monkeypatch) -> None:
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    report, page, _ = render(capsys, files, tmp_path)
    assert "<svg" not in page and 'id="no-charts"' in page and "pip install metametric-jax[report]" in page
    check_numbers(report, page)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("chromium not installed: apt-get install chromium")


def browse(page: Path, *flags: str) -> tuple[str, str]:
    argv = [
        chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom",
        '--host-resolver-rules=MAP * ~NOTFOUND', "--enable-logging=stderr", "--v=0", *flags, page.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_browser_dom_numbers_equal_the_json_and_nothing_is_logged(capsys, files, tmp_path) -> None:
    report, _, page = render(capsys, files, tmp_path, "--correction", "maxt")
    dom, log = browse(page)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not console, console
    assert check_numbers(report, dom) > 50
    parser = Cells()
    parser.feed(dom)
    assert sum(h.get("tabindex") == "0" for h in parser.headers) > 10  # the sorting script ran


def test_browser_reads_the_tables_with_scripts_disabled(capsys, files, tmp_path) -> None:
    """The page's own policy, with scripts forbidden (headless chromium's --dump-dom needs JavaScript enabled)."""
    report, page_text, _ = render(capsys, files, tmp_path)
    strict = page_text.replace("script-src 'unsafe-inline'", "script-src 'none'")
    assert strict != page_text
    page = tmp_path / "no-scripts.html"
    page.write_text(strict, encoding="utf-8")
    dom, log = browse(page)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console and all("Content Security Policy" in line and "script" in line for line in console), console
    assert check_numbers(report, dom) > 50
    assert "tabindex" not in dom  # the script did not run; the tables are all there


def test_browser_sorts_a_table_on_a_header_click(capsys, files, tmp_path) -> None:
    report, page_text, _ = render(capsys, files, tmp_path)
    probe = (
        "<script>(function () {"
        "var th = document.querySelector('table[data-analysis=\"type\"] thead th:nth-child(2)'); th.click();"
        "var rows = document.querySelectorAll('table[data-analysis=\"type\"] tbody tr');"
        "document.body.setAttribute('data-order', Array.prototype.map.call(rows, function (r) {"
        "return r.getAttribute('data-bucket'); }).join(','));"
        "})();</script></body>"
    )
    probed = tmp_path / "probe.html"
    probed.write_text(page_text.replace("</body>", probe), encoding="utf-8")
    dom, log = browse(probed)
    assert not [line for line in log.splitlines() if ":CONSOLE" in line]
    parser = Cells()
    parser.feed(dom)
    counts = {b: e["count"] for b, e in report["analyses"]["type"].items()}
    assert parser.body.get("data-order") == ",".join(sorted(counts, key=lambda b: counts[b]))
