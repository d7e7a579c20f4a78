"""The agreement report in Chromium: the tables first, the plots after them, and a worker's progress."""

from __future__ import annotations

import os
import time

import pytest
from django.core.cache import cache

from annotation.models import Item, Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation.report_jobs import RUNNING, JobState, job_key
from validation.reports import ReportParameters

pytestmark = pytest.mark.django_db(transaction=True)
SHOTS = os.environ.get("CONCORD_SCREENSHOTS")


@pytest.fixture
def copa_report(make_project, make_user):
    project = make_project("copa_likert", title="CoPA pilot")
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    for i, item in enumerate(add_items(project, [f"r{i}" for i in range(12)]).values()):
        annotate(project, item, "x1", copa_value(i % 3))
        annotate(project, item, "x2", copa_value((i + i % 2) % 3))
    return project


class ReportPageTests:
    def test_the_tables_show_and_then_the_plots(self, page, live_server, sign_in, copa_report):
        page.set_default_timeout(60_000)  # the report computes its intervals on the first visit
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{copa_report.slug}/report/?bootstrap=50")
        page.get_by_text("CoPA scoring vs human judgement (Table 7)").wait_for()
        page.locator("#report-figures img").first.wait_for()
        assert page.locator("#report-figures img").count() >= 2
        assert page.locator("#report-figures progress").count() == 0
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/report.png", full_page=True)

    def test_a_background_computation_shows_its_progress(self, page, live_server, sign_in, copa_report):
        key = job_key(kind="report", project=copa_report, parameters=ReportParameters(bootstrap=5000))
        cache.set(key, JobState(RUNNING, time.time(), progress=0.35), 600)
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{copa_report.slug}/report/?bootstrap=5000")
        bar = page.locator('progress[max="100"]')
        bar.wait_for()
        assert bar.get_attribute("value") == "35"
        assert "35% of the resamples" in page.locator("#report-body").inner_text()
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/report-progress.png")


class ReportLevelTests:
    """The confidence control shows the level the report used, and Compute keeps it (issue 41, point 2)."""

    def test_the_control_shows_the_level_in_use_and_compute_keeps_it(self, page, live_server, sign_in, copa_report):
        page.set_default_timeout(60_000)
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{copa_report.slug}/report/?bootstrap=50")
        meta = page.locator("#provenance-heading + dl")
        meta.wait_for()
        assert "0.95 confidence" in meta.inner_text()
        level = page.get_by_label("Confidence level")
        assert level.input_value() == "0.95"
        # Changing another parameter and pressing Compute recomputes at the level shown, not the first choice.
        page.get_by_label("Seed").fill("3")
        page.get_by_role("button", name="Compute").click()
        page.wait_for_url("**seed=3**")
        page.get_by_text("seed 3,").wait_for()
        assert "0.95 confidence" in page.locator("#provenance-heading + dl").inner_text()
        assert level.input_value() == "0.95"
        level.select_option("0.99")
        page.get_by_role("button", name="Compute").click()
        page.get_by_text("0.99 confidence").wait_for()
        page.reload()
        assert page.get_by_label("Confidence level").input_value() == "0.99"
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/report-level.png")


class ReportCaptionTests:
    """Table 7's caption counts the responses people rated, not those only the model scored (point 6)."""

    def test_the_caption_counts_people_s_coverage(self, page, live_server, sign_in, copa_report, judge_run):  # noqa: F811
        add_items(copa_report, [f"model-only{i}" for i in range(5)])
        run = judge_run(copa_report)
        for item in Item.objects.filter(project=copa_report):
            suggest(run, item, copa_value(1))
        page.set_default_timeout(60_000)
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{copa_report.slug}/report/?bootstrap=20&judge={run.pk}")
        caption = page.locator("#caption-copa_table7").inner_text()
        assert "12 responses rated by at least one annotator" in caption, caption
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/report-caption.png")


class AnchoringTableTests:
    """Anchoring groups count only ratings made while a suggestion could have been shown, and say
    whether they were randomised (point 7)."""

    def test_ratings_before_the_run_are_left_out_and_the_design_is_named(
        self,
        page,
        live_server,
        sign_in,
        make_project,
        make_user,
        judge_run,  # noqa: F811
    ):
        project = make_project("copa_likert", title="CoPA anchoring", suggestion_exposure="randomised")
        membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
        items = list(add_items(project, [f"r{i}" for i in range(10)]).values())
        for item in items[:6]:  # before any run: "not visible" was recorded, but nothing could be shown
            annotate(project, item, "x1", copa_value(1), visible=False)
            annotate(project, item, "x2", copa_value(2), visible=False)
        run = judge_run(project)
        for i, item in enumerate(items):
            suggest(run, item, copa_value(i % 3))
        for i, item in enumerate(items[6:]):
            annotate(project, item, "x1", copa_value(1), visible=i % 2 == 0)
            annotate(project, item, "x2", copa_value(i % 3), visible=i % 2 == 1)
        page.set_default_timeout(60_000)
        sign_in(page, "res")
        page.goto(f"{live_server.url}/p/{project.slug}/report/?bootstrap=20&judge={run.pk}")
        section = page.locator("section", has=page.locator("#table-anchoring"))
        section.wait_for()
        row = section.locator("tbody tr", has=page.get_by_role("rowheader", name="Cognitive Trust"))
        numbers = row.locator("td").all_inner_texts()
        assert (numbers[0], numbers[2]) == ("4", "4"), numbers  # 8 later pairs; the 12 earlier ones left out
        assert "The groups were randomised" in section.locator("#caption-anchoring").inner_text()
        section.get_by_text("Notes (1)").click()
        assert "Only ratings made once the run's suggestion" in section.inner_text()
        if SHOTS:
            section.screenshot(path=f"{SHOTS}/report-anchoring.png")
