"""The parameters of a paper evaluation as its page and the API read them.

Every evaluation's form is an :class:`EvaluationForm`: bound to the request's data (the query string
of a page or an API call, or a POSTed form with its files), it knows the project and the person
asking, and ``parameters()`` returns what the evaluation takes. ``RunsForm`` is the choice of the
project's judge runs that most evaluations start from.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms

from annotation.models import Project
from judges.models import JudgeRun
from validation.evaluations.base import MAX_RUNS
from validation.report_jobs import request_bootstrap_max

__all__ = ["EvaluationForm", "RunsForm", "bootstrap_field", "checked_bootstrap"]


class EvaluationForm(forms.Form):
    """An evaluation's parameters. Subclasses define the fields and ``parameters()``."""

    def __init__(self, data: Any = None, files: Any = None, *, project: Project, user: Any = None) -> None:
        super().__init__(data, files)
        self.project = project
        self.user = user

    def parameters(self) -> Any:
        """The evaluation's parameters from the cleaned data."""
        raise NotImplementedError


class RunsForm(EvaluationForm):
    run = forms.TypedMultipleChoiceField(
        label="Judge runs", coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = JudgeRun.objects.filter(project=self.project, judge__kind=self.project.kind).select_related("judge")
        cast(forms.ChoiceField, self.fields["run"]).choices = [
            (run.pk, f"run {run.pk}: {run.judge.name} ({run.judge.backend_label}, {run.judge.prompt_key})")
            for run in runs.order_by("id")
        ]

    def clean_run(self) -> list[int]:
        runs = self.cleaned_data["run"]
        if len(runs) > MAX_RUNS:
            raise forms.ValidationError(f"choose at most {MAX_RUNS} runs")
        return runs


def bootstrap_field() -> forms.IntegerField:
    return forms.IntegerField(label="Bootstrap resamples", min_value=0, initial=1000, required=False)


def checked_bootstrap(value: int | None, command: str) -> int:
    """The resamples asked for (1000 when blank), refused past what a request may compute."""
    value = 1000 if value is None else value
    if value > request_bootstrap_max():
        raise forms.ValidationError(
            f"a page computes at most {request_bootstrap_max()} resamples; use the {command} command for more"
        )
    return value
