"""Post/redirect/get for the site's forms: a successful POST answers with a redirect, so a reload
never posts again, and an address that only takes POST sends a GET (a reload after a refused form,
a bookmark, the address typed again) to the page its form is on instead of answering 405.

Secrets shown once (an invitation link, a temporary password, an API token's key) cross the redirect
without being stored in clear: the session keeps them encrypted under a key of their own, which only
a short-lived cookie holds; the next page takes both, and neither alone reveals anything (Fernet from
``cryptography``: AES with an HMAC over it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect

#: How long the cookie holding a shown-once key lives: the redirect is followed at once.
SHOWN_ONCE_SECONDS = 300
_SESSION_PREFIX = "concord_shown_once_"
_COOKIE_PREFIX = "concord_once_"


def post_only(url_name: str | Callable[[dict[str, Any]], str], *kwarg_names: str) -> Callable:
    """Like ``require_POST``, but a GET or HEAD goes to the page named ``url_name`` (with the view's
    own URL arguments ``kwarg_names``), where the form that posts here lives. ``url_name`` may be a
    function of the view's URL arguments, for views shared by several pages."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method in ("GET", "HEAD"):
                name = url_name(kwargs) if callable(url_name) else url_name
                return redirect(name, **{key: kwargs[key] for key in kwarg_names})
            if request.method != "POST":
                return HttpResponseNotAllowed(["GET", "POST"])
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def shown_once_keep(request: HttpRequest, response: HttpResponse, *, name: str, value: Any) -> HttpResponse:
    """Keep ``value`` (JSON-able) for the next page that calls ``shown_once_take(name=...)``."""
    key = Fernet.generate_key()
    request.session[_SESSION_PREFIX + name] = Fernet(key).encrypt(json.dumps(value).encode()).decode()
    response.set_cookie(
        _COOKIE_PREFIX + name,
        key.decode(),
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
        plain = Fernet(cookie.encode()).decrypt(stored.encode(), ttl=SHOWN_ONCE_SECONDS)
    except (InvalidToken, ValueError):
        return None  # a cookie from elsewhere, tampered with or past its time: nothing to show
    return json.loads(plain)


def shown_once_forget(response: HttpResponse, *, name: str) -> HttpResponse:
    """Delete the key's cookie: the value cannot be opened again."""
    response.delete_cookie(_COOKIE_PREFIX + name, samesite="Strict")
    return response
