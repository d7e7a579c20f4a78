"""A seventh task kind, written as a test fixture from the kind contract alone, works through every layer.

Pairwise preference (``tests/fixture_kinds/``: two responses, A / B / tie, the A/B order drawn per
annotator and recorded with the answer) is registered by its registry line and its folders
(``tests.support.kind_mount``), then goes through what a real kind goes through: items imported, the
form answered in the workspace through the real views, its report built, its paper evaluation (position
bias) computed on the generic evaluation page, and its generation step run against the scripted LLM
server. No file outside tests/ names it: a kind is new files plus one line.
"""

from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from scipy.stats import binomtest

from annotation.assignments import assignment_presentation, presentation_seed
from annotation.importing import import_items
from annotation.kinds import all_kinds, get_kind
from annotation.models import Annotation, Assignment, Item, Role
from annotation.services import membership_add
from annotation.synthetic import write_jsonl
from judges.generation.steps import get_step
from tests.judges.generation.conftest import run_now, write_threads
from tests.support.fake_server import FakeLLMServer, Reply
from tests.support.kind_mount import mounted_kind
from validation.evaluations.registry import evaluation_named, evaluations_for
from validation.evaluations.snapshots import evaluation_snapshot_check
from validation.goldset import project_items_state
from validation.models import ReportSnapshot
from validation.reports import build_report, report_builder
from validation.reports.base import ReportParameters

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_KINDS = Path(__file__).resolve().parent / "fixture_kinds"
REGISTRY_LINE = "annotation.kinds.pairwise_preference.PairwisePreference"
NAME = "pairwise_preference"
ANNOTATORS = ("ann1", "ann2", "ann3")
ITEMS = 8


@pytest.fixture
def pairwise():
    with mounted_kind(FIXTURE_KINDS, REGISTRY_LINE) as name:
        yield name


