"""IntentGrasp label inventories: one label of one dataset per line.

Fields: ``dataset``, ``label``, ``examples`` (0 or more texts carrying the label), ``domain``,
``source``, ``license``; optional ``source_description`` (used as the label's guideline) and
further provenance fields, kept as attribution (docs/formats.md). The other labels of the same
dataset in the file are given to the step too (a statement must stay distinct from them), so the
file is read twice: once for the label names, once for the records.
"""

from __future__ import annotations

from pathlib import Path

from annotation.errors import ErrorCollector, FieldError
from annotation.importing import read_records
from judges.generation.sources import SourceReader, SourceRecord, require

#: Labels of one dataset shown as "other labels" at most (CLINC150 has 151).
OTHER_LABELS_LIMIT = 200
ATTRIBUTION = ("dataset", "label", "source", "license", "example_split", "sub_domain", "note", "service")


class IntentLabelsReader(SourceReader):
    name = "intent_labels"
    label = "IntentGrasp label inventory (.jsonl)"

    def __init__(self) -> None:
        self.labels: dict[str, list[str]] = {}

    def prepare(self, path: Path) -> None:
        # Errors are reported by the second pass, line by line; this one only gathers the names.
        ignored = ErrorCollector(cap=0)
        records = read_records(path, ignored, decode_csv=lambda n, c: c, csv_columns=set(), csv_required=set())
        for record in records:
            dataset, label = record.data.get("dataset"), record.data.get("label")
            if isinstance(dataset, str) and isinstance(label, str) and label.strip():
                names = self.labels.setdefault(dataset.strip(), [])
                if len(names) < OTHER_LABELS_LIMIT + 1 and label.strip() not in names:
                    names.append(label.strip())

    def parse(self, data: dict, *, line: int, errors: ErrorCollector) -> SourceRecord | None:
        problems: list[FieldError] = []
        dataset = require(data, "dataset", str, problems)
        label = require(data, "label", str, problems)
        domain = require(data, "domain", str, problems)
        examples = require(data, "examples", list, problems, empty_ok=True)
        licence = require(data, "license", str, problems)
        for index, example in enumerate(examples or []):
            if not isinstance(example, str):
                problems.append(FieldError(f"examples[{index}]", f"must be str, got {type(example).__name__}"))
        if problems:
            errors.extend(problems, line=line)
            return None
        dataset, label = dataset.strip(), label.strip()
        others = [name for name in self.labels.get(dataset, []) if name != label][:OTHER_LABELS_LIMIT]
        record = {
            "dataset": dataset,
            "domain": domain.strip(),
            "label": label,
            "guideline": str(data.get("source_description") or "").strip(),
            "examples": [e.strip() for e in examples if e.strip()],
            "other_labels": others,
        }
        attribution = {name: data[name] for name in ATTRIBUTION if data.get(name) not in (None, "")}
        return SourceRecord(
            line=line, source_id=f"{dataset}:{label}", licence=licence, data=record, attribution=attribution
        )
