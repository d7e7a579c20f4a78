"""Profile page: the user's API tokens, created (the key shown once) and revoked; the page that opens a
password-reset link (its secret in the URL fragment, posted here, never in a logged address). Thin views."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.views import INTERNAL_RESET_SESSION_TOKEN, PasswordResetConfirmView, PasswordResetView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.dateparse import parse_datetime
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.errors import TokenNotFound
from accounts.selectors import api_tokens
from accounts.services import api_token_create, api_token_revoke, api_tokens_revoke_all
from annotation.post_redirect import post_only, shown_once_forget, shown_once_keep, shown_once_take
from annotation.request_types import SignedInRequest

#: A token's digest (its primary key): SHA-512 in hex.
DIGEST_CHARS = 128
#: Longest reset code accepted: ``<uidb64>/<token>`` (ours are well under 80 characters).
RESET_CODE_CHARS = 200
RESET_LINK_INVALID = "this link is not valid: it was used already, it is too old, or it was mistyped"


def _profile(request: SignedInRequest, **extra: object) -> HttpResponse:
    return render(request, "accounts/profile.html", {"tokens": api_tokens(user=request.user), **extra})


#: The shown-once name of a token just created: its key crosses the redirect encrypted, then is gone.
NEW_TOKEN_ONCE = "api_token"


@login_required
@never_cache
def profile(request: SignedInRequest) -> HttpResponse:
    created = shown_once_take(request, name=NEW_TOKEN_ONCE)
    if not created:
        return _profile(request)
    expiry = parse_datetime(created["expiry"]) if created["expiry"] else None
    response = _profile(request, new_key=created["key"], new_expiry=expiry)
    return shown_once_forget(response, name=NEW_TOKEN_ONCE)


@login_required
@never_cache
@post_only("profile")
def token_create(request: SignedInRequest) -> HttpResponse:
    token, key = api_token_create(user=request.user)
    # Post/redirect/get: the key is shown once by the profile page and stored nowhere in clear.
    created = {"key": key, "expiry": token.expiry.isoformat() if token.expiry else None}
    return shown_once_keep(request, redirect("profile"), name=NEW_TOKEN_ONCE, value=created)


@login_required
@post_only("profile")
def token_revoke(request: SignedInRequest, digest: str) -> HttpResponse:
    if len(digest) > DIGEST_CHARS:
        raise Http404("no such token")
    try:
        api_token_revoke(user=request.user, digest=digest)
    except TokenNotFound as exc:
        raise Http404(exc.message) from None
    messages.success(request, "Token revoked.")
    return redirect("profile")


@login_required
@post_only("profile")
def tokens_revoke_all(request: SignedInRequest) -> HttpResponse:
    count = api_tokens_revoke_all(user=request.user)
    messages.success(request, f"{count} token{'s' if count != 1 else ''} revoked.")
    return redirect("profile")


class ResetRequestView(PasswordResetView):
    """Django's page; the e-mailed link starts with the configured site address (CONCORD_SITE_URL),
    never the request's Host header, which a client writes."""

    def form_valid(self, form: Any) -> HttpResponse:
        self.extra_email_context = {"site_url": settings.CONCORD_SITE_URL}
        return super().form_valid(form)


def _reset_user(uidb64: str):
    try:
        return get_user_model()._default_manager.get(pk=force_str(urlsafe_base64_decode(uidb64)))
    except (TypeError, ValueError, OverflowError, get_user_model().DoesNotExist):
        return None


@never_cache
@require_http_methods(["GET", "POST"])
def password_reset_open(request: HttpRequest) -> HttpResponse:
    """``/accounts/password/reset/open/#<uidb64>/<token>``: a small script posts the fragment here. A good
    code goes in the session, as Django's own confirm view keeps it, and the person goes on to set the
    password at the token-less address Django uses for that step."""
    invalid = ""
    if request.method == "POST":
        code = request.POST.get("token", "").strip()
        uidb64, _, token = code.partition("/")
        user = _reset_user(uidb64) if 0 < len(code) <= RESET_CODE_CHARS else None
        if user is not None and default_token_generator.check_token(user, token):
            request.session[INTERNAL_RESET_SESSION_TOKEN] = token
            return redirect("password_reset_confirm", uidb64=uidb64, token=PasswordResetConfirmView.reset_url_token)
        invalid = RESET_LINK_INVALID
    context = {
        "heading": "Set a new password",
        "action": reverse("password_reset_open"),
        "invalid": invalid,
        "max_chars": RESET_CODE_CHARS,
    }
    response = render(request, "registration/link_open.html", context, status=404 if invalid else 200)
    add_never_cache_headers(response)
    return response
