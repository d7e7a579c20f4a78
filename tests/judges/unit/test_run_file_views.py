"""The "Import a run" form and the run page's provenance and download: researchers only."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from judges.models import JudgeRun, Suggestion
from tests.judges.conftest import add_items

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def team(copa, make_user):
    people = {name: make_user(name) for name in ("res", "ann")}
    membership_add(project=copa, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=copa, user=people["ann"], role=Role.ANNOTATOR)
    add_items(copa, 2)
    return copa, people


def upload(copa, lines: list[dict]) -> SimpleUploadedFile:
    return SimpleUploadedFile("evaluator.jsonl", "".join(json.dumps(line) + "\n" for line in lines).encode())


def good_lines(copa) -> list[dict]:
    return [
        {"external_id": "item-00000", "value": copa.task_kind.example_value()},
        {"external_id": "item-00001", "error": "cut off"},
    ]


class RunImportPageTests:
    def test_import_from_the_page_then_read_provenance_and_download(self, client, team):
        project, people = team
        client.force_login(people["res"])
        page = client.get(reverse("project_judges", args=[project.slug])).content.decode()
        assert "Import a run" in page and reverse("judge_run_import", args=[project.slug]) in page
        answer = client.post(
            reverse("judge_run_import", args=[project.slug]),
            {"import-file": upload(project, good_lines(project)), "import-model": "gpt-4o",
                "import-prompt": "copa_likert_evaluation.v1",
             "import-producer_run_id": "batch_9", "import-sampling": '{"temperature": 0}'},
        )  # fmt: skip
        run = JudgeRun.objects.get()
        assert answer.status_code == 302 and answer["Location"] == reverse(
            "judge_run_detail", args=[project.slug, run.pk]
        )
        detail = client.get(answer["Location"]).content.decode()
        for shown in (
            "imported · gpt-4o",
            "batch_9",
            "temperature=0",
            run.provenance["file_sha256"],
            "evaluator.jsonl",
        ):
            assert shown in detail
        download = client.get(reverse("judge_run_download", args=[project.slug, run.pk]), {"format": "jsonl"})
        lines = [json.loads(line) for line in b"".join(download.streaming_content).decode().splitlines()]
        assert lines[0]["provenance"]["producer_run_id"] == "batch_9" and lines[1:] == good_lines(project)
        csv_text = b"".join(
            client.get(reverse("judge_run_download", args=[project.slug, run.pk]), {"format": "csv"}).streaming_content
        )
        assert csv_text.decode().splitlines()[0].startswith("external_id,value,error")

    def test_a_bad_file_shows_its_lines_and_stores_nothing(self, client, team):
        project, people = team
        client.force_login(people["res"])
        lines = [*good_lines(project), {"external_id": "item-00001", "error": "again"}]
        answer = client.post(
            reverse("judge_run_import", args=[project.slug]),
            {"import-file": upload(project, lines), "import-model": "m"},
        )
        assert (
            answer.status_code == 400
            and "duplicate &#x27;item-00001&#x27; within the file (lines 2, 3)" in answer.content.decode()
        )
        assert not JudgeRun.objects.exists() and not Suggestion.objects.exists()

    def test_an_annotator_can_neither_import_nor_download(self, client, team):
        project, people = team
        client.force_login(people["res"])
        client.post(
            reverse("judge_run_import", args=[project.slug]),
            {"import-file": upload(project, good_lines(project)), "import-model": "m"},
        )
        run = JudgeRun.objects.get()
        client.force_login(people["ann"])
        answer = client.post(
            reverse("judge_run_import", args=[project.slug]),
            {"import-file": upload(project, good_lines(project)), "import-model": "n"},
        )
        assert answer.status_code == 403 and JudgeRun.objects.count() == 1
        assert client.get(reverse("judge_run_download", args=[project.slug, run.pk])).status_code == 403
