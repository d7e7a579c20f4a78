"""Writes: projects, memberships, annotations. Keyword-only, validated, atomic."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation import rows, sql
from annotation.access import CANNOT_CREATE_PROJECTS, can_create_projects, role_names
from annotation.errors import (
    ConcordError,
    ConcurrentEdit,
    FieldError,
    ImportRejected,
    ValidationFailed,
    ValueNotPermitted,
)
from annotation.importing import file_format
from annotation.importing.services import import_job_record
from annotation.item_places import places_follow_overlap
from annotation.kinds import get_kind
from annotation.kinds.designs import design_form, design_json
from annotation.models import Annotation, ImportJob, Item, Membership, Project, Role, SuggestionExposure
from annotation.selectors import project_size_changed

User = get_user_model()

VERSION_RACE_RETRIES = 3
VALUE_NEEDS_ROLE = "only the project's {roles} may give this answer"
CONCURRENT_EDIT = "this item was edited at the same moment elsewhere; please submit again"


# -- projects: creation, settings, archive ---------------------------------------------------------

PROJECT_ARCHIVED = "this project is archived: it takes no new annotations"
#: Guidelines are Markdown shown beside every item; longer text is refused (pages, API and commands alike).
GUIDELINES_MAX_CHARS = 100_000
GUIDELINES_TOO_LONG = f"guidelines may have at most {GUIDELINES_MAX_CHARS:,} characters"
KIND_LOCKED_BY_ANSWERS = "the task kind cannot change once answers exist: they were given in this kind's form"
KIND_LOCKED_BY_ITEMS = "the task kind cannot change once items exist: they were checked against this kind on import"
DESIGN_LOCKED_BY_ANSWERS = (
    "the design cannot change once answers exist: they were given in its form (a changed design is a new project)"
)
DESIGN_FIELDS_LOCKED_BY_ITEMS = (
    "the design's fields cannot change once items exist: the items were checked against them"
)
SEED_LOCKED = "the seed cannot change once items exist: their order was drawn from it on import"
OVERLAP_BELOW_DONE = "k cannot go below {minimum}: an item already has {minimum} annotator(s)"
#: What a researcher may change after creation (the slug names the project in links and files: never).
PROJECT_SETTINGS = (
    "title",
    "kind",
    "guidelines",
    "overlap",
    "suggestion_exposure",
    "suggestion_probability",
    "seed",
    "qualification_rate",
    "adjudication_rules",
    "revealed_fields",
    "design",
    "adjudicators_see_hidden",
)


class ProjectArchived(ConcordError, PermissionDenied):
    """An archived project takes no new claims. A PermissionDenied too, so pages answer 403."""

    code = "project_archived"
    http_status = 403


@transaction.atomic
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
    design: dict | None = None,
    created_by: Any = None,
) -> Project:
    """A new project. A kind that takes a design gets ``design`` (checked; docs/formats.md, "Designs"),
    or, when none is given, the kind's example design, stored with the project all the same."""
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
        design=design if design is not None else _example_design(kind),
        created_by=created_by,
    )
    _check_guidelines(guidelines)
    project.full_clean()
    project.save()
    if created_by is not None:
        membership_add(project=project, user=created_by, role=Role.RESEARCHER)
    return project


def _example_design(kind: str) -> dict | None:
    try:
        return get_kind(kind).design
    except KeyError:  # an unknown kind: the project's own check names it
        return None


def _check_guidelines(text: str) -> None:
    if len(text or "") > GUIDELINES_MAX_CHARS:
        raise ValidationError({"guidelines": GUIDELINES_TOO_LONG})


def project_create_as(*, user: Any, **fields: Any) -> Project:
    """Create a project for a person on a page or the API: they become its researcher. Refused with
    PermissionDenied, before anything is read or stored, unless ``can_create_projects(user)``. (The
    ``create_project`` command is the operator's and calls ``project_create`` directly.)"""
    if not can_create_projects(user):
        raise PermissionDenied(CANNOT_CREATE_PROJECTS)
    return project_create(**fields, created_by=user)


