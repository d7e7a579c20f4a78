"""Domain errors. Each carries a stable ``code`` and ``extra`` details for the API and the pages."""

from __future__ import annotations

from dataclasses import dataclass, field


class ConcordError(Exception):
    """Base of every error Concord reports to a person or a client.

    Every app's errors subclass it, each with a stable ``code`` and the ``http_status`` the API answers
    it with (config/api.py reads the attribute; pages may too), so no list of errors is kept elsewhere.
    """

    code = "error"
    http_status = 400

    def __init__(self, message: str, *, extra: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


@dataclass(frozen=True)
class FieldError:
    """One problem with one field of a record, in words a person can act on."""

    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        if not self.field and self.line is None:
            return self.message  # about the whole file or value: no line or field to name
        where = f"line {self.line}, " if self.line is not None else ""
        target = f"field {self.field}" if self.field else "record"
        return f"{where}{target}: {self.message}"


class ValidationFailed(ConcordError):
    code = "invalid"

    def __init__(self, errors: list[FieldError], *, total: int | None = None) -> None:
        self.errors = errors
        self.total = total if total is not None else len(errors)
        lines = [str(e) for e in errors]
        if self.total > len(errors):
            lines.append(f"... and {self.total - len(errors)} more errors")
        super().__init__("\n".join(lines), extra={"errors": [e.__dict__ for e in errors], "total": self.total})


class ValueNotPermitted(ValidationFailed):
    """A valid value that the rater's roles do not allow (e.g. an annotator giving an expert's review)."""

    code = "not_permitted"
    http_status = 403


class ImportRejected(ValidationFailed):
    """A file failed validation; nothing from it was stored."""

    code = "import_rejected"


class ConcurrentEdit(ConcordError):
    code = "concurrent_edit"
    http_status = 409


#: The ``detail`` of an API answer that refuses fields of a request (docs/api.md, Errors).
REQUEST_REFUSED = "the request was refused; nothing was stored"


def error_body(*, code: str, detail: str, errors: list[FieldError] | None = None, **extra: object) -> dict:
    """The one shape of every API error answer (docs/api.md, Errors): a stable ``code``, a sentence
    in ``detail``, the field errors in ``errors`` (empty when the refusal is not about a field), and
    the error's own details beside them."""
    listed = [{"field": e.field, "message": e.message, "line": e.line} for e in errors or []]
    return {**extra, "code": code, "detail": detail, "errors": listed}


def error_body_of(error: ConcordError) -> dict:
    """``error_body`` of a domain error: its code, message and details; field errors with their count."""
    if isinstance(error, ValidationFailed):
        return error_body(code=error.code, detail=REQUEST_REFUSED, errors=error.errors, total=error.total)
    return error_body(code=error.code, detail=error.message, **error.extra)


@dataclass
class ErrorCollector:
    """Keeps the first ``cap`` errors and counts the rest, so a huge bad file stays cheap."""

    cap: int = 50
    errors: list[FieldError] = field(default_factory=list)
    total: int = 0

    def add(self, error: FieldError) -> None:
        self.total += 1
        if len(self.errors) < self.cap:
            self.errors.append(error)

    def count_more(self, n: int) -> None:
        """Count errors found in bulk (by a query) beyond those added one by one."""
        self.total += n

    def extend(self, errors: list[FieldError], *, line: int | None) -> None:
        for e in errors:
            self.add(FieldError(e.field, e.message, line))

    def __bool__(self) -> bool:
        return self.total > 0
