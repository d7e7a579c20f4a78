"""Every estimate and planner parameter is checked by name: a 400 naming it on the API (an empty
value too, never read as the default), a usage error (exit 2) from the commands; nothing is a 500."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Role
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation.estimates.build import BAD_ALPHA
from validation.estimates.planning import BAD_CORRELATION, BAD_HALF_WIDTH, BAD_SD, BAD_SHARE

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled_run(make_project, make_user, judge_run):
    """A run with enough labelled items that the planner does not need stated values."""
    project = make_project("copa_likert")
    items = add_items(project, [f"r{n:02d}" for n in range(12)])
    run = judge_run(project)
    for n, item in enumerate(items.values()):
        suggest(run, item, copa_value(min(2, n % 3 + 1)))
        annotate(project, item, "ann", copa_value(n % 3))
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    return project, run, researcher


BAD_ESTIMATE_QUERIES = [
    ({"alpha": "1e-320"}, "alpha"),
    ({"alpha": ""}, "alpha"),
    ({"alpha": "0"}, "alpha"),
    ({"alpha": "0.5"}, "alpha"),
    ({"alpha": "nan"}, "alpha"),
]
BAD_PLAN_QUERIES = [
    *BAD_ESTIMATE_QUERIES,
    ({"half_width": "inf"}, "half_width"),
    ({"half_width": ""}, "half_width"),
    ({"sd": "nan"}, "sd"),
    ({"sd": "-1"}, "sd"),
    ({"sd": ""}, "sd"),
    ({"share": "2"}, "share"),
    ({"share": "0"}, "share"),
    ({"correlation": "nan"}, "correlation"),
]


class ApiTests:
    @pytest.mark.parametrize(("query", "field"), BAD_ESTIMATE_QUERIES)
    def test_estimates_refuse_a_bad_parameter_by_name(self, labelled_run, query, field):
        project, run, researcher = labelled_run
        response = client_for(researcher).get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk, **query})
        assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
        assert field in {error["field"] for error in response.json()["errors"]}

    @pytest.mark.parametrize(("query", "field"), BAD_PLAN_QUERIES)
    def test_the_planner_refuses_a_bad_parameter_by_name(self, labelled_run, query, field):
        project, run, researcher = labelled_run
        response = client_for(researcher).get(
            f"/api/projects/{project.slug}/sample/plan/", {"run": run.pk, "half_width": "0.2", **query}
        )
        assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
        assert field in {error["field"] for error in response.json()["errors"]}

    def test_good_parameters_still_answer(self, labelled_run):
        project, run, researcher = labelled_run
        client = client_for(researcher)
        estimates = client.get(f"/api/projects/{project.slug}/estimates/", {"run": run.pk, "alpha": "1e-10"})
        assert estimates.status_code == 200
        plan = client.get(f"/api/projects/{project.slug}/sample/plan/", {"run": run.pk, "half_width": "0.2"})
        assert plan.status_code == 200 and plan.json()["alpha"] == 0.05


class CommandTests:
    @pytest.mark.parametrize(
        ("options", "message"),
        [
            (["--sd", "nan"], BAD_SD),
            (["--sd", "inf"], BAD_SD),
            (["--share", "2"], BAD_SHARE),
            (["--correlation", "3"], BAD_CORRELATION),
            (["--alpha", "1e-320"], BAD_ALPHA),
            (["--half-width", "nan"], BAD_HALF_WIDTH),
        ],
    )
    def test_plan_sample_refuses_a_bad_value_as_a_usage_error(self, labelled_run, options, message):
        project, run, _ = labelled_run
        args = [project.slug, "--run", str(run.pk), "--half-width", "0.2", *options]
        with pytest.raises(CommandError) as refused:
            call_command("plan_sample", *args, stdout=io.StringIO())
        assert str(refused.value) == f"Error: argument {options[0]}: {message}"  # argparse's usage error

    @pytest.mark.parametrize("alpha", ["1e-320", "nan", "0.5", ""])
    def test_estimate_refuses_a_bad_alpha_as_a_usage_error(self, labelled_run, alpha):
        project, run, _ = labelled_run
        with pytest.raises(CommandError) as refused:
            call_command("estimate", project.slug, "--run", str(run.pk), "--alpha", alpha, stdout=io.StringIO())
        assert str(refused.value).startswith("Error: argument --alpha: ")

    def test_from_the_command_line_a_bad_value_exits_2(self):
        done = subprocess.run(
            [sys.executable, "manage.py", "plan_sample", "any", "--run", "1", "--half-width", "0.2", "--sd", "nan"],
            capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[3],
        )  # fmt: skip
        assert done.returncode == 2 and BAD_SD in done.stderr