@dataclass(frozen=True)
class ProjectLocks:
    """What a project's settings page may not change now, and why ("" when it may)."""

    kind: str
    seed: str
    #: Why the design may not change ("" when it may: before any answer).
    design: str
    #: k may not go below the number of annotators any item already has.
    min_overlap: int


def project_setting_locks(*, project: Project) -> ProjectLocks:
    has_items = Item.objects.filter(project=project).exists()
    has_answers = Annotation.objects.filter(project=project).exists()
    kind = KIND_LOCKED_BY_ANSWERS if has_answers else KIND_LOCKED_BY_ITEMS if has_items else ""
    held = Item.objects.filter(project=project, gold_value__isnull=True).aggregate(n=Max("assigned_count"))["n"]
    rated = 0
    if has_answers:
        answers = Annotation.objects.filter(project=project)
        per_item = answers.values("item_id").annotate(n=Count("rater", distinct=True))
        rated = per_item.aggregate(top=Max("n"))["top"] or 0
    return ProjectLocks(
        kind=kind,
        seed=SEED_LOCKED if has_items else "",
        design=DESIGN_LOCKED_BY_ANSWERS if has_answers else "",
        min_overlap=max(1, held or 0, rated),
    )


@transaction.atomic
def project_update(*, project: Project, **changes: Any) -> Project:
    """Change a project's settings (any of PROJECT_SETTINGS). Refused with a ValidationError naming
    the field, nothing stored, when a change breaks what is done: a new kind or seed once items or
    answers exist, or k below the annotators an item already has. Items reopen or close for the new k."""
    unknown = sorted(set(changes) - set(PROJECT_SETTINGS))
    if unknown:
        raise TypeError(f"not a project setting: {', '.join(unknown)}")
    revealed = changes.get("revealed_fields")
    if isinstance(revealed, list | tuple) and all(isinstance(name, str) for name in revealed):
        changes["revealed_fields"] = sorted(set(revealed))  # one spelling per set, so "no change" is seen
    project = Project.objects.select_for_update().get(pk=project.pk)
    locks = project_setting_locks(project=project)
    errors: dict[str, str] = {}
    if "kind" in changes and changes["kind"] != project.kind and locks.kind:
        errors["kind"] = locks.kind
    if "design" in changes and design_json(changes["design"]) != design_json(project.design):
        # The judge's prompt may change with answers: people answered the form, not the prompt.
        form_changed = design_json(design_form(changes["design"])) != design_json(design_form(project.design))
        if locks.design and form_changed:
            errors["design"] = locks.design
        elif locks.seed and _design_fields(changes["design"]) != _design_fields(project.design):
            errors["design"] = DESIGN_FIELDS_LOCKED_BY_ITEMS
    if "seed" in changes and changes["seed"] != project.seed and locks.seed:
        errors["seed"] = locks.seed
    if "overlap" in changes and changes["overlap"] is not None and changes["overlap"] < locks.min_overlap:
        errors["overlap"] = OVERLAP_BELOW_DONE.format(minimum=locks.min_overlap)
    if len(changes.get("guidelines") or "") > GUIDELINES_MAX_CHARS:
        errors["guidelines"] = GUIDELINES_TOO_LONG
    if errors:
        raise ValidationError(errors)
    changed = [name for name, value in changes.items() if getattr(project, name) != value]
    for name in changed:
        setattr(project, name, changes[name])
    project.full_clean()
    if {"revealed_fields", "adjudicators_see_hidden"} & set(changed):
        # Each entry is the whole state from its time on, so a report can say which answers were given
        # with a hidden field shown (and which decisions were made seeing them).
        change = {
            "at": timezone.now().isoformat(),
            "fields": project.revealed_fields,
            "adjudicators_see_hidden": project.adjudicators_see_hidden,
        }
        project.reveal_log = [*project.reveal_log, change]
        changed.append("reveal_log")
    if changed:
        project.save(update_fields=changed)
    if "overlap" in changed:
        places_follow_overlap(Item.objects.filter(project=project), overlap=project.overlap)
    return project


