"""The aggregation's parameters as its page and the API read them."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from validation.aggregation.build import AggregateParameters
from validation.aggregation.methods import METHOD_LABELS, METHODS
from validation.evaluations.forms import RunsForm
from validation.report_jobs import request_bootstrap_max

__all__ = ["AggregateForm"]


class AggregateForm(RunsForm):
    method = forms.ChoiceField(label="Method", choices=[(m, METHOD_LABELS[m]) for m in METHODS], initial="dawid_skene")
    dimension = forms.ChoiceField(label="Dimension", required=False)
    bootstrap = forms.IntegerField(
        label="Bootstrap resamples (competence intervals)", min_value=0, initial=0, required=False
    )
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["run"].label = "Runs counted as raters (labelled as runs)"
        dimensions = self.project.task_kind.rating_dimensions
        cast(forms.ChoiceField, self.fields["dimension"]).choices = [
            ("", "every dimension"),
            *((d.name, d.title) for d in dimensions),
        ]

    def clean_bootstrap(self) -> int:
        value = self.cleaned_data.get("bootstrap") or 0
        if value > request_bootstrap_max():
            raise forms.ValidationError(
                f"a page computes at most {request_bootstrap_max()} resamples; use the aggregate command for more"
            )
        return value

    def parameters(self) -> AggregateParameters:
        data = self.cleaned_data
        return AggregateParameters(
            method=data["method"],
            dimension=data.get("dimension") or "",
            runs=tuple(data["run"]),
            bootstrap=data["bootstrap"],
            seed=data.get("seed") or 0,
        )
