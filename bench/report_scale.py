"""The agreement report page at scale: first render, the same request again, and a large background build.

The parent stores two CoPA projects: ``--items`` items (1,000) rated by two annotators, and
``--large`` items (100,000) rated by three; each with a judge run that scored every item, and with
the suggestion shown on about half of the annotations (so the anchoring table has both groups). Then,
each timed in a fresh child process over the real web stack (Django's test client, a researcher
logged in, the cache Django is configured with):

1. ``first_s``: the report body for the small project with the judge run and ``--resamples``
   resamples (1,000), nothing cached: what the researcher waits for after a change.
2. ``cached_s``: the same request again, inputs unchanged: the cached report.
3. ``large_s``: the large project with its judge run and the same resamples, computed by the
   background task the page queues (run here in the child, as a worker runs it): from the request
   that queues it to the finished result.

    python bench/report_scale.py [--items 1000] [--large 100000] [--resamples 1000] [--keep] [--profile]

The database is whatever DATABASE_URL names (SQLite under var/ when unset); the cache is CACHE_URL's
(Redis in production). The projects' slugs start with ``bench-report``; they are deleted afterwards
unless ``--keep`` (a later run with ``--keep`` reuses them when their sizes match). ``--profile``
prints the most expensive functions of the first render. The last line is
``RESULT first_s=<n> cached_s=<n> large_s=<n>`` (targets on PostgreSQL: 1.5, 0.1 and 15 s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import setup_django  # noqa: E402 - importable once the repository root is on the path

SMALL, LARGE = "bench-report-small", "bench-report-large"
RESEARCHER = "bench-report-researcher"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
BATCH = 5000
SEED = 20261202


# -- parent: the data ---------------------------------------------------------------------------


def store_project(slug: str, items: int, raters: int, keep: bool) -> tuple[int, float]:
    """A CoPA project with people's scores and a judge run; (run id, seconds to store it)."""
    import numpy as np
    from django.db import transaction

    from annotation.kinds import get_kind
    from annotation.models import Annotation, Item, Membership, Project, Role
    from annotation.services import project_create
    from annotation.table_statistics import statistics_refreshed
    from judges.models import Judge, JudgeRun, Suggestion

    marker = f"bench:{items}:{raters}:{SEED}"
    existing = Project.objects.filter(slug=slug).first()
    if existing is not None and keep and existing.guidelines == marker:
        return JudgeRun.objects.get(project=existing).pk, 0.0
    Project.objects.filter(slug=slug).delete()
    started = time.perf_counter()
    project = project_create(slug=slug, kind="copa_likert", title="Report benchmark", overlap=raters)
    Project.objects.filter(pk=project.pk).update(guidelines=marker)
    researcher = _researcher()
    Membership.objects.get_or_create(project=project, user=researcher, defaults={"role": Role.RESEARCHER})
    payload = get_kind("copa_likert").example_payload()
    judge = Judge.objects.create(
        project=project, name="bench", kind="copa_likert", backend="baseline", prompt_name="bench", prompt_version=1
    )
    run = JudgeRun.objects.create(judge=judge, project=project, status=JudgeRun.Status.COMPLETED, total=items)
    rng = np.random.default_rng(SEED)
    names = [f"annotator-{r + 1}" for r in range(raters)]
    with transaction.atomic():
        for start in range(0, items, BATCH):
            size = min(BATCH, items - start)
            created = Item.objects.bulk_create(
                [Item(project=project, external_id=f"r{start + i:07d}", payload=payload) for i in range(size)]
            )
            # A true fit per factor; people agree with it about 70% of the time, the judge 60%.
            truth = rng.integers(0, 3, size=(size, len(FACTORS)))
            model = np.where(rng.random(truth.shape) < 0.6, truth, rng.integers(0, 3, size=truth.shape))
            Suggestion.objects.bulk_create(
                [
                    Suggestion(
                        judge=judge,
                        run=run,
                        item=item,
                        prompt_sha256="b" * 64,
                        status="ok",
                        value={"scores": dict(zip(FACTORS, map(int, model[i]), strict=True))},
                    )
                    for i, item in enumerate(created)
                ],
                batch_size=BATCH,
            )
            rows = []
            for name in names:
                agree = rng.random(truth.shape) < 0.7
                scores = np.where(agree, truth, rng.integers(0, 3, size=truth.shape))
                visible = rng.random(size) < 0.5
                rows += [
                    Annotation(
                        project=project,
                        item=item,
                        rater=name,
                        version=1,
                        value={"scores": dict(zip(FACTORS, map(int, scores[i]), strict=True))},
                        source=Annotation.Source.IMPORT,
                        suggestion_visible=bool(visible[i]),
                    )
                    for i, item in enumerate(created)
                ]
            Annotation.objects.bulk_create(rows, batch_size=BATCH)
        # As the product's bulk writes do: the reports that follow are planned on these rows.
        for model in (Item, Suggestion, Annotation):
            statistics_refreshed(model, items)
    return run.pk, time.perf_counter() - started