def _design_fields(design: Any) -> str:
    """The shown-fields part of a design, compared as JSON (the items were checked against it)."""
    return design_json(design.get("fields") if isinstance(design, dict) else None)


def project_archive(*, project: Project, archived: bool = True) -> Project:
    """Archive (or, with ``archived=False``, restore) a project: hidden from its annotators, no new
    claims; items, answers and exports stay as they are."""
    if archived == (project.archived_at is not None):
        return project
    project.archived_at = timezone.now() if archived else None
    project.save(update_fields=["archived_at"])
    return project


def membership_add(*, project: Project, user: Any, role: str) -> Membership:
    membership, created = Membership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        project_size_changed(project_id=project.pk)
    return membership


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
            raise ValueNotPermitted([FieldError("value", VALUE_NEEDS_ROLE.format(roles=role_names(needed)))])
    key = idempotency_key or None
    for _attempt in range(VERSION_RACE_RETRIES):
        now = timezone.now()
        # Written out (annotation/sql.py): it runs on every submit. A conflict (the same idempotency
        # key, or a parallel edit that took the version) inserts nothing.
        inserted = sql.annotation_insert(
            project_id=project.pk,
            item_id=item.pk,
            user_id=user.pk,
            rater=user.username,
            value=value,
            source=source,
            idempotency_key=key,
            suggestion_visible=suggestion_visible,
            seconds_on_item=seconds_on_item,
            now=now,
        )
        if inserted is not None:
            return rows.stored(
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


UPLOAD_TOO_LARGE = "the file is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES); import it with the command line"


def _upload_folder() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def import_job_create(
    *, project: Project, target: str, uploaded, user: Any, existing: str = ImportJob.Existing.REFUSE
) -> ImportJob:
    """Keep an uploaded file on disk and record the job that will import it.

    A file over CONCORD_IMPORT_MAX_BYTES is refused before anything is stored; the file is deleted
    when its import ends (``import_job_discard_upload``).
    """
    file_format(uploaded.name)  # an unsupported type is refused before anything is stored
    limit = settings.CONCORD_IMPORT_MAX_BYTES
    too_large = ImportRejected([FieldError("", UPLOAD_TOO_LARGE.format(limit=limit))])
    if uploaded.size is not None and uploaded.size > limit:
        raise too_large
    folder = _upload_folder()
    folder.mkdir(parents=True, exist_ok=True)
    stored = folder / f"{uuid.uuid4().hex}{Path(uploaded.name).suffix.lower()}"
    try:
        written = 0
        with stored.open("wb") as handle:
            for chunk in uploaded.chunks():
                written += len(chunk)
                if written > limit:  # a size the upload did not declare
                    raise too_large
                handle.write(chunk)
        return import_job_record(
            project=project,
            target=target,
            filename=Path(uploaded.name).name[:255],
            stored_path=str(stored),
            size_bytes=written,
            existing=existing,
            user=user,
        )
    except BaseException:
        stored.unlink(missing_ok=True)  # nothing is kept from a refused upload
        raise


def import_job_discard_upload(*, job: ImportJob) -> ImportJob:
    """Delete an uploaded file once its import has ended, whatever the outcome.

    Only files in the upload folder are deleted: a command-line import records the path of the
    person's own file, which stays where it is.
    """
    if not job.stored_path:
        return job
    path = Path(job.stored_path)
    if path.resolve().parent != _upload_folder().resolve():
        return job
    path.unlink(missing_ok=True)
    job.stored_path = ""
    job.save(update_fields=["stored_path"])
    return job
