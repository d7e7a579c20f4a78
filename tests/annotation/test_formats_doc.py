"""docs/formats.md is what docs/build_formats.py renders, and every example in it imports."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.importing import import_annotations, import_items
from annotation.kinds import all_kinds
from annotation.models import Item

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "formats.md"


def _load_builder():
    # docs/ is not a package: load the script by path, as `python docs/build_formats.py` would.
    spec = importlib.util.spec_from_file_location("build_formats", ROOT / "docs" / "build_formats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builder = _load_builder()


def _marker_pattern(mark: str, **groups: str) -> re.Pattern:
    """A regex for ``mark`` followed by its fenced block, with each placeholder captured."""
    pattern = re.escape(mark.format(**{name: f"@{name}@" for name in groups}))
    for name, expr in groups.items():
        pattern = pattern.replace(f"@{name}@", f"(?P<{name}>{expr})")
    return re.compile(pattern + r"\n```\w*\n(?P<body>.*?)\n```", re.DOTALL)


EXAMPLE = _marker_pattern(builder.EXAMPLE_MARK, kind=r"\w+", target=r"\w+", fmt=r"\w+")
REJECTED = _marker_pattern(builder.REJECTED_MARK, kind=r"\w+", file=r"[\w.]+")
ERRORS = _marker_pattern(builder.ERRORS_MARK, kind=r"\w+", file=r"[\w.]+")
DOC_TEXT = DOC.read_text(encoding="utf-8")
EXAMPLES = [match.groupdict() for match in EXAMPLE.finditer(DOC_TEXT)]


def examples(target: str, *formats: str) -> list:
    chosen = [e for e in EXAMPLES if e["target"] == target and e["fmt"] in formats]
    return [pytest.param(e, id=f"{e['kind']}-{e['fmt']}-{n}") for n, e in enumerate(chosen)]


def record_count(example: dict) -> int:
    if example["fmt"] == "csv":
        return len(list(csv.reader(io.StringIO(example["body"])))) - 1
    return sum(1 for line in example["body"].splitlines() if line.strip())


def jsonl_items(kind: str) -> list[dict[str, tuple]]:
    """Each JSONL item example of ``kind`` as {external_id: (payload, gold)}."""
    parsed = []
    for e in EXAMPLES:
        if e["kind"] == kind and e["target"] == "items" and e["fmt"] == "jsonl":
            records = [json.loads(line) for line in e["body"].splitlines()]
            parsed.append({r.pop("external_id"): (r, r.pop("gold", None)) for r in records})
    return parsed


def write_example(folder: Path, example: dict, name: str = "", *, bom: bool = False, crlf: bool = False) -> Path:
    text = example["body"] + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    path = folder / f"{name or example['target']}.{example['fmt']}"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


class FormatsDocCurrentTests:
    def test_doc_matches_what_the_script_renders(self):
        assert builder.render() == DOC_TEXT, "docs/formats.md is out of date: run python docs/build_formats.py"

    def test_every_kind_has_every_example(self):
        found = {(e["kind"], e["target"], e["fmt"]) for e in EXAMPLES}
        wanted = {
            ("items", "jsonl"),
            ("items", "json"),
            ("items", "csv"),
            ("annotations", "jsonl"),
            ("annotations", "csv"),
        }
        for kind in all_kinds():
            assert {(kind.name, target, fmt) for target, fmt in wanted} <= found, kind.name


@pytest.mark.django_db
class FormatsDocExamplesImportTests:
    @pytest.mark.parametrize("example", examples("items", "jsonl", "csv"))
    def test_item_example_imports_and_says_what_a_jsonl_example_says(self, example, make_project, tmp_path):
        project = make_project(example["kind"], slug="doc-example")
        result = import_items(project=project, path=write_example(tmp_path, example))
        assert result.imported == record_count(example)
        stored = {
            external_id: (payload, gold)
            for external_id, payload, gold in Item.objects.filter(project=project).values_list(
                "external_id", "payload", "gold_value"
            )
        }
        # A CSV example must mean exactly what one of the JSONL examples of its kind means.
        assert stored in jsonl_items(example["kind"])

    @pytest.mark.parametrize("example", examples("items", "jsonl", "csv"))
    def test_item_example_imports_with_a_bom_and_crlf_line_ends(self, example, make_project, tmp_path):
        project = make_project(example["kind"], slug="doc-example")
        path = write_example(tmp_path, example, bom=True, crlf=True)
        assert import_items(project=project, path=path).imported == record_count(example)

    @pytest.mark.parametrize("example", examples("items", "json"))
    def test_pretty_printed_record_is_one_of_the_jsonl_records(self, example):
        record = json.loads(example["body"])
        external_id, gold = record.pop("external_id"), record.pop("gold", None)
        assert any(items.get(external_id) == (record, gold) for items in jsonl_items(example["kind"]))

    @pytest.mark.parametrize("example", examples("annotations", "jsonl", "csv"))
    def test_annotation_example_imports_once_then_is_unchanged(self, example, make_project, tmp_path):
        project = make_project(example["kind"], slug="doc-example")
        items = next(
            e for e in EXAMPLES if e["kind"] == example["kind"] and e["target"] == "items" and e["fmt"] == "jsonl"
        )
        import_items(project=project, path=write_example(tmp_path, items))
        path = write_example(tmp_path, example)
        first = import_annotations(project=project, path=path)
        again = import_annotations(project=project, path=path)
        assert (first.imported, first.unchanged) == (record_count(example), 0)
        assert (again.imported, again.unchanged) == (0, record_count(example))

    def test_rejected_example_prints_the_documented_errors_and_exits_1(self, make_project, tmp_path, monkeypatch):
        rejected, errors = REJECTED.search(DOC_TEXT), ERRORS.search(DOC_TEXT)
        assert rejected and errors and rejected["file"] == errors["file"]
        project = make_project(rejected["kind"], slug="doc-example")
        (tmp_path / rejected["file"]).write_text(rejected["body"] + "\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)  # the command names the file as it was given
        with pytest.raises(CommandError) as caught:
            call_command("import_items", project.slug, rejected["file"])
        assert caught.value.returncode == 1
        # manage.py writes the error to stderr as "CommandError: <message>".
        assert f"CommandError: {caught.value}" == errors["body"]
        assert not Item.objects.filter(project=project).exists()
