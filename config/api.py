"""The one exception handler of the REST API: domain errors and Django's map to clear 4xx answers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.assignments import AssignmentClosed, MemberPaused, NotAssigned
from annotation.errors import ConcordError, ValidationFailed, ValueNotPermitted
from annotation.member_services import LastResearcher
from annotation.services import ProjectArchived

STATUS_BY_ERROR: list[tuple[type[ConcordError], int]] = [
    (ValidationFailed, status.HTTP_400_BAD_REQUEST),
    (NotAssigned, status.HTTP_404_NOT_FOUND),
    (AssignmentClosed, status.HTTP_409_CONFLICT),
    (ProjectArchived, status.HTTP_403_FORBIDDEN),
    (MemberPaused, status.HTTP_403_FORBIDDEN),
    (LastResearcher, status.HTTP_409_CONFLICT),
]


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ValidationFailed):
        body = {
            "code": exc.code,
            "detail": "the request was refused; nothing was stored",
            "errors": [{"field": e.field, "message": e.message, "line": e.line} for e in exc.errors],
            "total": exc.total,
        }
        refused = status.HTTP_403_FORBIDDEN if isinstance(exc, ValueNotPermitted) else status.HTTP_400_BAD_REQUEST
        return Response(body, status=refused)
    if isinstance(exc, ConcordError):
        code = next((code for kind, code in STATUS_BY_ERROR if isinstance(exc, kind)), status.HTTP_400_BAD_REQUEST)
        return Response({"code": exc.code, "detail": exc.message, **exc.extra}, status=code)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    return drf_exception_handler(exc, context)
