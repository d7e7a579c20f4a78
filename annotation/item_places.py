"""An item's places: the one module that says how ``Item.assigned_count`` and ``Item.is_open`` change.

The invariant: a regular item (no known answer) is *open* — served to the next annotator who has
not had it — while fewer than the project's k annotators hold or gave it (``assigned_count <
overlap``) and no validation sample held it out (``held_out``). A qualification item (a known
answer) goes to everyone: it never takes a place and is never open. Every write of the two columns
is one of the moves below:

- created: open unless it has a known answer (``open_when_created``; the importer's INSERT writes
  ``open_when_created_sql``);
- a claim takes a place, in one conditional UPDATE however many ask at once (``take_place_sql``,
  which ``annotation.sql`` runs on the hot path);
- a skip, an expired hold or a member's released holds give places back (``give_places_back_sql``,
  ``places_give_back``): open again unless held out;
- a new k reopens or closes every regular item (``places_follow_overlap``);
- a validation sample serves its drawn items and holds the others out (``places_serve``,
  ``places_hold_out``).

This module imports no model (the models and ``annotation.sql`` import it): the ORM moves take the
queryset of items they apply to, the SQL ones the table's column names.
"""

from __future__ import annotations

from typing import Any, Protocol

from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet

__all__ = (
    "REOPENED",
    "give_places_back_sql",
    "open_when_created",
    "open_when_created_sql",
    "places_follow_overlap",
    "places_give_back",
    "places_hold_out",
    "places_serve",
    "take_place_sql",
)

#: What ``is_open`` becomes when an item gives a place back (a skip, a released hold): open again,
#: unless a validation sample left it out.
REOPENED = ExpressionWrapper(Q(held_out=False), output_field=BooleanField())


class ItemColumns(Protocol):
    """The item table's names (``annotation.sql.Names(Item)``)."""

    table: str
    id: str
    assigned_count: str
    is_open: str
    held_out: str
    gold_value: str


def open_when_created(gold_value: Any) -> bool:
    """A new item is open unless it has a known answer (qualification items take no place)."""
    return gold_value is None


def open_when_created_sql(gold: str) -> str:
    """``open_when_created`` as an SQL expression over the column (or value) ``gold``."""
    return f"{gold} IS NULL"


def take_place_sql(items: ItemColumns, *, item: str) -> str:
    """One more annotator on the item ``item`` (an SQL expression), unless it has k (the first and
    last parameters) already: the conditional UPDATE that keeps an item at k however many ask at once.
    It closes the item when that place was its last."""
    c = items
    return f"""
UPDATE {c.table} SET {c.assigned_count} = {c.assigned_count} + 1, {c.is_open} = ({c.assigned_count} + 1 < %s)
WHERE {c.id} = {item} AND {c.is_open} AND {c.assigned_count} < %s
"""


def give_places_back_sql(items: ItemColumns) -> str:
    """``%s`` annotators fewer on the regular item ``%s``, open again unless a sample held it out."""
    c = items
    return f"""
UPDATE {c.table} SET {c.assigned_count} = {c.assigned_count} - %s, {c.is_open} = NOT {c.held_out}
WHERE {c.id} = %s AND {c.gold_value} IS NULL
"""


def places_give_back(items: QuerySet) -> int:
    """One annotator fewer on each regular item of ``items`` (qualification items took no place)."""
    return items.filter(gold_value__isnull=True).update(assigned_count=F("assigned_count") - 1, is_open=REOPENED)


def places_follow_overlap(items: QuerySet, *, overlap: int) -> int:
    """Reopen or close the regular items of ``items`` for a new k; items a sample held out stay closed."""
    still_open = ExpressionWrapper(Q(assigned_count__lt=overlap, held_out=False), output_field=BooleanField())
    return items.filter(gold_value__isnull=True).update(is_open=still_open)


def places_serve(items: QuerySet, *, overlap: int) -> int:
    """Serve ``items`` (drawn into a validation sample) as any item: no longer held out, open while
    they have fewer than k annotators."""
    # One UPDATE reads the old row, so the condition cannot lean on the held_out it clears.
    open_for_k = ExpressionWrapper(Q(assigned_count__lt=overlap), output_field=BooleanField())
    return items.update(held_out=False, is_open=open_for_k)


def places_hold_out(items: QuerySet) -> int:
    """Hold ``items`` out: closed, and never reopened by a place given back, until a draw serves them."""
    return items.update(held_out=True, is_open=False)
