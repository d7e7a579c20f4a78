"""ipqa_intents: a thread → an ``ipqa_core_intent`` item with the model's candidate intents.

IPQA (paper 000), §2.2.2: the intents the user expresses in question + narrative, with the asker's
earlier questions as their profile. The question is the thread's title, the narrative its body, the
selected answer the one the asker accepted.
"""

from __future__ import annotations

from annotation.errors import FieldError
from judges.generation.sources import SourceRecord
from judges.generation.sources.stackexchange import StackExchangeReader
from judges.generation.steps import Step, StepDemo, StepInputInvalid, one_line, sentences

#: Candidate intents the baseline proposes at most.
BASELINE_INTENTS = 5
EMPTY_ANSWER = "the accepted answer has no text"


class IpqaIntents(Step):
    name = "ipqa_intents"
    label = "IPQA candidate intents (ipqa_core_intent items)"
    reader = StackExchangeReader
    prompt_name = "ipqa_intent_generation"
    source = "IPQA (paper 000), §2.2.2 initial intent generation"
    demo = StepDemo("generated-ipqa", "stackexchange_threads.jsonl")

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        thread = record.data
        if not thread["accepted_answer"]["body"]:
            raise StepInputInvalid([FieldError("accepted_answer_id", EMPTY_ANSWER)])
        profile = []
        for earlier in thread["history"]:
            entry = {"question": earlier["title"]}
            if earlier["body"]:
                entry["narrative"] = one_line(earlier["body"])
            profile.append(entry)
        return {
            "question": thread["title"],
            "narrative": thread["body"],
            "selected_answer": thread["accepted_answer"]["body"],
            "user_profile": profile,
        }

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        intents = list(dict.fromkeys(intent.strip() for intent in output["intents"] if intent.strip()))
        payload = {
            "question": data["question"],
            "narrative": data["narrative"],
            "selected_answer": data["selected_answer"],
            "candidate_intents": intents,
            "user_profile": data["user_profile"],
        }
        return [payload]

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """The question's own questions, as intents: each sentence ending in "?" of title and narrative."""
        asked = [s for s in sentences(f"{data['question']} {data['narrative']}") if s.endswith("?")]
        asked = list(dict.fromkeys(asked))[:BASELINE_INTENTS] or [data["question"]]
        return {"intents": [f"To get an answer to: {one_line(s, 300)}" for s in asked]}


STEPS = (IpqaIntents,)
