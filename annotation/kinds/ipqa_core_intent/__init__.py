"""IPQA core-intent verification (paper 000).

An annotator reads the user's question, narrative and the answer they selected, then judges each
LLM-proposed intent twice: is it *expressed* in question + narrative, and is it *core* — addressed
by the selected answer (users satisfice: the answer they chose shows which intents they put first).
"""

from collections.abc import Iterator, Sequence
from typing import Any

from annotation.errors import FieldError
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

EARLIER_QUESTION = object_schema(
    {
        "question": described(TEXT, "an earlier question"),
        "narrative": described(OPTIONAL_TEXT, "its narrative"),
        "selected_answer": described(OPTIONAL_TEXT, "the answer the user selected for it"),
        "meta": META,
    },
    required=["question"],
)

INTENT_JUDGEMENT = object_schema(
    {
        "intent": described(TEXT, "the candidate intent, exactly as in `candidate_intents`"),
        "expressed": {
            "type": "boolean",
            "description": "the user states this intent in the question or narrative",
        },
        "core": {"type": "boolean", "description": "the selected answer addresses this intent (only if expressed)"},
    },
    required=["intent", "expressed", "core"],
)

FORM_ANSWERS = {"yes": True, "no": False}
CORE_NEEDS_EXPRESSED = "an intent can be core only if it is expressed"
JUDGE_EVERY_INTENT = "judge every candidate intent exactly once"
YES_NO = ((0, 1), ("no", "yes"))

#: The demo project's guidelines (Markdown).
DEMO_GUIDELINES = """\
# IPQA: core-intent verification

Read the user's question, the narrative around it and the answer the user **selected**. The
user's earlier questions are shown for context.

For each candidate intent, decide two things:

1. **Expressed**: does the user state this intent in the question or the narrative? Judge only
   what is written, not what the user might also want.
2. **Core**: does the selected answer address this intent? An intent can be core only if it is
   expressed.

A *core intent* is an intent the user expressed that the selected answer addresses. Users
satisfice: the answer they chose shows which of their intents they put first.

If the user expressed an intent that no candidate covers, write it under *missing intent*.
"""


