"""IPQA (paper 000) prompts: core-intent validation (the judge) and intent generation (a generator).
IPQA-Eval's intent matching is the judge of the ``ipqa_eval_match`` kind (its own folder)."""

from __future__ import annotations

import json
from typing import Any

from judges.prompting import Generator, JudgeRequest, TemplatePrompt, bullets, numbered, with_schema_changes

__all__ = ["PROMPTS", "IpqaCoreIntentValidation", "IpqaIntentGeneration", "ipqa_question"]


def earlier_questions(profile: list[dict], limit: int = 50) -> str:
    """The user's earlier questions, newest last, with what they wrote and chose (IPQA user profile)."""
    lines = []
    for entry in profile[-limit:]:
        line = f"Q: {entry['question']}"
        if entry.get("narrative"):
            line += f" | Narrative: {entry['narrative']}"
        if entry.get("selected_answer"):
            line += f" | Selected answer: {entry['selected_answer']}"
        lines.append(line)
    return bullets(lines)


def ipqa_question(payload: dict) -> dict[str, str]:
    """What every IPQA prompt shows of the user: earlier questions, the question and its narrative."""
    return {
        "profile": earlier_questions(payload.get("user_profile", [])),
        "question": payload["question"],
        "narrative": payload.get("narrative") or "(none)",
    }


class IpqaCoreIntentValidation(TemplatePrompt):
    kind = "ipqa_core_intent"
    title = "IPQA core-intent validation"
    source = "IPQA (paper 000), §2.3 quality control: expressed and core per candidate intent"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            **ipqa_question(payload),
            "selected_answer": payload["selected_answer"],
            "candidates": numbered(payload["candidate_intents"]),
        }

    def output_schema(self, payload: dict, state: Any) -> dict:
        # One judgement per candidate, by number: the model never retypes (and never alters) an intent.
        count = len(payload["candidate_intents"])
        judgements = json.loads(json.dumps(self.base_schema["properties"]["judgements"]))
        judgements.update(minItems=count, maxItems=count)
        judgements["items"]["properties"]["intent_number"] = {"type": "integer", "enum": list(range(1, count + 1))}
        return with_schema_changes(self.base_schema, judgements=judgements)

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        candidates = request.payload["candidate_intents"]
        return {
            "intents": [
                {"intent": candidates[j["intent_number"] - 1], "expressed": j["expressed"], "core": j["core"]}
                for j in output["judgements"]
            ]
        }


class IpqaIntentGeneration(Generator):
    kind = "ipqa_core_intent"
    title = "IPQA intent generation"
    source = "IPQA (paper 000), §2.2.2 initial intent generation"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return ipqa_question(payload)


PROMPTS = [
    IpqaCoreIntentValidation("ipqa_core_intent_validation", 1),
    IpqaIntentGeneration("ipqa_intent_generation", 1),
]
