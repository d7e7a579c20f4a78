"""Generation runs through the API: start one from a source file (multipart or a JSON Lines body), list
and watch a project's runs, cancel and resume them; researchers only, and a refused request stores nothing."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Item, Role
from annotation.services import membership_add
from judges.errors import CANNOT_CANCEL, CANNOT_RESUME
from judges.generation.services import generation_run_start
from judges.models import GenerationRecord, GenerationRun
from tests.api.conftest import client_for
from tests.judges.generation.conftest import write_threads

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/projects/main/generation-runs/"


@pytest.fixture
def world(make_project, make_user):
    project = make_project("ipqa_core_intent", slug="main")
    make_project("ipqa_core_intent", slug="other")
    people = {name: make_user(name) for name in ("res", "ann", "stranger")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    return project, people


def upload(path, **fields):
    return {"source": SimpleUploadedFile("threads.jsonl", path.read_bytes()), **fields}


class GenerationRunStartTests:
    def test_a_researcher_starts_a_baseline_run_and_its_items_are_made(self, world, tmp_path):
        project, people = world
        client = client_for(people["res"])
        started = client.post(
            URL,
            upload(write_threads(tmp_path / "t.jsonl", 3), step="ipqa_intents", backend="baseline"),
            format="multipart",
        )
        assert started.status_code == 201, started.content
        body = started.json()
        assert (body["step"], body["label"], body["source_name"], body["total"]) == (
            "ipqa_intents", "baseline", "threads.jsonl", 3
        )  # fmt: skip
        detail = client.get(f"/api/generation-runs/{body['id']}/").json()
        # Tasks run in-process here: the run has finished by now.
        assert (detail["status"], detail["ok"], detail["items_created"]) == ("completed", 3, 3)
        assert Item.objects.filter(project=project).count() == 3
        listed = client.get(URL).json()
        assert [r["id"] for r in listed] == [body["id"]]

    def test_a_json_lines_body_with_the_options_in_the_query_string(self, world, make_project, tmp_path):
        _, people = world
        copa = make_project("copa_likert", slug="copa")
        membership_add(project=copa, user=people["res"], role=Role.RESEARCHER)
        body = write_threads(tmp_path / "t.jsonl", 2).read_bytes()
        query = "step=copa_profile&backend=baseline&options=" + json.dumps({"profile_from": "current"})
        started = client_for(people["res"]).post(
            f"/api/projects/copa/generation-runs/?{query}", body, content_type="application/x-ndjson"
        )
        assert started.status_code == 201, started.content
        run = GenerationRun.objects.get(pk=started.json()["id"])
        assert run.options == {"profile_from": "current"} and run.source_name == "request body"
        made = sorted(copa.items.values_list("external_id", flat=True))
        assert len(made) == 4 and all(i.endswith((":current:accepted", ":current:top-voted")) for i in made)

    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"step": "copa_profile", "backend": "baseline"}, "non_field_errors"),  # a step of another kind
            ({"step": "ipqa_intents", "backend": "baseline", "options": "[1]"}, "options"),
            ({"step": "ipqa_intents", "backend": "baseline", "options": '{"profile_from": "current"}'}, None),
            ({"step": "ipqa_intents", "backend": "baseline", "limit": "0"}, "limit"),
            ({"step": "ipqa_intents", "backend": "nowhere"}, "backend"),
        ],
    )
    def test_a_refused_request_is_a_400_and_stores_nothing(self, world, tmp_path, fields, field):
        _, people = world
        response = client_for(people["res"]).post(
            URL, upload(write_threads(tmp_path / "t.jsonl", 2), **fields), format="multipart"
        )
        assert response.status_code == 400, response.content
        if field and field != "non_field_errors":
            assert field in {error["field"] for error in response.json()["errors"]}
        assert not GenerationRun.objects.exists() and not GenerationRecord.objects.exists()

    def test_without_a_source_file_the_field_is_named(self, world):
        _, people = world
        response = client_for(people["res"]).post(
            URL, {"step": "ipqa_intents", "backend": "baseline"}, format="multipart"
        )
        assert response.status_code == 400 and "source" in {error["field"] for error in response.json()["errors"]}
        assert not GenerationRun.objects.exists()

    def test_a_bad_line_of_the_source_names_line_and_field(self, world, tmp_path):
        _, people = world

        def no_answers(n, thread):
            if n == 1:
                del thread["answers"]

        path = write_threads(tmp_path / "t.jsonl", 3, change=no_answers)
        response = client_for(people["res"]).post(
            URL, upload(path, step="ipqa_intents", backend="baseline"), format="multipart"
        )
        assert response.status_code == 400
        assert response.json()["errors"] == [{"field": "answers", "message": "missing", "line": 2}]
        assert not GenerationRun.objects.exists()


class GenerationRunAccessTests:
    def test_only_researchers_start_list_and_watch(self, world, tmp_path):
        project, people = world
        path = write_threads(tmp_path / "t.jsonl", 2)
        for who, refused in ((None, (401, 403)), (people["stranger"], (404,)), (people["ann"], (403,))):
            client = client_for(who)
            assert client.get(URL).status_code in refused
            response = client.post(URL, upload(path, step="ipqa_intents", backend="baseline"), format="multipart")
            assert response.status_code in refused
        assert not GenerationRun.objects.exists()
        run = generation_run_start(project=project, step="ipqa_intents", path=path, backend="baseline")
        assert client_for(people["stranger"]).get(f"/api/generation-runs/{run.pk}/").status_code == 404
        assert client_for(people["ann"]).get(f"/api/generation-runs/{run.pk}/").status_code == 403
        assert client_for(people["ann"]).post(f"/api/generation-runs/{run.pk}/cancel/").status_code == 403
        assert GenerationRun.objects.get(pk=run.pk).status == "running"


class RunCancelResumeTests:
    def test_a_generation_run_is_cancelled_and_resumed_to_its_end(self, world, tmp_path):
        project, people = world
        client = client_for(people["res"])
        run = generation_run_start(
            project=project, step="ipqa_intents", path=write_threads(tmp_path / "t.jsonl", 3), backend="baseline"
        )
        cancelled = client.post(f"/api/generation-runs/{run.pk}/cancel/")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        again = client.post(f"/api/generation-runs/{run.pk}/cancel/")
        assert again.status_code == 400
        assert again.json()["detail"] == CANNOT_CANCEL.format(label="generation run", run=run.pk, status="cancelled")
        resumed = client.post(f"/api/generation-runs/{run.pk}/resume/")
        assert resumed.status_code == 200
        # The resumed run's chunks were sent on commit and ran in-process.
        detail = client.get(f"/api/generation-runs/{run.pk}/").json()
        assert (detail["status"], detail["items_created"]) == ("completed", 3)
        refused = client.post(f"/api/generation-runs/{run.pk}/resume/")
        assert refused.status_code == 400
        assert refused.json()["detail"] == CANNOT_RESUME.format(label="generation run", run=run.pk, status="completed")

    def test_a_judge_run_is_cancelled_and_resumed_through_the_same_views(self, world, make_project):
        from judges.services import judge_get_or_create, judge_run_start
        from tests.judges.conftest import add_items

        _, people = world
        copa = make_project("copa_likert", slug="copa")
        membership_add(project=copa, user=people["res"], role=Role.RESEARCHER)
        add_items(copa, 3)
        judge, _ = judge_get_or_create(project=copa, backend="baseline")
        run = judge_run_start(judge=judge, project=copa)
        client = client_for(people["res"])
        assert client.post(f"/api/runs/{run.pk}/cancel/").json()["status"] == "cancelled"
        assert client.post(f"/api/runs/{run.pk}/resume/").status_code == 200
        detail = client.get(f"/api/runs/{run.pk}/").json()
        assert (detail["status"], detail["ok"]) == ("completed", 3)
        # A generation run's address never reaches a judge run of the same number.
        assert client.post(f"/api/generation-runs/{run.pk}/cancel/").status_code == 404
