"""The annotator's hot path in SQL statements: a keyboard submit that serves the next item, on the
page and through the API. A change that adds a statement here fails (issue: half the server work
per label); transaction control (BEGIN, SAVEPOINT, COMMIT) is not counted."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Role, SuggestionExposure
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from judges.execution import JUDGE_RUNS
from judges.services import judge_create, judge_run_start
from judges.tasks import run_dispatch
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
SCORES = COPA.example_value()["scores"]

#: Statements of one submit that serves the next item: the project, roles and assignment (1), close
#: and store (2), the user's place with their progress (1), find and take the next item (1), record
#: the claim and move the place on (2); the session user (1) on the page. The API reads the token
#: with its user (1) and the assignment with its project (1) instead of the page's first two. A
#: shown suggestion adds one: found once when the item is claimed.
PAGE_SUBMIT_STATEMENTS = {SuggestionExposure.HIDDEN: 8, SuggestionExposure.SHOWN: 9}
API_SUBMIT_STATEMENTS = {SuggestionExposure.HIDDEN: 8, SuggestionExposure.SHOWN: 9}
TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT", "BEGIN", "COMMIT")


def statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if not q["sql"].lstrip().startswith(TRANSACTION_CONTROL)]


@pytest.fixture
def judged(make_project, make_user, tmp_path):
    """A CoPA project of 20 items with a finished baseline run (a suggestion per item), one annotator."""

    def make(exposure: str):
        project = make_project("copa_likert", overlap=2, suggestion_exposure=exposure)
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 20)))
        run = judge_run_start(judge=judge_create(project=project, backend="baseline"), project=project)
        run_dispatch(run_type=JUDGE_RUNS, run_id=run.pk)  # tasks run in-process here: the run is done on return
        annotator = make_user("ann1")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        return project, annotator

    return make


def page_submit(client, project, assignment, key: str):
    url = reverse("assignment_submit", args=[project.slug, assignment.pk])
    return client.post(url, {**SCORES, "idempotency_key": key}, HTTP_HX_REQUEST="true")


class PageSubmitStatementTests:
    @pytest.mark.parametrize("exposure", [SuggestionExposure.HIDDEN, SuggestionExposure.SHOWN])
    def test_a_keyboard_submit_that_serves_the_next_item_stays_within_its_statements(self, client, judged, exposure):
        project, annotator = judged(exposure)
        client.force_login(annotator)
        first = client.get(reverse("workspace", args=[project.slug])).context["assignment"]
        # The second submit is the steady state: the user's place exists, the caches are warm.
        second = page_submit(client, project, first, "k1").context["assignment"]
        with CaptureQueriesContext(connection) as queries:
            response = page_submit(client, project, second, "k2")
        assert response.status_code == 200
        served = response.context["assignment"]
        assert served is not None and served.item_id not in (first.item_id, second.item_id)
        assert len(statements(queries)) <= PAGE_SUBMIT_STATEMENTS[exposure], "\n".join(statements(queries))
        # What was counted still did the whole job: the answer stored with what the page showed,
        # and the next item's form shows (and is filled with) the suggestion where the project shows it.
        stored = Annotation.objects.get(item_id=second.item_id)
        assert stored.value == {"scores": SCORES}
        assert stored.suggestion_visible is (exposure == SuggestionExposure.SHOWN)
        assert ("Machine suggestion" in response.content.decode()) is (exposure == SuggestionExposure.SHOWN)
        assert response.context["progress"].done == 2


class ApiSubmitNextStatementTests:
    @pytest.mark.parametrize("exposure", [SuggestionExposure.HIDDEN, SuggestionExposure.SHOWN])
    def test_submit_with_next_stays_within_its_statements(self, judged, exposure):
        project, annotator = judged(exposure)
        api = client_for(annotator)
        held = api.post(f"/api/projects/{project.slug}/assignments/next/").json()
        value = COPA.example_value()
        held = api.post(f"/api/assignments/{held['id']}/submit/?next=true", {"value": value}, format="json")
        held = held.json()["next"]
        with CaptureQueriesContext(connection) as queries:
            response = api.post(f"/api/assignments/{held['id']}/submit/?next=true", {"value": value}, format="json")
        assert response.status_code == 201
        assert len(statements(queries)) <= API_SUBMIT_STATEMENTS[exposure], "\n".join(statements(queries))
        body = response.json()
        assert body["assignment"] == held["id"] and body["next"]["id"] not in (held["id"], None)
        assert (body["next"]["suggestion"] is not None) is (exposure == SuggestionExposure.SHOWN)
