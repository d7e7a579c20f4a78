"""IPQA-Eval intent matching checked by people (IPQA, §2.1 task formulation and IPQA-Eval).

IPQA scores a system's predicted core intents against the gold core intents with an LLM evaluator
that decides, for a predicted and a gold intent, whether they state the same goal; the paper reports
that this meta-evaluation agrees strongly with human judgement. Here people make the same decision
on the same pairs: they read the user's question, one predicted intent and one gold core intent, and
answer *match* or *no match* (with an optional note). The kind's report measures people's agreement
and the LLM matcher's agreement with people's majority.

Items are usually built by ``manage.py ipqa_eval_pairs`` from an ``ipqa_core_intent`` project and a
predictions file: one item per (item, predicted intent, gold core intent).
"""

from collections.abc import Iterator
from typing import Any

from annotation.kinds.base import (
    META,
    OPTIONAL_TEXT,
    TEXT,
    RatingDimension,
    TaskKind,
    described,
    object_schema,
    without_none,
)

#: The form's answers, as the value stores them.
FORM_ANSWERS = {"match": True, "no_match": False}
MATCH, NO_MATCH = 1, 0

SOURCE = object_schema(
    {
        "project": described(TEXT, "slug of the IPQA project the pair was built from"),
        "external_id": described(TEXT, "external id of the IPQA item (the user's question)"),
    },
    required=["project", "external_id"],
    description="where the pair comes from (set by ipqa_eval_pairs); not shown to annotators",
)

DEMO_GUIDELINES = """\
# IPQA-Eval: does a predicted intent match a gold core intent?

Each item shows a user's question, one intent a system **predicted** and one **gold** core intent
(an intent the user expressed and the answer they selected addresses).

- **Match** when both state the same goal. The wording may differ.
- **No match** when the goals differ, or when one is broader or narrower in a way that changes what
  an answer has to address.

Judge only the two statements against the question: do not ask whether the prediction is a good
intent in itself. Keys: <kbd>M</kbd> match, <kbd>N</kbd> no match, <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
submits.
"""


class IpqaEvalMatch(TaskKind):
    name = "ipqa_eval_match"
    label = "IPQA-Eval intent matching"
    description = "Does a predicted intent state the same goal as a gold core intent? Match or no match."
    rating_dimensions = (RatingDimension("match", "nominal", "Match", (NO_MATCH, MATCH), ("no match", "match")),)
    value_rules_need_payload = False
    demo_project = {
        **{"slug": "demo-ipqa-eval", "title": "Demo: IPQA-Eval intent matching", "overlap": 2, "seed": 11},
        "guidelines": DEMO_GUIDELINES,
    }
    payload_schema = object_schema(
        {
            "question": described(TEXT, "the user's question the intents are about"),
            "predicted_intent": described(TEXT, "an intent a system predicted for the question"),
            "gold_intent": described(TEXT, "a gold core intent of the question"),
            "source": SOURCE,
            "meta": META,
        },
        required=["question", "predicted_intent", "gold_intent"],
    )
    # Blinding. The gold core intent is shown: comparing it with the prediction is the task. Which IPQA
    # item and which system the pair comes from is not: it would let a rater judge the system, not the pair.
    rater_fields = ("question", "predicted_intent", "gold_intent")
    hidden_fields = {
        "source": "the IPQA project and item the pair was built from: lets a rater look the pair up",
        "meta": "provenance (which system predicted the intent, source post, licence)",
    }
    value_schema = object_schema(
        {
            "match": {
                "type": "boolean",
                "description": "true: the predicted intent states the same goal as the gold core intent",
            },
            "note": described(OPTIONAL_TEXT, "a free note"),
        },
        required=["match"],
    )
    field_words = {"match": "Match or no match"}

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        # 0/1, not booleans: agreement code refuses booleans so True never merges with 1.
        yield "", "match", int(value["match"])

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        return {
            "id": external_id,
            "question": payload["question"],
            "predicted_intent": payload["predicted_intent"],
            "gold_intent": payload["gold_intent"],
            "match": gold["match"],
            **({"source": payload["source"]} if "source" in payload else {}),
        }

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        return without_none({"match": FORM_ANSWERS.get(data.get("match", "")), "note": data.get("note") or None})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        return {"match": (value or {}).get("match")}

    def gold_score(self, value: dict, gold: dict) -> float:
        return float(value["match"] == gold["match"])

    def example_payload(self) -> dict:
        return {
            "question": "How do I keep my sourdough starter alive while travelling for two weeks?",
            "predicted_intent": "To keep the starter alive without anyone feeding it",
            "gold_intent": "To preserve the starter without feeding",
            "source": {"project": "ipqa", "external_id": "q17"},
        }

    def example_value(self) -> dict:
        return {"match": True, "note": ""}
