"""The Generate items form: a source file upload, a step of the project's kind, a backend, an endpoint
by name, sampling parameters. Nothing typed here names a URL or a server path."""

from __future__ import annotations

from django import forms

from annotation.models import Project
from judges.backends import get_backend, runnable_backend_names
from judges.endpoints import endpoint_names
from judges.forms import model_help_text
from judges.generation.steps import steps_for_kind
from judges.generation.steps.copa_profile import CURRENT, PRECEDING
from judges.services import DEFAULT_MAX_TOKENS, DEFAULT_SEED

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
    profile_from = forms.ChoiceField(
        choices=[
            (PRECEDING, "preceding: questions before the target (CoPA Table 3)"),
            (CURRENT, "current: and the target question itself (Table A4)"),
        ],  # fmt: skip
        initial=PRECEDING,
        required=False,
        label="Profile from (CoPA profiles)",
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["model"].help_text = model_help_text()
        self.steps = steps_for_kind(project.kind)
        self.fields["step"].choices = [(s.name, s.label) for s in self.steps]
        self.fields["backend"].choices = [(name, get_backend(name).label) for name in runnable_backend_names()]
        self.fields["endpoint"].choices = [(name, name) for name in endpoint_names()]
        if not any(step.option_choices.get("profile_from") for step in self.steps):
            del self.fields["profile_from"]

    def step_options(self) -> dict[str, str]:
        value = self.cleaned_data.get("profile_from")
        return {"profile_from": value} if value else {}
