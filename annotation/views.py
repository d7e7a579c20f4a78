"""Pages. Thin: check access, call a service or selector, render. htmx requests get a partial."""

from __future__ import annotations

import uuid

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect, replace_url, reswap, retarget

from annotation.access import project_assignment_access, require_project_role
from annotation.assignments import (
    NOT_YOUR_ASSIGNMENT,
    AssignmentClosed,
    Claim,
    ItemFull,
    NotAssigned,
    assignment_claim,
    assignment_for_user,
    assignment_id_possible,
    assignment_open,
    assignment_presentation,
    assignment_skip,
    assignment_submit,
    assignment_unskip,
)
from annotation.errors import FieldError, ImportRejected, ValidationFailed
from annotation.job_events import job_end_announced
from annotation.kinds.wording import sentence
from annotation.models import Assignment, ImportJob, Project, Role
from annotation.pace import annotator_pace
from annotation.panels import project_panels
from annotation.post_redirect import post_only
from annotation.request_types import HtmxHttpRequest
from annotation.selectors import (
    annotator_progress,
    annotator_stats,
    import_history,
    import_job_progress,
    last_closed,
    latest_own_value,
    own_history,
    own_skipped,
    peer_values,
    project_roles,
    project_summary,
    projects_for_user,
    rater_payload,
    sees_project_design,
    visible_suggestion,
)
from annotation.services import import_job_create
from annotation.tasks import import_job_task

NOT_A_RESEARCHER = "Only the project's researchers can do this."


class ImportForm(forms.Form):
    target = forms.ChoiceField(choices=ImportJob.Target.choices, initial=ImportJob.Target.ITEMS, label="What")
    file = forms.FileField(label="File (.jsonl or .csv, UTF-8)")
    existing = forms.ChoiceField(
        choices=ImportJob.Existing.choices,
        initial=ImportJob.Existing.REFUSE,
        required=False,
        widget=forms.RadioSelect,
        label="Items already in the project (item files)",
    )


def _require_researcher(request: HttpRequest, roles: set[str]) -> None:
    if Role.RESEARCHER not in roles and not request.user.is_superuser:
        raise PermissionDenied(NOT_A_RESEARCHER)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/home.html", {"rows": projects_for_user(user=request.user)})


@login_required
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug)
    return render(request, "annotation/project_detail.html", _project_context(request, project))


def _project_context(request: HttpRequest, project: Project) -> dict:
    roles = project_roles(project=project, user=request.user)
    return {
        "project": project,
        "roles": roles,
        "is_researcher": Role.RESEARCHER in roles or request.user.is_superuser,
        "summary": project_summary(project=project),
        "jobs": import_history(project=project, page=request.GET.get("imports", 1)),
        "form": ImportForm(),
        "annotators": annotator_stats(project=project) if Role.RESEARCHER in roles or request.user.is_superuser else [],
        "annotates": bool(roles & ANNOTATING_ROLES),
        "browses_items": bool(roles & {Role.RESEARCHER, Role.EXPERT}),
        "sees_design": sees_project_design(user=request.user, roles=roles),
        "panels": project_panels(project=project, user=request.user, roles=roles),
    }


