"""Projects, members, items, assignments and the append-only annotation log."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.errors import FieldError
from annotation.hooks import check_project_rules
from annotation.item_places import open_when_created
from annotation.kinds import get_kind, kind_choices


class SuggestionExposure(models.TextChoices):
    HIDDEN = "hidden", "Hidden"
    SHOWN = "shown", "Shown"
    RANDOMISED = "randomised", "Shown at random (probability p)"


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    EXPERT = "expert", "Expert"
    RESEARCHER = "researcher", "Researcher"


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=50)
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to annotators beside each item.")
    overlap = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)], help_text="How many distinct annotators see each item."
    )
    suggestion_exposure = models.CharField(
        max_length=12, choices=SuggestionExposure.choices, default=SuggestionExposure.HIDDEN
    )
    suggestion_probability = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="With randomised exposure: the chance a suggestion is shown for an (item, annotator).",
    )
    seed = models.BigIntegerField(default=0, help_text="Seeds item order and suggestion exposure.")
    adjudication_rules = models.JSONField(
        null=True,
        blank=True,
        help_text='Which disagreements go to an expert, e.g. {"ordinal_distance": 2}; empty uses the kind\'s rules.',
    )
    qualification_rate = models.FloatField(
        default=0.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of served items that are qualification items with a known answer.",
    )
    #: Fields the kind hides from raters that this project shows them on purpose (blinding is the default).
    revealed_fields = models.JSONField(
        default=list,
        blank=True,
        help_text="Researchers-only fields of the task kind shown to raters on purpose; empty keeps raters blind.",
    )
    #: The project's own questions, for a kind that takes a design (docs/formats.md, "Designs"): frozen
    #: once the first answer exists (a changed design is a new project). Null for the other kinds.
    design = models.JSONField(null=True, blank=True, help_text="The questions of a designed kind, as JSON.")
    #: Whether experts making gold (the adjudication page) see the kind's hidden fields; blind by default.
    adjudicators_see_hidden = models.BooleanField(
        default=False,
        help_text="Show experts the task kind's researchers-only fields when they adjudicate; off keeps gold blind.",
    )
    #: Every change of ``revealed_fields`` or ``adjudicators_see_hidden`` as {"at": ISO time, "fields":
    #: [...], "adjudicators_see_hidden": bool} (the state from then on): reports say when who saw what.
    reveal_log = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    #: Set when a researcher archives the project: hidden from annotators, no new claims, data and exports kept.
    archived_at = models.DateTimeField(null=True, blank=True)

    if TYPE_CHECKING:
        # Columns of annotation.sql's raw project statements (not fields): the user's membership and,
        # when asked for, the assignment's id (``a_id``; its other columns are read by name).
        member_role: str | None
        member_paused: bool | None
        a_id: int | None

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="project_overlap_at_least_one"),
            models.CheckConstraint(
                condition=Q(suggestion_probability__gte=0.0, suggestion_probability__lte=1.0),
                name="project_suggestion_probability_0_1",
            ),
            models.CheckConstraint(
                condition=Q(qualification_rate__gte=0.0, qualification_rate__lte=1.0),
                name="project_qualification_rate_0_1",
            ),
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        if self.kind not in dict(kind_choices()):
            raise ValidationError({"kind": f"unknown task kind {self.kind!r}; choose one of {dict(kind_choices())}"})
        design_problems = get_kind(self.kind).check_design(self.design)
        if design_problems:
            raise ValidationError({"design": [str_design_error(e) for e in design_problems]})
        problem = revealed_fields_problem(self.revealed_fields, kind=self.task_kind)
        if problem:
            raise ValidationError({"revealed_fields": problem})
        if self.adjudication_rules is not None:
            # The rules belong to adjudication, a higher layer: it registers their check (annotation.hooks).
            try:
                check_project_rules(self.adjudication_rules, kind=self.task_kind)
            except (ValueError, TypeError) as exc:
                raise ValidationError({"adjudication_rules": str(exc)}) from None

    @property
    def task_kind(self):  # untyped as before: callers pass optional values the kinds take as given
        """The project's kind, bound to its design where the kind takes one."""
        return get_kind(self.kind).with_design(self.design)


