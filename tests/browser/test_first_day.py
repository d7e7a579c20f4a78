"""A team's first day in the browser, from an install holding only an operator and two plain users.

Every control is found by its role and accessible name, as a person finds it on the page.
"""

import json
import re
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.kinds import get_kind
from annotation.models import Annotation, Item, Membership, Project, Role
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-for-tests-1"
ITEMS = 3
SCORES = "210122"  # one key per CoPA factor row; focus moves down by itself


def eventually(check, *, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the page never got there")
        time.sleep(0.1)


def sign_out(page) -> None:
    page.context.clear_cookies()


def annotate_everything(page, base: str, slug: str, rater: str) -> None:
    """Open the workspace and answer every item by keyboard until nothing is left."""
    page.goto(f"{base}/p/{slug}/annotate/")
    for done in range(1, ITEMS + 1):
        page.wait_for_function("document.activeElement && document.activeElement.closest('#annotation-form')")
        action = page.locator("#annotation-form").get_attribute("action")
        for key in SCORES:
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        eventually(lambda done=done: Annotation.objects.filter(rater=rater).count() == done)
        # The next item (or the end) replaces this form: never type into the one just sent.
        page.wait_for_function(
            "(sent) => { const f = document.querySelector('#annotation-form');"
            " return !f || f.getAttribute('action') !== sent; }",
            arg=action,
        )
    page.get_by_text("Nothing left for you here").wait_for()


def test_a_team_runs_its_first_study_in_the_browser(page, live_server, sign_in, tmp_path):
    users = get_user_model()
    users.objects.create_superuser("operator", "operator@example.org", PASSWORD)
    for name in ("alice", "bob"):
        users.objects.create_user(name, f"{name}@example.org", PASSWORD)
    base = live_server.url

    # The operator creates a CoPA project.
    sign_in(page, "operator")
    page.goto(f"{base}/projects/new/")
    page.get_by_role("radio", name="CoPA six-factor Likert rating").check()
    page.get_by_label("Title").fill("Pilot study")
    page.get_by_label("Annotators per item (k)").fill("2")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(re.compile(r"/p/[\w-]+/$"))
    project = Project.objects.get(title="Pilot study")
    assert (project.kind, project.overlap) == ("copa_likert", 2)

    # Items come from a file.
    items_file = write_jsonl(tmp_path / "pilot.jsonl", synthetic_records(get_kind("copa_likert"), ITEMS))
    page.get_by_label("File (.jsonl or .csv, UTF-8)").set_input_files(str(items_file))
    page.get_by_role("button", name="Upload and import").click()
    eventually(lambda: Item.objects.filter(project=project).count() == ITEMS)

    # Both plain users join as annotators from the team page.
    page.get_by_role("link", name=re.compile("^Team")).click()
    for name in ("alice", "bob"):
        page.get_by_role("textbox", name="Username").fill(name)
        page.get_by_role("button", name="Add", exact=True).click()
        eventually(lambda name=name: Membership.objects.filter(project=project, user__username=name).exists())
    assert set(
        Membership.objects.filter(project=project, role=Role.ANNOTATOR).values_list("user__username", flat=True)
    ) == {
        "alice",
        "bob",
    }

    # Each annotates every item by keyboard.
    for name in ("alice", "bob"):
        sign_out(page)
        sign_in(page, name)
        annotate_everything(page, base, project.slug, name)
    assert Annotation.objects.filter(project=project).count() == 2 * ITEMS

    # The operator reads the agreement report and downloads the gold set.
    sign_out(page)
    sign_in(page, "operator")
    page.goto(f"{base}/p/{project.slug}/")
    page.get_by_role("link", name=re.compile("^Agreement report")).click()
    page.get_by_role("table").first.wait_for()
    page.goto(f"{base}/p/{project.slug}/")
    page.get_by_role("link", name=re.compile("^Gold and adjudication")).click()
    with page.expect_download() as download:
        page.get_by_role("link", name="JSONL").first.click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    assert len(records) == ITEMS  # both raters agreed everywhere: every item is gold

    # And changes their password.
    page.goto(f"{base}/accounts/profile/")
    page.get_by_role("link", name="Change password").click()
    page.get_by_label("Old password").fill(PASSWORD)
    page.get_by_label(re.compile(r"^New password:?$")).fill("a-new-long-password-42")
    page.get_by_label("New password confirmation").fill("a-new-long-password-42")
    page.get_by_role("button", name="Change password").click()
    eventually(lambda: users.objects.get(username="operator").check_password("a-new-long-password-42"))
