"""Label contextualization baseline: a plain draft, "To <label words>."."""

from __future__ import annotations

from typing import Any

from judges.baselines import BaselinePrompt, label_words
from judges.prompting import JudgeRequest

__all__ = ["PROMPTS", "LabelPlainDraft"]


class LabelPlainDraft(BaselinePrompt):
    kind = "label_contextualization"
    title = "Baseline: plain draft from the label"
    source = "IntentGrasp (paper 002), §3 Stage 2; the label's own words as a statement"

    def compute(self, request: JudgeRequest) -> dict[str, Any]:
        return {"action": "write", "statement": f"To {label_words(request.payload['label'])}."}


PROMPTS = [LabelPlainDraft("label_plain_draft", 1)]
