"""Backends are described by their attributes and checked against the registry, never named in code."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation.kinds import all_kinds
from judges.backends import backend_choices, backend_class, backend_names
from judges.models import UNKNOWN_BACKEND_FIELD, GenerationRun, Judge
from judges.prompting import prompts_for


class BackendRegistryTests:
    def test_a_judge_on_a_backend_outside_the_registry_is_refused(self):
        with pytest.raises(ValidationError) as refused:
            Judge(backend="gpt").clean()
        assert refused.value.message_dict == {
            "backend": [UNKNOWN_BACKEND_FIELD.format(backend="gpt", known=", ".join(backend_names()))]
        }

    def test_a_generation_run_on_a_backend_outside_the_registry_is_refused(self):
        with pytest.raises(ValidationError):
            GenerationRun(backend="gpt").clean()

    @pytest.mark.parametrize("name", backend_names())
    def test_every_registered_backend_is_accepted_and_says_whether_it_is_a_baseline(self, name):
        Judge(backend=name).clean()
        assert Judge(backend=name).is_baseline is backend_class(name).is_baseline

    def test_the_api_offers_the_registry_s_backends_with_their_labels(self):
        assert backend_choices() == [(name, backend_class(name).label) for name in backend_names()]

    @pytest.mark.parametrize("name", backend_names())
    @pytest.mark.parametrize("kind", [k.name for k in all_kinds()])
    def test_a_backend_runs_baseline_methods_exactly_when_it_is_a_baseline(self, kind, name):
        offered = prompts_for(kind=kind, backend=name)
        assert all(p.baseline is backend_class(name).is_baseline for p in offered)

    def test_an_unknown_backend_runs_no_prompt(self):
        assert prompts_for(kind=all_kinds()[0].name, backend="gpt") == []
