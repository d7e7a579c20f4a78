"""Judges (configured LLM calls), their runs over a project, the run's chunks, and suggestions.

A suggestion is keyed by (judge, item, prompt hash): rerunning a judge, redelivering a chunk or
resuming a killed run finds the row already there instead of adding another. A suggestion is either
``ok`` with a value in the task kind's annotation schema, or ``failed`` with the raw output and the
reason; the database refuses any other combination, so a failure can never be read as a score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models import Item, Project
from judges.backends import backend_class, backend_names

if TYPE_CHECKING:
    from django.db.models.fields.related_descriptors import RelatedManager

#: Requests in flight per worker process; far beyond what one process can usefully keep open.
MAX_CONCURRENCY = 1024
UNKNOWN_BACKEND_FIELD = "unknown backend {backend!r}; choose one of {known}"


def check_backend(backend: str) -> None:
    """A backend must be in the registry (settings.CONCORD_JUDGE_BACKENDS), as a project's kind must be a kind."""
    if backend not in backend_names():
        raise ValidationError(
            {"backend": UNKNOWN_BACKEND_FIELD.format(backend=backend, known=", ".join(backend_names()))}
        )


class CallsBackend:
    """What a model row that names a judge backend in ``backend`` has: the check, and whether it is a baseline."""

    backend: str

    def clean(self) -> None:
        check_backend(self.backend)

    @property
    def is_baseline(self) -> bool:
        return backend_class(self.backend).is_baseline


class Judge(CallsBackend, models.Model):
    """One configured call: backend, model, prompt template and version, sampling parameters, seed.

    ``fingerprint`` hashes every field that can change an output, so one configuration is one row
    and its suggestions are never split between look-alike judges.
    """

    #: Judges belong to one project: no project sees another's judges, models or endpoints.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=50)
    #: A name in the backend registry (judges.backends), checked by clean().
    backend = models.CharField(max_length=10)
    model = models.CharField(max_length=200, blank=True, help_text="Model name; empty for baselines.")
    endpoint = models.CharField(
        max_length=50,
        blank=True,
        help_text="The operator-configured endpoint the openai backend calls, by name (judges.endpoints); "
        "a judge never holds a URL or a key.",
    )
    prompt_name = models.CharField(max_length=100)
    prompt_version = models.PositiveIntegerField()
    temperature = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)])
    max_tokens = models.PositiveIntegerField(default=2048, validators=[MinValueValidator(1)])
    seed = models.BigIntegerField(
        null=True, blank=True, help_text="Sampling seed; for multiple-choice prompts it also orders the options."
    )
    fingerprint = models.CharField(max_length=64, editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "fingerprint"], name="judge_unique_per_project")]

    def __str__(self) -> str:
        return f"{self.name} ({self.backend_label})"

    @property
    def prompt_key(self) -> str:
        # Version 0: an imported run's free prompt label, which has no version of ours.
        return self.prompt_name if self.prompt_version == 0 else f"{self.prompt_name}.v{self.prompt_version}"

    @property
    def backend_label(self) -> str:
        """How the judge is named wherever it appears: a baseline is never passed off as an LLM, and an
        imported run reads "imported · <model>"."""
        if self.is_baseline:
            return "baseline"
        return f"{self.backend} · {self.model}"


class RunState(models.Model):
    """What every run keeps in its row (judge runs and generation runs): its status, counts, watch
    token and times. The row is the run's state: workers and watchers resume from it."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Stopped on an error"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    concurrency = models.PositiveSmallIntegerField(
        default=16, validators=[MinValueValidator(1), MaxValueValidator(MAX_CONCURRENCY)]
    )
    chunk_size = models.PositiveIntegerField(default=100, validators=[MinValueValidator(1)])
    total = models.PositiveIntegerField(default=0)
    ok_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    pending_count = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    #: Only the watcher holding the newest token keeps rescheduling itself.
    watch_token = models.CharField(max_length=32, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    #: Rate and ETA are measured from the last (re)start, over the work done since then.
    resumed_at = models.DateTimeField(null=True, blank=True)
    done_at_resume = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    if TYPE_CHECKING:
        # What every concrete run model has: the default manager and its chunks (``LeasedChunk.run``).
        # The manager is typed loosely: lookups name the subclass's fields (``judge``, ``step``).
        objects: ClassVar[models.Manager[Any]]
        chunks: RelatedManager[LeasedChunk]

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.RUNNING

    @property
    def settled_at_start(self) -> int:
        """Rows of the run settled when it started, in no chunk: counted in its total, and as done."""
        return 0

    @property
    def done_count(self) -> int:
        return self.ok_count + self.failed_count + self.settled_at_start


class LeasedChunk(models.Model):
    """A slice of a run, claimed by one worker at a time under a lease (see judges.leasing).

    A worker renews its lease while it works; a chunk whose lease ran out (its worker was killed) is
    handed out again. Only the holder of ``claim_token`` may record the chunk's results.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    number = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_by = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    #: Times a worker claimed the chunk; a chunk claimed too often stops the run with its last error.
    attempts = models.PositiveIntegerField(default=0)
    ok_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    #: Times the chunk was sent to the broker; resends of a waiting chunk back off by doubling.
    sends = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    if TYPE_CHECKING:
        # Each concrete chunk model declares ``run``, a foreign key to its run model; lookups through
        # the manager name it, which the abstract model does not know (so the manager is typed loosely).
        objects: ClassVar[models.Manager[Any]]
        run: RunState
        run_id: int

    class Meta:
        abstract = True
        ordering = ["run_id", "number"]
        # Each subclass declares ``run``; the names take the subclass's ("judgechunk_unique_number").
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="%(class)s_unique_number")]
        indexes = [models.Index(fields=["run", "status"], name="%(class)s_by_run_status")]

    def __str__(self) -> str:
        return f"chunk {self.number} of run {self.run_id} ({self.status})"


