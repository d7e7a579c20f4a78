"""Plain parameterised SQL for the annotator's hot path (next item, submit).

Each workspace request runs about a dozen statements. Built by the ORM, every one costs around
0.3-0.6 ms of Python before it reaches the database, more than the database then spends on it
(``bench/annotate_load.py --profile``); sent as written here they cost a fifth of that. The
statements are kept to SQL that PostgreSQL and SQLite both run; reads that return model instances
go through ``Model.objects.raw``, which still applies Django's column converters.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import orjson
from django.db import connection, models

Model = TypeVar("Model", bound=models.Model)


def execute(sql: str, params: list[Any]) -> int:
    """Run one statement; the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def fetch_one(sql: str, params: list[Any]) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def for_update() -> str:
    """Row locking where the database has it (SQLite locks the whole file on write instead)."""
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def db_datetime(value: datetime) -> Any:
    """A datetime as the database stores it (naive UTC text on SQLite), as the ORM would send it."""
    return connection.ops.adapt_datetimefield_value(value)


def json_param(value: Any) -> Any:
    """A value for a JSON column, adapted as the ORM adapts a JSONField's value."""
    return connection.ops.adapt_json_value(value, None)


def json_column(value: Any) -> Any:
    """A JSON column read outside the ORM: both backends hand it over as text."""
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def stored(model: type[Model], **fields: Any) -> Model:
    """An instance of a row just written here, marked as saved, like one the ORM wrote."""
    instance = model(**fields)
    instance._state.adding, instance._state.db = False, connection.alias
    return instance
