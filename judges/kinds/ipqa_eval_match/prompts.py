"""IPQA-Eval's LLM evaluator (IPQA, §2.1): does a predicted intent state the same goal as a gold core
intent? The judge of the ``ipqa_eval_match`` kind; its answer ``{"match": true|false}`` is the kind's
value as it is, so people and the matcher answer the same question in the same shape.

The template text and schema are those IPQA-Eval's matching prompt has always had (same files, same
``ipqa_eval_intent_matching.v1`` key, hence the same prompt SHA-256 for the same pair).
"""

from __future__ import annotations

from typing import Any

from judges.prompting import TemplatePrompt

__all__ = ["PROMPTS", "IpqaEvalIntentMatching"]


class IpqaEvalIntentMatching(TemplatePrompt):
    kind = "ipqa_eval_match"
    title = "IPQA-Eval intent matching"
    source = "IPQA (paper 000), §2.1 S_intent = IPQA-Eval(predicted, gold core intents); LLM evaluator matching"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "question": payload["question"],
            "predicted_intent": payload["predicted_intent"],
            "gold_intent": payload["gold_intent"],
        }


PROMPTS = [IpqaEvalIntentMatching("ipqa_eval_intent_matching", 1)]
