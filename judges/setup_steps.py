"""The judge-run step of a project's setup checklist (annotation/setup_checklist.py)."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Project
from annotation.setup_checklist import SetupStep, register_setup_step
from judges.models import JudgeRun


def judge_run_step(project: Project) -> SetupStep:
    runs = JudgeRun.objects.filter(project=project)
    finished = runs.filter(status=JudgeRun.Status.COMPLETED).count()
    return SetupStep(
        key="judge_run",
        label="Run an LLM judge",
        done=finished > 0,
        detail=f"{finished} finished run{'s' if finished != 1 else ''}" if runs.exists() else "optional: pre-annotate",
        url=reverse("project_judges", args=[project.slug]),
    )


register_setup_step(key="judge_run", order=40, step=judge_run_step)
