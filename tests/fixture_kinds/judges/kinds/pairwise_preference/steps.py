"""pairwise_response: a thread → one ``pairwise_preference`` item, the accepted answer against the
model's own answer to the question; which is which stays in the hidden ``sources``."""

from __future__ import annotations

from annotation.errors import FieldError
from judges.generation.sources import SourceRecord
from judges.generation.sources.stackexchange import StackExchangeReader
from judges.generation.steps import Step, StepInputInvalid, one_line, question_text

EMPTY_ACCEPTED = "the accepted answer has no text"


class PairwiseResponse(Step):
    name = "pairwise_response"
    label = "Accepted answer against a model's answer (pairwise_preference items)"
    reader = StackExchangeReader
    prompt_name = "pairwise_response"

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        thread = record.data
        if not thread["accepted_answer"]["body"]:
            raise StepInputInvalid([FieldError("accepted_answer_id", EMPTY_ACCEPTED)])
        return {"question": question_text(thread), "accepted": thread["accepted_answer"]["body"]}

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        return [
            {
                "prompt": data["question"],
                "response_a": data["accepted"],
                "response_b": output["response"],
                "sources": {"a": "accepted answer", "b": "model"},
            }
        ]

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """The question's own opening words returned as the answer: a floor, never an LLM."""
        return {"response": f"Baseline (no LLM): {one_line(data['question'], 200)}"}


STEPS = (PairwiseResponse,)
