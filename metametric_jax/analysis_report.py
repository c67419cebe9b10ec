r"""Rendering an analysis report (the JSON of ``metametric-jax analyze``) as tables, one HTML file, or LaTeX.

The JSON is the source: every other form is rendered from it alone, so the numbers of a table, a web page and a paper
are the JSON's (rounded for display; the HTML keeps each number's full value in a ``data-value`` attribute).

* :func:`tables` and :func:`text` — rich tables for the terminal (this module, with what the forms share).
* :func:`~metametric_jax.analysis_html.html` — one self-contained HTML file: the statement of the test, sortable
  tables (a small inline script; readable without it), and static SVG charts drawn by matplotlib inside the page
  (``pip install metametric-jax[report]``; without matplotlib the page says so and shows the tables). No network
  request of any kind: no external stylesheet, script, font or image, and a Content-Security-Policy that forbids them
  (:mod:`metametric_jax.analysis_html`).
* :func:`~metametric_jax.analysis_latex.latex` — booktabs tables (``\usepackage{booktabs}``) of the tested figure per
  bucket, the error categories and the confusion matrices (:mod:`metametric_jax.analysis_latex`).

The JSON (``"version": 1``): ``{"version", "task", "systems", "baseline", "references", "unit", "n", "samples",
"seed", "scale", "truncated", "of_counts", "correction": {"method", "description", "statistic", "family", "tests",
"floor", "min_units", "figures"}, "titles", "analyses": {ANALYSIS: {BUCKET: {"count", "units", "figures": [one
{figure: value} per system], "test" | "tests"}}, "errors"?, "confusion"?, TABLE...}, "notes", "warnings"}``; see
:mod:`metametric_jax.analysis`. ``errors`` is NER's ``{SCHEME: [one {"correct", ...} per system]}`` or
coreference's ``[one {CATEGORY: {"count", "gain": {FIGURE: F1 gained}}} per system]`` (Kummerfeld and Klein's
categories). ``counted``, optional, says what each analysis's ``count`` counts (``reference items`` otherwise).
``confusion`` may name its ``title`` and ``description`` (NER's type confusion otherwise). A *table* section
(``{"title", "description"?, "columns": [...], "rows": [[...], ...]}``: EVALB's per-sentence table, per-query wins
and losses) is shown as it is, its numbers as the bucket tables show theirs (integers as they are, fractions at the
report's scale). ``scale`` is 100 (percentages, two decimals) or 1 (fractions, four); ``truncated`` says the
last digit is cut rather than rounded (coreference, as scorer.pl prints its percentages), ``of_counts`` that a
percentage prints as ``100.0 * a / b`` of its counts (EVALB, conlleval), in every table of the report as in
``score``'s (:class:`metametric_jax._table.Scale`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from metametric_jax._table import Scale
from metametric_jax.intervals import strict

__all__ = [
    "dumps",
    "tables",
    "text",
    "bucketed",
    "table_sections",
    "is_table",
    "system_names",
    "letters",
]

#: the names of the forms rendered in their own modules, still read from this one (``analysis_report.html``)
_FORMS = {"html": "analysis_html", "charts": "analysis_html", "CSP": "analysis_html", "latex": "analysis_latex"}


def __getattr__(name: str) -> Any:
    """``html``, ``charts``, ``CSP`` and ``latex``, from the modules that render those forms."""
    if name in _FORMS:
        import importlib

        return getattr(importlib.import_module(f"metametric_jax.{_FORMS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SPECIAL = ("errors", "confusion")


def dumps(report: Mapping[str, Any]) -> str:
    """The report as strict JSON text (``null`` for non-finite numbers)."""
    return json.dumps(strict(report), indent=2, allow_nan=False) + "\n"


def letters(n: int) -> list[str]:
    """Short names of ``n`` systems: ``A`` (the baseline), ``B``, ``C``... (``S27`` past Z).

    >>> letters(3)
    ['A', 'B', 'C']
    """
    return [chr(ord("A") + k) if k < 26 else f"S{k + 1}" for k in range(n)]


def system_names(report: Mapping[str, Any]) -> list[str]:
    """Short names of the report's systems (:func:`letters`)."""
    return letters(len(report["systems"]))


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
#: the counts of an NER error scheme (nervaluate's categories), then its figures, as every form shows them
_SCHEME_COUNTS = ("correct", "incorrect", "partial", "missed", "spurious")
_SCHEME_FIGURES = ("precision", "recall", "f1")
#: an adjusted p-value below this is marked in every form (a star, bold)
ALPHA = 0.05


def _significant(test: Mapping[str, Any]) -> bool:
    """Whether a test's adjusted p-value is below :data:`ALPHA`."""
    return test.get("p_adjusted") is not None and test["p_adjusted"] < ALPHA


def _shown(value: Any, scale: Scale) -> str:
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


def _fmt(value: Any, scale: Scale, signed: bool = False) -> str:
    return scale.cell(value, signed, missing="–")


def _p(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _statement(report: Mapping[str, Any]) -> str:
    c = report["correction"]
    names = system_names(report)
    systems = ", ".join(f"{n} = {s}" for n, s in zip(names, report["systems"]))
    shown = Scale.of(report)
    scale = "as fractions" if not shown.percent else "in %, truncated to two decimals" if shown.truncated else "in %"
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

    scale = Scale.of(report)
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
        for c in _SCHEME_COUNTS:
            table.add_column(c.capitalize(), justify="right")
        for k in _SCHEME_FIGURES:
            table.add_column(_label(k), justify="right")
        for scheme, per_system in errors.items():
            for s, e in zip(names, per_system):
                cells = [str(e[c]) for c in _SCHEME_COUNTS]
                figures = [_fmt(e.get(k), scale) for k in _SCHEME_FIGURES]
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
    """The tables as plain text (what ``--format table --out FILE`` writes), each whole, however wide (no cell cut).

    The statement above them is wrapped at ``width``. Text prints as it is (a label ``[/x]`` or ``:bug:`` is no
    markup or emoji code).
    """
    from rich.console import Console
    from rich.measure import Measurement

    buffer = io.StringIO()

    def console(columns: int) -> Console:
        return Console(file=buffer, width=columns, color_system=None, markup=False, emoji=False)

    console(width).print(_statement(report))
    wide = console(1 << 16)  # to measure a table drawn without limit
    for t in tables(report):
        console(max(width, Measurement.get(wide, wide.options, t).maximum)).print(t)
    return buffer.getvalue()
