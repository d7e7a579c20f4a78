"""Frozen reports and the checks that recompute them.

A snapshot keeps what a paper number needs to be reproduced: the SHA-256 of the ratings it was
computed from, the parameters, the library versions, every number, and the tables as rendered.
Snapshots and checks are never changed once stored; a check is a new row.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ImmutableError(Exception):
    pass


class _AppendOnly(models.Model):
    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ImmutableError(f"{type(self).__name__} rows are never changed; store a new one")
        super().save(*args, **kwargs)


class ReportSnapshot(_AppendOnly):
    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="report_snapshots")
    title = models.CharField(max_length=200, blank=True, help_text="What the numbers are for, e.g. 'camera-ready'.")
    #: The project's task kind when the numbers were frozen.
    kind = models.CharField(max_length=50)
    evaluation = models.CharField(
        max_length=50,
        blank=True,
        help_text="The paper evaluation these numbers are of (its command's name); empty for the agreement report.",
    )
    parameters = models.JSONField()
    #: The judge run compared with people; kept as a number so the snapshot outlives the run.
    judge_run_id = models.BigIntegerField(null=True, blank=True)
    judge_label = models.CharField(max_length=400, blank=True)
    inputs_sha256 = models.CharField(max_length=64)
    numbers = models.JSONField()
    numbers_sha256 = models.CharField(max_length=64)
    library_versions = models.JSONField()
    markdown = models.TextField()
    latex = models.TextField()
    csv = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="snapshot_by_project")]

    def __str__(self) -> str:
        return f"snapshot {self.pk} of {self.project_id} ({self.inputs_sha256[:12]})"


class SnapshotCheck(_AppendOnly):
    """One recomputation of a snapshot: do the inputs, the numbers and the library versions still match?"""

    snapshot = models.ForeignKey(ReportSnapshot, on_delete=models.CASCADE, related_name="checks")
    inputs_sha256 = models.CharField(max_length=64)
    inputs_match = models.BooleanField()
    numbers_match = models.BooleanField()
    versions_match = models.BooleanField()
    #: The first differing numbers: [{"path": ..., "stored": ..., "recomputed": ...}].
    differences = models.JSONField(default=list, blank=True)
    difference_count = models.PositiveIntegerField(default=0)
    library_versions = models.JSONField()
    error = models.TextField(blank=True, help_text="Why the report could not be recomputed, if it could not.")
    checked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    checked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-checked_at", "-id"]

    def __str__(self) -> str:
        state = "matches" if self.numbers_match and self.inputs_match else "differs"
        return f"check of snapshot {self.snapshot_id}: {state}"


class Adjudication(_AppendOnly):
    """An expert's decision on an item whose raters disagree. Never changed: a new decision is a new
    row, and the latest one is the item's gold."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="adjudications")
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="adjudications")
    expert = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications")
    value = models.JSONField()
    note = models.TextField(blank=True)
    #: Why the item was in the queue when the expert decided (the rules' reasons).
    reasons = models.JSONField(default=list)
    #: Whether the expert's page showed the kind's hidden fields (Project.adjudicators_see_hidden then).
    saw_hidden_fields = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "created_at", "id"]
        indexes = [models.Index(fields=["project", "item"], name="adjudication_by_item")]

    def __str__(self) -> str:
        return f"decision on {self.item_id} by {self.expert_id}"


class ReleaseSettings(models.Model):
    """What a project's dataset release says of itself that Concord cannot know: licence, creators,
    citation. Entered once on the release page (or by the API) and remembered for the next release."""

    project = models.OneToOneField("annotation.Project", on_delete=models.CASCADE, related_name="release_settings")
    #: A licence id as the Hub's dataset cards write it (``cc-by-4.0``, ``mit``, ``other``).
    license = models.CharField(max_length=64, blank=True)
    #: One creator (a person or an organisation) per line.
    creators = models.TextField(blank=True, max_length=2000)
    #: How to cite the dataset (BibTeX or a sentence).
    citation = models.TextField(blank=True, max_length=4000)
    #: Where the dataset will be published; only written into the metadata, never fetched.
    url = models.URLField(blank=True, max_length=500)
    version = models.CharField(max_length=32, default="1.0.0")
    #: Language codes of the items' text, comma-separated (``en``, ``zh``).
    language = models.CharField(max_length=100, blank=True, default="en")
    description = models.TextField(blank=True, max_length=4000)
    #: Written into Croissant's ``rai:annotatorDemographics`` only when the team entered it.
    annotator_demographics = models.TextField(blank=True, max_length=4000)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"release settings of {self.project_id}"
