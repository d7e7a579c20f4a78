"""The evaluation pages: who may read and freeze them, and what they show."""

from __future__ import annotations

import shutil

import pytest
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from tests.validation.conftest import suggest
from tests.validation.evaluations.test_commands import assert_pdflatex_compiles, assert_well_formed_booktabs
from validation.evaluations.base import render_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_create
from validation.kinds.copa_likert.copa_report import CopaEvalParameters, copa_evaluation
from validation.kinds.intent_mcq.mcq_report import McqEvalParameters, mcq_evaluation
from validation.models import ReportSnapshot

pytestmark = pytest.mark.django_db


def member(project, make_user, name, role):
    user = make_user(name)
    membership_add(project=project, user=user, role=role)
    return user


class EvaluationPageTests:
    def test_researchers_and_experts_read_annotators_are_refused(self, copa, make_user, client):
        project, _, llm, _ = copa
        url = reverse("evaluation", args=[project.slug, "copa"]) + f"?run={llm.pk}&bootstrap=50"
        for name, role, status in (("r", Role.RESEARCHER, 200), ("e", Role.EXPERT, 200), ("a", Role.ANNOTATOR, 403)):
            client.force_login(member(project, make_user, name, role))
            response = client.get(url)
            assert response.status_code == status, name
            if status == 200:
                assert "Comparison of evaluation methodologies (CoPA Table 3)" in response.content.decode()

    def test_an_expert_cannot_freeze_by_crafting_the_post(self, copa, make_user, client):
        project, _, llm, _ = copa
        client.force_login(member(project, make_user, "e", Role.EXPERT))
        response = client.post(reverse("evaluation_freeze", args=[project.slug, "copa"]), {"run": llm.pk})
        assert response.status_code == 403 and not ReportSnapshot.objects.exists()

    def test_a_researcher_freezes_and_the_snapshot_page_checks_it(self, copa, make_user, client):
        project, _, llm, _ = copa
        client.force_login(member(project, make_user, "r", Role.RESEARCHER))
        response = client.post(
            reverse("evaluation_freeze", args=[project.slug, "copa"]), {"run": llm.pk, "bootstrap": 20, "title": "t"}
        )
        snapshot = ReportSnapshot.objects.get()
        assert response.status_code == 302 and snapshot.evaluation == "copa_eval" and snapshot.title == "t"
        assert client.get(response.url).status_code == 200
        client.post(reverse("report_snapshot_check", args=[project.slug, snapshot.pk]))
        check = snapshot.checks.get()
        assert check.numbers_match and check.inputs_match and not check.error

    def test_a_page_refuses_more_resamples_than_a_request_computes(self, copa, make_user, client, settings):
        project, _, llm, _ = copa
        settings.CONCORD_REQUEST_BOOTSTRAP_MAX = 100
        client.force_login(member(project, make_user, "r", Role.RESEARCHER))
        url = reverse("evaluation_download", args=[project.slug, "copa", "latex"])
        assert client.get(url, {"run": llm.pk, "bootstrap": 101}).status_code == 400
        response = client.get(url, {"run": llm.pk, "bootstrap": 100})
        assert response.status_code == 200 and response["Content-Type"].startswith("application/x-tex")

    def test_the_evaluation_of_another_kind_is_not_found(self, copa, make_user, client):
        project, _, _, _ = copa
        client.force_login(member(project, make_user, "r", Role.RESEARCHER))
        assert client.get(reverse("evaluation", args=[project.slug, "mcq"])).status_code == 404


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_tables_compile_with_booktabs(copa, tmp_path):
    project, _, llm, baseline = copa
    evaluation = copa_evaluation(
        project=project, parameters=CopaEvalParameters(runs=(llm.pk, baseline.pk), bootstrap=50)
    )
    snapshot = evaluation_snapshot_create(project=project, evaluation=evaluation)
    assert_well_formed_booktabs(snapshot.latex)
    assert_pdflatex_compiles(snapshot.latex, tmp_path)


def test_the_mcq_page_shows_the_error_bar_plot_and_takes_the_std(mcq, make_user, client):
    project, plain, shuffled = mcq
    client.force_login(member(project, make_user, "r", Role.RESEARCHER))
    url = reverse("evaluation", args=[project.slug, "mcq"])
    page = client.get(url, {"run": [plain.pk, shuffled.pk], "std": "population"}).content.decode()
    assert 'src="data:image/svg+xml;base64,' in page and "2-sigma error bars" in page
    assert "Population std (ddof 0) over runs" in page
    assert client.get(url, {"run": [plain.pk], "std": "both"}).status_code == 400


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_mcq_latex_tables_compile_with_booktabs(mcq, judge_run, tmp_path):
    project, plain, shuffled = mcq
    guess = judge_run(project, backend="baseline", seed=42)  # a second model: the per-model tables too
    for item in project.items.all():
        suggest(guess, item, {"chosen": [0]})
    evaluation = mcq_evaluation(
        project=project, parameters=McqEvalParameters(runs=(plain.pk, shuffled.pk, guess.pk), std="population")
    )
    assert {"mcq_models", "mcq_models_by_domain", "mcq_error_bars"} <= {t.key for t in evaluation.tables}
    latex = render_evaluation(evaluation, "latex")
    assert_well_formed_booktabs(latex)
    assert_pdflatex_compiles(latex, tmp_path)
