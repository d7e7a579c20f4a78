"""REST API for judge runs, agreement and gold: researchers only, and a bad request stores nothing."""

import pytest

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import annotation_submit, membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from judges.models import JudgeRun, Suggestion
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)
COPA = get_kind("copa_likert")


@pytest.fixture
def world(make_project, make_user, tmp_path):
    project = make_project("copa_likert", slug="main", overlap=2)
    make_project("copa_likert", slug="other")
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 4)))
    people = {name: make_user(name) for name in ("res", "ann", "stranger")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    return project, people


URLS = ["/api/projects/main/runs/", "/api/projects/main/agreement/", "/api/projects/main/gold/"]


class AccessTests:
    @pytest.mark.parametrize("url", URLS)
    def test_anonymous_outsider_and_annotator_are_refused(self, world, url):
        _, people = world
        assert client_for().get(url).status_code in (401, 403)
        assert client_for(people["stranger"]).get(url).status_code == 404
        assert client_for(people["ann"]).get(url).status_code == 403

    def test_starting_a_run_needs_a_researcher(self, world):
        _, people = world
        for who in (None, people["stranger"], people["ann"]):
            client_for(who).post("/api/projects/main/runs/", {"backend": "baseline"}, format="json")
        assert not JudgeRun.objects.exists()

    def test_run_detail_of_another_project_is_404(self, world):
        _, people = world
        run = client_for(people["res"]).post("/api/projects/main/runs/", {"backend": "baseline"}, format="json").json()
        assert client_for(people["stranger"]).get(f"/api/runs/{run['id']}/").status_code == 404
        assert client_for(people["ann"]).get(f"/api/runs/{run['id']}/").status_code == 403


class RunTests:
    def test_baseline_run_from_the_api(self, world):
        _, people = world
        client = client_for(people["res"])
        started = client.post("/api/projects/main/runs/", {"backend": "baseline"}, format="json")
        assert started.status_code == 201 and started.json()["backend"] == "baseline"
        detail = client.get(f"/api/runs/{started.json()['id']}/").json()
        assert (detail["status"], detail["ok"], detail["total"]) == ("completed", 4, 4)  # tasks run in-process here
        assert Suggestion.objects.filter(status="ok").count() == 4
        assert [run["id"] for run in client.get("/api/projects/main/runs/").json()] == [detail["id"]]

    def test_a_null_seed_starts_a_no_shuffle_run(self, world):
        _, people = world
        client = client_for(people["res"])
        started = client.post("/api/projects/main/runs/", {"backend": "baseline", "seed": None}, format="json")
        assert started.status_code == 201
        assert JudgeRun.objects.get(pk=started.json()["id"]).judge.seed is None
        default = client.post("/api/projects/main/runs/", {"backend": "baseline"}, format="json")
        assert JudgeRun.objects.get(pk=default.json()["id"]).judge.seed == 42

    def test_bad_run_request_is_400_and_stores_nothing(self, world):
        _, people = world
        response = client_for(people["res"]).post(
            "/api/projects/main/runs/", {"backend": "gpt", "temperature": 5}, format="json"
        )
        assert response.status_code == 400 and {e["field"] for e in response.json()["errors"]} == {
            "backend",
            "temperature",
        }
        assert not JudgeRun.objects.exists()


class AgreementAndGoldTests:
    def rate(self, project, people):
        for item in project.items.all():
            annotation_submit(item=item, user=people["res"], value=COPA.example_value())
            annotation_submit(item=item, user=people["ann"], value=COPA.example_value())

    def test_agreement_in_the_command_shape(self, world):
        project, people = world
        self.rate(project, people)
        body = client_for(people["res"]).get("/api/projects/main/agreement/").json()
        assert set(body["dimensions"]) == {"CT", "SA", "SC", "CLM", "MS", "AMR"}
        assert body["dimensions"]["CT"]["n_units"] == 4 and body["dimensions"]["CT"]["percent_agreement"] == 1.0

    def test_unknown_judge_run_is_400(self, world):
        _, people = world
        response = client_for(people["res"]).get("/api/projects/main/agreement/?judge_run=999")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "judge_run"

    def test_gold_download_and_bad_format(self, world):
        project, people = world
        self.rate(project, people)
        client = client_for(people["res"])
        response = client.get("/api/projects/main/gold/?format=jsonl&shape=benchmark")
        assert response.status_code == 200 and len(b"".join(response.streaming_content).splitlines()) == 4
        bad = client.get("/api/projects/main/gold/?format=xlsx")
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "format"
