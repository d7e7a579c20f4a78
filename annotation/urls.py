from django.contrib.auth import views as auth_views
from django.urls import path

from annotation import views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("p/<slug:slug>/", views.project_detail, name="project_detail"),
    path("p/<slug:slug>/import/", views.import_upload, name="import_upload"),
    path("p/<slug:slug>/import/<int:job_id>/", views.import_status, name="import_status"),
    path("p/<slug:slug>/annotate/", views.workspace, name="workspace"),
    path("p/<slug:slug>/annotate/<int:assignment_id>/submit/", views.assignment_submit_view, name="assignment_submit"),
    path("p/<slug:slug>/annotate/<int:assignment_id>/skip/", views.assignment_skip_view, name="assignment_skip"),
    path("p/<slug:slug>/annotate/<int:assignment_id>/edit/", views.annotation_edit, name="annotation_edit"),
    path("p/<slug:slug>/history/", views.annotation_history, name="annotation_history"),
    path("p/<slug:slug>/undo/", views.annotation_undo, name="annotation_undo"),
]
