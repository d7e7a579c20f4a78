"""A write the server refuses says so in the page, whatever the status (issue 41, point 3).

A member paused or removed while their edit page is open presses Save: the page says "Not saved" and
why, and keeps what they typed; nothing is stored."""

import os

import pytest
from django.contrib.auth import get_user_model

from annotation.member_services import member_pause, member_remove
from annotation.models import Annotation, Role
from annotation.services import membership_add
from tests.browser.test_workspace_ux import copa_project, open_edit_from_history  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


@pytest.mark.parametrize(
    ("refuse", "words"),
    [
        (member_pause, "your membership in this project is paused"),
        (member_remove, "you are no longer on this project"),
    ],
    ids=["paused", "removed"],
)
def test_a_refused_edit_says_not_saved_and_why(page, live_server, sign_in, copa_project, make_user, refuse, words):  # noqa: F811
    project = copa_project(["First question?"])
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    sign_in(page, "ann1")
    open_edit_from_history(page, live_server, project)
    refuse(project=project, actor=researcher, user=get_user_model().objects.get(username="ann1"))
    page.keyboard.press("0")
    page.keyboard.press("Control+Enter")
    box = page.locator("#request-refused [data-refusal]")
    box.wait_for()
    said = box.inner_text()
    assert said.startswith("Not saved.") and words in said.lower()
    assert box.is_visible() and page.locator("#request-refused").get_attribute("role") == "alert"
    # The form is left as typed, and nothing was stored.
    assert page.locator("#annotation-form").count() == 1
    assert page.locator('#annotation-form input[name="CT"][value="0"]').is_checked()
    assert Annotation.objects.filter(item__project=project).count() == 1
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/refusal-{refuse.__name__}.png")
