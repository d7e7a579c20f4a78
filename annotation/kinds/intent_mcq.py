"""IntentGrasp multiple-choice intent questions (paper 002), answered by people.

Several options may be correct; the key is hidden from annotators, and performance is the F1 of the
chosen set against it.
"""

from collections.abc import Iterator

from annotation.errors import FieldError
from annotation.kinds.base import META, TEXT, TaskKind, object_schema

MAX_OPTIONS = 10
OPTION_INDEX = {"type": "integer", "minimum": 0, "maximum": MAX_OPTIONS - 1}
INDEX_SET = {"type": "array", "items": OPTION_INDEX, "minItems": 1, "uniqueItems": True}


def unknown_options(field: str, indices: list[int], options: list[str]) -> Iterator[FieldError]:
    bad = [i for i in indices if i >= len(options)]
    if bad:
        yield FieldError(field, f"option numbers {bad} do not exist (options are 0-{len(options) - 1})")


class IntentMcq(TaskKind):
    name = "intent_mcq"
    label = "IntentGrasp multiple choice"
    description = "Choose every option that states the intent behind the context."
    form_template = "annotation/kinds/intent_mcq.html"
    payload_schema = object_schema(
        {
            "context": TEXT,
            "context_type": {"type": "string", "enum": ["query", "dialogue", "monologue"]},
            "question": TEXT,
            "options": {
                "type": "array",
                "items": TEXT,
                "minItems": 2,
                "maxItems": MAX_OPTIONS,
                "uniqueItems": True,
            },
            "answers": INDEX_SET,
            "meta": META,
        },
        required=["context", "question", "options", "answers"],
    )
    value_schema = object_schema({"chosen": INDEX_SET}, required=["chosen"])

    def payload_rules(self, payload: dict) -> Iterator[FieldError]:
        return unknown_options("answers", payload["answers"], payload["options"])

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        return unknown_options("chosen", value["chosen"], payload["options"])

    def example_payload(self) -> dict:
        return {
            "context": "I still have not received my new card, I ordered over a week ago.",
            "context_type": "query",
            "question": "What does the user intend?",
            "options": [
                "To find out when a newly ordered card will arrive.",
                "To report a lost or stolen card.",
                "To change the card's PIN.",
                "To ask about exchange rates.",
            ],
            "answers": [0],
        }

    def example_value(self) -> dict:
        return {"chosen": [0]}
