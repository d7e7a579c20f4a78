"""Adjudication rules on the New project and Settings pages (issue 41, point 10): "My own rules"
starts from the chosen kind's rules, and Settings warns that k = 2 makes gold need agreement on
every dimension."""

import os

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Role
from annotation.project_views import TWO_RATERS_ALL_DIMENSIONS
from annotation.services import membership_add

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


def test_my_own_rules_start_from_the_kind_s_rules(page, live_server, sign_in):
    get_user_model().objects.create_superuser("operator", "operator@example.org", "pw-for-tests-1")
    sign_in(page, "operator")
    page.goto(f"{live_server.url}/projects/new/")
    page.get_by_role("radio", name="CoPA six-factor Likert rating").check()
    page.get_by_role("radio", name="My own rules").check()
    # CoPA's rules: ratings 2 or more points apart, not any disagreement.
    assert not page.get_by_label("Any disagreement between raters").is_checked()
    assert page.get_by_label("Ratings at least this many points apart").input_value() == "2"
    # A rule the researcher changed stays when the kind changes.
    page.get_by_label("Ratings at least this many points apart").fill("1")
    page.locator("input[name=kind]").first.check()
    assert page.get_by_label("Ratings at least this many points apart").input_value() == "1"


def test_settings_warns_two_raters_must_agree_on_every_dimension(page, live_server, sign_in, make_project, make_user):
    project = make_project("copa_likert", overlap=2)
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/settings/")
    help_text = page.locator("#id_overlap_helptext").inner_text()
    assert TWO_RATERS_ALL_DIMENSIONS.format(n=6) in help_text
    if SHOTS:
        page.locator("#id_overlap").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/settings-two-raters.png")
