"""IPQA's paper evaluations of an ``ipqa_core_intent`` project: IPQA-Eval (``ipqa_eval``) and the people's
validation by question complexity (``ipqa_validation``).

IPQA-Eval's page and the API take a predictions file (JSONL: ``external_id``, ``predicted_intents``; at most
``MAX_PAGE_UPLOAD_BYTES``, the command reads any size) and a judge run over an ``ipqa_eval_match``
project on which the person asking is a researcher or expert too.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, cast

from django import forms
from django.db.models import QuerySet

from annotation.errors import ValidationFailed
from annotation.models import Project, Role
from judges.models import JudgeRun
from validation.evaluations.forms import EvaluationForm, bootstrap_field, checked_bootstrap
from validation.evaluations.registry import PaperEvaluation
from validation.kinds.ipqa_core_intent.ipqa_pairs import MATCH_KIND, read_predictions
from validation.kinds.ipqa_core_intent.ipqa_report import IpqaEvalParameters, ipqa_evaluation
from validation.kinds.ipqa_core_intent.validation_report import IpqaValidationParameters, ipqa_validation_evaluation

__all__ = [
    "EVALUATIONS",
    "MAX_PAGE_UPLOAD_BYTES",
    "UPLOAD_TOO_LARGE",
    "IpqaEvalForm",
    "IpqaValidationForm",
    "match_runs",
]

#: Bytes of a predictions file the page and the API accept (the command reads any size).
MAX_PAGE_UPLOAD_BYTES = 16 * 1024 * 1024
UPLOAD_TOO_LARGE = f"the predictions file is larger than {MAX_PAGE_UPLOAD_BYTES // (1024 * 1024)} MiB"
READERS = {Role.RESEARCHER, Role.EXPERT}


def match_runs(user: Any) -> QuerySet[JudgeRun]:
    """Runs over ``ipqa_eval_match`` projects whose researchers or experts include ``user``."""
    runs = JudgeRun.objects.filter(project__kind=MATCH_KIND, judge__kind=MATCH_KIND).select_related("judge", "project")
    if not user.is_superuser:
        runs = runs.filter(project__memberships__user=user, project__memberships__role__in=READERS).distinct()
    return runs.order_by("id")


def _predictions(upload: Any, project: Project) -> dict[str, tuple[str, ...]]:
    """The uploaded file read as the command reads a file (it needs the .jsonl name to be read as JSONL)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as copy:
        upload.seek(0)
        shutil.copyfileobj(upload, copy)
        copy.flush()
        return read_predictions(copy.name, project=project)


class IpqaEvalForm(EvaluationForm):
    predictions = forms.FileField(label="Predictions (JSONL: external_id, predicted_intents)")
    run = forms.TypedChoiceField(label="Judge run over the match project", coerce=int)
    bootstrap = bootstrap_field()
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["run"]).choices = [
            (run.pk, f"run {run.pk}: {run.judge.name} on {run.project.slug} ({run.judge.prompt_key})")
            for run in match_runs(self.user)
        ]

    def clean_predictions(self) -> dict[str, tuple[str, ...]]:
        upload = self.cleaned_data["predictions"]
        if upload.size > MAX_PAGE_UPLOAD_BYTES:
            raise forms.ValidationError(UPLOAD_TOO_LARGE)
        try:
            return _predictions(upload, self.project)
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_bootstrap(self) -> int:
        return checked_bootstrap(self.cleaned_data.get("bootstrap"), "ipqa_eval")

    def parameters(self) -> IpqaEvalParameters:
        data = self.cleaned_data
        return IpqaEvalParameters(
            run=data["run"], bootstrap=data["bootstrap"], seed=data.get("seed") or 0, predictions=data["predictions"]
        )


class IpqaValidationForm(EvaluationForm):
    judge_run = forms.TypedChoiceField(label="Judge run (optional)", coerce=int, required=False, empty_value=None)
    bootstrap = bootstrap_field()
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = JudgeRun.objects.filter(project=self.project, judge__kind=self.project.kind).select_related("judge")
        cast(forms.ChoiceField, self.fields["judge_run"]).choices = [
            ("", "none"),
            *((run.pk, f"run {run.pk}: {run.judge.name} ({run.judge.prompt_key})") for run in runs.order_by("id")),
        ]

    def clean_bootstrap(self) -> int:
        return checked_bootstrap(self.cleaned_data.get("bootstrap"), "ipqa_validation")

    def parameters(self) -> IpqaValidationParameters:
        data = self.cleaned_data
        return IpqaValidationParameters(
            judge_run=data.get("judge_run"), bootstrap=data["bootstrap"], seed=data.get("seed") or 0
        )


EVALUATIONS = (
    PaperEvaluation(
        name="ipqa_eval",
        slug="ipqa",
        title="IPQA-Eval",
        summary="predicted core intents against gold: precision, recall, F1",
        from_json=IpqaEvalParameters.from_json_dict,
        evaluate=ipqa_evaluation,
        form=IpqaEvalForm,
        template="validation/ipqa_eval.html",
    ),
    PaperEvaluation(
        name="ipqa_validation",
        slug="validation-complexity",
        title="IPQA human validation by question complexity",
        summary="agreement per number of expressed and core intents",
        from_json=IpqaValidationParameters.from_json_dict,
        evaluate=ipqa_validation_evaluation,
        form=IpqaValidationForm,
        template="validation/ipqa_validation.html",
    ),
)
