"""Django's model backend, with the per-request user read written out; the sign-in limits' helpers.

Every request reads the signed-in user once; built by the ORM that statement costs more Python
than the database spends on it (the statement is in annotation/sql.py). The rules are Django's own.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox import auth as knox_auth
from knox.signals import token_expired

from annotation import sql
from annotation.errors import error_body


class SessionUserBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        # Django has already turned the session's value into a primary key (auth.get_user).
        found = sql.session_user(user_id)
        return found if found is not None and self.user_can_authenticate(found) else None


class TokenAuthentication(knox_auth.TokenAuthentication):
    """django-rest-knox's token check without its sweep of the user's other tokens on every request
    (a statement each time, on the annotator's hot path too). An expired token is still refused and
    deleted when it is sent; the user's other expired tokens go when they next get a token
    (accounts.services.api_token_create)."""

    def _cleanup_token(self, auth_token) -> bool:
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            username = auth_token.user.get_username()
            auth_token.delete()
            token_expired.send(sender=self.__class__, username=username, source="auth_token")
            return True
        return False


class TokenScheme(KnoxTokenScheme):
    """The API schema's description of the token header, as for django-rest-knox's own class."""

    target_class = "config.auth.TokenAuthentication"


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' check, for sign-ins that come with a request (every page and API sign-in does).

    A call without one (a script, the test client's ``login``) has no client address to count
    against, so it is left to the password check alone instead of failing.
    """

    def authenticate(self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_ip(request: Any) -> str | None:
    """The client's address for sign-in limits: REMOTE_ADDR, or what the proxies in front saw.

    X-Forwarded-For is believed only as far as CONCORD_PROXY_COUNT trusted proxies vouch for it: the
    entry the last of them appended. Any earlier entry could be written by the client itself.
    """
    meta = getattr(request, "META", {})
    count = settings.CONCORD_PROXY_COUNT
    if count > 0:
        forwarded = [part.strip() for part in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= count:
            return forwarded[-count]
    return meta.get("REMOTE_ADDR") or None


#: What a locked-out client is told (pages and API alike).
LOCKED_OUT = "Too many failed sign-ins for this username from your address. Try again later."


def lockout_response(request: Any, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """django-axes' answer to a locked-out sign-in: 429, JSON for the API, the sign-in page otherwise."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(error_body(code="locked_out", detail=LOCKED_OUT), status=429)
    else:
        context = {"message": LOCKED_OUT, "cooloff_minutes": minutes}
        response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response
