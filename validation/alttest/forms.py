"""The test's parameters as its page and the API read them: runs, ε, q, metric, scope, minimums."""

from __future__ import annotations

from typing import Any

from django import forms

from validation.alttest.build import NO_RUN, AltTestParameters
from validation.alttest.planning import MAX_REQUEST_SIMULATIONS, PlanParameters, parse_sizes
from validation.alttest.statistics import (
    DEFAULT_EPSILON,
    DEFAULT_MIN_ITEMS,
    DEFAULT_MIN_RATERS,
    DEFAULT_Q,
    MAX_MIN_ITEMS,
    MAX_MIN_RATERS,
    METRICS,
    SCOPES,
    AltTestOptions,
)
from validation.evaluations.forms import EvaluationForm, RunsForm, bootstrap_field, checked_bootstrap

__all__ = ["AltTestForm", "AltTestPlanForm"]


class AltTestForm(RunsForm):
    epsilon = forms.FloatField(
        label="ε (the annotators' advantage)",
        min_value=0,
        max_value=1,
        initial=DEFAULT_EPSILON,
        required=False,
        help_text="0.1 crowd workers, 0.15 skilled annotators, 0.2 experts (the paper's guidance)",
    )
    q = forms.FloatField(
        label="False discovery rate q", min_value=0.0001, max_value=0.5, initial=DEFAULT_Q, required=False
    )
    metric = forms.ChoiceField(label="Alignment", choices=[(m, m) for m in METRICS], initial="auto", required=False)
    scope = forms.ChoiceField(label="Scope", choices=[(s, s) for s in SCOPES], initial="both", required=False)
    min_raters = forms.IntegerField(
        label="Annotators an item needs",
        min_value=2,
        max_value=MAX_MIN_RATERS,
        initial=DEFAULT_MIN_RATERS,
        required=False,
    )
    min_items = forms.IntegerField(
        label="Items an annotator needs",
        min_value=1,
        max_value=MAX_MIN_ITEMS,
        initial=DEFAULT_MIN_ITEMS,
        required=False,
    )
    bootstrap = bootstrap_field()
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def clean_bootstrap(self) -> int:
        return checked_bootstrap(self.cleaned_data.get("bootstrap"), "alt_test")

    def clean(self) -> dict[str, Any]:
        super().clean()
        if not self.cleaned_data.get("run") and "run" not in self.errors:
            raise forms.ValidationError(NO_RUN)
        return self.cleaned_data

    def parameters(self) -> AltTestParameters:
        data = self.cleaned_data

        def given(name: str, default: Any) -> Any:
            return default if data.get(name) in (None, "") else data[name]

        defaults = AltTestOptions().to_json_dict()
        options = AltTestOptions.from_json_dict({name: given(name, default) for name, default in defaults.items()})
        return AltTestParameters(
            runs=tuple(data["run"]), options=options, bootstrap=data["bootstrap"], seed=data.get("seed") or 0
        )


TOO_MANY_FOR_A_PAGE = (
    f"a page runs at most {MAX_REQUEST_SIMULATIONS:,} simulations (data sets x draws x sizes); got {{n:,}}: "
    "use fewer, or the alt_test_plan command"
)


class AltTestPlanForm(EvaluationForm):
    """The planner's study: categories, annotators, noises, ε and the sizes to try."""

    categories = forms.IntegerField(label="Categories (labels)", min_value=2, max_value=50, initial=4)
    raters = forms.IntegerField(label="Annotators per item", min_value=2, max_value=20, initial=3)
    rater_noise = forms.FloatField(
        label="Annotators' noise",
        min_value=0,
        max_value=1,
        initial=0.3,
        help_text="0.1 ≈ kappa 0.80, 0.2 ≈ 0.63, 0.3 ≈ 0.48, 0.4 ≈ 0.36",
    )
    model_noise = forms.FloatField(label="Model's noise", min_value=0, max_value=1, initial=0.3)
    epsilon = forms.FloatField(label="ε", min_value=0, max_value=1, initial=DEFAULT_EPSILON)
    sizes = forms.CharField(label="Items to try (from:to:step)", max_length=200, initial="30:200:20")
    datasets = forms.IntegerField(label="Simulated data sets", min_value=1, max_value=200, initial=10)
    boots = forms.IntegerField(label="Draws per data set and size", min_value=1, max_value=100, initial=10)
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**32 - 1, initial=0, required=False)

    def clean_sizes(self) -> tuple[int, ...]:
        try:
            return parse_sizes(self.cleaned_data["sizes"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        super().clean()
        if self.errors:
            return self.cleaned_data
        parameters = self.parameters()
        try:
            parameters.check()
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if parameters.n_simulations > MAX_REQUEST_SIMULATIONS:
            raise forms.ValidationError(TOO_MANY_FOR_A_PAGE.format(n=parameters.n_simulations))
        return self.cleaned_data

    def parameters(self) -> PlanParameters:
        data = self.cleaned_data
        return PlanParameters.from_json_dict({**data, "q": DEFAULT_Q, "seed": data.get("seed") or 0})
