"""IntentGrasp's random guess (paper 002, Appendix A.3): one option drawn uniformly, seeded by
(judge seed, item), so a rerun guesses the same."""

from __future__ import annotations

import random

from judges.baselines import BaselinePrompt
from judges.prompting import JudgeRequest

__all__ = ["PROMPTS", "McqRandomGuess"]


class McqRandomGuess(BaselinePrompt):
    kind = "intent_mcq"
    title = "Baseline: random guess (one option)"
    source = "IntentGrasp (paper 002), Appendix A.3 random-guess baseline"

    def compute(self, request: JudgeRequest) -> dict:
        rng = random.Random(f"{request.seed}:{request.state}")
        return {"chosen": [rng.randrange(len(request.payload["options"]))]}


PROMPTS = [McqRandomGuess("mcq_random_guess", 1)]
