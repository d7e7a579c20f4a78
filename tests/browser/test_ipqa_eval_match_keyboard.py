"""An annotator judges an IPQA-Eval pair with the keyboard alone, in real Chromium."""

import pytest

from annotation.models import Annotation
from tests.browser.test_keyboard import finished, open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ipqa_eval_match_by_keyboard(page, live_server, sign_in, one_item_project):
    project = one_item_project("ipqa_eval_match")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("n")  # no match; focus moves on to the note
    page.keyboard.type("Broader than the gold intent")
    page.keyboard.press("Control+Enter")
    finished(page)
    assert Annotation.objects.get(rater="ann1").value == {"match": False, "note": "Broader than the gold intent"}


def test_ipqa_eval_match_key_m_answers_match(page, live_server, sign_in, one_item_project):
    project = one_item_project("ipqa_eval_match")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("m")
    page.keyboard.press("Control+Enter")
    finished(page)
    assert Annotation.objects.get(rater="ann1").value == {"match": True}
