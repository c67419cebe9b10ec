"""An analysis report as one self-contained HTML page: sortable tables and inline SVG charts, nothing loaded.

The page (:func:`html`) holds the statement of the test, the report's tables (sortable by a small inline script,
readable without it; each number's full value in a ``data-value`` attribute) and static SVG charts drawn by matplotlib
(:func:`charts`; ``pip install metametric-jax[report]``; without matplotlib the page says so and shows the tables).
No network request of any kind: no external stylesheet, script, font or image, and a Content-Security-Policy
(:data:`CSP`) that forbids them. The shared reading of the JSON is :mod:`metametric_jax.analysis_report`'s.
"""

from __future__ import annotations

import html as _html
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from metametric_jax import analysis_report as common
from metametric_jax._table import Scale

__all__ = ["CSP", "html", "charts"]

#: the page's Content-Security-Policy: nothing may be loaded from anywhere
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


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
    scale = Scale.of(report)
    names = common.system_names(report)
    out = []
    colors = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
    for k, name in enumerate(common.bucketed(report)):
        table = report["analyses"][name]
        _, tested = common._columns(report, name)
        buckets = list(table)
        if not buckets:
            continue
        fig = Figure(figsize=(min(11.0, 2.6 + 0.45 * len(buckets) * (len(names) + 1)), 2.8))
        ax = fig.add_subplot()
        width = 0.8 / len(names)
        for s, sname in enumerate(names):
            values = [common._flat(table[b]["figures"][s]).get(tested) for b in buckets]
            heights = [scale.factor * v if v is not None else 0.0 for v in values]
            xs = [i + (s - (len(names) - 1) / 2) * width for i in range(len(buckets))]
            ax.bar(xs, heights, width=width, label=sname, color=colors[s % len(colors)])
        labels = []
        for b in buckets:
            marks = [t for t in common._tests(table[b]) if common._significant(t)]
            labels.append(f"{b}{' *' if marks else ''}")
        # many or long bucket names (relations, labels) would overlap: slanted, with room below
        slanted = len(buckets) * max(len(x) for x in labels) > 8 * fig.get_size_inches()[0]
        if slanted:
            ax.set_xticks(range(len(buckets)), labels, rotation=60, ha="right", rotation_mode="anchor")
            fig.set_size_inches(fig.get_size_inches()[0], 2.8 + 0.06 * max(len(x) for x in labels))
        else:
            ax.set_xticks(range(len(buckets)), labels)
        ax.set_ylabel(f"{common._label(tested)}{' (%)' if scale.percent else ''}")
        title = report.get("titles", {}).get(name, name)
        ax.set_title(f"{title}: {common._label(tested)} per bucket (* adjusted p < {common.ALPHA})", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="system")
        ax.spines[["top", "right"]].set_visible(False)
        bottom = 0.45 + (0.06 * max(len(x) for x in labels) if slanted else 0.0)
        _margins(fig, left=0.65, right=0.9, bottom=bottom, top=0.35)
        out.append((name, _svg(fig, f"{name}-{k}", matplotlib)))
    errors = report["analyses"].get("errors")
    if isinstance(errors, list) and errors:
        categories, _ = common._gains(errors)
        fig = Figure(figsize=(6.5, 1.0 + 0.28 * len(names) * len(categories)))
        ax = fig.add_subplot()
        height = 0.8 / len(names)
        for s, (sname, per) in enumerate(zip(names, errors)):
            ys = [i + (s - (len(names) - 1) / 2) * height for i in range(len(categories))]
            gained = [float(scale.factor * (per[c]["gain"].get("conll") or 0.0)) for c in categories]
            ax.barh(ys, gained, height=height, label=sname, color=colors[s % len(colors)])
        ax.set_yticks(range(len(categories)), [common._category(c) for c in categories])
        ax.invert_yaxis()
        ax.set_xlabel(f"CoNLL F1 gained{' (points)' if scale.percent else ''}")
        ax.set_title("CoNLL F1 gained by fixing each error category, in order", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="system")
        ax.spines[["top", "right"]].set_visible(False)
        _margins(fig, left=1.4, right=0.9, bottom=0.5, top=0.35)
        out.append(("errors", _svg(fig, "errors", matplotlib)))
    elif errors and "strict" in errors:
        fig = Figure(figsize=(6.0, 1.2 + 0.3 * len(names) * len(errors)))
        ax = fig.add_subplot()
        rows = [(scheme, s, e) for scheme, per in errors.items() for s, e in zip(names, per)]
        left = [0.0] * len(rows)
        for j, c in enumerate(common._SCHEME_COUNTS):
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


