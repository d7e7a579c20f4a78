"""Account pages: profile and API tokens, password change and reset (Django's views, Concord's templates)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

urlpatterns = [
    path("accounts/profile/", views.profile, name="profile"),
    path("accounts/profile/tokens/", views.token_create, name="token_create"),
    path("accounts/profile/tokens/revoke-all/", views.tokens_revoke_all, name="tokens_revoke_all"),
    path("accounts/profile/tokens/<str:digest>/revoke/", views.token_revoke, name="token_revoke"),
    path("accounts/password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", auth_views.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]
