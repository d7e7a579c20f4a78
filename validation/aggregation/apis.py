"""``GET /api/projects/{slug}/aggregate/``: the aggregation with its page's parameters in the query string."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from validation.aggregation.build import NAME
from validation.aggregation.methods import METHODS
from validation.apis import EVALUATION_FORMATS, EvaluationApi

__all__ = ["AggregateApi"]


class AggregateApi(EvaluationApi):
    """The ``aggregate`` evaluation under its own address (the same as ``evaluations/aggregate/``)."""

    @extend_schema(
        operation_id="projects_aggregate_retrieve",
        parameters=[
            OpenApiParameter("method", str, enum=list(METHODS)),
            OpenApiParameter("dimension", str),
            OpenApiParameter("run", int, many=True, description="judge runs counted as raters, labelled as runs"),
            OpenApiParameter("bootstrap", int),
            OpenApiParameter("seed", int),
            OpenApiParameter("output", str, enum=["json", *EVALUATION_FORMATS]),
        ],
        responses={200: OpenApiTypes.OBJECT},
        description=(
            "Each dimension of the people's latest answers aggregated by `method` (crowd-kit) beside the majority "
            "vote: `items` (external_id, dimension, label, probability, majority, flipped), `annotators` "
            "(rater, competence, ci, spamming for MACE), `flips`. Runs count as raters only when named."
        ),
    )
    def get(self, request, slug: str, name: str = NAME):
        return super().get(request, slug, NAME)

    @extend_schema(
        operation_id="projects_aggregate_create",
        request={"application/x-www-form-urlencoded": OpenApiTypes.OBJECT},
        responses={200: OpenApiTypes.OBJECT, 201: OpenApiTypes.OBJECT},
        description="The same as a form; `freeze=true` (researchers) stores it as a snapshot: 201 with its id.",
    )
    def post(self, request, slug: str, name: str = NAME):
        return super().post(request, slug, NAME)
