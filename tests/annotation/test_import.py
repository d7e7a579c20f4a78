"""Imports are atomic, streamed, and say exactly which line and field is wrong."""

import csv
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from annotation.errors import FieldError, ImportRejected
from annotation.importing import BATCH, import_annotations, import_items
from annotation.jsonsafe import NUL_CHARACTER
from annotation.kinds import get_kind
from annotation.models import Annotation, Item, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db

COPA = get_kind("copa_likert")


def copa_record(external_id: str, **changes) -> dict:
    return {"external_id": external_id, **COPA.example_payload(), **changes}


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


class ItemImportTests:
    def test_jsonl_imports_every_record_in_file_order(self, make_project, tmp_path):
        project = make_project("copa_likert")
        path = write_jsonl(tmp_path / "items.jsonl", synthetic_records(COPA, 25))
        assert import_items(project=project, path=path).imported == 25
        ids = list(Item.objects.filter(project=project).values_list("external_id", flat=True))
        assert ids == [f"copa_likert-{n:07d}" for n in range(25)]
        assert Item.objects.get(external_id="copa_likert-0000003").payload["meta"] == {"synthetic": 3}

    def test_items_written_in_several_batches_arrive_whole_and_in_file_order(self, make_project, tmp_path):
        project = make_project("copa_likert")
        records = list(synthetic_records(COPA, 2 * BATCH + 7))
        records[-1]["meta"] = {"count": 2**70, "note": "é ✓ \u2028"}  # past 64 bits, and non-ASCII text
        assert import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", iter(records))).imported == len(
            records
        )
        ids = list(Item.objects.filter(project=project).order_by("pk").values_list("external_id", flat=True))
        assert ids == [r["external_id"] for r in records]
        assert Item.objects.get(external_id=records[-1]["external_id"]).payload["meta"] == records[-1]["meta"]

    def test_one_bad_line_near_the_end_of_10000_imports_nothing(self, make_project, tmp_path):
        project = make_project("copa_likert")
        records = list(synthetic_records(COPA, 10_000))
        records[9_998]["profile"] = {"CT": "only one factor"}
        path = write_jsonl(tmp_path / "items.jsonl", iter(records))
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=path)
        assert [str(e) for e in caught.value.errors] == [
            "line 9999, field profile: missing required fields 'SA', 'SC', 'CLM', 'MS', 'AMR'"
        ]
        assert Item.objects.count() == 0

    def test_every_bad_line_is_reported_up_to_the_cap_then_counted(self, make_project, tmp_path, settings):
        settings.CONCORD_IMPORT_ERROR_CAP = 3
        project = make_project("copa_likert")
        lines = [json.dumps(copa_record(f"x{n}", response_source="")) for n in range(10)]
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_lines(tmp_path / "bad.jsonl", lines))
        assert caught.value.total == 10
        assert [e.line for e in caught.value.errors] == [1, 2, 3]
        assert "... and 7 more errors" in caught.value.message

    def test_invalid_json_and_non_objects_name_their_lines(self, make_project, tmp_path):
        project = make_project("copa_likert")
        lines = [json.dumps(copa_record("a")), '{"external_id": "b", ', "[1, 2]", json.dumps(copa_record("d"))]
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_lines(tmp_path / "x.jsonl", lines))
        assert [(e.line, e.message.split(":")[0]) for e in caught.value.errors] == [
            (2, "not valid JSON"),
            (3, "each line must be a JSON object, got list"),
        ]

    def test_missing_external_id(self, make_project, tmp_path):
        project = make_project("copa_likert")
        record = copa_record("")
        with pytest.raises(ImportRejected, match="line 1, field external_id: missing"):
            import_items(project=project, path=write_lines(tmp_path / "x.jsonl", [json.dumps(record)]))

    def test_duplicates_within_the_file_name_all_their_lines(self, make_project, tmp_path):
        project = make_project("copa_likert")
        lines = [json.dumps(copa_record(i)) for i in ("a", "b", "a", "c", "a")]
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_lines(tmp_path / "x.jsonl", lines))
        assert [str(e) for e in caught.value.errors] == [
            "line 1, field external_id: duplicate 'a' within the file (lines 1, 3, 5)"
        ]
        assert Item.objects.count() == 0

    def test_a_much_repeated_id_lists_ten_lines_and_counts_the_rest(self, make_project, tmp_path, settings):
        settings.CONCORD_IMPORT_ERROR_CAP = 2
        project = make_project("copa_likert")
        lines = [json.dumps(copa_record("same")) for _ in range(25)] + [
            json.dumps(copa_record(i)) for i in ("b", "b", "c", "c")
        ]
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_lines(tmp_path / "x.jsonl", lines))
        assert caught.value.errors[0].message == (
            "duplicate 'same' within the file (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … 15 more)"
        )
        assert [e.line for e in caught.value.errors] == [1, 26] and caught.value.total == 3

    def test_ids_are_trimmed_and_must_be_text_or_whole_numbers(self, make_project, tmp_path):
        project = make_project("copa_likert")
        lines = [json.dumps(copa_record(" a ")), json.dumps(copa_record(7)), json.dumps(copa_record(1.5))]
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_lines(tmp_path / "x.jsonl", lines))
        assert [str(e) for e in caught.value.errors] == [
            "line 3, field external_id: must be a string or a whole number, got 1.5"
        ]
        import_items(project=project, path=write_lines(tmp_path / "y.jsonl", lines[:2]))
        assert sorted(Item.objects.values_list("external_id", flat=True)) == ["7", "a"]

    def test_ids_already_in_the_project_are_refused(self, make_project, tmp_path):
        project = make_project("copa_likert")
        import_items(project=project, path=write_lines(tmp_path / "1.jsonl", [json.dumps(copa_record("a"))]))
        lines = [json.dumps(copa_record("b")), json.dumps(copa_record("a"))]
        with pytest.raises(ImportRejected, match="line 2, field external_id: 'a' already exists in this project"):
            import_items(project=project, path=write_lines(tmp_path / "2.jsonl", lines))
        assert list(Item.objects.values_list("external_id", flat=True)) == ["a"]

    def test_same_external_id_in_another_project_is_fine(self, make_project, tmp_path):
        path = write_lines(tmp_path / "1.jsonl", [json.dumps(copa_record("a"))])
        import_items(project=make_project("copa_likert", slug="one"), path=path)
        assert import_items(project=make_project("copa_likert", slug="two"), path=path).imported == 1

    def test_utf8_with_byte_order_mark(self, make_project, tmp_path):
        project = make_project("copa_likert")
        path = tmp_path / "bom.jsonl"
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(copa_record("é-1"), ensure_ascii=False).encode() + b"\n")
        assert import_items(project=project, path=path).imported == 1
        assert Item.objects.get().external_id == "é-1"

    def test_not_utf8_is_refused(self, make_project, tmp_path):
        project = make_project("copa_likert")
        path = tmp_path / "latin1.jsonl"
        path.write_bytes(json.dumps(copa_record("a"), ensure_ascii=False).replace("Pin", "Pïn").encode("latin-1"))
        with pytest.raises(ImportRejected, match="not UTF-8"):
            import_items(project=project, path=path)

    def test_unsupported_file_type(self, make_project, tmp_path):
        with pytest.raises(ImportRejected, match="unsupported file type '.xlsx'"):
            import_items(project=make_project(), path=write_lines(tmp_path / "a.xlsx", ["x"]))

    def test_qualification_item_keeps_its_gold_value(self, make_project, tmp_path):
        project = make_project("copa_likert")
        record = copa_record("q1", gold=COPA.example_value())
        import_items(project=project, path=write_lines(tmp_path / "g.jsonl", [json.dumps(record)]))
        item = Item.objects.get()
        assert item.is_qualification and item.gold_value == COPA.example_value()
        assert "gold" not in item.payload

    def test_bad_gold_value_is_refused(self, make_project, tmp_path):
        record = copa_record("q1", gold={"scores": {"CT": 5}})
        with pytest.raises(ImportRejected, match="line 1, field gold.scores"):
            import_items(project=make_project(), path=write_lines(tmp_path / "g.jsonl", [json.dumps(record)]))


