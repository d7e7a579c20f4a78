"""Where judges send requests and what they load is the operator's configuration: users choose an
endpoint, and for in-process vLLM a model, by name only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import RestrictedError
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from judges.endpoints import (
    UNKNOWN_MODEL,
    check_local_models,
    endpoint_problems,
    get_endpoint,
    local_model_problems,
    local_model_source,
)
from judges.errors import JudgeInvalid
from judges.generation.services import generation_run_start
from judges.models import GenerationRun, Judge
from judges.services import judge_get_or_create, judge_run_start
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def researcher_project(make_project, make_user):
    project = make_project("copa_likert", slug="mine")
    user = make_user("res")
    membership_add(project=project, user=user, role=Role.RESEARCHER)
    return project, user


class ServiceTests:
    def test_an_unconfigured_endpoint_name_is_refused(self, researcher_project):
        project, _ = researcher_project
        with pytest.raises(JudgeInvalid, match="unknown endpoint 'http://attacker.test/v1'"):
            judge_get_or_create(project=project, backend="openai", model="m", endpoint="http://attacker.test/v1")
        assert not Judge.objects.exists()

    def test_a_configured_endpoint_is_chosen_by_name(self, researcher_project, settings):
        project, _ = researcher_project
        settings.LLM_ENDPOINTS = {"gpu-1": {"base_url": "http://gpu-1:8000/v1", "api_key_env": "GPU1_KEY"}}
        judge, _ = judge_get_or_create(project=project, backend="openai", model="m", endpoint="gpu-1")
        assert judge.endpoint == "gpu-1" and get_endpoint("gpu-1").base_url == "http://gpu-1:8000/v1"

    def test_the_default_endpoint_is_the_openai_variables(self, researcher_project, settings):
        project, _ = researcher_project
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = "http://gpu-0:8000/v1", "k0"
        judge, _ = judge_get_or_create(project=project, backend="openai", model="m")
        endpoint = get_endpoint(judge.endpoint)
        assert (judge.endpoint, endpoint.base_url, endpoint.api_key()) == ("default", "http://gpu-0:8000/v1", "k0")

    def test_one_configuration_in_two_projects_is_two_judges(self, researcher_project, make_project):
        project, _ = researcher_project
        other = make_project("copa_likert", slug="theirs")
        mine, _ = judge_get_or_create(project=project, backend="baseline")
        theirs, _ = judge_get_or_create(project=other, backend="baseline")
        assert mine.pk != theirs.pk and mine.fingerprint == theirs.fingerprint

    def test_deleting_a_project_deletes_its_judges_and_runs(self, researcher_project):
        project, _ = researcher_project
        judge, _ = judge_get_or_create(project=project, backend="baseline")
        judge_run_start(judge=judge, project=project)
        project.delete()
        assert not Judge.objects.exists()

    def test_a_judge_with_runs_cannot_be_deleted_alone(self, researcher_project):
        project, _ = researcher_project
        judge, _ = judge_get_or_create(project=project, backend="baseline")
        judge_run_start(judge=judge, project=project)
        with pytest.raises(RestrictedError):
            judge.delete()


class ApiTests:
    def test_api_refuses_a_url_or_an_unknown_endpoint(self, researcher_project):
        _, user = researcher_project
        for body in (
            {"backend": "openai", "model": "m", "endpoint": "http://attacker.test/v1"},
            {"backend": "openai", "model": "m", "endpoint": "SECRET_KEY"},
        ):
            response = client_for(user).post("/api/projects/mine/runs/", body, format="json")
            assert response.status_code == 400, response.content
        assert not Judge.objects.exists()

    def test_api_ignores_the_old_url_and_key_variable_fields(self, researcher_project, settings):
        _, user = researcher_project
        body = {"backend": "openai", "model": "m", "base_url": "http://attacker.test/v1", "api_key_env": "SECRET_KEY"}
        response = client_for(user).post("/api/projects/mine/runs/", body, format="json")
        assert response.status_code == 201, response.content
        assert Judge.objects.get().endpoint == "default"


class PageTests:
    def test_judge_form_offers_configured_endpoints_only(self, client, researcher_project, settings):
        _, user = researcher_project
        settings.LLM_ENDPOINTS = {"gpu-1": {"base_url": "http://gpu-1:8000/v1"}}
        client.force_login(user)
        page = client.get(reverse("project_judges", args=["mine"])).content.decode()
        assert 'value="default"' in page and 'value="gpu-1"' in page
        assert "http://gpu-1:8000/v1" not in page  # names only: URLs stay with the operator
        form = {"backend": "openai", "model": "m", "endpoint": "http://attacker.test/v1", "temperature": "0"}
        response = client.post(reverse("judge_new", args=["mine"]), {**form, "max_tokens": "10", "seed": "1"})
        assert response.status_code == 400 and not Judge.objects.exists()

    def test_no_project_sees_another_projects_judges(self, client, researcher_project, make_project):
        project, user = researcher_project
        other = make_project("copa_likert", slug="theirs")
        judge_get_or_create(project=other, backend="openai", model="their-secret-model")
        client.force_login(user)
        page = client.get(reverse("project_judges", args=["mine"])).content.decode()
        assert "their-secret-model" not in page
        theirs = Judge.objects.get(project=other)
        response = client.post(reverse("judge_run_launch", args=["mine"]), {"judge": theirs.pk})
        assert response.status_code == 400 and not project.judge_runs.exists()

    def test_a_kind_without_a_baseline_is_not_offered_one(self, client, make_project, make_user):
        project = make_project("ipqa_core_intent", slug="ipqa")
        user = make_user("res2")
        membership_add(project=project, user=user, role=Role.RESEARCHER)
        client.force_login(user)
        from judges.prompting import prompts_for

        page = client.get(reverse("project_judges", args=["ipqa"])).content.decode()
        offers_baseline = 'value="baseline"' in page
        assert offers_baseline == bool(prompts_for(kind="ipqa_core_intent", backend="baseline"))


class CommandTests:
    def test_run_judge_refuses_an_unconfigured_endpoint(self, researcher_project):
        with pytest.raises(CommandError, match="unknown endpoint 'evil'") as caught:
            call_command("run_judge", "mine", "--backend", "openai", "--model", "m", "--endpoint", "evil")
        assert caught.value.returncode == 1 and not Judge.objects.exists()


class ConfigurationTests:
    def test_malformed_endpoint_configuration_is_named(self):
        problems = endpoint_problems(
            {
                "Bad Name": {"base_url": "http://x/v1"},
                "files": {"base_url": "file:///etc/passwd"},
                "key": {"base_url": "http://x/v1", "api_key_env": "NOT A VAR"},
            }
        )
        assert problems == [
            "endpoint name 'Bad Name' must be 1-50 lowercase letters, digits, '-' or '_'",
            "endpoint 'files': base_url must be an http(s) URL, got 'file:///etc/passwd'",
            "endpoint 'key': api_key_env must name an environment variable, got 'NOT A VAR'",
        ]

    def test_the_app_refuses_to_start_on_a_malformed_configuration(self):
        env = {**os.environ, "CONCORD_LLM_ENDPOINTS": json.dumps({"x": {"base_url": "ftp://x"}})}
        done = subprocess.run(
            [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode != 0 and "judges.E001" in done.stderr


#: Paths and repositories a user might try to make a GPU worker load.
NOT_CONFIGURED = ["/etc", "../../var/concord.sqlite3", "/models/Qwen3-32B", "someone/their-model", ""]


@pytest.fixture
def local_models(settings):
    settings.VLLM_MODELS = {"qwen3-32b": "/models/Qwen3-32B", "qwen3-8b": "Qwen/Qwen3-8B"}
    settings.JUDGE_MODEL = ""
    return settings.VLLM_MODELS


class LocalModelTests:
    def test_a_vllm_judge_names_a_configured_model_and_the_worker_loads_its_source(
        self, researcher_project, local_models
    ):
        project, _ = researcher_project
        judge, _ = judge_get_or_create(project=project, backend="vllm", model="qwen3-32b")
        assert judge.model == "qwen3-32b" and local_model_source(judge.model) == "/models/Qwen3-32B"

    @pytest.mark.parametrize("model", NOT_CONFIGURED)
    def test_a_path_or_repository_is_refused_by_the_service(self, researcher_project, local_models, model):
        project, _ = researcher_project
        with pytest.raises(JudgeInvalid) as caught:
            judge_get_or_create(project=project, backend="vllm", model=model)
        if model:
            assert caught.value.message == UNKNOWN_MODEL.format(name=model, backend="vllm", known="qwen3-32b, qwen3-8b")
        assert not Judge.objects.exists()

    def test_without_configured_models_the_message_says_what_to_set(self, researcher_project, settings):
        project, _ = researcher_project
        settings.VLLM_MODELS = {}
        with pytest.raises(JudgeInvalid, match="none \\(set CONCORD_VLLM_MODELS\\)"):
            judge_get_or_create(project=project, backend="vllm", model="Qwen/Qwen3-8B")

    def test_the_openai_backend_still_takes_the_server_s_model_name(self, researcher_project, local_models):
        project, _ = researcher_project
        judge, _ = judge_get_or_create(project=project, backend="openai", model="Qwen/Qwen3-32B")
        assert judge.model == "Qwen/Qwen3-32B"  # a name the configured server answers to, never loaded here

    def test_the_api_refuses_a_path_with_a_400_and_stores_nothing(self, researcher_project, local_models):
        _, user = researcher_project
        response = client_for(user).post(
            "/api/projects/mine/runs/", {"backend": "vllm", "model": "/etc"}, format="json"
        )
        assert response.status_code == 400 and "unknown model '/etc'" in response.json()["detail"]
        assert not Judge.objects.exists()

    def test_the_judge_form_refuses_a_path_naming_the_configured_models(self, client, researcher_project, local_models):
        _, user = researcher_project
        client.force_login(user)
        form = {"backend": "vllm", "model": "../../etc", "temperature": "0", "max_tokens": "10", "seed": "1"}
        response = client.post(reverse("judge_new", args=["mine"]), form)
        page = response.content.decode()
        assert response.status_code == 400 and "unknown model &#x27;../../etc&#x27;" in page and "qwen3-32b" in page
        assert "/models/Qwen3-32B" not in page  # names only: paths stay with the operator
        assert not Judge.objects.exists()

    def test_the_command_refuses_a_path(self, researcher_project, local_models):
        with pytest.raises(CommandError, match="unknown model '/etc'"):
            call_command("run_judge", "mine", "--backend", "vllm", "--model", "/etc")
        assert not Judge.objects.exists()

    def test_a_generation_run_refuses_a_path(self, make_project, local_models, tmp_path):
        project = make_project("copa_likert", slug="gen")
        source = tmp_path / "threads.jsonl"
        source.write_text("{}\n", encoding="utf-8")
        with pytest.raises(JudgeInvalid, match="unknown model '/etc'"):
            generation_run_start(project=project, step="copa_profile", path=source, backend="vllm", model="/etc")
        assert not GenerationRun.objects.exists()

    def test_malformed_model_configuration_is_named_and_stops_start_up(self, settings):
        models = {"bad name": "/m", "empty": "", "ok": "/models/ok"}
        assert local_model_problems(models) == [
            "model name 'bad name' must be 1-200 letters, digits, '.', '_', '-' or '/'",
            "model 'empty': expected the path or repository to load, as a non-empty string",
        ]
        settings.VLLM_MODELS = models
        assert [error.id for error in check_local_models(None)] == ["judges.E002", "judges.E002"]


@pytest.mark.django_db(transaction=True)
class MigrationTests:
    def test_judges_move_to_their_projects_and_keep_their_results(self):
        """A judge run on two projects becomes one judge per project; nothing points at a URL any more."""
        executor = MigrationExecutor(connection)
        executor.migrate([("judges", "0001_initial"), ("annotation", "0005_idempotency_key_per_rater")])
        old = executor.loader.project_state([("judges", "0001_initial")]).apps
        Project, Item = old.get_model("annotation", "Project"), old.get_model("annotation", "Item")
        Judge_, Run, Suggestion = (old.get_model("judges", name) for name in ("Judge", "JudgeRun", "Suggestion"))
        projects = [Project.objects.create(slug=f"p{n}", kind="copa_likert", title="") for n in range(2)]
        items = [Item.objects.create(project=p, external_id="i", payload={}) for p in projects]
        shared = Judge_.objects.create(
            name="j", kind="copa_likert", backend="openai", model="m", base_url="http://evil.test/v1",
            api_key_env="SECRET_KEY", prompt_name="copa_likert_evaluation", prompt_version=1, fingerprint="f",
        )  # fmt: skip
        Judge_.objects.create(
            name="unused", kind="copa_likert", backend="baseline", prompt_name="copa_jaccard", prompt_version=1,
            fingerprint="g",
        )  # fmt: skip
        for project, item in zip(projects, items, strict=True):
            run = Run.objects.create(judge=shared, project=project)
            Suggestion.objects.create(judge=shared, run=run, item=item, prompt_sha256="h", status="ok", value={})
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        judges = list(Judge.objects.order_by("project__slug").values_list("project__slug", "endpoint", "name"))
        assert judges == [("p0", "legacy", "j"), ("p1", "legacy", "j")]
        for judge in Judge.objects.all():
            assert list(judge.runs.values_list("project_id", flat=True)) == [judge.project_id]
            assert list(judge.suggestions.values_list("item__project_id", flat=True)) == [judge.project_id]
