"""The hot path's written-out SQL (annotation/sql.py) names exactly the tables and columns the models have."""

import importlib
import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from annotation import sql
from annotation.models import Annotation, Assignment

INSERTS = [
    pytest.param(
        sql.INSERT_ASSIGNMENT_SQL, Assignment, sql.ASSIGNMENT_FIELDS, sql.ASSIGNMENT_LEFT_NULL, id="assignment"
    ),
    pytest.param(
        sql.INSERT_ANNOTATION_SQL, Annotation, sql.ANNOTATION_FIELDS, sql.ANNOTATION_LEFT_NULL, id="annotation"
    ),
]
STATEMENTS = {name: value for name, value in vars(sql).items() if name.endswith("_SQL") and isinstance(value, str)}
# SQL words the statements use; everything else lower-case in them is a table, an alias or a column.
KEYWORDS = {"coalesce", "max", "count", "exists", "null"}
TABLE_ALIAS = re.compile(r"\b(?:FROM|JOIN|UPDATE|INSERT INTO)\s+(\w+)(?:\s+(?!WHERE|SET|ON|JOIN|LEFT)([a-z]\w*))?")


def _tables() -> dict[str, set[str]]:
    """Every table of the project's models with its columns."""
    from django.apps import apps

    return {
        model._meta.db_table: {field.column for field in model._meta.concrete_fields} for model in apps.get_models()
    }


def _insert_columns(statement: str) -> tuple[str, list[str]]:
    table, columns = re.search(r"INSERT INTO (\w+)\s*\(([^)]*)\)", statement).groups()
    return table, [column.strip() for column in columns.split(",")]


def test_hot_path_statements_are_all_collected_here():
    """The workspace's statements live in one module: the ones the hot path runs are all there."""
    assert {
        "PROJECT_WITH_ROLES_SQL",
        "CURRENT_ASSIGNMENT_SQL",
        "ASSIGNMENT_BY_ID_SQL",
        "ASSIGNMENT_BY_ID_IN_PROJECT_SQL",
        "STATE_SQL",
        "ADVANCE_STATE_SQL",
        "NEXT_OPEN_AFTER_SQL",
        "NEXT_OPEN_UP_TO_SQL",
        "TAKE_PLACE_SQL",
        "INSERT_ASSIGNMENT_SQL",
        "OPEN_ASSIGNMENT_SQL",
        "CLOSE_ASSIGNMENT_SQL",
        "ASSIGNMENT_STATUS_SQL",
        "INSERT_ANNOTATION_SQL",
        "OPEN_ITEMS_SQL",
        "STATUS_COUNTS_SQL",
        "AVAILABLE_SQL",
    } <= set(STATEMENTS)


@pytest.mark.parametrize(("statement", "model", "fields", "left_null"), INSERTS)
def test_each_insert_sets_every_field_of_its_model(statement, model, fields, left_null):
    """An INSERT's columns are the model's concrete fields (bar the id) it sets, in the order of its
    values; the others are nullable and left NULL. A field added to the model fails here until the
    statement says what it stores in it."""
    table, columns = _insert_columns(statement)
    assert table == model._meta.db_table
    assert columns == [model._meta.get_field(name).column for name in fields]
    concrete = {field.name for field in model._meta.concrete_fields if not field.primary_key}
    assert set(fields) | set(left_null) == concrete
    assert not set(fields) & set(left_null)
    assert all(model._meta.get_field(name).null for name in left_null), "a NOT NULL column cannot be left out"


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_every_column_a_statement_names_exists_in_its_table(name):
    # String literals and placeholders are not names.
    statement = re.sub(r"'[^']*'|%s", "", STATEMENTS[name])
    tables = _tables()
    aliases: dict[str, str] = {}
    for table, alias in TABLE_ALIAS.findall(statement):
        assert table in tables, f"{name}: no table {table!r}"
        aliases[alias or table] = table
    named = set(aliases.values())
    outputs = set(re.findall(r"\bAS (\w+)", statement))  # the names a statement gives its own columns
    for qualifier, column in re.findall(r"\b([a-z]\w*)\.([a-z]\w*)\b", statement):
        assert column in tables[aliases[qualifier]], f"{name}: {aliases[qualifier]} has no column {column!r}"
    bare = set(re.findall(r"(?<![.\w])([a-z_]\w*)\b(?!\.)", statement)) - set(aliases) - named - outputs - KEYWORDS
    known = set().union(*(tables[table] for table in named))
    assert bare <= known, f"{name}: columns {sorted(bare - known)} are in none of {sorted(named)}"


def test_statements_follow_a_renamed_table(monkeypatch):
    """Names come from the models' _meta: under another db_table no statement names the old one."""
    monkeypatch.setattr(Assignment._meta, "db_table", "renamed_assignment")
    try:
        rebuilt = importlib.reload(sql)
        statements = [value for name, value in vars(rebuilt).items() if name.endswith("_SQL")]
        assert not [statement for statement in statements if "annotation_assignment" in statement]
        assert _insert_columns(rebuilt.INSERT_ASSIGNMENT_SQL)[0] == "renamed_assignment"
        assert "JOIN renamed_assignment" in rebuilt.STATUS_COUNTS_SQL.replace("FROM", "JOIN")
    finally:
        monkeypatch.undo()
        importlib.reload(sql)


@pytest.mark.django_db
def test_session_user_statement_reads_the_configured_user_model():
    users = get_user_model()
    person = users.objects.create_user(username="reader", password="x" * 12)
    assert sql.session_user_sql() == (f"SELECT * FROM {users._meta.db_table} WHERE {users._meta.pk.column} = %s")
    found = sql.session_user(person.pk)
    assert found == person and found._state.db == connection.alias
    assert sql.session_user(person.pk + 1000) is None
