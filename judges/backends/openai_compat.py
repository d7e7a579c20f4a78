"""Any OpenAI-compatible chat-completions server through ``openai.AsyncOpenAI``.

This is how a ``vllm serve MODEL`` GPU host is normally reached, and OpenAI itself works the same.
Requests run concurrently up to the run's concurrency, each with a timeout and the item's output
schema as structured output (``response_format`` json_schema; vLLM honours it). The client's own
retries are off (``max_retries=0``): retries happen here, where they are bounded, jittered and
counted on the suggestion.

Requests go through the client's plain ``post`` with a body encoded here and the reply read as JSON
here: the typed ``chat.completions.create`` walks every request through its parameter types and
builds a model of every reply, which cost a worker more CPU per request than everything else it does
for an item. Status errors, timeouts and connection errors are the client's as before.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
import orjson

from judges.backends.base import FAILED, GAVE_UP, OK, SKIPPED, UNAVAILABLE, CallOptions, JudgeBackend, Outcome
from judges.endpoints import UnknownEndpoint, get_endpoint
from judges.errors import BackendMisconfigured, BackendRejected, BackendUnavailable, JudgeOutputInvalid
from judges.models import Judge
from judges.prompting import JudgeRequest, Prompt

#: Statuses worth a retry besides 429 and 5xx: request timeout, and conflict (a lock timeout at OpenAI).
RETRIED_STATUSES = {408, 409}
#: Statuses that mean every request of the run will fail alike: wrong key, no access, no such model.
MISCONFIGURED_STATUSES = {401, 403, 404}
CUT_OFF = "the answer was cut off at max_tokens ({max_tokens}); "
NOT_A_COMPLETION = "the server's reply is not a chat completion: {problem}"
#: How much of a reply that is not a chat completion is kept to read (bytes).
RAW_REPLY_KEPT = 64 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class Completion:
    """What a chat-completion reply says that a run keeps."""

    text: str
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None


def _count(usage: Any, name: str) -> int | None:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_completion(body: bytes) -> Completion:
    """The first choice of a chat-completion reply; BackendRejected when the reply is not one."""
    try:
        reply = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BackendRejected(NOT_A_COMPLETION.format(problem=f"not JSON ({exc})")) from None
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list):
        raise BackendRejected(NOT_A_COMPLETION.format(problem="no choices"))
    if not choices:
        return Completion("", None, _count(reply.get("usage"), "prompt_tokens"), None)
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message")
    text = message.get("content") if isinstance(message, dict) else None
    finish_reason = choice.get("finish_reason")
    usage = reply.get("usage")
    return Completion(
        text=text if isinstance(text, str) else "",
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        tokens_in=_count(usage, "prompt_tokens"),
        tokens_out=_count(usage, "completion_tokens"),
    )


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's trust store, loaded once per process: loading it took 27 ms per client."""
    return ssl.create_default_context()


def retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        return float(exc.response.headers.get("retry-after", ""))
    except ValueError:
        return None


