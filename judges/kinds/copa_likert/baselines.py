"""CoPA baselines: lexical overlap between each factor's profile text and the response, as in CoPA's
Jaccard and Inclusion Coefficient rows (paper 001, Table 3, after Su et al. 2025), mapped to the
0/1/2 scale by the fixed thresholds below."""

from __future__ import annotations

from annotation.kinds.copa_likert import FACTORS
from judges.baselines import OVERLAP, BaselinePrompt
from judges.prompting import JudgeRequest

__all__ = ["COPA_BOUNDS", "PROMPTS", "CopaOverlap"]

#: Overlap at or above the first bound scores 1 (Partial), at or above the second 2 (Full).
COPA_BOUNDS = {"jaccard": (0.05, 0.15), "inclusion": (0.2, 0.5)}


class CopaOverlap(BaselinePrompt):
    kind = "copa_likert"
    source = "CoPA (paper 001), Table 3: Jaccard and Incl. Coeff. heuristics"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version)
        self.measure = measure
        self.title = f"Baseline: lexical {measure} overlap, profile vs response"

    def compute(self, request: JudgeRequest) -> dict:
        low, high = COPA_BOUNDS[self.measure]
        overlap = OVERLAP[self.measure]
        response, profile = request.payload["response"], request.payload["profile"]
        scores = {}
        for code in FACTORS:
            score = overlap(profile[code], response)
            scores[code] = 2 if score >= high else 1 if score >= low else 0
        return {"scores": scores}


PROMPTS = [
    CopaOverlap("copa_jaccard", 1, measure="jaccard"),
    CopaOverlap("copa_inclusion", 1, measure="inclusion"),
]