def _researcher():
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=RESEARCHER)
    return user


# -- child: the timed work -----------------------------------------------------------------------


def _client():
    from django.test import Client

    client = Client(HTTP_HOST="localhost")
    client.force_login(_researcher())
    return client


def _report_url(slug: str, run_id: int, resamples: int) -> str:
    from django.urls import reverse

    return f"{reverse('report', args=[slug])}?judge={run_id}&bootstrap={resamples}&seed=0"


def child_small(run_id: int, resamples: int, profile: bool) -> dict:
    setup_django()
    from django.core.cache import cache

    cache.clear()  # nothing cached: the first render after a change
    client = _client()
    url = _report_url(SMALL, run_id, resamples)
    headers = {"HX-Request": "true"}
    timed = {}
    for label in ("first", "cached"):
        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        started = time.perf_counter()
        response = client.get(url, headers=headers)
        timed[label] = (time.perf_counter() - started, response)
        if profiler is not None:
            import io
            import pstats

            profiler.disable()
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("cumulative").print_stats(45)
            stats.sort_stats("tottime").print_stats(20)
            sys.stderr.write(f"== {label} request ==\n{out.getvalue()}")
    (first_s, first), (cached_s, again) = timed["first"], timed["cached"]
    assert first.status_code == again.status_code == 200, (first.status_code, again.status_code)
    body = first.content.decode()
    return {
        "first_s": first_s,
        "cached_s": cached_s,
        "complete": "Table 7" in body and "Anchoring" in body,
        "same_tables": body.count("<table") == again.content.decode().count("<table"),
    }


def child_large(run_id: int, resamples: int) -> dict:
    setup_django()
    from django.conf import settings
    from django.core.cache import cache

    from annotation.models import Project
    from validation.reports import ReportParameters
    from validation.reports.build import build_report

    cache.clear()
    # The worker's job, run here so that only the computation is timed (no broker round trip).
    settings.CELERY_TASK_ALWAYS_EAGER = True
    project = Project.objects.get(slug=LARGE)
    started, cpu = time.perf_counter(), time.process_time()
    report = build_report(
        project=project, parameters=ReportParameters(judge_run_id=run_id, bootstrap=resamples, seed=0)
    )
    large_s, large_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    return {"large_s": large_s, "large_cpu_s": large_cpu_s, "units": report.n_units, "raters": len(report.human_raters)}


def _run_child(*arguments: str) -> dict:
    command = [sys.executable, __file__, "--child", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"the timed child failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- parent: report --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep the projects (and reuse kept ones)")
    parser.add_argument("--profile", action="store_true", help="profile the first render")
    parser.add_argument("--child", choices=["small", "large"], help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "small":
        print(json.dumps(child_small(args.run, args.resamples, args.profile)))
        return
    if args.child == "large":
        print(json.dumps(child_large(args.run, args.resamples)))
        return

    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; {args.resamples} resamples; CoPA, six factors, a judge run")
    small_run, small_setup = store_project(SMALL, args.items, 2, args.keep)
    large_run, large_setup = (None, 0.0)
    if args.large:
        large_run, large_setup = store_project(LARGE, args.large, 3, args.keep)
    print(f"stored the projects in {small_setup + large_setup:.1f} s (setup, not timed below)")
    try:
        profile = ["--profile"] if args.profile else []
        small = _run_child("small", "--run", str(small_run), "--resamples", str(args.resamples), *profile)
        large = (
            _run_child("large", "--run", str(large_run), "--resamples", str(args.resamples))
            if args.large
            else {"large_s": float("nan"), "large_cpu_s": float("nan"), "units": 0, "raters": 0}
        )
    finally:
        if not args.keep:
            Project.objects.filter(slug__in=[SMALL, LARGE]).delete()
    print(f"{'step':<64}{'seconds':>9}")
    print(f"{f'report page, {args.items} items x 2 people + judge, first render':<64}{small['first_s']:>9.3f}")
    print(f"{'the same request again (inputs unchanged)':<64}{small['cached_s']:>9.3f}")
    background = f"background build, {large['units']} items x {large['raters']} people + judge"
    print(f"{background:<64}{large['large_s']:>9.3f}")
    # On a shared host the wall time is mostly waiting for a core; this process's CPU time is not
    # (the database server's is not in it).
    print(f"{'  of which CPU time of the building process':<64}{large['large_cpu_s']:>9.3f}")
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"page complete: {small['complete']}; second answer has the same tables: {small['same_tables']}")
    print("targets: first <= 1.5 s, cached <= 0.1 s, large <= 15 s")
    print(f"RESULT first_s={small['first_s']:.3f} cached_s={small['cached_s']:.3f} large_s={large['large_s']:.3f}")


if __name__ == "__main__":
    main()
