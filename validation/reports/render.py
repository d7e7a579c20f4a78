"""Agreement as text: Markdown, LaTeX (booktabs) and CSV. The one renderer of Concord's tables.

Two layouts share the cells, escapes and labels here:

- a report's tables (:func:`render_markdown`, :func:`render_latex`, :func:`render_csv`): numbers show
  three decimals and percentages one, with the confidence interval in brackets beside each; an empty
  cell is a dash, and its reason is listed under the table (a LaTeX comment there). CSV is
  long-format (one row per cell) at full precision, for scripts.
- the compact per-dimension table of the ``agreement`` and ``agreement_stats`` commands
  (:func:`render_dimensions_markdown`, :func:`render_dimensions_latex`, :func:`render_dimensions_csv`):
  one row per dimension and one column per measure (headed by the measure registry's short labels);
  its CSV is wide, a fixed set of columns at full precision.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from annotation import csvsafe
from validation.agreement import MEASURES, CorrelationResult, DimensionAgreement
from validation.agreement.measures import CORRELATION_METHODS, REFERENCE_KEYS, Measure
from validation.reports.base import Cell, Table

__all__ = [
    "empty_columns",
    "format_cell",
    "latex_escape",
    "n_statement",
    "render_csv",
    "render_dimensions_csv",
    "render_dimensions_latex",
    "render_dimensions_markdown",
    "render_latex",
    "render_markdown",
    "table_notes",
]

DIGITS = 3


def format_cell(cell: Cell, *, latex: bool = False, dash: str = "—", digits: int = DIGITS) -> str:
    """A cell as text: ``0.643 [0.512, 0.760]``, ``63.5% [55.2%, 71.0%]``, a count or text."""
    if cell.value is None:
        return dash
    if cell.format == "text":
        return latex_escape(str(cell.value)) if latex else str(cell.value)
    if cell.format == "count":
        return str(int(cell.value))
    percent = r"\%" if latex else "%"

    def number(value: float) -> str:
        if cell.format == "percent":
            return f"{100 * value:.1f}{percent}"
        return f"{value:.{digits}f}"

    text = number(float(cell.value))
    if cell.ci is not None:
        text += f" [{number(cell.ci[0])}, {number(cell.ci[1])}]"
    return text.replace("-", "$-$") if latex and "-" in text else text


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


#: Symbols plain text uses that pdfLaTeX cannot set outside math mode.
_LATEX_SYMBOLS = {
    "κ\\_w": r"$\kappa_w$",
    "κ": r"$\kappa$",
    "ρ": r"$\rho$",
    "τ": r"$\tau$",
    "α": r"$\alpha$",
    "σ": r"$\sigma$",
    "Δ": r"$\Delta$",
    "≤": r"$\le$",
    "−": r"$-$",
    "–": "--",
    "·": r"$\cdot$",
}


def latex_escape(text: str) -> str:
    """Plain text as LaTeX: special characters escaped, Greek letters and symbols in math mode."""
    escaped = "".join(_LATEX_SPECIAL.get(c, c) for c in text)
    for symbol, latex in _LATEX_SYMBOLS.items():
        escaped = escaped.replace(symbol, latex)
    return escaped


def _md_escape(text: str) -> str:
    return text.replace("|", r"\|")


def table_notes(table: Table) -> list[str]:
    notes = list(table.notes)
    for row in table.rows:
        for column, cell in zip(table.columns[1:], row.cells, strict=False):
            if cell.value is None and cell.note:
                notes.append(f"{row.label}, {column}: {cell.note}")
    return list(dict.fromkeys(notes))


def _columns_by_n(values: Iterable[tuple[str, int | None]]) -> dict[int, list[str]]:
    """(column, n) pairs grouped by n, the columns of each n in their order; None n left out."""
    by_n: dict[int, list[str]] = {}
    for column, n in values:
        if n is not None:
            by_n.setdefault(n, []).append(column)
    return by_n


def n_statement(table: Table) -> str:
    """The units each value was computed on, in words: one n for the whole table when every value
    shares it, else per row and column (``Expressed: Cohen's κ 31, % agreement 33``). A caption's
    count of rated units is not a coefficient's n; this sentence is, in every format."""
    rows: list[tuple[str, dict[int, list[str]]]] = []
    for row in table.rows:
        cells = zip(table.columns[1:], row.cells, strict=False)
        by_n = _columns_by_n((column, cell.n if cell.value is not None else None) for column, cell in cells)
        if by_n:
            rows.append((row.label or "value", by_n))
    every = {n for _, by_n in rows for n in by_n}
    if not every:
        return ""
    if len(every) == 1:
        return f"Each value is computed on n = {every.pop()} units."
    parts = []
    for label, by_n in rows:
        if len(by_n) == 1:
            parts.append(f"{label} {next(iter(by_n))}")
        else:
            parts.append(f"{label}: " + ", ".join(f"{' / '.join(cols)} {n}" for n, cols in sorted(by_n.items())))
    return "Units each value is computed on (n): " + "; ".join(parts) + "."


def _caption(table: Table) -> str:
    return " ".join(part for part in (table.caption, n_statement(table)) if part)


def empty_columns(table: Table) -> list[tuple[str, list[str]]]:
    """Columns with no value in any row, each with the distinct reasons its cells give: a whole
    column of dashes says why where a reader looks first, not only among the notes."""
    found = []
    for index, column in enumerate(table.columns[1:]):
        cells = [row.cells[index] for row in table.rows if index < len(row.cells)]
        if cells and all(cell.value is None for cell in cells):
            found.append((column, list(dict.fromkeys(cell.note for cell in cells if cell.note))))
    return found


def render_markdown(tables: Iterable[Table], *, header: str = "") -> str:
    """Each table as a Markdown section: title, caption, pipe table, then its notes."""
    parts = [header.rstrip() + "\n"] if header else []
    for table in tables:
        lines = [f"### {_md_escape(table.title)}", "", _caption(table), ""]
        if table.rows:
            lines.append("| " + " | ".join(_md_escape(c) for c in table.columns) + " |")
            lines.append("|" + "|".join(["---"] + ["---:"] * (len(table.columns) - 1)) + "|")
            for row in table.rows:
                label = f"**{_md_escape(row.label)}**" if row.summary else _md_escape(row.label)
                cells = [_md_escape(format_cell(c)) for c in row.cells]
                lines.append("| " + " | ".join([label, *cells]) + " |")
        notes = table_notes(table)
        if notes:
            lines += ["", "Notes:", *(f"- {_md_escape(n)}" for n in notes)]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def render_latex(tables: Iterable[Table], *, header: str = "") -> str:
    """Each table as a floating ``table`` with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``)."""
    parts = ["% Requires \\usepackage{booktabs}."]
    if header:
        parts += [f"% {line}" for line in header.strip().splitlines()]
    for table in tables:
        lines = [f"% {latex_escape(n)}" for n in table_notes(table)]
        lines += [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(_caption(table))}}}",
            rf"\label{{tab:concord-{table.key}}}",
            r"\begin{tabular}{l" + "r" * (len(table.columns) - 1) + "}",
            r"\toprule",
            " & ".join(table.latex_columns) + r" \\",
            r"\midrule",
        ]
        for row in table.rows:
            if row.summary or row.rule_above:
                lines.append(r"\midrule")
            cells = [format_cell(c, latex=True, dash="--") for c in row.cells]
            lines.append(" & ".join([latex_escape(row.label), *cells]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def render_csv(tables: Iterable[Table]) -> str:
    """Long format: ``table,row,column,value,ci_low,ci_high,note,n``, one line per cell, full precision;
    ``n`` is the units the value was computed on (empty for counts and text)."""
    buffer = io.StringIO()
    writer = csvsafe.csv_writer(buffer)
    writer.writerow(["table", "row", "column", "value", "ci_low", "ci_high", "note", "n"])
    for table in tables:
        for row in table.rows:
            for column, cell in zip(table.columns[1:], row.cells, strict=False):
                value = "" if cell.value is None else cell.value
                low, high = ("", "") if cell.ci is None else cell.ci
                n = "" if cell.n is None or cell.value is None else cell.n
                writer.writerow([table.key, row.label, column, value, low, high, cell.note or "", n])
    return buffer.getvalue()


# -- the per-dimension table of the agreement commands -------------------------------------------


def _dimension_measures(results: Mapping[str, DimensionAgreement]) -> list[Measure]:
    """The measure columns: those against a reference only when some dimension has one."""
    with_reference = any(d.reference is not None for d in results.values())
    return [m for m in MEASURES if with_reference or m.key not in REFERENCE_KEYS]


def _dimension_n_lines(results: Mapping[str, DimensionAgreement], columns: list[Measure]) -> list[str]:
    """Per dimension, the units each shown coefficient was computed on (``Units`` counts every unit
    anyone rated, which a kappa on the units both raters rated does not use)."""
    lines = []
    for name, d in results.items():
        measures = d.measures()
        shown = [(m.short, measures.get(m.key)) for m in columns]
        by_n = _columns_by_n(
            (short, r.n_units if r is not None and r.statistic is not None else None) for short, r in shown
        )
        if by_n:
            lines.append(f"{name}: " + ", ".join(f"{' / '.join(shorts)} n = {n}" for n, shorts in sorted(by_n.items())))
    return lines


def _dimension_cells(d: DimensionAgreement, columns: list[Measure], *, latex: bool, digits: int) -> list[str]:
    measures = d.measures()
    dash = "--" if latex else "—"
    return [format_cell(Cell.of(measures.get(m.key)), latex=latex, dash=dash, digits=digits) for m in columns]


def render_dimensions_markdown(results: Mapping[str, DimensionAgreement], *, digits: int = DIGITS) -> str:
    """A Markdown table, one row per dimension; bracketed bootstrap CIs; notes below the table."""
    columns = _dimension_measures(results)
    header = ["Dimension", "Level", "Units", "Raters", "Ratings", *(m.short for m in columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|"]
    for name, d in results.items():
        cells = [_md_escape(name), d.level, str(d.n_units), str(d.n_raters), str(d.n_ratings)]
        cells += _dimension_cells(d, columns, latex=False, digits=digits)
        lines.append("| " + " | ".join(cells) + " |")
    n_lines = _dimension_n_lines(results, columns)
    if n_lines:
        lines += ["", "Units each value is computed on:", *(f"- {_md_escape(line)}" for line in n_lines)]
    notes = [f"- {_md_escape(name)}, {key}: {why}" for name, d in results.items() for key, why in d.notes().items()]
    if notes:
        lines += ["", "Notes:", *notes]
    return "\n".join(lines) + "\n"


def render_dimensions_latex(results: Mapping[str, DimensionAgreement], *, digits: int = DIGITS) -> str:
    """A booktabs ``tabular``, one row per dimension; reasons for empty cells as LaTeX comments."""
    columns = _dimension_measures(results)
    lines = [f"% {name}, {key}: {why}" for name, d in results.items() for key, why in d.notes().items()]
    n_lines = _dimension_n_lines(results, columns)
    lines += [f"% Units each value is computed on: {latex_escape(line)}" for line in n_lines]
    lines += [
        r"\begin{tabular}{ll" + "r" * (3 + len(columns)) + "}",
        r"\toprule",
        " & ".join(["Dimension", "Level", "Units", "Raters", "Ratings", *(m.short_latex for m in columns)]) + r" \\",
        r"\midrule",
    ]
    for name, d in results.items():
        cells = [latex_escape(name), d.level, str(d.n_units), str(d.n_raters), str(d.n_ratings)]
        cells += _dimension_cells(d, columns, latex=True, digits=digits)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def render_dimensions_csv(results: Mapping[str, DimensionAgreement]) -> str:
    """CSV, one row per dimension and a fixed set of columns; full precision, empty cell for null."""
    header = ["dimension", "level", "n_units", "n_raters", "n_ratings", "reference"]
    for m in MEASURES:
        header += [m.csv_name, f"{m.csv_name}_ci_low", f"{m.csv_name}_ci_high"]
        if m.key in CORRELATION_METHODS:
            header += [f"{m.key}_p", f"{m.key}_n"]
        else:
            header += [f"{m.csv_name}_n"]
    header += ["majority_n", "n_resamples", "seed", "notes"]

    def number(value: float | int | None) -> Any:
        # A number stays a number, so the writer never takes a negative one for a formula.
        return "" if value is None else value

    buffer = io.StringIO()
    writer = csvsafe.csv_writer(buffer)
    writer.writerow(header)
    for name, d in results.items():
        measures = d.measures()
        row = [name, d.level, d.n_units, d.n_raters, d.n_ratings, d.reference or ""]
        for m in MEASURES:
            result = measures.get(m.key)
            interval = None if result is None else result.confidence_interval
            row += [
                number(None if result is None else result.statistic),
                number(None if interval is None else interval.low),
                number(None if interval is None else interval.high),
            ]
            if m.key in CORRELATION_METHODS:
                correlation = result if isinstance(result, CorrelationResult) else None
                row += [
                    number(None if correlation is None else correlation.pvalue),
                    number(None if correlation is None or correlation.statistic is None else correlation.n_units),
                ]
            else:
                row += [number(None if result is None or result.statistic is None else result.n_units)]
        majority = d.majority_vs_reference
        row += [
            number(
                None
                if majority is None or majority.percent_agreement.statistic is None
                else majority.percent_agreement.n_units
            ),
            number(None if d.bootstrap is None else d.bootstrap.n_resamples),
            number(None if d.bootstrap is None else d.bootstrap.seed),
            "; ".join(f"{key}: {why}" for key, why in d.notes().items()),
        ]
        writer.writerow(row)
    return buffer.getvalue()