#: What ``JudgeRun.provenance`` may hold, with the label pages and reports show it under.
PROVENANCE_FIELDS = (
    ("model", "model"),
    ("prompt", "prompt"),
    ("sampling", "sampling"),
    ("producer_run_id", "producer run"),
    ("file_name", "file"),
    ("file_sha256", "file SHA-256"),
    ("generation_run", "generation run"),
)


class JudgeRun(RunState):
    """A judge applied to a project's items."""

    #: A judge with runs cannot be deleted on its own, but a project deletes its judges and runs together.
    judge = models.ForeignKey(Judge, on_delete=models.RESTRICT, related_name="runs")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_runs")
    #: The run covers the project's items up to this id: items imported later belong to a later run.
    last_item_id = models.BigIntegerField(default=0)
    #: Where outputs made outside a Concord run came from (``PROVENANCE_FIELDS``): for an imported run
    #: the producer's model, prompt label, sampling parameters, own run id and the file's name and
    #: SHA-256; for drafts a generation run wrote, that run. Empty for runs Concord called a model for.
    provenance = models.JSONField(default=dict, blank=True)

    class Meta(RunState.Meta):
        indexes = [models.Index(fields=["project", "status"], name="judgerun_by_project_status")]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.judge} on {self.project}"

    @property
    def provenance_lines(self) -> list[tuple[str, str]]:
        """(label, text) of each provenance fact, in ``PROVENANCE_FIELDS`` order, for pages and reports."""
        lines = []
        for key, label in PROVENANCE_FIELDS:
            value = self.provenance.get(key)
            if value in (None, "", {}):
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
            lines.append((label, str(value)))
        return lines

    @property
    def provenance_text(self) -> str:
        """The provenance on one line ("" when there is none), as every report using the run prints it."""
        return "; ".join(f"{label} {text}" for label, text in self.provenance_lines)


