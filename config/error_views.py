"""Concord's own answers when a request is refused before or outside a view: a failed CSRF check,
403, 404 and 400. Pages get Concord's page with the reason and a way on; the API answers JSON in
its one error shape (``annotation.errors.error_body``; docs/api.md, Errors)."""

from __future__ import annotations

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

from annotation.access import NOT_A_MEMBER
from annotation.errors import ConcordError, ValidationFailed, error_body, error_body_of

CSRF_FAILED = "CSRF Failed: {reason}"
API_NOT_FOUND = "Not found."
API_FORBIDDEN = "You do not have permission to perform this action."
API_BAD_REQUEST = "Bad request."
BUSY = (
    "The database is busy with a long write (an import, most likely); nothing of this request was stored. "
    "Try again in {seconds} seconds."
)
#: SQLite's words for a write lock held past the connection's timeout (the embedded default).
LOCKED_MESSAGES = ("database is locked", "database table is locked")


def is_busy_database(exception: Exception) -> bool:
    """Whether ``exception`` is the database refusing for a lock another writer holds."""
    return isinstance(exception, OperationalError) and any(m in str(exception) for m in LOCKED_MESSAGES)


BODY_NOT_READ = "The request's body did not arrive in time (CONCORD_REQUEST_READ_SECONDS); nothing was stored."


def body_not_read_response(request: HttpRequest) -> HttpResponse:
    """408: the body stopped arriving (a slow client past the read deadline, config/gunicorn_worker.py)."""
    if is_api_request(request):
        return JsonResponse(error_body(code="body_not_read", detail=BODY_NOT_READ), status=408)
    context = {"code": "body_not_read", "heading": DEFAULT_ERROR_HEADING, "detail": BODY_NOT_READ, "errors": []}
    return render(request, "error.html", context, status=408)


def busy_response(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: a bystander waiting on another's long write is told to come back, not a 500."""
    seconds = settings.CONCORD_BUSY_RETRY_SECONDS
    detail = BUSY.format(seconds=seconds)
    if is_api_request(request):
        response: HttpResponse = JsonResponse(error_body(code="busy", detail=detail), status=503)
    else:
        context = {"code": "busy", "heading": "Please try again shortly", "detail": detail, "errors": []}
        template = "error.html#message" if getattr(request, "htmx", False) else "error.html"
        response = render(request, template, context, status=503)
    response["Retry-After"] = str(seconds)
    return response


#: The heading of a page (or htmx partial) that reports a domain error, by the status it declares.
ERROR_HEADINGS = {
    403: "You may not do this here",
    404: "Not found",
    409: "This changed in the meantime",
}
DEFAULT_ERROR_HEADING = "This was not done"

#: What an htmx write refused with a status htmx does not swap in place says first (base.html's
#: htmx-config shows it in the page's refusal box, leaving the form as it was typed).
NOT_SAVED = "Not saved"
#: A write from a page opened while still on the project: the person was removed in the meantime.
NO_LONGER_A_MEMBER = "you are no longer on this project: a researcher removed you from it"
#: Statuses htmx swaps into the element that asked (the form comes back with its errors); the
#: others are retargeted to the page's refusal box (base.html).
SWAPPED_IN_PLACE = frozenset({400, 409, 422})


def is_api_request(request: HttpRequest) -> bool:
    """Whether the request is for the REST API, which answers in JSON whatever refuses it."""
    return request.path_info.startswith("/api/")


@requires_csrf_token
def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: the form is refused, the page says why and how to send it again."""
    if is_api_request(request):
        return JsonResponse(error_body(code="csrf_failed", detail=CSRF_FAILED.format(reason=reason)), status=403)
    return render(request, "403_csrf.html", {"reason": reason}, status=403)


def is_htmx_request(request: HttpRequest) -> bool:
    """Whether htmx sent the request: it swaps a partial, never a whole page, into the page."""
    return request.headers.get("HX-Request") == "true"


def htmx_refusal(request: HttpRequest, *, status: int, detail: str, code: str) -> HttpResponse:
    """A refused htmx request in words, for the page's refusal box: "Not saved" first for a write.

    The page stays where it is (no URL pushed), so what the person typed is still in its form."""
    heading = NOT_SAVED if request.method != "GET" else ERROR_HEADINGS.get(status, DEFAULT_ERROR_HEADING)
    response = render(
        request, "error.html#refusal", {"heading": heading, "detail": detail, "code": code}, status=status
    )
    response["HX-Push-Url"] = "false"
    return response


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse(error_body(code="permission_denied", detail=str(exception) or API_FORBIDDEN), status=403)
    if is_htmx_request(request):
        detail = str(exception) or API_FORBIDDEN
        if request.method != "GET" and detail == NOT_A_MEMBER:
            detail = NO_LONGER_A_MEMBER
        return htmx_refusal(request, status=403, detail=detail, code="permission_denied")
    return defaults.permission_denied(request, exception)


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse(error_body(code="not_found", detail=API_NOT_FOUND), status=404)
    if is_htmx_request(request):
        return htmx_refusal(request, status=404, detail="this is no longer here: reload the page", code="not_found")
    return defaults.page_not_found(request, exception)


@requires_csrf_token
def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse(error_body(code="bad_request", detail=API_BAD_REQUEST), status=400)
    if is_htmx_request(request):
        return htmx_refusal(request, status=400, detail=API_BAD_REQUEST, code="bad_request")
    return defaults.bad_request(request, exception)


def domain_error_page(request: HttpRequest, error: ConcordError) -> HttpResponse:
    """A domain error as the 4xx it declares: the item panel's partial for htmx, a whole page otherwise."""
    messages = [str(e) for e in error.errors] if isinstance(error, ValidationFailed) else []
    if is_htmx_request(request) and error.http_status not in SWAPPED_IN_PLACE:
        return htmx_refusal(request, status=error.http_status, detail=error.message, code=error.code)
    context = {
        "code": error.code,
        "heading": ERROR_HEADINGS.get(error.http_status, DEFAULT_ERROR_HEADING),
        "detail": "nothing was stored" if messages else error.message,
        "errors": messages,
    }
    template = "error.html#message" if getattr(request, "htmx", False) else "error.html"
    return render(request, template, context, status=error.http_status)


class DomainErrorMiddleware:
    """Pages answer a ``ConcordError`` a view let through (a ``ConcurrentEdit`` in a race, say) with
    the status it declares, as the API's handler does (config/api.py), instead of a 500; pages and the
    API answer a database locked by another's long write (SQLite) with 503 and Retry-After."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_busy_database(exception):
            return busy_response(request)
        if isinstance(exception, UnreadablePostError):
            return body_not_read_response(request)
        if not isinstance(exception, ConcordError):
            return None
        if is_api_request(request):
            return JsonResponse(error_body_of(exception), status=exception.http_status)
        return domain_error_page(request, exception)
