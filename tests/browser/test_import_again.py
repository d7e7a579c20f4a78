"""A researcher uploads a grown items file again from the project page, choosing to skip the items
already there, and reads the counts, who imported it and when, in the import history."""

import json

import pytest

from annotation.kinds import get_kind
from annotation.models import ImportJob, Item, Role
from annotation.synthetic import synthetic_records
from tests.browser.test_run_import import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_upload_again_skipping_existing_items(page, live_server, sign_in, one_item_project, tmp_path):
    project = one_item_project("copa_likert", annotators=("res",), role=Role.RESEARCHER)
    grown = tmp_path / "items-grown.jsonl"
    grown.write_text("".join(json.dumps(r) + "\n" for r in synthetic_records(get_kind("copa_likert"), 3)))

    page.set_default_timeout(30_000)  # an upload and an import on a busy machine
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.set_input_files("#import-form input[type=file]", str(grown))
    page.get_by_label("Skip existing items").check()
    page.get_by_role("button", name="Upload and import").click()
    job_line = page.locator("#import-jobs li").first
    job_line.filter(has_text="1 skipped").wait_for()
    text = job_line.inner_text()
    assert "items-grown.jsonl" in text and "2 imported, 1 skipped, 0 updated" in text
    assert "by res" in text and "existing items: skip" in text
    shot(page, "import-again-skip")
    assert Item.objects.filter(project=project).count() == 3
    assert ImportJob.objects.get(filename="items-grown.jsonl").created_by.username == "res"
