"""An annotator answers the pairwise-preference fixture kind with the keyboard alone, in real Chromium:
its form script is served from the kind's own folder, and the answer records the order shown."""

import pytest

from annotation.assignments import assignment_presentation
from annotation.models import Annotation, Assignment
from tests.browser.test_keyboard import finished, open_workspace
from tests.support.kind_mount import mounted_kind
from tests.test_fixture_kind import FIXTURE_KINDS, REGISTRY_LINE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pairwise():
    with mounted_kind(FIXTURE_KINDS, REGISTRY_LINE) as name:
        yield name


def test_pairwise_preference_by_keyboard(page, live_server, sign_in, pairwise, one_item_project):
    project = one_item_project(pairwise)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("2")
    page.screenshot(
        path="test-artifacts/pairwise-form.png", full_page=True
    )  # TEMP  # the response shown second; focus moves on to the note
    page.keyboard.type("More concrete")
    page.keyboard.press("Control+Enter")
    finished(page)
    stored = Annotation.objects.get(rater="ann1")
    order = assignment_presentation(assignment=Assignment.objects.get(annotator=stored.annotator))["order"]
    assert stored.value == {"preferred": order[1], "shown_first": order[0], "note": "More concrete"}
