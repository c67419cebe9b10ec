r"""Rendering an analysis report (the JSON of ``metametric-jax analyze``) as tables, one HTML file, or LaTeX.

The JSON is the source: every other form is rendered from it alone, so the numbers of a table, a web page and a paper
are the JSON's (rounded for display; the HTML keeps each number's full value in a ``data-value`` attribute).

* :func:`tables` — rich tables for the terminal.
* :func:`html` — one self-contained HTML file: the statement of the test, sortable tables (a small inline script;
  readable without it), and static SVG charts drawn by matplotlib inside the page (``pip install
  metametric-jax[report]``; without matplotlib the page says so and shows the tables). No network request of any
  kind: no external stylesheet, script, font or image, and a Content-Security-Policy that forbids them.
* :func:`latex` — booktabs tables (``\usepackage{booktabs}``) of the tested figure per bucket, the error categories
  and the confusion matrices.

The JSON (``"version": 1``): ``{"version", "task", "systems", "baseline", "references", "unit", "n", "samples",
"seed", "scale", "correction": {"method", "description", "statistic", "family", "tests", "floor", "min_units",
"figures"}, "titles", "analyses": {ANALYSIS: {BUCKET: {"count", "units", "figures": [one {figure: value} per
system], "test" | "tests"}}, "errors"?, "confusion"?, TABLE...}, "notes", "warnings"}``; see
:mod:`metametric_jax.analysis`. ``errors`` is NER's ``{SCHEME: [one {"correct", ...} per system]}`` or
coreference's ``[one {CATEGORY: {"count", "gain": {FIGURE: F1 gained}}} per system]`` (Kummerfeld and Klein's
categories). ``counted``, optional, says what each analysis's ``count`` counts (``reference items`` otherwise).
``confusion`` may name its ``title`` and ``description`` (NER's type confusion otherwise). A *table* section
(``{"title", "description"?, "columns": [...], "rows": [[...], ...]}``: EVALB's per-sentence table, per-query wins
and losses) is shown as it is, its numbers as the bucket tables show theirs (integers as they are, fractions at the
report's scale).
"""

from __future__ import annotations

import html as _html
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from metametric_jax.intervals import strict

__all__ = [
    "CSP",
    "dumps",
    "tables",
    "html",
    "latex",
    "charts",
    "bucketed",
    "table_sections",
    "is_table",
    "system_names",
]

#: the page's Content-Security-Policy: nothing may be loaded from anywhere
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

_SPECIAL = ("errors", "confusion")


def dumps(report: Mapping[str, Any]) -> str:
    """The report as strict JSON text (``null`` for non-finite numbers)."""
    return json.dumps(strict(report), indent=2, allow_nan=False) + "\n"


def system_names(report: Mapping[str, Any]) -> list[str]:
    """Short names of the systems: ``A`` (the baseline), ``B``, ``C``... (``S27`` past Z)."""
    n = len(report["systems"])
    return [chr(ord("A") + k) if k < 26 else f"S{k + 1}" for k in range(n)]


def is_table(section: Any) -> bool:
    """Whether an analysis is a table section (``columns`` and ``rows`` lists) rather than buckets."""
    return (
        isinstance(section, Mapping)
        and isinstance(section.get("columns"), list)
        and isinstance(section.get("rows"), list)
    )


def bucketed(report: Mapping[str, Any]) -> list[str]:
    """The names of the report's bucketed (tested) analyses, in order."""
    return [name for name, v in report["analyses"].items() if name not in _SPECIAL and not is_table(v)]


def table_sections(report: Mapping[str, Any]) -> list[str]:
    """The names of the report's table sections, in order."""
    return [name for name, v in report["analyses"].items() if name not in _SPECIAL and is_table(v)]


_CONFUSION = "Type confusion: gold (rows) x predicted (columns), entities of the same bounds"


def _shown(value: Any, scale: float) -> str:
    """A table section's cell as shown: integers as they are, fractions at the report's scale, text as it is."""
    if value is None or isinstance(value, bool):
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _fmt(value, scale)
    return str(value)


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, Mapping):
        out: dict[str, Any] = {}
        for k, v in tree.items():
            out.update(_flat(v, f"{prefix}{k}/"))
        return out
    return {prefix.rstrip("/"): tree}


