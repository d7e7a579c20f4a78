"""The contract every judge backend implements (Django's backend pattern: one base, one module each).

A backend turns a list of :class:`~judges.prompting.JudgeRequest` into one :class:`Outcome` per
request. It retries within its own bounds: transient failures (429, 5xx, timeouts, dropped
connections) with exponential backoff and jitter, invalid answers by asking again. What is still
transient at the end comes back as ``UNAVAILABLE`` so the caller can retry the chunk later; an
invalid answer comes back as ``FAILED`` with the raw text and the reason. Problems that would fail
every request alike (bad key, unknown model, vllm missing) raise BackendMisconfigured instead.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from django.conf import settings

if TYPE_CHECKING:
    # Types only: judges.prompting asks the backend registry which prompts a backend runs.
    from judges.models import Judge
    from judges.prompting import JudgeRequest, Prompt

OK, FAILED, UNAVAILABLE, SKIPPED = "ok", "failed", "unavailable", "skipped"
GAVE_UP = "{reason} (gave up after {attempts} attempts)"


@dataclass
class Outcome:
    """What became of one request. Only OK carries a value; nothing else is ever scored."""

    request: JudgeRequest
    status: str
    value: dict | None = None
    raw_output: str = ""
    reason: str = ""
    attempts: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    transport_attempts: int
    parse_attempts: int
    backoff_base: float
    backoff_max: float

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            transport_attempts=max(1, settings.JUDGE_TRANSPORT_ATTEMPTS),
            parse_attempts=max(1, settings.JUDGE_PARSE_ATTEMPTS),
            backoff_base=settings.JUDGE_RETRY_BASE_SECONDS,
            backoff_max=settings.JUDGE_RETRY_MAX_SECONDS,
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter; a server's Retry-After is a floor, capped by the maximum.

        Full jitter spreads a burst of rate-limited requests out instead of retrying them in lockstep.
        """
        ceiling = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1))
        wait = random.uniform(0, ceiling)
        if retry_after:
            wait = max(wait, min(retry_after, self.backoff_max))
        return wait


@dataclass(frozen=True)
class CallOptions:
    concurrency: int
    timeout: float
    retry: RetryPolicy


class JudgeBackend:
    """Base class of a backend. Subclasses set the class attributes and implement :meth:`complete`.

    Callers read these attributes and never branch on a backend's name.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    #: Baselines are labelled as such everywhere; they are never presented as an LLM. They run the
    #: baseline methods (``judges.baselines``), every other backend runs the model prompts.
    is_baseline: ClassVar[bool] = False
    #: Chunks of GPU backends go to the Celery queue "gpu" (settings.CELERY_TASK_ROUTES).
    gpu: ClassVar[bool] = False
    #: Whether a judge on this backend names a model (settings.JUDGE_MODEL when none is given).
    needs_model: ClassVar[bool] = True
    #: Backends that call a server name one of the operator's endpoints (judges.endpoints).
    needs_server: ClassVar[bool] = False
    #: Backends that load weights themselves name one of the operator's models (judges.endpoints).
    loads_model: ClassVar[bool] = False
    #: Whether Concord runs it over a project's items. False for ``imported``: its outputs only come
    #: in from a file, so no judge run or generation run is started on it.
    runs_items: ClassVar[bool] = True
    #: Items per chunk (one Celery task) unless JUDGE_CHUNK_SIZE says otherwise.
    chunk_size: ClassVar[int] = 100

    def complete(
        self,
        requests: list[JudgeRequest],
        *,
        judge: Judge,
        prompt: Prompt,
        options: CallOptions,
        stop: threading.Event,
    ) -> list[Outcome]:
        """One outcome per request, in order. Requests not started once ``stop`` is set come back SKIPPED."""
        raise NotImplementedError("subclasses of JudgeBackend must provide complete()")
