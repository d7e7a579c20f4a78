"""Every task kind accepts its documented examples and refuses bad input with a usable message."""

import copy
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.template.loader import get_template

from annotation.kinds import all_kinds, get_kind
from annotation.kinds.base import object_schema
from annotation.kinds.ipqa_core_intent import CORE_NEEDS_EXPRESSED, JUDGE_EVERY_INTENT
from annotation.kinds.label_contextualization import (
    REVISE_NEEDS_NOTE,
    STATEMENT_ENDS_WITH_PERIOD,
    STATEMENT_STARTS_WITH_TO,
)
from annotation.kinds.rationale_inspection import FAIL_NEEDS_CATEGORY, PASS_HAS_NO_CATEGORY
from tests.validation.reference_kind import ReferenceRating

KIND_NAMES = [kind.name for kind in all_kinds()]
ROOT = Path(settings.BASE_DIR)
#: Shared modules that must work for any kind without naming one (a new kind adds files, not edits).
SHARED_MODULES = (
    "annotation/demo.py",
    "docs/build_formats.py",
    "judges/prompting.py",
    "judges/baselines.py",
    "static/concord/workspace.js",
    "templates/annotation/workspace.html",
)


def undescribed(schema: dict, prefix: str = "") -> list[str]:
    """Paths of the properties (nested ones too) without a ``description``; a ``const`` tag needs none."""
    missing = []
    for name, spec in schema.get("properties", {}).items():
        if "const" not in spec and not spec.get("description"):
            missing.append(f"{prefix}{name}")
        items = spec.get("items", {}) if spec.get("type") == "array" else {}
        missing += undescribed(spec, f"{prefix}{name}.") + undescribed(items, f"{prefix}{name}[].")
    return missing


def messages(errors):
    return {e.field: e.message for e in errors}


class RegistryTests:
    def test_every_kind_in_settings_is_registered_once_in_settings_order(self):
        classes = [path.rsplit(".", 1)[1] for path in settings.CONCORD_TASK_KINDS]
        assert [type(kind).__name__ for kind in all_kinds()] == classes
        assert len(set(KIND_NAMES)) == len(KIND_NAMES)

    @pytest.mark.parametrize("path", SHARED_MODULES)
    def test_shared_modules_name_no_kind(self, path):
        text = (ROOT / path).read_text(encoding="utf-8")
        assert [name for name in KIND_NAMES if name in text] == []

    def test_unknown_kind_names_the_known_ones(self):
        with pytest.raises(KeyError, match="copa_likert"):
            get_kind("likert")


class _ShownInOrder(ReferenceRating):
    """A value that records the order its rater saw (as a kind with ``presentation`` does)."""

    value_schema = object_schema({"value": {"type": "number"}, "order": {"type": "string"}}, required=["value"])
    presentation_fields = ("order",)


class PresentationFieldsTests:
    def test_raters_who_saw_different_orders_agree_and_gold_leaves_the_order_out(self):
        kind = _ShownInOrder()
        values = [{"value": 1, "order": "ab"}, {"value": 1, "order": "ba"}, {"value": 0, "order": "ab"}]
        assert kind.decision_key(values[0]) == kind.decision_key(values[1]) != kind.decision_key(values[2])
        assert kind.consensus(values) == {"value": 1}

    def test_without_presentation_fields_the_majority_value_is_kept_whole(self):
        kind = ReferenceRating()
        values = [{"value": 1}, {"value": 1}, {"value": 0}]
        assert kind.consensus(values) is values[0]


class StatementTests:
    def test_a_kind_without_statements_says_so_when_asked_for_one(self):
        with pytest.raises(NotImplementedError):
            get_kind("copa_likert").statement_of(get_kind("copa_likert").example_value())


@pytest.mark.parametrize("name", KIND_NAMES)
class LayoutTests:
    """A kind is found by its name: its folder holds its module, form partial and form script."""

    def test_the_kind_lives_in_its_own_folder(self, name):
        module = Path(__import__(type(get_kind(name)).__module__, fromlist=["_"]).__file__)
        assert module == ROOT / "annotation" / "kinds" / name / "__init__.py"

    def test_the_form_partial_is_found_by_the_kind_s_name(self, name):
        template = get_template(get_kind(name).form_template)
        assert Path(template.origin.name) == ROOT / "annotation" / "kinds" / name / "form.html"

    def test_the_form_script_is_served_as_a_static_file_by_the_kind_s_name(self, name):
        script = get_kind(name).form_script
        assert script == f"kinds/{name}/form.js"
        assert Path(finders.find(script)) == ROOT / "annotation" / "kinds" / name / "form.js"

    def test_no_other_file_of_the_kind_s_folder_is_a_static_file(self, name):
        assert finders.find(f"kinds/{name}/__init__.py") is None
        assert finders.find(f"kinds/{name}/form.html") is None

    def test_every_schema_field_has_a_meaning_for_the_docs(self, name):
        kind = get_kind(name)
        schemas = [kind.payload_schema, *kind.value_schema.get("oneOf", [kind.value_schema])]
        assert [path for schema in schemas for path in undescribed(schema)] == []


