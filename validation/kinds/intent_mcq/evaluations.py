"""IntentGrasp's paper evaluations of an ``intent_mcq`` project: the model evaluation (``mcq_eval``)."""

from __future__ import annotations

from typing import Any

from django import forms

from validation.evaluations.forms import RunsForm
from validation.evaluations.registry import PaperEvaluation
from validation.kinds.intent_mcq.mcq_report import NO_RUN, McqEvalParameters, mcq_evaluation

__all__ = ["EVALUATIONS", "McqEvalForm"]


class McqEvalForm(RunsForm):
    std = forms.ChoiceField(
        label="Std over runs",
        choices=[
            ("sample", "sample (ddof 1, Table 8 All Set)"),
            ("population", "population (ddof 0, Tables 8 Gem, 9, 2)"),
        ],
        required=False,
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("run"):
            raise forms.ValidationError(NO_RUN)
        return data

    def parameters(self) -> McqEvalParameters:
        return McqEvalParameters(runs=tuple(self.cleaned_data["run"]), std=self.cleaned_data.get("std") or "sample")


EVALUATIONS = (
    PaperEvaluation(
        name="mcq_eval",
        slug="mcq",
        title="IntentGrasp model evaluation",
        summary="runs, baselines, breakdowns",
        from_json=McqEvalParameters.from_json_dict,
        evaluate=mcq_evaluation,
        form=McqEvalForm,
        template="validation/mcq_eval.html",
    ),
)
