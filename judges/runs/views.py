"""The pages every run type shares: a run's live progress (polled by htmx while it runs), cancel and resume.

Thin: check access, call a service or selector, render. The run type comes from the URL
(judges/urls.py passes ``run_type``); each run type names its own run page to return to.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.access import require_project_role
from annotation.job_events import job_end_announced
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from annotation.request_types import HtmxHttpRequest
from judges.errors import JudgeError
from judges.models import RunState
from judges.runs.services import run_cancel, run_resume
from judges.runs.types import get_run_type
from judges.selectors import run_progress
from judges.tasks import run_dispatch

NOT_A_RESEARCHER = "Only the project's researchers can see and run LLM judges and generation runs."


def project_run(project: Project, run_type: str, run_id: int) -> RunState:
    """The project's run of that type with its call configuration loaded; Http404 for another project's."""
    spec = get_run_type(run_type)
    return get_object_or_404(spec.run_model.objects.select_related(*spec.run_related), pk=run_id, project=project)


def _run_page(url_kwargs: dict) -> str:
    """Where a GET of a run's cancel or resume address goes: the run's own page."""
    return get_run_type(url_kwargs["run_type"]).detail_view


@login_required
def run_progress_partial(request: HtmxHttpRequest, slug: str, run_id: int, run_type: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    progress = run_progress(run=project_run(project, run_type, run_id))
    response = render(request, "judges/_run_progress.html", {"project": project, "p": progress})
    return job_end_announced(request, response, ended=not progress.run.is_active)


@login_required
@post_only(_run_page, "slug", "run_id")
def run_cancel_view(request: HttpRequest, slug: str, run_id: int, run_type: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    try:
        run_cancel(run=project_run(project, run_type, run_id))
    except JudgeError as exc:
        messages.error(request, exc.message)
    return redirect(get_run_type(run_type).detail_view, slug=project.slug, run_id=run_id)


@login_required
@post_only(_run_page, "slug", "run_id")
def run_resume_view(request: HttpRequest, slug: str, run_id: int, run_type: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    try:
        run = run_resume(run=project_run(project, run_type, run_id))
    except JudgeError as exc:
        messages.error(request, exc.message)
    else:
        transaction.on_commit(lambda: run_dispatch(run_type=run_type, run_id=run.pk))
    return redirect(get_run_type(run_type).detail_view, slug=project.slug, run_id=run_id)
