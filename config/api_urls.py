"""The REST API under /api/: each app keeps its own routes, composed here so that no app names another's."""

from django.urls import include, path

urlpatterns = [
    path("", include("annotation.api_urls")),
    path("", include("judges.api_urls")),
    path("", include("validation.api_urls")),
]
