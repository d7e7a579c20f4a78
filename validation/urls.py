from django.urls import path

from validation import estimate_views, evaluation_views, release_views, views

urlpatterns = [
    path("p/<slug:slug>/evaluations/<str:name>/", evaluation_views.evaluation_page, name="evaluation"),
    path(
        "p/<slug:slug>/evaluations/<str:name>/download.<str:fmt>",
        evaluation_views.evaluation_download,
        name="evaluation_download",
    ),
    path("p/<slug:slug>/evaluations/<str:name>/freeze/", evaluation_views.evaluation_freeze, name="evaluation_freeze"),
    path("p/<slug:slug>/estimates/", estimate_views.estimates_page, name="estimates"),
    path("p/<slug:slug>/estimates/freeze/", estimate_views.estimates_freeze, name="estimates_freeze"),
    path("p/<slug:slug>/release/", release_views.release_page, name="release"),
    path("p/<slug:slug>/release/download/", release_views.release_download, name="release_download"),
    path("p/<slug:slug>/report/", views.report, name="report"),
    path("p/<slug:slug>/report/figures/", views.report_figures_part, name="report_figures"),
    path("p/<slug:slug>/report/download.<str:fmt>", views.report_download, name="report_download"),
    path("p/<slug:slug>/report/freeze/", views.report_freeze, name="report_freeze"),
    path("p/<slug:slug>/report/snapshots/<int:snapshot_id>/", views.snapshot_detail, name="report_snapshot"),
    path("p/<slug:slug>/report/snapshots/<int:snapshot_id>/check/", views.snapshot_check, name="report_snapshot_check"),
    path(
        "p/<slug:slug>/report/snapshots/<int:snapshot_id>/download.<str:fmt>",
        views.snapshot_download,
        name="report_snapshot_download",
    ),
]
