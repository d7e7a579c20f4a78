"""A rating scale of the project's own design: named dimensions, each a whole-number scale.

The design (docs/formats.md, "Designs") names the item fields shown and the dimensions rated, each
an integer scale ``min..max`` with texts for some points, a level (ordinal, the default, or interval)
and whether a rater may leave it out. SummEval's four 1-5 dimensions, a 0-6 lesion grade or a 0-2
fit score beside a 1-6 one are all designs of this kind. Agreement is measured per dimension at its
declared level.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.errors import FieldError
from annotation.kinds.base import OPTIONAL_TEXT, RatingDimension, described, form_int, object_schema, without_none
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

MAX_DIMENSIONS = 30
#: A scale's points, at most: digit keys choose a point, so a scale fits the ten digits and one more (0-10).
MAX_POINTS = 11
SCALE_END = {"type": "integer", "minimum": -100, "maximum": 100}
MAX_NOT_ABOVE_MIN = "must be greater than min"
TOO_MANY_POINTS = f"a scale has at most {MAX_POINTS} points from min to max"
NOT_A_POINT = "not a point of the scale {low} to {high}"
LEVELS = ("ordinal", "interval")

DIMENSION = object_schema(
    {
        "name": NAME,
        "title": TITLE,
        "description": DESCRIPTION,
        "min": described(SCALE_END, "the lowest point, a whole number"),
        "max": described(SCALE_END, "the highest point, greater than min"),
        "points": {
            "type": "object",
            "propertyNames": {"pattern": r"^-?[0-9]{1,3}$"},
            "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 200},
            "description": 'texts of some points, by the point as a string: {"1": "incoherent", "5": "coherent"}',
        },
        "level": {"enum": list(LEVELS), "description": "`ordinal` (the default) or `interval`"},
        "required": {"type": "boolean", "description": "false lets a rater leave the dimension unanswered"},
    },
    required=["name", "min", "max"],
)
DESIGN_SCHEMA = object_schema(
    {
        "fields": FIELDS,
        "dimensions": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_DIMENSIONS,
            "items": DIMENSION,
            "description": f"the dimensions rated, in order (1 to {MAX_DIMENSIONS})",
        },
        "comment": {"type": "boolean", "description": "whether the form has a free comment box"},
        "judge_prompt": JUDGE_PROMPT,
    },
    required=["fields", "dimensions"],
)

#: The registered kind's design: SummEval's four dimensions, 1 to 5, over a source text and its summary.
EXAMPLE_DESIGN: dict = {
    "fields": [{"name": "source", "title": "Source text"}, {"name": "summary", "title": "Summary"}],
    "dimensions": [
        {
            "name": name,
            "min": 1,
            "max": 5,
            "points": {"1": low, "5": high},
            "description": description,
        }
        for name, low, high, description in (
            ("coherence", "incoherent", "fully coherent", "Is the summary well structured and organised?"),
            ("consistency", "contradicts the source", "fully supported", "Is every fact in it backed by the source?"),
            ("fluency", "unreadable", "fluent", "Are its sentences grammatical and natural?"),
            ("relevance", "off the point", "only what matters", "Does it keep the source's important content?"),
        )
    ],
    "comment": True,
}


def scale(dimension: dict) -> list[tuple[int, str]]:
    """A dimension's points in order, each with its text ('' where the design gives none)."""
    points = dimension.get("points") or {}
    return [(point, points.get(str(point), "")) for point in range(dimension["min"], dimension["max"] + 1)]


