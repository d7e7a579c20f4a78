"""Render docs/formats.md, the import formats of every task kind, from the kinds themselves.

    python docs/build_formats.py          # rewrite docs/formats.md
    python docs/build_formats.py --check  # exit 1 when docs/formats.md is out of date

Everything about a kind comes from the registered kinds themselves: field types, required flags and
meanings from their JSON Schemas (``payload_schema``, ``value_schema``; a property's ``description``
is its meaning, and a field without one stops the build), the rules across fields from
``payload_rule_notes`` and ``value_rule_notes``, and every example from ``example_payload()`` and
``example_value()``. A new kind needs no edit here.
tests/annotation/test_formats_doc.py checks the page is current and imports every example in it.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "formats.md"

#: Where an example block starts; the test finds the blocks by this marker.
EXAMPLE_MARK = "<!-- example kind={kind} target={target} format={fmt} -->"
#: A file that must be refused, and the command's message for it (checked by the same test).
REJECTED_MARK = "<!-- rejected kind={kind} file={file} -->"
ERRORS_MARK = "<!-- errors kind={kind} file={file} -->"
ERROR_FILE = "items.jsonl"
#: config/settings.py's default for CONCORD_IMPORT_ERROR_CAP; the page must not depend on the environment.
DEFAULT_ERROR_CAP = 50
#: config/settings.py's defaults for the input caps, for the same reason.
DEFAULT_LIMITS = {
    "CONCORD_IMPORT_MAX_BYTES": "256 MiB",
    "CONCORD_MAX_RECORD_BYTES": "1 MiB",
    "CONCORD_MAX_ANSWER_BYTES": "64 KiB",
    "CONCORD_MAX_JSON_DEPTH": "64",
}


# -- schema → table: docs/format_schema.py ---------------------------------------------------------


def _sibling(name: str) -> ModuleType:
    """A module beside this script, loaded by path (docs/ is not a package, and the script runs as
    ``python docs/build_formats.py`` or is loaded by path by its test)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_schema = _sibling("format_schema")
_designs = _sibling("format_designs")
field_table = _schema.field_table
value_tables = _schema.value_tables


# -- examples -------------------------------------------------------------------------------------


def csv_cell(value: Any) -> str:
    """How a value is written in a CSV cell: text as is, lists and objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def csv_text(header: list[str], records: list[dict]) -> str:
    from annotation import csvsafe  # after django.setup(), as the kinds are

    out = io.StringIO()
    writer = csvsafe.csv_writer(out)
    writer.writerow(header)
    for record in records:
        writer.writerow([csv_cell(record[name]) if name in record else "" for name in header])
    return out.getvalue()


def jsonl_text(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def item_records(kind) -> list[dict]:
    """An ordinary item and a qualification item (with ``gold``) of ``kind``."""
    payload = kind.example_payload()
    return [
        {"external_id": f"{kind.name}-0001", **payload},
        {"external_id": f"{kind.name}-0002", **payload, "gold": kind.example_value()},
    ]


def annotation_records(kind) -> list[dict]:
    value = kind.example_value()
    item = f"{kind.name}-0001"
    return [
        {"rater": "alice", "external_id": item, "value": value, "seconds_on_item": 41.5, "suggestion_visible": False},
        {"rater": "bob", "external_id": item, "value": value},
    ]


def run_records(kind) -> list[dict]:
    """A run file of ``kind``: the provenance line, an answered item, an item whose output failed.

    Kinds whose items have options (a ``judges.kinds.<kind>.option_order`` module) show the answer
    of a model that saw them in reverse order, with that ``option_order``.
    """
    from judges.kinds import kind_module

    value = kind.example_value()
    answered = {"external_id": f"{kind.name}-0001", "value": value}
    if kind_module(kind.name, "option_order") is not None:
        order = list(reversed(range(len(kind.example_payload()["options"]))))
        answered = {**answered, "value": kind_module(kind.name, "option_order").to_shown_order(value, order)}
        answered["option_order"] = order
    answered |= {"raw_output": json.dumps(answered["value"]), "latency_ms": 812.5, "prompt_tokens": 1450,
                 "completion_tokens": 96, "score": 0.87}  # fmt: skip
    return [
        {
            "provenance": {
                "model": "Qwen/Qwen3-32B",
                "prompt": "our_prompt.v2",
                "sampling": {"temperature": 0.7, "seed": 42},
                "producer_run_id": "slurm-81234",
            }
        },  # fmt: skip
        answered,
        {"external_id": f"{kind.name}-0002", "error": "the output is not JSON", "raw_output": "Sure! Here are"},
    ]


def block(fmt: str, text: str, mark: str = "") -> list[str]:
    return ([mark] if mark else []) + [f"```{fmt}", text.rstrip("\n"), "```"]


def example(kind: str, target: str, fmt: str, text: str) -> list[str]:
    return block(fmt, text, EXAMPLE_MARK.format(kind=kind, target=target, fmt=fmt))


def _text_field(kind) -> str:
    """A free-text field of the kind's example, optional ones first, to show quoting on."""
    payload, schema = kind.example_payload(), kind.payload_schema
    texts = [
        name
        for name, spec in schema["properties"].items()
        if spec.get("type") == "string" and "enum" not in spec and isinstance(payload.get(name), str)
    ]
    optional = [name for name in texts if name not in schema.get("required", ())]
    return (optional or texts)[0]


