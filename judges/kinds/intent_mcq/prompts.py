"""IntentGrasp (paper 002) multiple choice: the evaluation prompt with its prompting slot."""

from __future__ import annotations

import json
import random
from typing import Any

from judges.prompting import JudgeRequest, TemplatePrompt, with_schema_changes

__all__ = ["LETTERS", "MCQ_PROMPTING", "MCQ_SHUFFLE_SEEDS", "PROMPTS", "IntentGraspMcq"]

LETTERS = "ABCDEFGHIJ"
#: The paper's prompting slot for the IntentGrasp baselines (paper 002, Appendix B.1).
MCQ_PROMPTING = {
    "da": "",
    "cot": "Let's think step by step.",
    "ia": "Let's analyze the intent of the question and then answer.",
}
#: Option orders the paper evaluates (paper 002, Appendix B.3).
MCQ_SHUFFLE_SEEDS = (7, 42, 365)


class IntentGraspMcq(TemplatePrompt):
    """The IntentGrasp evaluation prompt with its prompting slot (DA, CoT or IA).

    With a seed, the options are shown in an order drawn from (seed, item id) and the chosen letters
    are mapped back to the item's own option numbers; without one, they keep the item's order.
    """

    kind = "intent_mcq"
    title = "IntentGrasp multiple choice"
    source = "IntentGrasp (paper 002), Appendix B.1, Figure 6(a); option shuffles of Appendix B.3"

    def __init__(self, name: str, version: int, *, variant: str) -> None:
        super().__init__(name, version, template="intentgrasp_mcq", slots={"prompting": MCQ_PROMPTING[variant]})
        self.variant = variant
        self.title = f"IntentGrasp multiple choice, {variant.upper()}"

    def request_state(self, payload: dict, *, seed: int | None, external_id: str) -> list[int]:
        order = list(range(len(payload["options"])))
        if seed is not None:
            # Seeded by item, not by position in a batch: a chunked, resumed run shows the same orders.
            random.Random(f"{seed}:{external_id}").shuffle(order)
        return order

    def context(self, payload: dict, state: list[int]) -> dict[str, str]:
        options = payload["options"]
        reasoning = '"reasoning": "...", ' if self.variant != "da" else ""
        return {
            "context": payload["context"],
            "question": payload["question"],
            "options": "\n".join(f"{LETTERS[shown]}. {options[original]}" for shown, original in enumerate(state)),
            "answer_format": "{" + reasoning + '"answer": ["A", ...]}',
        }

    def output_schema(self, payload: dict, state: list[int]) -> dict:
        answer = json.loads(json.dumps(self.base_schema["properties"]["answer"]))
        answer["items"]["enum"] = list(LETTERS[: len(state)])
        changes: dict[str, Any] = {"answer": answer}
        if self.variant == "da":
            # Direct answer: no reasoning field, so structured output does not invite a chain of thought.
            changes["reasoning"] = None
        return with_schema_changes(self.base_schema, **changes)

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        order = request.state
        return {"chosen": sorted({order[LETTERS.index(letter)] for letter in output["answer"]})}

    def partial_value(self, text: str, request: JudgeRequest) -> tuple[dict, int] | None:
        """The released scorer's reading of an answer with letters beyond the options shown (or
        other entries that are no letter, or letters in lower case): the valid letters as a value, the
        distinct invalid entries counted as wrong choices
        (``validation.kinds.intent_mcq.mcq_eval.partial_credit_f1``). Letters are compared as the
        released scorer compares them, lower-cased on both sides: a correct "a" is the option "A"."""
        try:
            output = json.loads(text)
        except json.JSONDecodeError:
            return None
        letters = output.get("answer") if isinstance(output, dict) else None
        if not isinstance(letters, list):
            return None
        order = request.state
        shown = LETTERS[: len(order)]
        valid: set[int] = set()
        invalid: set[str] = set()
        lowered = shown.lower()
        for letter in letters:
            if isinstance(letter, str) and len(letter) == 1 and letter.lower() in lowered:
                valid.add(order[lowered.index(letter.lower())])
            else:
                invalid.add(json.dumps(letter.lower() if isinstance(letter, str) else letter, sort_keys=True))
        if not valid:
            return None
        return {"chosen": sorted(valid)}, len(invalid)


PROMPTS = [
    IntentGraspMcq("intentgrasp_mcq_da", 1, variant="da"),
    IntentGraspMcq("intentgrasp_mcq_cot", 1, variant="cot"),
    IntentGraspMcq("intentgrasp_mcq_ia", 1, variant="ia"),
]
