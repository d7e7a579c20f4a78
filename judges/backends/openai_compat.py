"""Any OpenAI-compatible chat-completions server through ``openai.AsyncOpenAI``.

This is how a ``vllm serve MODEL`` GPU host is normally reached, and OpenAI itself works the same.
Requests run concurrently up to the run's concurrency, each with a timeout and the item's output
schema as structured output (``response_format`` json_schema; vLLM honours it). The client's own
retries are off (``max_retries=0``): retries happen here, where they are bounded, jittered and
counted on the suggestion.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import openai

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
T = TypeVar("T")


def retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        return float(exc.response.headers.get("retry-after", ""))
    except ValueError:
        return None


def classify(exc: openai.OpenAIError) -> Exception:
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
        arguments = self.request_arguments(request, judge=judge, prompt=prompt)
        attempts = transient = invalid = 0
        while True:
            if stop.is_set():
                return Outcome(request, SKIPPED, attempts=attempts)
            attempts += 1
            started = time.perf_counter()
            try:
                response = await client.chat.completions.create(**arguments)
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
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice else ""
            usage = response.usage
            measured = {
                "raw_output": text,
                "attempts": attempts,
                "tokens_in": usage.prompt_tokens if usage else None,
                "tokens_out": usage.completion_tokens if usage else None,
                "latency_ms": latency_ms,
            }
            try:
                value = prompt.parse(text, request)
            except JudgeOutputInvalid as exc:
                invalid += 1
                if invalid >= policy.parse_attempts:
                    cut_off = choice is not None and choice.finish_reason == "length"
                    cut = CUT_OFF.format(max_tokens=judge.max_tokens) if cut_off else ""
                    return Outcome(request, FAILED, reason=f"{cut}{exc.message} (after {invalid} answers)", **measured)
                continue
            return Outcome(request, OK, value=value, **measured)