@pytest.fixture
def llm_server(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.JUDGE_RETRY_BASE_SECONDS = 0.001
    settings.JUDGE_RETRY_MAX_SECONDS = 0.005
    with FakeLLMServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        yield server


@pytest.fixture
def project(pairwise, make_project, make_user, tmp_path):
    """A pairwise project of ITEMS pairs, each to every annotator, and a researcher."""
    project = make_project(pairwise, overlap=len(ANNOTATORS), seed=20261201)
    example = get_kind(pairwise).example_payload()
    records = ({"external_id": f"pair-{n}", **example, "prompt": f"#{n}# {example['prompt']}"} for n in range(ITEMS))
    result = import_items(project=project, path=write_jsonl(tmp_path / "pairs.jsonl", records))
    assert result.imported == ITEMS
    for username in ANNOTATORS:
        membership_add(project=project, user=make_user(username), role=Role.ANNOTATOR)
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    return project


def answer_everything_first(client, project, username: str) -> dict[str, list[str]]:
    """As ``username`` in the workspace, prefer the response shown first on every item (a rater
    with complete position bias); the order each page showed, by item."""
    client.force_login(get_user_model().objects.get(username=username))
    shown: dict[str, list[str]] = {}
    response = client.get(reverse("workspace", args=[project.slug]))
    while response.context["assignment"] is not None:
        assignment = response.context["assignment"]
        payload = assignment.item.payload
        page = response.content.decode()
        # The page shows both responses in the drawn order, and nothing of who wrote them.
        texts = [entry["text"] for entry in response.context["form"]["shown"]]
        assert page.index(html.escape(texts[0])) < page.index(html.escape(texts[1]))
        assert "accepted answer" not in page
        shown[assignment.item.external_id] = [
            key for text in texts for key in "ab" if payload[f"response_{key}"] == text
        ]
        url = reverse("assignment_submit", args=[project.slug, assignment.pk])
        # A crafted field naming an order is ignored: the order recorded is the one the server drew.
        response = client.post(url, {"preferred": "first", "shown_first": "a", "shown_order": "a,b"})
        assert response.status_code == 302
        response = client.get(reverse("workspace", args=[project.slug]))
    return shown


@pytest.mark.django_db
class FixtureKindTests:
    def test_the_kind_is_answered_reported_evaluated_and_generated_without_a_shared_edit(
        self, client, project, make_project, llm_server, tmp_path
    ):
        kind = get_kind(NAME)
        assert kind.form_template == f"{NAME}/form.html"

        # -- the form, per annotator ------------------------------------------------------------
        shown = {username: answer_everything_first(client, project, username) for username in ANNOTATORS}
        assert all(len(orders) == ITEMS for orders in shown.values())
        stored = list(Annotation.objects.filter(project=project).select_related("item", "annotator"))
        assert len(stored) == ITEMS * len(ANNOTATORS)
        for annotation in stored:
            order = shown[annotation.rater][annotation.item.external_id]
            assignment = Assignment.objects.get(item=annotation.item, annotator=annotation.annotator)
            seed = presentation_seed(project=project, item_id=annotation.item_id, annotator_id=annotation.annotator_id)
            # What the page showed is the kind's presentation for that seed, and the answer records it.
            assert kind.presentation(payload=annotation.item.payload, seed=seed) == {"order": order}
            assert assignment_presentation(assignment=assignment) == {"order": order}
            assert annotation.value == {"preferred": order[0], "shown_first": order[0]}
        # Drawn per annotator: on some item two annotators saw different orders, and an annotator saw both
        # orders over the items (neither a shared nor a fixed order). Not every annotator: the seeds come
        # from the database's ids, and one of three sees a single order over 8 items about once in 40 runs.
        firsts = {(a.item.external_id, a.rater): a.value["shown_first"] for a in stored}
        assert any(len({firsts[(item, rater)] for rater in ANNOTATORS}) == 2 for item in shown["ann1"])
        assert any(len({firsts[(item, rater)] for item in shown[rater]}) == 2 for rater in ANNOTATORS)

        # Gold is the majority's judgement, not how it was shown to the rater it came from.
        gold = [state.gold.value for state in project_items_state(project=project, with_reasons=False)]
        assert len(gold) == ITEMS and all(value is None or set(value) == {"preferred"} for value in gold)
        assert any(value is not None for value in gold)

        # -- its report --------------------------------------------------------------------------
        assert type(report_builder(kind)).__name__ == "PairwisePreferenceReport"
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0))
        preferences = report.table("pairwise_preferences")
        counts = {row.label: row.cells[0].value for row in preferences.rows}
        preferred = [a.value["preferred"] for a in stored]
        assert counts == {"A": preferred.count("a"), "B": preferred.count("b"), "tie": 0}
        assert set(report.agreement.dimensions) == {"preferred"}

        # -- its paper evaluation, on the generic page ---------------------------------------------
        declared = evaluation_named("position_bias")
        assert declared.kind == NAME and declared in evaluations_for(project)
        client.force_login(project.memberships.get(role=Role.RESEARCHER).user)
        page = client.get(reverse("evaluation", args=[project.slug, declared.slug]), {"confidence_level": "0.9"})
        assert page.status_code == 200 and "Position bias" in page.content.decode()
        result = page.context["evaluation"].result
        n = ITEMS * len(ANNOTATORS)
        expected = binomtest(n, n, p=0.5)
        interval = expected.proportion_ci(confidence_level=0.9)
        assert (result["n"], result["first"], result["ties"]) == (n, n, 0)
        assert result["first_shown_preferred"] == {"statistic": 1.0, "confidence_interval": [interval.low, 1.0]}
        assert result["p_value"] == pytest.approx(expected.pvalue)

        # Frozen like any evaluation, and recomputed to the same numbers.
        frozen = client.post(
            reverse("evaluation_freeze", args=[project.slug, declared.slug]), {"confidence_level": "0.9"}
        )
        assert frozen.status_code == 302
        snapshot = ReportSnapshot.objects.get(project=project)
        assert snapshot.evaluation == "position_bias"
        check = evaluation_snapshot_check(snapshot=snapshot)
        assert check.inputs_match and check.numbers_match

        # -- its generation step, against the scripted LLM server ------------------------------------
        step = get_step("pairwise_response")
        assert step.kind == NAME
        llm_server.script = lambda request: Reply.json({"response": "Keep it dry and cool."})
        generated = make_project(NAME, slug="generated-pairs")
        run = run_now(
            project=generated, step=step.name, path=write_threads(tmp_path / "threads.jsonl", 3), backend="openai"
        )
        assert (run.status, run.ok_count, run.items_created) == ("completed", 3, 3)
        made = list(Item.objects.filter(project=generated))
        assert {item.payload["response_b"] for item in made} == {"Keep it dry and cool."}
        assert all(kind.check_payload(item.payload) == [] for item in made)
        assert llm_server.requests and all("response" in str(r.body["response_format"]) for r in llm_server.requests)

    @pytest.mark.parametrize("answer", ["a", "b", "zzz", ""])
    def test_an_answer_the_form_does_not_offer_is_refused_and_nothing_stored(self, client, project, answer):
        client.force_login(project.memberships.get(user__username="ann1").user)
        assignment = client.get(reverse("workspace", args=[project.slug])).context["assignment"]
        url = reverse("assignment_submit", args=[project.slug, assignment.pk])
        response = client.post(url, {"preferred": answer}, HTTP_HX_REQUEST="true")
        assert response.status_code == 422 and "Choose response 1, response 2 or tie." in response.content.decode()
        assert not Annotation.objects.exists()

    def test_no_file_outside_tests_names_the_kind(self):
        """A kind is new files plus its registry line: nothing shared had to name it."""
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        naming = []
        for relative in filter(None, listed):
            path = ROOT / relative
            if relative.startswith("tests/") or not path.is_file():
                continue
            text = path.read_bytes().decode("utf-8", errors="ignore")
            if NAME in text or "PairwisePreference" in text or "pairwise_response" in text:
                naming.append(relative)
        assert naming == []

    def test_the_registration_is_undone_on_exit(self):
        """Other tests never see the kind: its registry line, folders and cached registrations go."""
        with mounted_kind(FIXTURE_KINDS, REGISTRY_LINE):
            assert NAME in [k.name for k in all_kinds()]
            assert get_step("pairwise_response").kind == NAME
            assert evaluation_named("position_bias").kind == NAME
        assert NAME not in [k.name for k in all_kinds()]
        with pytest.raises(KeyError):
            get_step("pairwise_response")
        with pytest.raises(KeyError):
            evaluation_named("position_bias")
        assert not [m for m in sys.modules if f".{NAME}" in m]
