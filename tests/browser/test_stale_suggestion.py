"""A researcher who updated an item's text by re-import sees, on the item page, that the run's score
was made on an earlier version and is left out until the run is repeated (issue 41, point 8)."""

import os

import pytest

from annotation.models import Role
from annotation.services import membership_add
from tests.judges.unit.test_stale_suggestions import scored_then_updated  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


def test_a_stale_suggestion_is_marked_on_the_item_page(page, live_server, sign_in, make_user, scored_then_updated):  # noqa: F811
    project, run, items = scored_then_updated
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/items/{items[0].pk}/")
    panel = page.locator("section", has=page.locator("#suggestions-heading"))
    panel.wait_for()
    assert "scored on an earlier version" in panel.locator("summary").first.inner_text()
    note = panel.get_by_role("note").first
    assert "left out of estimates and agreement" in note.inner_text()
    if SHOTS:
        panel.screenshot(path=f"{SHOTS}/item-stale-suggestion.png")
    # The run's page counts them.
    page.goto(f"{live_server.url}/p/{project.slug}/judges/runs/{run.pk}/")
    assert page.locator("#earlier-versions").inner_text().startswith("1 answer of this run scored an earlier version")
    # An item the import did not change keeps its score unmarked.
    page.goto(f"{live_server.url}/p/{project.slug}/items/{items[1].pk}/")
    page.locator("#suggestions-heading").wait_for()
    assert page.locator(".stale-mark").count() == 0
