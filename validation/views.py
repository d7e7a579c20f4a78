"""Report pages. Thin: check access, read the parameters, call a selector or service, render.

The report page loads its body with htmx (computing intervals can take a few seconds on a large
project); without JavaScript the "show the report" link renders it in the same request.
"""

from __future__ import annotations

from typing import cast

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from annotation.access import require_project_role
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from annotation.request_types import HtmxHttpRequest
from judges.models import JudgeRun
from validation.estimates.figures import report_forest
from validation.evaluations.registry import evaluations_for
from validation.models import ReportSnapshot
from validation.report_jobs import DONE, FAILED, JobState, needs_worker, request_bootstrap_max
from validation.report_queue import report_job
from validation.reports import Report, ReportParameters, Table, UnknownJudgeRun
from validation.selectors import project_report, project_snapshots, report_cache_key, report_figures
from validation.services import render_report, report_snapshot_check, report_snapshot_create

NOT_A_RESEARCHER = "Only the project's researchers can read its agreement report."
STILL_COMPUTING = (
    "The report with these parameters is still being computed in the background; "
    "open the report page and try again once it shows."
)
MAX_RESAMPLES = 10_000
DOWNLOADS = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "latex": ("application/x-tex; charset=utf-8", "tex"),
    "csv": ("text/csv; charset=utf-8", "csv"),
}


