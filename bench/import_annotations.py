"""Annotation import benchmark: throughput and peak memory of ``import_annotations``, beside its floor.

It imports ``--answers / --raters`` synthetic CoPA items into a fresh project, writes an annotation
file of one line per (item, rater) (six Likert scores drawn with a fixed seed, seconds on the item,
whether a suggestion was shown), then imports it in a fresh child process, so the peak RSS is the
import's own. Only the import call is timed; it takes the table's statistics before it returns, as
the service does for any large import.

    python bench/import_annotations.py [--answers 300000] [--raters 3]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The floor (PostgreSQL)
is the same rows COPYed back into the annotation table from memory in one statement, with its
indexes and key checks (as another rater's rows, rolled back): the most any import of them can
reach on this host. The last line is ``RESULT answers_per_s=<n> rss_mb=<n> cpu_us_per_answer=<n>
[db_cpu_us_per_answer=<n> copy_floor_answers_per_s=<n> of_floor=<ratio>]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402 - importable once the repository root is on the path
    copied_back_seconds,
    database_backend_cpu_s,
    peak_rss_mb,
    setup_django,
)

SLUG = "bench-annotation-import"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
SEED = 20260102


def child_import(path: str) -> dict:
    """Import ``path`` into the benchmark project; in its own process, so its peak RSS is its own."""
    setup_django()
    from annotation.importing import import_annotations
    from annotation.models import Project

    project = Project.objects.get(slug=SLUG)
    startup_mb = peak_rss_mb()
    server_before = database_backend_cpu_s()
    started, cpu_started = time.perf_counter(), time.process_time()
    result = import_annotations(project=project, path=path)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    server_after = database_backend_cpu_s()
    peak_mb = peak_rss_mb()  # before the floor, which holds every row in memory
    return {
        "imported": result.imported,
        "seconds": seconds,
        "cpu_s": cpu,
        "server_cpu_s": None if server_before is None or server_after is None else server_after - server_before,
        "startup_mb": startup_mb,
        "peak_mb": peak_mb,
        "floor_seconds": copy_floor_seconds(project.pk),
    }


def copy_floor_seconds(project_id: int) -> float | None:
    """Seconds to COPY the project's annotation rows back into their table from memory, each under
    another rater's name (so that no key repeats): the same table, indexes and key checks, without
    reading or checking a line. PostgreSQL only; rolled back."""
    from django.db import connection, transaction

    from annotation.models import Annotation

    if connection.vendor != "postgresql":
        return None
    meta = Annotation._meta
    columns = [f.column for f in meta.concrete_fields if not f.primary_key]
    rater = meta.get_field("rater").column
    select = ", ".join(f"{column} || '-floor'" if column == rater else column for column in columns)
    project = meta.get_field("project").column
    with transaction.atomic():
        seconds = copied_back_seconds(meta.db_table, columns, select, f"{project} = %s", [project_id])
        transaction.set_rollback(True)
    return seconds


def answer_lines(items: int, raters: int):
    """One line per (item, rater): six scores, seconds on the item, whether a suggestion was shown."""
    rng = random.Random(SEED)
    from annotation.kinds import get_kind
    from annotation.synthetic import synthetic_records

    for record in synthetic_records(get_kind("copa_likert"), items):
        for rater in range(raters):
            yield {
                "rater": f"annotator-{rater + 1}",
                "external_id": record["external_id"],
                "value": {"scores": {factor: rng.randrange(3) for factor in FACTORS}},
                "seconds_on_item": round(rng.uniform(5, 90), 1),
                "suggestion_visible": rng.random() < 0.5,
            }


def prepare(items: int, raters: int, folder: Path) -> Path:
    """A fresh project with ``items`` items, and the annotation file of all their answers."""
    from annotation.importing import import_items
    from annotation.kinds import get_kind
    from annotation.models import Project
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records, write_jsonl

    Project.objects.filter(slug=SLUG).delete()
    project = project_create(slug=SLUG, kind="copa_likert", title="Annotation import benchmark", overlap=raters)
    records = synthetic_records(get_kind("copa_likert"), items)
    import_items(project=project, path=write_jsonl(folder / "items.jsonl", records))
    return write_jsonl(folder / "answers.jsonl", answer_lines(items, raters))


def bench(answers: int, raters: int) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    call_command("migrate", verbosity=0)
    items = max(1, answers // raters)
    total = items * raters
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); {items} items x {raters} raters")
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        path = prepare(items, raters, Path(tmp))
        size_mb = path.stat().st_size / 2**20
        command = [sys.executable, __file__, "--child", str(path)]
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    Project.objects.filter(slug=SLUG).delete()  # no benchmark rows left in a database people also use
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the import failed (exit {done.returncode})")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["imported"] != total:
        raise SystemExit(f"the import stored {figures['imported']} answers, expected {total}")
    rate = total / figures["seconds"]
    cpu_us = figures["cpu_s"] / total * 1e6
    server = figures["server_cpu_s"]
    floor = figures["floor_seconds"]
    print(f"annotation file: {size_mb:.1f} MB, {total} answers")
    print(f"import_annotations: {figures['seconds']:.2f} s, {rate:.0f} answers/s")
    print(
        f"CPU per answer: {cpu_us:.0f} us in the importing process"
        + ("" if server is None else f", {server / total * 1e6:.0f} us in the database server process")
        + f"; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"memory: {figures['startup_mb']:.0f} MB after start-up, {figures['peak_mb']:.0f} MB peak")
    extra = "" if server is None else f" db_cpu_us_per_answer={server / total * 1e6:.0f}"
    if floor is not None:
        print(
            f"floor: the same rows COPYed back from memory (no reading, no checks): {total / floor:.0f} answers/s; "
            f"the import runs at {rate / (total / floor):.2f}x of it"
        )
        extra += f" copy_floor_answers_per_s={total / floor:.0f} of_floor={rate / (total / floor):.2f}"
    print(f"RESULT answers_per_s={rate:.0f} rss_mb={figures['peak_mb']:.0f} cpu_us_per_answer={cpu_us:.0f}{extra}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=300_000, help="answers in the file (items x raters)")
    parser.add_argument("--raters", type=int, default=3, help="raters per item")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child_import(args.child)))
        return
    if args.answers < 1 or args.raters < 1:
        parser.error("--answers and --raters must be at least 1")
    bench(args.answers, args.raters)


if __name__ == "__main__":
    main()
