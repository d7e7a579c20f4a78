"""The annotation app's API routes; config/api_urls.py mounts them under /api/ beside the other apps'."""

from django.urls import path

from annotation import apis, member_apis

urlpatterns = [
    path("projects/", apis.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<slug:slug>/", apis.ProjectDetailApi.as_view(), name="api_project"),
    path("projects/<slug:slug>/items/", apis.ItemListApi.as_view(), name="api_items"),
    path("projects/<slug:slug>/sample/", apis.ValidationSampleApi.as_view(), name="api_validation_sample"),
    path(
        "projects/<slug:slug>/sample/draws/<int:number>/",
        apis.SampleDrawDiscardApi.as_view(),
        name="api_sample_draw_discard",
    ),
    path("projects/<slug:slug>/assignments/next/", apis.AssignmentNextApi.as_view(), name="api_assignment_next"),
    path("projects/<slug:slug>/annotations/", apis.AnnotationListApi.as_view(), name="api_annotations"),
    path("assignments/<int:assignment_id>/submit/", apis.AssignmentSubmitApi.as_view(), name="api_assignment_submit"),
    path("assignments/<int:assignment_id>/skip/", apis.AssignmentSkipApi.as_view(), name="api_assignment_skip"),
    path("annotations/<int:annotation_id>/", apis.AnnotationDetailApi.as_view(), name="api_annotation"),
    path("projects/<slug:slug>/members/", member_apis.MemberListApi.as_view(), name="api_members"),
    path("projects/<slug:slug>/members/<str:username>/", member_apis.MemberDetailApi.as_view(), name="api_member"),
]
