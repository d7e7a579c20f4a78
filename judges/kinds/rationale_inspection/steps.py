"""copa_rationale: a thread → a ``rationale_inspection`` item with the model's rationale for the
accepted answer (reasons, theories, explanations; a global explanation; the factors involved).

CoPA (paper 001), §3 rationale extraction, sampled at temperature 0.7 as in the paper. The context is
the question, the accepted answer, the other answers and the asker's earlier questions.
"""

from __future__ import annotations

from annotation.errors import FieldError
from annotation.kinds.copa_likert import FACTORS
from judges.baselines import jaccard
from judges.generation.sources import SourceRecord
from judges.generation.sources.stackexchange import StackExchangeReader
from judges.generation.steps import Step, StepDemo, StepInputInvalid, earlier_question_line, question_text

EMPTY_ANSWER = "the accepted answer has no text"


class CopaRationale(Step):
    name = "copa_rationale"
    label = "CoPA rationales of the accepted answer (rationale_inspection items)"
    reader = StackExchangeReader
    prompt_name = "copa_rationale_extraction"
    default_temperature = 0.7  # CoPA §3
    source = "CoPA (paper 001), §3 rationale extraction, Figure A1"
    demo = StepDemo("generated-rationales", "stackexchange_threads.jsonl")

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        thread = record.data
        if not thread["accepted_answer"]["body"]:
            raise StepInputInvalid([FieldError("accepted_answer_id", EMPTY_ANSWER)])
        return {
            "question": question_text(thread),
            "accepted_answer": thread["accepted_answer"]["body"],
            "other_answers": [a["body"] for a in thread["other_answers"] if a["body"]],
            "history": [earlier_question_line(q) for q in thread["history"]],
        }

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        context = {"question": data["question"], "accepted_answer": data["accepted_answer"]}
        if data["other_answers"]:
            context["other_answers"] = data["other_answers"]
        if data["history"]:
            context["history"] = data["history"]
        factors = {code: FACTORS[code][0] for code in dict.fromkeys(output["factors"])}
        rationale = {
            "rationales": output["rationales"],
            "global_explanation": output["global_explanation"],
            "factors": factors,
        }
        return [{"context": context, "rationale": rationale}]

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """Lexical overlap with the question (Jaccard), the CoPA baselines' measure; no theory is claimed."""
        accepted = jaccard(data["question"], data["accepted_answer"])
        other = max((jaccard(data["question"], a) for a in data["other_answers"]), default=0.0)
        closer = "more" if accepted > other else "less" if accepted < other else "as much"
        explanation = (
            f"Word overlap (Jaccard) with the question: accepted answer {accepted:.2f}, "
            f"closest other answer {other:.2f}."
        )
        return {
            "rationales": [
                {
                    "reason": f"The accepted answer shares {closer} wording with the question",
                    "theory": "None: lexical-overlap baseline, not a theory",
                    "explanation": explanation,
                }
            ],
            "global_explanation": f"Baseline (no LLM): {explanation}",
            "factors": ["SA"],
        }


STEPS = (CopaRationale,)