@pytest.mark.django_db
class ImportJobRecordTests:
    def test_a_refusal_quoting_a_nul_character_is_recorded_on_its_job(self, make_project, tmp_path):
        """The database stores no NUL character: a field named with one is refused as the line is
        read, and the refusal is recorded on the job, not a crash."""
        from annotation.importing import import_job_run
        from annotation.importing.services import import_job_record
        from annotation.models import ImportJob

        project = make_project("copa_likert")
        path = tmp_path / "items.jsonl"
        path.write_text(json.dumps({"external_id": "a", "bad\u0000name": 1}) + "\n", encoding="utf-8")
        job = import_job_record(project=project, target=ImportJob.Target.ITEMS, filename="items.jsonl",
                                stored_path=str(path))  # fmt: skip
        import_job_run(job=job)
        job.refresh_from_db()
        assert job.status == ImportJob.Status.REJECTED
        assert job.errors == [str(FieldError("", NUL_CHARACTER, 1))]
        assert not Item.objects.filter(project=project).exists()


class CsvImportTests:
    def write_csv(self, path, header, rows, *, bom=False):
        with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
        return path

    def test_embedded_newlines_quotes_and_json_cells(self, make_project, tmp_path):
        project = make_project("intent_mcq")
        options = ['To say "hi".', "To leave,\nquickly."]
        path = self.write_csv(
            tmp_path / "mcq.csv",
            ["external_id", "context", "question", "options", "answers"],
            [["m1", 'He said "bye",\nthen left.', "Why?", json.dumps(options), "[1]"]],
            bom=True,
        )
        assert import_items(project=project, path=path).imported == 1
        payload = Item.objects.get().payload
        assert payload["context"] == 'He said "bye",\nthen left.' and payload["options"] == options

    def test_errors_name_the_physical_line_where_a_record_starts(self, make_project, tmp_path):
        project = make_project("intent_mcq")
        path = self.write_csv(
            tmp_path / "mcq.csv",
            ["external_id", "context", "question", "options", "answers"],
            [
                ["m1", "two\nlines", "Why?", '["To a.", "To b."]', "[0]"],
                ["m2", "ok", "Why?", "not json", "[0]"],
            ],
        )
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=path)
        error = caught.value.errors[0]
        assert (error.line, error.field) == (4, "options") and "must hold JSON" in error.message

    def test_unknown_column_is_refused_with_the_allowed_ones(self, make_project, tmp_path):
        path = self.write_csv(tmp_path / "x.csv", ["external_id", "contxt"], [["a", "b"]])
        with pytest.raises(ImportRejected, match=r"line 1, record: unknown column\(s\) \['contxt'\]"):
            import_items(project=make_project("intent_mcq"), path=path)

    def test_header_problems_are_reported_once(self, make_project, tmp_path):
        path = self.write_csv(tmp_path / "x.csv", ["context", "question", "question"], [["a", "b", "c"]] * 3)
        with pytest.raises(ImportRejected) as caught:
            import_items(project=make_project("intent_mcq"), path=path)
        assert [str(e) for e in caught.value.errors] == [
            "line 1, record: repeated column(s) ['question']",
            "line 1, record: missing column(s) ['external_id']",
        ]

    def test_short_row_is_refused(self, make_project, tmp_path):
        path = self.write_csv(tmp_path / "x.csv", ["external_id", "context", "question"], [["a", "b"]])
        with pytest.raises(ImportRejected, match="line 2, record: has 2 cells, the header has 3"):
            import_items(project=make_project("intent_mcq"), path=path)


