"""Concord's own answers when a request is refused before or outside a view: a failed CSRF check,
403, 404 and 400. Pages get Concord's page with the reason and a way on; the API keeps answering
JSON in the shape DRF uses (``{"detail": ...}``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.csrf import requires_csrf_token

CSRF_FAILED = "CSRF Failed: {reason}"
API_NOT_FOUND = "Not found."
API_FORBIDDEN = "You do not have permission to perform this action."
API_BAD_REQUEST = "Bad request."


def is_api_request(request: HttpRequest) -> bool:
    """Whether the request is for the REST API, which answers in JSON whatever refuses it."""
    return request.path_info.startswith("/api/")


@requires_csrf_token
def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: the form is refused, the page says why and how to send it again."""
    if is_api_request(request):
        return JsonResponse({"detail": CSRF_FAILED.format(reason=reason)}, status=403)
    return render(request, "403_csrf.html", {"reason": reason}, status=403)


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse({"detail": str(exception) or API_FORBIDDEN}, status=403)
    return defaults.permission_denied(request, exception)


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse({"detail": API_NOT_FOUND}, status=404)
    return defaults.page_not_found(request, exception)


@requires_csrf_token
def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_request(request):
        return JsonResponse({"detail": API_BAD_REQUEST}, status=400)
    return defaults.bad_request(request, exception)
