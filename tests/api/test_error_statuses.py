"""The API's one exception handler answers every domain error with the status its class declares."""

from __future__ import annotations

import pytest

from accounts.errors import TokenNotFound
from annotation.assignments import AssignmentClosed, MemberPaused, NotAssigned
from annotation.errors import (
    REQUEST_REFUSED,
    ConcordError,
    ConcurrentEdit,
    FieldError,
    ImportRejected,
    ValidationFailed,
    ValueNotPermitted,
)
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.member_services import LastResearcher
from annotation.models import Role
from annotation.services import ProjectArchived, membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from config.api import exception_handler, field_messages
from judges.errors import RunStateError
from tests.api.conftest import client_for

COPA = get_kind("copa_likert")


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
                ConcurrentEdit,
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
            "ConcurrentEdit": 409,
        }

    def test_a_new_error_is_answered_with_its_declared_status_and_code(self):
        class Teapot(ConcordError):
            code = "teapot"
            http_status = 418

        response = exception_handler(Teapot("short and stout", extra={"spout": 1}), {})
        assert response.status_code == 418
        assert response.data == {"code": "teapot", "detail": "short and stout", "errors": [], "spout": 1}

    def test_a_refused_value_keeps_its_field_errors_and_its_status(self):
        response = exception_handler(ValueNotPermitted([FieldError("review", "experts only", 3)]), {})
        assert response.status_code == 403
        assert response.data["errors"] == [{"field": "review", "message": "experts only", "line": 3}]


@pytest.mark.django_db
class OneErrorShapeTests:
    """Every refusal of the API answers ``{"code", "detail", "errors": [...]}`` (docs/api.md, Errors),
    whichever part refused it: a domain error, a serializer, the parser, authentication, routing or
    the body limit in front of everything."""

    @pytest.fixture
    def annotator(self, make_project, make_user, tmp_path):
        project = make_project("copa_likert", slug="main")
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 2)))
        user = make_user("ann1")
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        client = client_for(user)
        held = client.post("/api/projects/main/assignments/next/").json()
        return client, held["id"]

    def refusals(self, client, held: int, settings) -> dict[str, tuple[int, object]]:
        settings.CONCORD_REQUEST_MAX_BYTES = 1000
        submit = f"/api/assignments/{held}/submit/"
        return {
            "domain error": (404, client.post("/api/assignments/999999/submit/", {"value": {}}, format="json")),
            "field errors": (400, client.post(submit, {"value": {"scores": {"CT": 9}}}, format="json")),
            "serializer": (400, client.post(f"/api/assignments/{held}/skip/", {}, format="json")),
            "parser": (400, client.generic("POST", submit, "{not json", content_type="application/json")),
            "no credentials": (401, client_for().get("/api/projects/")),
            "no such project": (404, client.get("/api/projects/nope/")),
            "no such address": (404, client.get("/api/nothing-here/")),
            "roles": (403, client.get("/api/projects/main/items/")),
            "body limit": (413, client.generic("POST", submit, "x" * 2000, content_type="application/json")),
        }

    def test_every_refusal_has_the_one_shape(self, annotator, settings):
        client, held = annotator
        for what, (expected, response) in self.refusals(client, held, settings).items():
            body = response.json()
            assert response.status_code == expected, what
            assert {"code", "detail", "errors"} <= set(body), what
            assert isinstance(body["code"], str) and body["code"] and isinstance(body["detail"], str), what
            assert all(set(error) == {"field", "message", "line"} for error in body["errors"]), what

    def test_a_serializer_refusal_lists_its_fields(self, annotator):
        client, held = annotator
        body = client.post(f"/api/assignments/{held}/skip/", {}, format="json").json()
        assert body["code"] == "invalid" and body["detail"] == REQUEST_REFUSED
        assert body["errors"] == [{"field": "reason", "message": "This field is required.", "line": None}]

    def test_nested_field_errors_name_their_path(self):
        detail = {"records": {0: {"note": ["too long"]}}, "non_field_errors": ["whole request"]}
        assert field_messages(detail) == [("records[0].note", "too long"), ("", "whole request")]