class AnnotationImportTests:
    @pytest.fixture
    def project(self, make_project, tmp_path):
        project = make_project("copa_likert")
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 3)))
        return project

    def label(self, rater, number, ct=1, **extra):
        value = {"scores": {**COPA.example_value()["scores"], "CT": ct}}
        return json.dumps({"rater": rater, "external_id": f"copa_likert-{number:07d}", "value": value, **extra})

    def test_labels_are_stored_and_linked_to_member_accounts(self, project, tmp_path, make_user):
        user = make_user("ann1")
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        path = write_lines(tmp_path / "a.jsonl", [self.label("ann1", 0), self.label("outside-rater", 1)])
        assert import_annotations(project=project, path=path).imported == 2
        by_rater = {a.rater: a for a in Annotation.objects.all()}
        assert by_rater["ann1"].annotator == user and by_rater["outside-rater"].annotator is None
        assert by_rater["ann1"].source == Annotation.Source.IMPORT

    def test_reimport_stores_nothing_twice_and_a_changed_value_is_a_new_version(self, project, tmp_path):
        first = write_lines(tmp_path / "a.jsonl", [self.label("r", 0, ct=0)])
        import_annotations(project=project, path=first)
        result = import_annotations(project=project, path=first)
        assert (result.imported, result.unchanged) == (0, 1)
        import_annotations(project=project, path=write_lines(tmp_path / "b.jsonl", [self.label("r", 0, ct=2)]))
        versions = list(Annotation.objects.order_by("version").values_list("version", "value__scores__CT"))
        assert versions == [(1, 0), (2, 2)]

    def test_unknown_item_and_bad_value_import_nothing(self, project, tmp_path):
        lines = [self.label("r", 0), self.label("r", 9), self.label("r", 1, ct=3)]
        with pytest.raises(ImportRejected) as caught:
            import_annotations(project=project, path=write_lines(tmp_path / "a.jsonl", lines))
        assert [str(e) for e in caught.value.errors] == [
            "line 2, field external_id: no item 'copa_likert-0000009' in this project",
            "line 3, field value.scores.CT: must be one of 0, 1, 2, got 3",
        ]
        assert Annotation.objects.count() == 0

    def test_same_value_with_keys_in_another_order_is_unchanged(self, project, tmp_path):
        scores = COPA.example_value()["scores"]
        first = {"rater": "r", "external_id": "copa_likert-0000000", "value": {"scores": scores}}
        reordered = {**first, "value": {"scores": dict(reversed(list(scores.items())))}}
        import_annotations(project=project, path=write_lines(tmp_path / "a.jsonl", [json.dumps(first)]))
        result = import_annotations(project=project, path=write_lines(tmp_path / "b.jsonl", [json.dumps(reordered)]))
        assert (result.imported, result.unchanged) == (0, 1)

    def test_seconds_must_be_a_finite_non_negative_number(self, project, tmp_path):
        lines = [self.label("r", 0, seconds_on_item=float("nan")), self.label("r", 1, seconds_on_item=-1)]
        with pytest.raises(ImportRejected) as caught:
            import_annotations(project=project, path=write_lines(tmp_path / "a.jsonl", lines))
        assert [(e.line, e.field) for e in caught.value.errors] == [(1, "seconds_on_item"), (2, "seconds_on_item")]

    def test_csv_annotations_with_json_value_cell(self, project, tmp_path):
        path = tmp_path / "a.csv"
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["rater", "external_id", "value", "seconds_on_item"])
            writer.writerow(["r1", "copa_likert-0000000", json.dumps(COPA.example_value()), "12.5"])
        assert import_annotations(project=project, path=path).imported == 1
        assert Annotation.objects.get().seconds_on_item == 12.5


