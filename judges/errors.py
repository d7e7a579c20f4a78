"""Judge errors: the shared ConcordError base, a stable ``code`` each, messages the tests import."""

from __future__ import annotations

from annotation.errors import ConcordError

JUDGE_OF_ANOTHER_PROJECT = "judge {judge!r} belongs to another project; create it on project {project!r}"
RUN_ALREADY_ACTIVE = "run {run} of this judge on this project is still running; cancel it or wait for it"
CANNOT_CANCEL = "{label} {run} is {status}; only a running run can be cancelled"
CANNOT_RESUME = "{label} {run} is {status}; only a cancelled or stopped run can be resumed"
UNKNOWN_PROMPT = "unknown prompt {prompt!r}; prompts for {kind!r} with backend {backend!r}: {known}"
NOT_RUNNABLE = "judge {judge!r} is {backend}: its outputs come from a file, so it cannot be run; import a new file"
UNKNOWN_BACKEND = "unknown backend {backend!r}; choose one of {known}"
MODEL_REQUIRED = "backend {backend!r} needs a model name (--model, or JUDGE_MODEL in the environment)"
JUDGE_EXISTS = "judge {name!r} already has this configuration"
VLLM_NOT_INSTALLED = (
    "vllm is not installed on this worker: GPU workers install requirements-gpu.txt (see docs/gpu-workers.md)"
)
CHUNK_GAVE_UP = "chunk {number} failed {attempts} times; last error: {error}"


class JudgeError(ConcordError):
    code = "judge_error"


class JudgeInvalid(JudgeError):
    """A judge configuration or run request that cannot work (unknown prompt, wrong kind, no model)."""

    code = "judge_invalid"


class JudgeExists(JudgeError):
    code = "judge_exists"

    def __init__(self, message: str, *, judge) -> None:
        super().__init__(message, extra={"judge": judge.pk})
        self.judge = judge


class RunStateError(JudgeError):
    """The run is not in a state that allows this (cancel a finished run, start a second active one)."""

    code = "run_state"


class JudgeOutputInvalid(JudgeError):
    """The model answered, but not with a value this item accepts (bad JSON, out of range, rule broken)."""

    code = "judge_output_invalid"


class BackendUnavailable(JudgeError):
    """Transient: 429, 5xx, a timeout or a dropped connection. Worth retrying later."""

    code = "backend_unavailable"

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message, extra={"retry_after": retry_after})
        self.retry_after = retry_after


class BackendRejected(JudgeError):
    """The server refused this one request (e.g. 400, prompt too long): the item fails, the run goes on."""

    code = "backend_rejected"


class BackendMisconfigured(JudgeError):
    """Every request would fail the same way (bad key, unknown model, vllm missing): the run stops."""

    code = "backend_misconfigured"
