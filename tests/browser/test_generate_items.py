"""A researcher generates items from the Generate items page with a step's own option, watches the run
finish, cancels and resumes one; the option fields come from the steps the kind's folder declares."""

import os

import pytest

from annotation.models import Item, Role
from annotation.services import membership_add
from judges.generation.services import generation_run_start
from judges.models import GenerationRun
from tests.judges.generation.conftest import write_threads

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
#: Where to leave screenshots of the pages (a folder; unset: none are taken).
SHOTS = os.environ.get("CONCORD_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_generate_items_with_a_step_option_from_the_page(page, live_server, sign_in, make_project, make_user, tmp_path):
    project = make_project("copa_likert")
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    source = write_threads(tmp_path / "threads.jsonl", 2)

    page.set_default_timeout(30_000)  # an upload and a run on a busy machine
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/generate/")
    page.set_input_files("#id_source", str(source))
    page.select_option("#id_backend", "baseline")
    page.select_option("#id_option_profile_from", "current")
    shot(page, "generate-form")
    page.get_by_role("button", name="Start generation").click()
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/generate/*/")
    run = GenerationRun.objects.get()
    assert run.options == {"profile_from": "current"}
    assert "2 / 2 records" in page.inner_text(f"#generation-progress-{run.pk}")
    assert "4 items created" in page.inner_text(f"#generation-progress-{run.pk}")
    assert Item.objects.filter(project=project, external_id__endswith=":current:accepted").count() == 2
    shot(page, "generate-run")


def test_cancel_and_resume_a_generation_run_from_its_page(
    page, live_server, sign_in, make_project, make_user, tmp_path
):
    project = make_project("ipqa_core_intent")
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    run = generation_run_start(
        project=project, step="ipqa_intents", path=write_threads(tmp_path / "t.jsonl", 3), backend="baseline"
    )

    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/generate/{run.pk}/")
    page.get_by_role("button", name="Cancel run").click()
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/generate/{run.pk}/")
    assert "Cancelled" in page.inner_text(f"#generation-progress-{run.pk}")
    page.get_by_role("button", name="Resume run").click()
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/generate/{run.pk}/")
    # The resumed run's chunks ran in-process on commit: the page shows it finished.
    page.reload()
    assert "3 items created" in page.inner_text(f"#generation-progress-{run.pk}")
    shot(page, "generate-run-resumed")


def test_the_checklist_offers_generate_items_only_where_a_step_makes_the_kind(
    page, live_server, sign_in, make_project, make_user
):
    researcher = make_user("res")
    makes, cannot = make_project("copa_likert", slug="makes"), make_project("intent_mcq", slug="cannot")
    for project in (makes, cannot):
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/makes/")
    assert page.locator("a[href='/p/makes/generate/']").count() >= 1
    page.goto(f"{live_server.url}/p/cannot/")
    assert page.locator("a[href='/p/cannot/generate/']").count() == 0
