"""The Validation sample and Estimates pages: who may use them, what they show, refusals that store nothing."""

import pytest

from annotation.models import Role, SampleDraw
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation.models import ReportSnapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(make_project, make_user, judge_run):
    project = make_project("copa_likert")
    items = add_items(project, [f"r{n:02d}" for n in range(40)])
    run = judge_run(project)
    for n, item in enumerate(items.values()):
        suggest(run, item, copa_value(min(2, n % 3 + 1)))
        if n % 2:
            annotate(project, item, "ann", copa_value(n % 3))
    people = {}
    for name, role in (("res", Role.RESEARCHER), ("exp", Role.EXPERT), ("ann", Role.ANNOTATOR)):
        people[name] = make_user(name)
        membership_add(project=project, user=people[name], role=role)
    return project, run, people


class ValidationSamplePageTests:
    def test_a_researcher_draws_from_the_page(self, setup, client):
        project, _run, people = setup
        client.force_login(people["res"])
        assert client.get(f"/p/{project.slug}/sample/").status_code == 200
        response = client.post(f"/p/{project.slug}/sample/", {"n": 10, "seed": 3, "allocation": "proportional"})
        assert response.status_code == 302 and SampleDraw.objects.get().drawn == 10
        page = client.get(f"/p/{project.slug}/sample/").content.decode()
        assert "Sample (10 items, 1 draw)" in page and "0.2500" in page

    def test_an_annotators_crafted_draw_is_refused_and_stores_nothing(self, setup, client):
        project, _run, people = setup
        client.force_login(people["ann"])
        response = client.post(f"/p/{project.slug}/sample/", {"n": 10, "seed": 3, "allocation": "proportional"})
        assert response.status_code == 403 and not SampleDraw.objects.exists()

    def test_a_bad_draw_is_a_400_with_the_reason(self, setup, client):
        project, _run, people = setup
        client.force_login(people["res"])
        response = client.post(
            f"/p/{project.slug}/sample/", {"n": 5, "fraction": 0.5, "seed": 1, "allocation": "equal"}
        )
        assert response.status_code == 400 and "not both" in response.content.decode()
        assert not SampleDraw.objects.exists()


class EstimatesPageTests:
    def test_the_page_shows_the_three_estimates_the_warning_and_the_plot(self, setup, client):
        project, run, people = setup
        client.force_login(people["exp"])
        response = client.get(f"/p/{project.slug}/estimates/", {"run": run.pk, "alpha": 0.05, "truth": "mean"})
        page = response.content.decode()
        assert response.status_code == 200
        assert "Prediction-powered" in page and "uniform random sample" in page and "data:image/svg+xml" in page

    def test_the_planner_offers_to_draw_more(self, setup, client):
        project, run, people = setup
        client.force_login(people["res"])
        query = {"run": run.pk, "alpha": 0.05, "truth": "mean", "half_width": 0.28}
        page = client.get(f"/p/{project.slug}/estimates/", query).content.decode()
        assert "Planner" in page and "Draw 4 more</button>" in page

    def test_an_annotator_cannot_read_it_and_an_expert_cannot_freeze(self, setup, client):
        project, run, people = setup
        client.force_login(people["ann"])
        assert client.get(f"/p/{project.slug}/estimates/", {"run": run.pk}).status_code == 403
        client.force_login(people["exp"])
        form = {"run": run.pk, "alpha": 0.05, "truth": "mean"}
        assert client.post(f"/p/{project.slug}/estimates/freeze/", form).status_code == 403
        assert not ReportSnapshot.objects.exists()
        client.force_login(people["res"])
        assert client.post(f"/p/{project.slug}/estimates/freeze/", form).status_code == 302
        assert ReportSnapshot.objects.get().evaluation == "estimates"

    def test_a_bad_alpha_is_a_400(self, setup, client):
        project, run, people = setup
        client.force_login(people["res"])
        response = client.get(f"/p/{project.slug}/estimates/", {"run": run.pk, "alpha": 0.9, "truth": "mean"})
        assert response.status_code == 400

    def test_the_agreement_report_with_a_judge_shows_the_forest_plot(self, setup, client):
        project, run, people = setup
        client.force_login(people["res"])
        page = client.get(f"/p/{project.slug}/report/", {"judge": run.pk, "now": 1}).content.decode()
        assert 'id="estimates-heading"' in page

    def test_a_link_naming_only_the_run_uses_the_defaults(self, setup, client):
        project, run, people = setup
        client.force_login(people["res"])
        response = client.get(f"/p/{project.slug}/estimates/", {"run": run.pk})
        assert response.status_code == 200 and "95% interval" in response.content.decode()
