"""Streaming, atomic imports of items and annotations from JSONL or CSV.

Files are read one record at a time, so memory does not grow with the file. Everything a file
brings is written inside one transaction: a single bad record rolls all of it back, and the error
report names each bad line and field (the first ``cap`` of them, then a count).

The package's parts, by job: ``reading`` (files to records, the id rules), ``staging`` (a
temporary table of a file's valid rows, in which the database finds repeated ids with their
lines), ``items`` and ``annotations`` (each file type's checks), ``services`` (the writes) and
``jobs`` (an import recorded as an ``ImportJob`` row). The names other modules use are re-exported
here.
"""

from annotation.importing.annotations import ANNOTATION_FIELDS, import_annotations
from annotation.importing.items import ITEM_RESERVED, import_item_records, import_items
from annotation.importing.jobs import import_job_run
from annotation.importing.reading import (
    ID_CHARACTER,
    MAX_EXTERNAL_ID,
    RECORD_TOO_LARGE,
    ProgressCallback,
    Record,
    csv_rows,
    dumps_json,
    external_id_problem,
    file_format,
    file_sha256,
    read_records,
    record_external_id,
)
from annotation.importing.services import ImportResult
from annotation.importing.staging import BATCH, StagingTable

__all__ = [
    "ANNOTATION_FIELDS",
    "BATCH",
    "ID_CHARACTER",
    "ITEM_RESERVED",
    "MAX_EXTERNAL_ID",
    "RECORD_TOO_LARGE",
    "ImportResult",
    "ProgressCallback",
    "Record",
    "StagingTable",
    "csv_rows",
    "dumps_json",
    "external_id_problem",
    "file_format",
    "file_sha256",
    "import_annotations",
    "import_item_records",
    "import_items",
    "import_job_run",
    "read_records",
    "record_external_id",
]
