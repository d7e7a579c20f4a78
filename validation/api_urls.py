"""The validation app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from validation import apis, release_apis
from validation.aggregation.apis import AggregateApi

urlpatterns = [
    path("projects/<slug:slug>/agreement/", apis.AgreementApi.as_view(), name="api_agreement"),
    path("projects/<slug:slug>/gold/", apis.GoldExportApi.as_view(), name="api_gold"),
    path("projects/<slug:slug>/estimates/", apis.EstimateApi.as_view(), name="api_estimates"),
    path("projects/<slug:slug>/alt-test/", apis.AltTestApi.as_view(), name="api_alt_test"),
    path("projects/<slug:slug>/evaluations/<str:name>/", apis.EvaluationApi.as_view(), name="api_evaluation"),
    path("projects/<slug:slug>/aggregate/", AggregateApi.as_view(), name="api_aggregate"),
    path("projects/<slug:slug>/sample/plan/", apis.SamplePlanApi.as_view(), name="api_sample_plan"),
    path("projects/<slug:slug>/release/", release_apis.ReleaseApi.as_view(), name="api_release"),
    path(
        "projects/<slug:slug>/release/settings/",
        release_apis.ReleaseSettingsApi.as_view(),
        name="api_release_settings",
    ),
]
