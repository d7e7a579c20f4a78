"""The pairwise-preference fixture kind's paper evaluation: position bias (``position_bias``)."""

from __future__ import annotations

from django import forms

from validation.evaluations.forms import EvaluationForm
from validation.evaluations.registry import PaperEvaluation

# Relative: the folder is mounted into validation.kinds only while a test registers the kind.
from .position_bias import NAME, PositionBiasParameters, position_bias

__all__ = ["EVALUATIONS", "PositionBiasForm"]


class PositionBiasForm(EvaluationForm):
    confidence_level = forms.FloatField(label="Confidence level", min_value=0.5, max_value=0.999, initial=0.95)

    def parameters(self) -> PositionBiasParameters:
        return PositionBiasParameters(confidence_level=self.cleaned_data["confidence_level"])


EVALUATIONS = (
    PaperEvaluation(
        name=NAME,
        slug="position-bias",
        title="Position bias",
        summary="how often the response shown first is preferred",
        from_json=PositionBiasParameters.from_json_dict,
        evaluate=position_bias,
        form=PositionBiasForm,
    ),
)
