"""CoPA six-factor 3-point Likert rating (paper 001).

A person scores how well a candidate response fits a user's cognitive profile on six factors,
0 Mismatch, 1 Partial, 2 Full; when torn between two scores, the more conservative one.
"""

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from annotation.kinds.base import (
    META,
    OPTIONAL_TEXT,
    TEXT,
    DimensionColumn,
    RatingDimension,
    TaskKind,
    described,
    form_int,
    object_schema,
    without_none,
)

#: Factor code → (name, the rubric's one-line definition), in the paper's order.
FACTORS: dict[str, tuple[str, str]] = {
    "CT": (
        "Cognitive Trust",
        "Does the response meet the user's threshold for trust and credibility in this domain?",
    ),
    "SA": ("Situational Anchoring", "Is it calibrated to the user's immediate context and problem?"),
    "SC": ("Schema Consistency", "Does it fit the user's prior knowledge and mental models?"),
    "CLM": ("Cognitive Load Management", "Does its complexity fit the user's capacity?"),
    "MS": ("Metacognitive Scaffolding", "Does its structure foster the user's critical thinking?"),
    "AMR": ("Affective and Motivational Resonance", "Does it fit the user's emotional state and motivation?"),
}
SCALE: dict[int, str] = {
    0: "Mismatch: violates or ignores the preference",
    1: "Partial: aligns partially, lacks depth",
    2: "Full: well aligned",
}
SCORE = {"type": "integer", "enum": sorted(SCALE)}
SCALE_NAMES = ("Mismatch", "Partial", "Full")
#: CoPA's overall score of a response, S = sum of the six factor scores / 12 (0 to 1), estimated beside them.
OVERALL, OVERALL_TITLE, OVERALL_DIVISOR = "S", "Overall S = sum of scores / 12", 12
SCALE_TEXT = "; ".join(f"{score} = {text}" for score, text in SCALE.items())


def demo_guidelines() -> str:
    """The demo project's guidelines, from CoPA's rubric."""
    factors = "\n".join(f"- **{name} ({code})**: {definition}" for code, (name, definition) in FACTORS.items())
    scale = "\n".join(f"- **{score}** {text}" for score, text in SCALE.items())
    return f"""\
# CoPA: six-factor rating

Read the user's cognitive profile, their question and the candidate response. Score how well the
response fits **this user** on each factor.

{factors}

Scale:

{scale}

If uncertain between two scores, choose the more conservative one. Judge each sample only on the
material given; do not look the thread up.
"""


#: The user history texts an item carries, at most.
MAX_HISTORY = 200