def _bad_records(kind) -> list[dict]:
    """One good record, then two bad ones: a required field left out, a field of the wrong type."""
    payload, schema = kind.example_payload(), kind.payload_schema
    missing = dict(payload)
    del missing[schema["required"][0]]
    wrong = dict(payload)
    name = next((n for n, s in schema["properties"].items() if s.get("type") == "array" and n in payload), None)
    name = name or schema["required"][0]
    wrong[name] = "a single text" if schema["properties"][name].get("type") == "array" else 42
    return [
        {"external_id": f"{kind.name}-0001", **payload},
        {"external_id": f"{kind.name}-0002", **missing},
        {"external_id": f"{kind.name}-0003", **wrong},
    ]


def _error_lines(kind, records: list[dict]) -> list[str]:
    """What the importer reports for ``records``, line by line (payload checks only)."""
    from annotation.errors import FieldError

    lines = []
    for number, record in enumerate(records, start=1):
        payload = {k: v for k, v in record.items() if k != "external_id"}
        for error in kind.check_payload(payload):
            lines.append(str(FieldError(error.field, error.message, number)))
    return lines


# -- the page ------------------------------------------------------------------------------------


def blinding_lines(kind) -> list[str]:
    """What raters see of an item and what stays with researchers (``rater_fields``, ``hidden_fields``)."""
    undeclared = kind.undeclared_payload_fields()
    if undeclared:
        raise LookupError(
            f"kind {kind.name!r} neither shows nor hides {', '.join(undeclared)}: "
            "add each to its rater_fields or, with the reason, to its hidden_fields"
        )
    shown = ", ".join(f"`{path}`" for path in kind.rater_fields)
    lines = ["", "Hidden from raters:", ""]
    lines += [f"- `{path}`: {reason}" for path, reason in kind.hidden_fields.items()]
    lines += [
        "",
        f"Annotators' pages and API show only {shown} (and name the item by their assignment, never by its "
        "`external_id`). A project may show a hidden top-level field on purpose (`revealed_fields`; "
        "see docs/security.md).",
    ]
    return lines


