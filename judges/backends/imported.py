"""Outputs a model produced elsewhere, brought in from a file (``judges.run_files``): nothing is called.

An imported run's judge names the producer's model and prompt label; its suggestions are stored
when the file is imported, so no chunk is ever sent to a worker.
"""

from __future__ import annotations

import threading

from judges.backends.base import CallOptions, JudgeBackend, Outcome
from judges.errors import BackendMisconfigured
from judges.models import Judge
from judges.prompting import JudgeRequest, Prompt

CALLS_NOTHING = "an imported run calls no model: its outputs come from the imported file"


class ImportedBackend(JudgeBackend):
    name = "imported"
    label = "imported"
    runs_items = False

    def complete(
        self,
        requests: list[JudgeRequest],
        *,
        judge: Judge,
        prompt: Prompt,
        options: CallOptions,
        stop: threading.Event,
    ) -> list[Outcome]:
        # Never reached through the services (they refuse to start such a run); a worker handed one stops it.
        raise BackendMisconfigured(CALLS_NOTHING)
