"""Expert inspection of LLM rationales (paper 001, CIPD).

Pass when the rationale is logically coherent and theoretically sound: a real, relevant theory
supports the inferred motive and nothing contradicts the history. Fail names why.
"""

from collections.abc import Iterator
from typing import Any

from annotation.errors import FieldError
from annotation.kinds.base import (
    META,
    OPTIONAL_TEXT,
    TEXT,
    TEXT_LIST,
    RatingDimension,
    TaskKind,
    form_int,
    object_schema,
    without_none,
)

FAILURE_CATEGORIES: dict[str, str] = {
    "hallucination_or_contradiction": "Hallucination, or contradiction with the user's history",
    "theoretical_error": "A fabricated or misstated theory",
    "inappropriate_application": "A real theory applied to a motive it does not fit",
}
PASS, FAIL = 1, 0

FAIL_NEEDS_CATEGORY = "a Fail verdict needs at least one failure category"
PASS_HAS_NO_CATEGORY = "a Pass verdict takes no failure category"

RATIONALE = object_schema(
    {"reason": TEXT, "theory": TEXT, "explanation": TEXT}, required=["reason", "theory", "explanation"]
)


class RationaleInspection(TaskKind):
    name = "rationale_inspection"
    label = "Rationale inspection (expert)"
    description = "Pass or Fail an LLM's rationale for why a user accepted an answer."
    form_template = "annotation/kinds/rationale_inspection.html"
    # The verdict, then each failure category as its own yes/no rating (0 on a Pass).
    rating_dimensions = (
        RatingDimension("verdict", "nominal", "Verdict", (FAIL, PASS), ("Fail", "Pass")),
        *(RatingDimension(code, "nominal", label, (0, 1), ("no", "yes")) for code, label in FAILURE_CATEGORIES.items()),
    )
    report_builder = "validation.reports.rationale_inspection.RationaleInspectionReport"
    payload_schema = object_schema(
        {
            "context": object_schema(
                {
                    "question": TEXT,
                    "accepted_answer": TEXT,
                    "other_answers": TEXT_LIST,
                    "history": TEXT_LIST,
                },
                required=["question", "accepted_answer"],
            ),
            "rationale": object_schema(
                {
                    "rationales": {"type": "array", "items": RATIONALE, "minItems": 1},
                    "global_explanation": TEXT,
                    "factors": {"type": "object", "additionalProperties": OPTIONAL_TEXT},
                },
                required=["rationales", "global_explanation"],
            ),
            "meta": META,
        },
        required=["context", "rationale"],
    )
    value_schema = object_schema(
        {
            "verdict": {"type": "integer", "enum": [FAIL, PASS]},
            "failure_categories": {
                "type": "array",
                "items": {"type": "string", "enum": list(FAILURE_CATEGORIES)},
                "uniqueItems": True,
            },
            "note": OPTIONAL_TEXT,
        },
        required=["verdict"],
    )

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        categories = value.get("failure_categories", [])
        if value["verdict"] == FAIL and not categories:
            yield FieldError("failure_categories", FAIL_NEEDS_CATEGORY)
        if value["verdict"] == PASS and categories:
            yield FieldError("failure_categories", PASS_HAS_NO_CATEGORY)

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        yield "", "verdict", value["verdict"]
        chosen = set(value.get("failure_categories", ()))
        for code in FAILURE_CATEGORIES:
            yield "", code, int(code in chosen)

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        return {
            "id": external_id,
            "question": payload["context"]["question"],
            "rationale": payload["rationale"],
            "verdict": "pass" if gold["verdict"] == PASS else "fail",
            "failure_categories": gold.get("failure_categories", []),
        }

    field_words = {"verdict": "Pass or Fail", "failure_categories": "Why it fails"}

    def value_from_form(self, data: Any, *, payload: dict) -> dict:
        return without_none(
            {
                "verdict": form_int(data.get("verdict")),
                "failure_categories": data.getlist("failure_categories") or None,
                "note": data.get("note") or None,
            }
        )

    def form_context(self, *, payload: dict, value: dict | None, peers: list[dict]) -> dict:
        chosen = set((value or {}).get("failure_categories", []))
        categories = [
            {"code": code, "label": label, "checked": code in chosen} for code, label in FAILURE_CATEGORIES.items()
        ]
        return {"categories": categories, "verdict": (value or {}).get("verdict")}

    def gold_score(self, value: dict, gold: dict) -> float:
        return float(value["verdict"] == gold["verdict"])

    def example_payload(self) -> dict:
        return {
            "context": {
                "question": "Which grinder should I buy for espresso on a budget?",
                "accepted_answer": "A hand grinder gives espresso-fine grind for far less money.",
                "other_answers": ["Buy the cheapest electric burr grinder."],
                "history": ["Asked earlier how to descale a machine without chemicals."],
            },
            "rationale": {
                "rationales": [
                    {
                        "reason": "Values cost over convenience",
                        "theory": "Bounded rationality (Simon, 1955)",
                        "explanation": "The user satisfices on price given limited budget.",
                    }
                ],
                "global_explanation": "The accepted answer matches a thrifty, hands-on user.",
            },
        }

    def example_value(self) -> dict:
        return {
            "verdict": FAIL,
            "failure_categories": ["inappropriate_application"],
            "note": "Motive misread.",
        }
