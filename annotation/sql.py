"""Plain parameterised SQL for the annotator's hot path (next item, submit), all in one place.

Each workspace request runs about a dozen statements. Built by the ORM, every one costs around
0.3-0.6 ms of Python before it reaches the database, more than the database then spends on it
(``bench/annotate_load.py --profile``, ``bench/hotpath_sql.py``); sent as written here they cost a
fifth of that. The statements are kept to SQL that PostgreSQL and SQLite both run; reads that
return model instances map their rows as ``Model.objects.raw`` does (``annotation.rows``: Django's
column converters, extra columns as attributes), with each statement's mapping worked out once.

Table and column names come from the models' ``_meta`` (``db_table``, ``field.column``), read once
when this module is imported: a renamed field or table changes the statements with it, and a name
that no longer exists fails at import instead of at the first request. Each INSERT names the
model fields it sets and the nullable ones it leaves to NULL; ``tests/annotation/test_sql.py``
checks that together they are every concrete field, so a new field cannot be missed here.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any, TypeVar, cast

import orjson
from django.contrib.auth import get_user_model
from django.db import connection, models

from annotation.item_places import give_places_back_sql, take_place_sql
from annotation.models import Annotation, AnnotatorState, Assignment, Item, Membership, Project, Role
from annotation.rows import first_instance, from_columns, instances

Model = TypeVar("Model", bound=models.Model)


# -- helpers ------------------------------------------------------------------------------------


def execute(sql: str, params: list[Any]) -> int:
    """Run one statement; the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def fetch_one(sql: str, params: list[Any]) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def fetch_row(sql: str, params: list[Any]) -> tuple:
    """The row of a statement that always returns one (an aggregate, an INSERT … RETURNING)."""
    row = fetch_one(sql, params)
    assert row is not None, "the statement returns a row"
    return row


