"""Heavy agreement requests: above the per-request bootstrap cap a worker computes them, cached under the
inputs' fingerprint; the page polls ("computing…", never endless) and the API answers 202, then 200."""

from __future__ import annotations

import re
import runpy
import time
from pathlib import Path

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.conftest import add_items, annotate, copa_value
from validation.report_jobs import DONE, FAILED, QUEUED, RUNNING, STALLED, JobState, job_key, job_run
from validation.reports import ReportParameters

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
CAP = 20


@pytest.fixture
def team(make_project, make_user, settings):
    settings.CONCORD_REQUEST_BOOTSTRAP_MAX = CAP
    project = make_project("copa_likert", title="CoPA pilot")
    people = {name: make_user(name) for name in ("res", "ann")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    for i, item in enumerate(add_items(project, [f"r{i}" for i in range(8)]).values()):
        annotate(project, item, "x1", copa_value(i % 3))
        annotate(project, item, "x2", copa_value((i + i % 2) % 3))
    return project, people


def page(client, project, query: str):
    return client.get(reverse("report", args=[project.slug]) + query, HTTP_HX_REQUEST="true")


def key_for(kind: str, project, bootstrap: int) -> str:
    return job_key(kind=kind, project=project, parameters=ReportParameters(bootstrap=bootstrap))


class ReportPageTests:
    def test_resamples_above_the_cap_are_computed_by_a_worker_and_cached(self, client, team):
        project, people = team
        client.force_login(people["res"])
        response = page(client, project, f"?bootstrap={CAP + 5}")
        assert response.status_code == 200 and "Inputs SHA-256" in response.content.decode()
        state = cache.get(key_for("report", project, CAP + 5))
        assert state.status == DONE and state.result.parameters.bootstrap == CAP + 5
        # The next request reads the cached result: the job is not started again.
        page(client, project, f"?bootstrap={CAP + 5}")
        assert cache.get(key_for("report", project, CAP + 5)).started_at == state.started_at

    def test_resamples_within_the_cap_are_computed_in_the_request(self, client, team):
        project, people = team
        client.force_login(people["res"])
        assert "Inputs SHA-256" in page(client, project, f"?bootstrap={CAP}").content.decode()
        assert cache.get(key_for("report", project, CAP)) is None

    def test_while_a_worker_computes_the_page_polls(self, client, team):
        project, people = team
        cache.set(key_for("report", project, 500), JobState(QUEUED, time.time()), 600)
        client.force_login(people["res"])
        html = page(client, project, "?bootstrap=500&retry=1").content.decode()
        assert 'hx-trigger="load delay:2s"' in html and "Computing 500 bootstrap resamples" in html
        poll = re.search(r'hx-get="([^"]+)"', html).group(1)
        assert "bootstrap=500" in poll and "retry" not in poll

    def test_a_job_no_worker_finishes_is_reported_failed_not_endless(self, client, team, settings):
        project, people = team
        started = time.time() - settings.CONCORD_REPORT_JOB_SECONDS - 1
        cache.set(key_for("report", project, 500), JobState(QUEUED, started), 600)
        client.force_login(people["res"])
        html = page(client, project, "?bootstrap=500").content.decode()
        assert STALLED.format(seconds=settings.CONCORD_REPORT_JOB_SECONDS) in html
        assert "Try again" in html and "load delay" not in html

    def test_try_again_after_a_failure_computes_it(self, client, team):
        project, people = team
        cache.set(key_for("report", project, CAP + 1), JobState(FAILED, time.time(), error="boom"), 600)
        client.force_login(people["res"])
        assert "boom" in page(client, project, f"?bootstrap={CAP + 1}").content.decode()
        assert "Inputs SHA-256" in page(client, project, f"?bootstrap={CAP + 1}&retry=1").content.decode()

    def test_download_of_a_heavy_report_not_computed_yet_is_409(self, client, team):
        project, people = team
        cache.set(key_for("report", project, 500), JobState(QUEUED, time.time()), 600)
        client.force_login(people["res"])
        response = client.get(reverse("report_download", args=[project.slug, "csv"]) + "?bootstrap=500")
        assert response.status_code == 409


class AgreementApiTests:
    def test_heavy_request_answers_202_with_a_poll_url_then_200(self, team):
        project, people = team
        key = key_for("agreement", project, 500)
        cache.set(key, JobState(QUEUED, time.time()), 600)
        api = client_for(people["res"])
        url = f"/api/projects/{project.slug}/agreement/?bootstrap=500"
        pending = api.get(url)
        assert pending.status_code == 202 and pending.json()["status"] == QUEUED
        assert pending.json()["poll"] == url and pending["Retry-After"] == "2"
        cache.set(key, JobState(DONE, time.time(), result={"dimensions": {"x": {}}}), 600)
        assert api.get(url).json() == {"dimensions": {"x": {}}}

    def test_heavy_request_is_computed_by_the_worker_and_matches_the_inline_numbers(self, team, settings):
        project, people = team
        api = client_for(people["res"])
        heavy = api.get(f"/api/projects/{project.slug}/agreement/?bootstrap={CAP + 10}&seed=3")
        assert heavy.status_code == 200  # tasks run in-process in unit tests
        settings.CONCORD_REQUEST_BOOTSTRAP_MAX = CAP + 10
        inline = api.get(f"/api/projects/{project.slug}/agreement/?bootstrap={CAP + 10}&seed=3")
        assert heavy.json() == inline.json()

    def test_failed_computation_is_503_with_the_reason(self, team):
        project, people = team
        cache.set(key_for("agreement", project, 500), JobState(FAILED, time.time(), error="boom"), 600)
        response = client_for(people["res"]).get(f"/api/projects/{project.slug}/agreement/?bootstrap=500")
        assert response.status_code == 503 and response.json()["detail"] == "boom"

    def test_unknown_judge_run_is_400_before_anything_is_queued(self, team):
        project, people = team
        response = client_for(people["res"]).get(f"/api/projects/{project.slug}/agreement/?bootstrap=500&judge_run=999")
        assert response.status_code == 400
        assert (
            cache.get(
                job_key(kind="agreement", project=project, parameters=ReportParameters(bootstrap=500, judge_run_id=999))
            )
            is None
        )


class ServerTests:
    def test_the_local_server_serves_with_threads(self):
        """A slow page holds one thread of one worker; sign-in is answered by the others."""
        script = (ROOT / "scripts" / "run-local.sh").read_text()
        command = script[script.index('"$BIN/gunicorn"') :]
        config_path = re.search(r"--config (\S+)", command).group(1)
        config = runpy.run_path(str(ROOT / config_path))
        assert config["worker_class"] == "config.gunicorn_worker.DeadlineThreadWorker"  # gthread, reads bounded
        assert config["workers"] * config["threads"] >= 8

    def test_each_process_runs_few_threads_and_each_core_gets_two_processes(self, monkeypatch):
        """Threads of one process wait for each other's Python (the GIL): the layout keeps them few."""
        monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
        monkeypatch.delenv("GUNICORN_THREADS", raising=False)
        monkeypatch.setattr("os.cpu_count", lambda: 8)
        config = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
        assert (config["workers"], config["threads"]) == (16, 2)
        monkeypatch.setenv("WEB_CONCURRENCY", "3")
        assert runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))["workers"] == 3


