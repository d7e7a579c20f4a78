"""Profile page: the user's API tokens, created (the key shown once) and revoked. Thin views."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts.errors import TokenNotFound
from accounts.selectors import api_tokens
from accounts.services import api_token_create, api_token_revoke, api_tokens_revoke_all

#: A token's digest (its primary key): SHA-512 in hex.
DIGEST_CHARS = 128


def _profile(request: HttpRequest, **extra: object) -> HttpResponse:
    return render(request, "accounts/profile.html", {"tokens": api_tokens(user=request.user), **extra})


@login_required
@never_cache
def profile(request: HttpRequest) -> HttpResponse:
    return _profile(request)


@login_required
@never_cache
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    token, key = api_token_create(user=request.user)
    # Rendered, not redirected: the key exists only in this one answer (never stored, never cached).
    return _profile(request, new_key=key, new_token=token)


@login_required
@require_POST
def token_revoke(request: HttpRequest, digest: str) -> HttpResponse:
    if len(digest) > DIGEST_CHARS:
        raise Http404("no such token")
    try:
        api_token_revoke(user=request.user, digest=digest)
    except TokenNotFound as exc:
        raise Http404(exc.message) from None
    messages.success(request, "Token revoked.")
    return redirect("profile")


@login_required
@require_POST
def tokens_revoke_all(request: HttpRequest) -> HttpResponse:
    count = api_tokens_revoke_all(user=request.user)
    messages.success(request, f"{count} token{'s' if count != 1 else ''} revoked.")
    return redirect("profile")
