"""A researcher plans a validation sample at three targets on the Estimates page, and mistypes a strata
field on the Validation sample page: the draw is refused and nothing is stored; a draw nobody has
labelled is then discarded from the page."""

import os

import pytest

from annotation.models import Role, SampleDraw, ValidationSample
from annotation.services import membership_add
from judges.services import judge_get_or_create, judge_run_start
from tests.validation.conftest import add_items, annotate, copa_value, suggest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


@pytest.fixture
def study(make_project, make_user):
    """40 CoPA responses a run scored, 20 of them rated by one annotator."""
    project = make_project("copa_likert")
    items = add_items(project, [f"r{n:02d}" for n in range(40)])
    judge, _ = judge_get_or_create(project=project, backend="openai", name="", prompt="", seed=42, model="test-llm-7b")
    run = judge_run_start(judge=judge, project=project)
    for n, item in enumerate(items.values()):
        suggest(run, item, copa_value(min(2, n % 3 + 1)))
        if n % 2:
            annotate(project, item, "ann", copa_value(n % 3))
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    return project, run


def plan_at(page, live_server, project, run, half_width: str) -> str:
    page.goto(f"{live_server.url}/p/{project.slug}/estimates/")
    page.select_option("#id_run", str(run.pk))
    page.fill("#id_half_width", half_width)
    page.get_by_role("button", name="Estimate").click()
    page.wait_for_selector("#plan-heading")
    return page.inner_text("section[aria-labelledby=plan-heading]")


def test_the_planner_reaches_each_target_or_says_it_cannot(page, live_server, sign_in, study):
    project, run = study
    sign_in(page, "res")
    api = f"{live_server.url}/api/projects/{project.slug}/sample/plan/?run={run.pk}&half_width="

    loose = plan_at(page, live_server, project, run, "0.4")
    assert "The 20 labels you have reach this half-width with the model." in loose
    assert page.get_by_role("button", name="more").count() == 0
    assert page.request.get(api + "0.4").json()["prediction_powered_n"] == 7

    middle = plan_at(page, live_server, project, run, "0.28")
    assert page.inner_text("#plan-powered") == "24"
    assert "Draw 4 more" in middle
    shot(page, "planner-reachable")
    # Where the model does not narrow the interval, the page says so above the table.
    assert "report the people-only figure" in page.inner_text("#estimate-warnings")
    page.get_by_role("button", name="Draw 4 more").click()
    assert page.input_value("#id_n") == "4"

    tight = plan_at(page, live_server, project, run, "0.1")
    assert page.inner_text("#plan-powered") == "Not reachable within 40 items"
    assert "not reachable within the 40 items the run answered" in page.inner_text("#plan-note")
    assert page.get_by_role("button", name="more").count() == 0 and "Draw" not in tight
    shot(page, "planner-not-reachable")
    answer = page.request.get(api + "0.1").json()
    assert answer["prediction_powered_n"] is None and answer["prediction_powered_reason"].startswith("not reachable")


def test_a_mistyped_strata_field_is_refused_and_a_fresh_draw_can_be_discarded(
    page, live_server, sign_in, make_project, make_user
):
    project = make_project("copa_likert")
    add_items(project, [f"r{n:02d}" for n in range(40)])
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/sample/")
    page.fill("#id_n", "10")
    page.fill("#id_strata", "meta.nonexistent")
    page.fill("#id_seed", "1")
    page.get_by_role("button", name="Draw").click()
    refusal = page.inner_text("#sample-errors")
    assert "Nothing drawn" in refusal and "no item of the project has 'meta.nonexistent'" in refusal
    shot(page, "sample-strata-typo")
    assert not ValidationSample.objects.exists() and not SampleDraw.objects.exists()

    page.fill("#id_strata", "response_source")
    page.get_by_role("button", name="Draw").click()
    page.wait_for_selector("#draws")
    assert SampleDraw.objects.count() == 1
    page.get_by_role("button", name="Discard draw 1").click()
    page.wait_for_selector("text=Draw 1 discarded")
    assert not ValidationSample.objects.exists()
    assert "No sample yet" in page.inner_text("section[aria-labelledby=sample-heading]")
