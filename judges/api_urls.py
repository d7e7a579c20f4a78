"""The judges app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from judges import apis
from judges.execution import JUDGE_RUNS
from judges.generation.execution import GENERATION_RUNS

urlpatterns = [
    path("projects/<slug:slug>/runs/", apis.JudgeRunListApi.as_view(), name="api_runs"),
    path("projects/<slug:slug>/runs/import/", apis.JudgeRunImportApi.as_view(), name="api_run_import"),
    path("runs/<int:run_id>/", apis.JudgeRunDetailApi.as_view(), name="api_run"),
    path("runs/<int:run_id>/file/", apis.JudgeRunFileApi.as_view(), name="api_run_file"),
    path("projects/<slug:slug>/generation-runs/", apis.GenerationRunListApi.as_view(), name="api_generation_runs"),
    path("generation-runs/<int:run_id>/", apis.GenerationRunDetailApi.as_view(), name="api_generation_run"),
]

# Cancel and resume: one view for every run type, under each run type's own address.
ADDRESSES = ((JUDGE_RUNS, "runs", "api_run"), (GENERATION_RUNS, "generation-runs", "api_generation_run"))
for run_type, prefix, name in ADDRESSES:
    urlpatterns += [
        path(f"{prefix}/<int:run_id>/{action}/", view.as_view(), {"run_type": run_type}, name=f"{name}_{action}")
        for action, view in (("cancel", apis.RunCancelApi), ("resume", apis.RunResumeApi))
    ]
