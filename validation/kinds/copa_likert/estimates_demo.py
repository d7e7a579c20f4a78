"""The estimates demo (``make run``): a CoPA project with a validation sample, a judge run and labels.

``demo-estimates`` holds the demo CoPA responses several times over, each copy under another
``response_source`` (accepted, top-voted, a model), so groups have something to compare. The
lexical-overlap baseline (labelled as a baseline, no LLM) scores every item in this process; a
stratified validation sample of 90 items is drawn with seed 26; and two demo raters score the
sampled items. Their scores are *simulated* (seeded, around the baseline's, higher on average),
for the Estimates page to show the three estimates side by side: demo content, not data.

Safe to rerun: a project whose demo run completed is left as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.demo import FIXTURES_DIR
from annotation.importing import Record, import_item_records
from annotation.kinds.copa_likert import FACTORS
from annotation.models import Annotation, Membership, Project, Role, SampleItem
from annotation.sampling import validation_sample_draw
from annotation.services import membership_add, project_create
from judges.execution import judge_chunk_process
from judges.models import JudgeRun
from judges.selectors import suggestion_values
from judges.services import judge_get_or_create, judge_run_start

__all__ = ["DEMO_SLUG", "DemoEstimates", "demo_estimates_load"]

DEMO_SLUG = "demo-estimates"
SOURCES = ("accepted", "top-voted", "model-a")
COPIES = 15
SAMPLE, SEED = 90, 26
RATERS = ("demo-rater-1", "demo-rater-2")
DEMO_ROLES = (("researcher", Role.RESEARCHER), ("expert", Role.EXPERT))


@dataclass(frozen=True)
class DemoEstimates:
    slug: str
    run: int
    items: int
    sampled: int
    created: bool


def _records() -> list[Record]:
    base = [json.loads(line) for line in (FIXTURES_DIR / "copa_likert.jsonl").read_text().splitlines() if line]
    records: list[Record] = []
    for copy in range(COPIES):
        for item in base:
            if item.get("gold") is not None:
                continue
            data = {**item, "external_id": f"{item['external_id']}-{copy:02d}"}
            data["response_source"] = SOURCES[(copy + len(records)) % len(SOURCES)]
            records.append(Record(line=len(records) + 1, data=data))
    return records


def demo_estimates_load() -> DemoEstimates:
    """Create the estimates demo unless its run already completed."""
    users = {u.username: u for u in get_user_model().objects.filter(username__in=[n for n, _ in DEMO_ROLES])}
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    done = JudgeRun.objects.filter(project=project, status=JudgeRun.Status.COMPLETED).first() if project else None
    if project is not None and done is not None:
        sampled = SampleItem.objects.filter(sample__project=project).count()
        return DemoEstimates(DEMO_SLUG, done.pk, project.items.count(), sampled, created=False)
    with transaction.atomic():
        if project is None:
            project = project_create(
                slug=DEMO_SLUG,
                kind="copa_likert",
                title="Demo: validation sample and estimates (CoPA, simulated labels)",
                overlap=2,
                created_by=users.get("researcher"),
            )
            import_item_records(project=project, records=_records())
        for username, role in DEMO_ROLES:
            user = users.get(username)
            if user is not None and not Membership.objects.filter(project=project, user=user).exists():
                membership_add(project=project, user=user, role=role)
        judge, _ = judge_get_or_create(project=project, backend="baseline", prompt="copa_jaccard")
        run = judge_run_start(judge=judge, project=project, created_by=users.get("researcher"))
    # In this process: `make run` loads the demo before the worker starts.
    for chunk_id in run.chunks.values_list("pk", flat=True):
        judge_chunk_process(chunk_id=chunk_id)
    with transaction.atomic():
        if not SampleItem.objects.filter(sample__project=project).exists():
            validation_sample_draw(
                project=project, n=SAMPLE, seed=SEED, strata="response_source", user=users.get("researcher")
            )
        _simulated_labels(project, run.pk)
    run = JudgeRun.objects.get(pk=run.pk)
    sampled = SampleItem.objects.filter(sample__project=project).count()
    return DemoEstimates(DEMO_SLUG, run.pk, project.items.count(), sampled, created=True)


def _simulated_labels(project: Project, run_id: int) -> None:
    """Two raters per sampled item, seeded: the baseline's score, often one higher (lexical overlap
    misses paraphrase, so the baseline is biased low)."""
    if Annotation.objects.filter(project=project).exists():
        return
    model = dict(suggestion_values(run_id=run_id))
    rng = np.random.default_rng(SEED)
    rows = []
    for item_id in (
        SampleItem.objects.filter(sample__project=project).order_by("item_id").values_list("item_id", flat=True)
    ):
        base = model.get(item_id)
        if base is None:
            continue
        for rater in RATERS:
            higher = rng.random(len(FACTORS)) < 0.6
            scores = {c: int(min(2, base["scores"][c] + int(up))) for c, up in zip(FACTORS, higher, strict=True)}
            rows.append(
                Annotation(project=project, item_id=item_id, rater=rater, version=1, value={"scores": scores},
                           source=Annotation.Source.IMPORT)
            )  # fmt: skip
    Annotation.objects.bulk_create(rows)
