"""CoPA's paper evaluation of a ``copa_likert`` project: the evaluator comparison (``copa_eval``)."""

from __future__ import annotations

from typing import Any

from django import forms

from validation.evaluations.forms import RunsForm, bootstrap_field, checked_bootstrap
from validation.evaluations.registry import PaperEvaluation
from validation.kinds.copa_likert.copa_report import CopaEvalParameters, copa_evaluation

__all__ = ["EVALUATIONS", "CopaEvalForm"]

NO_SOURCE = "choose at least one judge run or people's gold"


class CopaEvalForm(RunsForm):
    people = forms.BooleanField(label="People's gold", required=False)
    bootstrap = bootstrap_field()
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def clean_bootstrap(self) -> int:
        return checked_bootstrap(self.cleaned_data.get("bootstrap"), "copa_eval")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if not data.get("run") and not data.get("people"):
            raise forms.ValidationError(NO_SOURCE)
        return data

    def parameters(self) -> CopaEvalParameters:
        data = self.cleaned_data
        return CopaEvalParameters(
            runs=tuple(data["run"]), people=data["people"], bootstrap=data["bootstrap"], seed=data.get("seed") or 0
        )


EVALUATIONS = (
    PaperEvaluation(
        name="copa_eval",
        slug="copa",
        title="CoPA evaluator comparison",
        summary="Tables 3, 4, 6, A4, A6-A9, Figure 5",
        from_json=CopaEvalParameters.from_json_dict,
        evaluate=copa_evaluation,
        form=CopaEvalForm,
        template="validation/copa_eval.html",
    ),
)
