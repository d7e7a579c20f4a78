"""Pages stay current after background work, without a reload: when a job the page watches ends, every
part of the page that depends on it is fetched again (annotation/job_events.py).

The job runs in the test, in-process, while the researcher's page polls, as a worker would run it; a
marker set in the page before the job ends must still be there after (no navigation happened)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import import_job_create, membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from annotation.tasks import import_job_task
from judges.execution import JUDGE_RUNS
from judges.services import judge_get_or_create, judge_run_start
from judges.tasks import run_dispatch
from tests.browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ITEMS = 6
#: A busy machine: polls every second, then the dependent parts load.
TIMEOUT_MS = 30_000


def mark_page(page) -> None:
    page.evaluate("() => { window.concordNoReload = true; }")


def not_reloaded(page) -> bool:
    return page.evaluate("() => window.concordNoReload === true")


def records_file(tmp_path, kind: str, n: int):
    return write_jsonl(tmp_path / "items.jsonl", synthetic_records(get_kind(kind), n))


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", overlap=1)
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    return project


def test_after_an_import_the_counts_and_the_checklist_update_and_the_file_input_is_cleared(
    page, live_server, sign_in, study, tmp_path
):
    page.set_default_timeout(TIMEOUT_MS)
    path = records_file(tmp_path, "copa_likert", ITEMS)
    job = import_job_create(
        project=study, target="items", uploaded=SimpleUploadedFile("items.jsonl", path.read_bytes()), user=None
    )
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{study.slug}/")
    assert page.inner_text("#project-stats dd >> nth=0") == "0"
    mark_page(page)
    import_job_task(job.pk)  # the worker's part, while the page polls
    page.locator("#project-stats dd >> nth=0").filter(has_text=str(ITEMS)).wait_for()
    page.locator('[data-step="items"].step-done').wait_for()
    assert f"{ITEMS} items" in page.inner_text('[data-step="items"]')
    assert not_reloaded(page)

    # An upload from the page: the new items are counted and the file input holds nothing afterwards.
    more = write_jsonl(tmp_path / "more.jsonl", list(synthetic_records(get_kind("copa_likert"), ITEMS + 3))[ITEMS:])
    page.set_input_files("#import-form input[type=file]", str(more))
    page.get_by_role("button", name="Upload and import").click()
    page.locator("#project-stats dd >> nth=0").filter(has_text=str(ITEMS + 3)).wait_for()
    assert page.eval_on_selector("#import-form input[type=file]", "input => input.files.length") == 0
    assert not_reloaded(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "stays-current-project.png"), full_page=True)


def test_after_a_judge_run_finishes_its_results_show_beside_done(page, live_server, sign_in, study, tmp_path):
    page.set_default_timeout(TIMEOUT_MS)
    from annotation.importing import import_items

    import_items(project=study, path=records_file(tmp_path, "copa_likert", ITEMS))
    judge, _ = judge_get_or_create(project=study, backend="baseline")
    run = judge_run_start(judge=judge, project=study)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{study.slug}/judges/runs/{run.pk}/")
    assert "per item (0)" in page.inner_text("#items-heading")
    mark_page(page)
    run_dispatch(run_type=JUDGE_RUNS, run_id=run.pk)  # tasks run in-process in tests: the run is done on return
    page.get_by_text(f"{ITEMS} / {ITEMS} done").wait_for()
    page.locator("#items-heading").filter(has_text=f"per item ({ITEMS})").wait_for()
    assert page.locator("#run-items tbody tr").count() == ITEMS
    assert re.search(r"Finished", page.inner_text("#run-stats"))
    assert not_reloaded(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "stays-current-run.png"), full_page=True)
