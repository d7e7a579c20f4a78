"""A label set of the project's own design: one or several questions, each answered with labels.

The design (docs/formats.md, "Designs") names the item fields shown and the questions, each a list
of labels (a value stored, a text shown), answered with one label or, where ``multiple`` is set,
several. An MT-Bench verdict (model A / model B / tie), a yes/no framing check or four aspects each
Positive / Negative / unknown are designs of this kind. Agreement is measured per question (nominal),
and per label of a several-label question (chosen or not).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.errors import FieldError
from annotation.kinds.base import OPTIONAL_TEXT, RatingDimension, described, object_schema, without_none
from annotation.kinds.designs import (
    DESCRIPTION,
    FIELDS,
    JUDGE_PROMPT,
    NAME,
    TITLE,
    DesignedKind,
    entry_title,
    repeated_names,
)

MAX_QUESTIONS = 20
#: Labels per question, at most: the number keys 1-9 and 0 choose them.
MAX_LABELS = 10
LABEL_VALUE = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    "description": "a label's value (what is stored): letters, digits, _ . -, at most 64 characters",
}
LABEL = object_schema(
    {
        "value": LABEL_VALUE,
        "text": {"type": "string", "minLength": 1, "maxLength": 200, "description": "what the form shows"},
    },
    required=["value", "text"],
)
QUESTION = object_schema(
    {
        "name": NAME,
        "title": TITLE,
        "description": DESCRIPTION,
        "labels": {
            "type": "array",
            "minItems": 2,
            "maxItems": MAX_LABELS,
            "items": LABEL,
            "description": f"the labels offered, in order (2 to {MAX_LABELS}; keys 1-9 and 0)",
        },
        "multiple": {"type": "boolean", "description": "true: a rater may choose several labels (a list is stored)"},
        "required": {"type": "boolean", "description": "false lets a rater leave the question unanswered"},
    },
    required=["name", "labels"],
)
DESIGN_SCHEMA = object_schema(
    {
        "fields": FIELDS,
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_QUESTIONS,
            "items": QUESTION,
            "description": f"the questions asked, in order (1 to {MAX_QUESTIONS})",
        },
        "comment": {"type": "boolean", "description": "whether the form has a free comment box"},
        "judge_prompt": JUDGE_PROMPT,
    },
    required=["fields", "questions"],
)
#: Where a several-label question's label is rated (chosen 1 or not 0): ``<question>.<label>``.
LABEL_DIMENSION = "{question}.{label}"

#: The registered kind's design: an MT-Bench pairwise verdict over a question and two answers.
EXAMPLE_DESIGN: dict = {
    "fields": [
        {"name": "question", "title": "Question"},
        {"name": "answer_a", "title": "Answer A"},
        {"name": "answer_b", "title": "Answer B"},
    ],
    "questions": [
        {
            "name": "verdict",
            "title": "Which answer is better?",
            "labels": [
                {"value": "model_a", "text": "Answer A is better"},
                {"value": "model_b", "text": "Answer B is better"},
                {"value": "tie", "text": "Tie"},
            ],
        }
    ],
    "comment": True,
}


def _answer_schema(question: dict) -> dict:
    values = [label["value"] for label in question["labels"]]
    title = entry_title(question)
    if question.get("multiple"):
        least = 1 if question.get("required", True) else 0
        spec = {"type": "array", "items": {"enum": values}, "uniqueItems": True, "minItems": least}
        return described(spec, f"{title}: a list of labels among {', '.join(values)}")
    return described({"enum": values}, f"{title}: one of {', '.join(values)}")


class LabelSet(DesignedKind):
    name = "categorical"
    label = "Label set (your own questions and labels)"
    description = "Answer the questions your design declares, each with one label or several."
    design_schema = DESIGN_SCHEMA
    design = EXAMPLE_DESIGN
    answers_key = "labels"
    value_rules_need_payload = False
    shortcut_help = "Number keys choose a label of the focused question; Enter submits when all are answered."

    @classmethod
    def design_attributes(cls, design: dict) -> dict[str, Any]:
        questions = design["questions"]
        answers = {q["name"]: _answer_schema(q) for q in questions}
        required = [q["name"] for q in questions if q.get("required", True)]
        comment = {"comment": described(OPTIONAL_TEXT, "a free note")} if design.get("comment") else {}
        dimensions: list[RatingDimension] = []
        for q in questions:
            labels = q["labels"]
            if not q.get("multiple"):
                values = tuple(label["value"] for label in labels)
                dimensions.append(
                    RatingDimension(q["name"], "nominal", entry_title(q), values, tuple(lb["text"] for lb in labels))
                )
                continue
            dimensions += [
                RatingDimension(
                    LABEL_DIMENSION.format(question=q["name"], label=label["value"]),
                    "nominal",
                    f"{entry_title(q)}: {label['text']}",
                    (0, 1),
                    ("not chosen", "chosen"),
                )
                for label in labels
            ]
        return {
            **cls.shared_attributes(design),
            "value_schema": object_schema(
                {
                    "labels": object_schema(answers, required=required, description="the labels chosen per question"),
                    **comment,
                },
                required=["labels"],
            ),
            "rating_dimensions": tuple(dimensions),
            "field_words": {q["name"]: entry_title(q) for q in questions},
            "default_adjudication_rules": {"unanimous": True},
        }

    @classmethod
    def design_rules(cls, design: dict) -> Iterator[FieldError]:
        yield from super().design_rules(design)
        yield from repeated_names(design["questions"], path="questions")
        for index, question in enumerate(design["questions"]):
            yield from repeated_names(question["labels"], path=f"questions[{index}].labels", key="value")

    def judge_questions(self) -> str:
        lines = []
        for q in self.design["questions"]:
            labels = "; ".join(f"{label['value']} = {label['text']}" for label in q["labels"])
            shape = "a list of one or more of" if q.get("multiple") else "one of"
            optional = "" if q.get("required", True) else " (may be left out)"
            description = f". {q['description']}" if q.get("description") else ""
            lines.append(f"- labels.{q['name']} ({entry_title(q)}): {shape} {labels}{optional}{description}")
        return "\n".join(lines)

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        answers = value["labels"]
        for question in self.design["questions"]:
            name = question["name"]
            if name not in answers:
                continue
            if not question.get("multiple"):
                yield "", name, answers[name]
                continue
            chosen = set(answers[name])
            for label in question["labels"]:
                yield "", LABEL_DIMENSION.format(question=name, label=label["value"]), int(label["value"] in chosen)

    def estimate_dimensions(self) -> tuple[tuple[str, str], ...]:
        # The share of each label: of a one-label question, how often it is the label given.
        shares: list[tuple[str, str]] = []
        for question in self.design["questions"]:
            for label in question["labels"]:
                name = LABEL_DIMENSION.format(question=question["name"], label=label["value"])
                shares.append((name, f"{entry_title(question)}: {label['text']} (share)"))
        return tuple(shares)

    def estimate_numbers(self, value: dict, payload: dict | None) -> dict[str, float]:
        numbers: dict[str, float] = {}
        answers = value["labels"]
        for question in self.design["questions"]:
            name = question["name"]
            if name not in answers:
                continue
            given = answers[name]
            chosen = set(given) if isinstance(given, list) else {given}
            for label in question["labels"]:
                numbers[LABEL_DIMENSION.format(question=name, label=label["value"])] = float(label["value"] in chosen)
        return numbers

    def decision_key(self, value: dict) -> tuple:
        # The labels are the decision; a several-label answer counts as a set (the order chosen is no decision).
        answers = value["labels"]
        return tuple(
            tuple(sorted(answers[q["name"]])) if isinstance(answers.get(q["name"]), list) else answers.get(q["name"])
            for q in self.design["questions"]
        )

    def gold_score(self, value: dict, gold: dict) -> float:
        names = [q["name"] for q in self.design["questions"]]
        same = sum(_as_set(value["labels"].get(n)) == _as_set(gold["labels"].get(n)) for n in names)
        return same / len(names)

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        answers: dict[str, Any] = {}
        for question in self.design["questions"]:
            field = f"label-{question['name']}"
            if question.get("multiple"):
                chosen = data.getlist(field) if hasattr(data, "getlist") else data.get(field)
                if chosen:
                    answers[question["name"]] = list(chosen)
            elif data.get(field):
                answers[question["name"]] = data.get(field)
        comment = self.form_comment(data)
        return without_none({"labels": answers, "comment": comment})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        chosen = (value or {}).get("labels", {})
        rows = []
        for question in self.design["questions"]:
            given = _as_set(chosen.get(question["name"]))
            labels = [
                {
                    "value": label["value"],
                    "text": label["text"],
                    "key": str((n + 1) % 10),
                    "chosen": label["value"] in given,
                }
                for n, label in enumerate(question["labels"])
            ]
            rows.append(
                {
                    "name": question["name"],
                    "title": entry_title(question),
                    "description": question.get("description", ""),
                    "labels": labels,
                    "multiple": bool(question.get("multiple")),
                    "required": question.get("required", True),
                }
            )
        return {"fields": self.shown_fields(payload), "rows": rows, "comment": bool(self.design.get("comment"))}

    def example_refused_design(self) -> dict:
        question = dict(self.design["questions"][0])
        question["labels"] = [*question["labels"], {"value": question["labels"][0]["value"], "text": "Both"}]
        return {**self.design, "questions": [question, {"name": question["name"], "labels": question["labels"][:2]}]}

    def example_value(self) -> dict:
        answers = {
            q["name"]: [q["labels"][0]["value"]] if q.get("multiple") else q["labels"][0]["value"]
            for q in self.design["questions"]
        }
        return {"labels": answers}


def _as_set(given: Any) -> frozenset:
    if given is None:
        return frozenset()
    return frozenset(given) if isinstance(given, list) else frozenset([given])
