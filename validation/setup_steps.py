"""The agreement and gold steps of a project's setup checklist (annotation/setup_checklist.py)."""

from __future__ import annotations

from django.db.models import Count
from django.urls import reverse

from annotation.models import Annotation, Project
from annotation.setup_checklist import SetupStep, register_setup_step
from validation.goldset import gold_summary


def agreement_step(project: Project) -> SetupStep:
    # Agreement needs items rated by at least two people.
    shared = (
        Annotation.objects.filter(project=project)
        .values("item_id")
        .annotate(raters=Count("rater", distinct=True))
        .filter(raters__gte=2)
        .count()
    )
    return SetupStep(
        key="agreement",
        label="Read the agreement report",
        done=shared > 0,
        detail=f"{shared} item{'s' if shared != 1 else ''} with two or more raters"
        if shared
        else "needs items with two raters",
        url=reverse("report", args=[project.slug]),
    )


def gold_step(project: Project) -> SetupStep:
    summary = gold_summary(project=project)
    return SetupStep(
        key="gold",
        label="Adjudicate and export gold",
        done=bool(summary.items) and summary.ready >= summary.items,
        detail=f"{summary.ready} of {summary.items} items gold-ready",
        url=reverse("adjudication_list", args=[project.slug]),
    )


register_setup_step(key="agreement", order=60, step=agreement_step)
register_setup_step(key="gold", order=70, step=gold_step)
