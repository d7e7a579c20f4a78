"""The one exception handler of the REST API: domain errors and Django's map to clear 4xx answers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.errors import ConcordError, ValidationFailed


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ValidationFailed):
        body = {
            "code": exc.code,
            "detail": "the request was refused; nothing was stored",
            "errors": [{"field": e.field, "message": e.message, "line": e.line} for e in exc.errors],
            "total": exc.total,
        }
        return Response(body, status=exc.http_status)
    if isinstance(exc, ConcordError):
        # Each error class declares its status (annotation.errors.ConcordError.http_status and subclasses).
        return Response({"code": exc.code, "detail": exc.message, **exc.extra}, status=exc.http_status)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    return drf_exception_handler(exc, context)
