"""A project's own design (the ``rating`` and ``categorical`` kinds): checked with each problem at its
path, stored with the project, frozen once answers exist, and what the kind's schemas and form follow."""

from __future__ import annotations

import copy

import pytest
from django.core.exceptions import ValidationError

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.kinds.designs import NAME
from annotation.models import Annotation, Project
from annotation.services import (
    DESIGN_FIELDS_LOCKED_BY_ITEMS,
    DESIGN_LOCKED_BY_ANSWERS,
    annotation_submit,
    project_create,
    project_update,
)
from annotation.synthetic import write_jsonl

#: A study of its own: a 1-6 lesion grade beside an optional 0-2 fit score, one text shown.
LESIONS = {
    "fields": [{"name": "report", "title": "Radiology report"}],
    "dimensions": [
        {"name": "grade", "min": 1, "max": 6, "points": {"1": "none", "6": "severe"}},
        {"name": "fit", "min": 0, "max": 2, "required": False, "level": "interval"},
    ],
    "comment": False,
}
ASPECTS = {
    "fields": [{"name": "review"}],
    "questions": [
        {
            "name": aspect,
            "required": aspect == "food",
            "labels": [{"value": "pos", "text": "Positive"}, {"value": "neg", "text": "Negative"}],
        }
        for aspect in ("food", "service")
    ]
    + [
        {
            "name": "topics",
            "multiple": True,
            "labels": [{"value": "price", "text": "Price"}, {"value": "view", "text": "View"}],
        }
    ],
}


def problems(kind: str, design) -> list[str]:
    return [f"{e.field}: {e.message}" for e in get_kind(kind).check_design(design)]


class DesignCheckTests:
    def test_an_upside_down_scale_is_named_at_its_path(self):
        design = copy.deepcopy(LESIONS)
        design["dimensions"].append({"name": "third", "min": 3, "max": 3})
        assert problems("rating", design) == ["dimensions[2].max: must be greater than min"]

    def test_a_point_text_outside_the_scale_and_a_repeated_name_are_named(self):
        design = copy.deepcopy(LESIONS)
        design["dimensions"][1]["points"] = {"5": "perfect"}
        design["dimensions"][1]["name"] = "grade"
        assert problems("rating", design) == [
            "dimensions[1].name: repeats 'grade', already at dimensions[0]",
            "dimensions[1].points.5: not a point of the scale 0 to 2",
        ]

    def test_a_scale_too_long_for_the_digit_keys_is_refused(self):
        design = copy.deepcopy(LESIONS)
        design["dimensions"][0]["max"] = 20
        assert problems("rating", design) == ["dimensions[0].max: a scale has at most 11 points from min to max"]

    def test_shape_errors_name_the_field(self):
        assert problems("rating", {"fields": [{"name": "Report"}], "dimensions": []}) == [
            "dimensions: needs at least 1 entry, got 0",
            "fields[0].name: must be " + NAME["description"],
        ]
        assert problems("categorical", ["not", "an", "object"]) == [
            ": must be a JSON object (docs/formats.md, Designs)"
        ]

    def test_a_repeated_label_value_is_named(self):
        design = copy.deepcopy(ASPECTS)
        design["questions"][2]["labels"][1]["value"] = "price"
        assert problems("categorical", design) == [
            "questions[2].labels[1].value: repeats 'price', already at questions[2].labels[0]"
        ]

    def test_a_design_is_refused_for_a_kind_that_takes_none(self):
        assert problems("copa_likert", LESIONS) == [": this task kind takes no design"]


