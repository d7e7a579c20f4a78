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
]
