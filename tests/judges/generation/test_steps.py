"""Generation steps are found by folder: each kind's steps.py lists its steps with their options, and
the form, the checklist and the demo read them from there."""

from __future__ import annotations

import pytest

from annotation.kinds import all_kinds
from annotation.setup_checklist import setup_checklist
from judges.generation.demo import SOURCES_DIR, demo_steps
from judges.generation.forms import GenerateForm
from judges.generation.steps import all_steps, get_step, steps_for_kind
from judges.kinds import kind_module

pytestmark = pytest.mark.django_db


class StepRegistryTests:
    def test_every_step_lives_in_the_folder_of_the_kind_it_makes(self):
        for step in all_steps():
            module = kind_module(step.kind, "steps")
            assert module is not None and type(step) in module.STEPS
            assert get_step(step.name).kind == step.kind

    def test_kinds_without_a_steps_module_have_no_steps(self):
        without = [k.name for k in all_kinds() if kind_module(k.name, "steps") is None]
        assert without and all(not steps_for_kind(name) for name in without)

    def test_every_declared_option_has_its_default_first_and_cleans_to_it(self):
        for step in all_steps():
            for option in step.declared_options:
                assert step.clean_options({})[option.name] == option.values[0]
                with pytest.raises(ValueError, match="unknown value"):
                    step.clean_options({option.name: "no-such-value"})

    def test_each_step_with_a_demo_names_a_source_file_that_exists(self):
        assert demo_steps()
        for step in demo_steps():
            assert (SOURCES_DIR / step.demo.source_file).is_file()
            step.clean_options(step.demo.options)


class GenerateFormTests:
    def test_the_form_offers_the_options_the_kinds_steps_declare_and_no_other(self, make_project):
        copa, ipqa = make_project("copa_likert"), make_project("ipqa_core_intent")
        copa_fields = set(GenerateForm(project=copa).fields)
        ipqa_fields = set(GenerateForm(project=ipqa).fields)
        declared = {f"option_{o.name}" for s in steps_for_kind("copa_likert") for o in s.declared_options}
        assert declared and declared <= copa_fields
        assert not {f for f in ipqa_fields if f.startswith("option_")}


class ChecklistTests:
    def test_generate_items_is_offered_only_for_kinds_some_step_makes(self, make_project):
        for kind in all_kinds():
            project = make_project(kind.name, slug=kind.name.replace("_", "-"))
            keys = {step.key for step in setup_checklist(project=project)}
            assert ("generate_items" in keys) == bool(steps_for_kind(kind.name)), kind.name