def str_design_error(error: FieldError) -> str:
    """A design problem as ``dimensions[2].max: must be greater than min`` (the path within the design)."""
    return f"{error.field}: {error.message}" if error.field else error.message


REVEAL_NOT_A_LIST = "must be a list of field names"
REVEAL_UNKNOWN = "{fields}: not a field this task kind hides from raters (it may reveal: {allowed})"


def revealed_fields_problem(fields: Any, *, kind: Any) -> str:
    """Why ``fields`` cannot be a project's revealed fields for ``kind``; "" when it can."""
    if not isinstance(fields, list) or not all(isinstance(name, str) for name in fields):
        return REVEAL_NOT_A_LIST
    unknown = [name for name in fields if name not in kind.revealable_fields]
    if unknown:
        return REVEAL_UNKNOWN.format(fields=", ".join(unknown), allowed=", ".join(kind.revealable_fields) or "none")
    return ""


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=Role.choices)
    #: A paused member keeps their answers but is served no new items (set on all of their roles at once).
    paused = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user", "role"], name="membership_unique_role")]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.project}"


class Invitation(models.Model):
    """A link that lets a person choose the password of an account a researcher made for them, or
    (``joins_as`` set) lets an existing, signed-in account agree to join the project in that role.

    Only a hash of the link's token is stored; the link works once, until ``expires_at``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    #: Empty: an account invitation (sets the password). A role: a join invitation (consent to membership).
    joins_as = models.CharField(max_length=12, choices=Role.choices, blank=True, default="")
    token_sha256 = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"invitation of {self.user} to {self.project}"


class ProvisionedAccount(models.Model):
    """An account a project's team page made (by invitation or with a temporary password).

    Only such an account, while it has never signed in, may get account invitations, and only from the
    project that made it; ``must_change_password`` holds a temporary password until it is changed."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="provisioned"
    )
    project = models.ForeignKey(Project, null=True, on_delete=models.SET_NULL, related_name="+")
    #: True from creation by an invitation until the account first gets a password or signs in.
    invitable = models.BooleanField(default=False)
    must_change_password = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} made for {self.project}"


class ImportJob(models.Model):
    """One file brought into a project; its row outlives the import so a failure can be read later."""

    class Target(models.TextChoices):
        ITEMS = "items", "Items"
        ANNOTATIONS = "annotations", "Annotations"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        RUNNING = "running", "Running"
        DONE = "done", "Imported"
        REJECTED = "rejected", "Rejected (nothing imported)"
        FAILED = "failed", "Failed (nothing imported)"

    class Existing(models.TextChoices):
        """What an item file does with an external id the project already has."""

        REFUSE = "refuse", "Refuse the file"
        SKIP = "skip", "Skip existing items"
        UPDATE = "update", "Update existing items (payload only, before any answer)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    target = models.CharField(max_length=12, choices=Target.choices)
    existing = models.CharField(max_length=6, choices=Existing.choices, default=Existing.REFUSE)
    filename = models.CharField(max_length=255)
    stored_path = models.CharField(max_length=500, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    rows_imported = models.PositiveIntegerField(default=0)
    rows_unchanged = models.PositiveIntegerField(default=0)
    #: Items already in the project that the file left as they were (skipped, or unchanged by an update).
    rows_skipped = models.PositiveIntegerField(default=0)
    #: Items already in the project whose payload the file replaced.
    rows_updated = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.target} import {self.filename} into {self.project}"


