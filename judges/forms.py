from __future__ import annotations

from typing import cast

from django import forms

from annotation import jsonsafe
from annotation.models import Project
from judges.backends import backend_names, get_backend, runnable_backend_names
from judges.endpoints import endpoint_names, local_model_names
from judges.models import MAX_CONCURRENCY, Judge
from judges.prompting import prompts_for


def backend_choices(*, kind: str) -> list[tuple[str, str]]:
    """Backends that have a prompt for ``kind``: a kind without a baseline is not offered one."""
    return [(name, get_backend(name).label) for name in backend_names() if prompts_for(kind=kind, backend=name)]


def model_help_text() -> str:
    """What the model field takes: the server's name for openai, one of the operator's names for vllm."""
    names = ", ".join(local_model_names()) or "none configured"
    return f"The server's model name for openai (e.g. Qwen/Qwen3-32B); for vllm one of the operator's models: {names}."


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="Empty: named after model and prompt.")
    backend = forms.ChoiceField()
    model = forms.CharField(max_length=200, required=False, help_text="e.g. Qwen/Qwen3-32B; not for baselines.")
    endpoint = forms.ChoiceField(
        required=False,
        help_text="Where the openai backend sends requests: an endpoint the operator configured (docs/security.md).",
    )
    prompt = forms.ChoiceField(required=False, help_text="Empty: the kind's default for the backend.")
    temperature = forms.FloatField(min_value=0.0, max_value=2.0, initial=0.0)
    max_tokens = forms.IntegerField(min_value=1, max_value=131072, initial=2048, label="Max tokens")
    seed = forms.IntegerField(required=False, initial=42, help_text="Also orders multiple-choice options.")

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        backends = backend_choices(kind=project.kind)
        cast(forms.ChoiceField, self.fields["backend"]).choices = backends
        self.fields["backend"].initial = backends[0][0] if backends else None
        cast(forms.ChoiceField, self.fields["endpoint"]).choices = [(name, name) for name in endpoint_names()]
        self.fields["model"].help_text = model_help_text()
        keys = {p.key: f"{p.key} — {p.title}" for b, _ in backends for p in prompts_for(kind=project.kind, backend=b)}
        cast(forms.ChoiceField, self.fields["prompt"]).choices = [("", "default"), *keys.items()]


class RunForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    concurrency = forms.IntegerField(
        min_value=1,
        max_value=MAX_CONCURRENCY,
        required=False,
        help_text="Requests in flight per worker; empty: the default.",
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Only this project's judges: no project sees another's judges, models or endpoints.
        # Imported judges are not run: their outputs came from a file.
        runnable = runnable_backend_names()
        cast(forms.ModelChoiceField, self.fields["judge"]).queryset = Judge.objects.filter(
            project=project, backend__in=runnable
        ).order_by("name", "id")


class RunImportForm(forms.Form):
    """A model's outputs made elsewhere (docs/formats.md, Judge runs); empty fields take the file's provenance.

    Prefixed ``import``: the judges page also has the judge form, whose fields share these names.
    """

    prefix = "import"

    file = forms.FileField(label="Run file (.jsonl or .csv, UTF-8)")
    model = forms.CharField(max_length=200, required=False, help_text="The model that produced it, e.g. gpt-4o.")
    prompt = forms.CharField(
        max_length=100, required=False, help_text="A prompt NAME.vN or any label; empty: the file's, else unspecified."
    )
    name = forms.CharField(max_length=100, required=False, help_text="Empty: named after model and prompt.")
    producer_run_id = forms.CharField(
        max_length=200, required=False, label="Producer run id", help_text="Your own run or batch id."
    )
    sampling = forms.JSONField(
        decoder=jsonsafe.Decoder,
        required=False,
        label="Sampling parameters",
        help_text='JSON, e.g. {"temperature": 0.7, "seed": 7}.',
    )
    allow_same_outputs = forms.BooleanField(
        required=False,
        label="Import even if another run has the same outputs",
        help_text="A file exported from this project and imported again is refused, naming the run it repeats.",
    )
