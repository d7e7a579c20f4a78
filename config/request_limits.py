"""Request bodies within a size chosen per route, refused before anything reads them.

Every route gets ``CONCORD_REQUEST_MAX_BYTES``; a route that takes more or less is declared in
``BODY_LIMITS`` by its URL name, naming the setting that holds its cap (the operator's to change).
The middleware compares the ``Content-Length`` header with that cap before any middleware or view
reads the body, so a body over it costs neither memory nor parsing: the API answers a JSON 413, pages
answer Concord's 413 page. A body sent in chunks (``Transfer-Encoding``, no size known in advance)
is refused with 411.

A route whose cap is above the default names the project roles that may send it that much
(``senders``): for anyone else (signed out, not a member, another role) the default cap holds, and the
sender is known from the session cookie or the API token alone, before the body is read.

To give a new route its own cap, add one line to ``BODY_LIMITS``::

    "<url name>": BodyLimit("CONCORD_IMPORT_MAX_BYTES", senders=RESEARCHERS),

and list it in docs/security.md ("Caps on input").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from rest_framework import exceptions

from annotation.errors import error_body
from annotation.models import Membership, Role
from config.auth import TokenAuthentication
from config.error_views import is_api_request


@dataclass(frozen=True)
class BodyLimit:
    """A route's cap: the value of ``setting`` plus ``margin`` bytes, for members of the project the URL
    names holding one of ``senders`` (superusers too); None: for everyone."""

    setting: str
    margin: int = 0
    senders: frozenset[str] | None = None


RESEARCHERS = frozenset({Role.RESEARCHER})
READERS = frozenset({Role.RESEARCHER, Role.EXPERT})


#: Multipart framing and a form's other fields around an uploaded file: a file just over its cap still
#: reaches the form, which names the cap beside the field (annotation.uploads stops writing it at the cap).
UPLOAD_FORM_MARGIN = 64 * 1024

#: The cap on request bodies, by URL name as reverse() takes it ("admin:login"). Routes not named here
#: get CONCORD_REQUEST_MAX_BYTES.
BODY_LIMITS: dict[str, BodyLimit] = {
    # Open to anyone: a username and a password, or an e-mail address.
    "api_token": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "login": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "password_reset": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "admin:login": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    # Open to whoever holds a link: its secret, then a new password.
    "invitation": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "invitation_open": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "invitation_accept": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "password_reset_open": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    "password_reset_confirm": BodyLimit("CONCORD_SIGN_IN_MAX_BYTES"),
    # Bulk imports through the API.
    "api_items": BodyLimit("CONCORD_IMPORT_MAX_BYTES", senders=RESEARCHERS),
    "api_run_import": BodyLimit("CONCORD_IMPORT_MAX_BYTES", senders=RESEARCHERS),
    "api_generation_runs": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, RESEARCHERS),
    # File uploads from pages.
    "import_upload": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, RESEARCHERS),
    "generate_items": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, RESEARCHERS),
    # Paper evaluations whose parameters include a file (IPQA-Eval's predictions).
    "evaluation": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, READERS),
    "evaluation_freeze": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, READERS),
    "api_evaluation": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, READERS),
    "judge_run_import": BodyLimit("CONCORD_IMPORT_MAX_BYTES", UPLOAD_FORM_MARGIN, RESEARCHERS),
}
DEFAULT_LIMIT = BodyLimit("CONCORD_REQUEST_MAX_BYTES")

BODY_TOO_LARGE = "the request body is {size:,} bytes; this address takes at most {limit:,} ({setting})"
LENGTH_REQUIRED = "a request body needs a Content-Length header (chunked bodies are not accepted)"
BAD_LENGTH = "the Content-Length header is not a number of bytes"


def body_limit(url_name: str | None) -> tuple[int, str]:
    """The cap on request bodies of the route called ``url_name``, in bytes, and the setting it comes from."""
    limit = BODY_LIMITS.get(url_name or "", DEFAULT_LIMIT)
    return int(getattr(settings, limit.setting)) + limit.margin, limit.setting


def _sender(request: HttpRequest) -> Any:
    """The user sending the request, from its API token or its session cookie (None: nobody known), found
    as DRF and Django's middleware would, without reading the body."""
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(header) == 2 and header[0].lower() == "token":
        try:
            user, _ = TokenAuthentication().authenticate_credentials(header[1].encode())
        except exceptions.AuthenticationFailed:
            return None
        return user
    session_key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not session_key:
        return None
    probe = HttpRequest()
    probe.session = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = get_user(probe)
    return user if user.is_authenticated else None


def may_send_large(request: HttpRequest, kwargs: dict[str, Any], senders: frozenset[str] | None) -> bool:
    """Whether this request's sender may send the route's large body: a member of the project the URL
    names holding one of ``senders`` (not paused), or a superuser."""
    if senders is None:
        return True
    user = _sender(request)
    if user is None:
        return False
    if user.is_superuser:
        return True
    slug = kwargs.get("slug")
    return (
        bool(slug) and Membership.objects.filter(project__slug=slug, user=user, role__in=senders, paused=False).exists()
    )


def _smallest_limit() -> int:
    return min(int(getattr(settings, limit.setting)) + limit.margin for limit in [DEFAULT_LIMIT, *BODY_LIMITS.values()])


def _refusal(request: HttpRequest, *, status: int, code: str, detail: str) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse(error_body(code=code, detail=detail), status=status)
    page = render_to_string("413.html", {"detail": detail, "status": status}, request=request)
    return HttpResponse(page, status=status)


def body_refusal(request: HttpRequest) -> HttpResponse | None:
    """The answer refusing this request's body, or None when the body is within its route's cap."""
    if request.META.get("HTTP_TRANSFER_ENCODING"):
        # A chunked body has no size to check in advance (and, beside a Content-Length, is the shape
        # of request smuggling).
        return _refusal(request, status=411, code="length_required", detail=LENGTH_REQUIRED)
    header = request.META.get("CONTENT_LENGTH") or ""
    if not header:
        return None
    try:
        size = int(header)
    except ValueError:
        return _refusal(request, status=400, code="bad_length", detail=BAD_LENGTH)
    if size < 0:
        return _refusal(request, status=400, code="bad_length", detail=BAD_LENGTH)
    if size <= _smallest_limit():
        return None  # within every cap: no need to find the route
    try:
        match = resolve(request.path_info)
    except Resolver404:
        url_name, kwargs = None, {}
    else:
        url_name, kwargs = match.view_name, match.kwargs
    limit, setting = body_limit(url_name)
    if size > body_limit(None)[0] and not may_send_large(
        request, kwargs, BODY_LIMITS.get(url_name or "", DEFAULT_LIMIT).senders
    ):
        limit, setting = body_limit(None)  # who may not post the large body here has the default cap
    if size > limit:
        detail = BODY_TOO_LARGE.format(size=size, limit=limit, setting=setting)
        return _refusal(request, status=413, code="too_large", detail=detail)
    return None


class RequestBodyLimitMiddleware:
    """First in MIDDLEWARE, so that no other middleware has read a body it refuses."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return body_refusal(request) or self.get_response(request)
