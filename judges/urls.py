from django.urls import path

from judges import generation_views, views

urlpatterns = [
    path("p/<slug:slug>/judges/", views.project_judges, name="project_judges"),
    path("p/<slug:slug>/judges/new/", views.judge_new, name="judge_new"),
    path("p/<slug:slug>/judges/runs/", views.run_launch, name="judge_run_launch"),
    path("p/<slug:slug>/judges/runs/import/", views.run_import, name="judge_run_import"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/", views.run_detail, name="judge_run_detail"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/download/", views.run_download, name="judge_run_download"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/progress/", views.run_progress_partial, name="judge_run_progress"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/cancel/", views.run_cancel, name="judge_run_cancel"),
    path("p/<slug:slug>/judges/runs/<int:run_id>/resume/", views.run_resume, name="judge_run_resume"),
    path("p/<slug:slug>/generate/", generation_views.generate_items, name="generate_items"),
    path("p/<slug:slug>/generate/<int:run_id>/", generation_views.generation_run_detail, name="generation_run_detail"),
    path(
        "p/<slug:slug>/generate/<int:run_id>/progress/",
        generation_views.generation_run_progress,
        name="generation_run_progress",
    ),
    path(
        "p/<slug:slug>/generate/<int:run_id>/cancel/",
        generation_views.generation_run_cancel_view,
        name="generation_run_cancel",
    ),
    path(
        "p/<slug:slug>/generate/<int:run_id>/resume/",
        generation_views.generation_run_resume_view,
        name="generation_run_resume",
    ),
]
