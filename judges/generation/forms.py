"""The Generate items form: a source file upload, a step of the project's kind, the options its steps
declare, a backend, an endpoint by name, sampling parameters. Nothing typed here names a URL or a server path."""

from __future__ import annotations

from typing import cast

from django import forms

from annotation.models import Project
from judges.backends import get_backend, runnable_backend_names
from judges.endpoints import endpoint_names
from judges.forms import model_help_text
from judges.generation.steps import steps_for_kind
from judges.services import DEFAULT_MAX_TOKENS, DEFAULT_SEED

#: Form fields of step options are named after the option, with this prefix.
OPTION_PREFIX = "option_"
#: Records one run may take from an uploaded file at most (a cap of its own, besides the file size).
MAX_LIMIT = 1_000_000


class GenerateForm(forms.Form):
    source = forms.FileField(label="Source file (.jsonl)", help_text="Stack Exchange threads or a label inventory.")
    step = forms.ChoiceField()
    backend = forms.ChoiceField()
    model = forms.CharField(max_length=200, required=False, help_text="e.g. Qwen/Qwen3-32B; not for baselines.")
    endpoint = forms.ChoiceField(required=False, help_text="An endpoint the operator configured, by name.")
    temperature = forms.FloatField(
        min_value=0.0, max_value=2.0, required=False, help_text="Empty: the step's (0.7 for CoPA rationales)."
    )
    max_tokens = forms.IntegerField(min_value=1, max_value=131072, initial=DEFAULT_MAX_TOKENS, label="Max tokens")
    seed = forms.IntegerField(required=False, initial=DEFAULT_SEED)
    limit = forms.IntegerField(
        min_value=1, max_value=MAX_LIMIT, required=False, help_text="Only the first N records; empty: all."
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].help_text = model_help_text()
        self.steps = steps_for_kind(project.kind)
        cast(forms.ChoiceField, self.fields["step"]).choices = [(s.name, s.label) for s in self.steps]
        cast(forms.ChoiceField, self.fields["backend"]).choices = [
            (name, get_backend(name).label) for name in runnable_backend_names()
        ]
        cast(forms.ChoiceField, self.fields["endpoint"]).choices = [(name, name) for name in endpoint_names()]
        # One field per option the kind's steps declare; each applies to the steps that take it.
        for step in self.steps:
            for option in step.declared_options:
                takers = [s.label for s in self.steps if option.name in s.option_choices]
                self.fields.setdefault(
                    f"{OPTION_PREFIX}{option.name}",
                    forms.ChoiceField(
                        choices=option.choices,
                        initial=option.values[0],
                        required=False,
                        label=option.label,
                        help_text=option.help or f"For {', '.join(takers)}.",
                    ),
                )

    def step_options(self) -> dict[str, str]:
        """The options the chosen step takes, as given (the step fills in its defaults)."""
        step = next((s for s in self.steps if s.name == self.cleaned_data.get("step")), None)
        if step is None:
            return {}
        given = {name: self.cleaned_data.get(f"{OPTION_PREFIX}{name}") for name in step.option_choices}
        return {name: value for name, value in given.items() if value}
