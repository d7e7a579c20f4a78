"""Django's model backend, with the per-request user read written out; the sign-in limits' helpers.

Every request reads the signed-in user once (or the API token with its user); built by the ORM that
statement costs more Python than the database spends on it, so it is written out (the session's in
annotation/sql.py, the token's here). The rules are Django's and django-rest-knox's own.
"""

from __future__ import annotations

import binascii
from functools import cache
from hmac import compare_digest
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox import auth as knox_auth
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import CONSTANTS, knox_settings
from knox.signals import token_expired
from rest_framework import exceptions

from annotation import rows, sql
from annotation.errors import error_body


class SessionUserBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        # Django has already turned the session's value into a primary key (auth.get_user).
        found = sql.session_user(user_id)
        return found if found is not None and self.user_can_authenticate(found) else None


@cache
def _token_fields() -> tuple[list, list]:
    return list(get_token_model()._meta.concrete_fields), list(get_user_model()._meta.concrete_fields)


@cache
def token_with_user_sql() -> str:
    """The tokens with this key and their users' rows, in one statement (django-rest-knox reads them
    with ``select_related``, whose query the ORM builds again on every API request). Built on first
    use, once the apps are loaded: the token and user models are swappable."""
    tokens, users = get_token_model()._meta, get_user_model()._meta
    quote = connection.ops.quote_name
    token_fields, user_fields = _token_fields()
    columns = [f"t.{quote(f.column)}" for f in token_fields] + [f"u.{quote(f.column)}" for f in user_fields]
    return (
        f"SELECT {', '.join(columns)} FROM {quote(tokens.db_table)} t "
        f"JOIN {quote(users.db_table)} u ON u.{quote(users.pk.column)} = t.{quote(tokens.get_field('user').column)} "
        f"WHERE t.{quote(tokens.get_field('token_key').column)} = %s"
    )


def tokens_with_users(token_key: str) -> list:
    """Each token with this key, its ``user`` set from the same row."""
    token_fields, user_fields = _token_fields()
    found = []
    for row in sql.fetch_all(token_with_user_sql(), [token_key]):
        token_values = dict(zip((f.name for f in token_fields), row[: len(token_fields)], strict=True))
        user_values = dict(zip((f.name for f in user_fields), row[len(token_fields) :], strict=True))
        token = rows.from_columns(get_token_model(), token_values)
        token.user = rows.from_columns(get_user_model(), user_values)
        found.append(token)
    return found


class TokenAuthentication(knox_auth.TokenAuthentication):
    """django-rest-knox's token check, with the token and its user read by one written-out statement,
    and without its sweep of the user's other tokens on every request (a statement each time, on the
    annotator's hot path too). An expired token is still refused and deleted when it is sent; the
    user's other expired tokens go when they next get a token (accounts.services.api_token_create)."""

    def authenticate_credentials(self, token: bytes):
        # knox's own loop (knox.auth.TokenAuthentication.authenticate_credentials) over the rows read here.
        invalid = _("Invalid token.")
        text = token.decode("utf-8")
        for auth_token in tokens_with_users(text[: CONSTANTS.TOKEN_KEY_LENGTH]):
            if self._cleanup_token(auth_token):
                continue
            try:
                digest = hash_token(text)
            except (TypeError, binascii.Error):
                raise exceptions.AuthenticationFailed(invalid) from None
            if compare_digest(digest, auth_token.digest):
                if knox_settings.AUTO_REFRESH and auth_token.expiry:
                    self.renew_token(auth_token)
                return self.validate_user(auth_token)
        raise exceptions.AuthenticationFailed(invalid)

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
