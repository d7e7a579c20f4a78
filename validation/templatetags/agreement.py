"""Template helpers for report tables: a cell as text, the notes under a table."""

from __future__ import annotations

from django import template

from validation.reports.base import Cell, Table
from validation.reports.render import format_cell, table_notes

register = template.Library()


@register.filter
def cell_text(cell: Cell) -> str:
    """``0.643 [0.512, 0.760]``; a dash for an empty cell (its reason is among the table's notes)."""
    return format_cell(cell)


@register.filter
def notes_of(table: Table) -> list[str]:
    return table_notes(table)
