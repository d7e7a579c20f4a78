"""Researcher pages for generation runs: Generate items (upload a source, choose a step, endpoint and
parameters), and a run page with live progress, token counts and failures with their raw output.

Thin: check access, call a service or selector, render. The uploaded file is kept only while the
run starts (its records are stored with the run), and never at a path anyone typed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import cast

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.access import require_project_role
from annotation.errors import ImportRejected, ValidationFailed
from annotation.models import Project, Role
from judges.errors import JudgeError
from judges.generation.execution import GENERATION_RUNS
from judges.generation.forms import GenerateForm
from judges.generation.selectors import (
    generation_failures,
    generation_runs_for_project,
    generation_tokens,
)
from judges.generation.services import generation_run_start
from judges.models import GenerationRun
from judges.runs.views import NOT_A_RESEARCHER, project_run
from judges.selectors import run_progress
from judges.tasks import run_dispatch

SOURCE_TOO_LARGE = "the file is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES); use the command line"
RUNS_SHOWN = 20
FAILURES_PER_PAGE = 25
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def _page(request: HttpRequest, project: Project, form: GenerateForm | None = None, status: int = 200) -> HttpResponse:
    context = {
        "project": project,
        "form": form or GenerateForm(project=project),
        "runs": [run_progress(run=r) for r in generation_runs_for_project(project=project)[:RUNS_SHOWN]],
        "max_bytes": _max_bytes(),
    }
    return render(request, "judges/generate.html", context, status=status)


def _max_bytes() -> int:
    return getattr(settings, "CONCORD_IMPORT_MAX_BYTES", DEFAULT_MAX_BYTES)


@login_required
def generate_items(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    if request.method != "POST":
        return _page(request, project)
    form = GenerateForm(request.POST, request.FILES, project=project)
    if not form.is_valid():
        return _page(request, project, form, status=400)
    upload = form.cleaned_data["source"]
    limit = _max_bytes()
    if upload.size is not None and upload.size > limit:
        form.add_error("source", SOURCE_TOO_LARGE.format(limit=limit))
        return _page(request, project, form, status=400)
    data = form.cleaned_data
    with tempfile.TemporaryDirectory() as folder:
        # Kept under a name of our own (the suffix only comes from the upload): the run stores the records.
        path = Path(folder) / f"source{Path(upload.name).suffix.lower()[:10]}"
        with path.open("wb") as handle:
            for block in upload.chunks():
                handle.write(block)
        try:
            run = generation_run_start(
                project=project,
                step=data["step"],
                path=path,
                source_name=Path(upload.name).name,
                backend=data["backend"],
                model=data["model"],
                endpoint=data["endpoint"] or "",
                temperature=data["temperature"],
                max_tokens=data["max_tokens"],
                seed=data["seed"],
                options=form.step_options(),
                limit=data["limit"],
                created_by=request.user,
            )
        except ImportRejected as exc:
            shown = [str(e) for e in exc.errors[:10]]
            more = f" … and {exc.total - len(shown)} more" if exc.total > len(shown) else ""
            form.add_error("source", "; ".join(shown) + more)
            return _page(request, project, form, status=400)
        except (JudgeError, ValidationFailed) as exc:
            form.add_error(None, exc.message)
            return _page(request, project, form, status=400)
    transaction.on_commit(lambda: run_dispatch(run_type=GENERATION_RUNS, run_id=run.pk))
    return redirect("generation_run_detail", slug=project.slug, run_id=run.pk)


@login_required
def generation_run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    run = cast(GenerationRun, project_run(project, GENERATION_RUNS, run_id))
    failures = Paginator(generation_failures(run=run), FAILURES_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "p": run_progress(run=run),
        "tokens": generation_tokens(run=run),
        "failures": failures,
    }
    return render(request, "judges/generate_run.html", context)
