"""The Generate items step of a project's setup checklist (annotation/setup_checklist.py): optional,
offered to projects of a kind some generator step makes items of."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Project
from annotation.setup_checklist import SetupStep, register_setup_step
from judges.generation.steps import steps_for_kind
from judges.models import GenerationRun


def generate_items_step(project: Project) -> SetupStep | None:
    """Offered only where a generation step makes the project's kind (or runs were made before)."""
    runs = GenerationRun.objects.filter(project=project)
    if not steps_for_kind(project.kind) and not runs.exists():
        return None
    finished = runs.filter(status=GenerationRun.Status.COMPLETED).count()
    if runs.exists():
        detail = f"{finished} finished run{'s' if finished != 1 else ''}"
    else:
        detail = "optional: make items from threads or labels with an LLM"
    return SetupStep(
        key="generate_items",
        label="Generate items",
        done=finished > 0,
        detail=detail,
        url=reverse("generate_items", args=[project.slug]),
    )


register_setup_step(key="generate_items", order=15, step=generate_items_step)