class Item(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=255)
    payload = models.JSONField()
    #: Qualification items carry a known answer (a value of the project's kind).
    gold_value = models.JSONField(null=True, blank=True)
    import_job = models.ForeignKey(ImportJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    #: The item's place in the project's seeded random order (see item_order_key).
    order_key = models.BigIntegerField(default=0)
    #: Annotators holding or having done this item; skips give the place back.
    assigned_count = models.PositiveIntegerField(default=0)
    #: Still needs raters: assigned_count < overlap, and not a qualification item (those go to everyone).
    is_open = models.BooleanField(default=True)
    #: Left out of the project's validation sample (annotation.sampling): model-only, never reopened.
    held_out = models.BooleanField(default=False, db_default=False)
    #: When an import last replaced the payload (None: as first imported). A judge's suggestion stored
    #: before it scored an earlier version of the item (judges.selectors).
    payload_updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="item_unique_external_id"),
        ]
        indexes = [
            # "Next item" walks this index from the annotator's cursor: no scan of full items.
            models.Index(fields=["project", "order_key"], condition=Q(is_open=True), name="item_open_in_order"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.external_id}"

    def save(self, *args, **kwargs) -> None:
        if self._state.adding and not self.order_key:
            self.order_key = item_order_key(self.project.seed, self.external_id)
            self.is_open = open_when_created(self.gold_value)
        super().save(*args, **kwargs)

    @property
    def is_qualification(self) -> bool:
        return self.gold_value is not None


def item_order_key(seed: int, external_id: str) -> int:
    """A stable pseudo-random position for an item: the same seed and id always give the same order."""
    digest = hashlib.blake2b(f"{seed}:{external_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2  # fits a signed 64-bit column


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    skip_reason = models.CharField(max_length=500, blank=True)
    #: Whether the annotator was shown an LLM suggestion when the item was served: the project exposes
    #: it to them (annotation.assignments.suggestion_exposed) and there was one to show.
    suggestion_visible = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    #: When the item was last put in front of the annotator (time on item counts from here).
    opened_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    if TYPE_CHECKING:
        # Set on the instances some reads return (not columns): the suggestion a claim found
        # (judges.models.Suggestion or None), whether a skipped item can still be answered, whether
        # its annotator may write now, the latest version own_history found; and the item's columns
        # of annotation.sql's raw statements.
        suggestion: Any
        answerable: bool
        annotator_may_write: bool
        item_external_id: str
        item_payload: str
        item_gold_value: str | None
        latest_version: int | None
        latest_at: Any
        latest_value: Any

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="assignment_unique_per_annotator"),
            # At most one open hold per annotator per project, however many requests arrive at once.
            models.UniqueConstraint(
                fields=["project", "annotator"], condition=Q(status="assigned"), name="assignment_one_hold"
            ),
        ]
        indexes = [
            # Progress counts, history and "undo last" read one annotator's assignments, newest first.
            models.Index(fields=["project", "annotator", "status", "completed_at"], name="assignment_by_annotator"),
            # Holds left longer than CONCORD_HOLD_SECONDS, found by every claim without a scan.
            models.Index(fields=["project", "opened_at"], condition=Q(status="assigned"), name="assignment_held_since"),
        ]

    def __str__(self) -> str:
        return f"{self.item} → {self.annotator} ({self.status})"

    @property
    def rater_reference(self) -> str:
        """How a rater's pages name the item: their assignment's number. The item's external id is the
        researcher's and may spell the condition (``copa-…-accepted``) or the key (``mcq-…-addtoplaylist``)."""
        return f"#{self.pk}"


