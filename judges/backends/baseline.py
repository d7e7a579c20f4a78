"""Baselines (judges.baselines) run in the worker itself: no model, no network, deterministic."""

from __future__ import annotations

import json
import threading
import time

from judges.backends.base import FAILED, OK, SKIPPED, CallOptions, JudgeBackend, Outcome
from judges.baselines import BaselinePrompt
from judges.errors import JudgeOutputInvalid
from judges.models import Judge
from judges.prompting import JudgeRequest


class BaselineBackend(JudgeBackend):
    name = "baseline"
    label = "Baseline (no LLM)"
    is_baseline = True
    needs_model = False
    chunk_size = 500

    def complete(
        self,
        requests: list[JudgeRequest],
        *,
        judge: Judge,
        prompt: BaselinePrompt,  # type: ignore[override]  # baseline backends run only baseline prompts
        options: CallOptions,
        stop: threading.Event,
    ) -> list[Outcome]:
        outcomes = []
        for request in requests:
            if stop.is_set():
                outcomes.append(Outcome(request, SKIPPED))
                continue
            started = time.perf_counter()
            try:
                computed = prompt.compute(request)
            except JudgeOutputInvalid as exc:
                # The item lacks what the method reads (e.g. a user's history): a failure with its reason.
                outcomes.append(Outcome(request, FAILED, raw_output="", reason=exc.message, attempts=1))
                continue
            text = json.dumps(computed, ensure_ascii=False)
            latency_ms = (time.perf_counter() - started) * 1000
            try:
                value = prompt.parse(text, request)
            except JudgeOutputInvalid as exc:
                # A baseline that breaks the kind's rules is a bug; it shows as a failure, never as a score.
                outcomes.append(Outcome(request, FAILED, raw_output=text, reason=exc.message, attempts=1))
                continue
            outcomes.append(Outcome(request, OK, value=value, raw_output=text, attempts=1, latency_ms=latency_ms))
        return outcomes