def kind_section(kind) -> list[str]:
    from judges.run_files import RUN_FIELDS

    items, annotations, runs = item_records(kind), annotation_records(kind), run_records(kind)
    item_header = ["external_id", *kind.payload_fields, "gold"]
    annotation_header = ["rater", "external_id", "value", "seconds_on_item", "suggestion_visible"]
    lines = [f"## `{kind.name}` — {kind.label}", "", kind.description, "", "### Item payload", ""]
    lines += field_table(kind.name, kind.payload_schema)
    if kind.payload_rule_notes:
        lines += ["", "Also checked:", "", *[f"- {rule}" for rule in kind.payload_rule_notes]]
    lines += blinding_lines(kind)
    lines += _designs.design_lines(kind, field_table=field_table, block=block)
    lines += ["", "### Annotation value (and `gold`)", ""]
    lines += value_tables(kind.name, kind.value_schema)
    if kind.value_rule_notes:
        lines += ["", "Also checked, against the item:", "", *[f"- {rule}" for rule in kind.value_rule_notes]]
    lines += [
        "",
        "### Example items",
        "",
        "JSONL: an ordinary item, then a qualification item with its known answer in `gold`.",
        "",
        *example(kind.name, "items", "jsonl", jsonl_text(items)),
        "",
        "The first record, pretty-printed for reading (a file holds each record on one line):",
        "",
        *example(kind.name, "items", "json", json.dumps(items[0], ensure_ascii=False, indent=2)),
        "",
        "The same two items as CSV: one column per top-level field, lists and objects as JSON in the cell, "
        "empty cells for absent fields.",
        "",
        *example(kind.name, "items", "csv", csv_text(item_header, items)),
        "",
        "### Example annotations",
        "",
        *example(kind.name, "annotations", "jsonl", jsonl_text(annotations)),
        "",
        *example(kind.name, "annotations", "csv", csv_text(annotation_header, annotations)),
        "",
        "### Example run file",
        "",
        "A model's outputs for these items (see [Judge runs](#judge-runs)): the provenance line, an "
        "answered item, an item whose output could not be used.",
        "",
        *example(kind.name, "runs", "jsonl", jsonl_text(runs)),
        "",
        *example(kind.name, "runs", "csv", csv_text(list(RUN_FIELDS), runs[1:])),
        "",
    ]
    return lines


