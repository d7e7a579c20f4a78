"""Aggregation at scale: every method over a CoPA project of 3 annotators x 6 factors.

The parent stores a CoPA project of ``--items`` responses, each scored by three annotators (two
careful, one answering at random), and takes the tables' planner statistics again. A child process
then times, per method, ``validation.aggregation.build.project_aggregation`` over the six factors
(reading the ratings from the database included, no bootstrap), and beside it its peer: crowd-kit
called directly on the same ``task, worker, label`` frames, so the figure shows what Concord adds to
the library's own fit.

GLAD fits each EM step with a SciPy optimiser over pandas frames: on 100,000 items one factor takes
minutes, so it runs on the first ``--glad-items`` items (2,000 by default) and is reported apart,
with its items per second.

    python bench/aggregate.py [--items 100000] [--glad-items 2000] [--methods majority,dawid_skene,...] [--keep]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The project's slug is
``bench-aggregate``; it is deleted afterwards unless ``--keep``. The last line is
``RESULT aggregate_s=<n> ...`` (the methods at ``--items``; target <= 30 s on PostgreSQL) with each
method's seconds and ``glad_items_per_s``.
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

SLUG = "bench-aggregate"
GLAD_SLUG = "bench-aggregate-glad"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
PEOPLE = ("ann", "bob", "spammer")
BATCH = 5000
SEED = 20261203
FULL_SIZE_METHODS = ("majority", "dawid_skene", "mace", "wawa")


def store_project(slug: str, items: int) -> float:
    """A CoPA project of ``items`` responses, three annotators each; the seconds it took."""
    import numpy as np
    from django.db import transaction

    from annotation.kinds import get_kind
    from annotation.models import Annotation, Item, Project
    from annotation.services import project_create
    from annotation.table_statistics import statistics_refreshed

    Project.objects.filter(slug=slug).delete()
    started = time.perf_counter()
    project = project_create(slug=slug, kind="copa_likert", title="Aggregation benchmark", overlap=3)
    payload = get_kind("copa_likert").example_payload()
    rng = np.random.default_rng(SEED)
    with transaction.atomic():
        for start in range(0, items, BATCH):
            size = min(BATCH, items - start)
            created = Item.objects.bulk_create(
                [Item(project=project, external_id=f"r{start + i:07d}", payload=payload) for i in range(size)]
            )
            truth = rng.integers(0, 3, size=(size, len(FACTORS)))
            rows = []
            for rater in PEOPLE:
                if rater == "spammer":
                    scores = rng.integers(0, 3, size=truth.shape)
                else:
                    scores = np.where(rng.random(truth.shape) < 0.8, truth, rng.integers(0, 3, size=truth.shape))
                for i, item in enumerate(created):
                    value = {"scores": dict(zip(FACTORS, map(int, scores[i]), strict=True))}
                    rows.append(Annotation(project=project, item=item, rater=rater, version=1, value=value))
            Annotation.objects.bulk_create(rows, batch_size=BATCH)
        statistics_refreshed(Item, items)
        statistics_refreshed(Annotation, items * len(PEOPLE))
    return time.perf_counter() - started


def child(slug: str, methods: list[str]) -> dict:
    setup_django()
    from annotation.models import Project
    from validation.aggregation.build import AggregateParameters, project_aggregation
    from validation.aggregation.frames import question_frame
    from validation.aggregation.methods import fit_model
    from validation.ratings import project_ratings

    project = Project.objects.get(slug=slug)
    figures: dict[str, dict] = {}
    ratings = project_ratings(project=project)
    frames = [question_frame(ratings, factor, list(ratings.raters)) for factor in FACTORS]
    for method in methods:
        started = time.perf_counter()
        evaluation = project_aggregation(project=project, parameters=AggregateParameters(method=method))
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        for frame in frames:
            fit_model(frame, method=method, seed=0)
        peer = time.perf_counter() - started
        competence = {
            a["rater"]: a["competence"] for a in evaluation.result["annotators"] if a["dimension"] == FACTORS[0]
        }
        figures[method] = {
            "seconds": seconds,
            "crowdkit_s": peer,
            "flips": evaluation.result["flips"],
            "items": len(evaluation.result["items"]),
            "competence": competence,
        }
    return {"methods": figures, "peak_mb": peak_rss_mb()}


def timed_child(slug: str, methods: list[str]) -> dict:
    command = [sys.executable, __file__, "--child", slug, "--methods", ",".join(methods)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the timed child failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--glad-items", type=int, default=2000, help="items GLAD runs on (0: leave GLAD out)")
    parser.add_argument("--methods", default=",".join(FULL_SIZE_METHODS), help="methods run at --items")
    parser.add_argument("--keep", action="store_true", help="keep the projects")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    methods = [m for m in args.methods.split(",") if m]
    if args.child:
        print(json.dumps(child(args.child, methods)))
        return

    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; {args.items} items x {len(PEOPLE)} annotators x {len(FACTORS)} factors")
    setup_s = store_project(SLUG, args.items)
    print(f"stored the project in {setup_s:.1f} s (setup, not timed below)")
    full = timed_child(SLUG, methods)
    glad = None
    if args.glad_items:
        store_project(GLAD_SLUG, args.glad_items)
        glad = timed_child(GLAD_SLUG, ["glad"])["methods"]["glad"]
    if not args.keep:
        Project.objects.filter(slug__in=[SLUG, GLAD_SLUG]).delete()

    print(f"{'method':<14}{'Concord s':>11}{'crowd-kit fit s':>17}{'flips':>9}  competence on CT (ann, bob, spammer)")
    rows = [(m, f, args.items) for m, f in full["methods"].items()]
    rows += [("glad", glad, args.glad_items)] if glad else []
    for method, figures, items in rows:
        competence = ", ".join(f"{figures['competence'].get(p, float('nan')):.3f}" for p in PEOPLE)
        label = method if items == args.items else f"{method} ({items:,} items)"
        print(
            f"{label:<14}{figures['seconds']:>11.2f}{figures['crowdkit_s']:>17.2f}{figures['flips']:>9}  {competence}"
        )
    total = sum(f["seconds"] for f in full["methods"].values())
    print(f"{'every method at full size':<40}{total:>8.2f} s  (target <= 30 s on PostgreSQL)")
    print(f"memory: {full['peak_mb']:.0f} MB peak")
    per_method = " ".join(f"{m}_s={f['seconds']:.2f}" for m, f in full["methods"].items())
    glad_rate = f" glad_items_per_s={args.glad_items / glad['seconds']:.0f}" if glad else ""
    print(f"RESULT aggregate_s={total:.2f} {per_method}{glad_rate} items={args.items} rss_mb={full['peak_mb']:.0f}")


if __name__ == "__main__":
    main()