class ReportForm(forms.Form):
    """The report's parameters, from the query string (GET) or the freeze form (POST)."""

    judge = forms.TypedChoiceField(label="Compare with judge run", required=False, coerce=int, empty_value=None)
    bootstrap = forms.IntegerField(
        label="Bootstrap resamples", min_value=0, max_value=MAX_RESAMPLES, initial=1000, required=False
    )
    seed = forms.IntegerField(label="Seed", min_value=0, initial=0, required=False)
    weights = forms.ChoiceField(
        label="Kappa weights (ordered scales)",
        choices=[("linear", "linear"), ("quadratic", "quadratic")],
        required=False,
    )
    confidence = forms.TypedChoiceField(
        label="Confidence level",
        choices=[("0.9", "90%"), ("0.95", "95%"), ("0.99", "99%")],
        coerce=float,
        initial="0.95",
        required=False,
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        runs = JudgeRun.objects.filter(project=project).select_related("judge").order_by("-id")
        cast(forms.ChoiceField, self.fields["judge"]).choices = [("", "none")] + [
            (str(run.pk), f"run {run.pk}: {run.judge.name} ({run.judge.backend_label}, {run.judge.prompt_key})")
            for run in runs
        ]

    def parameters(self) -> ReportParameters:
        data = self.cleaned_data
        return ReportParameters(
            judge_run_id=data.get("judge"),
            bootstrap=1000 if data.get("bootstrap") is None else data["bootstrap"],
            seed=data.get("seed") or 0,
            weights=data.get("weights") or "linear",
            confidence_level=data.get("confidence") or 0.95,
        )


#: What a parameter left out of the query means: the controls show these, so they show the level in use.
PARAMETER_DEFAULTS = {
    "bootstrap": str(ReportParameters.bootstrap),
    "seed": str(ReportParameters.seed),
    "weights": ReportParameters.weights,
    "confidence": str(ReportParameters.confidence_level),
}


def _form(request: HttpRequest, project: Project) -> ReportForm:
    data = request.POST if request.method == "POST" else request.GET
    # Unbound (defaults) until a parameter is in the query, so the first visit shows the default report.
    if not any(name in data for name in ReportForm.base_fields):
        return ReportForm(None, project=project, initial=PARAMETER_DEFAULTS)
    # A query naming some parameters uses the defaults for the others; the bound form gets them too,
    # else its select shows its first choice (90 %) beside a report computed at 95 % and sends that next.
    filled = data.copy()
    for name, value in PARAMETER_DEFAULTS.items():
        if name not in filled:
            filled[name] = value
    return ReportForm(filled, project=project)


def _parameters(form: ReportForm) -> ReportParameters | None:
    if not form.is_bound:
        return ReportParameters()
    return form.parameters() if form.is_valid() else None


@login_required
def report(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = _form(request, project)
    context = {
        "project": project,
        "form": form,
        "query": request.GET.urlencode(),
        "evaluations": evaluations_for(project),
    }
    if not request.htmx and "now" not in request.GET:
        return render(request, "validation/report.html", context)
    parameters = _parameters(form)
    if parameters is not None:
        try:
            if needs_worker(parameters, project=project):
                # Too many resamples for one request: a worker computes them; this page polls.
                job = report_job(project=project, parameters=parameters, retry="retry" in request.GET)
                if job.status != DONE:
                    return _report_pending(request, project, parameters, job)
                result = job.result
            else:
                result = project_report(project=project, parameters=parameters)
        except UnknownJudgeRun as exc:
            form.add_error("judge", exc.message)
        else:
            context |= {"report": result, "parameters": parameters, "tables_key": report_cache_key(result)}
            if request.htmx:
                # Tables first: the plots (drawing them takes longer than the numbers) load after.
                context["figures_later"] = True
            else:
                context |= _figures_context(project, parameters, result)
    context["snapshots"] = project_snapshots(project=project)[:20]
    template = "validation/report.html#report-body" if request.htmx else "validation/report.html"
    return render(request, template, context)


def _figures_context(project: Project, parameters: ReportParameters, result: Report) -> dict:
    return {
        "figures": report_figures(report=result),
        "estimates_forest": report_forest(project=project, run_id=parameters.judge_run_id),
    }


def _report_for_request(request: HttpRequest, project: Project) -> tuple[ReportParameters, Report] | HttpResponse:
    """The request's parameters and the report computed for them, or the plain-text refusal to send:
    400 for bad parameters or an unknown judge run, 409 while a worker still computes it."""
    parameters = _parameters(_form(request, project))
    if parameters is None:
        return HttpResponse("invalid report parameters", status=400, content_type="text/plain")
    try:
        result = _current_report(project, parameters)
    except UnknownJudgeRun as exc:
        return HttpResponse(exc.message, status=400, content_type="text/plain")
    if result is None:
        return HttpResponse(STILL_COMPUTING, status=409, content_type="text/plain")
    return parameters, result


@login_required
def report_figures_part(request: HttpRequest, slug: str) -> HttpResponse:
    """The report's plots, which the report body loads once its tables are on screen."""
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    found = _report_for_request(request, project)
    if isinstance(found, HttpResponse):
        return found
    parameters, result = found
    context = {"project": project, "parameters": parameters, **_figures_context(project, parameters, result)}
    return render(request, "validation/report.html#report-figures", context)


def _report_pending(
    request: HtmxHttpRequest, project: Project, parameters: ReportParameters, job: JobState
) -> HttpResponse:
    """The "computing…" body that polls until the worker is done, or the failure with a retry link."""
    query = request.GET.copy()
    for name in ("retry", "now"):
        query.pop(name, None)
    context = {
        "project": project,
        "parameters": parameters,
        "job": job,
        "failed": job.status == FAILED,
        "cap": request_bootstrap_max(),
        "poll_query": query.urlencode(),
    }
    if request.htmx:
        return render(request, "validation/_report_job.html", context)
    return render(request, "validation/report_job.html", context)


def _current_report(project: Project, parameters: ReportParameters) -> Report | None:
    """The report for a download or a freeze: computed here, or the worker's when it is done (else None)."""
    if not needs_worker(parameters, project=project):
        return project_report(project=project, parameters=parameters)
    job = report_job(project=project, parameters=parameters)
    return job.result if job.status == DONE else None


def _download(text: str, fmt: str, filename: str) -> HttpResponse:
    content_type, extension = DOWNLOADS[fmt]
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}.{extension}"'
    return response


@login_required
def report_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown format")
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    found = _report_for_request(request, project)
    if isinstance(found, HttpResponse):
        return found
    parameters, result = found
    return _download(render_report(result, fmt), fmt, f"{project.slug}-agreement")


class FreezeForm(forms.Form):
    title = forms.CharField(label="Snapshot title", max_length=200, required=False)


@login_required
@post_only("report", "slug")
def report_freeze(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form, freeze = _form(request, project), FreezeForm(request.POST)
    parameters = _parameters(form)
    if parameters is None or not freeze.is_valid():
        return HttpResponse("invalid report parameters", status=400, content_type="text/plain")
    try:
        # The cached report for these parameters is the one on screen: freeze exactly that.
        current = _current_report(project, parameters)
        if current is None:
            return HttpResponse(STILL_COMPUTING, status=409, content_type="text/plain")
        snapshot = report_snapshot_create(
            project=project,
            parameters=parameters,
            user=request.user,
            title=freeze.cleaned_data["title"],
            report=current,
        )
    except UnknownJudgeRun as exc:
        return HttpResponse(exc.message, status=400, content_type="text/plain")
    url = reverse("report_snapshot", args=[project.slug, snapshot.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _snapshot(request: HttpRequest, slug: str, snapshot_id: int) -> tuple[Project, ReportSnapshot]:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    return project, get_object_or_404(ReportSnapshot, pk=snapshot_id, project=project)


@login_required
def snapshot_detail(request: HttpRequest, slug: str, snapshot_id: int) -> HttpResponse:
    project, snapshot = _snapshot(request, slug, snapshot_id)
    tables = [Table.from_json_dict(key, data) for key, data in snapshot.numbers.get("tables", {}).items()]
    return render(
        request,
        "validation/snapshot.html",
        {"project": project, "snapshot": snapshot, "tables": tables, "checks": snapshot.checks.all()[:10]},
    )


@login_required
@post_only("report_snapshot", "slug", "snapshot_id")
def snapshot_check(request: HtmxHttpRequest, slug: str, snapshot_id: int) -> HttpResponse:
    project, snapshot = _snapshot(request, slug, snapshot_id)
    report_snapshot_check(snapshot=snapshot, user=request.user)
    if not request.htmx:
        return redirect("report_snapshot", project.slug, snapshot.pk)
    return render(
        request,
        "validation/snapshot.html#checks",
        {"project": project, "snapshot": snapshot, "checks": snapshot.checks.all()[:10]},
    )


@login_required
def snapshot_download(request: HttpRequest, slug: str, snapshot_id: int, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown format")
    project, snapshot = _snapshot(request, slug, snapshot_id)
    text = {"md": snapshot.markdown, "latex": snapshot.latex, "csv": snapshot.csv}[fmt]
    return _download(text, fmt, f"{project.slug}-snapshot-{snapshot.pk}")
