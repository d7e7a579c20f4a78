"""The validation sample, estimates and planner over the API: researchers only, bad input a 400."""

import pytest

from annotation.models import Role, SampleDraw
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.conftest import add_items, annotate, copa_value, suggest

pytestmark = pytest.mark.django_db


@pytest.fixture
def project_with_run(make_project, make_user, judge_run):
    project = make_project("copa_likert")
    items = add_items(project, [f"r{n:02d}" for n in range(30)])
    run = judge_run(project)
    for n, item in enumerate(items.values()):
        suggest(run, item, copa_value(min(2, n % 3 + 1)))
    researcher, annotator = make_user("res"), make_user("ann")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
    return project, run, items, researcher, annotator


class ValidationSampleApiTests:
    def test_a_researcher_draws_and_reads_the_sample(self, project_with_run):
        project, _run, _items, researcher, _ = project_with_run
        client = client_for(researcher)
        response = client.post(f"/api/projects/{project.slug}/sample/", {"n": 8, "seed": 2}, format="json")
        assert response.status_code == 201 and response.json()["drawn"] == 8
        assert response.json()["created_by"] == "res"
        listed = client.get(f"/api/projects/{project.slug}/sample/").json()
        assert [d["draw"] for d in listed["draws"]] == [1]

    def test_an_annotator_cannot_draw(self, project_with_run):
        project, _run, _items, _, annotator = project_with_run
        response = client_for(annotator).post(f"/api/projects/{project.slug}/sample/", {"n": 8, "seed": 2})
        assert response.status_code == 403 and not SampleDraw.objects.exists()

    def test_a_bad_draw_is_a_400_naming_the_field_and_stores_nothing(self, project_with_run):
        project, _run, _items, researcher, _ = project_with_run
        response = client_for(researcher).post(
            f"/api/projects/{project.slug}/sample/", {"fraction": 3, "seed": 1}, format="json"
        )
        assert response.status_code == 400 and "fraction" in response.content.decode()
        assert not SampleDraw.objects.exists()


class EstimateApiTests:
    def test_estimates_have_the_command_shape(self, project_with_run):
        project, run, items, researcher, _ = project_with_run
        for n, item in enumerate(items.values()):
            if n % 2:
                annotate(project, item, "ann", copa_value(n % 3))
        response = client_for(researcher).get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk})
        assert response.status_code == 200
        body = response.json()
        assert body["n_labeled"] == 15 and body["sampled_by_concord"] is False
        assert body["estimates"][0]["prediction_powered"]["lambda"] is not None

    def test_a_bad_alpha_or_unknown_run_is_a_400(self, project_with_run):
        project, run, _items, researcher, _ = project_with_run
        client = client_for(researcher)
        assert client.get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk, "alpha": 2}).status_code == 400
        assert client.get(f"/api/projects/{project.slug}/estimates/", {"run": 999999}).status_code == 400
        typo = client.get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk, "by": "meta.nonexistent"})
        assert typo.status_code == 400 and "no item of the project has 'meta.nonexistent'" in typo.content.decode()
        off = client.get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk, "fpc": "false"})
        assert off.status_code == 200 and off.json()["fpc"] is False

    def test_the_plan_with_stated_values(self, project_with_run):
        project, run, _items, researcher, _ = project_with_run
        response = client_for(researcher).get(
            f"/api/projects/{project.slug}/sample/plan/",
            {"run": run.pk, "half_width": 0.02, "sd": 0.5, "correlation": 0.8},
        )
        assert response.status_code == 200 and response.json()["people_only_n"] == 2401
