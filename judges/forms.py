from __future__ import annotations

from django import forms

from judges.models import MAX_CONCURRENCY, Backend, Judge
from judges.prompting import prompts_for


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="Empty: named after model and prompt.")
    backend = forms.ChoiceField(choices=Backend.choices, initial=Backend.OPENAI)
    model = forms.CharField(max_length=200, required=False, help_text="e.g. Qwen/Qwen3-32B; not for baselines.")
    base_url = forms.CharField(
        max_length=500, required=False, label="Base URL", help_text="openai backend; empty: OPENAI_BASE_URL."
    )
    api_key_env = forms.CharField(
        max_length=100, required=False, label="API key variable", help_text="Empty: OPENAI_API_KEY."
    )
    prompt = forms.ChoiceField(required=False, help_text="Empty: the kind's default for the backend.")
    temperature = forms.FloatField(min_value=0.0, max_value=2.0, initial=0.0)
    max_tokens = forms.IntegerField(min_value=1, max_value=131072, initial=2048, label="Max tokens")
    seed = forms.IntegerField(required=False, initial=42, help_text="Also orders multiple-choice options.")

    def __init__(self, *args, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        keys = {p.key: f"{p.key} — {p.title}" for b in Backend.values for p in prompts_for(kind=kind, backend=b)}
        self.fields["prompt"].choices = [("", "default"), *keys.items()]


class RunForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    concurrency = forms.IntegerField(
        min_value=1,
        max_value=MAX_CONCURRENCY,
        required=False,
        help_text="Requests in flight per worker; empty: the default.",
    )

    def __init__(self, *args, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = Judge.objects.filter(kind=kind).order_by("name", "id")