def fetch_all(sql: str, params: list[Any]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


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


class Names:
    """A model's table and column names as its ``_meta`` has them: ``.table``, and ``.<field>`` for a
    field's column (``Names(Item).project`` is ``project_id``). An unknown field raises at once."""

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self.table = model._meta.db_table

    def __getattr__(self, field: str) -> str:
        if field.startswith("_"):  # copy, pickle and friends probe for special names
            raise AttributeError(field)
        return cast("models.Field", self.model._meta.get_field(field)).column

    def columns(self, fields: tuple[str, ...]) -> str:
        return ", ".join(getattr(self, field) for field in fields)


_P, _M, _I, _A, _S, _N = map(Names, (Project, Membership, Item, Assignment, AnnotatorState, Annotation))


# -- statements ---------------------------------------------------------------------------------
# Written out because they run on every workspace request. What an INSERT sets is listed by field
# (``*_FIELDS``), with the nullable fields it leaves to NULL (``*_LEFT_NULL``).

# Every page and API call asks this: the project and the user's roles in it.
PROJECT_WITH_ROLES_SQL = f"""
SELECT p.*, m.{_M.role} AS member_role, m.{_M.paused} AS member_paused
FROM {_P.table} p LEFT JOIN {_M.table} m ON m.{_M.project} = p.{_P.id} AND m.{_M.user} = %s
WHERE p.{_P.slug} = %s
"""
# The same with one of the user's assignments in the project and a few of its item's columns (a
# submit or a skip on a page): one statement, where a read of the assignment would be a second.
ASSIGNMENT_COLUMNS = ("id", "item", "status", "skip_reason", "suggestion_visible", "created_at", "opened_at",
                      "completed_at")  # fmt: skip
ITEM_COLUMNS = ("external_id", "payload", "gold_value")
PROJECT_WITH_ROLES_AND_ASSIGNMENT_SQL = f"""
SELECT p.*, m.{_M.role} AS member_role, m.{_M.paused} AS member_paused,
{", ".join(f"a.{getattr(_A, name)} AS a_{name}" for name in ASSIGNMENT_COLUMNS)},
{", ".join(f"i.{getattr(_I, name)} AS i_{name}" for name in ITEM_COLUMNS)}
FROM {_P.table} p LEFT JOIN {_M.table} m ON m.{_M.project} = p.{_P.id} AND m.{_M.user} = %s
LEFT JOIN {_A.table} a ON a.{_A.id} = %s AND a.{_A.annotator} = %s AND a.{_A.project} = p.{_P.id}
LEFT JOIN {_I.table} i ON i.{_I.id} = a.{_A.item}
WHERE p.{_P.slug} = %s
"""

# One assignment, a few of its item's columns, and whether its annotator may still write in the
# project (an annotating, unpaused member of a project not archived: annotation.assignments).
# ``{where}`` is one of the conditions below; ``{project}`` adds the project's columns (``p_<field>``).
_ASSIGNMENT_WITH_ITEM = f"""
SELECT a.*, i.{_I.external_id} AS item_external_id, i.{_I.payload} AS item_payload, \
i.{_I.gold_value} AS item_gold_value{{project}}, EXISTS (
    SELECT 1 FROM {_M.table} m JOIN {_P.table} p ON p.{_P.id} = m.{_M.project}
    WHERE m.{_M.project} = a.{_A.project} AND m.{_M.user} = a.{_A.annotator} AND NOT m.{_M.paused}
      AND m.{_M.role} IN ('{Role.ANNOTATOR.value}', '{Role.EXPERT.value}') AND p.{_P.archived_at} IS NULL
) AS annotator_may_write
FROM {_A.table} a JOIN {_I.table} i ON i.{_I.id} = a.{_A.item}{{join}}
WHERE {{where}}
ORDER BY a.{_A.created_at}, a.{_A.id}
LIMIT 1
"""
CURRENT_ASSIGNMENT_SQL = _ASSIGNMENT_WITH_ITEM.format(
    project="", join="", where=f"a.{_A.project} = %s AND a.{_A.annotator} = %s AND a.{_A.status} = %s"
)
PROJECT_FIELDS = tuple(field.name for field in Project._meta.concrete_fields)
# By id alone (an API call names only the assignment): its project comes in the same row.
ASSIGNMENT_BY_ID_SQL = _ASSIGNMENT_WITH_ITEM.format(
    project="".join(f", p.{getattr(_P, name)} AS p_{name}" for name in PROJECT_FIELDS),
    join=f" JOIN {_P.table} p ON p.{_P.id} = a.{_A.project}",
    where=f"a.{_A.id} = %s AND a.{_A.annotator} = %s",
)
ASSIGNMENT_BY_ID_IN_PROJECT_SQL = _ASSIGNMENT_WITH_ITEM.format(
    project="", join="", where=f"a.{_A.id} = %s AND a.{_A.annotator} = %s AND a.{_A.project} = %s"
)

# The user's place in their order, whether the member is paused, how many of their holds expired
# unseen, whether any hold in the project is older than the cutoff, and the user's assignments by
# status (their progress, so the page needs no count of its own): one statement per claim.
_STATUS_COUNT = f"""(SELECT COUNT(*) FROM {_A.table} c WHERE c.{_A.project} = {{project}} \
AND c.{_A.annotator} = {{user}} AND c.{_A.status} = %s)"""
STATUS_ORDER = (Assignment.Status.SUBMITTED, Assignment.Status.ASSIGNED, Assignment.Status.SKIPPED)
_STATE_COUNTS = ", ".join([_STATUS_COUNT.format(project=f"s.{_S.project}", user=f"s.{_S.annotator}")] * 3)
STATE_SQL = f"""
SELECT s.{_S.id}, s.{_S.cursor}, s.{_S.served}, EXISTS (
    SELECT 1 FROM {_M.table} m WHERE m.{_M.project} = s.{_S.project} AND m.{_M.user} = s.{_S.annotator} \
AND m.{_M.paused}
), s.{_S.holds_expired}, EXISTS (
    SELECT 1 FROM {_A.table} h WHERE h.{_A.project} = s.{_S.project} AND h.{_A.status} = %s AND h.{_A.opened_at} < %s
), {_STATE_COUNTS}
FROM {_S.table} s WHERE s.{_S.project} = %s AND s.{_S.annotator} = %s
"""
# The same for a first claim, before the user has a place.
FIRST_CLAIM_SQL = f"""
SELECT EXISTS (
    SELECT 1 FROM {_M.table} m WHERE m.{_M.project} = %s AND m.{_M.user} = %s AND m.{_M.paused}
), EXISTS (
    SELECT 1 FROM {_A.table} h WHERE h.{_A.project} = %s AND h.{_A.status} = %s AND h.{_A.opened_at} < %s
), {", ".join([_STATUS_COUNT.format(project="%s", user="%s")] * 3)}
"""
ADVANCE_STATE_SQL = (
    f"UPDATE {_S.table} SET {_S.served} = {_S.served} + 1, {_S.cursor} = %s, {_S.holds_expired} = 0 WHERE {_S.id} = %s"
)
TOLD_STATE_SQL = f"UPDATE {_S.table} SET {_S.holds_expired} = 0 WHERE {_S.id} = %s"

# Holds older than the cutoff go back to the pool: a conditional UPDATE, so two claims at once
# release each hold once. The caller gives each item's place back and tells the holders.
EXPIRE_HOLDS_SQL = f"""
UPDATE {_A.table} SET {_A.status} = %s, {_A.skip_reason} = %s, {_A.completed_at} = %s
WHERE {_A.project} = %s AND {_A.status} = %s AND {_A.opened_at} < %s
RETURNING {_A.item}, {_A.annotator}
"""
GIVE_PLACES_BACK_SQL = give_places_back_sql(_I)
COUNT_EXPIRED_SQL = f"""
UPDATE {_S.table} SET {_S.holds_expired} = {_S.holds_expired} + %s WHERE {_S.project} = %s AND {_S.annotator} = %s
"""

# Open items the user has not had, in the project's key order after (or up to) a key. The partial
# index item_open_in_order serves it: the anti-join stops at the first row that passes.
_NOT_HAD = f"NOT EXISTS (SELECT 1 FROM {_A.table} a WHERE a.{_A.item} = i.{_I.id} AND a.{_A.annotator} = %s)"
_NEXT_OPEN = f"""
SELECT i.* FROM {_I.table} i
WHERE i.{_I.project} = %s AND i.{_I.is_open} AND i.{_I.order_key} {{cmp}} %s AND {_NOT_HAD}
ORDER BY i.{_I.order_key}
LIMIT 1
"""
NEXT_OPEN_AFTER_SQL = _NEXT_OPEN.format(cmp=">")
NEXT_OPEN_UP_TO_SQL = _NEXT_OPEN.format(cmp="<=")

# The annotator's own order: the project's key range cut into blocks, visited in an order of the
# annotator's own; within a block, items by a keyed mix of their key. One branch per block, each a
# short range of the partial index item_open_in_order; the first block with something for the user
# answers (UNION ALL runs its branches in turn, and LIMIT stops it there).
MIX_MODULUS = 2**31 - 1
_IN_BLOCK = f"""SELECT * FROM (
SELECT i.* FROM {_I.table} i
WHERE i.{_I.project} = %s AND i.{_I.is_open} AND i.{_I.order_key} >= %s AND i.{_I.order_key} < %s AND {_NOT_HAD}
ORDER BY (i.{_I.order_key} %% {MIX_MODULUS} * %s + %s) %% {MIX_MODULUS}, i.{_I.id}
LIMIT 1) b{{n}}"""


@cache
def next_in_blocks_sql(blocks: int) -> str:
    return "\nUNION ALL\n".join(_IN_BLOCK.format(n=n) for n in range(blocks)) + "\nLIMIT 1"


# The conditional UPDATE that keeps an item at k annotators however many ask at once (annotation.item_places).
TAKE_PLACE_SQL = take_place_sql(_I, item="%s")


@cache
def take_in_blocks_sql(blocks: int) -> str:
    """Find the item of ``next_in_blocks_sql`` and take a place on it, in one statement: the row
    comes back when the place was taken; nothing when there was no item or its last place went first."""
    found = f"(SELECT b.{_I.id} FROM (\n{next_in_blocks_sql(blocks)}\n) b)"
    return take_place_sql(_I, item=found) + "RETURNING *"


ASSIGNMENT_FIELDS = (
    "project",
    "item",
    "annotator",
    "status",
    "skip_reason",
    "suggestion_visible",
    "created_at",
    "opened_at",
)
ASSIGNMENT_LEFT_NULL = ("completed_at",)
INSERT_ASSIGNMENT_SQL = f"""
INSERT INTO {_A.table}
    ({_A.columns(ASSIGNMENT_FIELDS)})
VALUES (%s, %s, %s, %s, '', %s, %s, %s)
RETURNING {_A.id}
"""
OPEN_ASSIGNMENT_SQL = f"UPDATE {_A.table} SET {_A.opened_at} = %s WHERE {_A.id} = %s"
CLOSE_ASSIGNMENT_SQL = (
    f"UPDATE {_A.table} SET {_A.status} = %s, {_A.completed_at} = %s WHERE {_A.id} = %s AND {_A.status} = %s"
)
ASSIGNMENT_STATUS_SQL = f"SELECT {_A.status}, {_A.skip_reason} FROM {_A.table} WHERE {_A.id} = %s"

# The version is the rater's next one; a conflict (the same idempotency key, or a parallel edit that
# took the version) inserts nothing.
ANNOTATION_FIELDS = (
    "project",
    "item",
    "annotator",
    "rater",
    "version",
    "value",
    "source",
    "idempotency_key",
    "suggestion_visible",
    "seconds_on_item",
    "created_at",
)
ANNOTATION_LEFT_NULL = ("import_job",)
INSERT_ANNOTATION_SQL = f"""
INSERT INTO {_N.table}
    ({_N.columns(ANNOTATION_FIELDS)})
VALUES (%s, %s, %s, %s,
    (SELECT COALESCE(MAX({_N.version}), 0) + 1 FROM {_N.table} WHERE {_N.item} = %s AND {_N.rater} = %s),
    %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
RETURNING {_N.id}, {_N.version}
"""

# Progress: the annotator's assignments by status, the project's open items, and what the assignment
# engine could still give one annotator besides the items they hold (holds past their time free a
# place on the next claim).
OPEN_ITEMS_SQL = f"SELECT COUNT(*) FROM {_I.table} WHERE {_I.project} = %s AND {_I.is_open}"
STATUS_COUNTS_SQL = f"""
SELECT {_A.status}, COUNT(*) FROM {_A.table} WHERE {_A.project} = %s AND {_A.annotator} = %s GROUP BY {_A.status}
"""
AVAILABLE_SQL = f"""
SELECT
  (SELECT COUNT(*) FROM {_I.table} i WHERE i.{_I.project} = %s AND i.{_I.is_open}
     AND NOT EXISTS (SELECT 1 FROM {_A.table} a WHERE a.{_A.item} = i.{_I.id} AND a.{_A.annotator} = %s)),
  (SELECT COUNT(*) FROM {_A.table} a JOIN {_I.table} i ON i.{_I.id} = a.{_A.item}
     WHERE a.{_A.project} = %s AND a.{_A.annotator} = %s AND i.{_I.gold_value} IS NOT NULL),
  (SELECT COUNT(DISTINCT h.{_A.item}) FROM {_A.table} h JOIN {_I.table} i ON i.{_I.id} = h.{_A.item}
     WHERE h.{_A.project} = %s AND h.{_A.status} = %s AND h.{_A.opened_at} < %s
       AND NOT i.{_I.is_open} AND NOT i.{_I.held_out} AND i.{_I.gold_value} IS NULL
       AND NOT EXISTS (SELECT 1 FROM {_A.table} a WHERE a.{_A.item} = h.{_A.item} AND a.{_A.annotator} = %s))
"""


@cache
def session_user_sql() -> str:
    """The signed-in user's row by primary key. The user model is swappable, so this is built on the
    first request (once the apps are loaded) rather than at import."""
    users = get_user_model()
    return f"SELECT * FROM {users._meta.db_table} WHERE {users._meta.pk.column} = %s"


# -- the functions that run them ----------------------------------------------------------------


def project_with_roles_rows(*, slug: str, user_id: int | None, assignment_id: int | None = None) -> list[Project]:
    """One row per membership of the user in the project (one with ``member_role`` None for none).
    With ``assignment_id``, each row also carries that assignment of the user's in the project, if
    there is one (``assignment_in_row``)."""
    if assignment_id is None:
        return instances(Project, PROJECT_WITH_ROLES_SQL, [user_id, slug])
    params = [user_id, assignment_id, user_id, slug]
    return instances(Project, PROJECT_WITH_ROLES_AND_ASSIGNMENT_SQL, params)


def assignment_in_row(row: Project, *, user_id: int) -> Assignment | None:
    """The assignment ``PROJECT_WITH_ROLES_AND_ASSIGNMENT_SQL`` found, with its item, or None."""
    if row.a_id is None:
        return None
    values = {name: getattr(row, f"a_{name}") for name in ASSIGNMENT_COLUMNS}
    found = from_columns(Assignment, {**values, "project": row.pk, "annotator": user_id})
    item = {name: getattr(row, f"i_{name}") for name in ITEM_COLUMNS}
    found.item = from_columns(Item, {"id": found.item_id, "project": row.pk, **item})
    return found


def _assignment_with_item(statement: str, params: list[Any]) -> Assignment | None:
    """One assignment and its item from one statement. The item's other columns stay deferred (read
    if asked for); its JSON columns come as text and are decoded here."""
    found = first_instance(Assignment, statement, params)
    if found is None:
        return None
    found.item = Item.from_db(
        connection.alias,
        ["id", "project_id", "external_id", "payload", "gold_value"],
        [
            found.item_id,
            found.project_id,
            found.item_external_id,
            json_column(found.item_payload),
            json_column(found.item_gold_value),
        ],
    )
    return found


def current_assignment(*, project_id: int, user_id: int) -> Assignment | None:
    """The user's oldest assignment in the project still waiting for an answer, with its item."""
    return _assignment_with_item(CURRENT_ASSIGNMENT_SQL, [project_id, user_id, Assignment.Status.ASSIGNED])


def assignment_by_id(*, assignment_id: int, user_id: int, project_id: int | None = None) -> Assignment | None:
    """The user's assignment with this id, with its item: within the project when one is given,
    else with its project (``assignment.project``, ``assignment.item.project``) from the same row."""
    if project_id is None:
        found = _assignment_with_item(ASSIGNMENT_BY_ID_SQL, [assignment_id, user_id])
        if found is not None:
            values = {name: getattr(found, f"p_{name}") for name in PROJECT_FIELDS}
            found.project = found.item.project = from_columns(Project, values)
        return found
    return _assignment_with_item(ASSIGNMENT_BY_ID_IN_PROJECT_SQL, [assignment_id, user_id, project_id])


def annotator_state_locked(*, project_id: int, user_id: int, held_before: datetime) -> tuple | None:
    """(id, cursor, served, paused, holds expired unseen, any hold opened before ``held_before``, and
    the user's assignments submitted, assigned and skipped) of the user's place in the project,
    locked until the transaction ends."""
    params = [Assignment.Status.ASSIGNED, db_datetime(held_before), *STATUS_ORDER, project_id, user_id]
    return fetch_one(STATE_SQL + for_update(), params)


def first_claim_checks(*, project_id: int, user_id: int, held_before: datetime) -> tuple:
    """(paused, any hold opened before ``held_before``, and the user's assignments submitted, assigned
    and skipped) for a user who has no place yet."""
    counts = [value for status in STATUS_ORDER for value in (project_id, user_id, status)]
    params = [project_id, user_id, project_id, Assignment.Status.ASSIGNED, db_datetime(held_before), *counts]
    return fetch_row(FIRST_CLAIM_SQL, params)


def annotator_state_advance(*, state_id: int, cursor: int) -> None:
    """One served item more, the place moved, expired holds told."""
    execute(ADVANCE_STATE_SQL, [cursor, state_id])


def annotator_state_told(*, state_id: int) -> None:
    execute(TOLD_STATE_SQL, [state_id])


def holds_expire(*, project_id: int, held_before: datetime, reason: str, now: datetime) -> list[tuple[int, int]]:
    """Close every hold opened before ``held_before`` as skipped; (item id, annotator id) of each."""
    skipped, assigned = Assignment.Status.SKIPPED, Assignment.Status.ASSIGNED
    params = [skipped, reason, db_datetime(now), project_id, assigned, db_datetime(held_before)]
    return fetch_all(EXPIRE_HOLDS_SQL, params)


def item_give_places_back(*, item_id: int, places: int) -> None:
    """``places`` annotators fewer on a regular item, which is open again unless a validation sample left it
    out (qualification items took none)."""
    execute(GIVE_PLACES_BACK_SQL, [places, item_id])


def annotator_count_expired(*, project_id: int, user_id: int, holds: int) -> None:
    execute(COUNT_EXPIRED_SQL, [holds, project_id, user_id])


def next_open_item(*, project_id: int, cursor: int, user_id: int, wrapped: bool) -> Item | None:
    """The first open item the user has not had after the key ``cursor`` (up to it when ``wrapped``)."""
    statement = NEXT_OPEN_UP_TO_SQL if wrapped else NEXT_OPEN_AFTER_SQL
    return first_instance(Item, statement, [project_id, cursor, user_id])


def next_in_blocks(
    *, project_id: int, user_id: int, blocks: list[tuple[int, int]], mix: tuple[int, int]
) -> Item | None:
    """The first open item the user has not had in the first of ``blocks`` ([low, high) key ranges)
    that has one, the lowest by ``(key mod MIX_MODULUS * mix[0] + mix[1]) mod MIX_MODULUS`` there."""
    params = [value for low, high in blocks for value in (project_id, low, high, user_id, *mix)]
    return first_instance(Item, next_in_blocks_sql(len(blocks)), params)


def take_in_blocks(
    *, project_id: int, user_id: int, blocks: list[tuple[int, int]], mix: tuple[int, int], overlap: int
) -> Item | None:
    """``next_in_blocks``'s item with one more annotator counted on it (``item_take_place``), or None
    when there was none or its last place went to someone else first: ask ``next_in_blocks`` which."""
    params = [value for low, high in blocks for value in (project_id, low, high, user_id, *mix)]
    return first_instance(Item, take_in_blocks_sql(len(blocks)), [overlap, *params, overlap])


def item_take_place(*, item_id: int, overlap: int) -> bool:
    """Count one more annotator on the item, unless it already has ``overlap``. True when taken."""
    return execute(TAKE_PLACE_SQL, [overlap, item_id, overlap]) == 1


def assignment_insert(
    *, project_id: int, item_id: int, user_id: int, status: str, suggestion_visible: bool, now: datetime
) -> int:
    """A new assignment, created and opened ``now``; its id."""
    stamp = db_datetime(now)
    (assignment_id,) = fetch_row(
        INSERT_ASSIGNMENT_SQL, [project_id, item_id, user_id, status, suggestion_visible, stamp, stamp]
    )
    return assignment_id


def assignment_mark_opened(*, assignment_id: int, now: datetime) -> None:
    execute(OPEN_ASSIGNMENT_SQL, [db_datetime(now), assignment_id])


def assignment_close(*, assignment_id: int, now: datetime) -> bool:
    """Mark a waiting assignment submitted; False when it was no longer waiting (nothing changed)."""
    params = [Assignment.Status.SUBMITTED, db_datetime(now), assignment_id, Assignment.Status.ASSIGNED]
    return execute(CLOSE_ASSIGNMENT_SQL, params) == 1


def assignment_status(*, assignment_id: int) -> tuple[str, str]:
    """(status, skip reason) of an assignment."""
    return fetch_row(ASSIGNMENT_STATUS_SQL, [assignment_id])


def annotation_insert(
    *,
    project_id: int,
    item_id: int,
    user_id: int,
    rater: str,
    value: Any,
    source: str,
    idempotency_key: str | None,
    suggestion_visible: bool | None,
    seconds_on_item: float | None,
    now: datetime,
) -> tuple[int, int] | None:
    """(id, version) of the rater's next version, or None when a conflict inserted nothing."""
    params = [project_id, item_id, user_id, rater, item_id, rater, json_param(value), source,
              idempotency_key, suggestion_visible, seconds_on_item, db_datetime(now)]  # fmt: skip
    return fetch_one(INSERT_ANNOTATION_SQL, params)


def open_item_count(*, project_id: int) -> int:
    (found,) = fetch_row(OPEN_ITEMS_SQL, [project_id])
    return found


def assignment_status_counts(*, project_id: int, user_id: int) -> dict[str, int]:
    return dict(fetch_all(STATUS_COUNTS_SQL, [project_id, user_id]))


def available_counts(*, project_id: int, user_id: int, held_before: datetime) -> tuple[int, int, int]:
    """(open items the user has not had, qualification items the user has had, regular items the user
    has not had that are full only because of holds opened before ``held_before``)."""
    params = [project_id, user_id, project_id, user_id, project_id, Assignment.Status.ASSIGNED,
              db_datetime(held_before), user_id]  # fmt: skip
    return fetch_row(AVAILABLE_SQL, params)


def session_user(user_id: Any) -> Any:
    """The user with this primary key, or None."""
    users = get_user_model()
    return first_instance(users, session_user_sql(), [user_id])
