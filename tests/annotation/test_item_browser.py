"""The item browser and the item page: who may see them, keyset pages, filters and search, the kind's
columns, every rater's answer in the kind's form, judges' suggestions and the gold panel."""

import ast
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import item_browser, item_views, member_apis, member_services, members, panels, team_views
from annotation.assignments import assignment_claim_next, assignment_skip
from annotation.item_browser import PAGE_SIZE, item_page
from annotation.kinds import get_kind
from annotation.models import Annotation, Item, Role
from annotation.panels import item_filters
from annotation.services import membership_add
from judges.models import JudgeRun, Suggestion
from judges.services import judge_get_or_create
from validation.models import Adjudication

pytestmark = pytest.mark.django_db
User = get_user_model()
COPA = get_kind("copa_likert")


def copa(*scores: int) -> dict:
    return {"scores": dict(zip(("CT", "SA", "SC", "CLM", "MS", "AMR"), scores, strict=True))}


def make_items(project, n: int, *, prefix: str = "copa") -> list[Item]:
    payload = COPA.example_payload()
    return Item.objects.bulk_create(
        Item(project=project, external_id=f"{prefix}-{i:04d}", payload=payload, order_key=i + 1) for i in range(n)
    )


def answer(item: Item, rater: str, value: dict, *, version: int = 1, seconds: float | None = 12.0, visible=None):
    return Annotation.objects.create(
        project=item.project,
        item=item,
        rater=rater,
        version=version,
        value=value,
        seconds_on_item=seconds,
        suggestion_visible=visible,
    )


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", slug="study", overlap=2)
    people = {name: make_user(name) for name in ("res", "exp", "ann", "ann2", "outsider")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["exp"], role=Role.EXPERT)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["ann2"], role=Role.ANNOTATOR)
    people["staff"] = User.objects.create_superuser("staff", "staff@example.org", "pw-for-tests-1")
    return project, people


def ids(page) -> list[str]:
    return [row.item.external_id for row in page.rows]


class PermissionTests:
    def test_who_may_browse_items_and_open_one(self, study, client):
        project, people = study
        (item,) = make_items(project, 1)
        for url in (reverse("item_list", args=[project.slug]), reverse("item_page", args=[project.slug, item.pk])):
            client.logout()
            response = client.get(url)
            assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
            for name, expected in (("outsider", 403), ("ann", 403), ("exp", 200), ("res", 200), ("staff", 200)):
                client.force_login(people[name])
                assert client.get(url).status_code == expected, (url, name)

    def test_each_row_links_to_its_item_page(self, study, client):
        project, people = study
        (item,) = make_items(project, 1)
        client.force_login(people["exp"])
        content = client.get(reverse("item_list", args=[project.slug])).content.decode()
        assert f'href="{reverse("item_page", args=[project.slug, item.pk])}"' in content

    def test_an_item_of_another_project_is_not_found(self, study, client, make_project):
        project, people = study
        other = make_project("copa_likert", slug="other")
        (foreign,) = make_items(other, 1)
        client.force_login(people["res"])
        assert client.get(reverse("item_page", args=[project.slug, foreign.pk])).status_code == 404

    def test_a_bad_query_is_a_400_not_a_500(self, study, client):
        project, people = study
        client.force_login(people["res"])
        url = reverse("item_list", args=[project.slug])
        for query in ("?after=-1", "?status=bogus", "?after=1&before=5", f"?before={2**64}", "?q=" + "x" * 101):
            assert client.get(url + query).status_code == 400, query


class PaginationTests:
    def test_keyset_pages_walk_forward_backward_and_to_the_end(self, study):
        project, _ = study
        items = make_items(project, 2 * PAGE_SIZE + 7)
        first = item_page(project=project)
        assert ids(first) == [i.external_id for i in items[:PAGE_SIZE]] and first.prev_before is None
        second = item_page(project=project, after=first.next_after)
        assert ids(second)[0] == items[PAGE_SIZE].external_id and second.prev_before == items[PAGE_SIZE].pk
        back = item_page(project=project, before=second.prev_before)
        assert ids(back) == ids(first)
        last = item_page(project=project, last=True)
        assert ids(last) == [i.external_id for i in items[-PAGE_SIZE:]] and last.next_after is None
        third = item_page(project=project, after=second.next_after)
        assert len(third.rows) == 7 and third.next_after is None

    def test_the_page_reads_the_same_number_of_queries_however_many_answers(self, study, client):
        project, people = study
        items = make_items(project, 30)
        client.force_login(people["res"])
        url = reverse("item_list", args=[project.slug])

        def count() -> int:
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            return len(queries)

        before = count()
        for item in items:
            answer(item, "ann", copa(1, 1, 1, 1, 1, 1))
            answer(item, "ann2", copa(2, 2, 2, 2, 2, 2))
        assert count() == before and before <= 8


