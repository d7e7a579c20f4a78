"""The judges app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from judges import apis

urlpatterns = [
    path("projects/<slug:slug>/runs/", apis.JudgeRunListApi.as_view(), name="api_runs"),
    path("projects/<slug:slug>/runs/import/", apis.JudgeRunImportApi.as_view(), name="api_run_import"),
    path("runs/<int:run_id>/", apis.JudgeRunDetailApi.as_view(), name="api_run"),
    path("runs/<int:run_id>/file/", apis.JudgeRunFileApi.as_view(), name="api_run_file"),
]