def _tests(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    if "tests" in entry:
        return list(entry["tests"])
    return [entry["test"]] if entry.get("test") is not None else []


def _fmt(value: Any, scale: float, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    digits = 2 if scale == 100 else 4
    return f"{scale * value:{'+' if signed else ''}.{digits}f}"


def _p(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _statement(report: Mapping[str, Any]) -> str:
    c = report["correction"]
    names = system_names(report)
    systems = ", ".join(f"{n} = {s}" for n, s in zip(names, report["systems"]))
    scale = "in %" if report.get("scale", 100) == 100 else "as fractions"
    text = (
        f"{systems}; {report['n']} {report['unit']}. Figures {scale}. "
        f"Paired bootstrap, {report['samples']} replicates over the {report['unit']} (seed {report['seed']}); "
        "two-sided p-values, each system against A (the baseline), delta = system - A; with N replicates a p-value "
        f"is at least 1/(N+1) = {c['floor']:.2g} and carries a Monte Carlo error sqrt(p(1-p)/N). Corrected over "
        f"{c['family']}: {c['description']}"
    )
    if c.get("statistic"):
        text += f", {c['statistic']} statistics"
    text += f". Buckets with items in fewer than {c['min_units']} {report['unit']} are not tested (too small)."
    return text


# ---------------------------------------------------------------------------------------------------- rows
def _columns(report: Mapping[str, Any], name: str) -> tuple[list[str], str]:
    """The figure paths of an analysis and its tested figure."""
    table = report["analyses"][name]
    paths: list[str] = []
    for entry in table.values():
        for figures in entry["figures"]:
            for p in _flat(figures):
                if p not in paths:
                    paths.append(p)
    return paths, report["correction"]["figures"].get(name, paths[0] if paths else "")


_LABELS = {
    "precision": "P",
    "recall": "R",
    "f1": "F1",
    "muc": "MUC",
    "bcub": "B3",
    "ceafm": "CEAF-m",
    "ceafe": "CEAF-e",
    "blanc": "BLANC",
    "lea": "LEA",
    "mentions": "Mentions",
    "conll": "CoNLL",
}


def _label(path: str) -> str:
    """A figure's path as a column header: ``"f1"`` -> ``"F1"``, ``"las/precision"`` -> ``"las P"``."""
    return " ".join(_LABELS.get(part, part) for part in path.split("/"))


#: a terminal table with more figure columns than this shows the tested figure only (the other forms show them all)
TERMINAL_COLUMNS = 12


def _category(name: str) -> str:
    """An error category's key as a title: ``"span_error"`` -> ``"Span error"``."""
    return name.replace("_", " ").capitalize()


def _gains(errors: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The categories and the figures of coreference error categories (one ``{category: {count, gain}}`` per system)."""
    categories = list(errors[0]) if errors else []
    figures = list(errors[0][categories[0]]["gain"]) if categories else []
    return categories, figures


# ---------------------------------------------------------------------------------------------------- terminal
def tables(report: Mapping[str, Any]) -> list[Any]:
    """Rich tables of the report: one per analysis, the error categories and the confusion matrices."""
    from rich.table import Table

    scale = report.get("scale", 100)
    names = system_names(report)
    out = []
    for name in bucketed(report):
        paths, tested = _columns(report, name)
        title = report.get("titles", {}).get(name, name)
        table = Table(title=f"{title} ({name})")
        if len(paths) * len(names) > TERMINAL_COLUMNS:
            paths = [tested]
            table.caption = f"{_label(tested)} only: the JSON, HTML and LaTeX forms hold every figure"
        table.add_column("Bucket")
        table.add_column("Count", justify="right")
        table.add_column("Units", justify="right")
        for s in names:
            for p in paths:
                table.add_column(f"{_label(p)} {s}", justify="right")
        for s in names[1:]:
            table.add_column(f"Δ{_label(tested)} {s}−A", justify="right")
            table.add_column("p ± error", justify="right")
            table.add_column("p adj.", justify="right")
        for bucket, entry in report["analyses"][name].items():
            row = [bucket, str(entry["count"]), str(entry["units"])]
            for figures in entry["figures"]:
                flat = _flat(figures)
                row += [_fmt(flat.get(p), scale) for p in paths]
            for t in _tests(entry):
                if t["too_small"]:
                    row += [_fmt(t["delta"], scale, True), "too small", "–"]
                else:
                    err = f" ± {t['p_error']:.4f}" if t["p_error"] is not None else ""
                    row += [_fmt(t["delta"], scale, True), _p(t["p_value"]) + err, _p(t["p_adjusted"])]
            table.add_row(*row)
        out.append(table)
    errors = report["analyses"].get("errors")
    if isinstance(errors, list):
        categories, figures = _gains(errors)
        table = Table(title="Error categories (Kummerfeld and Klein 2013): count and F1 gained when fixed, in order")
        table.add_column("Category")
        table.add_column("System")
        table.add_column("Count", justify="right")
        for f in figures:
            table.add_column(f"Δ{_label(f)}", justify="right")
        for c in categories:
            for s, per in zip(names, errors):
                gain = per[c]["gain"]
                table.add_row(_category(c), s, str(per[c]["count"]), *(_fmt(gain[f], scale, True) for f in figures))
        out.append(table)
    elif errors:
        table = Table(title="Error categories (nervaluate's schemes)")
        table.add_column("Scheme")
        table.add_column("System")
        for c in ("correct", "incorrect", "partial", "missed", "spurious"):
            table.add_column(c.capitalize(), justify="right")
        table.add_column("P", justify="right")
        table.add_column("R", justify="right")
        table.add_column("F1", justify="right")
        for scheme, per_system in errors.items():
            for s, e in zip(names, per_system):
                cells = [str(e[c]) for c in ("correct", "incorrect", "partial", "missed", "spurious")]
                figures = [_fmt(e.get(k), scale) for k in ("precision", "recall", "f1")]
                table.add_row(scheme, s, *cells, *figures)
        out.append(table)
    conf = report["analyses"].get("confusion")
    if conf:
        for s, matrix in zip(names, conf["matrices"]):
            table = Table(title=f"{conf.get('title', _CONFUSION)}, system {s}")
            table.add_column("gold \\ predicted")
            for c in conf["predicted"]:
                table.add_column(c, justify="right")
            for g, row in zip(conf["gold"], matrix):
                table.add_row(g, *(str(x) for x in row))
            out.append(table)
    for name in table_sections(report):
        section = report["analyses"][name]
        table = Table(title=f"{section.get('title', name)} ({name})")
        for c in section["columns"]:
            table.add_column(str(c), justify="left" if c == section["columns"][0] else "right")
        for row in section["rows"]:
            table.add_row(*(_shown(x, scale) for x in row))
        out.append(table)
    return out


def text(report: Mapping[str, Any], width: int = 160) -> str:
    """The tables as plain text (what ``--format table --out FILE`` writes)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None)
    console.print(_statement(report))
    for t in tables(report):
        console.print(t)
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------------- charts
def charts(report: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """Inline ``<svg>`` charts: each analysis's tested figure per bucket and system, and the error categories.

    Returns:
        ``[(analysis, svg)]``, or ``None`` without matplotlib.
    """
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        return None
    scale = report.get("scale", 100)
    names = system_names(report)
    out = []
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
    for k, name in enumerate(bucketed(report)):
        table = report["analyses"][name]
        _, tested = _columns(report, name)
        buckets = list(table)
        if not buckets:
            continue
        fig = Figure(figsize=(min(11.0, 2.6 + 0.45 * len(buckets) * (len(names) + 1)), 2.8))
        ax = fig.add_subplot()
        width = 0.8 / len(names)
        for s, sname in enumerate(names):
            values = [_flat(table[b]["figures"][s]).get(tested) for b in buckets]
            heights = [scale * v if v is not None else 0.0 for v in values]
            xs = [i + (s - (len(names) - 1) / 2) * width for i in range(len(buckets))]
            ax.bar(xs, heights, width=width, label=sname, color=colors[s % len(colors)])
        labels = []
        for b in buckets:
            marks = [t for t in _tests(table[b]) if t.get("p_adjusted") is not None and t["p_adjusted"] < 0.05]
            labels.append(f"{b}{' *' if marks else ''}")
        # many or long bucket names (relations, labels) would overlap: slanted, with room below
        slanted = len(buckets) * max(len(x) for x in labels) > 8 * fig.get_size_inches()[0]
        if slanted:
            ax.set_xticks(range(len(buckets)), labels, rotation=60, ha="right", rotation_mode="anchor")
            fig.set_size_inches(fig.get_size_inches()[0], 2.8 + 0.06 * max(len(x) for x in labels))
        else:
            ax.set_xticks(range(len(buckets)), labels)
        ax.set_ylabel(f"{_label(tested)}{' (%)' if scale == 100 else ''}")
        title = report.get("titles", {}).get(name, name)
        ax.set_title(f"{title}: {_label(tested)} per bucket (* adjusted p < 0.05)", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="system")
        ax.spines[["top", "right"]].set_visible(False)
        bottom = 0.45 + (0.06 * max(len(x) for x in labels) if slanted else 0.0)
        _margins(fig, left=0.65, right=0.9, bottom=bottom, top=0.35)
        out.append((name, _svg(fig, f"{name}-{k}", matplotlib)))
    errors = report["analyses"].get("errors")
    if isinstance(errors, list) and errors:
        categories, _ = _gains(errors)
        fig = Figure(figsize=(6.5, 1.0 + 0.28 * len(names) * len(categories)))
        ax = fig.add_subplot()
        height = 0.8 / len(names)
        for s, (sname, per) in enumerate(zip(names, errors)):
            ys = [i + (s - (len(names) - 1) / 2) * height for i in range(len(categories))]
            gained = [float(scale * (per[c]["gain"].get("conll") or 0.0)) for c in categories]
            ax.barh(ys, gained, height=height, label=sname, color=colors[s % len(colors)])
        ax.set_yticks(range(len(categories)), [_category(c) for c in categories])
        ax.invert_yaxis()
        ax.set_xlabel(f"CoNLL F1 gained{' (points)' if scale == 100 else ''}")
        ax.set_title("CoNLL F1 gained by fixing each error category, in order", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="system")
        ax.spines[["top", "right"]].set_visible(False)
        _margins(fig, left=1.4, right=0.9, bottom=0.5, top=0.35)
        out.append(("errors", _svg(fig, "errors", matplotlib)))
    elif errors and "strict" in errors:
        fig = Figure(figsize=(6.0, 1.2 + 0.3 * len(names) * len(errors)))
        ax = fig.add_subplot()
        cats = ("correct", "incorrect", "partial", "missed", "spurious")
        rows = [(scheme, s, e) for scheme, per in errors.items() for s, e in zip(names, per)]
        left = [0.0] * len(rows)
        for j, c in enumerate(cats):
            widths = [float(e[c]) for _, _, e in rows]
            ax.barh(range(len(rows)), widths, left=left, label=c, color=colors[j])
            left = [a + b for a, b in zip(left, widths)]
        ax.set_yticks(range(len(rows)), [f"{scheme} {s}" for scheme, s, _ in rows])
        ax.invert_yaxis()
        ax.set_title("Error categories per scheme and system (counts)", fontsize=9)
        ax.legend(fontsize=7, frameon=False, ncols=5, loc="upper center", bbox_to_anchor=(0.5, -0.08))
        ax.spines[["top", "right"]].set_visible(False)
        _margins(fig, left=1.0, right=0.2, bottom=0.75, top=0.35)
        out.append(("errors", _svg(fig, "errors", matplotlib)))
    return out


def _margins(fig: Any, *, left: float, right: float, bottom: float, top: float) -> None:
    """Fixed margins in inches (cheaper than ``tight_layout``, which draws the figure once more)."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)


def _svg(fig: Any, salt: str, matplotlib: Any) -> str:
    """A figure as an inline ``<svg>`` element: no XML prolog, metadata, namespace URLs or external references."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none", "font.size": 8}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = svg.replace("xlink:href=", "href=")
    return svg.replace("<svg ", '<svg role="img" ', 1)


# ---------------------------------------------------------------------------------------------------- html
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 72em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e5e5e5; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #888; background: #f7f7f7; }
table.sortable thead th { cursor: pointer; }
table.sortable thead th[aria-sort="ascending"]::after { content: " \\25B2"; }
table.sortable thead th[aria-sort="descending"]::after { content: " \\25BC"; }
td.significant { font-weight: bold; }
td.small { color: #999; font-style: italic; }
p.statement, p.note { max-width: 60em; font-size: 0.9em; color: #444; }
dl.systems dt { font-weight: bold; float: left; width: 2em; } dl.systems dd { margin-left: 2.5em; }
figure { margin: 0.5em 0; } figure svg { max-width: 100%; height: auto; }
"""

_SCRIPT = """
(function () {
  function value(cell) {
    var v = cell.getAttribute("data-value");
    if (v !== null && v !== "") { var x = parseFloat(v); if (!isNaN(x)) { return x; } }
    return cell.textContent.trim();
  }
  function sortBy(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    rows.sort(function (a, b) {
      var x = value(a.cells[column]), y = value(b.cells[column]);
      var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
      return ascending ? c : -c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, column, th); } });
    });
  });
})();
"""


def _e(text: Any) -> str:
    return _html.escape(str(text), quote=True)


def _cell(shown: str, key: str | None = None, value: Any = None, css: str = "") -> str:
    attrs = f' class="{css}"' if css else ""
    if key is not None:
        attrs += f' data-key="{_e(key)}"'
        attrs += f' data-value="{"" if value is None else _e(repr(value) if isinstance(value, float) else value)}"'
    return f"<td{attrs}>{_e(shown)}</td>"


def html(report: Mapping[str, Any], *, title: str | None = None) -> str:
    """The report as one self-contained HTML page (tables, SVG charts, a sorting script; no external resource)."""
    scale = report.get("scale", 100)
    names = system_names(report)
    against = f" against {report['references']}" if report.get("references") else ""
    count = len(report["systems"])
    page_title = title or f"{report['task']}: {count} system{'s' if count != 1 else ''}{against}"
    svgs = charts(report)
    chart_of = dict(svgs or [])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{_e(page_title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(page_title)}</h1>",
        '<dl class="systems">',
    ]
    for n, s in zip(names, report["systems"]):
        parts.append(f"<dt>{_e(n)}</dt><dd>{_e(s)}{' (baseline)' if n == 'A' else ''}</dd>")
    if report.get("references"):
        parts.append(f"<dt>ref</dt><dd>{_e(report['references'])}</dd>")
    parts.append("</dl>")
    parts.append(f'<p class="statement" id="statement">{_e(_statement(report))}</p>')
    if svgs is None:
        need = "<code>pip install metametric-jax[report]</code>"
        parts.append(f'<p class="note" id="no-charts">Charts need matplotlib: {need}.</p>')
    for note in [*report.get("notes", []), *report.get("warnings", [])]:
        parts.append(f'<p class="note">{_e(note)}</p>')
    for name in bucketed(report):
        parts += _html_analysis(report, name, names, scale, chart_of.get(name))
    errors = report["analyses"].get("errors")
    if isinstance(errors, list):
        parts += _html_gains(errors, names, scale, chart_of.get("errors"))
    elif errors:
        parts += _html_errors(errors, names, scale, chart_of.get("errors"))
    conf = report["analyses"].get("confusion")
    if conf:
        parts += _html_confusion(conf, names)
    for name in table_sections(report):
        parts += _html_table(name, report["analyses"][name], scale)
    parts.append(f"<script>{_SCRIPT}</script>")
    parts.append("</body>")
    parts.append("</html>")
    return "\n".join(parts) + "\n"


def _html_analysis(
    report: Mapping[str, Any], name: str, names: Sequence[str], scale: float, svg: str | None
) -> list[str]:
    table = report["analyses"][name]
    paths, tested = _columns(report, name)
    title = report.get("titles", {}).get(name, name)
    out = [f'<section id="analysis-{_e(name)}">', f"<h2>{_e(title)} <small>({_e(name)})</small></h2>"]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = ["Bucket", "Count", "Units"]
    head += [f"{_label(p)} {s}" for s in names for p in paths]
    for n in names[1:]:
        head += [f"Δ{_label(tested)} {n}−A", f"p {n}", f"± {n}", f"p adj. {n}"]
    out.append(f'<table class="sortable" data-analysis="{_e(name)}">')
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>")
    out.append("<tbody>")
    for bucket, entry in table.items():
        base = f"{name}/{bucket}"
        cells = [_cell(bucket), _cell(str(entry["count"]), f"{base}/count", entry["count"])]
        cells.append(_cell(str(entry["units"]), f"{base}/units", entry["units"]))
        for s, figures in enumerate(entry["figures"]):
            flat = _flat(figures)
            for p in paths:
                cells.append(_cell(_fmt(flat.get(p), scale), f"{base}/figures/{s}/{p}", flat.get(p)))
        tests = _tests(entry)
        for s, t in enumerate(tests, start=1):
            key = f"{base}/test" if "test" in entry else f"{base}/tests/{s - 1}"
            cells.append(_cell(_fmt(t["delta"], scale, True), f"{key}/delta", t["delta"]))
            if t["too_small"]:
                cells += [_cell("too small", f"{key}/p_value", None, "small"), _cell("–"), _cell("–")]
                continue
            significant = t["p_adjusted"] is not None and t["p_adjusted"] < 0.05
            cells.append(_cell(_p(t["p_value"]), f"{key}/p_value", t["p_value"]))
            cells.append(_cell("–" if t["p_error"] is None else f"{t['p_error']:.4f}", f"{key}/p_error", t["p_error"]))
            css = "significant" if significant else ""
            cells.append(_cell(_p(t["p_adjusted"]), f"{key}/p_adjusted", t["p_adjusted"], css))
        out.append(f'<tr data-bucket="{_e(bucket)}">' + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


def _html_errors(errors: Mapping[str, Any], names: Sequence[str], scale: float, svg: str | None) -> list[str]:
    cats = ("correct", "incorrect", "partial", "missed", "spurious")
    out = ['<section id="analysis-errors">', "<h2>Error categories <small>(nervaluate's schemes)</small></h2>"]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = ["Scheme", "System", *(c.capitalize() for c in cats), "P", "R", "F1"]
    out.append('<table class="sortable" data-analysis="errors">')
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>")
    for scheme, per_system in errors.items():
        for s, (n, e) in enumerate(zip(names, per_system)):
            key = f"errors/{scheme}/{s}"
            cells = [_cell(scheme), _cell(n)]
            cells += [_cell(str(e[c]), f"{key}/{c}", e[c]) for c in cats]
            cells += [_cell(_fmt(e.get(k), scale), f"{key}/{k}", e.get(k)) for k in ("precision", "recall", "f1")]
            out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


def _html_gains(errors: Sequence[Mapping[str, Any]], names: Sequence[str], scale: float, svg: str | None) -> list[str]:
    categories, figures = _gains(errors)
    out = [
        '<section id="analysis-errors">',
        "<h2>Error categories <small>(Kummerfeld and Klein 2013: count, and F1 gained when the category's errors are "
        "fixed after those above it)</small></h2>",
    ]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = ["Category", "System", "Count", *(f"Δ{_label(f)}" for f in figures)]
    out.append('<table class="sortable" data-analysis="errors">')
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>")
    for c in categories:
        for s, (n, per) in enumerate(zip(names, errors)):
            key = f"errors/{s}/{c}"
            cells = [_cell(_category(c)), _cell(n), _cell(str(per[c]["count"]), f"{key}/count", per[c]["count"])]
            gain = per[c]["gain"]
            cells += [_cell(_fmt(gain[f], scale, True), f"{key}/gain/{f}", gain[f]) for f in figures]
            out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


def _html_confusion(conf: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    if "title" in conf:
        heading = f"<h2>{_e(conf['title'])}</h2>"
        if conf.get("description"):
            heading += f'<p class="note">{_e(conf["description"])}</p>'
    else:
        heading = "<h2>Type confusion <small>(gold rows × predicted columns, entities of the same bounds)</small></h2>"
    out = ['<section id="analysis-confusion">', heading]
    for s, (n, matrix) in enumerate(zip(names, conf["matrices"])):
        out.append(f"<h3>System {_e(n)}</h3>")
        out.append(f'<table data-analysis="confusion" data-system="{s}">')
        head = ["gold \\ predicted", *conf["predicted"]]
        out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>")
        for i, (g, row) in enumerate(zip(conf["gold"], matrix)):
            cells = [_cell(g)] + [_cell(str(x), f"confusion/matrices/{s}/{i}/{j}", x) for j, x in enumerate(row)]
            out.append("<tr>" + "".join(cells) + "</tr>")
        out += ["</tbody>", "</table>"]
    out.append("</section>")
    return out


def _html_table(name: str, section: Mapping[str, Any], scale: float) -> list[str]:
    out = [
        f'<section id="analysis-{_e(name)}">',
        f"<h2>{_e(section.get('title', name))} <small>({_e(name)})</small></h2>",
    ]
    if section.get("description"):
        out.append(f'<p class="note">{_e(section["description"])}</p>')
    out.append(f'<table class="sortable" data-analysis="{_e(name)}">')
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in section["columns"]) + "</tr></thead><tbody>")
    for i, row in enumerate(section["rows"]):
        cells = []
        for j, x in enumerate(row):
            if x is None or isinstance(x, (int, float)) and not isinstance(x, bool):
                cells.append(_cell(_shown(x, scale), f"{name}/rows/{i}/{j}", x))
            else:
                cells.append(_cell(_shown(x, scale)))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


# ---------------------------------------------------------------------------------------------------- latex
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: Any) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex(report: Mapping[str, Any]) -> str:
    """booktabs tables: the tested figure per bucket and system with the tests, the error categories, confusions."""  # noqa: D403
    scale = report.get("scale", 100)
    names = system_names(report)
    c = report["correction"]
    lines = [
        f"% metametric-jax analyze {report['task']}: "
        + "; ".join(f"{n} = {s}" for n, s in zip(names, report["systems"])),
        r"% \usepackage{booktabs}",
    ]
    counted = report.get("counted", {})
    for name in bucketed(report):
        table = report["analyses"][name]
        _, tested = _columns(report, name)
        title = report.get("titles", {}).get(name, name)
        spec = "l r " + "r" * len(names) + " " + "rr" * (len(names) - 1)
        head = ["Bucket", "Count", *(f"{_label(tested)} {s}" for s in names)]
        for s in names[1:]:
            head += [rf"$\Delta$ {s}", rf"$p_{{\mathrm{{adj}}}}$ {s}"]
        lines += [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
        lines.append(" & ".join(_tex(h) if "$" not in h else h for h in head) + r" \\")
        lines.append(r"\midrule")
        for bucket, entry in table.items():
            row = [_tex(bucket), str(entry["count"])]
            row += [_fmt(_flat(f).get(tested), scale) for f in entry["figures"]]
            for t in _tests(entry):
                delta = _fmt(t["delta"], scale, True)
                if t["too_small"]:
                    row += [delta, "--"]
                else:
                    p = _p(t["p_adjusted"])
                    significant = t["p_adjusted"] is not None and t["p_adjusted"] < 0.05
                    row += [rf"\textbf{{{delta}}}" if significant else delta, p]
            lines.append(" & ".join(row) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        percent = r" (\%)" if scale == 100 else ""
        caption = (
            f"{title}: {_label(tested)} per bucket{percent}; count = {_tex(counted.get(name, 'reference items'))}. "
            f"$\\Delta$ = system $-$ A; paired bootstrap, {report['samples']} replicates over "
            f"{report['n']} {report['unit']}, two-sided $p$ corrected over {c['tests']} tests ({_tex(c['method'])}); "
            f"bold: adjusted $p < 0.05$; -- : fewer than {c['min_units']} {report['unit']}."
        )
        lines += [rf"\caption{{{caption}}}", rf"\label{{tab:{_tex(report['task'])}-{_tex(name)}}}", r"\end{table}", ""]
    errors = report["analyses"].get("errors")
    if isinstance(errors, list):
        categories, figures = _gains(errors)
        lines += [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{ll r {'r' * len(figures)}}}"]
        lines.append(r"\toprule")
        lines.append(
            "Category & System & Count & " + " & ".join(rf"$\Delta$ {_tex(_label(f))}" for f in figures) + r" \\"
        )
        lines.append(r"\midrule")
        for c in categories:
            for n, per in zip(names, errors):
                gains = [_fmt(per[c]["gain"][f], scale, True) for f in figures]
                lines.append(" & ".join([_tex(_category(c)), n, str(per[c]["count"]), *gains]) + r" \\")
        caption = (
            "Coreference error categories (Kummerfeld and Klein 2013): number of errors, and F1 gained when the "
            "category's errors are fixed after those of the categories above it"
            + (r" (points)." if scale == 100 else ".")
        )
        lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}"]
        lines += [rf"\label{{tab:{_tex(report['task'])}-errors}}", r"\end{table}", ""]
    elif errors:
        cats = ("correct", "incorrect", "partial", "missed", "spurious")
        lines += [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{ll rrrrr rrr}", r"\toprule"]
        lines.append("Scheme & System & " + " & ".join(c.capitalize() for c in cats) + r" & P & R & F1 \\")
        lines.append(r"\midrule")
        for scheme, per_system in errors.items():
            for n, e in zip(names, per_system):
                figures = [_fmt(e.get(k), scale) for k in ("precision", "recall", "f1")]
                lines.append(" & ".join([_tex(scheme), n, *(str(e[c]) for c in cats), *figures]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\caption{Error categories under nervaluate's schemes.}"]
        lines += [rf"\label{{tab:{_tex(report['task'])}-errors}}", r"\end{table}", ""]
    conf = report["analyses"].get("confusion")
    if conf:
        for n, matrix in zip(names, conf["matrices"]):
            lines += [r"\begin{table}[t]", r"\centering", r"\small"]
            lines += [rf"\begin{{tabular}}{{l {'r' * len(conf['predicted'])}}}", r"\toprule"]
            lines.append(r"gold $\backslash$ predicted & " + " & ".join(_tex(x) for x in conf["predicted"]) + r" \\")
            lines.append(r"\midrule")
            for g, row in zip(conf["gold"], matrix):
                lines.append(" & ".join([_tex(g), *(str(x) for x in row)]) + r" \\")
            lines += [r"\bottomrule", r"\end{tabular}"]
            caption = _tex(conf["title"]) if "title" in conf else "Type confusion: entities of the same bounds"
            lines.append(rf"\caption{{{caption}; system {n}.}}")
            lines += [rf"\label{{tab:{_tex(report['task'])}-confusion-{n}}}", r"\end{table}", ""]
    for name in table_sections(report):
        lines += _latex_table(report, name, scale)
    return "\n".join(lines)


#: a table section with more rows than this is left to the JSON and HTML forms in LaTeX
LATEX_ROWS = 60


def _latex_table(report: Mapping[str, Any], name: str, scale: float) -> list[str]:
    section = report["analyses"][name]
    rows = section["rows"]
    title = section.get("title", name)
    if len(rows) > LATEX_ROWS:
        return [f"% {_tex(title)}: {len(rows)} rows, in the JSON and HTML forms of the report", ""]
    columns = section["columns"]
    lines = [r"\begin{table}[t]", r"\centering", r"\small"]
    lines += [rf"\begin{{tabular}}{{l {'r' * (len(columns) - 1)}}}", r"\toprule"]
    lines.append(" & ".join(_tex(c) for c in columns) + r" \\")
    lines.append(r"\midrule")
    for row in rows:
        lines.append(" & ".join(_tex(_shown(x, scale)) for x in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_tex(title)}.}}"]
    lines += [rf"\label{{tab:{_tex(report['task'])}-{_tex(name)}}}", r"\end{table}", ""]
    return lines