class FilterTests:
    @pytest.fixture
    def states(self, study):
        project, people = study
        untouched, held, half, done, split, known = make_items(project, 6)
        Item.objects.filter(pk=known.pk).update(gold_value=COPA.example_value(), is_open=False)
        Item.objects.filter(pk=held.pk).update(assigned_count=1)
        answer(half, "ann", copa(1, 1, 1, 1, 1, 1))
        answer(done, "ann", copa(2, 2, 2, 2, 2, 2))
        answer(done, "ann2", copa(2, 2, 2, 2, 2, 2))
        answer(split, "ann", copa(0, 0, 0, 0, 0, 0))
        answer(split, "ann2", copa(2, 2, 2, 2, 2, 2))
        return project, people

    @pytest.mark.parametrize(
        ("status", "expected"),
        [
            ("not_started", ["copa-0000", "copa-0005"]),
            ("in_progress", ["copa-0001", "copa-0002"]),
            ("complete", ["copa-0003", "copa-0004"]),
            ("qualification", ["copa-0005"]),
            ("disagreement", ["copa-0004"]),
            ("gold_ready", ["copa-0003", "copa-0005"]),
        ],
    )
    def test_each_filter_picks_its_items(self, states, status, expected):
        project, _ = states
        assert ids(item_page(project=project, status=status)) == expected

    def test_skipped_filter_finds_skipped_items(self, study):
        project, people = study
        make_items(project, 3)
        assignment = assignment_claim_next(project=project, user=people["ann"])
        assignment_skip(assignment=assignment, reason="not English")
        assert ids(item_page(project=project, status="skipped")) == [assignment.item.external_id]

    def test_an_adjudicated_item_is_no_longer_in_disagreement(self, states):
        project, people = states
        split = Item.objects.get(external_id="copa-0004")
        Adjudication.objects.create(project=project, item=split, expert=people["exp"], value=copa(1, 1, 1, 1, 1, 1))
        assert ids(item_page(project=project, status="disagreement")) == []
        assert "copa-0004" in ids(item_page(project=project, status="gold_ready"))

    def test_validation_registers_its_filters_without_annotation_importing_it(self):
        assert {"disagreement", "gold_ready"} <= set(item_filters())
        for module in (item_browser, panels, item_views, members, member_services, member_apis, team_views):
            tree = ast.parse(Path(module.__file__).read_text())
            imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
                alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
            }
            assert not {name for name in imported if name and name.split(".")[0] in ("judges", "validation")}

    def test_search_by_external_id_prefix_and_by_text(self, study):
        project, _ = study
        make_items(project, 3)
        other = Item.objects.create(
            project=project,
            external_id="zz-1",
            payload={**COPA.example_payload(), "question": "Why is the Borrow Checker strict?"},
        )
        assert ids(item_page(project=project, q="copa-000")) == ["copa-0000", "copa-0001", "copa-0002"]
        assert ids(item_page(project=project, q="borrow checker")) == [other.external_id]

    def test_a_rare_match_is_found_by_walking_bounded_windows(self, study, monkeypatch):
        project, _ = study
        make_items(project, 25)
        monkeypatch.setattr(item_browser, "SCAN_WINDOW", 10)
        needle = Item.objects.get(external_id="copa-0022")
        answer(needle, "ann", copa(1, 1, 1, 1, 1, 1))
        page = item_page(project=project, status="in_progress")
        assert page.rows == [] and page.looked_through == Item.objects.get(external_id="copa-0009").pk
        page = item_page(project=project, status="in_progress", after=page.next_after)
        assert page.rows == [] and page.next_after == Item.objects.get(external_id="copa-0019").pk
        page = item_page(project=project, status="in_progress", after=page.next_after)
        assert ids(page) == ["copa-0022"] and page.next_after is None
        searched = item_page(project=project, q="copa-0022")
        assert searched.rows == [] and searched.exact == needle  # beyond the window, found by its id all the same


