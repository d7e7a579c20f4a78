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
    described,
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
    {
        "reason": described(TEXT, "the inferred motive"),
        "theory": described(TEXT, "the theory cited for it"),
        "explanation": described(TEXT, "how the theory links the motive to the choice"),
    },
    required=["reason", "theory", "explanation"],
)


def demo_guidelines() -> str:
    """The demo project's guidelines, from CoPA's inspection criteria."""
    categories = "\n".join(f"- `{code}`: {text}" for code, text in FAILURE_CATEGORIES.items())
    return f"""\
# Rationale inspection (experts)

The context shows a question, the answer the user accepted, the other answers and the user's
recent history. The rationale explains, with a theory, why the user accepted that answer.

- **Pass (1)** when the rationale is logically coherent and theoretically sound: a real, relevant
  theory supports the inferred motive, and nothing in it is factually wrong.
- **Fail (0)** otherwise, naming every reason that applies:

{categories}

Check the history before passing a claim about the user: a rationale that contradicts it fails.
"""


class RationaleInspection(TaskKind):
    name = "rationale_inspection"
    label = "Rationale inspection (expert)"
    description = "Pass or Fail an LLM's rationale for why a user accepted an answer."
    # The verdict, then each failure category as its own yes/no rating (0 on a Pass).
    rating_dimensions = (
        RatingDimension("verdict", "nominal", "Verdict", (FAIL, PASS), ("Fail", "Pass")),
        *(RatingDimension(code, "nominal", label, (0, 1), ("no", "yes")) for code, label in FAILURE_CATEGORIES.items()),
    )
    value_rules_need_payload = False
    demo_project = {
        **{"slug": "demo-rationale", "title": "Demo: rationale inspection (Stack Exchange)", "overlap": 2, "seed": 365},
        "guidelines": demo_guidelines(),
    }
    payload_schema = object_schema(
        {
            "context": object_schema(
                {
                    "question": described(TEXT, "the user's question"),
                    "accepted_answer": described(TEXT, "the answer the user accepted"),
                    "other_answers": described(TEXT_LIST, "the answers the user did not accept"),
                    "history": described(TEXT_LIST, "the user's recent interactions, oldest first"),
                },
                required=["question", "accepted_answer"],
                description="the CIPD context the rationale explains",
            ),
            "rationale": object_schema(
                {
                    "rationales": {
                        "type": "array",
                        "items": RATIONALE,
                        "minItems": 1,
                        "description": "the reasons, each tied to a theory",
                    },
                    "global_explanation": described(TEXT, "the rationale's overall explanation"),
                    "factors": {
                        "type": "object",
                        "additionalProperties": OPTIONAL_TEXT,
                        "description": "factor name → the rationale's text for it",
                    },
                },
                required=["rationales", "global_explanation"],
                description="the LLM's rationale for why the user accepted that answer",
            ),
            "meta": META,
        },
        required=["context", "rationale"],
    )
    # Blinding. The inspector judges the whole rationale against the whole context, so both are shown
    # (the accepted answer too: it is what the rationale explains, not a condition to be blind to).
    rater_fields = (
        "context",
        "rationale.rationales",
        "rationale.global_explanation",
        "rationale.factors",
    )
    hidden_fields = {
        "meta": "provenance (source posts, which model wrote the rationale): the verdict is on the rationale, "
        "not on its author",
    }
    value_schema = object_schema(
        {
            "verdict": {
                "type": "integer",
                "enum": [FAIL, PASS],
                "description": f"{PASS} = Pass (coherent and theoretically sound), {FAIL} = Fail",
            },
            "failure_categories": {
                "type": "array",
                "items": {"type": "string", "enum": list(FAILURE_CATEGORIES)},
                "uniqueItems": True,
                "description": "why it fails, one or more when the verdict is Fail: "
                + "; ".join(f"`{name}`: {text}" for name, text in FAILURE_CATEGORIES.items()),
            },
            "note": described(OPTIONAL_TEXT, "a free note"),
        },
        required=["verdict"],
    )
    value_rule_notes = (FAIL_NEEDS_CATEGORY, PASS_HAS_NO_CATEGORY)

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

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        return without_none(
            {
                "verdict": form_int(data.get("verdict")),
                "failure_categories": data.getlist("failure_categories") or None,
                "note": data.get("note") or None,
            }
        )

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
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