class CommandTests:
    def test_import_items_prints_counts_as_json(self, make_project, tmp_path, capsys):
        make_project("copa_likert", slug="c")
        call_command("import_items", "c", str(write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 4))))
        printed = json.loads(capsys.readouterr().out)
        assert (printed["project"], printed["imported"]) == ("c", 4)

    def test_bad_file_exits_1_and_names_the_line(self, make_project, tmp_path):
        make_project("copa_likert", slug="c")
        path = write_lines(tmp_path / "i.jsonl", [json.dumps(copa_record("a", question=""))])
        with pytest.raises(CommandError, match="line 1, field question: must not be empty") as caught:
            call_command("import_items", "c", str(path))
        assert caught.value.returncode == 1
        assert Item.objects.count() == 0

    def test_unknown_project_exits_1(self, db, tmp_path):
        with pytest.raises(CommandError, match="no project with slug 'nope'") as caught:
            call_command("import_items", "nope", str(tmp_path / "i.jsonl"))
        assert caught.value.returncode == 1

    def test_missing_file_exits_1(self, make_project, tmp_path):
        make_project("copa_likert", slug="c")
        with pytest.raises(CommandError, match="cannot read") as caught:
            call_command("import_items", "c", str(tmp_path / "missing.jsonl"))
        assert caught.value.returncode == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="planner statistics are PostgreSQL's")
class PlannerStatisticsTests:
    """A large import leaves the planner knowing the rows it wrote: until autovacuum came by, a
    project of 100,000 fresh items looked empty, and an imported run then scanned the whole project
    for each batch of its ids."""

    @staticmethod
    def planner_rows() -> float:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [Item._meta.db_table])
            return cursor.fetchone()[0]

    def test_an_import_past_the_threshold_takes_the_statistics_again(self, make_project, tmp_path, settings):
        settings.CONCORD_ANALYZE_AFTER_ROWS = 30
        project = make_project("copa_likert")
        import_items(project=project, path=write_jsonl(tmp_path / "few.jsonl", synthetic_records(COPA, 29)))
        assert self.planner_rows() != Item.objects.count()  # below the threshold: left to autovacuum
        more = [{**record, "external_id": f"more-{n}"} for n, record in enumerate(synthetic_records(COPA, 30))]
        import_items(project=project, path=write_jsonl(tmp_path / "more.jsonl", iter(more)))
        assert self.planner_rows() == Item.objects.count() == 59
