from django.urls import path

from judges import generation_views, views
from judges.execution import JudgeRuns
from judges.generation.execution import GenerationRuns
from judges.runs import views as run_views

urlpatterns = [
    path("p/<slug:slug>/judges/", views.project_judges, name="project_judges"),
    path("p/<slug:slug>/judges/new/", views.judge_new, name="judge_new"),
    path("p/<slug:slug>/judges/runs/", views.run_launch, name="judge_run_launch"),
    path("p/<slug:slug>/judges/runs/import/", views.run_import, name="judge_run_import"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/", views.run_detail, name="judge_run_detail"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/download/", views.run_download, name="judge_run_download"),
    path("p/<slug:slug>/generate/", generation_views.generate_items, name="generate_items"),
    path("p/<slug:slug>/generate/<int:run_id>/", generation_views.generation_run_detail, name="generation_run_detail"),
]

# Every run type's progress, cancel and resume pages: the same views, under the run type's own URLs.
for run_type, prefix in ((JudgeRuns, "p/<slug:slug>/judges/runs"), (GenerationRuns, "p/<slug:slug>/generate")):
    urlpatterns += [
        path(
            f"{prefix}/<int:run_id>/{action}/", view, {"run_type": run_type.name}, name=f"{run_type.url_name}_{action}"
        )
        for action, view in (
            ("progress", run_views.run_progress_partial),
            ("cancel", run_views.run_cancel_view),
            ("resume", run_views.run_resume_view),
        )
    ]
