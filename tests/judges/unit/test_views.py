"""Researcher pages: create a judge, launch and watch a run, read failed items with their raw output."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from judges.models import Judge, JudgeRun
from judges.services import judge_run_start
from tests.judges.conftest import add_items, make_judge, run_now
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def team(copa, make_user):
    people = {name: make_user(name) for name in ("res", "ann")}
    membership_add(project=copa, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=copa, user=people["ann"], role=Role.ANNOTATOR)
    return copa, people


@pytest.fixture
def researcher(client, team):
    client.force_login(team[1]["res"])
    return client


class AccessTests:
    def test_annotators_never_see_what_a_judge_said(self, client, team):
        project, people = team
        run = run_now(make_judge("copa_likert", "baseline"), project)
        client.force_login(people["ann"])
        for url in (
            reverse("project_judges", args=[project.slug]),
            reverse("judge_run_detail", args=[project.slug, run.pk]),
            reverse("judge_run_progress", args=[project.slug, run.pk]),
        ):
            response = client.get(url)
            assert response.status_code == 403

    def test_sign_in_first(self, client, team):
        response = client.get(reverse("project_judges", args=[team[0].slug]))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    def test_the_project_page_links_to_its_judges(self, researcher, team):
        page = researcher.get(reverse("project_detail", args=[team[0].slug]))
        assert reverse("project_judges", args=[team[0].slug]).encode() in page.content


class JudgePageTests:
    def test_create_a_judge(self, researcher, team, llm_server):
        project, _ = team
        url = reverse("judge_new", args=[project.slug])
        form = {
            "name": "qwen evaluator",
            "backend": "openai",
            "model": "Qwen/Qwen3-32B",
            "endpoint": "default",
            "prompt": "copa_likert_evaluation.v1",
            "temperature": "0",
            "max_tokens": "1024",
            "seed": "42",
        }
        response = researcher.post(url, form)
        assert response.status_code == 302
        judge = Judge.objects.get()
        assert (judge.name, judge.model, judge.prompt_key, judge.max_tokens, judge.endpoint) == (
            "qwen evaluator",
            "Qwen/Qwen3-32B",
            "copa_likert_evaluation.v1",
            1024,
            "default",
        )
        again = researcher.post(url, {**form, "name": "same again"})
        assert again.status_code == 400 and b"already has this configuration" in again.content
        wrong = researcher.post(url, {**form, "backend": "baseline"})
        assert wrong.status_code == 400
        assert "prompts for &#x27;copa_likert&#x27; with backend &#x27;baseline&#x27;: copa_jaccard.v1" in wrong.text

    def test_a_baseline_is_labelled_as_such(self, researcher, team):
        project, _ = team
        make_judge("copa_likert", "baseline", name="lexical overlap")
        page = researcher.get(reverse("project_judges", args=[project.slug])).content.decode()
        assert "lexical overlap" in page and "baseline, not an LLM" in page

    def test_launch_and_watch_a_run(self, researcher, team, llm_server):
        project, _ = team
        add_items(project, 4)
        judge = make_judge()
        response = researcher.post(reverse("judge_run_launch", args=[project.slug]), {"judge": judge.pk})
        run = JudgeRun.objects.get()
        assert response.status_code == 302 and response["Location"] == reverse(
            "judge_run_detail", args=[project.slug, run.pk]
        )
        assert (run.status, run.ok_count) == ("completed", 4)  # tasks run in-process here
        page = researcher.get(reverse("project_judges", args=[project.slug])).content.decode()
        assert "4 / 4 done: 4 ok, 0 failed" in page
        assert 'hx-trigger="every 1s"' not in page  # a finished run is not polled

    def test_a_running_run_is_polled_with_its_rate_and_eta(self, researcher, team):
        project, _ = team
        add_items(project, 4)
        run = judge_run_start(judge=make_judge("copa_likert", "baseline"), project=project)
        partial = researcher.get(reverse("judge_run_progress", args=[project.slug, run.pk]), HTTP_HX_REQUEST="true")
        html = partial.content.decode()
        assert html.lstrip().startswith(f'<div id="run-progress-{run.pk}"') and "<html" not in html
        assert 'hx-trigger="every 1s"' in html and "0 / 4 done" in html


class RunPageTests:
    def test_failed_items_show_their_raw_output_and_reason(self, researcher, team, llm_server):
        project, _ = team
        add_items(project, 3)
        llm_server.script = lambda r: Reply.text("I think 2/2 overall") if "#1#" in r.text else valid_answer(r)
        run = run_now(make_judge(), project)
        failed = researcher.get(reverse("judge_run_detail", args=[project.slug, run.pk]), {"show": "failed"})
        page = failed.content.decode()
        assert failed.context["page"].paginator.count == 1 and "item-00001" in page and "item-00002" not in page
        assert "I think 2/2 overall" in page and "not valid JSON" in page

    def test_cancel_and_resume(self, researcher, team):
        project, _ = team
        add_items(project, 3)
        run = judge_run_start(judge=make_judge("copa_likert", "baseline"), project=project)
        researcher.post(reverse("judge_run_cancel", args=[project.slug, run.pk]))
        run.refresh_from_db()
        assert run.status == "cancelled"
        researcher.post(reverse("judge_run_resume", args=[project.slug, run.pk]))
        run.refresh_from_db()
        assert (run.status, run.ok_count) == ("completed", 3)
        response = researcher.post(reverse("judge_run_cancel", args=[project.slug, run.pk]), follow=True)
        assert b"only a running run can be cancelled" in response.content


class JudgesPageWalkthroughTests:
    """The judges page reads top-down as a workflow and its run page shows what the judge said."""

    def test_sections_run_new_judge_then_launch_then_runs(self, researcher, team):
        project, _ = team
        make_judge("copa_likert", "baseline")
        page = researcher.get(reverse("project_judges", args=[project.slug])).content.decode()
        order = [page.index(f'id="{name}-heading"') for name in ("new-judge", "judges", "launch", "runs")]
        assert order == sorted(order)

    def test_a_judge_just_created_is_chosen_in_the_launch_form(self, researcher, team):
        project, _ = team
        make_judge("copa_likert", "baseline", name="older")
        form = {"name": "newer", "backend": "baseline", "prompt": "", "temperature": "0", "max_tokens": "16"}
        response = researcher.post(reverse("judge_new", args=[project.slug]), {**form, "seed": "7"})
        judge = Judge.objects.get(name="newer")
        assert response.status_code == 302 and f"?judge={judge.pk}" in response["Location"]
        page = researcher.get(response["Location"])
        assert page.context["run_form"]["judge"].value() == judge.pk
        assert f'<option value="{judge.pk}" selected>' in page.content.decode()
        assert "---------</option>" not in page.content.decode().split('id="launch-heading"')[1]

    def test_a_kind_without_a_baseline_is_not_offered_one(self, researcher, make_project, team):
        _, people = team
        rationale = make_project("rationale_inspection", slug="rationale")
        membership_add(project=rationale, user=people["res"], role=Role.RESEARCHER)
        page = researcher.get(reverse("project_judges", args=[rationale.slug]))
        assert "baseline" not in [value for value, _ in page.context["judge_form"].fields["backend"].choices]
        refused = researcher.post(reverse("judge_new", args=[rationale.slug]), {"backend": "baseline"})
        assert refused.status_code == 400 and not Judge.objects.filter(project=rationale).exists()

    def test_a_finished_run_offers_no_cancel(self, researcher, team):
        project, _ = team
        add_items(project, 2)
        done = run_now(make_judge("copa_likert", "baseline"), project)
        for url in (
            reverse("judge_run_detail", args=[project.slug, done.pk]),
            reverse("judge_run_progress", args=[project.slug, done.pk]),
            reverse("project_judges", args=[project.slug]),
        ):
            assert "Cancel run" not in researcher.get(url).content.decode()

    def test_a_running_run_offers_cancel_inside_its_polled_progress(self, researcher, team):
        project, _ = team
        add_items(project, 2)
        running = judge_run_start(judge=make_judge("copa_likert", "baseline"), project=project)
        partial = researcher.get(reverse("judge_run_progress", args=[project.slug, running.pk])).content.decode()
        assert "Cancel run" in partial and 'hx-trigger="every 1s"' in partial

    def test_run_page_links_the_agreement_report_with_this_run(self, researcher, team):
        project, _ = team
        add_items(project, 2)
        run = run_now(make_judge("copa_likert", "baseline"), project)
        page = researcher.get(reverse("judge_run_detail", args=[project.slug, run.pk])).content.decode()
        assert f'href="{reverse("report", args=[project.slug])}?judge={run.pk}"' in page
        assert "manage.py agreement" not in page

    def test_run_page_shows_what_the_judge_said_on_each_item_paginated(self, researcher, team, monkeypatch):
        from judges import views

        monkeypatch.setattr(views, "ITEMS_PER_PAGE", 2)
        project, _ = team
        add_items(project, 3)
        run = run_now(make_judge("copa_likert", "baseline"), project)
        url = reverse("judge_run_detail", args=[project.slug, run.pk])
        first = researcher.get(url)
        page = first.content.decode()
        assert "item-00000" in page and "item-00001" in page and "item-00002" not in page
        assert "Cognitive Trust" in page and '"scores"' not in page and "page 1 of 2" in page
        assert "item-00002" in researcher.get(url, {"page": 2}).content.decode()
        assert researcher.get(url, {"show": "failed"}).context["page"].paginator.count == 0
        assert researcher.get(url, {"show": "nonsense"}).status_code == 200
