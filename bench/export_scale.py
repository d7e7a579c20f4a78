"""Gold export at scale: 1,000,000 annotations (333,334 CoPA items x 3 raters) to Parquet and JSONL.

Each export runs in a fresh child process so its peak RSS is its own; a second, smaller export
(a tenth of the items) shows whether memory grows with the row count.

    python bench/export_scale.py [--annotations 1000000] [--keep]

Where the time goes is printed per phase of each full export, measured in the same run by timing
the export's own steps as they are called: reading the items, reading each rater's latest values,
reading the expert decisions, computing the gold, shaping the benchmark record, and the rest (the
writer: encoding and writing the file).

The database is whatever DATABASE_URL names. The last line is
``RESULT parquet_s=<n> jsonl_s=<n> rss_mb=<n>`` (rss: the largest peak of the full exports).
Target: Parquet 20 s and JSONL 15 s or less, RSS flat in the number of rows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import ROOT, peak_rss_mb, setup_django  # noqa: E402

RATERS = 3
SLUG = "bench-export"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")


def store(slug: str, items: int) -> float:
    """Items and three raters' annotations, written by the database itself (fast and reproducible)."""
    from django.db import connection

    from annotation.kinds import get_kind
    from annotation.models import Annotation, Item, Project
    from annotation.services import project_create
    from annotation.table_statistics import statistics_refreshed

    Project.objects.filter(slug=slug).delete()
    project = project_create(slug=slug, kind="copa_likert", overlap=RATERS)
    payload = json.dumps(get_kind("copa_likert").example_payload())
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_item (project_id, external_id, payload, created_at, order_key, assigned_count, "
            "is_open) SELECT %s, 'copa-' || lpad(g::text, 7, '0'), %s::jsonb, now(), g, 3, false "
            "FROM generate_series(1, %s) g",
            [project.pk, payload, items],
        )
        # Two raters agree; the third departs on every fourth item, so agreement varies but every item
        # has a majority (a real project's gold set, not a queue of splits).
        drift = "CASE WHEN r = 3 AND i.id %% 4 = 0 THEN 1 ELSE 0 END"
        scores = ", ".join(f"'{code}', ((i.id * {n + 3} + {drift}) %% 3)" for n, code in enumerate(FACTORS))
        cursor.execute(
            "INSERT INTO annotation_annotation (project_id, item_id, rater, version, value, source, created_at) "
            "SELECT %s, i.id, 'rater' || r, 1, "
            f"jsonb_build_object('scores', jsonb_build_object({scores})), 'import', now() "
            "FROM annotation_item i CROSS JOIN generate_series(1, %s) r WHERE i.project_id = %s",
            [project.pk, RATERS, project.pk],
        )
    for model, written in ((Item, items), (Annotation, items * RATERS)):
        statistics_refreshed(model, written)
    return time.perf_counter() - started


#: The export's steps timed as they are called (module, attribute, phase name); the rest is the writer.
PHASES = (
    ("validation.goldset", "_item_rows", "items read"),
    ("validation.goldset", "latest_values", "values read"),
    ("validation.goldset", "_decisions", "decisions read"),
    ("validation.goldset", "item_gold", "gold"),
)


def timed_phases(kind_class: type) -> dict[str, float]:
    """Wrap the export's steps so that each adds its seconds to its phase (a perf_counter pair per
    call, well under a microsecond against the work timed)."""
    import importlib

    seconds: dict[str, float] = {}

    def wrap(owner, attribute: str, phase: str) -> None:
        original = getattr(owner, attribute)
        seconds[phase] = 0.0

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[phase] += time.perf_counter() - started

        setattr(owner, attribute, timed)

    for module, attribute, phase in PHASES:
        wrap(importlib.import_module(module), attribute, phase)
    wrap(kind_class, "benchmark_record", "record shaped")
    return seconds


def child(fmt: str, path: str, slug: str) -> dict:
    setup_django()
    from annotation.models import Project
    from validation.goldset import export_gold

    project = Project.objects.get(slug=slug)
    phases = timed_phases(type(project.task_kind))
    started = time.perf_counter()
    records = export_gold(project=project, fmt=fmt, path=path, shape="benchmark")
    seconds = time.perf_counter() - started
    phases["writer and the rest"] = seconds - sum(phases.values())
    return {"records": records, "seconds": seconds, "peak_mb": peak_rss_mb(), "phases": phases}


def run(fmt: str, path: Path, slug: str) -> dict:
    command = [sys.executable, __file__, "--child", fmt, str(path), slug]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the bench project afterwards")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    if connection.vendor != "postgresql":
        sys.exit("export_scale needs PostgreSQL: set DATABASE_URL")
    items = -(-args.annotations // RATERS)
    sizes = {f"{SLUG}-small": items // 10, SLUG: items}
    for slug, count in sizes.items():
        print(f"storing {count:,} items x {RATERS} raters = {count * RATERS:,} annotations ...", flush=True)
        print(f"  stored in {store(slug, count):.1f} s", flush=True)
    results: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        for slug in sizes:
            for fmt in ("parquet", "jsonl"):
                path = Path(folder) / f"{slug}.{fmt}"
                r = results[(slug, fmt)] = run(fmt, path, slug)
                size = path.stat().st_size / 1e6
                print(
                    f"{fmt:8s} {sizes[slug] * RATERS:>9,} annotations -> {r['records']:>8,} gold records  "
                    f"{r['seconds']:6.1f} s  {r['records'] / r['seconds']:>8,.0f} records/s  "
                    f"peak RSS {r['peak_mb']:.0f} MB  file {size:.0f} MB",
                    flush=True,
                )
    if not args.keep:
        from annotation.models import Project

        Project.objects.filter(slug__in=list(sizes)).delete()
    for fmt in ("parquet", "jsonl"):
        small, full = results[(f"{SLUG}-small", fmt)]["peak_mb"], results[(SLUG, fmt)]["peak_mb"]
        print(
            f"{fmt}: peak RSS {small:.0f} MB at a tenth of the rows, {full:.0f} MB at all of them ({full / small:.2f}x)"
        )
    full_runs = {fmt: results[(SLUG, fmt)] for fmt in ("parquet", "jsonl")}
    for fmt, r in full_runs.items():
        shares = ", ".join(f"{phase} {s:.1f} s" for phase, s in r["phases"].items())
        print(f"{fmt} phases: {shares}")
    rss = max(r["peak_mb"] for r in full_runs.values())
    parquet_s, jsonl_s = full_runs["parquet"]["seconds"], full_runs["jsonl"]["seconds"]
    print(f"RESULT parquet_s={parquet_s:.1f} jsonl_s={jsonl_s:.1f} rss_mb={rss:.0f}")


if __name__ == "__main__":
    main()