class CopaLikert(TaskKind):
    name = "copa_likert"
    label = "CoPA six-factor Likert rating"
    description = "Score a response 0/1/2 on each of the six cognitive-personalization factors."
    # One ordinal dimension per factor, named by its code as in the paper's Table 7.
    rating_dimensions = tuple(
        RatingDimension(code, "ordinal", name, tuple(sorted(SCALE)), SCALE_NAMES) for code, (name, _) in FACTORS.items()
    )
    # Every rating is a number at value["scores"][code]: read by the database on large projects.
    rating_paths = {code: ("scores", code) for code in FACTORS}
    value_rules_need_payload = False
    demo_project = {
        **{
            "slug": "demo-copa",
            "title": "Demo: CoPA six-factor ratings (Stack Exchange)",
            "overlap": 3,
            "suggestion_exposure": "randomised",
            "suggestion_probability": 0.5,
            "seed": 42,
        },
        "guidelines": demo_guidelines(),
    }
    payload_schema = object_schema(
        {
            "profile": object_schema(
                {code: described(TEXT, f"the user's profile for {name}") for code, (name, _) in FACTORS.items()},
                required=list(FACTORS),
                description="the user's profile: one text per cognitive factor",
            ),
            "question": described(TEXT, "the user's question"),
            "response": described(TEXT, "the candidate response to score"),
            "response_source": described(
                TEXT, "where the response comes from: `accepted`, `top-voted` or a model name"
            ),
            # The accepted and the top-voted response of one question share a pair id (CoPA pairs them).
            "pair_id": described(TEXT, "the question's pair: the accepted and the top-voted response share it"),
            "history": {
                "type": "array",
                "items": TEXT,
                "maxItems": MAX_HISTORY,
                "description": (
                    f"the user's earlier texts (at most {MAX_HISTORY}): the lexical baselines compare the response "
                    "with them (CoPA Table 3, after Su et al. 2025)"
                ),
            },
            "meta": META,
        },
        required=["profile", "question", "response", "response_source"],
    )
    # Blinding. Raters judge the question-response pair on the rubric alone (CoPA Table 7), so nothing
    # that tells which response is which reaches them: CoPA section 5.2 compares accepted with top-voted
    # responses, and the ratings exist to validate evaluators on exactly that contrast.
    rater_fields = ("profile", "question", "response")
    hidden_fields = {
        "response_source": "the condition under study (accepted, top-voted or a model): a rater who knows it "
        "rates the label, not the response",
        "pair_id": "links the accepted and the top-voted response of one question, so a rater could compare "
        "the two and learn which is which",
        "meta": "provenance (source post, its score, the answer's role in the thread): names the condition",
        "history": "the material the profile was built from, for the lexical baselines: raters judge the response "
        "against the profile alone (CoPA Table 7), and the history may quote the accepted answer",
    }
    value_schema = object_schema(
        {
            "scores": object_schema(
                {code: described(SCORE, f"{name}: {question}") for code, (name, question) in FACTORS.items()},
                required=list(FACTORS),
                description=f"one score per factor ({SCALE_TEXT}); when torn, the more conservative score",
            ),
            "comment": described(OPTIONAL_TEXT, "a free note"),
        },
        required=["scores"],
    )

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        for code in FACTORS:
            yield "", code, value["scores"][code]

    def estimate_dimensions(self) -> tuple[tuple[str, str], ...]:
        return (*super().estimate_dimensions(), (OVERALL, OVERALL_TITLE))

    def estimate_numbers(self, value: dict, payload: dict | None) -> dict[str, float]:
        # Six scores in every value (100k-item projects): read them directly, then S = sum / 12.
        numbers = {code: float(value["scores"][code]) for code in FACTORS}
        numbers[OVERALL] = sum(numbers.values()) / OVERALL_DIVISOR
        return numbers

    def estimate_columns(self, values: Sequence[dict], payloads: Sequence[dict | None]) -> dict[str, Any]:
        columns = {
            code: np.fromiter((value["scores"][code] for value in values), dtype=float, count=len(values))
            for code in FACTORS
        }
        columns[OVERALL] = np.asarray(sum(columns.values()) / OVERALL_DIVISOR) if values else np.zeros(0)
        return columns

    def ratings_columns(self, values: Sequence[dict], payloads: Sequence[dict | None]) -> dict[str, DimensionColumn]:
        # Six scores in every value: one pass per factor instead of a generator per value (100k-item projects).
        rows = range(len(values))
        scores = [value["scores"] for value in values]
        return {code: DimensionColumn(rows=rows, values=[s[code] for s in scores]) for code in FACTORS}

    # The paper's raters differ by one point often; two points (0 vs 2) is a real disagreement.
    default_adjudication_rules = {"unanimous": False, "ordinal_distance": 2}

    def decision_key(self, value: dict) -> tuple:
        # The six scores are the decision; a tuple compares as exactly and far faster than JSON text.
        scores = value["scores"]
        return tuple(scores[code] for code in FACTORS)

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        # The pair id and meta stay: CoPA's evaluation pairs the accepted with the top-voted response
        # by pair id and breaks results down by the meta's category.
        return {
            "id": external_id,
            "question": payload["question"],
            "response": payload["response"],
            "response_source": payload["response_source"],
            **({"pair_id": payload["pair_id"]} if "pair_id" in payload else {}),
            "profile": payload["profile"],
            **{code: gold["scores"][code] for code in FACTORS},
            **({"meta": payload["meta"]} if "meta" in payload else {}),
        }

    missing_verb = "score"

    def field_label(self, path: Sequence[str | int]) -> str:
        # The form shows the factors by name, and the scores as the whole form.
        if list(path[:1]) == ["scores"]:
            factor = path[1] if len(path) > 1 else ""
            return f"{FACTORS[factor][0]} ({factor})" if isinstance(factor, str) and factor in FACTORS else ""
        return super().field_label(path)

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        scores = without_none({code: form_int(data.get(code)) for code in FACTORS})
        return without_none({"scores": scores, "comment": data.get("comment") or None})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        chosen = (value or {}).get("scores", {})
        rows = [
            {
                "code": code,
                "name": name,
                "definition": definition,
                "profile": payload["profile"][code],
                "score": chosen.get(code),
            }
            for code, (name, definition) in FACTORS.items()
        ]
        return {"rows": rows, "scale": SCALE}

    def gold_score(self, value: dict, gold: dict) -> float:
        return sum(value["scores"][code] == gold["scores"][code] for code in FACTORS) / len(FACTORS)

    def example_payload(self) -> dict:
        return {
            "profile": {
                "CT": "Trusts answers that cite primary sources.",
                "SA": "Asks while debugging a failing build at work.",
                "SC": "Knows Python well, new to packaging.",
                "CLM": "Prefers short, stepwise answers.",
                "MS": "Likes to understand why a fix works.",
                "AMR": "Frustrated, under time pressure.",
            },
            "question": "Why does pip install the wrong version of my dependency?",
            "response": "Pin it in requirements.txt; pip's resolver picks the newest release that fits.",
            "response_source": "accepted",
        }

    def example_value(self) -> dict:
        return {"scores": {"CT": 1, "SA": 2, "SC": 2, "CLM": 2, "MS": 0, "AMR": 1}}