class AnnotatorState(models.Model):
    """Where an annotator is in their own order of the project's items, and how many items they have
    been served. ``cursor`` is their place as a fraction of 2**62 (annotation.assignments)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    cursor = models.BigIntegerField()
    served = models.PositiveIntegerField(default=0)
    #: Holds of theirs that went back to the pool after CONCORD_HOLD_SECONDS, not yet told to them.
    holds_expired = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "annotator"], name="annotator_state_unique")]

    def __str__(self) -> str:
        return f"{self.annotator} in {self.project}: {self.served} served"


class AppendOnlyError(Exception):
    pass


class Annotation(models.Model):
    """One version of one rater's judgement of one item. Rows are never updated or deleted:
    an edit is a new row with the next version number, so every earlier judgement stays readable."""

    class Source(models.TextChoices):
        WEB = "web", "Web form"
        API = "api", "API"
        IMPORT = "import", "Imported file"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    #: The person, when the rater has an account; imported labels may name raters without one.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="annotations"
    )
    #: The rater as agreement sees them: the username, or the name given in an imported file.
    rater = models.CharField(max_length=150)
    version = models.PositiveIntegerField()
    value = models.JSONField()
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.WEB)
    #: A client-chosen key, scoped to the rater: a repeated submit by the same rater with the same key
    #: stores nothing new, and one rater's key never matches (or reveals) another rater's answer.
    idempotency_key = models.CharField(max_length=100, null=True, blank=True)
    suggestion_visible = models.BooleanField(null=True, blank=True)
    seconds_on_item = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.0)])
    import_job = models.ForeignKey(ImportJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "rater", "version"]
        constraints = [
            models.UniqueConstraint(fields=["item", "rater", "version"], name="annotation_unique_version"),
            models.UniqueConstraint(
                fields=["project", "rater", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="annotation_unique_rater_idempotency_key",
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="annotation_version_from_one"),
        ]
        indexes = [models.Index(fields=["project", "rater"], name="annotation_by_rater")]

    def __str__(self) -> str:
        return f"{self.item} by {self.rater} v{self.version}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise AppendOnlyError("annotations are append-only: store an edit as a new version")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("annotations are append-only and cannot be deleted one by one")


class ValidationSample(models.Model):
    """The items of a project that people validate: a seeded random draw, extended by later draws.

    Once a project has one, only its items are served to annotators; the others stay model-only
    (``Item.held_out``). Every draw uses the sample's stratification, so the union of the draws is
    one stratified random sample whose inclusion probabilities the latest draw records."""

    class Allocation(models.TextChoices):
        PROPORTIONAL = "proportional", "Proportional to stratum size"
        EQUAL = "equal", "Equal per stratum"

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="validation_sample")
    #: Payload (or ``meta.<key>``) field the draws stratify by; "" for a simple random sample.
    strata_field = models.CharField(max_length=100, blank=True)
    allocation = models.CharField(max_length=12, choices=Allocation.choices, default=Allocation.PROPORTIONAL)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"validation sample of {self.project}"


class SampleDraw(models.Model):
    """One draw of items into a validation sample: who, when, with which seed and size."""

    sample = models.ForeignKey(ValidationSample, on_delete=models.CASCADE, related_name="draws")
    number = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    seed = models.BigIntegerField()
    #: The size asked for: a number of items, or a fraction of the project (one of the two).
    requested_n = models.PositiveIntegerField(null=True, blank=True)
    requested_fraction = models.FloatField(null=True, blank=True)
    drawn = models.PositiveIntegerField(default=0)
    #: Per stratum ("" without strata): {"population": N_h, "sampled": n_h (all draws so far), "probability": n_h/N_h}.
    strata = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sample", "number"]
        constraints = [models.UniqueConstraint(fields=["sample", "number"], name="sample_draw_unique_number")]

    def __str__(self) -> str:
        return f"draw {self.number} of {self.sample}"


class SampleItem(models.Model):
    """An item in a validation sample, with the draw that took it and its inclusion probability then."""

    sample = models.ForeignKey(ValidationSample, on_delete=models.CASCADE, related_name="items")
    draw = models.ForeignKey(SampleDraw, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    stratum = models.CharField(max_length=200, blank=True)
    inclusion_probability = models.FloatField(validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])

    class Meta:
        constraints = [models.UniqueConstraint(fields=["sample", "item"], name="sample_item_unique")]

    def __str__(self) -> str:
        return f"{self.item} in {self.sample}"
