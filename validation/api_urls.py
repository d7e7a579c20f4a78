"""The validation app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from validation import apis
from validation.aggregation.apis import AggregateApi

urlpatterns = [
    path("projects/<slug:slug>/agreement/", apis.AgreementApi.as_view(), name="api_agreement"),
    path("projects/<slug:slug>/gold/", apis.GoldExportApi.as_view(), name="api_gold"),
    path("projects/<slug:slug>/estimates/", apis.EstimateApi.as_view(), name="api_estimates"),
    path("projects/<slug:slug>/evaluations/<str:name>/", apis.EvaluationApi.as_view(), name="api_evaluation"),
    path("projects/<slug:slug>/aggregate/", AggregateApi.as_view(), name="api_aggregate"),
    path("projects/<slug:slug>/sample/plan/", apis.SamplePlanApi.as_view(), name="api_sample_plan"),
]