def _head(names: Iterable[Any]) -> str:
    """A table's header row."""
    return "<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in names) + "</tr></thead>"


def _cell(shown: str, key: str | None = None, value: Any = None, css: str = "") -> str:
    attrs = f' class="{css}"' if css else ""
    if key is not None:
        attrs += f' data-key="{_e(key)}"'
        attrs += f' data-value="{"" if value is None else _e(repr(value) if isinstance(value, float) else value)}"'
    return f"<td{attrs}>{_e(shown)}</td>"


def html(report: Mapping[str, Any], *, title: str | None = None) -> str:
    """The report as one self-contained HTML page (tables, SVG charts, a sorting script; no external resource)."""
    scale = Scale.of(report)
    names = common.system_names(report)
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
    parts.append(f'<p class="statement" id="statement">{_e(common._statement(report))}</p>')
    if svgs is None:
        need = "<code>pip install metametric-jax[report]</code>"
        parts.append(f'<p class="note" id="no-charts">Charts need matplotlib: {need}.</p>')
    for note in [*report.get("notes", []), *report.get("warnings", [])]:
        parts.append(f'<p class="note">{_e(note)}</p>')
    for name in common.bucketed(report):
        parts += _html_analysis(report, name, names, scale, chart_of.get(name))
    errors = report["analyses"].get("errors")
    if isinstance(errors, list):
        parts += _html_gains(errors, names, scale, chart_of.get("errors"))
    elif errors:
        parts += _html_errors(errors, names, scale, chart_of.get("errors"))
    conf = report["analyses"].get("confusion")
    if conf:
        parts += _html_confusion(conf, names)
    for name in common.table_sections(report):
        parts += _html_table(name, report["analyses"][name], scale)
    parts.append(f"<script>{_SCRIPT}</script>")
    parts.append("</body>")
    parts.append("</html>")
    return "\n".join(parts) + "\n"


