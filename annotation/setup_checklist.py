"""The checklist a project page shows its researchers: the steps of a study, each done or not, with
a link to where it is done.

Steps that belong to a higher layer (judge runs, agreement, gold) are registered by that layer when
it loads (``register_setup_step`` in its AppConfig.ready), so this module never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Count
from django.urls import reverse

from annotation.models import Annotation, Item, Membership, Project, Role
from annotation.registry import Registry


@dataclass(frozen=True)
class SetupStep:
    key: str
    label: str
    done: bool
    #: What is there now, or what to do next, in a few words.
    detail: str
    url: str


#: A step for the project, or None where it does not apply to the project (e.g. its kind has no generator).
StepFunction = Callable[[Project], SetupStep | None]
#: (order, step) by key (an :class:`annotation.registry.Registry`; registering a key again replaces it).
SETUP_STEPS: Registry[tuple[int, StepFunction]] = Registry("setup step", replaces=True)


def register_setup_step(*, key: str, order: int, step: StepFunction) -> None:
    """Add (or replace) the step called ``key``; steps are listed by ``order``."""
    SETUP_STEPS.register(key, (order, step))


def setup_checklist(*, project: Project) -> list[SetupStep]:
    steps = (step(project) for _order, step in sorted(SETUP_STEPS.all(), key=lambda entry: entry[0]))
    return [step for step in steps if step is not None]


def _guidelines(project: Project) -> SetupStep:
    done = bool(project.guidelines.strip())
    return SetupStep(
        key="guidelines",
        label="Write the guidelines",
        done=done,
        detail=f"{len(project.guidelines.split())} words" if done else "annotators read them beside every item",
        url=reverse("project_settings", args=[project.slug]),
    )


def _items(project: Project) -> SetupStep:
    n = Item.objects.filter(project=project).count()
    return SetupStep(
        key="items",
        label="Import items",
        done=n > 0,
        detail=f"{n} item{'s' if n != 1 else ''}" if n else "upload a .jsonl or .csv file",
        url=reverse("project_detail", args=[project.slug]) + "#import-heading",
    )


def _members(project: Project) -> SetupStep:
    n = Membership.objects.filter(project=project, role__in=[Role.ANNOTATOR, Role.EXPERT]).values("user").distinct()
    count = n.count()
    return SetupStep(
        key="members",
        label="Add annotators",
        done=count >= project.overlap,
        detail=f"{count} annotating member{'s' if count != 1 else ''}; each item needs {project.overlap}",
        # The Team page's add form, where people are added (the project page only lists them).
        url=reverse("team", args=[project.slug]) + "#add-heading",
    )


def _progress(project: Project) -> SetupStep:
    items = Item.objects.filter(project=project, gold_value__isnull=True).count()
    complete = (
        Annotation.objects.filter(project=project, item__gold_value__isnull=True)
        .values("item_id")
        .annotate(raters=Count("rater", distinct=True))
        .filter(raters__gte=project.overlap)
        .count()
    )
    return SetupStep(
        key="progress",
        label="Collect annotations",
        done=bool(items) and complete >= items,
        detail=f"{complete} of {items} items have {project.overlap} annotators",
        url=reverse("project_detail", args=[project.slug]) + "#annotators-heading",
    )


register_setup_step(key="guidelines", order=10, step=_guidelines)
register_setup_step(key="items", order=20, step=_items)
register_setup_step(key="members", order=30, step=_members)
register_setup_step(key="progress", order=50, step=_progress)
