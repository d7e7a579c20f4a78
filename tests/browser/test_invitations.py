"""Invited people get in, in real Chromium, from an install holding one superuser only.

The invitee opens the link in a browser context of their own (no cookies, the site's real
Content-Security-Policy), chooses a password and annotates; a person given a temporary password must
change it before any other page opens."""

import re

import pytest
from django.contrib.auth import get_user_model

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Project
from annotation.synthetic import synthetic_records, write_jsonl
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_first_day import ITEMS, annotate_everything

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-for-tests-1"
INVITEE_PASSWORD = "a-long-passphrase-of-her-own"
#: This test starts three browser contexts on a live server; give a busy machine time.
TIMEOUT_MS = 30_000
OWN_PASSWORD = "another-long-passphrase-chosen"


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def add_person(page, username: str, how: str) -> None:
    page.get_by_role("textbox", name="Username").fill(username)
    page.get_by_label("New people").select_option(how)
    page.get_by_role("button", name="Add", exact=True).click()
    page.get_by_role("heading", name="Added").wait_for()


def test_an_invited_person_and_a_temporary_password_get_in_and_annotate(
    browser, page, live_server, sign_in, tmp_path, settings
):
    # Links are built from the configured site address, never from the request: here, the test server's.
    settings.CONCORD_SITE_URL = live_server.url
    users = get_user_model()
    users.objects.create_superuser("operator", "operator@example.org", PASSWORD)
    base = live_server.url
    page.set_default_timeout(TIMEOUT_MS)

    # The researcher creates a project and fills it.
    sign_in(page, "operator")
    page.goto(f"{base}/projects/new/")
    page.get_by_role("radio", name="CoPA six-factor Likert rating").check()
    page.get_by_label("Title").fill("Invited study")
    page.get_by_label("Annotators per item (k)").fill("2")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(re.compile(r"/p/[\w-]+/$"))
    project = Project.objects.get(title="Invited study")
    items = write_jsonl(tmp_path / "items.jsonl", synthetic_records(get_kind("copa_likert"), ITEMS))
    import_items(project=project, path=items)

    # One new person by invitation, one with a temporary password.
    page.goto(f"{base}/p/{project.slug}/team/")
    add_person(page, "eve", "invite")
    link = page.get_by_role("textbox", name="Invitation link for eve").input_value()
    assert re.fullmatch(rf"{re.escape(base)}/invite/#[\w-]{{40,}}", link)
    add_person(page, "tom", "password")
    temporary = page.get_by_role("textbox", name="Temporary password for tom").input_value()
    assert len(temporary) >= 12
    screenshot(page, "team-added")

    # Eve opens the link in a browser of her own: no cookies, the site's real policy.
    eve_context = browser.new_context(viewport={"width": 1280, "height": 900})
    eve = eve_context.new_page()
    eve.set_default_timeout(TIMEOUT_MS)
    sent = []  # every request line and Referer the server (and its access log) would see
    eve.on("request", lambda request: sent.append((request.url, request.headers.get("referer", ""))))
    eve.goto(link)
    eve.get_by_role("heading", name="Welcome to Invited study").wait_for()
    assert eve.url == f"{base}/invite/"  # the token left the address bar
    screenshot(eve, "invitation-accept")
    eve.get_by_label("New password").fill(INVITEE_PASSWORD)
    eve.get_by_label("The same again").fill(INVITEE_PASSWORD)
    eve.get_by_role("button", name="Set password and sign in").click()
    eve.wait_for_url(f"{base}/p/{project.slug}/")
    eve.get_by_text("Welcome, eve").wait_for()
    token = link.partition("#")[2]
    assert len(sent) >= 4 and not any(token in url or token in referer for url, referer in sent)
    # Annotating needs Playwright's string waits, which the policy forbids: same cookies, policy bypassed.
    annotating = browser.new_context(
        viewport={"width": 1280, "height": 900}, bypass_csp=True, storage_state=eve_context.storage_state()
    )
    eve_context.close()
    annotate_page = annotating.new_page()
    annotate_page.set_default_timeout(TIMEOUT_MS)
    annotate_everything(annotate_page, base, project.slug, "eve")
    annotating.close()

    # Tom signs in with the temporary password and must choose his own before anything else.
    tom_context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    tom = tom_context.new_page()
    tom.set_default_timeout(TIMEOUT_MS)
    tom.goto(f"{base}/accounts/login/")
    tom.get_by_label("Username").fill("tom")
    tom.get_by_label("Password").fill(temporary)
    tom.get_by_role("button", name="Sign in").click()
    tom.wait_for_url(f"{base}/accounts/password/change/")
    tom.get_by_text("temporary password").first.wait_for()
    screenshot(tom, "temporary-password-change")
    tom.goto(f"{base}/p/{project.slug}/annotate/")
    assert tom.url == f"{base}/accounts/password/change/"
    tom.get_by_label("Old password").fill(temporary)
    tom.get_by_label(re.compile(r"^New password:?$")).fill(OWN_PASSWORD)
    tom.get_by_label("New password confirmation").fill(OWN_PASSWORD)
    tom.get_by_role("button", name="Change password").click()
    tom.wait_for_url(f"{base}/accounts/password/change/done/")
    annotate_everything(tom, base, project.slug, "tom")
    tom_context.close()

    assert Annotation.objects.filter(project=project, rater="eve").count() == ITEMS
    assert Annotation.objects.filter(project=project, rater="tom").count() == ITEMS
    assert users.objects.get(username="tom").check_password(OWN_PASSWORD)
