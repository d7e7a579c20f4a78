"""The IPQA-Eval page of an IPQA project: predicted core intents scored against its gold (IPQA, §2.1).

Researchers and experts of the IPQA project upload a predictions file (JSONL: ``external_id``,
``predicted_intents``; at most ``MAX_PAGE_UPLOAD_BYTES``) and choose a judge run over an
``ipqa_eval_match`` project on which they are researchers or experts too; the page shows the table
of ``manage.py ipqa_eval`` (same function, same numbers) or sends it as JSON, Markdown, LaTeX or CSV.
A request computes at most ``CONCORD_REQUEST_BOOTSTRAP_MAX`` bootstrap resamples.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.access import project_access
from annotation.errors import ValidationFailed
from annotation.models import Project, Role
from judges.models import JudgeRun
from validation.evaluation_views import DOWNLOADS
from validation.evaluations.base import UnknownJudgeRun, WrongKind, render_evaluation
from validation.evaluations.ipqa_pairs import MATCH_KIND, SOURCE_KIND, read_predictions
from validation.evaluations.ipqa_report import IpqaEvalParameters, ipqa_evaluation
from validation.report_jobs import request_bootstrap_max

NOT_ALLOWED = "Only the project's researchers and experts can read its IPQA-Eval table."
NOT_AN_IPQA_PROJECT = "IPQA-Eval scores the predictions of an ipqa_core_intent project."
#: Bytes of a predictions file the page accepts (the command reads any size).
MAX_PAGE_UPLOAD_BYTES = 16 * 1024 * 1024
UPLOAD_TOO_LARGE = f"the predictions file is larger than {MAX_PAGE_UPLOAD_BYTES // (1024 * 1024)} MiB"
READERS = {Role.RESEARCHER, Role.EXPERT}


def match_runs(user: Any) -> QuerySet[JudgeRun]:
    """Runs over ``ipqa_eval_match`` projects whose researchers or experts include ``user``."""
    runs = JudgeRun.objects.filter(project__kind=MATCH_KIND, judge__kind=MATCH_KIND).select_related("judge", "project")
    if not user.is_superuser:
        runs = runs.filter(project__memberships__user=user, project__memberships__role__in=READERS).distinct()
    return runs.order_by("id")


class IpqaEvalForm(forms.Form):
    predictions = forms.FileField(label="Predictions (JSONL: external_id, predicted_intents)")
    run = forms.TypedChoiceField(label="Judge run over the match project", coerce=int)
    bootstrap = forms.IntegerField(label="Bootstrap resamples", min_value=0, initial=1000, required=False)
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)
    output = forms.ChoiceField(
        label="Show",
        choices=[("page", "on this page"), *((fmt, f"download {fmt}") for fmt in DOWNLOADS)],
        initial="page",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["run"].choices = [
            (run.pk, f"run {run.pk}: {run.judge.name} on {run.project.slug} ({run.judge.prompt_key})")
            for run in match_runs(user)
        ]

    def clean_predictions(self) -> Any:
        upload = self.cleaned_data["predictions"]
        if upload.size > MAX_PAGE_UPLOAD_BYTES:
            raise forms.ValidationError(UPLOAD_TOO_LARGE)
        return upload

    def clean_bootstrap(self) -> int:
        value = 1000 if self.cleaned_data.get("bootstrap") is None else self.cleaned_data["bootstrap"]
        if value > request_bootstrap_max():
            raise forms.ValidationError(
                f"a page computes at most {request_bootstrap_max()} resamples; use the ipqa_eval command for more"
            )
        return value


def _predictions(upload: Any, project: Project) -> dict[str, tuple[str, ...]]:
    """The uploaded file read as the command reads a file (it needs the .jsonl name to be read as JSONL)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as copy:
        upload.seek(0)
        shutil.copyfileobj(upload, copy)
        copy.flush()
        return read_predictions(copy.name, project=project)


@login_required
@require_http_methods(["GET", "POST"])
def ipqa_eval_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = project_access(user=request.user, slug=slug, allowed=READERS, denied=NOT_ALLOWED)
    if project.kind != SOURCE_KIND:
        return HttpResponse(NOT_AN_IPQA_PROJECT, status=404, content_type="text/plain")
    form = IpqaEvalForm(request.POST or None, request.FILES or None, user=request.user)
    evaluation = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        parameters = IpqaEvalParameters(run=data["run"], bootstrap=data["bootstrap"], seed=data.get("seed") or 0)
        try:
            predictions = _predictions(data["predictions"], project)
            evaluation = ipqa_evaluation(project=project, predictions=predictions, parameters=parameters)
        except ValidationFailed as exc:
            form.add_error("predictions", exc.message)
        except (UnknownJudgeRun, WrongKind, ValueError) as exc:
            form.add_error(None, str(exc))
        if evaluation is not None and data["output"] != "page":
            content_type, extension = DOWNLOADS[data["output"]]
            response = HttpResponse(render_evaluation(evaluation, data["output"]), content_type=content_type)
            response["Content-Disposition"] = f'attachment; filename="{project.slug}-ipqa_eval.{extension}"'
            return response
    status = 400 if request.method == "POST" and evaluation is None else 200
    context = {"project": project, "form": form, "evaluation": evaluation}
    return render(request, "validation/ipqa_eval.html", context, status=status)
