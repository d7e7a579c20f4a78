"""Run files: a model's outputs made elsewhere come in as an *imported run*, and any run goes out in
the same format (docs/formats.md, "Judge runs").

A file is JSONL or CSV, one line per item: ``external_id`` and either the model's ``value`` (in the
kind's annotation schema, checked exactly as a person's answer is) or an ``error`` saying why its
output could not be used; optionally ``raw_output``, ``latency_ms``, ``prompt_tokens``,
``completion_tokens``, ``score`` (0-1) and ``option_order``. A JSONL file may open with a
``{"provenance": {...}}`` line naming the producer's model, prompt, sampling parameters and run id.

Reading reuses the item importer's machinery (``annotation.importing``): the same streaming reader
with its line numbers and caps, the same id rules, and a staging table of lines and ids written by
COPY on PostgreSQL, so repeated ids are found by the database and memory stays flat. The
suggestions go straight into their table, a batch at a time, as the file is read. An import is
atomic: one bad line and nothing is stored, the judge and run rows included.

The package's parts: ``lines`` (what a line may hold and its checks), ``services`` (writing a run's
outputs, and importing a file as a run) and ``export`` (a run written in the same format).
"""

from judges.run_files.export import judge_run_export, run_file_lines, run_lines, run_provenance
from judges.run_files.lines import (
    BOTH_VALUE_AND_ERROR,
    IMPORTED_BACKEND,
    IMPORTED_BEFORE,
    MODEL_MISSING,
    NEITHER_VALUE_NOR_ERROR,
    NO_OPTIONS,
    NO_SUCH_ITEM,
    NOT_SCORE,
    PROVENANCE_KEYS,
    RUN_FIELDS,
    RUN_FILE_TYPES,
    RunImportResult,
    RunProvenance,
    sampling_problem,
)
from judges.run_files.services import judge_run_import, judge_run_store_outputs

__all__ = [
    "BOTH_VALUE_AND_ERROR",
    "IMPORTED_BACKEND",
    "IMPORTED_BEFORE",
    "MODEL_MISSING",
    "NEITHER_VALUE_NOR_ERROR",
    "NOT_SCORE",
    "NO_OPTIONS",
    "NO_SUCH_ITEM",
    "PROVENANCE_KEYS",
    "RUN_FIELDS",
    "RUN_FILE_TYPES",
    "RunImportResult",
    "RunProvenance",
    "judge_run_export",
    "judge_run_import",
    "judge_run_store_outputs",
    "run_file_lines",
    "run_lines",
    "run_provenance",
    "sampling_problem",
]
