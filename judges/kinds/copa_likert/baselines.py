"""CoPA baselines: lexical overlap scores (paper 001, Table 3, method (3), "heuristic-based evaluation
metrics (Jaccard and Inclusion Coefficient) derived from (Su et al., 2025)").

Two variants of each measure (``judges.baselines`` defines the word sets, Jaccard and inclusion):

- ``copa_history_jaccard`` / ``copa_history_inclusion``: as the paper uses them, the response against
  the user's history (the payload's ``history``, the user's earlier texts; Su et al. compare "the
  generated response directly to the historical content of users"). H is the union of the words of
  the history texts, R the response's: Jaccard |R ∩ H| / |R ∪ H|, inclusion |R ∩ H| / |R| (the share
  of the response's words the history contains). An item without a history fails with that reason.
- ``copa_jaccard`` / ``copa_inclusion`` (profile-text variant): the response against each factor's
  profile text; per factor Jaccard |R ∩ P_k| / |R ∪ P_k| and inclusion |P_k ∩ R| / |P_k| (the share of
  the profile text's words the response contains), their raw score the mean over the six factors.

The stored value maps the overlap to the 0/1/2 scale by the fixed thresholds below (per factor for
the profile variant; one overlap on all six factors for the history variant), so the run is a value
like any other; ``copa_eval`` compares answers by the raw overlap (:meth:`CopaOverlap.raw_overlap`),
as the paper does ("these two metrics are not normalized").
"""

from __future__ import annotations

from annotation.kinds.copa_likert import FACTORS
from judges.baselines import OVERLAP, BaselinePrompt, inclusion, jaccard
from judges.errors import JudgeOutputInvalid
from judges.prompting import JudgeRequest

__all__ = ["COPA_BOUNDS", "NO_HISTORY", "PROMPTS", "CopaHistoryOverlap", "CopaOverlap"]

#: Overlap at or above the first bound scores 1 (Partial), at or above the second 2 (Full).
COPA_BOUNDS = {"jaccard": (0.05, 0.15), "inclusion": (0.2, 0.5)}
NO_HISTORY = "the item has no user history (payload field history) to compare the response with"


class CopaOverlap(BaselinePrompt):
    """Profile-text variant: the response against each factor's profile text."""

    kind = "copa_likert"
    source = "CoPA (paper 001), Table 3: Jaccard and Incl. Coeff. heuristics, against the factor profile"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version)
        self.measure = measure
        self.title = f"Baseline: lexical {measure} overlap, profile texts vs response"

    def _scale(self, score: float) -> int:
        low, high = COPA_BOUNDS[self.measure]
        return 2 if score >= high else 1 if score >= low else 0

    def raw_overlap(self, payload: dict) -> float:
        """The unnormalised score ``copa_eval`` compares: the mean overlap over the six profile texts."""
        overlap = OVERLAP[self.measure]
        return sum(overlap(payload["profile"][code], payload["response"]) for code in FACTORS) / len(FACTORS)

    def compute(self, request: JudgeRequest) -> dict:
        overlap = OVERLAP[self.measure]
        response, profile = request.payload["response"], request.payload["profile"]
        return {"scores": {code: self._scale(overlap(profile[code], response)) for code in FACTORS}}


class CopaHistoryOverlap(CopaOverlap):
    """The paper's variant (after Su et al. 2025): the response against the user's history."""

    source = "CoPA (paper 001), Table 3: Jaccard and Incl. Coeff. heuristics after Su et al. (2025)"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version, measure=measure)
        self.title = f"Baseline: lexical {measure} overlap, user's history vs response (Su et al. 2025)"

    def raw_overlap(self, payload: dict) -> float:
        history = [text for text in payload.get("history") or () if text.strip()]
        if not history:
            raise JudgeOutputInvalid(NO_HISTORY)
        joined, response = "\n".join(history), payload["response"]
        # Inclusion: the share of the response's words that the history contains.
        return jaccard(response, joined) if self.measure == "jaccard" else inclusion(response, joined)

    def compute(self, request: JudgeRequest) -> dict:
        score = self._scale(self.raw_overlap(request.payload))
        return {"scores": dict.fromkeys(FACTORS, score)}


PROMPTS = [
    CopaOverlap("copa_jaccard", 1, measure="jaccard"),
    CopaOverlap("copa_inclusion", 1, measure="inclusion"),
    CopaHistoryOverlap("copa_history_jaccard", 1, measure="jaccard"),
    CopaHistoryOverlap("copa_history_inclusion", 1, measure="inclusion"),
]
