"""A researcher imports a model's outputs from the LLM judges page and reads the run's provenance;
an annotator then sees the imported answer as the suggestion where the project shows suggestions."""

import json
import os

import pytest

from annotation.models import Item, Role
from judges.models import JudgeRun
from tests.browser.test_keyboard import open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
#: Where to leave screenshots of the pages (a folder; unset: none are taken).
SHOTS = os.environ.get("CONCORD_SCREENSHOTS", "")


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_import_a_run_from_the_page_and_annotate_with_its_suggestion(
    page, live_server, sign_in, one_item_project, make_user, tmp_path
):
    project = one_item_project("copa_likert", annotators=("res",), role=Role.RESEARCHER)
    project.suggestion_exposure = "shown"
    project.save(update_fields=["suggestion_exposure"])
    from annotation.services import membership_add

    membership_add(project=project, user=make_user("ann1"), role=Role.ANNOTATOR)
    item = Item.objects.get(project=project)
    value = {"scores": {"CT": 2, "SA": 1, "SC": 0, "CLM": 2, "MS": 1, "AMR": 0}}
    run_file = tmp_path / "gpt4o-batch.jsonl"
    run_file.write_text(json.dumps({"external_id": item.external_id, "value": value, "score": 0.9}) + "\n")

    page.set_default_timeout(30_000)  # an upload and an import on a busy machine
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/judges/")
    page.get_by_text("Outputs your model already produced").click()
    page.set_input_files("#id_import-file", str(run_file))
    page.fill("#id_import-model", "gpt-4o")
    page.fill("#id_import-prompt", "copa_likert_evaluation.v1")
    page.fill("#id_import-producer_run_id", "batch_6f2a")
    page.fill("#id_import-sampling", '{"temperature": 0}')
    shot(page, "judges-import-form")
    page.get_by_role("button", name="Import run").click()
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/judges/runs/*/")
    run = JudgeRun.objects.get()
    provenance = page.inner_text(".provenance")
    for shown in ("gpt-4o", "batch_6f2a", "temperature=0", "gpt4o-batch.jsonl", run.provenance["file_sha256"]):
        assert shown in provenance
    assert "imported · gpt-4o" in page.inner_text("h1")
    shot(page, "imported-run")

    page.context.clear_cookies()
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    assert "Machine suggestion" in page.inner_text(".machine-note")
    assert page.locator("input[type=radio]:checked").count() == 6
    shot(page, "workspace-with-imported-suggestion")
