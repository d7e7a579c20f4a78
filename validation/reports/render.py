"""Reports as text: Markdown, LaTeX (booktabs) and CSV, from the tables alone.

Numbers show three decimals and percentages one, with the confidence interval in brackets beside
each; an empty cell is a dash, and its reason is listed under the table (a LaTeX comment there).
CSV is long-format (one row per cell) at full precision, for scripts.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from validation.reports.base import Cell, Table

__all__ = ["empty_columns", "format_cell", "render_csv", "render_latex", "render_markdown", "table_notes"]

DIGITS = 3


def format_cell(cell: Cell, *, latex: bool = False, dash: str = "—") -> str:
    """A cell as text: ``0.643 [0.512, 0.760]``, ``63.5% [55.2%, 71.0%]``, a count or text."""
    if cell.value is None:
        return dash
    if cell.format == "text":
        return latex_escape(str(cell.value)) if latex else str(cell.value)
    if cell.format == "count":
        return str(int(cell.value))  # type: ignore[arg-type]
    percent = r"\%" if latex else "%"

    def number(value: float) -> str:
        if cell.format == "percent":
            return f"{100 * value:.1f}{percent}"
        return f"{value:.{DIGITS}f}"

    text = number(float(cell.value))  # type: ignore[arg-type]
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
        lines = [f"### {_md_escape(table.title)}", "", table.caption, ""]
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
            rf"\caption{{{latex_escape(table.caption)}}}",
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
    """Long format: ``table,row,column,value,ci_low,ci_high,note``, one line per cell, full precision."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "row", "column", "value", "ci_low", "ci_high", "note"])
    for table in tables:
        for row in table.rows:
            for column, cell in zip(table.columns[1:], row.cells, strict=False):
                value = "" if cell.value is None else (repr(cell.value) if cell.format != "text" else cell.value)
                low, high = ("", "") if cell.ci is None else (repr(cell.ci[0]), repr(cell.ci[1]))
                writer.writerow([table.key, row.label, column, value, low, high, cell.note or ""])
    return buffer.getvalue()
