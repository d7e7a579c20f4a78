"""The one exception handler of the REST API: domain errors, DRF's and Django's all answer in one
shape, ``{"code", "detail", "errors": [{"field", "message", "line"}]}`` (docs/api.md, Errors)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.errors import REQUEST_REFUSED, ConcordError, FieldError, ValidationFailed, error_body, error_body_of


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ConcordError):
        # Each error class declares its status (annotation.errors.ConcordError.http_status and subclasses).
        return Response(error_body_of(exc), status=exc.http_status)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    # DRF sets the status and headers (WWW-Authenticate, Retry-After); the body takes the one shape.
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        response.data = _drf_body(exc)
    return response


def _drf_body(exc: exceptions.APIException) -> dict:
    if isinstance(exc, exceptions.ValidationError):
        errors = [FieldError(name, message) for name, message in field_messages(exc.detail)]
        return error_body(code=ValidationFailed.code, detail=REQUEST_REFUSED, errors=errors)
    codes = exc.get_codes()
    return error_body(code=codes if isinstance(codes, str) else exc.default_code, detail=str(exc.detail))


def field_messages(detail: Any, path: str = "") -> list[tuple[str, str]]:
    """(field path, message) of each message in a DRF error detail: nested fields joined by dots,
    list positions in brackets (``records[0].note``), errors of the whole request under ``""``."""
    if isinstance(detail, dict):
        found = []
        for key, value in detail.items():
            if isinstance(key, int):
                name = f"{path}[{key}]"
            elif key in ("non_field_errors", "detail"):
                name = path
            else:
                name = f"{path}.{key}" if path else str(key)
            found.extend(field_messages(value, name))
        return found
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [(path, str(item)) for item in detail]
        found = []
        for index, item in enumerate(detail):
            found.extend(field_messages(item, f"{path}[{index}]") if item else [])
        return found
    return [(path, str(detail))]
