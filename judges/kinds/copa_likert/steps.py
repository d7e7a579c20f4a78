"""copa_profile: a thread → two ``copa_likert`` items, the accepted and the top-voted answer scored
against one six-factor profile built by the model from the asker's history.

CoPA (paper 001), §4.1 user profile construction. The two items share a ``pair_id`` and say which
response they carry (``response_source``: ``accepted`` or ``top-voted``). ``profile_from`` chooses
the history: ``preceding`` (the asker's earlier questions only; CoPA Table 3) or ``current`` (the
same, then the target question itself, without its answers; Table A4).
"""

from __future__ import annotations

from annotation.errors import FieldError
from annotation.kinds.copa_likert import FACTORS
from judges.generation.sources import SourceRecord
from judges.generation.sources.stackexchange import StackExchangeReader
from judges.generation.steps import Step, StepDemo, StepInputInvalid, StepOption, earlier_question_line, question_text

ACCEPTED, TOP_VOTED = "accepted", "top-voted"
PRECEDING, CURRENT = "preceding", "current"
NO_TOP_VOTED = "no top-voted answer besides the accepted one: the step needs both"
EMPTY_ANSWER = "the {which} answer has no text"


class CopaProfile(Step):
    name = "copa_profile"
    label = "CoPA profile + accepted / top-voted pair (copa_likert items)"
    reader = StackExchangeReader
    prompt_name = "copa_profile_construction"
    declared_options = (
        StepOption(
            "profile_from",
            "Profile from",
            (
                (PRECEDING, "preceding: questions before the target (CoPA Table 3)"),
                (CURRENT, "current: and the target question itself (Table A4)"),
            ),
            help="history before the question (preceding) or including it (current)",
        ),
    )
    source = "CoPA (paper 001), §4.1 user profile construction; Tables 3 and A4"
    demo = StepDemo("generated-copa", "stackexchange_threads.jsonl", {"profile_from": PRECEDING})

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        thread = record.data
        top = thread["top_voted_answer"]
        problems = []
        if top is None:
            problems.append(FieldError("top_voted_answer_ids", NO_TOP_VOTED))
        elif not top["body"]:
            problems.append(FieldError("top_voted_answer_ids", EMPTY_ANSWER.format(which="top-voted")))
        if not thread["accepted_answer"]["body"]:
            problems.append(FieldError("accepted_answer_id", EMPTY_ANSWER.format(which="accepted")))
        if problems:
            raise StepInputInvalid(problems)
        history = [{"question": earlier_question_line(q)} for q in thread["history"]]
        if options["profile_from"] == CURRENT:
            history.append({"question": earlier_question_line(thread)})
        return {
            "history": history,
            "question": question_text(thread),
            "accepted": thread["accepted_answer"]["body"],
            "top_voted": top["body"],
            "tags": thread["tags"][:3],
            "pair_id": record.source_id if options["profile_from"] == PRECEDING else f"{record.source_id}:current",
        }

    def external_ids(self, source_id: str, options: dict[str, str]) -> list[str]:
        base = source_id if options["profile_from"] == PRECEDING else f"{source_id}:current"
        return [f"{base}:{ACCEPTED}", f"{base}:{TOP_VOTED}"]

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        profile = {code: output["profile"][code] for code in FACTORS}
        return [
            {
                "profile": profile,
                "question": data["question"],
                "response": data[field],
                "response_source": source,
                "pair_id": data["pair_id"],
            }
            for source, field in ((ACCEPTED, "accepted"), (TOP_VOTED, "top_voted"))
        ]

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """The history's own words per factor: how much there is and what it was about; nothing inferred."""
        count = len(data["history"])
        about = f" about {', '.join(data['tags'])}" if data["tags"] else ""
        latest = f"; most recent: “{data['history'][-1]['question'][:120]}”" if count else ""
        seen = f"{count} question{'s' if count != 1 else ''} in the history{about}{latest}"
        return {
            "profile": {code: f"Baseline (no LLM), {name} not inferred: {seen}." for code, (name, _) in FACTORS.items()}
        }


STEPS = (CopaProfile,)
