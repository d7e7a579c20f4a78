"""Run import benchmark: throughput and peak memory of ``import_run`` (judges.run_files) for every kind.

For each kind it imports ``--lines`` synthetic items into a project, writes a run file of one line
per item (nine in ten answered with the kind's example value, raw output, timings, token counts and
a score, one in ten failed with its raw output; multiple-choice answers carry an ``option_order``),
then imports its first 10,000 lines and all of it as two runs, each in a fresh child process, so
the peak RSS of one import says whether memory grows with the file.

    python bench/import_run.py [--lines 100000] [--kinds copa_likert,intent_mcq]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The last line is
``RESULT lines_per_s=<n> rss_mb_10k=<n> rss_mb_100k=<n> cpu_us_per_line=<n> [db_cpu_us_per_line=<n>
copy_floor_lines_per_s=<n> of_floor=<ratio>]``:
lines/s is total lines over total seconds of the largest imports across kinds; each RSS figure is the
maximum over kinds; the CPU figures (the importing process, and the PostgreSQL server process where
it runs on this host) hold on a loaded host, where seconds do not. The floor (PostgreSQL) is the
same rows COPYed back into the table from memory in one statement, with its indexes and key checks:
the most any import of them can reach on this host, and the import's rate as a share of it.
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
from bench.common import (  # noqa: E402 - importable once the repository root is on the path
    copied_back_seconds,
    database_backend_cpu_s,
    peak_rss_mb,
    setup_django,
)

SMALL = 10_000
SLUG_PREFIX = "bench-run-import-"
FAILED_EVERY = 10


def child_import(slug: str, path: str) -> dict:
    """Import the run file ``path`` into project ``slug``; in its own process, so its peak RSS is its own."""
    setup_django()
    from annotation.models import Project
    from judges.run_files import judge_run_import

    project = Project.objects.get(slug=slug)
    startup_mb = peak_rss_mb()
    server_before = database_backend_cpu_s()
    started, cpu_started = time.perf_counter(), time.process_time()
    # A model name per import: a file imported twice (both sizes are one file when --lines is at
    # most 10,000) would otherwise be refused as imported before, and as the same outputs as a run.
    model = f"bench/model-7b-{os.getpid()}"
    result = judge_run_import(
        project=project, path=path, model=model, prompt="bench_prompt.v1", allow_same_outputs=True
    )
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    server_after = database_backend_cpu_s()
    peak_mb = peak_rss_mb()  # before the floor, which holds every row in memory
    return {
        "floor_seconds": copy_floor_seconds(result.run),
        "ok": result.ok,
        "failed": result.failed,
        "seconds": seconds,
        "cpu_s": cpu,
        "server_cpu_s": None if server_before is None or server_after is None else server_after - server_before,
        "startup_mb": startup_mb,
        "peak_mb": peak_mb,
    }


def copy_floor_seconds(run) -> float | None:
    """Seconds to COPY the rows an import wrote back into the suggestion table, from memory, as a
    run of a new judge: the same table, indexes and key checks, without reading or checking a
    line. No import of these lines can be faster; PostgreSQL only (rolled back)."""
    from django.db import connection, transaction

    from judges.models import Judge, JudgeRun, Suggestion
    from judges.run_files.services import SUGGESTION_COLUMNS

    if connection.vendor != "postgresql":
        return None
    meta = Suggestion._meta
    columns = [meta.get_field(name).column for name in SUGGESTION_COLUMNS]
    with transaction.atomic():
        judge = Judge.objects.get(pk=run.judge_id)
        judge.pk, judge.fingerprint = None, f"{judge.fingerprint[:50]}-copy-floor"
        judge.save()
        twin = JudgeRun.objects.create(judge=judge, project_id=run.project_id, status=run.status)
        shared = {"judge_id": str(judge.pk), "run_id": str(twin.pk)}
        select = ", ".join(shared.get(column, column) for column in columns)
        seconds = copied_back_seconds(meta.db_table, columns, select, "run_id = %s", [run.pk])
        transaction.set_rollback(True)
    return seconds


@dataclass(frozen=True)
class Run:
    kind: str
    lines: int
    seconds: float
    startup_mb: float
    peak_mb: float
    cpu_s: float
    server_cpu_s: float | None
    floor_seconds: float | None

    @property
    def rate(self) -> float:
        return self.lines / self.seconds


def bench_slug(kind: str) -> str:
    return f"{SLUG_PREFIX}{kind}".replace("_", "-")


def run_lines(kind, count: int):
    """The run file's lines for the synthetic items ``annotation.synthetic`` makes."""
    from judges.kinds import kind_module

    value = kind.example_value()
    orders = kind_module(kind.name, "option_order")
    extra = {}
    if orders is not None:
        order = list(reversed(range(len(kind.example_payload()["options"]))))
        extra = {"option_order": order}
        value = orders.to_shown_order(value, order)
    raw = json.dumps(value)
    for number in range(count):
        external_id = f"{kind.name}-{number:07d}"
        if number % FAILED_EVERY == FAILED_EVERY - 1:
            yield {"external_id": external_id, "error": "the output is not JSON", "raw_output": raw[:-1]}
            continue
        yield {"external_id": external_id, "value": value, "raw_output": raw, "latency_ms": 800.0 + number % 97,
               "prompt_tokens": 1400 + number % 50, "completion_tokens": 90, "score": 0.5, **extra}  # fmt: skip


