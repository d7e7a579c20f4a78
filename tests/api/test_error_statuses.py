"""The API's one exception handler answers every domain error with the status its class declares."""

from __future__ import annotations

from accounts.errors import TokenNotFound
from annotation.assignments import AssignmentClosed, MemberPaused, NotAssigned
from annotation.errors import ConcordError, FieldError, ImportRejected, ValidationFailed, ValueNotPermitted
from annotation.member_services import LastResearcher
from annotation.services import ProjectArchived
from config.api import exception_handler
from judges.errors import RunStateError


class ErrorStatusTests:
    def test_each_error_class_declares_the_status_the_api_answers(self):
        assert {
            cls.__name__: cls.http_status
            for cls in (
                ValidationFailed,
                ImportRejected,
                ValueNotPermitted,
                NotAssigned,
                AssignmentClosed,
                ProjectArchived,
                MemberPaused,
                LastResearcher,
                RunStateError,
                TokenNotFound,
            )
        } == {
            "ValidationFailed": 400,
            "ImportRejected": 400,
            "ValueNotPermitted": 403,
            "NotAssigned": 404,
            "AssignmentClosed": 409,
            "ProjectArchived": 403,
            "MemberPaused": 403,
            "LastResearcher": 409,
            "RunStateError": 400,
            "TokenNotFound": 400,
        }

    def test_a_new_error_is_answered_with_its_declared_status_and_code(self):
        class Teapot(ConcordError):
            code = "teapot"
            http_status = 418

        response = exception_handler(Teapot("short and stout", extra={"spout": 1}), {})
        assert response.status_code == 418
        assert response.data == {"code": "teapot", "detail": "short and stout", "spout": 1}

    def test_a_refused_value_keeps_its_field_errors_and_its_status(self):
        response = exception_handler(ValueNotPermitted([FieldError("review", "experts only", 3)]), {})
        assert response.status_code == 403
        assert response.data["errors"] == [{"field": "review", "message": "experts only", "line": 3}]