class LargeProjectTests:
    def test_many_items_times_resamples_go_to_a_worker_even_within_the_resample_cap(self, client, team, settings):
        project, people = team
        settings.CONCORD_REQUEST_BOOTSTRAP_WORK = 8 * CAP - 1  # 8 items x CAP resamples is just above
        client.force_login(people["res"])
        assert "Inputs SHA-256" in page(client, project, f"?bootstrap={CAP}").content.decode()
        state = cache.get(key_for("report", project, CAP))
        assert state is not None and state.status == DONE

    def test_the_page_shows_the_workers_progress(self, client, team):
        project, people = team
        cache.set(key_for("report", project, 500), JobState(RUNNING, time.time(), progress=0.4), 600)
        client.force_login(people["res"])
        html = page(client, project, "?bootstrap=500").content.decode()
        assert re.search(r'<progress[^>]*max="100" value="40"', html)
        assert "40% of the resamples" in html and 'hx-trigger="load delay:2s"' in html

    def test_the_worker_reports_progress_while_it_bootstraps(self, team):
        project, _ = team
        key = key_for("report", project, 50)
        seen = []
        original = cache.set

        def recording_set(cache_key, value, *args, **kwargs):
            if cache_key == key and isinstance(value, JobState):
                seen.append((value.status, value.progress))
            return original(cache_key, value, *args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cache, "set", recording_set)
            patch.setattr("validation.report_jobs.PROGRESS_EVERY", 0.0)
            job_run(
                kind="report", key=key, project_id=project.pk, parameters=ReportParameters(bootstrap=50).to_json_dict()
            )
        progress = [p for status, p in seen if status == RUNNING and p is not None]
        assert progress and progress == sorted(progress) and progress[-1] == 1.0
        assert seen[-1][0] == DONE
