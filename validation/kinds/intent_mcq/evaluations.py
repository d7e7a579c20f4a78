"""IntentGrasp's paper evaluations of an ``intent_mcq`` project: the model evaluation (``mcq_eval``),
and the evaluation sets drawn from an All Set: the Gem Set (``mcq_gem_set``) and uniform subsets
(``mcq_subsets``)."""

from __future__ import annotations

from typing import Any

from django import forms

from validation.evaluations.forms import EvaluationForm, RunsForm
from validation.evaluations.registry import PaperEvaluation
from validation.kinds.intent_mcq.mcq_report import NO_RUN, McqEvalParameters, mcq_evaluation
from validation.kinds.intent_mcq.mcq_sets import MAX_SUBSETS
from validation.kinds.intent_mcq.sets_report import (
    GemSetParameters,
    SubsetsParameters,
    gem_set_evaluation,
    subsets_evaluation,
)

__all__ = ["EVALUATIONS", "GemSetForm", "McqEvalForm", "SubsetsForm"]

BAD_SEEDS = "seeds are whole numbers 0 or more, separated by spaces or commas"


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
        super().clean()
        data = self.cleaned_data
        if not data.get("run"):
            raise forms.ValidationError(NO_RUN)
        return data

    def parameters(self) -> McqEvalParameters:
        return McqEvalParameters(runs=tuple(self.cleaned_data["run"]), std=self.cleaned_data.get("std") or "sample")


class GemSetForm(RunsForm):
    per_domain = forms.IntegerField(label="At most per domain", min_value=1, max_value=1_000_000, initial=50)
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**32 - 1, initial=0, required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if not data.get("run"):
            raise forms.ValidationError("choose each model's first run")
        return data

    def parameters(self) -> GemSetParameters:
        data = self.cleaned_data
        return GemSetParameters(runs=tuple(data["run"]), per_domain=data["per_domain"], seed=data.get("seed") or 0)


class SubsetsForm(EvaluationForm):
    size = forms.IntegerField(label="Instances per subset", min_value=1, max_value=10_000_000, initial=470)
    seeds = forms.CharField(label="Seeds (one subset each)", max_length=400, initial="42 43 44")
    draw = forms.ChoiceField(
        label="Draw",
        choices=[("python", "as the release: random.seed(s); random.sample(...)"), ("numpy", "numpy default_rng")],
        initial="python",
        required=False,
    )

    def clean_seeds(self) -> tuple[int, ...]:
        parts = self.cleaned_data["seeds"].replace(",", " ").split()
        if not parts or not all(p.isdigit() and int(p) < 2**32 for p in parts):
            raise forms.ValidationError(BAD_SEEDS)
        if len(parts) > MAX_SUBSETS:
            raise forms.ValidationError(f"at most {MAX_SUBSETS} seeds")
        return tuple(int(p) for p in parts)

    def parameters(self) -> SubsetsParameters:
        data = self.cleaned_data
        return SubsetsParameters(size=data["size"], seeds=data["seeds"], draw=data.get("draw") or "python")


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
    PaperEvaluation(
        name="mcq_gem_set",
        slug="gem-set",
        title="IntentGrasp Gem Set",
        summary="instances every chosen run fails, downsampled per domain",
        from_json=GemSetParameters.from_json_dict,
        evaluate=gem_set_evaluation,
        form=GemSetForm,
        template="validation/mcq_gem_set.html",
    ),
    PaperEvaluation(
        name="mcq_subsets",
        slug="subsets",
        title="IntentGrasp uniform subsets",
        summary="seeded subsets of the All Set for costly models",
        from_json=SubsetsParameters.from_json_dict,
        evaluate=subsets_evaluation,
        form=SubsetsForm,
        template="validation/mcq_subsets.html",
    ),
)