def _html_analysis(
    report: Mapping[str, Any], name: str, names: Sequence[str], scale: Scale, svg: str | None
) -> list[str]:
    table = report["analyses"][name]
    paths, tested = common._columns(report, name)
    title = report.get("titles", {}).get(name, name)
    out = [f'<section id="analysis-{_e(name)}">', f"<h2>{_e(title)} <small>({_e(name)})</small></h2>"]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = ["Bucket", "Count", "Units"]
    head += [f"{common._label(p)} {s}" for s in names for p in paths]
    for n in names[1:]:
        head += [f"Δ{common._label(tested)} {n}−A", f"p {n}", f"± {n}", f"p adj. {n}"]
    out.append(f'<table class="sortable" data-analysis="{_e(name)}">')
    out += [_head(head), "<tbody>"]
    for bucket, entry in table.items():
        base = f"{name}/{bucket}"
        cells = [_cell(bucket), _cell(str(entry["count"]), f"{base}/count", entry["count"])]
        cells.append(_cell(str(entry["units"]), f"{base}/units", entry["units"]))
        for s, figures in enumerate(entry["figures"]):
            flat = common._flat(figures)
            for p in paths:
                cells.append(_cell(common._fmt(flat.get(p), scale), f"{base}/figures/{s}/{p}", flat.get(p)))
        tests = common._tests(entry)
        for s, t in enumerate(tests, start=1):
            key = f"{base}/test" if "test" in entry else f"{base}/tests/{s - 1}"
            cells.append(_cell(common._fmt(t["delta"], scale, True), f"{key}/delta", t["delta"]))
            if t["too_small"]:
                cells += [_cell("too small", f"{key}/p_value", None, "small"), _cell("–"), _cell("–")]
                continue
            cells.append(_cell(common._p(t["p_value"]), f"{key}/p_value", t["p_value"]))
            cells.append(_cell("–" if t["p_error"] is None else f"{t['p_error']:.4f}", f"{key}/p_error", t["p_error"]))
            css = "significant" if common._significant(t) else ""
            cells.append(_cell(common._p(t["p_adjusted"]), f"{key}/p_adjusted", t["p_adjusted"], css))
        out.append(f'<tr data-bucket="{_e(bucket)}">' + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


def _html_errors(errors: Mapping[str, Any], names: Sequence[str], scale: Scale, svg: str | None) -> list[str]:
    out = ['<section id="analysis-errors">', "<h2>Error categories <small>(nervaluate's schemes)</small></h2>"]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = [
        "Scheme",
        "System",
        *(c.capitalize() for c in common._SCHEME_COUNTS),
        *map(common._label, common._SCHEME_FIGURES),
    ]
    out.append('<table class="sortable" data-analysis="errors">')
    out.append(_head(head) + "<tbody>")
    for scheme, per_system in errors.items():
        for s, (n, e) in enumerate(zip(names, per_system)):
            key = f"errors/{scheme}/{s}"
            cells = [_cell(scheme), _cell(n)]
            cells += [_cell(str(e[c]), f"{key}/{c}", e[c]) for c in common._SCHEME_COUNTS]
            cells += [_cell(common._fmt(e.get(k), scale), f"{key}/{k}", e.get(k)) for k in common._SCHEME_FIGURES]
            out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out


def _html_gains(errors: Sequence[Mapping[str, Any]], names: Sequence[str], scale: Scale, svg: str | None) -> list[str]:
    categories, figures = common._gains(errors)
    out = [
        '<section id="analysis-errors">',
        "<h2>Error categories <small>(Kummerfeld and Klein 2013: count, and F1 gained when the category's errors are "
        "fixed after those above it)</small></h2>",
    ]
    if svg:
        out.append(f"<figure>{svg}</figure>")
    head = ["Category", "System", "Count", *(f"Δ{common._label(f)}" for f in figures)]
    out.append('<table class="sortable" data-analysis="errors">')
    out.append(_head(head) + "<tbody>")
    for c in categories:
        for s, (n, per) in enumerate(zip(names, errors)):
            key = f"errors/{s}/{c}"
            cells = [_cell(common._category(c)), _cell(n), _cell(str(per[c]["count"]), f"{key}/count", per[c]["count"])]
            gain = per[c]["gain"]
            cells += [_cell(common._fmt(gain[f], scale, True), f"{key}/gain/{f}", gain[f]) for f in figures]
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
        out.append(_head(["gold \\ predicted", *conf["predicted"]]) + "<tbody>")
        for i, (g, row) in enumerate(zip(conf["gold"], matrix)):
            cells = [_cell(g)] + [_cell(str(x), f"confusion/matrices/{s}/{i}/{j}", x) for j, x in enumerate(row)]
            out.append("<tr>" + "".join(cells) + "</tr>")
        out += ["</tbody>", "</table>"]
    out.append("</section>")
    return out


def _html_table(name: str, section: Mapping[str, Any], scale: Scale) -> list[str]:
    out = [
        f'<section id="analysis-{_e(name)}">',
        f"<h2>{_e(section.get('title', name))} <small>({_e(name)})</small></h2>",
    ]
    if section.get("description"):
        out.append(f'<p class="note">{_e(section["description"])}</p>')
    out.append(f'<table class="sortable" data-analysis="{_e(name)}">')
    out.append(_head(section["columns"]) + "<tbody>")
    for i, row in enumerate(section["rows"]):
        cells = []
        for j, x in enumerate(row):
            if x is None or isinstance(x, (int, float)) and not isinstance(x, bool):
                cells.append(_cell(common._shown(x, scale), f"{name}/rows/{i}/{j}", x))
            else:
                cells.append(_cell(common._shown(x, scale)))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</section>"]
    return out
