"""The Alternative Annotator Test page in Chromium: a researcher picks runs and ε by keyboard and
reads the decision in words, on a laptop and a phone, light and dark."""

from __future__ import annotations

import os

import pytest

from annotation.models import Annotation, Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, copa_value, imported_run, suggest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", title="CoPA pilot")
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    runs = [imported_run(project, model) for model in ("gpt-4o", "small-model")]
    for n, item in enumerate(add_items(project, [f"c{n:02d}" for n in range(40)]).values()):
        for k, rater in enumerate(("ann1", "ann2", "ann3")):
            Annotation.objects.create(
                project=project, item=item, rater=rater, value=copa_value((n + (k == 2)) % 3), version=1
            )
        suggest(runs[0], item, copa_value(n % 3))
        suggest(runs[1], item, copa_value((n + 1) % 3))
    return project, runs


class AltTestPageTests:
    def test_a_researcher_chooses_runs_and_epsilon_and_reads_the_decision(self, page, live_server, sign_in, study):
        project, runs = study
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{project.slug}/report/?bootstrap=0")
        page.get_by_role("link", name="Alternative Annotator Test").first.click()
        page.get_by_label(f"run {runs[0].pk}:", exact=False).focus()
        page.keyboard.press("Space")
        page.get_by_label(f"run {runs[1].pk}:", exact=False).check()
        epsilon = page.get_by_label("ε (the annotators' advantage)")
        epsilon.fill("0.15")
        page.get_by_label("Bootstrap resamples").fill("20")
        page.get_by_role("button", name="Compute").click()
        decision = page.locator("#verdict-heading + ol")
        decision.wait_for()
        text = decision.inner_text()
        assert "gpt-4o may replace the annotators on" in text and "at ε = 0.15" in text
        assert text.index("gpt-4o") < text.index("small-model")  # ranked by advantage probability
        assert "What ε means" in page.content()
        for width, height in ((1366, 900), (390, 844)):
            for scheme in ("light", "dark"):
                page.set_viewport_size({"width": width, "height": height})
                page.emulate_media(color_scheme=scheme)
                overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert overflow <= 1, f"{width}px {scheme}: the page scrolls sideways by {overflow}px"
                if SHOTS:
                    page.screenshot(path=f"{SHOTS}/alt-test-{width}-{scheme}.png", full_page=True)
