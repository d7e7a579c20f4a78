"""Property-based requests generated from /api/schema/: whatever is sent, the API answers without a 500."""

import pytest
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.openapi import from_wsgi

from accounts.services import api_token_create
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db(transaction=True)
EXAMPLES_PER_OPERATION = 15


@pytest.fixture
def tokens(make_project, make_user, tmp_path):
    project = make_project("copa_likert", slug="fuzz")
    import_items(
        project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(get_kind("copa_likert"), 30))
    )
    found = {}
    for name, role in (("res", Role.RESEARCHER), ("ann", Role.ANNOTATOR)):
        user = make_user(name)
        membership_add(project=project, user=user, role=role)
        found[name] = api_token_create(user=user)[1]
    return found


@pytest.mark.parametrize("who", ["res", "ann"])
def test_no_operation_answers_500(tokens, who):
    schema = from_wsgi("/api/schema/", get_wsgi_application())
    failures: list[str] = []
    # Starting judge runs is left out: a generated base URL would send requests off this machine.
    # Revoking the token would leave the rest of the run unauthenticated.
    left_out = {"POST /api/projects/{slug}/runs/", "DELETE /api/token/"}
    operations = [
        operation
        for operation in (result.ok() for result in schema.get_all_operations())
        if operation.label not in left_out
    ]
    assert len(operations) >= 12
    for operation in operations:
        fuzz_operation(operation, tokens[who], failures)
    assert failures == []


def fuzz_operation(operation, token: str, failures: list[str]) -> None:
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case=operation.as_strategy(), use_real_slug=st.booleans())
    def run(case, use_real_slug):
        if use_real_slug and case.path_parameters and "slug" in case.path_parameters:
            case.path_parameters["slug"] = "fuzz"  # reach the real handlers, not only 404s
        response = case.call(headers={"Authorization": f"Token {token}"})
        if response.status_code >= 500:
            failures.append(f"{operation.label}: {response.status_code} for {case.path_parameters} {case.body!r}")

    run()
