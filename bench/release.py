"""Dataset release at scale: 100,000 CoPA items x 3 people x 1 model run, as ``manage.py release`` writes it.

The items and answers are written by the database (as bench/export_scale.py does), the run through the
real run import (``judges.run_files.judge_run_import``); then each release runs in a fresh child process,
so its peak RSS is its own: the whole project, and a tenth of it (memory must not grow with the rows).
Beside it, the peer measured in the same run: the benchmark-shape Parquet gold export of the same
project (one split, no report), as ``export_gold`` writes it.

    python bench/release.py [--items 100000] [--keep]

The database is whatever DATABASE_URL names (PostgreSQL for the figures in bench/README.md). The last
line is ``RESULT release_s=<n> rss_mb=<n> small_rss_mb=<n> gold_export_s=<n>``. Target: ≤ 60 s, RSS flat.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import child_json, peak_rss_mb, setup_django  # noqa: E402
from bench.export_scale import store  # noqa: E402

SLUG = "bench-release"


def add_run(slug: str, folder: Path) -> float:
    """A model run over every item, imported from a run file as a team would (one line per item)."""
    from annotation.kinds import get_kind
    from annotation.models import Project
    from judges.run_files import judge_run_import

    project = Project.objects.get(slug=slug)
    value = get_kind("copa_likert").example_value()
    path = folder / "run.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for external_id in project.items.order_by("id").values_list("external_id", flat=True).iterator(5000):
            handle.write(json.dumps({"external_id": external_id, "value": value, "score": 0.8}) + "\n")
    started = time.perf_counter()
    judge_run_import(project=project, path=str(path), model="bench-llm", prompt="bench_prompt.v1")
    return time.perf_counter() - started


def child(what: str, slug: str, target: str) -> dict:
    setup_django()
    from annotation.models import Project
    from validation.goldset import export_gold
    from validation.release import release_build

    project = Project.objects.get(slug=slug)
    phases: dict[str, float] = {}
    current: list = [None, time.perf_counter()]  # the step under way and when it began

    def progress(step: str | None) -> None:
        now = time.perf_counter()
        if current[0] is not None:
            phases[current[0]] = now - current[1]
        current[:] = [step, now]

    started = time.perf_counter()
    if what == "release":
        release = release_build(project=project, directory=target, progress=progress)
        progress(None)
        rows = release.rows
    else:
        rows = {"gold": export_gold(project=project, fmt="parquet", path=target, shape="benchmark")}
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "rows": rows, "peak_mb": peak_rss_mb(), "phases": phases}


def measure(what: str, slug: str, target: Path) -> dict:
    return child_json(__file__, what, slug, str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the bench projects")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    setup_django()
    from django.db import connection

    from annotation.models import Project

    if connection.vendor != "postgresql":
        sys.exit("bench/release.py writes its data with PostgreSQL statements: set DATABASE_URL to PostgreSQL")
    small_slug = f"{SLUG}-tenth"
    with tempfile.TemporaryDirectory(prefix="concord-release-bench-") as scratch:
        folder = Path(scratch)
        for slug, items in ((SLUG, args.items), (small_slug, max(1, args.items // 10))):
            stored = store(slug, items)
            imported = add_run(slug, folder)
            print(f"{slug}: stored {items:,} items x 3 answers in {stored:.1f} s, run imported in {imported:.1f} s")
        full = measure("release", SLUG, folder / "full")
        small = measure("release", small_slug, folder / "small")
        peer = measure("gold", SLUG, folder / "gold.parquet")
    if not args.keep:
        Project.objects.filter(slug__in=[SLUG, small_slug]).delete()
    print(
        f"release of {args.items:,} items: {full['seconds']:.1f} s, peak RSS {full['peak_mb']:.0f} MB, "
        f"rows {full['rows']}"
    )
    print("  phases: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in full["phases"].items()))
    print(f"release of a tenth: {small['seconds']:.1f} s, peak RSS {small['peak_mb']:.0f} MB")
    print(f"peer, same run: benchmark Parquet gold export {peer['seconds']:.1f} s, peak RSS {peer['peak_mb']:.0f} MB")
    print(
        f"RESULT release_s={full['seconds']:.1f} rss_mb={full['peak_mb']:.0f} small_rss_mb={small['peak_mb']:.0f} "
        f"gold_export_s={peer['seconds']:.1f}"
    )


if __name__ == "__main__":
    main()
