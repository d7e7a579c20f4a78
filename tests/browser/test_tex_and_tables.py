"""TeX typeset wherever item text or guidelines appear, answers as compact values, and tables that wrap
between words: each page used in real Chromium by the person it is for, at 1366 px and 390 px."""

import pytest
from django.urls import reverse

from annotation.assignments import assignment_claim, assignment_skip, assignment_submit
from annotation.kinds import get_kind
from annotation.models import Item, Role
from annotation.services import membership_add
from tests.browser.conftest import ARTIFACTS
from tests.browser.layout import broken_words, untypeset_math

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
COPA = get_kind("copa_likert")
SHOTS = ARTIFACTS / "tex-and-tables"
GUIDELINES = (
    "Judge the response against the profile; for spread use $\\mathrm{Var}(X+Y)$.\n\n"
    "| score | meaning |\n|---|---|\n| 0 | Mismatch: violates or ignores the preference |\n"
    "| 1 | Partial: aligns partially, lacks depth |\n| 2 | Full: well aligned with the researcher's reading |\n"
)
QUESTION = "Why is $\\sum_{i=1}^n i = \\frac{n(n+1)}{2}$ for every $n$?"
COMMENT = "Compare with $a^2 + b^2 = c^2$."
SKIP_REASON = "Needs $\\hbar$ and more physics than I know"


@pytest.fixture
def tex_study(make_project, make_user):
    """A CoPA project whose guidelines, items and answers all carry TeX: two raters who differ on the
    first item (the first also skipped the second, with a reason in TeX), a third annotator still to
    answer, an expert and a researcher."""
    project = make_project("copa_likert", overlap=3, guidelines=GUIDELINES, title="TeX study")
    item, _ = (
        Item.objects.create(
            project=project, external_id=f"tex-{n}", payload={**COPA.example_payload(), "question": QUESTION}
        )
        for n in (1, 2)
    )
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    membership_add(project=project, user=make_user("exp"), role=Role.EXPERT)
    submitted = {}
    for name, score in (("ann1", 0), ("ann2", 2), ("ann3", None)):
        user = make_user(name)
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        if score is not None:
            for assignment in (assignment_claim(project=project, user=user).assignment for _ in (1, 2)):
                if assignment.item_id == item.pk:
                    value = {"scores": dict.fromkeys(COPA.example_value()["scores"], score), "comment": COMMENT}
                    assignment_submit(assignment=assignment, value=value)
                    submitted[name] = assignment
                else:
                    assignment_skip(assignment=assignment, reason=SKIP_REASON)
    return project, item, submitted


def look(page, name: str) -> None:
    """Pictures at both widths, for a person to look through; at each, nothing wider than the window
    and no word broken inside a table cell (a table too wide scrolls)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in ((1366, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(50)
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        wider = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert (wider, broken_words(page)) == (0, []), f"{name} at {width} px"
    page.set_viewport_size({"width": 1366, "height": 800})


def as_user(page, sign_in, username: str) -> None:
    page.context.clear_cookies()
    sign_in(page, username)


def typeset(page, url: str, *, at_least: int) -> None:
    page.goto(url)
    page.wait_for_function("n => document.querySelectorAll('[data-math] .katex').length >= n", arg=at_least)
    assert untypeset_math(page) == []


def test_tex_is_typeset_on_every_page_with_item_text_or_guidelines(page, live_server, sign_in, tex_study):
    project, item, submitted = tex_study
    base = live_server.url
    as_user(page, sign_in, "res")
    # Item page: the item as annotators see it (2 formulas) and both raters' comments (2).
    typeset(page, base + reverse("item_page", args=[project.slug, item.pk]), at_least=4)
    look(page, "item-page")
    # Settings: the saved guidelines' preview, then the live preview of what is typed.
    typeset(page, base + reverse("project_settings", args=[project.slug]), at_least=1)
    assert "Nothing written yet" not in page.inner_text("#guidelines-preview")
    assert page.locator("#guidelines-preview td", has_text="Mismatch").count() == 1
    look(page, "settings")
    page.fill("#id_guidelines", "Now with $e^{i\\pi} + 1 = 0$ only.")
    page.wait_for_function(
        "() => { const p = document.getElementById('guidelines-preview');"
        " return p.textContent.includes('only') && p.querySelector('[data-math] .katex'); }"
    )
    assert untypeset_math(page) == []

    as_user(page, sign_in, "exp")
    # Adjudication: both comments in the table and the item in the decision form.
    typeset(page, base + reverse("adjudication_item", args=[project.slug, item.pk]), at_least=4)
    look(page, "adjudication")

    as_user(page, sign_in, "ann1")
    # History: the skip reason (a CoPA answer's line is cut before its comment).
    typeset(page, base + reverse("annotation_history", args=[project.slug]), at_least=1)
    look(page, "history")
    # Editing an answer: the guidelines beside the item, and the item.
    typeset(page, base + reverse("annotation_edit", args=[project.slug, submitted["ann1"].pk]), at_least=3)
    assert page.locator(".guidelines .prose [data-math] .katex").count() == 1

    as_user(page, sign_in, "ann3")
    typeset(page, base + reverse("workspace", args=[project.slug]), at_least=3)
    look(page, "workspace")


def test_no_table_cell_breaks_a_word_on_the_team_page_or_in_the_guidelines(page, live_server, sign_in, tex_study):
    project, _, _ = tex_study
    as_user(page, sign_in, "res")
    page.set_viewport_size({"width": 1366, "height": 800})
    page.goto(live_server.url + reverse("team", args=[project.slug]))
    assert broken_words(page) == []
    look(page, "team")
    page.set_viewport_size({"width": 390, "height": 844})
    assert broken_words(page) == []  # the table scrolls sideways instead
    as_user(page, sign_in, "ann3")
    page.set_viewport_size({"width": 1366, "height": 800})
    page.goto(live_server.url + reverse("workspace", args=[project.slug]))
    assert page.locator(".guidelines table td", has_text="Mismatch").is_visible()
    assert broken_words(page) == []  # the sidebar's guidelines table


def test_on_a_phone_the_guidelines_panel_keeps_the_annotators_choice(page, live_server, sign_in, tex_study):
    project, _, _ = tex_study
    as_user(page, sign_in, "ann3")
    page.set_viewport_size({"width": 390, "height": 844})
    url = live_server.url + reverse("workspace", args=[project.slug])
    page.goto(url)
    panel = page.locator("#guidelines-panel")
    # Closed at first on a phone, so the item is on the first screen.
    page.wait_for_function("() => !document.getElementById('guidelines-panel').open")
    assert page.locator(".context .text").first.bounding_box()["y"] < 844
    panel.locator("summary").click()
    assert panel.evaluate("el => el.open")
    page.reload()
    page.wait_for_function("() => document.activeElement && document.activeElement.closest('#annotation-form')")
    assert panel.evaluate("el => el.open")  # opened by the annotator: stays open
    panel.locator("summary").click()
    page.reload()
    page.wait_for_function("() => document.activeElement && document.activeElement.closest('#annotation-form')")
    assert not panel.evaluate("el => el.open")
