import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from judges.services import judge_create, judge_run_start
from judges.tasks import judge_run_dispatch

COPA = get_kind("copa_likert")
SCORES = COPA.example_value()["scores"]

@pytest.mark.django_db
@pytest.mark.parametrize("exposure", ["hidden", "shown"])
def test_count(client, make_project, make_user, tmp_path, exposure):
    project = make_project("copa_likert", overlap=2, suggestion_exposure=exposure)
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 20)))
    run = judge_run_start(judge=judge_create(project=project, backend="baseline"), project=project)
    judge_run_dispatch(run_id=run.pk)
    u = make_user("ann1"); membership_add(project=project, user=u, role=Role.ANNOTATOR)
    client.force_login(u)
    r = client.get(reverse("workspace", args=[project.slug]))
    a = r.context["assignment"]
    r = client.post(reverse("assignment_submit", args=[project.slug, a.pk]), {**SCORES, "idempotency_key": "k1"}, HTTP_HX_REQUEST="true")
    a = r.context["assignment"]
    with CaptureQueriesContext(connection) as q:
        r = client.post(reverse("assignment_submit", args=[project.slug, a.pk]), {**SCORES, "idempotency_key": "k2"}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    print(exposure, len(q))
    for x in q: print("   ", x["sql"][:200].replace("\n"," "))