@pytest.mark.django_db
class DesignedProjectTests:
    def test_a_bad_design_stores_no_project(self):
        design = copy.deepcopy(LESIONS)
        design["dimensions"][0]["max"] = 1
        with pytest.raises(ValidationError) as refused:
            project_create(slug="lesions", kind="rating", design=design)
        assert refused.value.message_dict["design"] == ["dimensions[0].max: must be greater than min"]
        assert not Project.objects.exists()

    def test_the_project_s_kind_follows_its_design(self, make_project):
        project = make_project("rating", design=LESIONS)
        kind = project.task_kind
        assert [(d.name, d.level, d.categories) for d in kind.rating_dimensions] == [
            ("grade", "ordinal", (1, 2, 3, 4, 5, 6)),
            ("fit", "interval", (0, 1, 2)),
        ]
        assert kind.check_value({"ratings": {"grade": 6}}, payload={}) == []  # fit may be left out
        assert [str(e) for e in kind.check_value({"ratings": {"grade": 7, "fit": 1}}, payload={})] == [
            "field value.ratings.grade: must be at most 6, got 7"
        ]
        # No comment box in this design: a comment is an unknown field.
        assert kind.check_value({"ratings": {"grade": 2}, "comment": "x"}, payload={})
        assert Project.objects.get(pk=project.pk).task_kind is kind  # one bound kind per design

    def test_a_project_created_without_a_design_stores_the_example(self, make_project):
        project = make_project("categorical")
        assert project.design == get_kind("categorical").design

    def test_a_several_label_question_is_rated_per_label(self, make_project):
        kind = make_project("categorical", design=ASPECTS).task_kind
        value = {"labels": {"food": "pos", "topics": ["view"]}}
        assert kind.check_value(value, payload={}) == []
        assert list(kind.value_ratings(value, None)) == [
            ("", "food", "pos"),
            ("", "topics.price", 0),
            ("", "topics.view", 1),
        ]
        assert [
            str(e) for e in kind.check_value({"labels": {"food": "meh", "service": "pos", "topics": []}}, payload={})
        ] == [
            'field value.labels.food: must be one of "pos", "neg", got "meh"',
            "field value.labels.topics: needs at least 1 entry, got 0",
        ]

    def test_items_are_checked_against_the_design_s_fields(self, make_project, tmp_path):
        project = make_project("rating", design=LESIONS)
        records = [
            {"external_id": "a", "fields": {"report": "Small lesion."}},
            {"external_id": "b", "fields": {"text": "?"}},
        ]
        with pytest.raises(Exception) as refused:
            import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", records))
        assert "line 2" in str(refused.value) and "fields" in str(refused.value)
        assert not project.items.exists()

    def test_hidden_payload_never_reaches_the_rater_s_form(self, make_project):
        kind = make_project("rating", design=LESIONS).task_kind
        payload = {"fields": {"report": "Shown.", "extra": "not declared"}, "meta": {"model": "secret-model"}}
        assert kind.rater_payload(payload) == {"fields": {"report": "Shown."}}
        assert kind.form_context(payload=payload, value=None, peers=[])["fields"] == [
            {"title": "Radiology report", "text": "Shown."}
        ]


@pytest.mark.django_db
class DesignFrozenTests:
    def _answered(self, make_project, make_user, tmp_path) -> Project:
        project = make_project("rating", design=LESIONS)
        import_items(
            project=project, path=write_jsonl(tmp_path / "i.jsonl", [{"external_id": "a", "fields": {"report": "R"}}])
        )
        return project

    def test_before_items_the_design_may_change(self, make_project):
        project = make_project("rating", design=LESIONS)
        changed = {**LESIONS, "comment": True}
        assert project_update(project=project, design=changed).design == changed

    def test_with_items_the_fields_stay_but_the_dimensions_may_change(self, make_project, make_user, tmp_path):
        project = self._answered(make_project, make_user, tmp_path)
        with pytest.raises(ValidationError) as refused:
            project_update(project=project, design={**LESIONS, "fields": [{"name": "summary"}]})
        assert refused.value.message_dict == {"design": [DESIGN_FIELDS_LOCKED_BY_ITEMS]}
        fewer = {**LESIONS, "dimensions": LESIONS["dimensions"][:1]}
        assert project_update(project=project, design=fewer).design == fewer

    def test_after_the_first_answer_a_changed_design_is_refused(self, make_project, make_user, tmp_path):
        project = self._answered(make_project, make_user, tmp_path)
        annotation_submit(item=project.items.get(), user=make_user("ann"), value={"ratings": {"grade": 3}})
        changed = copy.deepcopy(LESIONS)
        changed["dimensions"][0]["points"]["6"] = "worst"
        with pytest.raises(ValidationError) as refused:
            project_update(project=project, design=changed)
        assert refused.value.message_dict == {"design": [DESIGN_LOCKED_BY_ANSWERS]}
        project.refresh_from_db()
        assert project.design == LESIONS and Annotation.objects.count() == 1
        assert project_update(project=project, design=copy.deepcopy(LESIONS)).design == LESIONS  # the same: no change


@pytest.mark.parametrize("name", ["rating", "categorical"])
def test_each_designed_kind_s_example_design_passes_its_own_checks(name):
    kind = get_kind(name)
    assert kind.check_design(kind.design) == []
    assert kind.with_design(copy.deepcopy(kind.design)) is kind
