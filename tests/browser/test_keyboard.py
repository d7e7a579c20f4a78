"""An annotator completes an item of every kind with the keyboard alone, in real Chromium."""

import pytest

from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_workspace(page, live_server, project):
    page.goto(f"{live_server.url}/p/{project.slug}/annotate/")
    # Keys count only once the page has put focus on the form, as a person would wait to see it.
    page.wait_for_function("document.activeElement && document.activeElement.closest('#annotation-form')")


def finished(page):
    page.wait_for_selector("text=Nothing left for you here")


def stored_value(rater="ann1"):
    return Annotation.objects.get(rater=rater).value


def test_copa_by_keyboard(page, live_server, sign_in, one_item_project):
    project = one_item_project("copa_likert")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for key in "210122":  # one key per factor row; focus moves down by itself
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    finished(page)
    assert stored_value() == {"scores": {"CT": 2, "SA": 1, "SC": 0, "CLM": 1, "MS": 2, "AMR": 2}}


def test_ipqa_by_keyboard(page, live_server, sign_in, one_item_project):
    project = one_item_project("ipqa_core_intent")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for key in "yyn":  # intent 1 expressed and core; intent 2 not expressed (so not core)
        page.keyboard.press(key)
    page.keyboard.type("To keep bread fresh")  # focus reached the missing-intent field
    page.keyboard.press("Control+Enter")
    finished(page)
    intents = get_kind("ipqa_core_intent").example_payload()["candidate_intents"]
    assert stored_value() == {
        "intents": [
            {"intent": intents[0], "expressed": True, "core": True},
            {"intent": intents[1], "expressed": False, "core": False},
        ],
        "missing_intent": "To keep bread fresh",
    }


def test_rationale_by_keyboard(page, live_server, sign_in, one_item_project):
    project = one_item_project("rationale_inspection", role=Role.EXPERT)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("f")
    page.keyboard.press("3")
    page.keyboard.press("Control+Enter")
    finished(page)
    assert stored_value() == {"verdict": 0, "failure_categories": ["inappropriate_application"]}


def test_label_statement_by_keyboard(page, live_server, sign_in, one_item_project):
    project = one_item_project("label_contextualization")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("Tab")  # from the action choice to the statement
    page.keyboard.type("uses data")
    assert "Start with" in page.inner_text("#statement-checks")  # the inline check speaks up
    page.keyboard.press("Control+a")
    page.keyboard.type("To use data or methods from the cited paper.")
    assert page.inner_text("#statement-checks") == ""
    page.keyboard.press("Control+Enter")
    finished(page)
    assert stored_value() == {"action": "write", "statement": "To use data or methods from the cited paper."}


def test_mcq_by_keyboard_and_a_refused_submit_keeps_the_item(page, live_server, sign_in, one_item_project):
    project = one_item_project("intent_mcq")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("Control+Enter")  # nothing chosen yet: refused, nothing stored
    page.wait_for_selector("#form-errors")
    assert not Annotation.objects.exists()
    page.keyboard.press("1")
    page.keyboard.press("3")
    page.keyboard.press("3")  # toggled twice: off again
    page.keyboard.press("Control+Enter")
    finished(page)
    assert stored_value() == {"chosen": [0]}


def test_second_annotator_sees_a_blank_form(page, live_server, sign_in, one_item_project):
    project = one_item_project("copa_likert", annotators=("ann1", "ann2"), overlap=2)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for key in "222222":
        page.keyboard.press(key)
    page.keyboard.type("\n")
    finished(page)
    page.context.clear_cookies()
    sign_in(page, "ann2")
    open_workspace(page, live_server, project)
    assert page.locator("input[type=radio]:checked").count() == 0
    assert "Machine suggestion" not in page.content()


# -- after a validation error, the next key still answers ------------------------------------------

FOCUSED_ROW = "document.activeElement.closest('[data-row]') && document.activeElement.closest('[data-row]').dataset.row"


def watch_posts(page) -> list[int]:
    """Statuses of the form posts the page sends (to tell a check in the page from a server round trip)."""
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if r.request.method == "POST" else None)
    return statuses


def test_an_incomplete_copa_answer_is_named_in_the_page_and_the_next_key_scores_the_first_missing_row(
    page, live_server, sign_in, one_item_project
):
    project = one_item_project("copa_likert")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    posts = watch_posts(page)
    page.keyboard.press("2")
    page.keyboard.press("1")  # two of six factors
    page.keyboard.press("Enter")
    errors = page.wait_for_selector("#form-errors")
    assert (
        "Schema Consistency (SC)" in errors.inner_text()
        and "Affective and Motivational Resonance (AMR)" in errors.inner_text()
    )
    assert "Cognitive Trust" not in errors.inner_text() and posts == [] and not Annotation.objects.exists()
    assert page.evaluate(FOCUSED_ROW) == "SC"  # focus went to the first missing row, not the message
    page.keyboard.press("0")  # the very next key changes the form
    assert page.locator("input[name=SC][value='0']").is_checked()
    for key in "122":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    finished(page)
    assert stored_value() == {"scores": {"CT": 2, "SA": 1, "SC": 0, "CLM": 1, "MS": 2, "AMR": 2}}


def test_after_the_server_refuses_an_answer_the_keys_still_work(page, live_server, sign_in, one_item_project):
    project = one_item_project("copa_likert")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    posts = watch_posts(page)
    # The page's own check lets this one answer through (as an older copy of the page would), and is
    # back before the server's answer is swapped in: the server's check stays, and refuses it.
    page.evaluate(
        "() => { const saved = window.Concord.checkHandlers.splice(0);"
        " document.body.addEventListener('htmx:beforeSwap',"
        " () => window.Concord.checkHandlers.push(...saved), { once: true }); }"
    )
    page.keyboard.press("2")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#form-errors")
    page.wait_for_function("() => document.activeElement && document.activeElement.closest('[data-row]')")
    assert posts == [422] and not Annotation.objects.exists()
    assert page.evaluate(FOCUSED_ROW) == "SC"
    page.keyboard.press("1")
    assert page.locator("input[name=SC][value='1']").is_checked()


def test_an_empty_skip_reason_is_asked_for_and_typing_goes_into_the_reason(
    page, live_server, sign_in, one_item_project
):
    project = one_item_project("copa_likert")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    posts = watch_posts(page)
    page.keyboard.press("Alt+s")
    page.keyboard.press("Enter")  # no reason yet
    assert "Say why you skip this item." in page.wait_for_selector("#skip-errors").inner_text()
    assert posts == [] and page.evaluate("document.activeElement.id") == "skip-reason"
    page.keyboard.type("Not in English")
    page.keyboard.press("Enter")
    finished(page)
    assert Assignment.objects.get().skip_reason == "Not in English"


def test_a_fail_verdict_without_a_reason_focuses_the_reasons(page, live_server, sign_in, one_item_project):
    project = one_item_project("rationale_inspection", role=Role.EXPERT)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("f")
    page.keyboard.press("Control+Enter")
    assert "at least one failure category" in page.wait_for_selector("#form-errors").inner_text()
    assert page.evaluate("document.activeElement.name") == "failure_categories"
    page.keyboard.press("2")
    page.keyboard.press("Control+Enter")
    finished(page)
    assert stored_value() == {"verdict": 0, "failure_categories": ["theoretical_error"]}
