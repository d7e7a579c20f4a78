"""The generator prompt of the pairwise-preference fixture kind: a model writes its own answer to a
question, to be compared with the answer the asker accepted."""

from __future__ import annotations

from typing import Any

from judges.prompting import Generator

__all__ = ["PROMPTS", "PairwiseResponse"]


class PairwiseResponse(Generator):
    kind = "pairwise_preference"
    title = "Pairwise preference: a model's answer to compare with the accepted one"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {"question": payload["question"]}


PROMPTS = [PairwiseResponse("pairwise_response", 1)]