class RatingScale(DesignedKind):
    name = "rating"
    label = "Rating scale (your own dimensions)"
    description = "Rate each item on the dimensions your design declares, each a whole-number scale."
    design_schema = DESIGN_SCHEMA
    design = EXAMPLE_DESIGN
    answers_key = "ratings"
    value_rules_need_payload = False
    missing_verb = "rate"
    shortcut_help = "Digits rate the focused dimension and move to the next; Enter submits when all are rated."

    @classmethod
    def design_attributes(cls, design: dict) -> dict[str, Any]:
        dimensions = design["dimensions"]
        ratings = {
            d["name"]: described(
                {"type": "integer", "minimum": d["min"], "maximum": d["max"]},
                f"{entry_title(d)}: a whole number from {d['min']} to {d['max']}",
            )
            for d in dimensions
        }
        required = [d["name"] for d in dimensions if d.get("required", True)]
        comment = {"comment": described(OPTIONAL_TEXT, "a free note")} if design.get("comment") else {}
        return {
            **cls.shared_attributes(design),
            "value_schema": object_schema(
                {
                    "ratings": object_schema(ratings, required=required, description="one point per dimension"),
                    **comment,
                },
                required=["ratings"],
            ),
            "rating_dimensions": tuple(
                RatingDimension(
                    d["name"],
                    d.get("level", "ordinal"),
                    entry_title(d),
                    tuple(point for point, _ in scale(d)),
                    tuple(text or str(point) for point, text in scale(d)),
                )
                for d in dimensions
            ),
            # Every rating a number at a fixed path: the database reads them (when none may be left out).
            "rating_paths": {d["name"]: ("ratings", d["name"]) for d in dimensions}
            if len(required) == len(dimensions)
            else {},
            "field_words": {d["name"]: entry_title(d) for d in dimensions},
            # Half the widest scale apart is a real disagreement; neighbouring points are not.
            "default_adjudication_rules": {
                "unanimous": False,
                "ordinal_distance": max(1, max(d["max"] - d["min"] for d in dimensions) // 2),
            },
        }

    @classmethod
    def design_rules(cls, design: dict) -> Iterator[FieldError]:
        yield from super().design_rules(design)
        yield from repeated_names(design["dimensions"], path="dimensions")
        for index, dimension in enumerate(design["dimensions"]):
            low, high = dimension["min"], dimension["max"]
            if high <= low:
                yield FieldError(f"dimensions[{index}].max", MAX_NOT_ABOVE_MIN)
                continue
            if high - low + 1 > MAX_POINTS:
                yield FieldError(f"dimensions[{index}].max", TOO_MANY_POINTS)
            for point in dimension.get("points") or {}:
                if not low <= int(point) <= high:
                    yield FieldError(f"dimensions[{index}].points.{point}", NOT_A_POINT.format(low=low, high=high))

    def judge_questions(self) -> str:
        lines = []
        for d in self.design["dimensions"]:
            texts = ", ".join(f"{point} = {text}" for point, text in scale(d) if text)
            optional = "" if d.get("required", True) else " (may be left out)"
            lines.append(
                f"- ratings.{d['name']} ({entry_title(d)}): a whole number from {d['min']} to {d['max']}{optional}"
                + (f"; {texts}" if texts else "")
                + (f". {d['description']}" if d.get("description") else "")
            )
        return "\n".join(lines)

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        ratings = value["ratings"]
        for dimension in self.rating_dimensions:
            if dimension.name in ratings:
                yield "", dimension.name, ratings[dimension.name]

    def gold_score(self, value: dict, gold: dict) -> float:
        names = [d.name for d in self.rating_dimensions]
        return sum(value["ratings"].get(n) == gold["ratings"].get(n) for n in names) / len(names)

    def value_from_form(self, data: Any, *, payload: dict, presentation: dict | None = None) -> dict:
        ratings = without_none({d.name: form_int(data.get(f"rating-{d.name}")) for d in self.rating_dimensions})
        comment = self.form_comment(data)
        return without_none({"ratings": ratings, "comment": comment})

    def form_context(
        self, *, payload: dict, value: dict | None, peers: list[dict], presentation: dict | None = None
    ) -> dict:
        chosen = (value or {}).get("ratings", {})
        rows = [
            {
                "name": d["name"],
                "title": entry_title(d),
                "description": d.get("description", ""),
                "scale": dict(scale(d)),
                "rating": chosen.get(d["name"]),
                "required": d.get("required", True),
                "low": d["min"],
                "high": d["max"],
            }
            for d in self.design["dimensions"]
        ]
        return {"fields": self.shown_fields(payload), "rows": rows, "comment": bool(self.design.get("comment"))}

    def example_refused_design(self) -> dict:
        dimensions = [dict(d) for d in self.design["dimensions"]]
        dimensions[-1].update(min=5, max=1)  # the scale upside down
        dimensions[0]["points"] = {"7": "perfect"}
        return {**self.design, "dimensions": dimensions}

    def example_value(self) -> dict:
        ratings = {d["name"]: (d["min"] + d["max"] + 1) // 2 for d in self.design["dimensions"]}
        return {"ratings": ratings}
