"""Researcher pages: judges, runs, failed items with their raw output (a run's progress, cancel and
resume are the run engine's pages, judges.runs.views).

Thin: check access, call a service or selector, render. htmx polls the progress partial while a run
runs. Annotators never reach these pages: what a judge said stays out of their sight unless the
project shows suggestions in the workspace.
"""

from __future__ import annotations

from typing import cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse

from annotation.access import require_project_role
from annotation.errors import ImportRejected, ValidationFailed
from annotation.kinds import TaskKind
from annotation.kinds.base import ValueLine
from annotation.models import Project, Role
from annotation.post_redirect import post_only
from judges.errors import JudgeError, JudgeExists
from judges.execution import JUDGE_RUNS
from judges.forms import JudgeForm, RunForm, RunImportForm
from judges.models import JudgeRun, Suggestion
from judges.run_files import RUN_FILE_TYPES, judge_run_import, run_file_lines
from judges.runs.views import NOT_A_RESEARCHER, project_run
from judges.selectors import (
    judges_for_project,
    run_item_results,
    run_progress,
    runs_for_project,
    scored_on_earlier_version_count,
)
from judges.services import judge_create, judge_run_start
from judges.tasks import run_dispatch

RUNS_SHOWN = 20
ITEMS_PER_PAGE = 50
#: The run page's item filter (``?show=``): every item, or only the OK or failed ones.
SHOWN_ITEMS = {"all": None, "ok": Suggestion.Status.OK, "failed": Suggestion.Status.FAILED}
SHOW_LABELS = (("all", "every item"), ("ok", "answered"), ("failed", "failed"))
UPLOAD_TOO_LARGE = "the file is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES); use the import_run command"


def _run(project: Project, run_id: int) -> JudgeRun:
    return cast(JudgeRun, project_run(project, JUDGE_RUNS, run_id))


def _page(
    request: HttpRequest, project: Project, *, judge_form=None, run_form=None, import_form=None, status=200
) -> HttpResponse:
    judges = judges_for_project(project=project)
    if run_form is None:
        # The judge just created (``?judge=``), else the newest one, is the one to launch: never a blank choice.
        wanted = request.GET.get("judge", "")
        chosen = next((j for j in judges if str(j.pk) == wanted), None) or max(judges, key=lambda j: j.pk, default=None)
        run_form = RunForm(project=project, initial={"judge": chosen.pk} if chosen else None)
        run_form.fields["judge"].empty_label = None  # a run needs a judge: a blank choice only invites an error
    context = {
        "project": project,
        "runs": [run_progress(run=r) for r in runs_for_project(project=project)[:RUNS_SHOWN]],
        "judges": judges,
        "judge_form": judge_form or JudgeForm(project=project),
        "run_form": run_form,
        "import_form": import_form or RunImportForm(),
        "open_import": import_form is not None,
        "open_new_judge": judge_form is not None or not judges,
    }
    return render(request, "judges/project_judges.html", context, status=status)


@login_required
def project_judges(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)[0])


@login_required
@post_only("project_judges", "slug")
def judge_new(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = JudgeForm(request.POST, project=project)
    if form.is_valid():
        try:
            judge = judge_create(project=project, created_by=request.user, **form.cleaned_data)
        except JudgeExists as exc:
            form.add_error(None, f"{exc.message} (judge {exc.judge.pk}); launch a run of it below.")
        except (JudgeError, ValidationFailed) as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Judge “{judge.name}” created: it is chosen below, ready to launch.")
            return redirect(f"{reverse('project_judges', args=[project.slug])}?judge={judge.pk}#launch-heading")
    return _page(request, project, judge_form=form, status=400)


@login_required
@post_only("project_judges", "slug")
def run_launch(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = RunForm(request.POST, project=project)
    if form.is_valid():
        try:
            run = judge_run_start(
                judge=form.cleaned_data["judge"],
                project=project,
                concurrency=form.cleaned_data["concurrency"],
                created_by=request.user,
            )
        except (JudgeError, ValidationFailed) as exc:
            form.add_error(None, exc.message)
        else:
            transaction.on_commit(lambda: run_dispatch(run_type=JUDGE_RUNS, run_id=run.pk))
            return redirect("judge_run_detail", slug=project.slug, run_id=run.pk)
    return _page(request, project, run_form=form, status=400)


@login_required
@post_only("project_judges", "slug")
def run_import(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = RunImportForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.CONCORD_IMPORT_MAX_BYTES:
            form.add_error("file", UPLOAD_TOO_LARGE.format(limit=settings.CONCORD_IMPORT_MAX_BYTES))
    if form.is_valid():
        options = {k: v for k, v in form.cleaned_data.items() if k not in ("file", "sampling")}
        try:
            result = judge_run_import(
                project=project,
                path=upload.temporary_file_path(),
                sampling=form.cleaned_data["sampling"],
                file_name=upload.name,
                created_by=request.user,
                **options,
            )
        except ImportRejected as exc:
            more = f" … and {exc.total - len(exc.errors)} more" if exc.total > len(exc.errors) else ""
            form.add_error(None, f"Nothing imported: {'; '.join(map(str, exc.errors))}{more}")
        else:
            messages.success(request, f"Imported run {result.run.pk}: {result.ok} answered, {result.failed} failed.")
            return redirect("judge_run_detail", slug=project.slug, run_id=result.run.pk)
    return _page(request, project, import_form=form, status=400)


@login_required
def run_download(request: HttpRequest, slug: str, run_id: int) -> HttpResponseBase:
    """The run as a run file (the import format), streamed: ``?format=jsonl`` (default) or ``csv``."""
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    run = _run(project, run_id)
    fmt = request.GET.get("format", "jsonl")
    if fmt not in RUN_FILE_TYPES:
        return HttpResponse(f"unknown format {fmt!r}; use jsonl or csv", status=400, content_type="text/plain")
    response = StreamingHttpResponse(run_file_lines(run, fmt), content_type=RUN_FILE_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-run-{run.pk}.{fmt}"'
    return response


@login_required
def run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    run = _run(project, run_id)
    show = request.GET.get("show", "all")
    if show not in SHOWN_ITEMS:
        show = "all"
    results = Paginator(run_item_results(run=run, status=SHOWN_ITEMS[show]), ITEMS_PER_PAGE)
    page = results.get_page(request.GET.get("page"))
    kind = project.task_kind
    rows = [(s, _said(kind, s)) for s in page]
    context = {
        "project": project,
        "p": run_progress(run=run),
        "page": page,
        "rows": rows,
        "show": show,
        "show_choices": SHOW_LABELS,
        "earlier_versions": scored_on_earlier_version_count(run=run),
    }
    return render(request, "judges/run_detail.html", context)


def _said(kind: TaskKind, suggestion: Suggestion) -> list[ValueLine]:
    """What the judge answered, as the kind reads a value (empty for a failed item)."""
    if suggestion.value is None:
        return []
    try:
        return kind.value_lines(suggestion.value, suggestion.item.payload)
    except (KeyError, TypeError, ValueError, IndexError):
        return []  # a value of an older schema: the raw output below still shows it