def classify(exc: openai.OpenAIError) -> BackendUnavailable | BackendMisconfigured | BackendRejected:
    """Map a client error to ours: transient, refused for this item, or wrong for the whole run."""
    if isinstance(exc, openai.APITimeoutError):
        return BackendUnavailable("timed out waiting for the server")
    if isinstance(exc, openai.APIConnectionError):
        return BackendUnavailable(f"connection failed: {exc.__cause__ or exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        said = exc.body.get("message") if isinstance(exc.body, dict) else None
        detail = f"HTTP {status} from the server: {said or exc.message}"[:500]
        if status == 429 or status >= 500 or status in RETRIED_STATUSES:
            return BackendUnavailable(detail, retry_after=retry_after(exc))
        if status in MISCONFIGURED_STATUSES:
            return BackendMisconfigured(detail)
        return BackendRejected(detail)
    return BackendUnavailable(f"{type(exc).__name__}: {exc}")


def run_coroutine(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` on a new event loop. Each chunk gets its own loop and client: a Celery worker has no
    loop of its own. Where this thread already runs one (a notebook, a test harness driving a
    browser), the loop runs on a thread of its own instead, since a loop cannot be nested."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-chunk") as pool:
        return pool.submit(asyncio.run, work).result()


class OpenAIBackend(JudgeBackend):
    name = "openai"
    label = "OpenAI-compatible server"
    needs_server = True

    def complete(
        self,
        requests: list[JudgeRequest],
        *,
        judge: Judge,
        prompt: Prompt,
        options: CallOptions,
        stop: threading.Event,
    ) -> list[Outcome]:
        work = self._complete_all(requests, judge=judge, prompt=prompt, options=options, stop=stop)
        return run_coroutine(work)

    async def _complete_all(
        self, requests: list[JudgeRequest], *, judge: Judge, prompt: Prompt, options: CallOptions, stop: threading.Event
    ) -> list[Outcome]:
        try:
            # Defence in depth: the services accept configured names only, but a worker still refuses a
            # judge row naming anything else, so no request ever leaves for an unconfigured host.
            endpoint = get_endpoint(judge.endpoint)
        except UnknownEndpoint as exc:
            raise BackendMisconfigured(str(exc)) from None
        client = openai.AsyncOpenAI(
            base_url=endpoint.base_url or None,
            api_key=endpoint.api_key(),
            max_retries=0,
            timeout=options.timeout,
            http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
        )
        slots = asyncio.Semaphore(options.concurrency)

        async def bounded(request: JudgeRequest) -> Outcome:
            async with slots:
                return await self._complete_one(client, request, judge=judge, prompt=prompt, options=options, stop=stop)

        try:
            return list(await asyncio.gather(*(bounded(r) for r in requests)))
        finally:
            await client.close()

    def request_arguments(self, request: JudgeRequest, *, judge: Judge, prompt: Prompt) -> dict:
        arguments = {
            "model": judge.model,
            "messages": request.messages,
            "temperature": judge.temperature,
            "max_completion_tokens": judge.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": prompt.name[:64], "schema": request.schema, "strict": True},
            },
        }
        if judge.seed is not None:
            arguments["seed"] = judge.seed
        return arguments

    async def _complete_one(
        self,
        client: openai.AsyncOpenAI,
        request: JudgeRequest,
        *,
        judge: Judge,
        prompt: Prompt,
        options: CallOptions,
        stop: threading.Event,
    ) -> Outcome:
        policy = options.retry
        body = orjson.dumps(self.request_arguments(request, judge=judge, prompt=prompt))
        attempts = transient = invalid = 0
        while True:
            if stop.is_set():
                return Outcome(request, SKIPPED, attempts=attempts)
            attempts += 1
            started = time.perf_counter()
            try:
                reply = await client.post("/chat/completions", cast_to=bytes, content=body)
            except openai.OpenAIError as exc:
                error = classify(exc)
                if isinstance(error, BackendMisconfigured):
                    raise error from exc
                if isinstance(error, BackendRejected):
                    return Outcome(request, FAILED, reason=error.message, attempts=attempts)
                transient += 1
                if transient >= policy.transport_attempts:
                    reason = GAVE_UP.format(reason=error.message, attempts=attempts)
                    return Outcome(request, UNAVAILABLE, reason=reason, attempts=attempts)
                await asyncio.sleep(policy.delay(transient, error.retry_after))
                continue
            latency_ms = (time.perf_counter() - started) * 1000
            try:
                completion = read_completion(reply)
            except BackendRejected as exc:
                raw = reply[:RAW_REPLY_KEPT].decode("utf-8", "replace")
                return Outcome(request, FAILED, reason=exc.message, raw_output=raw, attempts=attempts)
            measured: dict[str, Any] = {
                "raw_output": completion.text,
                "attempts": attempts,
                "tokens_in": completion.tokens_in,
                "tokens_out": completion.tokens_out,
                "latency_ms": latency_ms,
            }
            try:
                value = prompt.parse(completion.text, request)
            except JudgeOutputInvalid as exc:
                invalid += 1
                if invalid >= policy.parse_attempts:
                    cut = CUT_OFF.format(max_tokens=judge.max_tokens) if completion.finish_reason == "length" else ""
                    return Outcome(request, FAILED, reason=f"{cut}{exc.message} (after {invalid} answers)", **measured)
                continue
            return Outcome(request, OK, value=value, **measured)
