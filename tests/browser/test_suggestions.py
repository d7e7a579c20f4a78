"""LLM suggestions reach annotators only where the project shows them, marked as machine-made."""

import pytest

from annotation.models import Annotation
from judges.models import Suggestion
from judges.services import judge_create, judge_run_start
from judges.tasks import run_dispatch
from tests.browser.test_keyboard import finished, open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged(one_item_project):
    def make(exposure: str):
        project = one_item_project("copa_likert")
        project.suggestion_exposure = exposure
        project.save(update_fields=["suggestion_exposure"])
        run = judge_run_start(judge=judge_create(project=project, backend="baseline"), project=project)
        run_dispatch(run_type="judge", run_id=run.pk)  # tasks run in-process here: the run is done on return
        assert Suggestion.objects.filter(run__project=project, status="ok").count() == 1
        return project

    return make


def test_hidden_project_never_shows_the_suggestion(page, live_server, sign_in, judged):
    project = judged("hidden")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    assert "Machine suggestion" not in page.content()
    assert page.locator("input[type=radio]:checked").count() == 0
    for key in "111111":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    finished(page)
    assert Annotation.objects.get().suggestion_visible is False


def test_shown_project_prefills_and_labels_the_baseline(page, live_server, sign_in, judged):
    project = judged("shown")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    note = page.inner_text(".machine-note")
    assert "Machine suggestion" in note and "baseline" in note
    assert page.locator("input[type=radio]:checked").count() == 6
    page.keyboard.press("Control+Enter")
    finished(page)
    assert Annotation.objects.get().suggestion_visible is True
