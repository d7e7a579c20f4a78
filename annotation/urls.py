from django.contrib.auth import views as auth_views
from django.urls import path

from annotation import design_views, help_views, item_views, project_views, sample_views, team_views, views

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
    path("p/<slug:slug>/annotate/<int:assignment_id>/unskip/", views.assignment_unskip_view, name="assignment_unskip"),
    path("me/pace/", views.my_pace, name="my_pace"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("help/", help_views.help_page, name="help"),
    path("help/<slug:name>/", help_views.help_page, name="help_page"),
    # Setting a project up (annotation/project_views.py).
    path("projects/new/", project_views.project_new, name="project_new"),
    path("projects/new/preview/", project_views.guidelines_preview, name="project_new_preview"),
    path("p/<slug:slug>/settings/", project_views.project_settings, name="project_settings"),
    path("p/<slug:slug>/settings/preview/", project_views.guidelines_preview, name="project_settings_preview"),
    path("p/<slug:slug>/archive/", project_views.project_archive_view, name="project_archive"),
    path("projects/new/design-preview/", design_views.design_preview, name="project_new_design_preview"),
    path("p/<slug:slug>/settings/design-preview/", design_views.design_preview, name="project_design_preview"),
    # The team and the item browser (annotation/team_views.py, annotation/item_views.py).
    path("p/<slug:slug>/team/", team_views.team_page, name="team"),
    path("p/<slug:slug>/sample/", sample_views.validation_sample_page, name="validation_sample"),
    path(
        "p/<slug:slug>/sample/discard/", sample_views.validation_sample_discard_page, name="validation_sample_discard"
    ),
    path("p/<slug:slug>/team/add/", team_views.team_add, name="team_add"),
    path("p/<slug:slug>/team/upload/", team_views.team_upload, name="team_upload"),
    path("p/<slug:slug>/team/<int:user_id>/roles/", team_views.member_roles, name="member_roles"),
    path("p/<slug:slug>/team/<int:user_id>/pause/", team_views.member_pause, name="member_pause"),
    path("p/<slug:slug>/team/<int:user_id>/remove/", team_views.member_remove, name="member_remove"),
    path("p/<slug:slug>/team/<int:user_id>/invite/", team_views.member_invite, name="member_invite"),
    path("invite/", team_views.invitation, name="invitation"),
    path("invite/open/", team_views.invitation_open, name="invitation_open"),
    path("invite/<str:token>/", team_views.invitation_legacy, name="invitation_accept"),
    path("p/<slug:slug>/items/", item_views.item_list, name="item_list"),
    path("p/<slug:slug>/items/<int:item_id>/", item_views.item_page_view, name="item_page"),
]
