"""JSON nested past CONCORD_MAX_JSON_DEPTH is refused by every reader (pages, commands, API, form
fields, command options), naming the line or field, before a recursive parser reads it: never a 500
or a RecursionError, and nothing stored."""

from __future__ import annotations

import io
import json

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation import jsonsafe
from annotation.kinds import get_kind
from annotation.models import ImportJob, Item, Project, Role
from annotation.services import membership_add
from judges.models import Judge, JudgeRun, Suggestion
from tests.api.conftest import client_for
from tests.judges.conftest import add_items

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = "[" * 3000 + "]" * 3000
TOO_DEEP = jsonsafe.TOO_DEEP.format(depth=64)


@pytest.fixture
def team(make_project, make_user):
    project = make_project("copa_likert", slug="main")
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    add_items(project, 2)
    return project, researcher


def nothing_imported() -> bool:
    return not (JudgeRun.objects.exists() or Judge.objects.exists() or Suggestion.objects.exists())


class ParserTests:
    def test_deep_text_is_refused_before_any_parser_reads_it(self, monkeypatch):
        def parser_called(*args, **kwargs):
            raise AssertionError("a recursive parser was handed the deep text")

        monkeypatch.setattr(jsonsafe.orjson, "loads", parser_called)
        monkeypatch.setattr(jsonsafe._STRICT, "decode", parser_called)
        with pytest.raises(jsonsafe.UnsafeJSON) as caught:
            jsonsafe.loads('{"a": ' + DEEP + "}", path="value")
        assert (caught.value.path, caught.value.message) == ("value", TOO_DEEP)

    def test_brackets_inside_strings_are_text(self):
        text = json.dumps({"a": "[" * 500, "b": ["{" * 500]})
        assert jsonsafe.nesting_depth(text) == 2 and jsonsafe.loads(text)["a"] == "[" * 500

    def test_shallow_text_with_many_brackets_still_parses(self):
        text = json.dumps([[i] for i in range(500)])
        assert jsonsafe.loads(text) == orjson.loads(text)


class PageTests:
    def test_item_import_page_names_the_line(self, client, team, django_capture_on_commit_callbacks):
        project, researcher = team
        client.force_login(researcher)
        line = json.dumps({"external_id": "deep", **get_kind("copa_likert").example_payload()})[:-1]
        content = (line + ', "extra": ' + DEEP + "}\n").encode()
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("import_upload", args=[project.slug]),
                {"target": "items", "file": SimpleUploadedFile("i.jsonl", content)},
            )
        assert response.status_code in (200, 302)
        job = ImportJob.objects.get()
        assert job.status == ImportJob.Status.REJECTED and TOO_DEEP in json.dumps(job.errors)
        assert "line 1" in client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert not Item.objects.filter(external_id="deep").exists()

    def test_run_import_page_refuses_a_deep_line_and_a_deep_sampling_field(self, client, team):
        project, researcher = team
        client.force_login(researcher)
        url = reverse("judge_run_import", args=[project.slug])
        deep_line = b'{"external_id": "item-00000", "value": ' + DEEP.encode() + b"}\n"
        answer = client.post(url, {"import-file": SimpleUploadedFile("r.jsonl", deep_line), "import-model": "m"})
        assert answer.status_code == 400 and "line 1" in answer.content.decode()
        good = b'{"external_id": "item-00000", "error": "cut off"}\n'
        answer = client.post(
            url, {"import-file": SimpleUploadedFile("r.jsonl", good), "import-model": "m", "import-sampling": DEEP}
        )
        assert answer.status_code == 400 and nothing_imported()


class ApiTests:
    def test_run_import_api_refuses_a_deep_line_and_deep_sampling(self, team):
        project, researcher = team
        client = client_for(researcher)
        url = f"/api/projects/{project.slug}/runs/import/"
        deep_line = b'{"external_id": "item-00000", "value": ' + DEEP.encode() + b"}\n"
        answer = client.post(url, {"file": SimpleUploadedFile("r.jsonl", deep_line), "model": "m"}, format="multipart")
        assert answer.status_code == 400 and TOO_DEEP in answer.content.decode()
        good = b'{"external_id": "item-00000", "error": "cut off"}\n'
        answer = client.post(
            url, {"file": SimpleUploadedFile("r.jsonl", good), "model": "m", "sampling": DEEP}, format="multipart"
        )
        assert answer.status_code == 400 and "sampling" in answer.json()["errors"][0]["field"]
        assert nothing_imported()

    def test_a_deep_json_body_is_a_400(self, team):
        project, researcher = team
        answer = client_for(researcher).patch(
            f"/api/projects/{project.slug}/", '{"adjudication_rules": ' + DEEP + "}", content_type="application/json"
        )
        assert answer.status_code == 400 and TOO_DEEP in answer.content.decode()


class CommandTests:
    def test_import_run_names_the_line(self, team, tmp_path):
        project, _ = team
        path = tmp_path / "r.jsonl"
        path.write_text('{"external_id": "item-00000", "value": ' + DEEP + "}\n", encoding="utf-8")
        with pytest.raises(CommandError) as refused:
            call_command("import_run", project.slug, str(path), "--model", "m", stdout=io.StringIO())
        assert refused.value.returncode == 1 and f"line 1, record: {TOO_DEEP}" in str(refused.value)
        assert nothing_imported()

    def test_import_run_sampling_option_is_a_usage_error(self, team, tmp_path):
        project, _ = team
        path = tmp_path / "r.jsonl"
        path.write_text('{"external_id": "item-00000", "error": "x"}\n', encoding="utf-8")
        with pytest.raises(CommandError) as refused:
            call_command("import_run", project.slug, str(path), "--model", "m", "--sampling", DEEP)
        assert refused.value.returncode == 2 and nothing_imported()

    @pytest.mark.parametrize("command", ["create_project", "project_settings"])
    def test_adjudication_rules_option_is_a_usage_error(self, team, command):
        args = ["other", "--kind", "copa_likert"] if command == "create_project" else ["main"]
        with pytest.raises(CommandError) as refused:
            call_command(command, *args, "--adjudication-rules", DEEP, stdout=io.StringIO())
        assert TOO_DEEP in str(refused.value) and not Project.objects.filter(slug="other").exists()
