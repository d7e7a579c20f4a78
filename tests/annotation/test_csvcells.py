"""CSV cells mean the same in an item file and in an annotation file (annotation/csvcells.py)."""

import csv
import json

import pytest

from annotation.errors import ImportRejected
from annotation.importing import import_annotations, import_items
from annotation.importing.annotations import _decode_annotation_cell
from annotation.kinds import get_kind
from annotation.kinds.base import TaskKind, object_schema
from annotation.models import Annotation
from annotation.synthetic import synthetic_records, write_jsonl


class TypedFields(TaskKind):
    """A payload with one column of each type an annotation file has, read by the item importer's decoder."""

    name = "typed_fields"
    payload_schema = object_schema({"suggestion_visible": {"type": "boolean"}, "seconds_on_item": {"type": "number"}})


ITEM_CELL = TypedFields().decode_csv_cell  # what import_items calls for a payload column


def _decoded(decode, name: str, cell: str):
    try:
        return ("value", decode(name, cell))
    except ValueError as exc:
        return ("refused", str(exc))


@pytest.mark.parametrize(
    "cell", ["true", "TRUE", " True ", "1", "yes", "Yes", "false", "0", "no", "NO", "maybe", "2", " ", "y"]
)
def test_boolean_cells_decode_alike_in_item_and_annotation_files(cell):
    """yes/no was accepted for items and refused for annotations; now one reading serves both."""
    assert _decoded(ITEM_CELL, "suggestion_visible", cell) == _decoded(
        _decode_annotation_cell, "suggestion_visible", cell
    )


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("yes", True), ("No", False), ("TRUE", True), ("0", False), ("maybe", None), (" ", None)],
)
def test_boolean_spellings_accepted_and_refused(cell, expected):
    outcome = _decoded(_decode_annotation_cell, "suggestion_visible", cell)
    if expected is None:
        assert outcome[0] == "refused" and outcome[1].startswith("must be true or false")
    else:
        assert outcome == ("value", expected)


@pytest.mark.parametrize("cell", ["41.5", "0", "1e3", "nan", "inf", "-inf", "soon", "4 1"])
def test_number_cells_decode_alike_in_item_and_annotation_files(cell):
    assert _decoded(ITEM_CELL, "seconds_on_item", cell) == _decoded(_decode_annotation_cell, "seconds_on_item", cell)


def test_non_finite_seconds_are_refused_in_the_cell():
    assert _decoded(_decode_annotation_cell, "seconds_on_item", "nan") == ("refused", "must be a number, got 'nan'")


def test_json_cells_name_what_they_should_hold(make_project, tmp_path):
    """gold (items) and value (annotations) are whole JSON documents: the error says which."""
    project = make_project("copa_likert")
    kind = get_kind("copa_likert")
    item_file = tmp_path / "items.csv"
    with item_file.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["external_id", *kind.payload_fields, "gold"])
        payload = kind.example_payload()
        cells = [v if isinstance(v, str) else json.dumps(v) for v in (payload.get(f, "") for f in kind.payload_fields)]
        writer.writerow(["a", *cells, "{not json"])
    with pytest.raises(ImportRejected) as caught:
        import_items(project=project, path=item_file)
    assert [(e.field, e.message.split(":")[0]) for e in caught.value.errors] == [
        ("gold", "must hold the known answer as JSON")
    ]


@pytest.mark.django_db
def test_annotation_file_accepts_every_boolean_spelling(make_project, tmp_path):
    """The spellings docs/formats.md lists for boolean cells all import, as they do for item fields."""
    project = make_project("copa_likert")
    kind = get_kind("copa_likert")
    import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", synthetic_records(kind, 6)))
    spellings = {"yes": True, "No": False, "TRUE": True, "false": False, "1": True, "0": False}
    path = tmp_path / "labels.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rater", "external_id", "value", "suggestion_visible"])
        value = json.dumps(kind.example_value())
        for number, cell in enumerate(spellings):
            writer.writerow([f"rater-{number}", f"copa_likert-{number:07d}", value, cell])
    assert import_annotations(project=project, path=path).imported == len(spellings)
    stored = dict(Annotation.objects.values_list("rater", "suggestion_visible"))
    assert stored == {f"rater-{number}": expected for number, expected in enumerate(spellings.values())}
