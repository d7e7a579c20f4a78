"""Writes: projects, memberships, annotations. Keyword-only, validated, atomic."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from annotation import sql
from annotation.errors import ConcurrentEdit, FieldError, ValidationFailed, ValueNotPermitted
from annotation.importing import file_format
from annotation.models import Annotation, ImportJob, Item, Membership, Project, Role, SuggestionExposure
from annotation.selectors import project_size_key

User = get_user_model()

VERSION_RACE_RETRIES = 3
VALUE_NEEDS_ROLE = "only the project's {roles}s may give this answer"
CONCURRENT_EDIT = "this item was edited at the same moment elsewhere; please submit again"


def project_create(
    *,
    slug: str,
    kind: str,
    title: str = "",
    overlap: int = 2,
    guidelines: str = "",
    suggestion_exposure: str = SuggestionExposure.HIDDEN,
    suggestion_probability: float = 0.5,
    seed: int = 0,
    qualification_rate: float = 0.0,
    adjudication_rules: dict | None = None,
    created_by: Any = None,
) -> Project:
    project = Project(
        slug=slug,
        kind=kind,
        title=title or slug,
        overlap=overlap,
        guidelines=guidelines,
        suggestion_exposure=suggestion_exposure,
        suggestion_probability=suggestion_probability,
        seed=seed,
        qualification_rate=qualification_rate,
        adjudication_rules=adjudication_rules,
        created_by=created_by,
    )
    project.full_clean()
    project.save()
    if created_by is not None:
        membership_add(project=project, user=created_by, role=Role.RESEARCHER)
    return project


def membership_add(*, project: Project, user: Any, role: str) -> Membership:
    membership, created = Membership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        cache.delete(project_size_key(project.pk))
    return membership


# Written out: it runs on every submit (see annotation/sql.py). The version is the rater's next one;
# a conflict (the same idempotency key, or a parallel edit that took the version) inserts nothing.
INSERT_ANNOTATION_SQL = """
INSERT INTO annotation_annotation
    (project_id, item_id, annotator_id, rater, version, value, source, idempotency_key, suggestion_visible,
     seconds_on_item, created_at)
VALUES (%s, %s, %s, %s,
    (SELECT COALESCE(MAX(version), 0) + 1 FROM annotation_annotation WHERE item_id = %s AND rater = %s),
    %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
RETURNING id, version
"""


def annotation_submit(
    *,
    item: Item,
    user: Any,
    value: Any,
    idempotency_key: str | None = None,
    seconds_on_item: float | None = None,
    suggestion_visible: bool | None = None,
    source: str = Annotation.Source.WEB,
) -> Annotation:
    """Store the user's judgement of ``item`` as their next version.

    A repeated call by the same user with the same ``idempotency_key`` (a double click, a retried
    request) returns the version already stored instead of adding another. Keys are the rater's own:
    another rater's key is a different key.
    """
    project = item.project
    problems = project.task_kind.check_value(value, payload=item.payload)
    if seconds_on_item is not None and seconds_on_item < 0:
        problems.append(FieldError("seconds_on_item", "must be ≥ 0"))
    if problems:
        raise ValidationFailed(problems)
    needed = project.task_kind.roles_for_value(value)
    if needed and not user.is_superuser:
        held = set(Membership.objects.filter(project=project, user=user).values_list("role", flat=True))
        if not held & needed:
            roles = " or ".join(sorted(needed))
            raise ValueNotPermitted([FieldError("value", VALUE_NEEDS_ROLE.format(roles=roles))])
    key = idempotency_key or None
    for _attempt in range(VERSION_RACE_RETRIES):
        now = timezone.now()
        params = [project.pk, item.pk, user.pk, user.username, item.pk, user.username, sql.json_param(value), source,
                  key, suggestion_visible, seconds_on_item, sql.db_datetime(now)]  # fmt: skip
        inserted = sql.fetch_one(INSERT_ANNOTATION_SQL, params)
        if inserted is not None:
            return sql.stored(
                Annotation,
                id=inserted[0],
                project=project,
                item=item,
                annotator=user,
                rater=user.username,
                version=inserted[1],
                value=value,
                source=source,
                idempotency_key=key,
                seconds_on_item=seconds_on_item,
                suggestion_visible=suggestion_visible,
                created_at=now,
            )
        # Nothing inserted. With a key already used, that row is the answer; otherwise a parallel edit
        # took our version number, so count again.
        if key:
            existing = Annotation.objects.filter(project=project, rater=user.username, idempotency_key=key).first()
            if existing is not None:
                return existing
    raise ConcurrentEdit(CONCURRENT_EDIT)


def import_job_create(*, project: Project, target: str, uploaded, user: Any) -> ImportJob:
    """Keep an uploaded file on disk and record the job that will import it."""
    file_format(uploaded.name)  # an unsupported type is refused before anything is stored
    folder = Path(settings.MEDIA_ROOT) / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    stored = folder / f"{uuid.uuid4().hex}{Path(uploaded.name).suffix.lower()}"
    with stored.open("wb") as handle:
        for chunk in uploaded.chunks():
            handle.write(chunk)
    return ImportJob.objects.create(
        project=project,
        target=target,
        filename=Path(uploaded.name).name[:255],
        stored_path=str(stored),
        size_bytes=stored.stat().st_size,
        created_by=user,
    )
