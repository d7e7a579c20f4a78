"""Under the Content-Security-Policy (script-src 'self'), the pages still work and Chromium reports no violation.

These pages run in a context that enforces the policy (the shared `page` fixture bypasses it), and the
test waits only for elements, never with wait_for_function (Playwright evaluates that as a string).
"""

import pytest

from annotation.models import Role
from annotation.services import membership_add

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def strict_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.on("pageerror", lambda error: violations.append(str(error)))
    yield page, violations
    context.close()


def sign_in(page, url: str, username: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def test_workspace_report_and_profile_run_without_policy_violations(
    strict_page, live_server, one_item_project, make_user
):
    page, violations = strict_page
    project = one_item_project("copa_likert")
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    sign_in(page, live_server.url, "ann1")
    page.goto(f"{live_server.url}/p/{project.slug}/annotate/")
    # workspace.js ran: it puts focus on the form (a script-only effect).
    page.wait_for_selector("#annotation-form :focus")
    page.context.clear_cookies()
    sign_in(page, live_server.url, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/report/?bootstrap=10")
    page.wait_for_selector("#provenance-heading")  # the body came by htmx
    page.goto(f"{live_server.url}/accounts/profile/")
    page.get_by_role("button", name="Create a token").click()
    page.wait_for_selector("#new-token")
    assert violations == []


def test_api_docs_render_under_the_policy(strict_page, live_server, make_user):
    page, violations = strict_page
    make_user("res")
    sign_in(page, live_server.url, "res")
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert violations == []