class JudgeChunk(LeasedChunk):
    """A slice of a judge run's items: an id range."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunks")
    first_item_id = models.BigIntegerField()
    last_item_id = models.BigIntegerField()


class StoredOutcome(models.Model):
    """What every stored outcome of a call keeps (a suggestion, a generation record): the model's raw
    answer, why it was refused, and what the server reported. The run engine writes these columns
    (``judges.runs.execution.OUTCOME_FIELDS``, with ``status`` and ``attempts``)."""

    raw_output = models.TextField(blank=True)
    failure_reason = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True


class Suggestion(StoredOutcome):
    """A judge's output for one item: a value in the kind's annotation schema, or a failure with its reason."""

    class Status(models.TextChoices):
        OK = "ok", "OK"
        FAILED = "failed", "Failed"

    # No index of their own: (judge, item, prompt) and (run, status) lead with them, and each extra
    # index on this table cost an imported run a fifth of its time (bench/import_run.py).
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="suggestions", db_index=False)
    #: The run that produced the row as it stands (a rerun that retries a failed item takes it over).
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="suggestions", db_index=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="suggestions")
    #: SHA-256 of the rendered messages and output schema (of the method and input, for baselines).
    prompt_sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=6, choices=Status.choices)
    value = models.JSONField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    #: The model's own confidence in its answer (0-1), when an imported file gives one.
    score = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    #: Multiple choice: the order the options were shown in (the item's option numbers), when an
    #: imported file gives one; ``value`` is already in the item's own numbering.
    option_order = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id", "-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "item", "prompt_sha256"], name="suggestion_unique_per_prompt"),
            # The rule the papers' own pipelines break: a failed parse is a failure, never a score.
            models.CheckConstraint(
                condition=(
                    Q(status="ok", value__isnull=False, failure_reason="")
                    | (Q(status="failed", value__isnull=True) & ~Q(failure_reason=""))
                ),
                name="suggestion_ok_has_value_failed_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "status"], name="suggestion_by_run_status"),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on {self.item}: {self.status}"

    @property
    def is_baseline(self) -> bool:
        return self.judge.is_baseline


# -- generation runs: source records → items --------------------------------------------------------


class GenerationRun(CallsBackend, RunState):
    """A generator step applied to the records of a source file, ending in items of a project.

    The source records are stored with the run when it starts (``GenerationRecord``), so workers and a
    resume never need the file. Chunks are leased like a judge run's. Items are created once, when
    every record has an outcome, in one atomic import; each carries the run's provenance in ``meta``.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="generation_runs")
    step = models.CharField(max_length=50)
    #: Step options that change the items (e.g. ``{"profile_from": "current"}``); part of their ids.
    options = models.JSONField(default=dict, blank=True)
    #: A name in the backend registry (judges.backends), checked by clean().
    backend = models.CharField(max_length=10)
    model = models.CharField(max_length=200, blank=True)
    endpoint = models.CharField(max_length=50, blank=True, help_text="A configured endpoint by name, never a URL.")
    prompt_name = models.CharField(max_length=100)
    prompt_version = models.PositiveIntegerField()
    #: SHA-256 of the prompt's template and schema files (of the method, for baselines).
    prompt_sha256 = models.CharField(max_length=64)
    temperature = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)])
    max_tokens = models.PositiveIntegerField(default=2048, validators=[MinValueValidator(1)])
    seed = models.BigIntegerField(null=True, blank=True)
    source_name = models.CharField(max_length=255, blank=True, help_text="The source file's name, for people.")
    source_sha256 = models.CharField(max_length=64, blank=True)
    #: Demo content (``make run``): shown as such on the pages.
    is_demo = models.BooleanField(default=False)
    #: Records whose items the project already had (an earlier run made them): not asked again.
    existing_count = models.PositiveIntegerField(default=0)
    items_created = models.PositiveIntegerField(default=0)

    class Meta(RunState.Meta):
        indexes = [models.Index(fields=["project", "status"], name="genrun_by_project_status")]

    def __str__(self) -> str:
        return f"generation run {self.pk} ({self.step}) on {self.project}"

    @property
    def settled_at_start(self) -> int:
        return self.existing_count

    @property
    def prompt_key(self) -> str:
        return f"{self.prompt_name}.v{self.prompt_version}"

    @property
    def backend_label(self) -> str:
        if self.is_baseline:
            return "baseline"
        return f"{self.backend} · {self.model}"

    def call_config(self) -> dict:
        """The run's call configuration, as the columns of a judge configured alike."""
        fields = ("backend", "model", "endpoint", "prompt_name", "prompt_version", "temperature", "max_tokens", "seed")
        return {"project_id": self.project_id, "kind": self.project.kind, **{f: getattr(self, f) for f in fields}}

    def as_judge(self) -> Judge:
        """The call configuration in the shape the backends read (never saved: a run is not a judge)."""
        return Judge(name=f"generation run {self.pk}", **self.call_config())


class GenerationChunk(LeasedChunk):
    """A slice of a generation run's records: a range of record numbers."""

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="chunks")
    first_number = models.PositiveIntegerField()
    last_number = models.PositiveIntegerField()


class GenerationRecord(StoredOutcome):
    """One source record of a run and its outcome: the item payloads it became, or a failure with the
    raw output and the reason. ``existing``: the project already had its items (nothing asked)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        OK = "ok", "OK"
        FAILED = "failed", "Failed"
        EXISTING = "existing", "Items already in the project"

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="records")
    number = models.PositiveIntegerField()
    #: The line of the source file the record came from.
    line = models.PositiveIntegerField()
    source_id = models.CharField(max_length=255)
    licence = models.CharField(max_length=200, blank=True)
    #: The step's input, as read from the source file.
    data = models.JSONField()
    #: Attribution and provenance from the source (urls, authors, licence), kept in each item's meta.
    attribution = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    #: ``[{"external_id": ..., "payload": {...}}]`` once OK.
    items = models.JSONField(null=True, blank=True)
    request_sha256 = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="genrecord_unique_number"),
            models.UniqueConstraint(fields=["run", "source_id"], name="genrecord_unique_source"),
            # Never a half-made outcome: OK has its items and no reason, a failure has its reason.
            models.CheckConstraint(
                condition=(
                    Q(status="ok", items__isnull=False, failure_reason="")
                    | (Q(status="failed", items__isnull=True) & ~Q(failure_reason=""))
                    | Q(status__in=["pending", "existing"])
                ),
                name="genrecord_ok_has_items_failed_has_reason",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="genrecord_by_run_status")]

    def __str__(self) -> str:
        return f"record {self.source_id} of generation run {self.run_id}: {self.status}"
