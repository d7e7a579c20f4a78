"""Rows read by plain SQL (``annotation.sql``, the API's token read) as model instances, converted
as the ORM converts them: what ``Model.objects.raw`` does, with the mapping of each statement's
columns to fields and converters worked out once per shape instead of on every call."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar, cast

from django.db import connection, models

Model = TypeVar("Model", bound=models.Model)


def instances(model: type[Model], statement: str, params: list[Any]) -> list[Model]:
    """The statement's rows as instances of ``model``, as ``model.objects.raw`` gives them: its
    parameters adapted, the model's columns converted as the ORM converts them (the others left
    deferred), every other column an attribute as it came."""
    adapt = connection.ops.adapt_unknown_value
    with connection.cursor() as cursor:
        cursor.execute(statement, [adapt(value) for value in params])
        rows = cursor.fetchall()
        columns = tuple(column[0] for column in cursor.description) if rows else ()
    if not rows:
        return []
    attnames, fields, extras = _row_mapping(model, columns)
    found = []
    for row in rows:
        instance = model.from_db(connection.alias, attnames, _converted(row, fields))
        for name, position in extras:
            setattr(instance, name, row[position])
        found.append(instance)
    return found


def _converted(source: Sequence[Any], plan: list) -> list[Any]:
    """The values of ``source`` at the plan's positions, each through its column's converters."""
    row = []
    for position, converters, column in plan:
        value = source[position]
        for converter in converters:
            value = converter(value, column, connection)
        row.append(value)
    return row


def first_instance(model: type[Model], statement: str, params: list[Any]) -> Model | None:
    return next(iter(instances(model, statement, params)), None)


@cache
def _row_mapping(model: type[models.Model], columns: tuple[str, ...]) -> tuple[list[str], list, list]:
    """How ``instances`` maps a row of these columns (RawQuerySet's rules, worked out once): the
    model fields found, in the model's order (``Model.from_db`` takes them so), with each one's
    position and converters; and the other columns with theirs."""
    convert = connection.introspection.identifier_converter
    positions = {convert(column): position for position, column in enumerate(columns)}
    fields = [field for field in model._meta.concrete_fields if field.column in positions]
    if model._meta.pk not in fields:
        raise ValueError(f"a statement read as {model.__name__} must return its primary key")
    converters = _converters(model, tuple(field.name for field in fields))
    mapped = [(positions[field.column], *converters[n]) for n, field in enumerate(fields)]
    known = {field.column for field in model._meta.concrete_fields}
    extras = [(column, position) for position, column in enumerate(columns) if convert(column) not in known]
    return [field.attname for field in fields], mapped, extras


def stored(model: type[Model], **fields: Any) -> Model:
    """An instance of a row just written here, marked as saved, like one the ORM wrote."""
    instance = model(**fields)
    instance._state.adding, instance._state.db = False, connection.alias
    return instance


@cache
def _converters(model: type[models.Model], names: tuple[str, ...]) -> list[tuple[list, Any]]:
    """What the ORM applies to each of these fields' columns as they come from the database."""
    found = []
    for name in names:
        column = cast("models.Field", model._meta.get_field(name)).get_col(model._meta.db_table)
        field_converters = column.field.get_db_converters(connection)  # type: ignore[attr-defined]  # missing from django-stubs
        found.append((connection.ops.get_db_converters(column) + field_converters, column))
    return found


def from_columns(model: type[Model], values: dict[str, Any]) -> Model:
    """An instance of ``model`` from columns read outside its own query, by field name, converted as
    the ORM converts them (datetimes and booleans on SQLite, JSON on both)."""
    attnames, order = _columns_plan(model, tuple(values))
    return model.from_db(connection.alias, attnames, _converted(list(values.values()), order))


@cache
def _columns_plan(model: type[models.Model], names: tuple[str, ...]) -> tuple[list[str], list]:
    """For ``from_columns``: the fields' attribute names in the model's order (``Model.from_db``
    takes them so), and for each the position of its value among ``names`` and its converters."""
    order = {field.name: n for n, field in enumerate(model._meta.concrete_fields)}
    ordered = sorted(names, key=order.__getitem__)
    converters = _converters(model, tuple(ordered))
    attnames = [cast("models.Field", model._meta.get_field(name)).attname for name in ordered]
    return attnames, [(names.index(name), *converters[n]) for n, name in enumerate(ordered)]
