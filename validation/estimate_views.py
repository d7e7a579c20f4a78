"""The *Estimates* page: the three estimates of a judge run per dimension and group, a forest plot,
downloads, freezing, and the planner (table, plot, "draw k more").

Thin: read the form, call validation.estimates, render. Bad input is a 400 with the reason on the
page; nothing is stored except by freezing (researchers only, checked again here).
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotation.access import require_project_role
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from judges.models import JudgeRun
from validation.estimates.build import TRUTHS, EstimateParameters, project_estimates
from validation.estimates.figures import forest_figure, plan_figure
from validation.estimates.planning import plan_json, project_plan
from validation.evaluation_views import DOWNLOADS
from validation.evaluations.base import UnknownJudgeRun, render_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_create
from validation.plots import svg_data_uri

NOT_ALLOWED = "Only the project's researchers and experts can read its estimates."
ONLY_RESEARCHERS_FREEZE = "Only the project's researchers can freeze estimates."


class EstimateForm(forms.Form):
    run = forms.TypedChoiceField(label="Judge run", coerce=int)
    by = forms.CharField(label="Group by field (optional)", max_length=100, required=False)
    # Optional with the command's defaults, so a link that names only the run (the report's) works.
    alpha = forms.FloatField(
        label="alpha (intervals at 1 - alpha)", initial=0.05, min_value=0.0001, max_value=0.4999, required=False
    )
    truth = forms.ChoiceField(label="People's value", choices=[(t, t) for t in TRUTHS], initial="mean", required=False)
    fpc = forms.ChoiceField(
        label="Finite-population correction",
        choices=[("on", "on: the estimand is the project's own items"), ("off", "off: they stand for more")],
        initial="on",
        required=False,
    )

    def clean_fpc(self) -> bool:
        return self.cleaned_data["fpc"] != "off"

    def clean_alpha(self) -> float:
        alpha = self.cleaned_data["alpha"]
        return 0.05 if alpha is None else alpha

    def clean_truth(self) -> str:
        return self.cleaned_data["truth"] or "mean"

    half_width = forms.FloatField(label="Planner: target half-width", required=False, min_value=1e-6, max_value=1e6)

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        runs = JudgeRun.objects.filter(project=project, judge__kind=project.kind).select_related("judge")
        cast(forms.ChoiceField, self.fields["run"]).choices = [
            (run.pk, f"run {run.pk}: {run.judge.name}") for run in runs.order_by("-id")
        ]


def _parameters(form: EstimateForm) -> EstimateParameters:
    data = form.cleaned_data
    return EstimateParameters(
        run=data["run"], by=data["by"].strip(), alpha=data["alpha"], truth=data["truth"], fpc=data["fpc"]
    )


@login_required
@require_GET
def estimates_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, denied=NOT_ALLOWED)
    form = EstimateForm(request.GET or None, project=project)
    context: dict[str, Any] = {"project": project, "form": form, "is_researcher": Role.RESEARCHER in roles}
    status = 200
    if request.GET and form.is_valid():
        try:
            evaluation = project_estimates(project=project, parameters=_parameters(form))
        except (UnknownJudgeRun, ValueError) as exc:
            context["error"], status = str(exc), 400
        else:
            fmt = request.GET.get("download")
            if fmt in DOWNLOADS:
                content_type, extension = DOWNLOADS[fmt]
                response = HttpResponse(render_evaluation(evaluation, fmt), content_type=content_type)
                response["Content-Disposition"] = f'attachment; filename="{project.slug}-estimates.{extension}"'
                return response
            result = evaluation.result
            context |= {
                "evaluation": evaluation,
                "result": result,
                "forest": svg_data_uri(forest_figure(result)),
                "forest_differences": svg_data_uri(forest_figure(result, key="differences"))
                if result["differences"]
                else None,
                "query": request.GET.urlencode(),
            }
            half_width = form.cleaned_data.get("half_width")
            if half_width:
                try:
                    plan = project_plan(
                        project=project,
                        run=form.cleaned_data["run"],
                        half_width=half_width,
                        alpha=form.cleaned_data["alpha"],
                    )
                except ValueError as exc:
                    context["plan_error"] = str(exc)
                else:
                    more = max(0, (plan.result.prediction_powered_n or 0) - plan.current_n)
                    context |= {
                        "plan": plan,
                        "plan_json": plan_json(plan),
                        "plan_plot": svg_data_uri(plan_figure(plan)),
                        "draw_more": more,
                    }
    elif request.GET:
        status = 400
    return render(request, "validation/estimates.html", context, status=status)


@login_required
@post_only("estimates", "slug")
def estimates_freeze(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, denied=NOT_ALLOWED)
    if Role.RESEARCHER not in roles:
        raise PermissionDenied(ONLY_RESEARCHERS_FREEZE)
    form = EstimateForm(request.POST, project=project)
    if not form.is_valid():
        return render(request, "validation/estimates.html", {"project": project, "form": form}, status=400)
    try:
        evaluation = project_estimates(project=project, parameters=_parameters(form))
    except (UnknownJudgeRun, ValueError) as exc:
        context = {"project": project, "form": form, "error": str(exc)}
        return render(request, "validation/estimates.html", context, status=400)
    snapshot = evaluation_snapshot_create(project=project, evaluation=evaluation, user=request.user)
    return redirect(reverse("report_snapshot", args=[project.slug, snapshot.pk]))