@pytest.mark.parametrize("name", KIND_NAMES)
class ExampleTests:
    def test_example_payload_is_valid(self, name):
        kind = get_kind(name)
        assert kind.check_payload(kind.example_payload()) == []

    def test_example_value_is_valid_for_the_example_payload(self, name):
        kind = get_kind(name)
        assert kind.check_value(kind.example_value(), payload=kind.example_payload()) == []

    def test_unknown_payload_field_is_named(self, name):
        kind = get_kind(name)
        errors = kind.check_payload({**kind.example_payload(), "questoin": "typo"})
        assert any("unknown field 'questoin'" in e.message for e in errors)

    def test_payload_that_is_not_an_object(self, name):
        errors = get_kind(name).check_payload(["not", "an", "object"])
        assert errors and "must be of type object" in errors[0].message


class _UnreadablePayload(dict):
    """A payload that fails the test if anything reads it."""

    def __getitem__(self, key):
        raise AssertionError(f"the value check read payload[{key!r}]")

    get = keys = items = values = __iter__ = __contains__ = __len__ = __getitem__


@pytest.mark.parametrize("name", [k.name for k in all_kinds() if not k.value_rules_need_payload])
class ValueRulesWithoutPayloadTests:
    """A kind that declares its value rules need no payload (imports then skip loading payloads)
    checks values without reading it: the same verdicts as with the real payload."""

    def test_example_value(self, name):
        kind = get_kind(name)
        assert kind.check_value(kind.example_value(), payload=_UnreadablePayload()) == []

    def test_refused_values_are_refused_alike(self, name):
        kind = get_kind(name)
        example = kind.example_value()
        broken = [{}, {**example, "unknown": 1}] + [{**example, field: None} for field in example]
        for value in broken:
            with_payload = kind.check_value(value, payload=kind.example_payload())
            assert with_payload
            assert kind.check_value(value, payload=_UnreadablePayload()) == with_payload


class _PartlyReadablePayload(dict):
    """A payload holding only some fields, which fails the test if any other is read."""

    def __getitem__(self, key):
        if key not in self.keys():
            raise AssertionError(f"the value check read payload[{key!r}], which it does not declare")
        return super().__getitem__(key)

    def get(self, key, default=None):
        return self[key]


@pytest.mark.parametrize("name", [k.name for k in all_kinds() if k.value_rules_payload_keys])
class ValueRulesPayloadKeysTests:
    """A kind that names the payload fields its value rules read (imports then load only those)
    gives the same verdicts from those fields alone as from the whole payload."""

    def partial(self, kind):
        payload = kind.example_payload()
        return _PartlyReadablePayload({key: payload[key] for key in kind.value_rules_payload_keys})

    def test_example_value(self, name):
        kind = get_kind(name)
        assert kind.check_value(kind.example_value(), payload=self.partial(kind)) == []

    def test_refused_values_are_refused_alike(self, name):
        kind = get_kind(name)
        example = kind.example_value()
        broken = [{}, {**example, "unknown": 1}] + [{**example, field: None} for field in example]
        broken += [{**example, field: [] if isinstance(example[field], list) else example[field]} for field in example]
        for value in broken:
            assert kind.check_value(value, payload=self.partial(kind)) == kind.check_value(
                value, payload=kind.example_payload()
            )


def test_the_kinds_whose_value_rules_read_the_item_declare_it():
    """The kinds whose rules tie a value to its item (candidate intents, options) load payloads."""
    assert get_kind("ipqa_core_intent").value_rules_need_payload
    assert get_kind("intent_mcq").value_rules_need_payload
    assert not get_kind("copa_likert").value_rules_need_payload
    assert get_kind("intent_mcq").value_rules_payload_keys == ("options",)


class IpqaTests:
    kind = get_kind("ipqa_core_intent")

    def test_missing_question_is_named(self):
        payload = self.kind.example_payload()
        del payload["question"]
        assert messages(self.kind.check_payload(payload)) == {"": "missing required field 'question'"}

    def test_candidate_intents_must_not_be_empty(self):
        payload = {**self.kind.example_payload(), "candidate_intents": []}
        assert "needs at least 1 entry" in messages(self.kind.check_payload(payload))["candidate_intents"]

    def test_every_candidate_is_judged(self):
        value = self.kind.example_value()
        value["intents"].pop()
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert JUDGE_EVERY_INTENT in errors[0].message and "not judged" in errors[0].message

    def test_core_requires_expressed(self):
        value = self.kind.example_value()
        value["intents"][1] = {**value["intents"][1], "expressed": False, "core": True}
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert messages(errors) == {"value.intents[1].core": CORE_NEEDS_EXPRESSED}

    def test_yes_no_must_be_boolean(self):
        value = self.kind.example_value()
        value["intents"][0]["expressed"] = "yes"
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert messages(errors)["value.intents[0].expressed"].startswith("must be of type boolean")


