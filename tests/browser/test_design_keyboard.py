"""A project's own design in real Chromium: annotators answer its form by keyboard alone (digits per
dimension, number keys per label, Tab and Enter), and a researcher builds the design on the New project
page, where the builder and the JSON follow each other (page -> JSON -> page) and the preview is the
annotator's form."""

from __future__ import annotations

import json

import pytest

from annotation.importing import import_items
from annotation.models import Project, Role
from annotation.services import membership_add
from annotation.synthetic import write_jsonl
from tests.annotation.test_project_pages import add_project_permission
from tests.browser.test_keyboard import finished, open_workspace, stored_value

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Two scales of different lengths, the second optional, and no comment box.
GRADES = {
    "fields": [{"name": "report", "title": "Radiology report"}],
    "dimensions": [
        {"name": "grade", "min": 0, "max": 6, "points": {"0": "none", "6": "severe"}},
        {"name": "fit", "min": 1, "max": 3, "required": False},
        {"name": "clarity", "min": 1, "max": 5},
    ],
}
ASPECTS = {
    "fields": [{"name": "question"}, {"name": "answer_a"}, {"name": "answer_b"}],
    "questions": [
        {"name": "verdict", "labels": [{"value": v, "text": v} for v in ("model_a", "model_b", "tie")]},
        {"name": "topics", "multiple": True, "labels": [{"value": t, "text": t} for t in ("price", "view", "food")]},
    ],
    "comment": True,
}


@pytest.fixture
def designed_project(make_project, make_user, tmp_path):
    def make(kind: str, design: dict) -> Project:
        project = make_project(kind, design=design, overlap=1)
        item = {"external_id": "one", **project.task_kind.example_payload(), "meta": {"model": "hidden-model-name"}}
        import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", [item]))
        membership_add(project=project, user=make_user("ann1"), role=Role.ANNOTATOR)
        return project

    return make


def test_a_rating_design_by_keyboard(page, live_server, sign_in, designed_project):
    project = designed_project("rating", GRADES)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    assert "hidden-model-name" not in page.content()  # the hidden part of the item never reaches the rater
    page.keyboard.press("5")  # grade 5; focus moves to fit
    page.keyboard.press("Tab")  # fit is optional: leave it
    page.keyboard.press("4")  # clarity 4; focus moves to the submit button
    page.keyboard.press("Enter")
    finished(page)
    assert stored_value() == {"ratings": {"grade": 5, "clarity": 4}}


def test_a_label_design_by_keyboard(page, live_server, sign_in, designed_project):
    project = designed_project("categorical", ASPECTS)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.keyboard.press("2")  # verdict: the second label; focus moves to the topics
    page.keyboard.press("1")  # topics: several may be chosen, each key toggles one
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    finished(page)
    assert stored_value() == {"labels": {"verdict": "model_b", "topics": ["price", "food"]}}


def test_the_design_builder_and_the_json_follow_each_other(page, live_server, sign_in, make_user):
    add_project_permission(make_user("creator"))
    sign_in(page, "creator")
    page.goto(f"{live_server.url}/projects/new/")
    page.fill("input[name=title]", "Lesions")
    page.check("input[name=kind][value=rating]")
    textarea = page.locator("textarea[name=design]")
    started = json.loads(textarea.input_value())
    assert [d["name"] for d in started["dimensions"]] == ["coherence", "consistency", "fluency", "relevance"]
    # Page -> JSON: a dimension added in the builder is in the JSON, with the builder's values.
    page.get_by_role("button", name="Add a dimension").click()
    page.get_by_label("Dimension 5 name").fill("severity")
    page.get_by_label("Dimension 5 max").fill("6")
    page.get_by_label("Dimension 5 title").fill("Severity")
    design = json.loads(textarea.input_value())
    assert design["dimensions"][4] == {"name": "severity", "min": 1, "max": 6, "title": "Severity"}
    assert design["dimensions"][0] == started["dimensions"][0]  # untouched entries keep every key
    # The preview is the annotator's form for the design as it stands.
    page.wait_for_selector("#design-preview input[name=rating-severity][value='6']")
    # JSON -> page: the JSON edited by hand redraws the builder.
    design["dimensions"][4]["max"] = 4
    page.locator("#design-json summary").click()
    textarea.fill(json.dumps(design))
    assert page.get_by_label("Dimension 5 max").input_value() == "4"
    page.wait_for_selector("#design-preview input[name=rating-severity][value='6']", state="detached")
    assert page.locator("#design-preview input[name=rating-severity][value='4']").count() == 1
    # A refused design names its path in the preview.
    design["dimensions"][4]["max"] = 0
    textarea.fill(json.dumps(design))
    page.wait_for_selector("#design-preview >> text=dimensions[4].max: must be greater than min")
    design["dimensions"][4]["max"] = 4
    textarea.fill(json.dumps(design))
    page.wait_for_selector("#design-preview input[name=rating-severity][value='4']")
    page.get_by_role("button", name="Create project").click()
    page.wait_for_url(f"{live_server.url}/p/lesions/")
    assert Project.objects.get(slug="lesions").design == design
