"""The *Validation sample* page: the project's draws and strata, and the researcher's form to draw more.

Thin: check access, call annotation.sampling, render. A refused draw shows its field errors with a
400 and stores nothing.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.access import require_project_role
from annotation.errors import ConcordError, ValidationFailed
from annotation.models import Project, Role, ValidationSample
from annotation.post_redirect import post_only
from annotation.sampling import (
    MAX_DRAW,
    MAX_SEED,
    sample_discardable_draw,
    sample_draws,
    validation_sample_discard,
    validation_sample_draw,
)

NOT_A_RESEARCHER = "Only the project's researchers draw its validation sample."


class DrawForm(forms.Form):
    n = forms.IntegerField(label="Items to add", min_value=1, max_value=MAX_DRAW, required=False)
    fraction = forms.FloatField(label="or a share of the project (0-1]", required=False)
    strata = forms.CharField(label="Stratify by field (payload field or meta.KEY; empty: none)", max_length=100,
                             required=False)  # fmt: skip
    allocation = forms.ChoiceField(choices=ValidationSample.Allocation.choices, initial="proportional")
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=MAX_SEED, initial=0)


@login_required
@require_http_methods(["GET", "POST"])
def validation_sample_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    draws = sample_draws(project=project)
    strata_field = draws[0].sample.strata_field if draws else ""
    form = DrawForm(request.POST or None, initial={"n": request.GET.get("n"), "strata": strata_field})
    errors: list[str] = []
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                draw = validation_sample_draw(
                    project=project,
                    n=data["n"],
                    fraction=data["fraction"],
                    strata=data["strata"].strip(),
                    allocation=data["allocation"],
                    seed=data["seed"],
                    user=request.user,
                )
            except ValidationFailed as exc:
                errors = [str(error) for error in exc.errors]
            except ConcordError as exc:
                errors = [exc.message]
            else:
                messages.success(request, f"Draw {draw.number}: {draw.drawn} items added to the validation sample.")
                return redirect(reverse("validation_sample", args=[project.slug]))
        status = 400
    return _page(request, project, form=form, errors=errors, status=status)


def _page(request: HttpRequest, project: Project, *, form: DrawForm, errors: list[str], status: int) -> HttpResponse:
    draws = sample_draws(project=project)
    latest = draws[-1] if draws else None
    context = {
        "project": project,
        "draws": draws,
        "latest": latest,
        "sampled": sum(d.drawn for d in draws),
        "form": form,
        "errors": errors,
        "payload_fields": project.task_kind.payload_fields,
        "discardable": sample_discardable_draw(project=project),
    }
    return render(request, "annotation/validation_sample.html", context, status=status)


@login_required
@post_only("validation_sample", "slug")
def validation_sample_discard_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Discard the latest draw (the form names it) while nobody labelled or holds its items."""
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    number = request.POST.get("draw", "")
    try:
        discarded = validation_sample_discard(project=project, number=int(number) if number.isdigit() else -1)
    except ConcordError as exc:
        form = DrawForm(initial={"strata": ValidationSample.objects.filter(project=project).values_list(
            "strata_field", flat=True).first() or ""})  # fmt: skip
        return _page(request, project, form=form, errors=[f"Not discarded: {exc.message}"], status=exc.http_status)
    messages.success(request, f"Draw {discarded} discarded: its items are no longer in the validation sample.")
    return redirect(reverse("validation_sample", args=[project.slug]))
