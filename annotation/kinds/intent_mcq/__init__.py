"""IntentGrasp multiple-choice intent questions (paper 002), answered by people.

Several options may be correct; the key is hidden from annotators, and performance is the F1 of the
chosen set against it.
"""

from collections.abc import Iterator
from typing import Any

from annotation.errors import FieldError
from annotation.kinds.base import (
    META,
    TEXT,
    RatingDimension,
    TaskKind,
    ValueLine,
    described,
    form_int,
    object_schema,
)

MAX_OPTIONS = 10
OPTION_INDEX = {"type": "integer", "minimum": 0, "maximum": MAX_OPTIONS - 1}
INDEX_SET = {"type": "array", "items": OPTION_INDEX, "minItems": 1, "uniqueItems": True}


def instance_f1(chosen: list[int], answers: list[int]) -> float:
    """F1 of a chosen option set against the key (IntentGrasp section 4): 2|C∩A| / (|C| + |A|)."""
    hits = len(set(chosen) & set(answers))
    return 2 * hits / (len(set(chosen)) + len(set(answers)))


def unknown_options(field: str, indices: list[int], options: list[str]) -> Iterator[FieldError]:
    bad = [i for i in indices if i >= len(options)]
    if bad:
        yield FieldError(field, f"option numbers {bad} do not exist (options are 0-{len(options) - 1})")


#: The demo project's guidelines (Markdown).
DEMO_GUIDELINES = """\
# IntentGrasp: multiple choice

Read the context (a query, a dialogue or a passage) and choose **every** option that states the
intent behind it. Usually one option is right, but several may be.

Answer from the context alone. Your choices are scored by F1 against the dataset's labels.
"""


class IntentMcq(TaskKind):
    name = "intent_mcq"
    label = "IntentGrasp multiple choice"
    description = "Choose every option that states the intent behind the context."
    # People are scored against the key, not against each other: the rating is the instance F1.
    rating_dimensions = (RatingDimension("f1", "interval", "F1 against the key"),)
    ratings_need_payload = True
    demo_project = {
        **{"slug": "demo-mcq", "title": "Demo: IntentGrasp multiple choice (SNIPS, SciCite)", "overlap": 3, "seed": 42},
        "guidelines": DEMO_GUIDELINES,
    }
    payload_schema = object_schema(
        {
            "context": described(TEXT, "the text whose intent is asked about"),
            "context_type": {
                "type": "string",
                "enum": ["query", "dialogue", "monologue"],
                "description": "what the context is",
            },
            "question": described(TEXT, "the question shown with the options"),
            "options": {
                "type": "array",
                "items": TEXT,
                "minItems": 2,
                "maxItems": MAX_OPTIONS,
                "uniqueItems": True,
                "description": f"the options, numbered from 0 in this order (at most {MAX_OPTIONS})",
            },
            "answers": described(INDEX_SET, "the numbers of the correct options (hidden from annotators)"),
            "meta": META,
        },
        required=["context", "question", "options", "answers"],
    )
    # Blinding. People's F1 against the key is the measurement: anything that names the correct options
    # stays with researchers. The options themselves are shown in the stored order, which the MCQ
    # builder shuffles with a seed, so their position says nothing about the key.
    rater_fields = ("context", "context_type", "question", "options")
    hidden_fields = {
        "answers": "the answer key: the numbers of the correct options",
        "meta": "provenance; IntentGrasp items keep the dataset's label (`meta.label`) here, which names the "
        "correct option, and the option shuffle seed",
    }
    value_schema = object_schema(
        {"chosen": described(INDEX_SET, "the numbers of the options the annotator chose")}, required=["chosen"]
    )
    payload_rule_notes = ("every number in `answers` names an existing option (0 to the number of options − 1)",)
    value_rule_notes = ("every number in `chosen` names an existing option of the item",)

    def payload_rules(self, payload: dict) -> Iterator[FieldError]:
        return unknown_options("answers", payload["answers"], payload["options"])

    value_rules_payload_keys = ("options",)

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        return unknown_options("chosen", value["chosen"], payload["options"])

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        assert payload is not None  # given: the kind sets ratings_need_payload
        yield "", "f1", instance_f1(value["chosen"], payload["answers"])

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        return {
            "id": external_id,
            "context": payload["context"],
            "question": payload["question"],
            "options": payload["options"],
            "answers": payload["answers"],
            "human_answers": gold["chosen"],
            "human_f1": instance_f1(gold["chosen"], payload["answers"]),
        }

    field_words = {"chosen": "Options"}

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        return {"chosen": [form_int(text) for text in data.getlist("chosen")]}

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        chosen = set((value or {}).get("chosen", []))
        # Keys 1-9 then 0 toggle the first ten options.
        options = [
            {"index": i, "text": text, "key": (i + 1) % 10, "checked": i in chosen}
            for i, text in enumerate(payload["options"])
        ]
        return {"options": options}

    def gold_score(self, value: dict, gold: dict) -> float:
        return instance_f1(value["chosen"], gold["chosen"])

    def value_lines(self, value: dict, payload: dict) -> list[ValueLine]:
        # One line per option, numbered from 1 as the form numbers them (values store 0-based indices).
        chosen = set(value.get("chosen", ()))
        return [
            ValueLine(f"option:{i}", f"{i + 1}. {text}", "chosen" if i in chosen else "—")
            for i, text in enumerate(payload["options"])
        ]

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
