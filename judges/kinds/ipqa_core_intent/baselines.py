"""IPQA baselines: CoPA's lexical overlaps (paper 001, Table 3) between each candidate intent and
question + narrative (expressed), and the selected answer (core, only when expressed)."""

from __future__ import annotations

from judges.baselines import OVERLAP, BaselinePrompt
from judges.prompting import JudgeRequest

__all__ = ["IPQA_BOUND", "PROMPTS", "IpqaOverlap"]

#: Overlap at or above this counts as "expressed" (with question + narrative) or "core" (with the answer).
IPQA_BOUND = {"jaccard": 0.1, "inclusion": 0.5}


class IpqaOverlap(BaselinePrompt):
    kind = "ipqa_core_intent"
    source = "CoPA (paper 001), Table 3 heuristics applied to IPQA candidate intents"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version)
        self.measure = measure
        self.title = f"Baseline: lexical {measure} overlap, intent vs question and answer"

    def compute(self, request: JudgeRequest) -> dict:
        payload, bound, overlap = request.payload, IPQA_BOUND[self.measure], OVERLAP[self.measure]
        stated = f"{payload['question']} {payload.get('narrative', '')}"
        judgements = []
        for intent in payload["candidate_intents"]:
            expressed = overlap(intent, stated) >= bound
            core = expressed and overlap(intent, payload["selected_answer"]) >= bound
            judgements.append({"intent": intent, "expressed": expressed, "core": core})
        return {"intents": judgements}


PROMPTS = [
    IpqaOverlap("ipqa_jaccard", 1, measure="jaccard"),
    IpqaOverlap("ipqa_inclusion", 1, measure="inclusion"),
]
