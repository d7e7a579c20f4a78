"""Pages of the paper evaluations: one page per evaluation the project's kind registers
(``validation.evaluations.registry``), e.g. CoPA's ``copa_eval``, IntentGrasp's ``mcq_eval``, IPQA-Eval.

Researchers and experts read them and download the tables; researchers freeze them as snapshots
(shown, downloaded and checked on the report's snapshot page). The numbers are those of the
commands of the same names; a request computes at most ``CONCORD_REQUEST_BOOTSTRAP_MAX`` bootstrap
resamples. An evaluation whose parameters include a file (IPQA-Eval's predictions) is POSTed, with
its download format chosen on the form; the others are GET links.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.access import require_project_role
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from validation.evaluations.base import Evaluation, render_evaluation
from validation.evaluations.registry import PaperEvaluation, evaluate_request, page_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_create
from validation.selectors import evaluation_figures

NOT_ALLOWED = "Only the project's researchers and experts can read its paper evaluations."
ONLY_RESEARCHERS_FREEZE = "Only the project's researchers can freeze an evaluation."
NO_SUCH_EVALUATION = "no such evaluation for this kind of project"
DOWNLOADS = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "latex": ("application/x-tex; charset=utf-8", "tex"),
    "csv": ("text/csv; charset=utf-8", "csv"),
    "json": ("application/json; charset=utf-8", "json"),
}
#: Where a POSTed form asks for its output: the page, or a download in one of ``DOWNLOADS``.
OUTPUT_CHOICES = [("page", "on this page"), *((fmt, f"download {fmt}") for fmt in DOWNLOADS)]


def _project(request: HttpRequest, slug: str, name: str) -> tuple[Project, set[str], PaperEvaluation]:
    project, roles = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, denied=NOT_ALLOWED)
    evaluation = page_evaluation(project, name)
    if evaluation is None:
        raise Http404(NO_SUCH_EVALUATION)
    return project, roles, evaluation


def _download(project: Project, evaluation: Evaluation, fmt: str) -> HttpResponse:
    content_type, extension = DOWNLOADS[fmt]
    response = HttpResponse(render_evaluation(evaluation, fmt), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{evaluation.name}.{extension}"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def evaluation_page(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    project, roles, declared = _project(request, slug, name)
    data = request.POST if request.method == "POST" else request.GET
    form, evaluation = evaluate_request(
        declared=declared, project=project, user=request.user, data=data, files=request.FILES
    )
    output = data.get("output", "page")
    if evaluation is not None and output in DOWNLOADS:
        return _download(project, evaluation, output)
    context = {
        "project": project,
        "form": form,
        "evaluation": evaluation,
        "title": declared.title,
        "name": name,
        "command": declared.name,
        "output_choices": OUTPUT_CHOICES,
        "query": request.GET.urlencode(),
        # The same parameters again for the freeze form (a run may be given several times).
        "hidden": [(key, value) for key, values in request.GET.lists() for value in values],
        "can_freeze": Role.RESEARCHER in roles or request.user.is_superuser,
        "figures": evaluation_figures(evaluation=evaluation) if evaluation else [],
    }
    return render(request, declared.template, context, status=400 if form.is_bound and evaluation is None else 200)


@login_required
@require_http_methods(["GET"])
def evaluation_download(request: HttpRequest, slug: str, name: str, fmt: str) -> HttpResponse:
    if fmt not in DOWNLOADS:
        raise Http404("unknown format")
    project, _, declared = _project(request, slug, name)
    form, evaluation = evaluate_request(declared=declared, project=project, user=request.user, data=request.GET)
    if evaluation is None:
        errors = "; ".join(str(e) for field in form.errors.values() for e in field) or "choose what to evaluate"
        return HttpResponse(errors, status=400, content_type="text/plain")
    return _download(project, evaluation, fmt)


class FreezeForm(forms.Form):
    title = forms.CharField(label="Snapshot title", max_length=200, required=False)


@login_required
@post_only("evaluation", "slug", "name")
def evaluation_freeze(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    project, roles, declared = _project(request, slug, name)
    if Role.RESEARCHER not in roles and not request.user.is_superuser:
        raise PermissionDenied(ONLY_RESEARCHERS_FREEZE)
    freeze = FreezeForm(request.POST)
    form, evaluation = evaluate_request(
        declared=declared, project=project, user=request.user, data=request.POST, files=request.FILES
    )
    if evaluation is None or not freeze.is_valid():
        errors = "; ".join(str(e) for field in form.errors.values() for e in field)
        return HttpResponse(errors or "invalid evaluation parameters", status=400, content_type="text/plain")
    snapshot = evaluation_snapshot_create(
        project=project, evaluation=evaluation, user=request.user, title=freeze.cleaned_data["title"]
    )
    return redirect(reverse("report_snapshot", args=[project.slug, snapshot.pk]))
