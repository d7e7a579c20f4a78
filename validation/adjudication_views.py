"""Expert pages: the disagreement queue, one item side by side with a decision form, gold downloads."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.access import require_project_role
from annotation.errors import ValidationFailed
from annotation.models import Item, Project, Role
from annotation.value_grid import value_grid
from validation.exports import FORMATS
from validation.goldset import (
    SHAPES,
    adjudication_lists,
    adjudication_next,
    adjudication_payload,
    export_gold,
    gold_summary,
    item_judge_answer,
    item_state,
)
from validation.services import adjudication_record

DECIDERS = {Role.EXPERT, Role.RESEARCHER}
NOT_A_DECIDER = "Only the project's experts and researchers adjudicate."
#: The column name and ``?take=`` value of the judge's answer (a rater's is their username); a baseline
#: judge is never called an LLM.
LLM_COLUMN, BASELINE_COLUMN, TAKE_LLM = "LLM evaluator", "Baseline judge", "llm"
DECIDED_NEXT = "Decision on {done} recorded. Next item waiting for an expert: {next}."
DECIDED_LAST = "Decision on {done} recorded. Nothing else waits for an expert."
CONTENT_TYPES = {"jsonl": "application/jsonl", "csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


@login_required
def adjudication_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, roles = require_project_role(request, slug, DECIDERS, denied=NOT_A_DECIDER)
    queue, short = adjudication_lists(project=project)
    context = {
        "project": project,
        "is_researcher": Role.RESEARCHER in roles,
        "queue": queue,
        "short": short,
        "summary": gold_summary(project=project),
        "formats": FORMATS,
        "shapes": SHAPES,
    }
    return render(request, "validation/adjudication_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def adjudication_item(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, DECIDERS, denied=NOT_A_DECIDER)
    item = get_object_or_404(Item, pk=item_id, project=project)
    kind = project.task_kind
    errors: list = []
    value = None
    if request.method == "POST":
        value = kind.value_from_form(request.POST, payload=item.payload)
        try:
            adjudication_record(
                project=project, item=item, expert=request.user, value=value, note=request.POST.get("decision_note", "")
            )
        except ValidationFailed as exc:
            errors = exc.errors
        else:
            return _after_decision(request, project, item)
    state = item_state(project=project, item=item)
    columns = sorted(state.gold.raters.items())
    takes = [rater for rater, _ in columns]
    # The judge's answer sits beside the raters' whenever a run has one (this page is for deciders only).
    judged = item_judge_answer(project=project, item=item)
    judge_column = None
    if judged is not None:
        judge_column = BASELINE_COLUMN if judged.judge.is_baseline else LLM_COLUMN
        columns.append((judge_column, judged.value))
        takes.append(TAKE_LLM)
    # "Take this answer" is a plain link: the chosen column's value pre-fills the decision form.
    taken = request.GET.get("take", "") if request.method == "GET" else ""
    prefill = dict(zip(takes, (v for _, v in columns), strict=True)).get(taken)
    shown = value or prefill or (state.gold.value if state.gold.ready else None)
    # Gold is made blind to the kind's hidden fields (the condition under study) unless the project
    # shows them to its experts on purpose: the page is given the raters' copy of the payload.
    payload, hidden = adjudication_payload(project=project, item=item)
    context = {
        "project": project,
        "kind": kind,
        "item": item,
        "payload": payload,
        "state": state,
        "errors": errors,
        "value": shown,
        "grid": value_grid(kind=kind, payload=payload, columns=columns),
        "takes": takes,
        "taken": (judge_column if taken == TAKE_LLM else taken) if prefill is not None else None,
        "judge_column": judge_column,
        "machine_columns": [judge_column] if judge_column else [],
        "form": kind.form_context(payload=payload, value=shown, peers=[]),
        "hidden": hidden,
        "blind_fields": [] if project.adjudicators_see_hidden else list(kind.hidden_fields),
    }
    return render(request, "validation/adjudication_item.html", context, status=422 if errors else 200)


def _after_decision(request: HttpRequest, project: Project, item: Item) -> HttpResponse:
    """On to the next item an expert should decide, or back to the list when none is left."""
    following = adjudication_next(project=project, after_pk=item.pk)
    if following is None:
        messages.success(request, DECIDED_LAST.format(done=item.external_id))
        return redirect("adjudication_list", slug=project.slug)
    messages.success(request, DECIDED_NEXT.format(done=item.external_id, next=following.item.external_id))
    return redirect("adjudication_item", slug=project.slug, item_id=following.item.pk)


@login_required
def gold_download(request: HttpRequest, slug: str) -> HttpResponseBase:
    project, _ = require_project_role(request, slug, DECIDERS, denied=NOT_A_DECIDER)
    fmt, shape = request.GET.get("format", "jsonl"), request.GET.get("shape", "concord")
    if fmt not in FORMATS or shape not in SHAPES:
        return HttpResponse(f"format must be one of {FORMATS} and shape one of {SHAPES}", status=400)
    folder = Path(tempfile.mkdtemp(prefix="concord-export-"))
    path = folder / f"{project.slug}-gold-{shape}.{fmt}"
    export_gold(project=project, fmt=fmt, path=path, shape=shape)
    handle = path.open("rb")
    path.unlink()  # the open handle keeps the data until the response is sent; nothing is left behind
    folder.rmdir()
    return FileResponse(handle, as_attachment=True, filename=path.name, content_type=CONTENT_TYPES[fmt])
