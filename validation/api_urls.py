"""The validation app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from validation import apis

urlpatterns = [
    path("projects/<slug:slug>/agreement/", apis.AgreementApi.as_view(), name="api_agreement"),
    path("projects/<slug:slug>/gold/", apis.GoldExportApi.as_view(), name="api_gold"),
]
