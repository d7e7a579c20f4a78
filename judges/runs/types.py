"""What makes a run of one type: the small protocol the chunked-run engine is parametrised by.

Judge runs (items → suggestions) and generation runs (source records → items) are both a
``RunState`` row split into ``LeasedChunk`` rows (judges.models). Everything about claiming,
leasing, retrying, watching, cancelling, resuming and counting is the engine's (judges.runs);
a run type says only what is its own: which rows it works on, how one chunk's requests are built,
where their outcomes are stored, and what happens once every chunk is done.

A run type is registered when its module is imported (judges/apps.py imports them), and is found
by its name (``get_run_type``) or by its run's model (``run_type_of``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from django.db import models
from django.utils import timezone

from annotation.registry import Registry

if TYPE_CHECKING:
    from judges.backends.base import Outcome
    from judges.models import Judge, LeasedChunk, RunState
    from judges.prompting import JudgeRequest

UNKNOWN_RUN_TYPE = "unknown run type {name!r}; known: {known}"

RunT = TypeVar("RunT", bound="RunState")
ChunkT = TypeVar("ChunkT", bound="LeasedChunk")
#: What ``prompt`` gives and ``chunk_work`` builds requests with (a judge prompt, a generation step's prompt).
PromptT = TypeVar("PromptT")


@dataclass
class ChunkWork:
    """One claimed chunk's work: the requests to send, and what is already decided without asking.

    ``outcomes`` holds requests that failed before any call (a prompt that cannot read the row);
    ``settled`` maps rows the run type keeps as they are to their status; ``size`` is how many rows
    the chunk covers now.
    """

    requests: list[JudgeRequest]
    outcomes: list[Outcome] = field(default_factory=list)
    settled: dict[int, str] = field(default_factory=dict)
    size: int = 0


class RunType(Generic[RunT, ChunkT, PromptT]):
    """Base of a run type. Subclasses set the class attributes and implement the methods that raise.

    The text attributes name the run for people: ``label`` starts the lifecycle messages ("run 4 is
    completed; …", "generation run 4 is …"), ``unit`` names what the progress counts. A subclass names
    its run model, chunk model and prompt type as the parameters (``RunType[JudgeRun, JudgeChunk, Prompt]``).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    unit: ClassVar[str]
    run_model: type[RunT]
    chunk_model: type[ChunkT]
    #: What a claimed chunk is loaded with (``select_related``).
    claim_related: ClassVar[tuple[str, ...]] = ("run",)
    #: Start of the URL names of the run's pages: ``<url_name>_detail``, ``_progress``, ``_cancel``,
    #: ``_resume`` (arguments: project slug, run id).
    url_name: ClassVar[str]
    #: The progress block's element id is ``<dom_prefix>-<run id>``.
    dom_prefix: ClassVar[str]
    #: What the progress line calls the rows done ("done", "records").
    counted: ClassVar[str]
    #: Whether a completed run made items (the progress line then says how many).
    makes_items: ClassVar[bool] = False

    @property
    def title(self) -> str:
        return self.label[:1].upper() + self.label[1:]

    @property
    def detail_view(self) -> str:
        return f"{self.url_name}_detail"

    @property
    def progress_view(self) -> str:
        return f"{self.url_name}_progress"

    @property
    def cancel_view(self) -> str:
        return f"{self.url_name}_cancel"

    @property
    def resume_view(self) -> str:
        return f"{self.url_name}_resume"

    @property
    def run_related(self) -> list[str]:
        """What a run row is loaded with: its part of ``claim_related`` ("run__judge" → "judge")."""
        return [path.removeprefix("run__") for path in self.claim_related if path.startswith("run__")]

    def backend_name(self, run: RunT) -> str:
        """The judge backend the run calls (judges.backends registry name)."""
        raise NotImplementedError("run types must say which backend a run calls")

    def running_twin(self, run: RunT) -> RunT | None:
        """Another running run that may not run beside ``run`` (same judge, same step), or None."""
        raise NotImplementedError("run types must say which runs may not run side by side")

    def twin_running(self, run: RunT, twin: RunT) -> str:
        """The message refusing a resume of ``run`` while ``twin`` runs."""
        raise NotImplementedError("run types must word the refusal of a second running run")

    def prompt(self, run: RunT) -> PromptT:
        """The run's prompt as the run started with it; KeyError when this worker does not have it."""
        raise NotImplementedError("run types must say which prompt a run uses")

    def prompt_gone(self, run: RunT) -> str:
        """Why the run stopped when ``prompt`` raised KeyError."""
        raise NotImplementedError("run types must word a missing prompt")

    def call_config(self, run: RunT) -> Judge:
        """The call configuration in the shape the backends read."""
        raise NotImplementedError("run types must give the backends their call configuration")

    def chunk_work(self, chunk: ChunkT, prompt: PromptT) -> ChunkWork:
        """The requests of a claimed chunk's rows that still need an answer."""
        raise NotImplementedError("run types must build a chunk's requests")

    def store_outcomes(self, chunk: ChunkT, work: ChunkWork, outcomes: list[Outcome]) -> tuple[int, int, int]:
        """Store the final outcomes of a chunk whose claim is held (inside the record transaction);
        returns the chunk's (ok, failed, size) as they stand now."""
        raise NotImplementedError("run types must store a chunk's outcomes")

    def finish(self, run: RunT) -> RunT:
        """Complete a running run (locked) whose every chunk is done."""
        run.status, run.finished_at, run.watch_token = type(run).Status.COMPLETED, timezone.now(), ""
        run.save(update_fields=["status", "finished_at", "watch_token"])
        return run

    def running(self) -> models.QuerySet:
        return self.run_model.objects.filter(status=self.run_model.Status.RUNNING)


#: The run types by name (an :class:`annotation.registry.Registry`, filled by ``register_run_type``).
RUN_TYPES: Registry[RunType] = Registry("run type")


def register_run_type(run_type: type[RunType]) -> type[RunType]:
    """Class decorator: make the run type known by its name and its run model."""
    RUN_TYPES.register(run_type.name, run_type())
    return run_type


def get_run_type(name: str) -> RunType:
    return RUN_TYPES.get(name)


def run_type_of(run: RunState) -> RunType:
    """The run type of a run row."""
    for run_type in RUN_TYPES.all():
        if isinstance(run, run_type.run_model):
            return run_type
    raise KeyError(UNKNOWN_RUN_TYPE.format(name=type(run).__name__, known=", ".join(run_type_names())))


def run_type_names() -> list[str]:
    return sorted(RUN_TYPES.names())
