"""The Generate items page: researchers upload a source, choose step, endpoint and parameters; watch
progress; read failures with their raw output. Anything else is refused and stores nothing."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Item, Role
from annotation.services import membership_add
from annotation.setup_checklist import setup_checklist
from judges.generation_views import SOURCE_TOO_LARGE
from judges.models import GenerationRun
from tests.judges.generation.conftest import write_threads
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, make_user):
    project = make_project("ipqa_core_intent")
    people = {name: make_user(name) for name in ("res", "ann")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    return project, people


def form(path, **fields) -> dict:
    data = {"step": "ipqa_intents", "backend": "baseline", "max_tokens": 2048, "seed": 42, "endpoint": "default"}
    data.update(fields)
    data["source"] = SimpleUploadedFile("threads.jsonl", path.read_bytes())
    return data


class GeneratePageTests:
    def test_a_researcher_uploads_threads_and_gets_items(
        self, client, team, tmp_path, django_capture_on_commit_callbacks
    ):
        project, people = team
        client.force_login(people["res"])
        assert client.get(reverse("generate_items", args=[project.slug])).status_code == 200
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("generate_items", args=[project.slug]), form(write_threads(tmp_path / "t.jsonl", 4))
            )
        run = GenerationRun.objects.get(project=project)
        assert response.status_code == 302 and response["Location"] == reverse(
            "generation_run_detail", args=[project.slug, run.pk]
        )
        assert (run.status, run.items_created, run.source_name) == ("completed", 4, "threads.jsonl")
        page = client.get(response["Location"])
        assert b"baseline, not an LLM" in page.content and b"Items created" in page.content

    def test_failures_show_their_raw_output_and_token_counts(
        self, client, team, tmp_path, llm_server, settings, django_capture_on_commit_callbacks
    ):
        settings.JUDGE_CHUNK_RETRIES = 0
        llm_server.script = lambda r: Reply.text("<<garbled>>") if "#0#" in r.text else valid_answer(r)
        project, people = team
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            client.post(
                reverse("generate_items", args=[project.slug]),
                form(write_threads(tmp_path / "t.jsonl", 2), backend="openai", model="m"),
            )
        run = GenerationRun.objects.get(project=project)
        page = client.get(reverse("generation_run_detail", args=[project.slug, run.pk])).content.decode()
        assert "&lt;&lt;garbled&gt;&gt;" in page and "not valid JSON" in page
        assert run.records.filter(tokens_in__gt=0).count() == 2 and "Tokens in / out" in page

    def test_annotators_cannot_generate(self, client, team, tmp_path):
        project, people = team
        client.force_login(people["ann"])
        response = client.post(
            reverse("generate_items", args=[project.slug]), form(write_threads(tmp_path / "t.jsonl", 1))
        )
        assert response.status_code == 403 and not GenerationRun.objects.exists()

    def test_an_endpoint_typed_by_hand_is_refused_and_nothing_stored(self, client, team, tmp_path):
        project, people = team
        client.force_login(people["res"])
        data = form(write_threads(tmp_path / "t.jsonl", 1), backend="openai", model="m", endpoint="http://evil:8000/v1")
        response = client.post(reverse("generate_items", args=[project.slug]), data)
        assert response.status_code == 400 and not GenerationRun.objects.exists()

    def test_an_upload_over_the_cap_is_refused_and_nothing_stored(self, client, team, tmp_path, settings):
        settings.CONCORD_IMPORT_MAX_BYTES = 100
        project, people = team
        client.force_login(people["res"])
        response = client.post(
            reverse("generate_items", args=[project.slug]), form(write_threads(tmp_path / "t.jsonl", 1))
        )
        assert response.status_code == 400 and SOURCE_TOO_LARGE.format(limit=100) in response.content.decode()
        assert not GenerationRun.objects.exists() and not Item.objects.exists()

    def test_a_bad_line_is_shown_with_its_line_and_field(self, client, team, tmp_path):
        project, people = team
        client.force_login(people["res"])
        path = write_threads(tmp_path / "t.jsonl", 2, change=lambda n, t: t.update(title=5) if n == 1 else None)
        response = client.post(reverse("generate_items", args=[project.slug]), form(path))
        assert response.status_code == 400 and "line 2, field title: must be str" in response.content.decode()
        assert not GenerationRun.objects.exists()

    def test_the_checklist_offers_no_generate_items_step_where_no_step_makes_the_kind(self, make_project):
        """An MCQ project (no generation step makes MCQ items) gets no "Generate items" step to follow."""
        mcq = make_project("intent_mcq", slug="mcq")
        assert "generate_items" not in [step.key for step in setup_checklist(project=mcq)]

    def test_the_project_checklist_links_to_generate_items(self, client, team):
        project, people = team
        client.force_login(people["res"])
        page = client.get(reverse("project_detail", args=[project.slug]))
        assert reverse("generate_items", args=[project.slug]).encode() in page.content
