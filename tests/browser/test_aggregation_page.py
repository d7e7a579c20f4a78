"""The aggregation page in Chromium: a researcher picks a method by keyboard and reads labels and competence."""

from __future__ import annotations

import os

import numpy as np
import pytest

from annotation.models import Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate, copa_value

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


@pytest.fixture
def panel(make_project, make_user):
    project = make_project("copa_likert", title="CoPA pilot", overlap=3)
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    rng = np.random.default_rng(1)
    for item in add_items(project, [f"r{i:02d}" for i in range(30)]).values():
        truth = rng.integers(0, 3, 6)
        for rater in ("ann", "bob"):
            annotate(project, item, rater, copa_value(*map(int, np.where(rng.random(6) < 0.85, truth, 1))))
        annotate(project, item, "spammer", copa_value(*map(int, rng.integers(0, 3, 6))))
    return project


class AggregationPageTests:
    @pytest.mark.parametrize("width", [1366, 390])
    def test_a_researcher_aggregates_by_keyboard_and_the_page_fits(self, page, live_server, sign_in, panel, width):
        page.set_default_timeout(60_000)
        sign_in(page, "res")
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/p/{panel.slug}/report/")
        page.get_by_role("link", name="Aggregation and annotator competence").first.click()
        page.get_by_label("Method").select_option("dawid_skene")
        page.get_by_role("button", name="Compute").focus()
        page.keyboard.press("Enter")
        page.get_by_role("heading", name="Annotator competence", exact=True).wait_for()
        assert page.get_by_role("heading", name="Labels by Dawid–Skene against the majority vote").is_visible()
        assert page.get_by_text("spammer").first.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/aggregate-{width}.png", full_page=True)
