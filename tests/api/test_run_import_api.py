"""POST /api/projects/{slug}/runs/import/: a run file as multipart or as a JSON Lines body; researchers
only; a bad file is a 400 naming line and field, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from judges.models import Judge, JudgeRun, Suggestion
from judges.run_files import NO_SUCH_ITEM
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)
COPA = get_kind("copa_likert")
URL = "/api/projects/main/runs/import/"


@pytest.fixture
def world(make_project, make_user, tmp_path):
    project = make_project("copa_likert", slug="main")
    records = list(synthetic_records(COPA, 3))
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", records))
    people = {name: make_user(name) for name in ("res", "ann", "stranger")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    return project, people, [r["external_id"] for r in records]


def run_file(ids: list[str]) -> bytes:
    lines = [
        {"external_id": ids[0], "value": COPA.example_value(), "score": 0.8},
        {"external_id": ids[1], "error": "x"},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


class RunImportApiTests:
    def test_a_multipart_upload_becomes_a_run_with_its_provenance(self, world):
        _, people, ids = world
        upload = SimpleUploadedFile("gpt4o-batch.jsonl", run_file(ids))
        answer = client_for(people["res"]).post(
            URL, {"file": upload, "model": "gpt-4o", "prompt": "evaluator v2", "sampling": '{"temperature": 0}'},
            format="multipart",
        )  # fmt: skip
        assert answer.status_code == 201, answer.content
        run = JudgeRun.objects.get()
        assert answer.json() == {"run": run.pk, "ok": 1, "failed": 1}
        assert run.provenance["file_name"] == "gpt4o-batch.jsonl" and run.provenance["sampling"] == {"temperature": 0}
        detail = client_for(people["res"]).get(f"/api/runs/{run.pk}/").json()
        assert detail["backend"] == "imported" and detail["label"] == "imported · gpt-4o"
        assert detail["provenance"]["model"] == "gpt-4o"

    def test_a_json_lines_body_with_options_in_the_query(self, world):
        _, people, ids = world
        answer = client_for(people["res"]).generic(
            "POST",
            f"{URL}?model=qwen3-32b&producer_run_id=slurm-77",
            run_file(ids),
            content_type="application/x-ndjson",
        )
        assert answer.status_code == 201, answer.content
        assert JudgeRun.objects.get().provenance["producer_run_id"] == "slurm-77"

    def test_a_bad_line_is_400_naming_line_and_field_and_stores_nothing(self, world):
        _, people, ids = world
        body = run_file(ids) + b'{"external_id": "missing", "error": "x"}\n'
        answer = client_for(people["res"]).generic("POST", f"{URL}?model=m", body, content_type="application/x-ndjson")
        assert answer.status_code == 400
        assert answer.json()["errors"] == [
            {"field": "external_id", "message": NO_SUCH_ITEM.format(external_id="missing"), "line": 3}
        ]
        assert not (JudgeRun.objects.exists() or Judge.objects.exists() or Suggestion.objects.exists())

    def test_a_body_past_the_cap_is_refused(self, world, settings):
        _, people, ids = world
        settings.CONCORD_IMPORT_MAX_BYTES = 100
        answer = client_for(people["res"]).generic(
            "POST", f"{URL}?model=m", run_file(ids) * 3, content_type="application/x-ndjson"
        )
        # Refused from its Content-Length before the body is read, as every capped route is.
        assert answer.status_code == 413 and answer.json()["code"] == "too_large"
        assert not JudgeRun.objects.exists()

    def test_only_researchers_import(self, world):
        _, people, ids = world
        for who, code in ((None, (401, 403)), (people["stranger"], (404,)), (people["ann"], (403,))):
            answer = client_for(who).generic(
                "POST", f"{URL}?model=m", run_file(ids), content_type="application/x-ndjson"
            )
            assert answer.status_code in code
        assert not JudgeRun.objects.exists()

    def test_no_file_at_all_is_a_400(self, world):
        _, people, _ = world
        answer = client_for(people["res"]).post(f"{URL}?model=m")
        assert answer.status_code == 400 and not JudgeRun.objects.exists()

    def test_a_run_comes_back_as_its_file(self, world):
        _, people, ids = world
        client = client_for(people["res"])
        run = client.generic("POST", f"{URL}?model=m", run_file(ids), content_type="application/x-ndjson").json()["run"]
        answer = client.get(f"/api/runs/{run}/file/", {"format": "jsonl"})
        lines = [json.loads(line) for line in b"".join(answer.streaming_content).decode().splitlines()]
        assert lines[0]["provenance"]["model"] == "m"
        assert [line["external_id"] for line in lines[1:]] == ids[:2]
        assert client.get(f"/api/runs/{run}/file/", {"format": "xml"}).status_code == 400
        assert client_for(people["ann"]).get(f"/api/runs/{run}/file/").status_code == 403
