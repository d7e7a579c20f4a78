"""The Alternative Annotator Test at scale: 10,000 items x 3 annotators x 6 dimensions x 5 runs.

The parent stores a CoPA project (six ordinal factors) of ``--items`` items, each scored by three
annotators, and ``--runs`` imported runs that scored every item (0.5% of lines failed, so those items
are unlabelled for that run), each run a little noisier than the last. A child process then times:

- reading the ratings: people's latest annotations and every run's answers (``project_ratings``),
  the floor every alt-test number stands on;
- the test itself (``validation.alttest.statistics.alt_test``) on those ratings, pooled and per
  factor for every run: the figure ``RESULT alt_test_s=`` reports (target <= 2 s);
- the whole ``alt_test`` evaluation as the command computes it (``--bootstrap 0``): the reading, the
  test, agreement by who rated and the tables.

    python bench/alt_test.py [--items 10000] [--runs 5] [--keep]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The project's slug is
``bench-alt-test``; it is deleted afterwards unless ``--keep``. The last line is
``RESULT alt_test_s=<n> read_s=<n> evaluation_s=<n> rss_mb=<n>``.
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
from bench.common import peak_rss_mb, setup_django  # noqa: E402 - importable once the repository root is on the path

SLUG = "bench-alt-test"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
RATERS = ("ann1", "ann2", "ann3")
BATCH = 5000
SEED = 20261203
FAILED_SHARE = 0.005


def store_project(items: int, runs: int, keep: bool) -> tuple[list[int], float]:
    """The benchmark project, its annotations and runs; (run ids, seconds)."""
    import numpy as np
    from django.db import transaction

    from annotation.kinds import get_kind
    from annotation.models import Annotation, Item, Project
    from annotation.services import project_create
    from annotation.table_statistics import statistics_refreshed
    from judges.models import Judge, JudgeRun, Suggestion

    marker = f"bench:{items}:{runs}:{SEED}"
    existing = Project.objects.filter(slug=SLUG).first()
    if existing is not None and keep and existing.guidelines == marker:
        return list(JudgeRun.objects.filter(project=existing).order_by("pk").values_list("pk", flat=True)), 0.0
    Project.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    project = project_create(slug=SLUG, kind="copa_likert", title="Alternative Annotator Test benchmark", overlap=3)
    Project.objects.filter(pk=project.pk).update(guidelines=marker)
    payload = get_kind("copa_likert").example_payload()
    rng = np.random.default_rng(SEED)
    truth = rng.integers(0, 3, size=(items, len(FACTORS)))

    def noisy(share: float) -> np.ndarray:
        return np.clip(truth + (rng.random(truth.shape) < share) * rng.choice([-1, 1], size=truth.shape), 0, 2)

    def scores(row: np.ndarray) -> dict:
        return {"scores": dict(zip(FACTORS, map(int, row), strict=True))}

    run_ids = []
    with transaction.atomic():
        created: list = []
        for start in range(0, items, BATCH):
            size = min(BATCH, items - start)
            created += Item.objects.bulk_create(
                [Item(project=project, external_id=f"a{start + i:07d}", payload=payload) for i in range(size)]
            )
        for rater in RATERS:
            labels = noisy(0.2)
            Annotation.objects.bulk_create(
                [
                    Annotation(project=project, item=item, rater=rater, version=1, value=scores(labels[i]))
                    for i, item in enumerate(created)
                ],
                batch_size=BATCH,
            )
        for r in range(runs):
            judge = Judge.objects.create(
                project=project,
                name=f"bench-model-{r}",
                kind="copa_likert",
                backend="imported",
                model=f"bench-model-{r}",
                prompt_name="bench",
                prompt_version=0,
                fingerprint=f"bench-{r}",
            )
            run = JudgeRun.objects.create(judge=judge, project=project, status=JudgeRun.Status.COMPLETED, total=items)
            run_ids.append(run.pk)
            labels, failed = noisy(0.1 + 0.05 * r), rng.random(items) < FAILED_SHARE
            Suggestion.objects.bulk_create(
                [
                    Suggestion(
                        judge=judge,
                        run=run,
                        item=item,
                        prompt_sha256="b" * 64,
                        status="failed" if failed[i] else "ok",
                        value=None if failed[i] else scores(labels[i]),
                        failure_reason="not json" if failed[i] else "",
                    )
                    for i, item in enumerate(created)
                ],
                batch_size=BATCH,
            )
    # Leave the planner's statistics current after the bulk writes, as the imports do.
    for model, rows in ((Item, items), (Annotation, items * len(RATERS)), (Suggestion, items * runs)):
        statistics_refreshed(model, rows)
    return run_ids, time.perf_counter() - started


def child(run_ids: list[int]) -> dict:
    setup_django()
    from annotation.models import Project
    from validation.alttest.build import AltTestParameters, alt_test_evaluation
    from validation.alttest.statistics import AltTestBlock, alt_test
    from validation.ratings import JUDGE_PREFIX, judge_rater_name, project_ratings

    project = Project.objects.get(slug=SLUG)
    startup_mb = peak_rss_mb()
    started = time.perf_counter()
    ratings = project_ratings(project=project, judge_run_ids=run_ids)
    read_s = time.perf_counter() - started
    people = tuple(r for r in ratings.raters if not r.startswith(JUDGE_PREFIX))
    blocks = [
        AltTestBlock(
            name=d.name,
            level=d.level,
            people=ratings.matrix(d.name, people),
            models={str(r): ratings.matrix(d.name, [judge_rater_name(r)])[:, 0] for r in run_ids},
        )
        for d in project.task_kind.rating_dimensions
    ]
    started, cpu_started = time.perf_counter(), time.process_time()
    tests = alt_test(blocks, people)
    alt_test_s, alt_test_cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    started = time.perf_counter()
    evaluation = alt_test_evaluation(project=project, parameters=AltTestParameters(runs=tuple(run_ids), bootstrap=0))
    evaluation_s = time.perf_counter() - started
    pooled = [(t.run, t.scope("pooled")) for t in tests]
    return {
        "read_s": read_s,
        "alt_test_s": alt_test_s,
        "alt_test_cpu_s": alt_test_cpu_s,
        "evaluation_s": evaluation_s,
        "startup_mb": startup_mb,
        "peak_mb": peak_rss_mb(),
        "units": ratings.n_units * len(blocks),
        "pooled": [[run, s.n_units, s.winning_rate, s.advantage_probability] for run, s in pooled],
        "same_as_evaluation": [r["scopes"][0]["advantage_probability"] for r in evaluation.result["runs"]]
        == [s.advantage_probability for _, s in pooled],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the project (and reuse a kept one)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child([int(r) for r in args.child.split(",")])))
        return

    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    call_command("migrate", verbosity=0)
    print(
        f"database: {connection.vendor}; {args.items} items x {len(RATERS)} annotators x 6 factors x {args.runs} runs"
    )
    run_ids, setup_s = store_project(args.items, args.runs, args.keep)
    print(f"stored the project, annotations and runs in {setup_s:.1f} s (setup, not timed below)")
    command = [sys.executable, __file__, "--child", ",".join(map(str, run_ids))]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if not args.keep:
        Project.objects.filter(slug=SLUG).delete()
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the timed child failed (exit {done.returncode})")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for run, n_units, winning_rate, advantage in figures["pooled"]:
        print(f"run {run}: pooled over {n_units} units, winning rate {winning_rate:.2f}, advantage {advantage:.3f}")
    print(f"the evaluation's numbers equal the test's: {figures['same_as_evaluation']}")
    print(f"memory: {figures['startup_mb']:.0f} MB after start-up, {figures['peak_mb']:.0f} MB peak")
    print(f"{'reading the ratings (the floor: people and every run)':<58}{figures['read_s']:>8.2f} s")
    print(f"{'the test, pooled and per factor, every run':<58}{figures['alt_test_s']:>8.2f} s  (target <= 2 s)")
    print(f"{'  of which CPU time in the process':<58}{figures['alt_test_cpu_s']:>8.2f} s")
    print(f"{'the whole evaluation (reading, test, agreement, tables)':<58}{figures['evaluation_s']:>8.2f} s")
    print(
        f"RESULT alt_test_s={figures['alt_test_s']:.2f} read_s={figures['read_s']:.2f} "
        f"evaluation_s={figures['evaluation_s']:.2f} rss_mb={figures['peak_mb']:.0f}"
    )


if __name__ == "__main__":
    main()
