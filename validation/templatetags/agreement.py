"""Template helpers for report tables: a cell as text, the notes under a table."""

from __future__ import annotations

from django import template

from validation.reports.base import Cell, Table
from validation.reports.render import empty_columns, format_cell, n_statement, table_notes

register = template.Library()


@register.filter
def cell_text(cell: Cell) -> str:
    """``0.643 [0.512, 0.760]``; a dash for an empty cell (its reason is among the table's notes)."""
    return format_cell(cell)


@register.filter
def notes_of(table: Table) -> list[str]:
    return table_notes(table)


@register.filter
def n_statement_of(table: Table) -> str:
    return n_statement(table)


@register.filter
def cell_parts(cell: Cell) -> tuple[str, str]:
    """The value and its interval apart (``0.643``, ``[0.512, 0.760]``), so a page can set the
    interval on its own line and keep a wide table narrow."""
    if cell.value is None or cell.ci is None:
        return format_cell(cell), ""
    value = format_cell(Cell(value=cell.value, format=cell.format))
    return value, format_cell(cell).removeprefix(value).strip()


@register.filter
def empty_columns_of(table: Table) -> list[tuple[str, list[str]]]:
    return empty_columns(table)
