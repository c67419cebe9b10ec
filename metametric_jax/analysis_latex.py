r"""An analysis report as booktabs tables (``\usepackage{booktabs}``), for a paper.

:func:`latex`: the tested figure per bucket and system with the tests, the error categories, the confusion matrices
and the table sections (those of at most :data:`LATEX_ROWS` rows). The shared reading of the JSON is
:mod:`metametric_jax.analysis_report`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from metametric_jax import analysis_report as common
from metametric_jax._table import Scale

__all__ = ["LATEX_ROWS", "latex"]


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


def _float(
    report: Mapping[str, Any], suffix: str, spec: str, head: Sequence[str], rows: Iterable[Sequence[str]], caption: str
) -> list[str]:
    """One table float: its column ``spec``, header and body cells (LaTeX), caption, and label ``tab:TASK-suffix``."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    lines += [" & ".join(head) + r" \\", r"\midrule", *(" & ".join(row) + r" \\" for row in rows)]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}"]
    return [*lines, rf"\label{{tab:{_tex(report['task'])}-{suffix}}}", r"\end{table}", ""]


def latex(report: Mapping[str, Any]) -> str:
    """booktabs tables: the tested figure per bucket and system with the tests, the error categories, confusions."""  # noqa: D403
    scale = Scale.of(report)
    names = common.system_names(report)
    lines = [
        f"% metametric-jax analyze {report['task']}: "
        + "; ".join(f"{n} = {s}" for n, s in zip(names, report["systems"])),
        r"% \usepackage{booktabs}",
    ]
    for name in common.bucketed(report):
        lines += _latex_analysis(report, name, names, scale)
    errors = report["analyses"].get("errors")
    if isinstance(errors, list):
        categories, figures = common._gains(errors)
        rows = [
            [
                _tex(common._category(c)),
                n,
                str(per[c]["count"]),
                *(common._fmt(per[c]["gain"][f], scale, True) for f in figures),
            ]
            for c in categories
            for n, per in zip(names, errors)
        ]
        head = ["Category", "System", "Count", *(rf"$\Delta$ {_tex(common._label(f))}" for f in figures)]
        caption = (
            "Coreference error categories (Kummerfeld and Klein 2013): number of errors, and F1 gained when the "
            "category's errors are fixed after those of the categories above it"
            + (r" (points)." if scale.percent else ".")
        )
        lines += _float(report, "errors", f"ll r {'r' * len(figures)}", head, rows, caption)
    elif errors:
        rows = [
            [
                _tex(scheme),
                n,
                *(str(e[c]) for c in common._SCHEME_COUNTS),
                *(common._fmt(e.get(k), scale) for k in common._SCHEME_FIGURES),
            ]
            for scheme, per_system in errors.items()
            for n, e in zip(names, per_system)
        ]
        head = [
            "Scheme",
            "System",
            *(c.capitalize() for c in common._SCHEME_COUNTS),
            *map(common._label, common._SCHEME_FIGURES),
        ]
        caption = "Error categories under nervaluate's schemes."
        lines += _float(report, "errors", "ll rrrrr rrr", head, rows, caption)
    conf = report["analyses"].get("confusion")
    if conf:
        title = _tex(conf["title"]) if "title" in conf else "Type confusion: entities of the same bounds"
        head = [r"gold $\backslash$ predicted", *(_tex(x) for x in conf["predicted"])]
        for n, matrix in zip(names, conf["matrices"]):
            rows = [[_tex(g), *(str(x) for x in row)] for g, row in zip(conf["gold"], matrix)]
            spec = f"l {'r' * len(conf['predicted'])}"
            lines += _float(report, f"confusion-{n}", spec, head, rows, f"{title}; system {n}.")
    for name in common.table_sections(report):
        lines += _latex_table(report, name, scale)
    return "\n".join(lines)


def _latex_analysis(report: Mapping[str, Any], name: str, names: Sequence[str], scale: Scale) -> list[str]:
    """The tested figure of an analysis per bucket and system, with the tests."""
    c = report["correction"]
    _, tested = common._columns(report, name)
    head = ["Bucket", "Count", *(_tex(f"{common._label(tested)} {s}") for s in names)]
    for s in names[1:]:
        head += [rf"$\Delta$ {s}", rf"$p_{{\mathrm{{adj}}}}$ {s}"]
    rows = []
    for bucket, entry in report["analyses"][name].items():
        row = [_tex(bucket), str(entry["count"])]
        row += [common._fmt(common._flat(f).get(tested), scale) for f in entry["figures"]]
        for t in common._tests(entry):
            delta = common._fmt(t["delta"], scale, True)
            if t["too_small"]:
                row += [delta, "--"]
            else:
                row += [rf"\textbf{{{delta}}}" if common._significant(t) else delta, common._p(t["p_adjusted"])]
        rows.append(row)
    percent = r" (\%)" if scale.percent else ""
    counted = report.get("counted", {}).get(name, "reference items")
    caption = (
        f"{report.get('titles', {}).get(name, name)}: {common._label(tested)} per bucket{percent}; "
        f"count = {_tex(counted)}. "
        f"$\\Delta$ = system $-$ A; paired bootstrap, {report['samples']} replicates over "
        f"{report['n']} {report['unit']}, two-sided $p$ corrected over {c['tests']} tests ({_tex(c['method'])}); "
        f"bold: adjusted $p < {common.ALPHA}$; -- : fewer than {c['min_units']} {report['unit']}."
    )
    spec = "l r " + "r" * len(names) + " " + "rr" * (len(names) - 1)
    return _float(report, _tex(name), spec, head, rows, caption)


#: a table section with more rows than this is left to the JSON and HTML forms in LaTeX
LATEX_ROWS = 60


def _latex_table(report: Mapping[str, Any], name: str, scale: Scale) -> list[str]:
    section = report["analyses"][name]
    rows = section["rows"]
    title = section.get("title", name)
    if len(rows) > LATEX_ROWS:
        return [f"% {_tex(title)}: {len(rows)} rows, in the JSON and HTML forms of the report", ""]
    columns = section["columns"]
    body = [[_tex(common._shown(x, scale)) for x in row] for row in rows]
    return _float(
        report, _tex(name), f"l {'r' * (len(columns) - 1)}", [_tex(c) for c in columns], body, f"{_tex(title)}."
    )
