"""The Team page as a researcher uses it: the invitation link is copied with one click, "Remove" asks
first, and the "New people" choice stays what it was after each add."""

from __future__ import annotations

import pytest

from annotation.models import Membership, Role
from annotation.services import membership_add
from tests.browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def team_page(browser, live_server, make_project, make_user, sign_in):
    project = make_project("copa_likert")
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    membership_add(project=project, user=make_user("ann1"), role=Role.ANNOTATOR)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/team/")
    yield project, page
    context.close()


def test_the_invitation_link_is_copied_with_one_click_and_the_choice_stays(team_page):
    project, page = team_page
    page.get_by_role("textbox", name="Username").fill("eve")
    page.get_by_label("New people").select_option("invite")
    page.get_by_role("button", name="Add", exact=True).click()
    link = page.get_by_role("textbox", name="Invitation link for eve").input_value()
    page.get_by_role("button", name="Copy link").click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("() => navigator.clipboard.readText()") == link
    # The whole link is in view, not cut off in a narrow box.
    assert page.eval_on_selector("#added-secret-1", "input => input.scrollWidth <= input.clientWidth")
    # The next person is added the same way unless the researcher changes it.
    assert page.get_by_label("New people").input_value() == "invite"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "team-copy-link.png"), full_page=True)


def test_remove_asks_first_and_does_nothing_when_declined(team_page):
    project, page = team_page
    remove = page.get_by_role("button", name="Remove ann1 from the project")
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    remove.click()
    page.wait_for_timeout(300)  # a declined removal sends nothing; give a wrong one time to arrive
    assert questions and "ann1" in questions[0]
    assert Membership.objects.filter(project=project, user__username="ann1").exists()
    page.once("dialog", lambda dialog: dialog.accept())
    remove.click()
    page.get_by_text("ann1 was removed").wait_for()
    assert not Membership.objects.filter(project=project, user__username="ann1").exists()
