"""Post/redirect/get for the site's forms: a successful POST answers with a redirect, so a reload
never posts again, and an address that only takes POST sends a GET (a reload after a refused form,
a bookmark, the address typed again) to the page its form is on instead of answering 405.

Secrets shown once (an invitation link, a temporary password, an API token's key) cross the redirect
without being stored in clear: the session keeps them encrypted under a key of their own, which only
a short-lived cookie holds; the next page takes both, and neither alone reveals anything. The stream
is HMAC-SHA256 in counter mode with an HMAC tag over it (the standard library, no new dependency).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect

#: How long the cookie holding a shown-once key lives: the redirect is followed at once.
SHOWN_ONCE_SECONDS = 300
_SESSION_PREFIX = "concord_shown_once_"
_COOKIE_PREFIX = "concord_once_"


def post_only(url_name: str, *kwarg_names: str) -> Callable:
    """Like ``require_POST``, but a GET or HEAD goes to the page named ``url_name`` (with the view's
    own URL arguments ``kwarg_names``), where the form that posts here lives."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method in ("GET", "HEAD"):
                return redirect(url_name, **{name: kwargs[name] for name in kwarg_names})
            if request.method != "POST":
                return HttpResponseNotAllowed(["GET", "POST"])
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def _keystream(key: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, b"stream" + n.to_bytes(8, "big"), hashlib.sha256).digest() for n in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def _tag(key: bytes, sealed: bytes) -> bytes:
    return hmac.new(key, b"tag" + sealed, hashlib.sha256).digest()


def shown_once_keep(request: HttpRequest, response: HttpResponse, *, name: str, value: Any) -> HttpResponse:
    """Keep ``value`` (JSON-able) for the next page that calls ``shown_once_take(name=...)``."""
    key = secrets.token_bytes(32)
    plain = json.dumps(value).encode()
    sealed = bytes(a ^ b for a, b in zip(plain, _keystream(key, len(plain)), strict=True))
    request.session[_SESSION_PREFIX + name] = base64.b64encode(_tag(key, sealed) + sealed).decode()
    response.set_cookie(
        _COOKIE_PREFIX + name,
        base64.urlsafe_b64encode(key).decode(),
        max_age=SHOWN_ONCE_SECONDS,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Strict",
    )
    return response


def shown_once_take(request: HttpRequest, *, name: str) -> Any:
    """The value kept under ``name``, or None; either way it is gone from the session afterwards (the
    caller deletes the cookie with ``shown_once_forget``)."""
    stored = request.session.pop(_SESSION_PREFIX + name, None)
    cookie = request.COOKIES.get(_COOKIE_PREFIX + name)
    if not stored or not cookie:
        return None
    try:
        key = base64.urlsafe_b64decode(cookie.encode())
        blob = base64.b64decode(stored.encode())
    except ValueError:
        return None
    tag, sealed = blob[:32], blob[32:]
    if len(key) != 32 or not hmac.compare_digest(tag, _tag(key, sealed)):
        return None
    return json.loads(bytes(a ^ b for a, b in zip(sealed, _keystream(key, len(sealed)), strict=True)))


def shown_once_forget(response: HttpResponse, *, name: str) -> HttpResponse:
    """Delete the key's cookie: the value cannot be opened again."""
    response.delete_cookie(_COOKIE_PREFIX + name, samesite="Strict")
    return response
