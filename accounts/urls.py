"""Account pages: profile and API tokens, password change and reset (Django's views, Concord's templates and
forms: a reset reaches invited accounts too, and its link keeps the secret out of the address)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.forms import ChangePasswordForm, ResetForm, ResetSetPasswordForm

urlpatterns = [
    path("accounts/profile/", views.profile, name="profile"),
    path("accounts/profile/tokens/", views.token_create, name="token_create"),
    path("accounts/profile/tokens/revoke-all/", views.tokens_revoke_all, name="tokens_revoke_all"),
    path("accounts/profile/tokens/<str:digest>/revoke/", views.token_revoke, name="token_revoke"),
    path(
        "accounts/password/change/",
        auth_views.PasswordChangeView.as_view(form_class=ChangePasswordForm),
        name="password_change",
    ),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", views.ResetRequestView.as_view(form_class=ResetForm), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    # The e-mailed link opens this page with its secret in the fragment (out of every access log).
    path("accounts/password/reset/open/", views.password_reset_open, name="password_reset_open"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(form_class=ResetSetPasswordForm),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]