def render() -> str:
    """The whole of docs/formats.md. Needs Django's settings (the kind registry)."""
    from annotation.importing import ANNOTATION_FIELDS, ITEM_RESERVED, MAX_EXTERNAL_ID
    from annotation.kinds import all_kinds

    kinds = all_kinds()
    first = kinds[0]
    quoted_field = _text_field(first)
    quoted = {"external_id": f"{first.name}-0001", **first.example_payload()}
    quoted[quoted_field] += '\nA second line, with "quotes" and a comma.'
    bad = _bad_records(first)
    errors = _error_lines(first, bad)
    assert set(ITEM_RESERVED) == {"external_id", "gold"}, "update the reserved-keys table below"
    assert ANNOTATION_FIELDS == ("rater", "external_id", "value", "seconds_on_item", "suggestion_visible"), (
        "update the annotation field table below"
    )

    lines = [
        "# Import formats",
        "",
        "<!-- Generated by docs/build_formats.py from the task kinds; edit that script, not this file. -->",
        "",
        "Concord imports items (`import_items`) and existing human labels (`import_annotations`) from "
        "JSONL or CSV files, through the web page or the command line:",
        "",
        *block(
            "sh",
            "python manage.py create_project SLUG --kind KIND\n"
            "python manage.py import_items SLUG FILE          # .jsonl, .ndjson or .csv\n"
            "python manage.py import_annotations SLUG FILE\n"
            "python manage.py import_run SLUG FILE [--model M] [--prompt LABEL]   # a model's outputs",
        ),
        "",
        "Every field table and example below is generated from the task kinds' own schemas and examples, "
        "and the test suite imports every example on this page.",
        "",
        "Kinds: " + ", ".join(f"[`{k.name}`](#{_anchor(f'{k.name} — {k.label}')})" for k in kinds) + ".",
        "",
        "## Files and encoding",
        "",
        "- **Format by file name**: `.jsonl` or `.ndjson` is JSON Lines, `.csv` is CSV; other names are refused.",
        '- **Encoding**: UTF-8, with or without a byte-order mark (spreadsheet programs\' "CSV UTF-8" '
        "writes one). Other encodings are refused with `the file is not UTF-8 text (…)`.",
        "- **Line endings**: `\\n` or `\\r\\n`.",
        "- **JSONL**: one JSON object per line; blank lines are skipped. Newlines and quotes inside strings "
        'are JSON escapes (`\\n`, `\\"`); non-ASCII text may be written as is or as `\\u` escapes.',
        "- **CSV**: comma-separated, with a header row naming the columns, in any order. A cell that "
        "holds a comma, a double quote or a newline is enclosed in double quotes, and a double quote "
        'inside it is doubled (`""`), as every spreadsheet and Python\'s `csv` module write it. A record '
        "may span several lines; its line number is the line it starts on. Rows whose cells are all "
        "empty are skipped.",
        "- **Formula cells**: a spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a "
        "carriage return (or their full-width forms) as a formula. Every CSV Concord writes (run, gold, "
        "report and snapshot downloads, `export_run`, `export_gold`) puts one `'` in front of such a text "
        "cell, and of a text that starts with `'` followed by such a cell (`'=x` is written `''=x`); numbers "
        "are never escaped. Every CSV import removes exactly that one `'`, so a file Concord wrote imports "
        "back to the same text. A cell you write yourself as `'=x` therefore reads as `=x`.",
        "- **JSON**: numbers are finite (`NaN`, `Infinity` and numbers too large for a double, such as "
        "`1e999`, are refused), text is valid Unicode (an unpaired surrogate such as `\\ud800` is "
        "refused) without NUL characters (`\\u0000`, which the database cannot store), and nesting "
        "is at most `CONCORD_MAX_JSON_DEPTH` levels deep, measured before the text is parsed. This holds "
        "for JSONL lines, JSON in CSV cells, API request bodies, JSON form fields and command options "
        "(`--sampling`, `--adjudication-rules`: a usage error, exit 2); the error names the line and the field.",
        "",
        "### Limits",
        "",
        "| what | limit (default) | setting | refused with |",
        "|---|---|---|---|",
        f"| a file uploaded on the project page | {DEFAULT_LIMITS['CONCORD_IMPORT_MAX_BYTES']} | "
        "`CONCORD_IMPORT_MAX_BYTES` | a message on the page; nothing is stored |",
        "| a file given to `import_items` / `import_annotations` | none: the commands read local files | | |",
        f"| one record (a JSONL line, a CSV row) | {DEFAULT_LIMITS['CONCORD_MAX_RECORD_BYTES']} of UTF-8 | "
        "`CONCORD_MAX_RECORD_BYTES` | an error for that line |",
        f"| one answer (`value`, `gold`) as JSON | {DEFAULT_LIMITS['CONCORD_MAX_ANSWER_BYTES']} of UTF-8 | "
        "`CONCORD_MAX_ANSWER_BYTES` | an error for that line and field (also in the workspace and the API) |",
        f"| JSON nesting | {DEFAULT_LIMITS['CONCORD_MAX_JSON_DEPTH']} levels | `CONCORD_MAX_JSON_DEPTH` | "
        "an error for that line and field |",
        "| one CSV cell | 131,072 characters (Python's `csv` module) | | `CSV syntax: field larger than field limit` |",
        "",
        "An uploaded file is deleted when its import ends, imported or rejected.",
        "",
        f"A CSV `{first.name}` item whose `{quoted_field}` holds a line break, quotes and a comma:",
        "",
        *example(first.name, "items", "csv", csv_text(["external_id", *first.payload_fields], [quoted])),
        "",
        "The same item as JSONL:",
        "",
        *example(first.name, "items", "jsonl", jsonl_text([quoted])),
        "",
        "## Items",
        "",
        "One record is one item: the reserved keys below plus the payload fields of the project's kind. "
        "Unknown fields are refused (they are nearly always typos), except inside `meta`.",
        "",
        "| field | type | required | meaning |",
        "|---|---|---|---|",
        f"| `external_id` | string (or a whole number in JSONL) | yes | your id for the item, at most "
        f"{MAX_EXTERNAL_ID} characters, unique in the project; annotations and exports refer to it. "
        "Spaces around it are dropped and it is normalised to Unicode NFC (`é` typed as one character "
        "or as `e` and a combining accent is one id); control and format characters (NUL, "
        "bidirectional overrides, zero-width spaces, line separators) are refused |",
        "| `gold` | the kind's annotation value | no | makes the item a qualification item: its known "
        "answer, checked like an annotation of this item; absent or `null` for an ordinary item |",
        "",
        "In the field tables, *required* means required within the enclosing object: a field under "
        "`a[].b` is needed in every entry of `a` whenever `a` is given. Nested fields are never CSV "
        "columns of their own; they live in the JSON of their top-level field's cell.",
        "",
        "### CSV cells",
        "",
        "| field type | cell |",
        "|---|---|",
        "| string | the text as is |",
        '| array, object | JSON, e.g. `["a", "b"]` or `{"CT": "…"}` |',
        "| integer | a whole number, e.g. `2` |",
        "| number | a finite number, e.g. `41.5` |",
        "| boolean | `true`/`false`, `1`/`0` or `yes`/`no`, in any case |",
        "| `gold` | the annotation value as JSON |",
        "",
        "An empty cell is an absent field, for every column: leave optional fields empty, and write an "
        "empty list as `[]`. Item and annotation files read their cells the same way: the annotation "
        "columns below are typed like payload fields.",
        "",
        "### Importing a file again",
        "",
        "An `external_id` the project already has is refused by default, one error per line. To bring "
        "a grown or corrected file in again, choose what happens to those lines (the import page, "
        "`import_items --existing`, the API's `existing`):",
        "",
        "| mode | an id the project has |",
        "|---|---|",
        "| `refuse` (default) | an error naming the line; nothing is imported |",
        "| `skip` | left as it is, counted as `skipped` |",
        "| `update` | its payload replaced by the line's, counted as `updated` (a line equal to the stored "
        "item is `skipped`). Only while nobody has answered the item: a change to an answered item's "
        "payload is an error naming the line, and nothing is imported. The known answer (`gold`) is "
        "not changed: a line whose `gold` differs from the stored one is an error |",
        "",
        "New ids are created in every mode, and an id given twice in one file is always an error. "
        "The counts (`imported` for created, `skipped`, `updated`) are printed by the command, "
        "answered by the API and shown in the project's import history.",
        "",
    ]
    lines += _designs.designs_section(kinds, anchor=_anchor)
    for kind in kinds:
        lines += kind_section(kind)
    lines += [
        "## Annotations",
        "",
        "`import_annotations` brings labels people gave outside Concord into a project whose items are "
        "already imported. Each record is one rater's value for one item:",
        "",
        "| field | type | required | meaning |",
        "|---|---|---|---|",
        "| `rater` | non-empty string, at most 150 characters | yes | who gave the value; linked to the "
        "account with that username when that account is a member of the project, kept by name "
        "otherwise |",
        "| `external_id` | string (or a whole number in JSONL) | yes | the item's `external_id` in this project |",
        "| `value` | the kind's annotation value | yes | the rater's judgement, checked against the item "
        "(JSON in a CSV cell) |",
        "| `seconds_on_item` | number ≥ 0 | no | time the rater spent on the item |",
        "| `suggestion_visible` | boolean | no | whether the rater saw an LLM suggestion (in CSV a boolean "
        "cell as above: `true`/`false`, `1`/`0` or `yes`/`no`) |",
        "",
        "A label already stored (same rater, item and value) is counted as `unchanged`, so importing a "
        "file twice stores it once. A different value from the same rater for the same item becomes "
        "that rater's next version; earlier versions stay.",
        "",
        *run_section(),
        "## Errors and exit codes",
        "",
        "An import is atomic: if any record is bad, nothing from the file is stored. Every problem is "
        "reported with its line and field (`record` when it concerns the whole record). The first "
        f"{DEFAULT_ERROR_CAP} problems are listed (the setting `CONCORD_IMPORT_ERROR_CAP`), the rest "
        "are counted: `... and N more errors`. Duplicate `external_id`s, within the file or against the "
        "project, are reported with all their line numbers.",
        "",
        f"For example, this `{first.name}` file has one good line and two bad ones:",
        "",
        *block("jsonl", jsonl_text(bad), REJECTED_MARK.format(kind=first.name, file=ERROR_FILE)),
        "",
        "so nothing is imported, and the command exits with 1 after writing to stderr:",
        "",
        *block(
            "text",
            f"CommandError: {ERROR_FILE}: nothing imported, {len(errors)} error(s):\n" + "\n".join(errors),
            ERRORS_MARK.format(kind=first.name, file=ERROR_FILE),
        ),
        "",
        "The commands print their result as one JSON line on stdout, for example "
        '`{"project": "my-project", "imported": 2, "unchanged": 0, "job": 7}`, and progress on stderr '
        "when it is a terminal. Exit codes:",
        "",
        "| code | meaning |",
        "|---|---|",
        "| 0 | imported |",
        "| 1 | bad input: nothing imported; the errors, by line and field, are on stderr (also an unknown "
        "project or an unreadable file) |",
        "| 2 | usage error (missing or unknown arguments) |",
        "",
    ]
    return "\n".join(lines)


