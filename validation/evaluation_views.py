"""Pages of the paper evaluations: CoPA's Table 3/4 (``copa_eval``) and IntentGrasp's runs (``mcq_eval``).

Researchers and experts read them and download the tables; researchers freeze them as snapshots
(shown, downloaded and checked on the report's snapshot page). The numbers are those of the
commands of the same names (``validation.evaluations``); a request computes at most
``CONCORD_REQUEST_BOOTSTRAP_MAX`` bootstrap resamples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotation.access import project_access
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from judges.models import JudgeRun
from validation.evaluations.base import MAX_RUNS, Evaluation, UnknownJudgeRun, WrongKind, render_evaluation
from validation.evaluations.copa_report import CopaEvalParameters, copa_evaluation
from validation.evaluations.mcq_report import McqEvalParameters, mcq_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_create
from validation.report_jobs import request_bootstrap_max
from validation.selectors import evaluation_figures

NOT_ALLOWED = "Only the project's researchers and experts can read its paper evaluations."
ONLY_RESEARCHERS_FREEZE = "Only the project's researchers can freeze an evaluation."
DOWNLOADS = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "latex": ("application/x-tex; charset=utf-8", "tex"),
    "csv": ("text/csv; charset=utf-8", "csv"),
    "json": ("application/json; charset=utf-8", "json"),
}


class _RunsForm(forms.Form):
    run = forms.TypedMultipleChoiceField(
        label="Judge runs", coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = JudgeRun.objects.filter(project=project, judge__kind=project.kind).select_related("judge")
        self.fields["run"].choices = [
            (run.pk, f"run {run.pk}: {run.judge.name} ({run.judge.backend_label}, {run.judge.prompt_key})")
            for run in runs.order_by("id")
        ]

    def clean_run(self) -> list[int]:
        runs = self.cleaned_data["run"]
        if len(runs) > MAX_RUNS:
            raise forms.ValidationError(f"choose at most {MAX_RUNS} runs")
        return runs


class CopaEvalForm(_RunsForm):
    people = forms.BooleanField(label="People's gold", required=False)
    bootstrap = forms.IntegerField(label="Bootstrap resamples", min_value=0, initial=1000, required=False)
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)

    def clean_bootstrap(self) -> int:
        value = 1000 if self.cleaned_data.get("bootstrap") is None else self.cleaned_data["bootstrap"]
        if value > request_bootstrap_max():
            raise forms.ValidationError(
                f"a page computes at most {request_bootstrap_max()} resamples; use the copa_eval command for more"
            )
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("run") and not data.get("people"):
            raise forms.ValidationError("choose at least one judge run or people's gold")
        return data

    def parameters(self) -> CopaEvalParameters:
        data = self.cleaned_data
        return CopaEvalParameters(
            runs=tuple(data["run"]), people=data["people"], bootstrap=data["bootstrap"], seed=data.get("seed") or 0
        )


class McqEvalForm(_RunsForm):
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
            raise forms.ValidationError("choose at least one judge run")
        return data

    def parameters(self) -> McqEvalParameters:
        return McqEvalParameters(runs=tuple(self.cleaned_data["run"]), std=self.cleaned_data.get("std") or "sample")


#: name → (task kind, form, evaluation, template, title)
PAGES: dict[str, tuple[str, type[_RunsForm], Callable[..., Evaluation], str, str]] = {
    "copa": ("copa_likert", CopaEvalForm, copa_evaluation, "validation/copa_eval.html", "CoPA evaluator comparison"),
    "mcq": ("intent_mcq", McqEvalForm, mcq_evaluation, "validation/mcq_eval.html", "IntentGrasp model evaluation"),
}


def _project(request: HttpRequest, slug: str, name: str) -> tuple[Project, set[str]]:
    if name not in PAGES:
        raise Http404("no such evaluation")
    project, roles = project_access(
        user=request.user, slug=slug, allowed={Role.RESEARCHER, Role.EXPERT}, denied=NOT_ALLOWED
    )
    if project.kind != PAGES[name][0]:
        raise Http404("this evaluation is for another kind of project")
    return project, roles


def _evaluate(request: HttpRequest, project: Project, name: str, data: Any) -> tuple[forms.Form, Evaluation | None]:
    _, form_class, evaluate, _, _ = PAGES[name]
    bound = any(key in data for key in form_class.base_fields)
    form = form_class(data if bound else None, project=project)
    if not bound or not form.is_valid():
        return form, None
    try:
        return form, evaluate(project=project, parameters=form.parameters())
    except (UnknownJudgeRun, WrongKind, ValueError) as exc:
        form.add_error(None, str(exc))
        return form, None


@login_required
@require_GET
def evaluation_page(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    project, roles = _project(request, slug, name)
    form, evaluation = _evaluate(request, project, name, request.GET)
    context = {
        "project": project,
        "form": form,
        "evaluation": evaluation,
        "title": PAGES[name][4],
        "name": name,
        "query": request.GET.urlencode(),
        # The same parameters again for the freeze form (a run may be given several times).
        "hidden": [(key, value) for key, values in request.GET.lists() for value in values],
        "can_freeze": Role.RESEARCHER in roles or request.user.is_superuser,
        "figures": evaluation_figures(evaluation=evaluation) if evaluation else [],
    }
    return render(request, PAGES[name][3], context, status=400 if form.is_bound and evaluation is None else 200)


@login_required
@require_GET
def evaluation_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown format")
    project, _ = _project(request, slug, name)
    form, evaluation = _evaluate(request, project, name, request.GET)
    if evaluation is None:
        errors = "; ".join(str(e) for field in form.errors.values() for e in field) or "choose what to evaluate"
        return HttpResponse(errors, status=400, content_type="text/plain")
    content_type, extension = DOWNLOADS[fmt]
    response = HttpResponse(render_evaluation(evaluation, fmt), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{evaluation.name}.{extension}"'
    return response


class FreezeForm(forms.Form):
    title = forms.CharField(label="Snapshot title", max_length=200, required=False)


@login_required
@post_only("evaluation", "slug", "name")
def evaluation_freeze(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    project, roles = _project(request, slug, name)
    if Role.RESEARCHER not in roles and not request.user.is_superuser:
        raise PermissionDenied(ONLY_RESEARCHERS_FREEZE)
    freeze = FreezeForm(request.POST)
    form, evaluation = _evaluate(request, project, name, request.POST)
    if evaluation is None or not freeze.is_valid():
        return HttpResponse("invalid evaluation parameters", status=400, content_type="text/plain")
    snapshot = evaluation_snapshot_create(
        project=project, evaluation=evaluation, user=request.user, title=freeze.cleaned_data["title"]
    )
    return redirect(reverse("report_snapshot", args=[project.slug, snapshot.pk]))
