"""Generation-run throughput: Stack Exchange threads → IPQA items through the openai backend on real
Celery workers, against the local fake OpenAI-compatible server.

The server (``tests.support.fake_server``, in its own process) answers every request at once with a valid
answer, so the time measured is Concord's own: storing the source records, building prompts, the
openai client, reading and checking answers into item payloads, Celery, the database, and the one
atomic import of the items at the end. The records are the threads of fixtures/sources/ repeated
with new question ids.

    python bench/generate_throughput.py [--records 5000] [--workers 2] [--concurrency 32] [--chunk-size 100]

The last line is ``RESULT records_per_s=<n> overhead_ms=<n>``: records per second from the start
of the run (file read included) to its items created, and the workers' CPU time per record (what a
worker spends for each record an LLM server answers). Target: ≥ 300 records/s with 2 workers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import (  # noqa: E402 - importable once the repository root is on the path
    free_port,
    setup_django,
    stop_processes,
)
from bench.judge_throughput import (  # noqa: E402
    add_run_arguments,
    cpu_seconds,
    start_server,
    start_workers,
    wait_for_run,
)

SLUG = "bench-generate-ipqa"
WARMUP_SLUG = "bench-generate-warmup"
SOURCE = ROOT / "fixtures" / "sources" / "stackexchange_threads.jsonl"
TARGET = 300


def write_source(path: Path, records: int) -> None:
    """``records`` threads: the sample threads repeated, each copy with its own question id."""
    threads = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    with path.open("w", encoding="utf-8") as handle:
        for n in range(records):
            thread = dict(threads[n % len(threads)])
            thread["question_id"] = 10_000_000 + n
            handle.write(json.dumps(thread, ensure_ascii=False) + "\n")


def fresh_project(slug: str):
    from annotation.models import Project
    from annotation.services import project_create

    Project.objects.filter(slug=slug).delete()
    return project_create(slug=slug, kind="ipqa_core_intent", title="Generation benchmark")


def run_to_end(project, source: Path, *, concurrency: int, chunk_size: int, timeout: float):
    from judges.generation.services import generation_run_start
    from judges.tasks import run_dispatch

    started = time.perf_counter()
    run = generation_run_start(
        project=project,
        step="ipqa_intents",
        path=source,
        backend="openai",
        model="bench",
        concurrency=concurrency,
        chunk_size=chunk_size,
    )
    run_dispatch(run_type="generation", run_id=run.pk)
    return wait_for_run(run, started=started, timeout=timeout)


def bench(records: int, workers: int, concurrency: int, chunk_size: int) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Item, Project

    call_command("migrate", verbosity=0)
    broker = os.environ.get("CELERY_BROKER_URL", "filesystem://").split("://")[0]
    print(f"database: {connection.vendor}; broker: {broker}; {records} threads, {workers} worker processes")
    folder = Path(tempfile.mkdtemp(prefix="concord-generate-bench-"))
    log = folder / "workers.log"
    print(f"worker logs: {log}")
    source, warmup = folder / "threads.jsonl", folder / "warmup.jsonl"
    write_source(source, records)
    write_source(warmup, 50 * workers)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    server = start_server(port)
    processes: list[subprocess.Popen] = []
    try:
        processes = start_workers(workers, log, base_url)
        # A small run first: the workers are up, imported and connected before the clock starts.
        run_to_end(fresh_project(WARMUP_SLUG), warmup, concurrency=concurrency, chunk_size=25, timeout=120)
        project = fresh_project(SLUG)
        before = {p.pid: cpu_seconds(p.pid) for p in [*processes, server]}
        run, seconds = run_to_end(project, source, concurrency=concurrency, chunk_size=chunk_size, timeout=600)
        after = {p.pid: cpu_seconds(p.pid) for p in [*processes, server]}
        items = Item.objects.filter(project=project).count()
        if (run.status, run.ok_count, run.items_created, items) != ("completed", records, records, records):
            raise SystemExit(
                f"run ended {run.status} with {run.ok_count} ok, {run.failed_count} failed and {items} items "
                f"of {records}: {run.last_error}"
            )
        worker_cpu = sum(after[p.pid] - before[p.pid] for p in processes)
        server_cpu = after[server.pid] - before[server.pid]
    finally:
        stop_processes([*processes, server])
        Project.objects.filter(slug__in=[SLUG, WARMUP_SLUG]).delete()

    rate = records / seconds
    overhead_ms = 1000 * worker_cpu / records
    print(f"{'run (records read → items created)':<44}{seconds:>8.2f} s{rate:>10.0f} records/s")
    print(f"{'workers CPU per record (the app overhead)':<44}{overhead_ms:>8.2f} ms")
    print(f"{'local LLM server CPU per record':<44}{1000 * server_cpu / records:>8.2f} ms")
    print(f"{'target':<44}{TARGET:>8} records/s with 2 workers: {'met' if rate >= TARGET else 'NOT met'}")
    print(f"{'CPU cores on this machine':<44}{os.cpu_count():>8}")
    print(f"RESULT records_per_s={rate:.0f} overhead_ms={overhead_ms:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, unit="records", default=5_000)
    args = parser.parse_args(argv)
    bench(args.records, args.workers, args.concurrency, args.chunk_size)


if __name__ == "__main__":
    main()
