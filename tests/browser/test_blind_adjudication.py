"""The expert making gold decides blind to the condition under study (issue 41, point 5).

CoPA hides the response's source, its pair, its provenance and the user's history from raters; the
expert's adjudication page, in Chromium, holds none of them unless the project shows them on purpose."""

import os

import pytest

from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add, project_update
from tests.validation.conftest import add_items, annotate, copa_value

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")
MARKERS = {
    "response_source": "srcmarker-top-voted",
    "pair_id": "pairmarker-17",
    "meta": {"post": "metamarker-post"},
}


@pytest.fixture
def disputed_item(make_project, make_user):
    project = make_project("copa_likert", title="CoPA study")
    membership_add(project=project, user=make_user("expert"), role=Role.EXPERT)
    payload = {**get_kind("copa_likert").example_payload(), **MARKERS}
    item = add_items(project, ["q1"], payload)["q1"]
    annotate(project, item, "ann1", copa_value(0))
    annotate(project, item, "ann2", copa_value(2))
    return project, item


def test_the_expert_s_adjudication_page_holds_no_hidden_field(page, live_server, sign_in, disputed_item):
    project, item = disputed_item
    sign_in(page, "expert")
    page.goto(f"{live_server.url}/p/{project.slug}/adjudicate/{item.pk}/")
    page.get_by_role("heading", name="Your decision").wait_for()
    html = page.content()
    assert not [marker for marker in ("srcmarker", "pairmarker", "metamarker") if marker in html]
    assert page.locator("#hidden-fields-heading").count() == 0
    note = page.locator("#blind-note")
    assert note.is_visible() and "response_source" in note.inner_text()
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/adjudication-blind.png", full_page=True)
    # Shown on purpose by the project: the page lists them, under their heading.
    project_update(project=project, adjudicators_see_hidden=True)
    page.reload()
    assert "srcmarker-top-voted" in page.locator(".researchers-only").inner_text()
    assert page.locator("#blind-note").count() == 0