class CopaTests:
    kind = get_kind("copa_likert")

    def test_score_of_three_is_refused(self):
        value = {"scores": {**self.kind.example_value()["scores"], "CT": 3}}
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert messages(errors) == {"value.scores.CT": "must be one of 0, 1, 2, got 3"}

    def test_a_score_of_the_wrong_type_is_reported_once(self):
        """ "two" is one wrong value: it says so once (its type), not also "must be one of 0, 1, 2"."""
        value = {"scores": {**self.kind.example_value()["scores"], "CT": "two"}}
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert [(e.field, e.message) for e in errors] == [("value.scores.CT", 'must be of type integer, got str "two"')]

    def test_missing_factor_is_named(self):
        value = copy.deepcopy(self.kind.example_value())
        del value["scores"]["AMR"]
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert messages(errors) == {"value.scores": "missing required field 'AMR'"}

    def test_profile_needs_all_six_factors(self):
        payload = copy.deepcopy(self.kind.example_payload())
        del payload["profile"]["MS"]
        assert messages(self.kind.check_payload(payload)) == {"profile": "missing required field 'MS'"}

    def test_float_score_is_refused(self):
        value = {"scores": {**self.kind.example_value()["scores"], "SA": 1.5}}
        assert self.kind.check_value(value, payload=self.kind.example_payload())


class RationaleTests:
    kind = get_kind("rationale_inspection")

    def test_fail_needs_a_category(self):
        errors = self.kind.check_value({"verdict": 0}, payload=self.kind.example_payload())
        assert messages(errors) == {"value.failure_categories": FAIL_NEEDS_CATEGORY}

    def test_pass_takes_no_category(self):
        value = {"verdict": 1, "failure_categories": ["theoretical_error"]}
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert messages(errors) == {"value.failure_categories": PASS_HAS_NO_CATEGORY}

    def test_unknown_category_is_refused(self):
        value = {"verdict": 0, "failure_categories": ["vibes"]}
        errors = self.kind.check_value(value, payload=self.kind.example_payload())
        assert "must be one of" in messages(errors)["value.failure_categories[0]"]

    def test_rationale_entry_needs_theory(self):
        payload = copy.deepcopy(self.kind.example_payload())
        del payload["rationale"]["rationales"][0]["theory"]
        assert messages(self.kind.check_payload(payload)) == {
            "rationale.rationales[0]": "missing required field 'theory'"
        }


class LabelTests:
    kind = get_kind("label_contextualization")

    def check(self, value):
        return messages(self.kind.check_value(value, payload=self.kind.example_payload()))

    def test_statement_style_rules(self):
        errors = self.kind.check_value({"action": "write", "statement": "uses data"}, payload={})
        assert [(e.field, e.message) for e in errors] == [
            ("value.statement", STATEMENT_STARTS_WITH_TO),
            ("value.statement", STATEMENT_ENDS_WITH_PERIOD),
        ]
        assert self.check({"action": "write", "statement": "To use data from the cited paper."}) == {}

    def test_unknown_action_lists_the_actions(self):
        assert self.check({"action": "draft"}) == {
            "value.action": 'must be one of "write", "cannot_contextualize", "review", got "draft"'
        }

    def test_write_needs_a_statement(self):
        assert self.check({"action": "write"}) == {"value": "missing required field 'statement'"}

    def test_cannot_contextualize_needs_a_reason(self):
        assert self.check({"action": "cannot_contextualize"}) == {"value": "missing required field 'reason'"}

    def test_revise_needs_a_note(self):
        value = {"action": "review", "statement": "To use data.", "author": "ann1", "verdict": "revise"}
        assert self.check(value) == {"value.note": REVISE_NEEDS_NOTE}
        assert self.check({**value, "verdict": "accept"}) == {}


class McqTests:
    kind = get_kind("intent_mcq")

    def test_answers_must_exist(self):
        payload = {**self.kind.example_payload(), "answers": [0, 7]}
        assert "option numbers [7] do not exist" in messages(self.kind.check_payload(payload))["answers"]

    def test_chosen_must_exist(self):
        errors = self.kind.check_value({"chosen": [4]}, payload=self.kind.example_payload())
        assert "option numbers [4] do not exist" in messages(errors)["value.chosen"]

    def test_at_most_ten_options(self):
        payload = {**self.kind.example_payload(), "options": [f"To do {i}." for i in range(11)]}
        assert "at most 10" in messages(self.kind.check_payload(payload))["options"]

    def test_empty_choice_is_refused(self):
        errors = self.kind.check_value({"chosen": []}, payload=self.kind.example_payload())
        assert "needs at least 1 entry" in messages(errors)["value.chosen"]