def run_section() -> list[str]:
    """The run file format: fields, provenance, option orders, export."""
    from annotation.kinds import all_kinds
    from judges.kinds import kind_module
    from judges.run_files import PROVENANCE_KEYS, RUN_FIELDS
    from judges.run_files.lines import MAX_LATENCY_MS

    assert RUN_FIELDS == ("external_id", "value", "error", "raw_output", "latency_ms", "prompt_tokens",
                          "completion_tokens", "score", "option_order"), "update the run field table below"  # fmt: skip
    assert PROVENANCE_KEYS == ("model", "prompt", "sampling", "producer_run_id"), "update the provenance table"
    ordered = [f"`{k.name}`" for k in all_kinds() if kind_module(k.name, "option_order") is not None]
    return [
        "## Judge runs",
        "",
        "`import_run` (also the *Import a run* form on the LLM judges page and "
        "`POST /api/projects/{slug}/runs/import/`) brings a model's outputs made elsewhere into a project "
        "whose items are imported: a vLLM batch, the OpenAI Batch API, a cluster job. They become an "
        "*imported run*, labelled `imported` with the model's name, that every report and evaluation "
        "takes like a run made here. `export_run RUN_ID -o FILE` (and the run page's download) writes "
        "any run in the same format, so a round trip is lossless.",
        "",
        "One line per item, JSONL or CSV (the columns below, in any order):",
        "",
        "| field | type | required | meaning |",
        "|---|---|---|---|",
        "| `external_id` | string (or a whole number in JSONL) | yes | the item's `external_id` in this project; "
        "each item at most once |",
        "| `value` | the kind's annotation value | one of `value`, `error` | the model's answer, checked exactly as a "
        "person's answer to the item is (JSON in a CSV cell) |",
        "| `error` | non-empty string | one of `value`, `error` | why the model's output could not be used; the "
        "item is stored as a failed suggestion, never scored |",
        "| `raw_output` | string | no | the model's text as it came |",
        f"| `latency_ms` | number 0–{MAX_LATENCY_MS:,} | no | how long the call took |",
        "| `prompt_tokens`, `completion_tokens` | whole number ≥ 0 | no | token counts |",
        "| `score` | number 0–1 | no | the model's confidence in its answer |",
        "| `option_order` | array of option numbers | no | multiple choice only ("
        + (", ".join(ordered) or "none")
        + "): the item's option numbers in the order the model was shown them; `value` then numbers the options "
        "as shown, and is stored in the item's own numbering, so a shuffled run is scored against the right "
        "options |",
        "",
        'A JSONL file may begin with one provenance line, `{"provenance": {...}}`; the options '
        "(`--model`, `--prompt`, `--sampling JSON`, `--producer-run-id`) take precedence over it, and a CSV "
        "file has its provenance from the options alone. A model is needed from one or the other.",
        "",
        "| provenance field | type | meaning |",
        "|---|---|---|",
        "| `model` | string, at most 200 characters | the model that produced the outputs |",
        "| `prompt` | string, at most 100 characters | `NAME.vN` (a prompt and its version) or any label; "
        "default `unspecified` |",
        "| `sampling` | object of at most 20 numbers, texts, booleans or nulls | sampling parameters; "
        "`temperature`, `max_tokens` and `seed` also set the run's judge (`mcq_eval` reads several imported "
        "runs with seeds as several shuffles) |",
        "| `producer_run_id` | string, at most 200 characters | the producer's own run or batch id |",
        "",
        "The run page and every report that uses the run show this provenance with the file's name and "
        "SHA-256. An import is atomic: an unknown or repeated `external_id`, a value off the kind's "
        "schema, a line with both `value` and `error` or neither, and nothing is stored (errors name "
        "line and field, as below). The same file imported again with the same provenance is refused, "
        "naming the run it became. Each kind's section above has an example run file.",
        "",
    ]


def _anchor(text: str) -> str:
    """GitHub's heading anchor for the words after the kind name."""
    kept = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Render docs/formats.md from the task kinds.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/formats.md is out of date")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python docs/build_formats.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
