"""CoPA (paper 001) rationales: the inspection verdict (a judge) and rationale extraction (a generator)."""

from __future__ import annotations

from typing import Any

from annotation.kinds.rationale_inspection import FAIL, FAILURE_CATEGORIES, PASS
from judges.kinds.copa_likert.prompts import factor_rubric
from judges.prompting import Generator, JudgeRequest, TemplatePrompt, bullets

__all__ = ["PROMPTS", "CopaRationaleExtraction", "RationaleInspectionVerdict"]


class RationaleInspectionVerdict(TemplatePrompt):
    kind = "rationale_inspection"
    title = "CoPA rationale inspection verdict"
    source = "CoPA (paper 001), Appendix B.1 manual inspection criteria"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        context, rationale = payload["context"], payload["rationale"]
        return {
            "history": bullets(context.get("history", [])),
            "question": context["question"],
            "accepted_answer": context["accepted_answer"],
            "other_answers": bullets(context.get("other_answers", [])),
            "rationales": "\n".join(
                f"{n}. Reason: {r['reason']} | Theory: {r['theory']} | Explanation: {r['explanation']}"
                for n, r in enumerate(rationale["rationales"], start=1)
            ),
            "global_explanation": rationale["global_explanation"],
            "factors": ", ".join(f"{k}: {v}" if v else k for k, v in rationale.get("factors", {}).items()) or "(none)",
            "categories": "\n".join(f"- {code}: {text}" for code, text in FAILURE_CATEGORIES.items()),
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        verdict = PASS if output["verdict"] == "pass" else FAIL
        value = {"verdict": verdict, "failure_categories": output["failure_categories"]}
        if output["note"]:
            value["note"] = output["note"]
        return value


class CopaRationaleExtraction(Generator):
    kind = "rationale_inspection"
    title = "CoPA rationale extraction"
    source = "CoPA (paper 001), §3 Rationale extraction, Figure A1; Tables A1-A3"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "history": bullets(payload.get("history", [])[-50:]),
            "question": payload["question"],
            "accepted_answer": payload["accepted_answer"],
            "other_answers": bullets(payload.get("other_answers", [])),
            "factors": factor_rubric(),
        }


PROMPTS = [
    RationaleInspectionVerdict("rationale_inspection_verdict", 1),
    CopaRationaleExtraction("copa_rationale_extraction", 1),
]
