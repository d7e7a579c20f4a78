"""Pairwise preference, a task kind kept as a test fixture: which of two responses to a prompt is better?

The rater reads a prompt and two responses and answers *first*, *second* or *tie*. Which response is
shown first is drawn per annotator and item (``presentation``), so a preference for whatever comes
first (position bias) spreads evenly over both responses and can be measured: the value stores the
preferred response in the item's own terms (``a``, ``b`` or ``tie``) and, beside it, the response
that was shown first (``shown_first``, a ``presentation_fields`` entry, so two raters who prefer the
same response agree whatever order each saw).

It is written from the kind contract alone (``annotation.kinds.base.TaskKind``): its other folders
are ``judges/kinds/pairwise_preference/`` (a generation step and its prompt),
``validation/kinds/pairwise_preference/`` (the position-bias evaluation) and
``validation/reports/pairwise_preference.py`` (the report), under the same fixture root.
"""

from __future__ import annotations

import random
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

RESPONSES = ("a", "b")
PREFERENCES = (*RESPONSES, "tie")
#: The form's answers, by the place the rater saw a response at.
FIRST, SECOND, TIE = "first", "second", "tie"


class PairwisePreference(TaskKind):
    name = "pairwise_preference"
    label = "Pairwise preference (test fixture)"
    description = "Which of two responses answers the prompt better? First, second or tie."
    payload_schema = object_schema(
        {
            "prompt": described(TEXT, "the prompt both responses answer"),
            "response_a": described(TEXT, "one response"),
            "response_b": described(TEXT, "the other response"),
            "sources": described(
                object_schema({"a": TEXT, "b": TEXT}, required=RESPONSES), "who wrote each response (a person, a model)"
            ),
            "meta": META,
        },
        required=["prompt", "response_a", "response_b"],
    )
    rater_fields = ("prompt", "response_a", "response_b")
    hidden_fields = {
        "sources": "who wrote each response: a rater would prefer by author, not by content",
        "meta": "provenance (generation run, source post, licence)",
    }
    value_schema = object_schema(
        {
            "preferred": {"enum": list(PREFERENCES), "description": "the better response, a or b, or tie"},
            "shown_first": {"enum": list(RESPONSES), "description": "the response the rater saw first"},
            "note": described(OPTIONAL_TEXT, "a free note"),
        },
        required=["preferred"],
    )
    presentation_fields = ("shown_first",)
    rating_dimensions = (RatingDimension("preferred", "nominal", "Preferred", PREFERENCES, ("A", "B", "tie")),)
    value_rules_need_payload = False
    field_words = {"preferred": "Preference"}
    field_prompts = {"preferred": "choose response 1, response 2 or tie"}

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        yield "", "preferred", value["preferred"]

    # -- the form: A/B order per annotator ------------------------------------------------------------
    def presentation(self, *, payload: dict, seed: int) -> dict | None:
        order = list(RESPONSES)
        random.Random(seed).shuffle(order)
        return {"order": order}

    @staticmethod
    def _order(presentation: dict | None) -> list[str]:
        return list((presentation or {}).get("order") or RESPONSES)

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        order = self._order(presentation)
        preferred = (value or {}).get("preferred")
        chosen = TIE if preferred == "tie" else {order[0]: FIRST, order[1]: SECOND}.get(preferred)
        return {
            "shown": [
                {"place": place, "text": payload[f"response_{response}"]}
                for place, response in zip((FIRST, SECOND), order, strict=True)
            ],
            "chosen": chosen,
        }

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        # The order comes from the server's presentation, never from the request: a crafted form cannot
        # record an order the rater was not shown.
        # The form offers places only: anything else (a response's own key included) is no answer.
        order = self._order(presentation)
        preferred = {FIRST: order[0], SECOND: order[1], TIE: "tie"}.get(data.get("preferred", ""))
        return without_none({"preferred": preferred, "shown_first": order[0], "note": data.get("note") or None})

    def example_payload(self) -> dict:
        return {
            "prompt": "How do I keep basil fresh for a week?",
            "response_a": "Trim the stems and keep it in a glass of water on the counter, loosely covered.",
            "response_b": "Put it in the fridge.",
            "sources": {"a": "accepted answer", "b": "model"},
        }

    def example_value(self) -> dict:
        return {"preferred": "a", "shown_first": "b"}