class IpqaCoreIntent(TaskKind):
    name = "ipqa_core_intent"
    label = "IPQA core-intent verification"
    description = (
        "Per candidate intent: is it expressed in the question and narrative, and does the "
        "selected answer address it (core)?"
    )
    # The unit is (item, candidate intent); each intent is judged on both labels, as in IPQA's validation.
    rating_dimensions = (
        RatingDimension("expressed", "nominal", "Expressed", *YES_NO),
        RatingDimension("core", "nominal", "Core", *YES_NO),
    )
    demo_project = {
        **{
            "slug": "demo-ipqa",
            "title": "Demo: IPQA core intents (Stack Exchange)",
            "overlap": 2,
            "suggestion_exposure": "shown",
            "seed": 7,
        },
        "guidelines": DEMO_GUIDELINES,
    }
    payload_schema = object_schema(
        {
            "question": described(TEXT, "the user's question (the target question)"),
            "narrative": described(OPTIONAL_TEXT, "the narrative the user wrote with the question"),
            "selected_answer": described(TEXT, "the answer the user selected"),
            "candidate_intents": {
                "type": "array",
                "items": TEXT,
                "minItems": 1,
                "uniqueItems": True,
                "description": "the intents an LLM proposed; the annotator judges each one",
            },
            "user_profile": {
                "type": "array",
                "items": EARLIER_QUESTION,
                "description": "the user's earlier questions, oldest first, shown as context",
            },
            "meta": META,
        },
        required=["question", "selected_answer", "candidate_intents"],
    )
    # Blinding. The annotator needs the whole thread as the user wrote it (question, narrative, the
    # selected answer, earlier questions): IPQA's core intents are defined by the selected answer, so
    # it is shown on purpose. Only provenance stays with researchers.
    rater_fields = (
        "question",
        "narrative",
        "selected_answer",
        "candidate_intents",
        "user_profile[].question",
        "user_profile[].narrative",
        "user_profile[].selected_answer",
    )
    hidden_fields = {
        "meta": "provenance (source post, licence, which candidates were written for the demo): not part of "
        "the judgement, and it can name how candidates were made",
        "user_profile[].meta": "provenance of each earlier question: not part of the judgement",
    }
    value_schema = object_schema(
        {
            "intents": {
                "type": "array",
                "items": INTENT_JUDGEMENT,
                "minItems": 1,
                "description": "one judgement per candidate intent, each candidate exactly once",
            },
            "missing_intent": described(OPTIONAL_TEXT, "an intent the user expressed that no candidate covers"),
            "comment": described(OPTIONAL_TEXT, "a free note"),
        },
        required=["intents"],
    )
    value_rule_notes = (JUDGE_EVERY_INTENT, CORE_NEEDS_EXPRESSED)

    value_rules_payload_keys = ("candidate_intents",)

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        judged = [j["intent"] for j in value["intents"]]
        candidates = payload["candidate_intents"]
        if sorted(judged) != sorted(candidates):
            missing = [c for c in candidates if c not in judged]
            extra = [j for j in judged if j not in candidates or judged.count(j) > 1]
            detail = "; ".join(
                part
                for part in (
                    f"not judged: {missing}" if missing else "",
                    f"unknown or repeated: {sorted(set(extra))}" if extra else "",
                )
                if part
            )
            yield FieldError("intents", f"{JUDGE_EVERY_INTENT} ({detail})")
        for index, judgement in enumerate(value["intents"]):
            if judgement["core"] and not judgement["expressed"]:
                yield FieldError(f"intents[{index}].core", CORE_NEEDS_EXPRESSED)

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        for judgement in value["intents"]:
            # 0/1, not booleans: agreement code refuses booleans so True never merges with 1.
            yield judgement["intent"], "expressed", int(judgement["expressed"])
            yield judgement["intent"], "core", int(judgement["core"])

    free_text_fields = ("comment", "missing_intent")

    def benchmark_record(self, *, external_id: str, payload: dict, gold: dict) -> dict:
        judged = gold["intents"]
        return {
            "id": external_id,
            "question": payload["question"],
            "narrative": payload.get("narrative", ""),
            "selected_answer": payload["selected_answer"],
            "user_profile": payload.get("user_profile", []),
            "expressed_intents": [j["intent"] for j in judged if j["expressed"]],
            "core_intents": [j["intent"] for j in judged if j["core"]],
        }

    field_words = {"expressed": "Expressed", "core": "Core", "missing_intent": "Missing intent"}

    def field_label(self, path: Sequence[str | int]) -> str:
        # Candidate intents are numbered on the form from 1; their two questions are named in the message.
        if list(path[:1]) == ["intents"]:
            if len(path) < 2 or not isinstance(path[1], int):
                return ""
            return ", ".join([f"Intent {path[1] + 1}", *(self.field_words.get(str(p), str(p)) for p in path[2:])])
        return super().field_label(path)

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        intents = []
        for index, intent in enumerate(payload.get("candidate_intents", [])):
            expressed = FORM_ANSWERS.get(data.get(f"expressed-{index}", ""))
            core = FORM_ANSWERS.get(data.get(f"core-{index}", ""))
            if expressed is False and core is None:
                core = False  # not expressed means not core: the form locks that question
            intents.append(without_none({"intent": intent, "expressed": expressed, "core": core}))
        extra = {name: data.get(name) or None for name in ("missing_intent", "comment")}
        return without_none({"intents": intents, **extra})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        judged = {j.get("intent"): j for j in (value or {}).get("intents", [])}
        rows = [
            {
                "index": i,
                "intent": intent,
                "expressed": judged.get(intent, {}).get("expressed"),
                "core": judged.get(intent, {}).get("core"),
            }
            for i, intent in enumerate(payload["candidate_intents"])
        ]
        return {"rows": rows}

    def gold_score(self, value: dict, gold: dict) -> float:
        truth = {j["intent"]: j for j in gold["intents"]}
        pairs = [(j[q], truth[j["intent"]][q]) for j in value["intents"] for q in ("expressed", "core")]
        return sum(a == b for a, b in pairs) / len(pairs)

    def example_payload(self) -> dict:
        return {
            "question": "How do I keep my sourdough starter alive while travelling for two weeks?",
            "narrative": "I bake every weekend and I'm away in June; nobody can feed it for me.",
            "selected_answer": "Dry some starter on parchment; flakes keep for months and revive in a day.",
            "candidate_intents": [
                "To preserve the starter without feeding",
                "To find someone to feed the starter",
            ],
            "user_profile": [{"question": "Why is my bread dense?", "selected_answer": "Proof longer."}],
        }

    def example_value(self) -> dict:
        return {
            "intents": [
                {"intent": "To preserve the starter without feeding", "expressed": True, "core": True},
                {"intent": "To find someone to feed the starter", "expressed": True, "core": False},
            ],
            "missing_intent": "",
        }
