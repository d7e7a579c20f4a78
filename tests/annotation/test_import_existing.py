"""Re-importing an item file: ids the project has are refused, skipped or updated (payload only, and
only before anyone answered the item), with counts, on the page, the command and the API; the
import history says when and who, a page at a time."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.errors import ImportRejected
from annotation.importing import import_annotations, import_items
from annotation.importing.services import (
    ANSWERED_ITEM,
    EXISTING_FOR_ITEMS,
    GOLD_NOT_UPDATED,
    import_job_record,
)
from annotation.kinds import get_kind
from annotation.models import ImportJob, Item, Role
from annotation.selectors import IMPORT_HISTORY_PAGE
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

COPA = get_kind("copa_likert")


def records(count: int, **changes) -> list[dict]:
    return [{**record, **changes} for record in synthetic_records(COPA, count)]


def payloads(project) -> dict[str, dict]:
    return dict(Item.objects.filter(project=project).values_list("external_id", "payload"))


def answer(project, tmp_path, external_id: str) -> None:
    """A person's label on the item (imported, which is an answer like any other)."""
    line = {"rater": "ann", "external_id": external_id, "value": COPA.example_value()}
    import_annotations(project=project, path=write_jsonl(tmp_path / f"answer-{external_id}.jsonl", [line]))


@pytest.fixture
def project(make_project, tmp_path):
    project = make_project("copa_likert", slug="pilot")
    import_items(project=project, path=write_jsonl(tmp_path / "first.jsonl", records(3)))
    return project


class ExistingItemsTests:
    def test_refused_by_default_one_error_per_existing_item(self, project, tmp_path):
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", records(4)))
        assert [str(e) for e in caught.value.errors] == [
            f"line {n + 1}, field external_id: 'copa_likert-000000{n}' already exists in this project" for n in range(3)
        ]
        assert Item.objects.filter(project=project).count() == 3

    def test_skip_creates_the_new_items_and_leaves_existing_ones_alone(self, project, tmp_path):
        before = payloads(project)
        again = records(5, question="A different question?")
        result = import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing="skip")
        assert (result.imported, result.skipped, result.updated) == (2, 3, 0)
        after = payloads(project)
        assert {k: after[k] for k in before} == before
        assert after["copa_likert-0000004"]["question"] == "A different question?"

    def test_update_replaces_changed_payloads_and_counts_unchanged_as_skipped(self, project, tmp_path):
        again = records(4)
        again[1]["question"] = "Reworded?"
        result = import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing="update")
        assert (result.imported, result.skipped, result.updated) == (1, 2, 1)
        stored = payloads(project)
        assert stored["copa_likert-0000001"]["question"] == "Reworded?"
        assert stored["copa_likert-0000000"] == {k: v for k, v in records(1)[0].items() if k != "external_id"}

    def test_update_of_an_answered_item_is_refused_naming_the_line_and_stores_nothing(self, project, tmp_path):
        answer(project, tmp_path, "copa_likert-0000002")
        before = payloads(project)
        again = records(5, question="Reworded?")
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing="update")
        message = ANSWERED_ITEM.format(external_id="copa_likert-0000002")
        assert [str(e) for e in caught.value.errors] == [f"line 3, field external_id: {message}"]
        assert payloads(project) == before  # neither the other updates nor the new items

    def test_an_answered_item_the_file_leaves_unchanged_is_skipped(self, project, tmp_path):
        answer(project, tmp_path, "copa_likert-0000000")
        again = records(3)
        again[2]["question"] = "Reworded?"
        result = import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing="update")
        assert (result.imported, result.skipped, result.updated) == (0, 2, 1)

    def test_update_never_changes_a_known_answer(self, project, tmp_path):
        again = records(1, gold=COPA.example_value())
        with pytest.raises(ImportRejected) as caught:
            import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing="update")
        assert caught.value.errors[0].message == GOLD_NOT_UPDATED.format(external_id="copa_likert-0000000")
        assert Item.objects.get(project=project, external_id="copa_likert-0000000").gold_value is None

    def test_an_id_repeated_within_the_file_is_refused_in_every_mode(self, project, tmp_path):
        again = records(1) + records(1)
        for existing in ("skip", "update"):
            with pytest.raises(ImportRejected, match="duplicate 'copa_likert-0000000' within the file"):
                import_items(project=project, path=write_jsonl(tmp_path / "again.jsonl", again), existing=existing)

    def test_annotation_files_add_versions_and_take_no_existing_mode(self, project):
        with pytest.raises(ImportRejected) as caught:
            import_job_record(project=project, target=ImportJob.Target.ANNOTATIONS, filename="a.jsonl", existing="skip")
        assert caught.value.errors[0].message == EXISTING_FOR_ITEMS
        assert not ImportJob.objects.filter(target=ImportJob.Target.ANNOTATIONS).exists()


