"""CoPA (paper 001) prompts: the factor-grounded evaluation, the evaluators it is compared with, and
the profile construction that generates items.

The evaluators CoPA compares its factor-grounded scoring with (§5.2, Table 3) are ``copa_likert``
judge prompts beside ``copa_likert_evaluation``, so a run of any of them is evaluated the same way
(``validation.evaluations``):

- *Direct* (``copa_likert_direct``): one 3-point Likert score of the response's fit to the user.
- *CoT* (``copa_likert_cot``): the same score after few-shot demonstrations and explicit reasoning.
- *Random-factor* (``copa_likert_random_factor``): six made-up factors instead of the distilled ones,
  scored with the same scale.

The paper's prompts for these (its Figures A5-A7) are not in the text we have; the templates follow
its descriptions. Direct and CoT see no factors: the user is the profile's six sentences without
their factor names. A single score is stored on every factor, so S = Σ s_k / 12 = score / 2 and the
value stays one of the kind's; its per-factor agreement means nothing, which the templates say.
"""

from __future__ import annotations

from typing import Any

from annotation.kinds.copa_likert import FACTORS, SCALE
from judges.prompting import Generator, JudgeRequest, TemplatePrompt, bullets

__all__ = [
    "FACTOR_GROUNDED",
    "PROMPTS",
    "CopaLikertEvaluation",
    "CopaLikertRandomFactor",
    "CopaLikertSingleScore",
    "CopaProfileConstruction",
    "factor_rubric",
    "likert_scale",
]

#: The made-up factors of the Random-factor template, in the order they fill CT, SA, SC, CLM, MS, AMR.
RANDOM_FACTORS = ("R1", "R2", "R3", "R4", "R5", "R6")
#: Prompt names whose six scores are the six distilled factors (a factor ablation means something).
FACTOR_GROUNDED = frozenset({"copa_likert_evaluation"})


def factor_rubric() -> str:
    return "\n".join(f"- {code} ({name}): {definition}" for code, (name, definition) in FACTORS.items())


def likert_scale() -> str:
    return "\n".join(f"- {score} = {text}" for score, text in SCALE.items())


def user_sentences(payload: dict) -> str:
    """The profile as plain sentences about the user, without the factor names."""
    return "\n".join(f"- {payload['profile'][code]}" for code in FACTORS)


class CopaLikertEvaluation(TemplatePrompt):
    kind = "copa_likert"
    title = "CoPA six-factor Likert evaluation"
    source = "CoPA (paper 001), §4.1 Evaluation Metric, Figure A4; rubric of Appendix F"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        profile = payload["profile"]
        return {
            "factors": factor_rubric(),
            "scale": likert_scale(),
            "profile": "\n".join(f"- {code} ({FACTORS[code][0]}): {profile[code]}" for code in FACTORS),
            "question": payload["question"],
            "response": payload["response"],
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return {"scores": {code: output["scores"][code] for code in FACTORS}}


class _CopaVariant(TemplatePrompt):
    kind = "copa_likert"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "scale": likert_scale(),
            "user": user_sentences(payload),
            "question": payload["question"],
            "response": payload["response"],
        }


class CopaLikertSingleScore(_CopaVariant):
    """Direct and CoT: one score for the whole response, stored on every factor."""

    def __init__(self, name: str, version: int, *, title: str, source: str) -> None:
        super().__init__(name, version)
        self.title = title
        self.source = source

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return {"scores": dict.fromkeys(FACTORS, output["score"])}


class CopaLikertRandomFactor(_CopaVariant):
    title = "CoPA evaluator: random factors (Table 3 baseline)"
    source = "CoPA (paper 001), §5.2 method (4): scoring with randomly generated factors"

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return {"scores": {code: output["scores"][r] for code, r in zip(FACTORS, RANDOM_FACTORS, strict=True)}}


class CopaProfileConstruction(Generator):
    kind = "copa_likert"
    title = "CoPA six-factor profile construction"
    source = "CoPA (paper 001), §4.1 User Profile Construction (50 recent interactions)"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        history = [
            f"Q: {h['question']}" + (f" | Accepted answer: {h['accepted_answer']}" if h.get("accepted_answer") else "")
            for h in payload["history"][-50:]
        ]
        return {"history": bullets(history), "factors": factor_rubric()}


#: The factor-grounded evaluation first: it is the kind's default judge prompt.
PROMPTS = [
    CopaLikertEvaluation("copa_likert_evaluation", 1),
    CopaLikertSingleScore(
        "copa_likert_direct",
        1,
        title="CoPA evaluator: Direct 3-point Likert (Table 3 baseline)",
        source="CoPA (paper 001), §5.2 method (1): direct LLM-as-a-Judge scoring",
    ),
    CopaLikertSingleScore(
        "copa_likert_cot",
        1,
        title="CoPA evaluator: CoT with few-shot demonstrations (Table 3 baseline)",
        source="CoPA (paper 001), §5.2 method (2): few-shot demonstrations and explicit reasoning",
    ),
    CopaLikertRandomFactor("copa_likert_random_factor", 1),
    CopaProfileConstruction("copa_profile_construction", 1),
]
