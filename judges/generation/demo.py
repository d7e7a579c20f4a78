"""Demo generation runs (``make run``): one finished run per step, made with the baseline generators
(no LLM, labelled as baselines and as demo content) from the samples in fixtures/sources/, each in a
project of its own so the Generate items pages have something to show without a GPU.

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
from judges.models import GenerationRun

SOURCES_DIR = Path(settings.BASE_DIR) / "fixtures" / "sources"
#: (project slug, kind, step, source file, step options)
DEMO_RUNS = (
    ("generated-ipqa", "ipqa_core_intent", "ipqa_intents", "stackexchange_threads.jsonl", {}),
    ("generated-rationales", "rationale_inspection", "copa_rationale", "stackexchange_threads.jsonl", {}),
    ("generated-copa", "copa_likert", "copa_profile", "stackexchange_threads.jsonl", {"profile_from": "preceding"}),
    ("generated-labels", "label_contextualization", "label_statement", "intent_labels.jsonl", {}),
)
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


def demo_generation_load(*, sources_dir: Path | str = SOURCES_DIR) -> list[DemoGeneration]:
    """Create the demo generation projects and runs that are missing; returns one line per step."""
    users = {u.username: u for u in get_user_model().objects.filter(username__in=[n for n, _ in DEMO_ROLES])}
    results = []
    for slug, kind, step, source, options in DEMO_RUNS:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            project = project_create(
                slug=slug,
                kind=kind,
                title=f"Generated items: {step} (baseline, demo)",
                created_by=users.get("researcher"),
            )
        for username, role in DEMO_ROLES:
            user = users.get(username)
            if user is not None and not Membership.objects.filter(project=project, user=user).exists():
                membership_add(project=project, user=user, role=role)
        done = GenerationRun.objects.filter(project=project, step=step, is_demo=True, status="completed").first()
        created = done is None
        if done is None:
            run = generation_run_start(
                project=project,
                step=step,
                path=Path(sources_dir) / source,
                backend="baseline",
                options=options,
                is_demo=True,
                created_by=users.get("researcher"),
            )
            # In this process: `make run` loads the demo before the worker starts.
            for chunk_id in run.chunks.values_list("pk", flat=True):
                generation_chunk_process(chunk_id=chunk_id)
            done = GenerationRun.objects.get(pk=run.pk)
        results.append(DemoGeneration(slug, step, done.pk, done.status, done.items_created, created))
    return results
