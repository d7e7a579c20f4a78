"""Item import benchmark: throughput and peak memory of ``import_items`` for every task kind.

For each kind it writes ``--items`` synthetic records to a JSONL file and imports the first 10,000
and then all of them, each into a fresh project and each in a fresh child process, so the peak RSS
of one import says whether memory grows with the file. A baseline child imports the same 10,000
records the plain Django way (same parsing and validation, then ``Item.objects.bulk_create``).

    python bench/import_items.py [--items 100000] [--kinds copa_likert,intent_mcq]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The last line is
``RESULT items_per_s=<n> rss_mb_10k=<n> rss_mb_100k=<n>``: items/s is total items over total
seconds of the largest imports across kinds; each RSS figure is the maximum over kinds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import peak_rss_mb, setup_django  # noqa: E402 - importable once the repository root is on the path

SMALL = 10_000
SLUG_PREFIX = "bench-import-"
BASELINE_BATCH = 1000  # the bulk_create batch size the COPY path is compared with


# -- child: one import in a fresh process -------------------------------------------------------


def child_import(slug: str, path: str, method: str) -> dict:
    """Import ``path`` into project ``slug``; runs in its own process so its peak RSS is its own."""
    setup_django()
    from annotation.models import Project

    project = Project.objects.get(slug=slug)
    startup_mb = peak_rss_mb()
    started = time.perf_counter()
    if method == "ours":
        from annotation.importing import import_items

        imported = import_items(project=project, path=path).imported
    else:
        imported = orm_bulk_create(project, path)
    seconds = time.perf_counter() - started
    return {"imported": imported, "seconds": seconds, "startup_mb": startup_mb, "peak_mb": peak_rss_mb()}


def orm_bulk_create(project, path: str) -> int:
    """The plain Django import: same parsing and validation, then bulk_create in one transaction."""
    from django.db import transaction

    from annotation.models import Item

    kind = project.task_kind
    batch: list[Item] = []
    count = 0
    with transaction.atomic(), open(path, encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            external_id = data.pop("external_id")
            gold = data.pop("gold", None)
            if kind.check_payload(data):
                raise ValueError(f"invalid synthetic record {external_id}")
            batch.append(Item(project=project, external_id=external_id, payload=data, gold_value=gold))
            if len(batch) >= BASELINE_BATCH:
                count += len(Item.objects.bulk_create(batch))
                batch = []
        count += len(Item.objects.bulk_create(batch))
    return count


# -- parent: files, projects, children, report ---------------------------------------------------


@dataclass(frozen=True)
class Run:
    kind: str
    method: str
    items: int
    seconds: float
    startup_mb: float
    peak_mb: float

    @property
    def rate(self) -> float:
        return self.items / self.seconds


def bench_slug(kind: str) -> str:
    return f"{SLUG_PREFIX}{kind}".replace("_", "-")


def fresh_project(kind: str):
    """An empty project for ``kind``; the previous run's project, if any, goes first."""
    from annotation.models import Project
    from annotation.services import project_create

    Project.objects.filter(slug=bench_slug(kind)).delete()
    return project_create(slug=bench_slug(kind), kind=kind, title=f"Import benchmark ({kind})")


def run_child(kind: str, path: Path, method: str, expected: int) -> Run:
    project = fresh_project(kind)
    command = [sys.executable, __file__, "--child", project.slug, str(path), method]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"{method} import of {path.name} failed (exit {done.returncode})")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["imported"] != expected:
        raise SystemExit(f"{method} import of {path.name} stored {figures['imported']} items, expected {expected}")
    return Run(kind, method, expected, figures["seconds"], figures["startup_mb"], figures["peak_mb"])


def write_files(kind, total: int, folder: Path) -> tuple[Path, Path]:
    from annotation.synthetic import synthetic_records, write_jsonl

    small = write_jsonl(folder / f"{kind.name}-{min(SMALL, total)}.jsonl", synthetic_records(kind, min(SMALL, total)))
    full = write_jsonl(folder / f"{kind.name}-{total}.jsonl", synthetic_records(kind, total))
    return small, full


def bench(total: int, kind_names: list[str] | None) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.kinds import all_kinds
    from annotation.models import Project

    call_command("migrate", verbosity=0)
    kinds = [k for k in all_kinds() if not kind_names or k.name in kind_names]
    small_n = min(SMALL, total)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); {total} items per kind")
    print(f"{'kind':<26}{'method':<13}{'items':>8}{'seconds':>9}{'items/s':>10}{'startup MB':>12}{'peak MB':>9}")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        for kind in kinds:
            small, full = write_files(kind, total, Path(tmp))
            size_mb = full.stat().st_size / 2**20
            kind_runs = [
                run_child(kind.name, small, "ours", small_n),
                run_child(kind.name, full, "ours", total),
                run_child(kind.name, small, "orm", small_n),
            ]
            for run in kind_runs:
                label = "bulk_create" if run.method == "orm" else "import_items"
                print(
                    f"{run.kind:<26}{label:<13}{run.items:>8}{run.seconds:>9.2f}{run.rate:>10.0f}"
                    f"{run.startup_mb:>12.1f}{run.peak_mb:>9.1f}"
                )
            print(f"{'':<26}file: {size_mb:.1f} MB for {total} items")
            runs += kind_runs
            small.unlink()
            full.unlink()
            # Leave no benchmark rows behind in a database people also use.
            Project.objects.filter(slug=bench_slug(kind.name)).delete()

    ours_full = [r for r in runs if r.method == "ours" and r.items == total]
    ours_small = [r for r in runs if r.method == "ours" and r.items == small_n]
    orm_small = [r for r in runs if r.method == "orm"]
    rate = sum(r.items for r in ours_full) / sum(r.seconds for r in ours_full)
    rss_small = max(r.peak_mb for r in ours_small)
    rss_full = max(r.peak_mb for r in ours_full)
    ours_small_rate = sum(r.items for r in ours_small) / sum(r.seconds for r in ours_small)
    orm_rate = sum(r.items for r in orm_small) / sum(r.seconds for r in orm_small)
    print()
    print(f"import_items, {total} items, all kinds: {rate:.0f} items/s")
    print(f"peak RSS: {rss_small:.1f} MB at {small_n} items, {rss_full:.1f} MB at {total} items (max over kinds)")
    print(
        f"baseline ratio at {small_n} items (import_items / Django bulk_create(batch_size={BASELINE_BATCH}), "
        f"same parsing and validation): {ours_small_rate:.0f} / {orm_rate:.0f} items/s = "
        f"{ours_small_rate / orm_rate:.2f}x"
    )
    print(f"RESULT items_per_s={rate:.0f} rss_mb_10k={rss_small:.1f} rss_mb_100k={rss_full:.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items per kind for the large import")
    parser.add_argument("--kinds", default="", help="comma-separated kind names (default: every kind)")
    parser.add_argument("--child", nargs=3, metavar=("SLUG", "PATH", "METHOD"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child_import(*args.child)))
        return
    if args.items < 1:
        parser.error("--items must be at least 1")
    bench(args.items, [name for name in args.kinds.split(",") if name])


if __name__ == "__main__":
    main()
