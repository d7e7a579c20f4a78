"""Stack Exchange threads: a question, its answers (the asker's accepted one and the top-voted one),
and the asker's earlier questions.

One JSON object per line with ``site``, ``question_id``, ``title``, ``body_text``, ``creation_date``,
``accepted_answer_id``, ``top_voted_answer_ids``, ``answers[]`` (``answer_id``, ``body_text``, ...)
and ``asker_earlier_questions[]`` (``question_id``, ``title``, ``body_text``, ``creation_date``),
plus attribution fields (``url``, ``owner_profile_url``, ``license``, ``source``); docs/formats.md.

The asker's history is their earlier questions only: those created strictly before the target
question, oldest first, cut to the :data:`HISTORY_LIMIT` most recent (CoPA §3 and §4.1). A question
dated at or after the target, or the target itself, never enters it (no leakage).
"""

from __future__ import annotations

from annotation.errors import ErrorCollector, FieldError
from judges.generation.sources import SourceReader, SourceRecord, require

#: The user's most recent interactions a profile is built from (CoPA, paper 001, §4.1).
HISTORY_LIMIT = 50
NO_ACCEPTED = "no answer with accepted_answer_id {id} among the answers"
NOT_A_DATE = "must be an ISO date and time (e.g. 2016-08-03T07:57:21.743), got {value!r}"
ATTRIBUTION = ("site", "is_meta_site", "question_id", "url", "owner_user_id", "owner_display_name",
               "owner_profile_url", "license", "license_note", "source", "dump_snapshot_last_activity")  # fmt: skip


def _text(value) -> str:
    return " ".join(str(value or "").split())


def _date(data: dict, name: str, errors: list[FieldError], prefix: str = "") -> str | None:
    value = require(data, name, str, errors)
    if value is None:
        return None
    # ISO 8601 text compares in time order; a value that is not one cannot be ordered, so it is refused.
    if len(value) < 10 or value[4] != "-" or value[7] != "-" or not value[:4].isdigit():
        errors.append(FieldError(f"{prefix}{name}", NOT_A_DATE.format(value=value[:40])))
        return None
    return value


def _answer(data: dict, index: int, errors: list[FieldError]) -> dict | None:
    problems: list[FieldError] = []
    if not isinstance(data, dict):
        errors.append(FieldError(f"answers[{index}]", "must be an object"))
        return None
    answer_id = require(data, "answer_id", int, problems)
    body = require(data, "body_text", str, problems)
    if problems:
        errors.extend(FieldError(f"answers[{index}].{e.field}", e.message) for e in problems)
        return None
    return {
        "answer_id": answer_id,
        "body": body.strip(),
        "score": data.get("score"),
        "url": data.get("url", ""),
        "license": data.get("license", ""),
        "owner_profile_url": data.get("owner_profile_url", ""),
    }


def asker_history(earlier: list[dict], *, before: str, question_id: int) -> list[dict]:
    """The asker's questions created strictly before ``before``, oldest first, the last HISTORY_LIMIT."""
    kept = [q for q in earlier if q["creation_date"] < before and q["question_id"] != question_id]
    kept.sort(key=lambda q: (q["creation_date"], q["question_id"]))
    return kept[-HISTORY_LIMIT:]


class StackExchangeReader(SourceReader):
    name = "stackexchange"
    label = "Stack Exchange threads (.jsonl)"

    def parse(self, data: dict, *, line: int, errors: ErrorCollector) -> SourceRecord | None:
        problems: list[FieldError] = []
        site = require(data, "site", str, problems)
        question_id = require(data, "question_id", int, problems)
        title = require(data, "title", str, problems)
        body = require(data, "body_text", str, problems, empty_ok=True)
        created = _date(data, "creation_date", problems)
        accepted_id = require(data, "accepted_answer_id", int, problems)
        top_ids = require(data, "top_voted_answer_ids", list, problems, empty_ok=True)
        raw_answers = require(data, "answers", list, problems)
        raw_earlier = data.get("asker_earlier_questions") or []
        if not isinstance(raw_earlier, list):
            problems.append(FieldError("asker_earlier_questions", "must be a list"))
            raw_earlier = []
        parsed = (_answer(raw, index, problems) for index, raw in enumerate(raw_answers or []))
        answers = [answer for answer in parsed if answer is not None]
        earlier = []
        for index, question in enumerate(raw_earlier):
            found: list[FieldError] = []
            if not isinstance(question, dict):
                problems.append(FieldError(f"asker_earlier_questions[{index}]", "must be an object"))
                continue
            entry = {
                "question_id": require(question, "question_id", int, found),
                "title": require(question, "title", str, found),
                "body": (question.get("body_text") or "").strip(),
                "creation_date": _date(question, "creation_date", found),
                "url": question.get("url", ""),
                "license": question.get("license", ""),
            }
            problems.extend(FieldError(f"asker_earlier_questions[{index}].{e.field}", e.message) for e in found)
            if not found:
                earlier.append(entry)
        by_id = {a["answer_id"]: a for a in answers}
        if accepted_id is not None and raw_answers and not problems and accepted_id not in by_id:
            problems.append(FieldError("accepted_answer_id", NO_ACCEPTED.format(id=accepted_id)))
        if problems:
            errors.extend(problems, line=line)
            return None
        assert created is not None  # else _date named the problem
        top = next((by_id[i] for i in (top_ids or []) if i in by_id and i != accepted_id), None)
        thread = {
            "site": site,
            "question_id": question_id,
            "url": data.get("url", ""),
            "title": title.strip(),
            "body": body.strip(),
            "creation_date": created,
            "tags": [t for t in data.get("tags") or [] if isinstance(t, str)],
            "accepted_answer": by_id[accepted_id],
            "top_voted_answer": top,
            "other_answers": [a for a in answers if a["answer_id"] != accepted_id],
            "history": asker_history(earlier, before=created, question_id=question_id),
        }
        attribution = {name: data[name] for name in ATTRIBUTION if data.get(name) not in (None, "")}
        attribution["answers"] = [
            {"answer_id": a["answer_id"], "url": a["url"], "license": a["license"]}
            for a in (thread["accepted_answer"], top)
            if a
        ]
        return SourceRecord(
            line=line,
            source_id=f"{site}:{question_id}",
            licence=str(data.get("license") or ""),
            data=thread,
            attribution=attribution,
        )