class ExistingItemsCommandTests:
    def test_skip_prints_the_counts(self, project, tmp_path, capsys):
        path = write_jsonl(tmp_path / "again.jsonl", records(4))
        call_command("import_items", "pilot", str(path), "--existing", "skip")
        printed = json.loads(capsys.readouterr().out)
        assert (printed["imported"], printed["skipped"], printed["updated"]) == (1, 3, 0)
        assert ImportJob.objects.get(pk=printed["job"]).existing == "skip"

    def test_update_of_an_answered_item_exits_1(self, project, tmp_path):
        answer(project, tmp_path, "copa_likert-0000000")
        path = write_jsonl(tmp_path / "again.jsonl", records(1, question="Reworded?"))
        with pytest.raises(CommandError) as caught:
            call_command("import_items", "pilot", str(path), "--existing", "update")
        assert caught.value.returncode == 1
        assert ANSWERED_ITEM.format(external_id="copa_likert-0000000") in str(caught.value)

    def test_an_unknown_mode_is_refused_before_anything_is_read(self, project, tmp_path):
        path = write_jsonl(tmp_path / "again.jsonl", records(1))
        with pytest.raises(CommandError, match="invalid choice: 'overwrite'"):
            call_command("import_items", "pilot", str(path), "--existing", "overwrite")
        assert not ImportJob.objects.filter(filename=str(path)).exists()


@pytest.fixture
def researcher(project, make_user):
    person = make_user("res")
    membership_add(project=project, user=person, role=Role.RESEARCHER)
    return person


class ExistingItemsApiTests:
    url = "/api/projects/pilot/items/"

    def test_skip_answers_the_counts(self, project, researcher):
        body = {"records": records(4), "existing": "skip"}
        response = client_for(researcher).post(self.url, body, format="json")
        assert response.status_code == 201
        assert response.json() == {"imported": 1, "skipped": 3, "updated": 0}
        job = ImportJob.objects.get(existing="skip")
        assert (job.created_by, job.status, job.rows_skipped) == (researcher, "done", 3)

    def test_a_hand_made_update_of_an_answered_item_is_refused(self, project, researcher, tmp_path):
        answer(project, tmp_path, "copa_likert-0000001")
        before = payloads(project)
        body = {"records": records(3, question="Reworded?"), "existing": "update"}
        response = client_for(researcher).post(self.url, body, format="json")
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "external_id", "message": ANSWERED_ITEM.format(external_id="copa_likert-0000001"), "line": 2}
        ]
        assert payloads(project) == before
        assert ImportJob.objects.get(existing="update").status == "rejected"

    def test_an_unknown_mode_is_a_400(self, project, researcher):
        response = client_for(researcher).post(self.url, {"records": records(1), "existing": "all"}, format="json")
        assert response.status_code == 400 and "existing" in response.content.decode()
        assert Item.objects.filter(project=project).count() == 3


class ImportHistoryPageTests:
    def test_the_page_upload_takes_the_mode_and_the_history_says_who_and_when(
        self, client, project, researcher, django_capture_on_commit_callbacks
    ):
        client.force_login(researcher)
        content = "".join(json.dumps(r) + "\n" for r in records(4)).encode()
        data = {"target": "items", "existing": "skip", "file": SimpleUploadedFile("again.jsonl", content)}
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("import_upload", args=["pilot"]), data)
        job = ImportJob.objects.get(filename="again.jsonl")
        assert (job.existing, job.rows_imported, job.rows_skipped, job.created_by) == ("skip", 1, 3, researcher)
        page = client.get(reverse("project_detail", args=["pilot"])).content.decode()
        assert "1 imported, 3 skipped, 0 updated" in page
        assert f'datetime="{job.created_at.isoformat()}"' in page and "by res" in page

    def test_the_history_is_paged_newest_first(self, client, project, researcher):
        for number in range(IMPORT_HISTORY_PAGE + 2):
            import_job_record(project=project, target="items", filename=f"file-{number:02d}.jsonl", user=researcher)
        client.force_login(researcher)
        first = client.get(reverse("project_detail", args=["pilot"])).content.decode()
        assert "file-11.jsonl" in first and "file-02.jsonl" in first and "file-01.jsonl" not in first
        assert "Page 1 of 2" in first
        older = client.get(reverse("project_detail", args=["pilot"]), {"imports": 2}).content.decode()
        assert "file-01.jsonl" in older and "file-00.jsonl" in older and "file-11.jsonl" not in older
        nonsense = client.get(reverse("project_detail", args=["pilot"]), {"imports": "abc"})
        assert nonsense.status_code == 200
