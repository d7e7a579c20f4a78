"""A lexical baseline for IPQA-Eval intent matching: no model, always labelled a baseline.

Match when the Jaccard overlap of the two intents' content words (lower-case, function words left
out, ``judges.baselines.words``) is at least ``MATCH_JACCARD``. It shows how far word overlap alone
gets against people and the LLM matcher; it is no part of IPQA (paper 000).
"""

from __future__ import annotations

from judges.baselines import BaselinePrompt, jaccard
from judges.prompting import JudgeRequest

__all__ = ["MATCH_JACCARD", "PROMPTS", "IntentJaccardMatch"]

#: Jaccard of content words at or above which two intents count as a match. Intents are short
#: ("To ... "): half the words in common is a paraphrase more often than not.
MATCH_JACCARD = 0.5


class IntentJaccardMatch(BaselinePrompt):
    kind = "ipqa_eval_match"
    title = f"Baseline: match when the intents' content-word Jaccard is at least {MATCH_JACCARD}"
    source = "lexical-overlap baseline for IPQA-Eval's matcher (IPQA, §2.1); not from the paper"

    def compute(self, request: JudgeRequest) -> dict:
        payload = request.payload
        return {"match": jaccard(payload["predicted_intent"], payload["gold_intent"]) >= MATCH_JACCARD}


PROMPTS = [IntentJaccardMatch("ipqa_eval_jaccard", 1)]
