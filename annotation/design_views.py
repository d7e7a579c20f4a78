"""The design preview of the New project and Settings pages: a design (JSON) rendered as exactly the
form annotators will get, on the kind's example item, or its problems each at its path.

Thin like annotation/project_views.py: the design is checked by the kind (``check_design``) and the
form is the kind's own partial, filled by the kind's ``form_context`` as the workspace fills it.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.access import CANNOT_CREATE_PROJECTS, can_create_projects, require_project_role
from annotation.kinds import KINDS, all_kinds
from annotation.kinds.designs import DESIGN_TOO_LARGE, MAX_DESIGN_BYTES
from annotation.models import Role, str_design_error

PREVIEW = "annotation/_design_preview.html"
NO_DESIGN_KIND = "choose a task kind that takes a design (a rating scale or a label set)"
NOT_JSON = "not JSON: line {line}, column {column}: {message}"


def design_examples() -> dict[str, dict]:
    """Each designed kind's example design by kind name: what the builder starts from."""
    return {kind.name: kind.design for kind in all_kinds() if kind.design_schema is not None and kind.design}


def design_problems(kind_name: str, text: str) -> tuple[list[str], Any]:
    """(problems, design) of a design typed on a page: JSON first, then the kind's own checks."""
    if kind_name not in KINDS or KINDS.get(kind_name).design_schema is None:
        return [NO_DESIGN_KIND], None
    if len(text.encode("utf-8")) > MAX_DESIGN_BYTES:
        return [DESIGN_TOO_LARGE], None
    try:
        design = json.loads(text)
    except json.JSONDecodeError as exc:
        return [NOT_JSON.format(line=exc.lineno, column=exc.colno, message=exc.msg)], None
    return [str_design_error(e) for e in KINDS.get(kind_name).check_design(design)], design


@login_required
@require_http_methods(["POST"])
def design_preview(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """The annotator's form for the posted design (htmx), or the design's problems (422)."""
    if slug is None:
        if not can_create_projects(request.user):
            raise PermissionDenied(CANNOT_CREATE_PROJECTS)
    else:
        require_project_role(request, slug, {Role.RESEARCHER})
    kind_name = request.POST.get("kind", "")
    problems, design = design_problems(kind_name, request.POST.get("design", ""))
    if problems:
        return render(request, PREVIEW, {"problems": problems}, status=422)
    kind = KINDS.get(kind_name).with_design(design)
    payload = kind.example_payload()
    context = {
        "kind": kind,
        "payload": kind.rater_payload(payload),
        "form": kind.form_context(payload=payload, value=None, peers=[]),
        "value": None,
    }
    return render(request, PREVIEW, context)
