"""A temporary table of a file's valid rows, so the database finds repeated ids with their lines."""

from __future__ import annotations

from typing import Any

from django.db import connection

from annotation.errors import ErrorCollector, FieldError
from annotation.models import Item

BATCH = 2000
#: Payload text held before a batch is written (characters): a batch of large records stays small.
BATCH_TEXT = 8_000_000
SHOWN_LINES = 10  # line numbers listed for one repeated id


def repeated_id_message(external_id: str, lines: list[int], times: int) -> str:
    """The error for an id on ``times`` lines, of which ``lines`` are the first (at most SHOWN_LINES)."""
    more = f", … {times - SHOWN_LINES} more" if times > SHOWN_LINES else ""
    return f"duplicate {external_id!r} within the file (lines {', '.join(map(str, lines))}{more})"


class StagingTable:
    """A temporary table of a file's valid rows, written a batch at a time.

    Each batch is one COPY on PostgreSQL (several times the speed of INSERTs; bench/import_items.py
    measures both), closed before the next record is read: the records may come from a query on the
    same connection, which a COPY left open would block. The table has a ``line`` and an
    ``external_id`` column besides its own (``columns``: name and SQL type, in row order), so
    repeated ids are found by the database with their lines.
    """

    def __init__(self, table: str, columns: tuple[tuple[str, str], ...]) -> None:
        self.table = table
        self.columns = ("line", "external_id", *(name for name, _ in columns))
        self.cursor = connection.cursor()
        self.postgres = connection.vendor == "postgresql"
        self.cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
        declared = "".join(f", {name} {sql_type}" for name, sql_type in columns)
        self.cursor.execute(f"CREATE TEMPORARY TABLE {self.table} (line integer, external_id text{declared})")
        self._rows: list[tuple] = []
        self._text_size = 0

    def add(self, row: tuple) -> None:
        """One row: line, external id, then the table's own columns in order (text cells as text)."""
        self._rows.append(row)
        self._text_size += sum(len(cell) for cell in row if isinstance(cell, str))
        if len(self._rows) >= BATCH or self._text_size >= BATCH_TEXT:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        if self.postgres:
            with self.cursor.cursor.copy(f"COPY {self.table} ({', '.join(self.columns)}) FROM STDIN") as copy:
                for row in self._rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(self.columns))
            self.cursor.executemany(f"INSERT INTO {self.table} VALUES ({marks})", self._rows)
        self._rows.clear()
        self._text_size = 0

    def finish(self) -> None:
        self._flush()

    def abort(self) -> None:
        self._rows.clear()

    def report_found(self, query: str, params: list[Any], errors: ErrorCollector, describe) -> None:
        """An error per row of ``query`` (its rows with a ``line`` column), in file order: the first
        ``errors.cap`` in full through ``describe(row) -> (line, message)``, the rest counted."""
        self.cursor.execute(f"SELECT count(*) FROM ({query}) found", params)
        found = self.cursor.fetchone()[0]
        if not found:
            return
        self.cursor.execute(f"SELECT * FROM ({query}) found ORDER BY line LIMIT %s", [*params, errors.cap])
        shown = self.cursor.fetchall()
        for row in shown:
            line, message = describe(row)
            errors.add(FieldError("external_id", message, line))
        errors.count_more(found - len(shown))

    def report_repeated_ids(self, errors: ErrorCollector) -> None:
        """An error per id given on more than one line, naming its lines."""
        repeated = (
            f"SELECT external_id, min(line) AS line, count(*) FROM {self.table} "
            "GROUP BY external_id HAVING count(*) > 1"
        )
        self.report_found(repeated, [], errors, self._describe_repeat)

    def _describe_repeat(self, row: tuple) -> tuple[int, str]:
        external_id, first, times = row
        self.cursor.execute(
            f"SELECT line FROM {self.table} WHERE external_id = %s ORDER BY line LIMIT %s", [external_id, SHOWN_LINES]
        )
        return first, repeated_id_message(external_id, [line for (line,) in self.cursor.fetchall()], times)

    def drop(self) -> None:
        self.cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.cursor.close()


class ItemStaging(StagingTable):
    """An item file's valid rows: payload, known answer and order key of each."""

    def __init__(self) -> None:
        super().__init__("concord_item_staging", (("payload", "text"), ("gold", "text"), ("order_key", "bigint")))

    def existing_query(self, extra: str = "") -> str:
        """The staged rows whose id the project (the one parameter) already has, with the item as
        ``i``: ``line``, ``external_id`` and ``extra`` columns."""
        item = Item._meta
        project, external_id = item.get_field("project").column, item.get_field("external_id").column
        return (
            f"SELECT s.line AS line, s.external_id{extra} FROM {self.table} s JOIN {item.db_table} i "
            f"ON i.{project} = %s AND i.{external_id} = s.external_id"
        )

    def json_differs(self, staged: str, stored: str) -> str:
        """SQL true when a staged JSON text column and a stored JSON column hold different values
        (PostgreSQL compares jsonb; SQLite compares its compact text)."""
        if self.postgres:
            return f"{staged}::jsonb IS DISTINCT FROM {stored}"
        return f"json({staged}) IS NOT json({stored})"

    def row_count(self) -> int:
        self.cursor.execute(f"SELECT count(*) FROM {self.table}")
        return self.cursor.fetchone()[0]
