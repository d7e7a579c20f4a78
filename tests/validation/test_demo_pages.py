"""Every demo project works with every page of its kind: once people have answered and a baseline has
run, its agreement report and each paper evaluation of its kind show numbers, not empty tables."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.demo import PROJECTS, demo_load
from annotation.models import Annotation, Project
from judges.execution import judge_chunk_process
from judges.services import judge_get_or_create, judge_run_start
from validation.evaluations.forms import RunsForm
from validation.evaluations.registry import paper_evaluations
from validation.kinds.copa_likert.copa_report import copa_pairs
from validation.reports import ReportParameters
from validation.selectors import project_report

pytestmark = pytest.mark.django_db


def _numbers(tables) -> int:
    """How many cells of these tables hold a value."""
    return sum(1 for table in tables for row in table.rows for cell in row.cells if cell.value is not None)


@pytest.fixture
def demo(client):
    demo_load()
    projects = {spec.kind: Project.objects.get(slug=spec.slug) for spec in PROJECTS}
    runs = {}
    for kind, project in projects.items():
        example = project.task_kind.example_value()
        items = list(project.items.order_by("pk")[:8])
        rows = [
            Annotation(project=project, item=item, rater=rater, version=1, value=example)
            for item in items
            for rater in ("annotator1", "annotator2")
        ]
        Annotation.objects.bulk_create(rows)
        try:
            judge, _ = judge_get_or_create(project=project, backend="baseline")
        except Exception:  # noqa: BLE001 - a kind without a baseline has no run to compare with
            continue
        run = judge_run_start(judge=judge, project=project)
        for chunk_id in run.chunks.values_list("pk", flat=True):
            judge_chunk_process(chunk_id=chunk_id)
        runs[kind] = run
    client.force_login(get_user_model().objects.get(username="researcher"))
    return projects, runs


class DemoPagesTests:
    def test_every_demo_projects_report_shows_numbers(self, demo, client):
        projects, runs = demo
        for kind, project in projects.items():
            query = {"bootstrap": 0, **({"judge": runs[kind].pk} if kind in runs else {})}
            page = client.get(reverse("report", args=[project.slug]), query, HTTP_HX_REQUEST="true")
            assert page.status_code == 200 and "Inputs SHA-256" in page.content.decode(), kind
            report = project_report(
                project=project, parameters=ReportParameters(bootstrap=0, judge_run_id=query.get("judge"))
            )
            item = project.items.order_by("pk").first()
            if list(project.task_kind.value_ratings(project.task_kind.example_value(), item.payload)):
                # The answers rate something (a statement kind's first answers are drafts, not ratings).
                assert report.n_units > 0 and len(report.human_raters) == 2, kind
            assert _numbers(report.tables) > 0, kind

    def test_every_evaluation_of_a_demo_projects_kind_has_results(self, demo):
        projects, runs = demo
        # Each kind's evaluations of the project's own judge runs (IPQA-Eval reads runs over a match project).
        declared = [e for e in paper_evaluations().values() if e.kind and e.form and issubclass(e.form, RunsForm)]
        assert declared, "the paper evaluations are registered"
        for evaluation in declared:
            project = projects[evaluation.kind]
            assert evaluation.kind in runs, f"the {evaluation.kind} demo has a baseline to evaluate ({evaluation.name})"
            defaults = {name: f.initial for name, f in evaluation.form.base_fields.items() if f.initial is not None}
            data = {**defaults, "run": [runs[evaluation.kind].pk], "bootstrap": 20}
            form = evaluation.form(data, project=project)
            assert form.is_valid(), (evaluation.name, form.errors)
            result = evaluation.evaluate(project=project, parameters=form.parameters())
            assert _numbers(result.tables) > 0, evaluation.name

    def test_the_copa_demo_pairs_every_question(self, demo):
        projects, _ = demo
        pairs = copa_pairs(projects["copa_likert"])
        questions = {item.payload["pair_id"] for item in projects["copa_likert"].items.all()}
        assert len(pairs.pairs) == len(questions) > 0 and not pairs.incomplete
