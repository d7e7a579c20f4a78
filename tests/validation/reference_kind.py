"""A task kind for tests only: one free value per item, rated at all three levels of measurement.

It lets published reliability data (Krippendorff 2011, Fleiss 1971, Stata's rate.dta) go through
annotations, ratings and reports exactly as a real kind's values do.
"""

from collections.abc import Iterator
from typing import Any

from annotation.kinds.base import RatingDimension, TaskKind, object_schema


class ReferenceRating(TaskKind):
    name = "reference_rating"
    label = "Reference rating (tests)"
    payload_schema = object_schema({"text": {"type": "string"}}, required=["text"])
    value_schema = object_schema({"value": {"type": ["number", "string"]}}, required=["value"])
    rating_dimensions = (
        RatingDimension("nominal", "nominal"),
        RatingDimension("ordinal", "ordinal"),
        RatingDimension("interval", "interval"),
    )

    def value_ratings(self, value: dict, payload: dict | None) -> Iterator[tuple[str, str, Any]]:
        for dimension in self.rating_dimensions:
            if dimension.level == "nominal" or not isinstance(value["value"], str):
                yield "", dimension.name, value["value"]

    def example_payload(self) -> dict:
        return {"text": "unit"}

    def example_value(self) -> dict:
        return {"value": 1}