def prepare(kind, total: int, folder: Path) -> tuple[Path, Path]:
    """A fresh project with ``total`` items, and run files of the first 10,000 lines and of all."""
    from annotation.importing import import_items
    from annotation.models import Project
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records, write_jsonl

    Project.objects.filter(slug=bench_slug(kind.name)).delete()
    project = project_create(slug=bench_slug(kind.name), kind=kind.name, title=f"Run import benchmark ({kind.name})")
    import_items(project=project, path=write_jsonl(folder / f"{kind.name}-items.jsonl", synthetic_records(kind, total)))
    small = write_jsonl(folder / f"{kind.name}-run-{min(SMALL, total)}.jsonl", run_lines(kind, min(SMALL, total)))
    full = write_jsonl(folder / f"{kind.name}-run-{total}.jsonl", run_lines(kind, total))
    return small, full


def run_child(kind: str, path: Path, expected: int) -> Run:
    command = [sys.executable, __file__, "--child", bench_slug(kind), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"import of {path.name} failed (exit {done.returncode})")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["ok"] + figures["failed"] != expected:
        raise SystemExit(f"import of {path.name} stored {figures['ok'] + figures['failed']} lines, expected {expected}")
    return Run(
        kind,
        expected,
        figures["seconds"],
        figures["startup_mb"],
        figures["peak_mb"],
        figures["cpu_s"],
        figures["server_cpu_s"],
        figures["floor_seconds"],
    )


def bench(total: int, kind_names: list[str] | None) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.kinds import all_kinds
    from annotation.models import Project

    call_command("migrate", verbosity=0)
    kinds = [k for k in all_kinds() if not kind_names or k.name in kind_names]
    small_n = min(SMALL, total)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); {total} lines per kind")
    print(
        f"{'kind':<26}{'lines':>8}{'seconds':>9}{'lines/s':>10}{'startup MB':>12}{'peak MB':>9}"
        f"{'cpu us/line':>13}{'db cpu us/line':>16}"
    )
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        for kind in kinds:
            small, full = prepare(kind, total, Path(tmp))
            size_mb = full.stat().st_size / 2**20
            kind_runs = [run_child(kind.name, small, small_n), run_child(kind.name, full, total)]
            for run in kind_runs:
                server = "-" if run.server_cpu_s is None else f"{run.server_cpu_s / run.lines * 1e6:.0f}"
                print(
                    f"{run.kind:<26}{run.lines:>8}{run.seconds:>9.2f}{run.rate:>10.0f}"
                    f"{run.startup_mb:>12.1f}{run.peak_mb:>9.1f}{run.cpu_s / run.lines * 1e6:>13.0f}{server:>16}"
                )
            print(f"{'':<26}run file: {size_mb:.1f} MB for {total} lines")
            runs += kind_runs
            # Leave no benchmark rows behind in a database people also use.
            Project.objects.filter(slug=bench_slug(kind.name)).delete()

    full_runs = [r for r in runs if r.lines == total]
    small_runs = [r for r in runs if r.lines == small_n]
    rate = sum(r.lines for r in full_runs) / sum(r.seconds for r in full_runs)
    rss_small = max(r.peak_mb for r in small_runs)
    rss_full = max(r.peak_mb for r in full_runs)
    lines = sum(r.lines for r in full_runs)
    cpu_us = sum(r.cpu_s for r in full_runs) / lines * 1e6
    measured = [r.server_cpu_s for r in full_runs if r.server_cpu_s is not None]
    server_us = sum(measured) / lines * 1e6 if len(measured) == len(full_runs) else None
    floors = [r.floor_seconds for r in full_runs if r.floor_seconds is not None]
    floor_rate = lines / sum(floors) if len(floors) == len(full_runs) else None
    print()
    print(f"import_run, {total} lines, all kinds: {rate:.0f} lines/s")
    print(
        f"CPU per line: {cpu_us:.0f} us in the importing process"
        + ("" if server_us is None else f", {server_us:.0f} us in the database server process")
        + f"; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"peak RSS: {rss_small:.1f} MB at {small_n} lines, {rss_full:.1f} MB at {total} lines (max over kinds)")
    if floor_rate is not None:
        print(
            f"floor: the same rows COPYed back from memory (no reading, no checks): {floor_rate:.0f} lines/s; "
            f"the import runs at {rate / floor_rate:.2f}x of it"
        )
    server = "" if server_us is None else f" db_cpu_us_per_line={server_us:.0f}"
    floor = "" if floor_rate is None else f" copy_floor_lines_per_s={floor_rate:.0f} of_floor={rate / floor_rate:.2f}"
    print(
        f"RESULT lines_per_s={rate:.0f} rss_mb_10k={rss_small:.1f} rss_mb_100k={rss_full:.1f} "
        f"cpu_us_per_line={cpu_us:.0f}{server}{floor}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines (and items) per kind for the large import")
    parser.add_argument("--kinds", default="", help="comma-separated kind names (default: every kind)")
    parser.add_argument("--child", nargs=2, metavar=("SLUG", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child_import(*args.child)))
        return
    if args.lines < 1:
        parser.error("--lines must be at least 1")
    bench(args.lines, [name for name in args.kinds.split(",") if name])


if __name__ == "__main__":
    main()
