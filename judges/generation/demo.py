"""Demo generation runs (``make run``): one finished run per step that declares a demo (``Step.demo``),
made with the baseline generators (no LLM, labelled as baselines and as demo content) from the
samples in fixtures/sources/, each in a project of its own so the Generate items pages have
something to show without a GPU.

Safe to rerun: a project whose demo run completed is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

from annotation.models import Membership, Project, Role
from annotation.services import membership_add, project_create
from judges.generation.execution import generation_chunk_process
from judges.generation.services import generation_run_start
from judges.generation.steps import Step, all_steps
from judges.models import GenerationRun

SOURCES_DIR = Path(settings.BASE_DIR) / "fixtures" / "sources"
#: Demo accounts (annotation/demo.py) that get the generated projects too, if they exist.
DEMO_ROLES = (("researcher", Role.RESEARCHER), ("expert", Role.EXPERT), ("annotator1", Role.ANNOTATOR))


@dataclass(frozen=True)
class DemoGeneration:
    slug: str
    step: str
    run: int
    status: str
    items_created: int
    created: bool


def demo_steps() -> list[Step]:
    """The steps that declare a demo run."""
    return [step for step in all_steps() if step.demo is not None]


def demo_generation_load(*, sources_dir: Path | str = SOURCES_DIR) -> list[DemoGeneration]:
    """Create the demo generation projects and runs that are missing; returns one line per step."""
    users = {u.username: u for u in get_user_model().objects.filter(username__in=[n for n, _ in DEMO_ROLES])}
    results = []
    for step in demo_steps():
        demo = step.demo
        assert demo is not None  # demo_steps keeps the steps that have one
        slug = demo.project
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            project = project_create(
                slug=slug,
                kind=step.kind,
                title=f"Generated items: {step.name} (baseline, demo)",
                created_by=users.get("researcher"),
            )
        for username, role in DEMO_ROLES:
            user = users.get(username)
            if user is not None and not Membership.objects.filter(project=project, user=user).exists():
                membership_add(project=project, user=user, role=role)
        done = GenerationRun.objects.filter(project=project, step=step.name, is_demo=True, status="completed").first()
        created = done is None
        if done is None:
            run = generation_run_start(
                project=project,
                step=step.name,
                path=Path(sources_dir) / demo.source_file,
                backend="baseline",
                options=demo.options,
                is_demo=True,
                created_by=users.get("researcher"),
            )
            # In this process: `make run` loads the demo before the worker starts.
            for chunk_id in run.chunks.values_list("pk", flat=True):
                generation_chunk_process(chunk_id=chunk_id)
            done = GenerationRun.objects.get(pk=run.pk)
        results.append(DemoGeneration(slug, step.name, done.pk, done.status, done.items_created, created))
    return results
