"""IntentGrasp (paper 002) label contextualization: the statement-draft prompt (a judge, and the
generator step ``label_statement``)."""

from __future__ import annotations

from typing import Any

from judges.prompting import JudgeRequest, TemplatePrompt, bullets

__all__ = ["PROMPTS", "LabelStatementDraft"]


class LabelStatementDraft(TemplatePrompt):
    kind = "label_contextualization"
    title = "IntentGrasp label statement draft"
    source = "IntentGrasp (paper 002), §3 Stage 2: intent label contextualization"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "dataset": payload["dataset"],
            "domain": payload["domain"],
            "label": payload["label"],
            "guideline": payload.get("guideline") or "(none given)",
            "examples": bullets(payload.get("examples", [])[:10]),
            "other_labels": ", ".join(payload.get("other_labels", [])) or "(none)",
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        if output["action"] == "cannot_contextualize":
            return {"action": "cannot_contextualize", "reason": output["reason"]}
        return {"action": "write", "statement": output["statement"]}


PROMPTS = [LabelStatementDraft("intentgrasp_label_statement", 1)]
