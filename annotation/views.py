"""Pages. Thin: check access, call a service or selector, render. htmx requests get a partial."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods
from django_htmx.http import reswap, retarget

from annotation.errors import ImportRejected
from annotation.models import ImportJob, Project, Role
from annotation.selectors import import_job_progress, project_roles, project_summary, projects_for_user
from annotation.services import import_job_create
from annotation.tasks import import_job_task

NOT_A_RESEARCHER = "Only the project's researchers can do this."


class ImportForm(forms.Form):
    target = forms.ChoiceField(choices=ImportJob.Target.choices, initial=ImportJob.Target.ITEMS, label="What")
    file = forms.FileField(label="File (.jsonl or .csv, UTF-8)")


def _member_project(request: HttpRequest, slug: str) -> tuple[Project, set[str]]:
    project = get_object_or_404(Project, slug=slug)
    roles = project_roles(project=project, user=request.user)
    if not roles and not request.user.is_superuser:
        raise PermissionDenied("You are not a member of this project.")
    return project, roles


def _require_researcher(request: HttpRequest, roles: set[str]) -> None:
    if Role.RESEARCHER not in roles and not request.user.is_superuser:
        raise PermissionDenied(NOT_A_RESEARCHER)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/home.html", {"rows": projects_for_user(user=request.user)})


@login_required
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = _member_project(request, slug)
    return render(request, "annotation/project_detail.html", _project_context(request, project))


def _project_context(request: HttpRequest, project: Project) -> dict:
    roles = project_roles(project=project, user=request.user)
    return {
        "project": project,
        "roles": roles,
        "is_researcher": Role.RESEARCHER in roles or request.user.is_superuser,
        "summary": project_summary(project=project),
        "jobs": [import_job_progress(job=j) for j in project.import_jobs.all()[:10]],
        "form": ImportForm(),
    }


@login_required
@require_http_methods(["POST"])
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = _member_project(request, slug)
    _require_researcher(request, roles)
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            job = import_job_create(
                project=project,
                target=form.cleaned_data["target"],
                uploaded=form.cleaned_data["file"],
                user=request.user,
            )
        except ImportRejected as exc:
            form.add_error("file", exc.message)
        else:
            transaction.on_commit(lambda: import_job_task.delay(job.pk))
            if not request.htmx:
                return redirect("project_detail", slug=project.slug)
            return render(request, "annotation/project_detail.html#import-job", {"p": import_job_progress(job=job)})
    context = {"project": project, "form": form}
    if request.htmx:
        # htmx leaves 4xx responses unswapped: answer 200 and swap the form with its errors in place.
        response = render(request, "annotation/project_detail.html#import-form", context)
        return reswap(retarget(response, "#import-form"), "outerHTML")
    return render(
        request, "annotation/project_detail.html", {**_project_context(request, project), "form": form}, status=400
    )


@login_required
def import_status(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    project, roles = _member_project(request, slug)
    _require_researcher(request, roles)
    job = get_object_or_404(ImportJob, pk=job_id, project=project)
    return render(request, "annotation/project_detail.html#import-job", {"p": import_job_progress(job=job)})