class ColumnTests:
    def test_copa_shows_the_mean_of_raters_latest_scores_per_factor(self, study):
        project, _ = study
        (item,) = make_items(project, 1)
        answer(item, "ann", copa(0, 0, 0, 0, 0, 0))
        answer(item, "ann", copa(2, 1, 0, 0, 0, 0), version=2)  # the latest version counts
        answer(item, "ann2", copa(1, 1, 1, 1, 1, 2))
        page = item_page(project=project)
        assert [c.name for c in page.score_columns] == ["CT", "SA", "SC", "CLM", "MS", "AMR"]
        assert page.rows[0].scores == [1.5, 1.0, 0.5, 0.5, 0.5, 1.0]
        assert page.rows[0].raters == 2 and page.rows[0].status == "complete"

    def test_a_nominal_kind_tallies_its_first_dimension(self, make_project):
        project = make_project("rationale_inspection", slug="rationales")
        kind = project.task_kind
        item = Item.objects.create(project=project, external_id="r1", payload=kind.example_payload())
        answer(item, "a", kind.example_value())
        page = item_page(project=project)
        assert page.score_columns == [] and page.tally_title == "Verdict" and page.rows[0].tally


class ItemPageTests:
    @pytest.fixture
    def judged(self, study):
        project, people = study
        (item,) = make_items(project, 1)
        answer(item, "ann", copa(0, 1, 2, 0, 1, 2), seconds=40.0, visible=True)
        answer(item, "ann", copa(2, 1, 2, 0, 1, 2), version=2, seconds=5.0, visible=True)
        answer(item, "ann2", copa(1, 1, 1, 1, 1, 1), visible=False)
        judge, _ = judge_get_or_create(project=project, backend="openai", model="test-llm-7b", name="evaluator")
        run = JudgeRun.objects.create(judge=judge, project=project, status=JudgeRun.Status.COMPLETED)
        Suggestion.objects.create(
            judge=judge, run=run, item=item, prompt_sha256="a" * 64, status="ok",
            value=copa(2, 2, 2, 2, 2, 2), raw_output='{"scores": "…"}',
        )  # fmt: skip
        other, _ = judge_get_or_create(project=project, backend="openai", model="test-llm-7b", name="strict", seed=7)
        Suggestion.objects.create(
            judge=other, run=JudgeRun.objects.create(judge=other, project=project), item=item, prompt_sha256="b" * 64,
            status="failed", raw_output="Sure! Here are the scores: CT=2", failure_reason="output is not JSON",
        )  # fmt: skip
        return project, people, item

    def test_each_rater_latest_answer_reads_as_compact_values_side_by_side(self, judged, client):
        project, people, item = judged
        client.force_login(people["exp"])
        response = client.get(reverse("item_page", args=[project.slug, item.pk]))
        detail = response.context["detail"]
        assert [(a.rater, a.latest.version, len(a.versions)) for a in detail.answers] == [("ann", 2, 2), ("ann2", 1, 1)]
        grid = response.context["grid"]
        assert grid.columns == ("ann", "ann2")
        rows = {row.label: row for row in grid.rows}
        assert rows["Cognitive Trust"].cells == ("2 Full", "1 Partial") and rows["Cognitive Trust"].differs
        html = response.content.decode()
        assert '"scores"' not in html  # values as the kind reads them, not JSON
        # One copy of the form (the item as annotators see it), none per rater or per suggestion.
        assert html.count("<fieldset disabled>") == 1 and 'aria-label="Answer of ann"' not in html
        assert '<th scope="col">ann2</th>' in html and "2 Full" in html and "differs" in html
        assert "5 s on item" in html and "suggestion visible" in html and "suggestion hidden" in html

    def test_judges_suggestions_and_failures_show_with_raw_output(self, judged, client):
        project, people, item = judged
        client.force_login(people["res"])
        html = client.get(reverse("item_page", args=[project.slug, item.pk])).content.decode()
        suggestion = html.split('aria-label="Suggestion of evaluator"')[1].split("</dl>")[0]
        assert "<dt>Cognitive Trust</dt><dd>2 Full</dd>" in suggestion
        assert "output is not JSON" in html and "Sure! Here are the scores: CT=2" in html

    def test_the_gold_panel_links_to_adjudication(self, judged, client):
        project, people, item = judged
        client.force_login(people["exp"])
        html = client.get(reverse("item_page", args=[project.slug, item.pk])).content.decode()
        assert reverse("adjudication_item", args=[project.slug, item.pk]) in html

    def test_item_page_queries_do_not_grow_with_raters_or_versions(self, judged, client):
        project, people, item = judged
        client.force_login(people["res"])
        url = reverse("item_page", args=[project.slug, item.pk])

        def count() -> int:
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            return len(queries)

        before = count()
        for n in range(5):
            answer(item, f"extra{n}", copa(1, 1, 1, 1, 1, 1))
            answer(item, f"extra{n}", copa(2, 1, 1, 1, 1, 1), version=2)
        assert count() == before
