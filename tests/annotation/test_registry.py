"""The one registry type: lookups name what is known, a load runs once and again after a change, and
the test hooks (``registered``, ``reset_for_tests``, a changed setting) leave no trace behind."""

import pytest

from annotation.kinds import KINDS, get_kind
from annotation.registry import DUPLICATE_ENTRY, Registry
from judges.generation.steps import GENERATION_STEPS
from judges.prompting import PROMPTS
from tests.validation.reference_kind import ReferenceRating

REFERENCE = "tests.validation.reference_kind.ReferenceRating"


class RegistryTests:
    def test_entries_keep_their_order_and_an_unknown_name_lists_the_known(self):
        registry: Registry[int] = Registry("number")
        registry.register("one", 1)
        registry.register("two", 2)
        assert registry.names() == ["one", "two"] and registry.all() == [1, 2]
        assert registry.items() == [("one", 1), ("two", 2)] and "one" in registry and len(registry) == 2
        with pytest.raises(KeyError, match=r"unknown number 'three' \(known: one, two\)"):
            registry.get("three")

    def test_a_name_registered_twice_is_refused_unless_the_registry_replaces(self):
        strict: Registry[int] = Registry("number")
        strict.register("one", 1)
        with pytest.raises(ValueError, match=DUPLICATE_ENTRY.format(what="number", name="one")):
            strict.register("one", 2)
        replacing: Registry[int] = Registry("number", replaces=True)
        replacing.register("one", 1)
        replacing.register("one", 2)
        assert replacing.get("one") == 2 and len(replacing) == 1

    def test_the_load_runs_on_first_read_once_and_again_after_a_reset(self):
        calls = []

        def load():
            calls.append(1)
            yield "one", len(calls)

        registry: Registry[int] = Registry("number", load=load)
        assert calls == []
        assert registry.get("one") == 1 and registry.get("one") == 1 and calls == [1]
        registry.reset_for_tests()
        assert registry.get("one") == 2

    def test_a_load_that_yields_a_name_twice_fails(self):
        registry: Registry[int] = Registry("number", load=lambda: [("one", 1), ("one", 2)])
        with pytest.raises(ValueError, match="registered twice"):
            registry.names()

    def test_registered_adds_an_entry_for_the_block_and_restores_what_was_there(self):
        registry: Registry[int] = Registry("number", load=lambda: [("one", 1)])
        with registry.registered("one", 10), registry.registered("two", 2):
            assert registry.items() == [("one", 10), ("two", 2)]
        assert registry.items() == [("one", 1)]

    def test_a_registry_that_follows_another_loads_again_when_that_one_changes(self):
        base: Registry[int] = Registry("number", load=lambda: [("one", 1)])
        doubled: Registry[int] = Registry("double", load=lambda: [(n, 2 * v) for n, v in base.items()], follows=base)
        assert doubled.items() == [("one", 2)]
        with base.registered("two", 2):
            assert doubled.items() == [("one", 2), ("two", 4)]
        assert doubled.items() == [("one", 2)]


class KindRegistryTests:
    def test_a_kind_added_to_the_setting_is_known_and_gone_once_the_setting_is_restored(self, settings):
        assert "reference_rating" not in KINDS
        configured = list(settings.CONCORD_TASK_KINDS)
        settings.CONCORD_TASK_KINDS = [*configured, REFERENCE]
        assert get_kind("reference_rating").label == ReferenceRating.label
        settings.CONCORD_TASK_KINDS = configured
        assert "reference_rating" not in KINDS

    def test_the_registries_found_in_the_kinds_folders_follow_the_kinds(self, settings):
        """A kind taken out of the setting takes its steps and prompts with it; a kind registered for
        a block without folders brings none."""
        steps, prompts, configured = GENERATION_STEPS.names(), PROMPTS.names(), list(settings.CONCORD_TASK_KINDS)
        assert any(step.kind == "copa_likert" for step in GENERATION_STEPS.all())
        with KINDS.registered("reference_rating", ReferenceRating()):
            assert GENERATION_STEPS.names() == steps and PROMPTS.names() == prompts
        settings.CONCORD_TASK_KINDS = [p for p in settings.CONCORD_TASK_KINDS if not p.endswith(".CopaLikert")]
        assert "copa_likert" not in KINDS
        assert not any(step.kind == "copa_likert" for step in GENERATION_STEPS.all())
        assert not any(prompt.kind == "copa_likert" for prompt in PROMPTS.all())
        settings.CONCORD_TASK_KINDS = configured
        assert GENERATION_STEPS.names() == steps and PROMPTS.names() == prompts