@login_required
@post_only("project_detail", "slug")
def import_upload(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, roles = require_project_role(request, slug)
    _require_researcher(request, roles)
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            job = import_job_create(
                project=project,
                target=form.cleaned_data["target"],
                uploaded=form.cleaned_data["file"],
                user=request.user,
                existing=form.cleaned_data["existing"] or ImportJob.Existing.REFUSE,
            )
        except ImportRejected as exc:
            form.add_error("file", exc.message)
        else:
            transaction.on_commit(lambda: import_job_task.delay(job.pk))
            if not request.htmx:
                return redirect("project_detail", slug=project.slug)
            # The job's row, and a fresh form (its file input cleared) swapped out of band.
            job.refresh_from_db()  # a worker that was quick (or tasks run in-process) may be done already
            context = {"p": import_job_progress(job=job), "project": project, "form": ImportForm(), "fresh_form": True}
            response = render(request, "annotation/_import_upload_done.html", context)
            return job_end_announced(request, response, ended=_import_ended(job))
    context = {"project": project, "form": form}
    if request.htmx:
        # htmx leaves 4xx responses unswapped: answer 200 and swap the form with its errors in place.
        response = render(request, "annotation/project_detail.html#import-form", context)
        return reswap(retarget(response, "#import-form"), "outerHTML")
    return render(
        request, "annotation/project_detail.html", {**_project_context(request, project), "form": form}, status=400
    )


@login_required
def import_status(request: HtmxHttpRequest, slug: str, job_id: int) -> HttpResponse:
    project, roles = require_project_role(request, slug)
    _require_researcher(request, roles)
    job = get_object_or_404(ImportJob, pk=job_id, project=project)
    response = render(request, "annotation/project_detail.html#import-job", {"p": import_job_progress(job=job)})
    return job_end_announced(request, response, ended=_import_ended(job))


def _import_ended(job: ImportJob) -> bool:
    return job.status not in {ImportJob.Status.PENDING, ImportJob.Status.RUNNING}


# -- the annotator's workspace ------------------------------------------------------------------

ANNOTATING_ROLES = {Role.ANNOTATOR, Role.EXPERT}
NOT_AN_ANNOTATOR = "Only the project's annotators and experts annotate."


def _annotator_access(
    request: HttpRequest, slug: str, assignment_id: int | None = None
) -> tuple[Project, set[str], Assignment | None]:
    project, roles, assignment = project_assignment_access(
        user=request.user, slug=slug, allowed=ANNOTATING_ROLES, denied=NOT_AN_ANNOTATOR, assignment_id=assignment_id
    )
    if not roles & ANNOTATING_ROLES:  # a superuser who does not annotate here has no assignments
        raise PermissionDenied(NOT_AN_ANNOTATOR)
    return project, roles, assignment


def _annotator_project(request: HttpRequest, slug: str) -> tuple[Project, set[str]]:
    project, roles, _ = _annotator_access(request, slug)
    return project, roles


def _annotator_assignment(request: HttpRequest, slug: str, assignment_id: int) -> tuple[Project, set[str], Assignment]:
    """``_annotator_project`` and the user's assignment in it, read by one statement (a submit runs it)."""
    if not assignment_id_possible(assignment_id):
        raise Http404(NOT_YOUR_ASSIGNMENT)
    project, roles, assignment = _annotator_access(request, slug, assignment_id)
    if assignment is None:
        raise Http404(NOT_YOUR_ASSIGNMENT)
    return project, roles, assignment


def _render_item(
    request: HtmxHttpRequest,
    project: Project,
    roles: set[str],
    assignment: Assignment | None,
    *,
    value: dict | None = None,
    errors: list | None = None,
    editing: bool = False,
    return_to: str = "",
    notice: str = "",
    status: int = 200,
    claim: Claim | None = None,
) -> HttpResponse:
    kind = project.task_kind
    context = {
        "project": project,
        "kind": kind,
        "progress": annotator_progress(
            project=project,
            user=request.user,
            roles=roles,
            nothing_left=assignment is None,
            # What the claim just read, so the progress need not read it again.
            counts=None if claim is None else claim.counts,
            size=None if claim is None else claim.size,
        ),
        "assignment": assignment,
        # The page speaks the annotator's language; the API and imports keep the precise field paths.
        "errors": [kind.friendly_error(e) if isinstance(e, FieldError) else sentence(str(e)) for e in errors or []],
        "editing": editing,
        "return_to": return_to if return_to in RETURN_TO else "",
        "notice": notice,
        "undo_url": reverse("annotation_undo", args=[project.slug]),
    }
    if assignment is not None:
        suggestion = visible_suggestion(assignment=assignment)
        if suggestion is not None and value is None and not editing:
            value = suggestion.value
        # The rater's copy of the payload only (blinding): the form cannot show what it is not given.
        payload = rater_payload(assignment=assignment)
        context.update(
            item_reference=assignment.rater_reference,
            payload=payload,
            revealed=_revealed(project, payload),
            value=value,
            suggestion=suggestion,
            idempotency_key=uuid.uuid4().hex,
            form=project.task_kind.form_context(
                payload=payload,
                value=value,
                peers=peer_values(item=assignment.item, user=request.user)
                if project.task_kind.peers_visible_to(roles)
                else [],
                presentation=assignment_presentation(assignment=assignment),
            ),
        )
    template = "annotation/workspace.html#item" if request.htmx else "annotation/workspace.html"
    return render(request, template, context, status=status)


def _revealed(project: Project, payload: dict) -> list[tuple[str, object]]:
    """(name, value) of each hidden field the project shows its raters on purpose."""
    return [(name.replace("_", " "), payload[name]) for name in project.revealed_fields if name in payload]


@login_required
def workspace(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, roles = _annotator_project(request, slug)
    return _serve_next(request, project, roles)


def _serve_next(
    request: HtmxHttpRequest, project: Project, roles: set[str], *, notice: str = "", holds_none: bool = False
) -> HttpResponse:
    claim = assignment_claim(project=project, user=request.user, holds_none=holds_none)
    notice = " ".join(filter(None, [notice, claim.notice]))
    return _render_item(request, project, roles, claim.assignment, notice=notice, claim=claim)


@login_required
@post_only("workspace", "slug")
def assignment_submit_view(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    project, roles, assignment = _annotator_assignment(request, slug, assignment_id)
    kind = project.task_kind
    value = kind.value_from_form(
        request.POST, payload=assignment.item.payload, presentation=assignment_presentation(assignment=assignment)
    )
    editing = assignment.status == Assignment.Status.SUBMITTED
    return_to = request.POST.get("return_to", "")
    try:
        # Whether a suggestion was visible is what the assignment recorded when it was served.
        assignment_submit(
            assignment=assignment, value=value, idempotency_key=request.POST.get("idempotency_key") or None
        )
    except ValidationFailed as exc:
        # 422 is swapped by htmx (see base.html's htmx-config), so the form comes back with its errors.
        return _render_item(
            request,
            project,
            roles,
            assignment,
            value=value,
            errors=exc.errors,
            editing=editing,
            return_to=return_to,
            status=422,
        )
    except AssignmentClosed as exc:
        return _render_item(request, project, roles, assignment, value=value, errors=[exc.message], status=409)
    if editing:
        return _after_edit(request, project, roles, assignment, return_to)
    if not request.htmx:
        return redirect("workspace", slug=project.slug)
    # A first answer: the user's one hold was this item, now answered, so the claim need not look for another.
    return _serve_next(request, project, roles, holds_none=True)


#: Where an edit goes back to when saved: the history it was opened from, else the workspace.
RETURN_TO = {"history"}
EDIT_SAVED = "Your change to item {item} is saved as a new version."


def _after_edit(
    request: HtmxHttpRequest, project: Project, roles: set[str], assignment: Assignment, return_to: str
) -> HttpResponse:
    """A saved edit leaves the edit page: back to the history it came from, or on to the next item.
    htmx swaps only the item panel, so the history (a whole page) is reached by a full navigation."""
    notice = EDIT_SAVED.format(item=assignment.rater_reference)
    if return_to == "history":
        messages.success(request, notice)
        history = reverse("annotation_history", args=[project.slug])
        return HttpResponseClientRedirect(history) if request.htmx else redirect(history)
    if not request.htmx:
        messages.success(request, notice)
        return redirect("workspace", slug=project.slug)
    response = _serve_next(request, project, roles, notice=notice)
    return replace_url(response, reverse("workspace", args=[project.slug]))


@login_required
@post_only("workspace", "slug")
def assignment_skip_view(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    project, roles, assignment = _annotator_assignment(request, slug, assignment_id)
    try:
        assignment_skip(assignment=assignment, reason=request.POST.get("reason", ""))
    except (ValidationFailed, AssignmentClosed) as exc:
        errors: list[FieldError | str] = list(exc.errors) if isinstance(exc, ValidationFailed) else [exc.message]
        return _render_item(request, project, roles, assignment, errors=errors, status=422)
    if not request.htmx:
        return redirect("workspace", slug=project.slug)
    return _serve_next(request, project, roles)


@login_required
def annotation_edit(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """An earlier item of the user's, with their latest value, to change (the change is a new version)."""
    project, roles = _annotator_project(request, slug)
    assignment = _own_assignment(request, project, assignment_id)
    assignment_open(assignment=assignment)
    latest = latest_own_value(item=assignment.item, user=request.user)
    return_to = request.GET.get("from", "")
    return _render_item(request, project, roles, assignment, value=latest, editing=True, return_to=return_to)


@login_required
def annotation_history(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = _annotator_project(request, slug)
    context = {
        "project": project,
        "rows": own_history(project=project, user=request.user),
        "skipped": own_skipped(project=project, user=request.user),
    }
    return render(request, "annotation/history.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def annotation_undo(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The item the user submitted or skipped last, reopened; found when asked, not on every page.
    A submitted one opens for an edit; a skipped one is taken back (a change, so only by POST: a
    plain link to a skip leads to the history, where it can be answered)."""
    project, _ = _annotator_project(request, slug)
    last = last_closed(project=project, user=request.user)
    if last is None:
        return redirect("workspace", slug=project.slug)
    if last.status == Assignment.Status.SKIPPED:
        if request.method != "POST":
            return redirect("annotation_history", slug=project.slug)
        _unskip(request, last)
        return redirect("workspace", slug=project.slug)
    return redirect("annotation_edit", slug=project.slug, assignment_id=last.pk)


@login_required
@post_only("annotation_history", "slug")
def assignment_unskip_view(request: HtmxHttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """Answer a skipped item after all: it is reopened and served next, unless it no longer needs you."""
    project, _ = _annotator_project(request, slug)
    if _unskip(request, _own_assignment(request, project, assignment_id)):
        return redirect("workspace", slug=project.slug)
    return redirect("annotation_history", slug=project.slug)


def _unskip(request: HttpRequest, assignment: Assignment) -> bool:
    try:
        assignment_unskip(assignment=assignment)
    except (ItemFull, AssignmentClosed) as exc:
        messages.warning(request, sentence(exc.message))
        return False
    return True


@login_required
def my_pace(request: HttpRequest) -> HttpResponse:
    """The annotator's own pace: items per day and median seconds per item, all projects."""
    return render(request, "annotation/pace.html", {"pace": annotator_pace(user=request.user)})


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page links; answer with the static icon."""
    return redirect(static("concord/favicon.ico"), permanent=True)


def _own_assignment(request: HttpRequest, project: Project, assignment_id: int) -> Assignment:
    try:
        return assignment_for_user(assignment_id=assignment_id, user=request.user, project=project)
    except NotAssigned as exc:
        raise Http404(exc.message) from None
