"""LLM pre-annotation throughput: CoPA items through the openai backend on real Celery workers.

A local OpenAI-compatible server (``tests.support.fake_server``, in its own process) answers every request
at once with a valid answer, so the time measured is Concord's own: building prompts, the openai
client, reading and checking answers, Celery and the database. Worker processes (``celery worker
--pool=solo``, one per ``--workers``) run the chunks as in production.

    python bench/judge_throughput.py [--items 10000] [--workers 2] [--concurrency 32] [--chunk-size 100]

It prints the run's items/s, the workers' CPU time per item (the app's overhead per item: what a
worker spends for each item an LLM server answers), the same figure for the openai client alone as
the backend calls it (the floor no app on this client can beat) and, as a baseline, through the
client's typed ``chat.completions.create``, and the fake server's CPU per item. The last line is
``RESULT items_per_s=<n> overhead_ms=<n>``. The database and broker are those of the environment
(DATABASE_URL, CELERY_BROKER_URL), as for the app.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
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

SLUG = "bench-judge-copa"
WARMUP_SLUG = "bench-judge-warmup"
CLIENT_FLOOR_REQUESTS = 2000
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_server(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_server", "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the local LLM server did not start")


def start_workers(count: int, log: Path, base_url: str) -> list[subprocess.Popen]:
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=warning"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle"]
    # The local server is the workers' default endpoint: judges name endpoints, never URLs.
    env = {**os.environ, "CELERY_TASK_ALWAYS_EAGER": "false", "OPENAI_BASE_URL": base_url}
    with log.open("ab") as output:
        return [
            subprocess.Popen(
                [*command, "-n", f"bench{n}@%h"], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
            )
            for n in range(count)
        ]


def fresh_project(slug: str, items: int):
    from annotation.kinds import get_kind
    from annotation.models import Item, Project
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records

    Project.objects.filter(slug=slug).delete()
    project = project_create(slug=slug, kind="copa_likert", title="Judge benchmark")
    records = synthetic_records(get_kind("copa_likert"), items)
    Item.objects.bulk_create(
        (Item(project=project, external_id=r.pop("external_id"), payload=r) for r in records), batch_size=2000
    )
    return project


def run_to_end(project, *, concurrency: int, chunk_size: int, timeout: float) -> tuple[object, float]:
    from judges.services import judge_get_or_create, judge_run_start
    from judges.tasks import run_dispatch

    judge, _ = judge_get_or_create(project=project, backend="openai", name="bench", model="bench", seed=42)
    started = time.perf_counter()
    run = judge_run_start(judge=judge, project=project, concurrency=concurrency, chunk_size=chunk_size)
    run_dispatch(run_type="judge", run_id=run.pk)
    return wait_for_run(run, started=started, timeout=timeout)


def wait_for_run(run, *, started: float, timeout: float) -> tuple[object, float]:
    """Poll a judge or generation run until it ends: the run as it ended, and seconds since ``started``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = type(run).objects.get(pk=run.pk)
        if not run.is_active:
            return run, time.perf_counter() - started
        time.sleep(0.02)
    raise SystemExit(f"run {run.pk} did not finish within {timeout:.0f} s ({run.done_count}/{run.total} done)")


def positive_int(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is below 1")
    return number


def add_run_arguments(parser: argparse.ArgumentParser, *, unit: str, default: int) -> None:
    """The options both run benches take: how many ``unit``s, worker processes, requests in flight, chunk size."""
    parser.add_argument(f"--{unit}", type=positive_int, default=default)
    parser.add_argument("--workers", type=positive_int, default=2, help="Celery worker processes")
    parser.add_argument("--concurrency", type=positive_int, default=32, help="requests in flight per worker")
    parser.add_argument("--chunk-size", type=positive_int, default=100, help=f"{unit} per Celery task")


def client_floor(base_url: str, *, concurrency: int, typed: bool = False) -> tuple[float, float]:
    """CPU ms per request and requests/s of the bare openai client against the same server: called as
    the backend calls it (plain ``post``, body and reply handled with orjson), or, with ``typed``,
    through the typed ``chat.completions.create`` the backend used to call."""
    import openai
    import orjson

    from annotation.kinds import get_kind
    from judges.backends.openai_compat import read_completion
    from judges.prompting import get_prompt

    prompt = get_prompt("copa_likert_evaluation")
    request = prompt.build(item_id=0, payload=get_kind("copa_likert").example_payload())
    arguments = {
        "model": "bench",
        "messages": request.messages,
        "temperature": 0.0,
        "max_completion_tokens": 2048,
        "seed": 42,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": prompt.name, "schema": request.schema, "strict": True},
        },
    }

    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=30)
        slots = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with slots:
                if typed:
                    response = await client.chat.completions.create(**arguments)
                    assert response.choices[0].message.content
                    return
                body = orjson.dumps(arguments)
                assert read_completion(await client.post("/chat/completions", cast_to=bytes, content=body)).text

        await asyncio.gather(*(one() for _ in range(CLIENT_FLOOR_REQUESTS)))
        await client.close()

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(main())
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return 1000 * cpu / CLIENT_FLOOR_REQUESTS, CLIENT_FLOOR_REQUESTS / wall


def bench(items: int, workers: int, concurrency: int, chunk_size: int) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project
    from judges.models import Suggestion

    call_command("migrate", verbosity=0)
    broker = os.environ.get("CELERY_BROKER_URL", "filesystem://").split("://")[0]
    print(f"database: {connection.vendor}; broker: {broker}; {items} CoPA items, {workers} worker processes")
    log = Path(tempfile.gettempdir()) / f"concord-judge-bench-workers-{os.getpid()}.log"
    print(f"worker logs: {log}")
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    server = start_server(port)
    processes: list[subprocess.Popen] = []
    try:
        processes = start_workers(workers, log, base_url)
        # A small run first: the workers are up, imported and connected before the clock starts.
        run_to_end(fresh_project(WARMUP_SLUG, 50 * workers), concurrency=concurrency, chunk_size=25, timeout=120)
        project = fresh_project(SLUG, items)
        before = {p.pid: cpu_seconds(p.pid) for p in [*processes, server]}
        run, seconds = run_to_end(project, concurrency=concurrency, chunk_size=chunk_size, timeout=600)
        after = {p.pid: cpu_seconds(p.pid) for p in [*processes, server]}
        stored = Suggestion.objects.filter(run=run, status="ok").count()
        if (run.status, run.ok_count, stored) != ("completed", items, items):
            raise SystemExit(f"run ended {run.status} with {run.ok_count} ok and {stored} stored of {items}")
        worker_cpu = sum(after[p.pid] - before[p.pid] for p in processes)
        server_cpu = after[server.pid] - before[server.pid]
        floor_ms, floor_rate = client_floor(base_url, concurrency=concurrency)
        typed_ms, typed_rate = client_floor(base_url, concurrency=concurrency, typed=True)
    finally:
        stop_processes([*processes, server])
        Project.objects.filter(slug__in=[SLUG, WARMUP_SLUG]).delete()

    rate = items / seconds
    overhead_ms = 1000 * worker_cpu / items
    print(f"{'run':<44}{seconds:>8.2f} s{rate:>10.0f} items/s")
    print(f"{'workers CPU per item (the app overhead)':<44}{overhead_ms:>8.2f} ms")
    print(f"{'  of which the openai client alone':<44}{floor_ms:>8.2f} ms  ({floor_rate:.0f} requests/s, one process)")
    print(
        f"{'  baseline: typed chat.completions.create':<44}{typed_ms:>8.2f} ms  ({typed_rate:.0f} requests/s, "
        f"{typed_ms / floor_ms:.1f}x the CPU of the plain post)"
    )
    print(f"{'local LLM server CPU per item':<44}{1000 * server_cpu / items:>8.2f} ms")
    print(f"{'CPU cores on this machine':<44}{os.cpu_count():>8}")
    print(f"RESULT items_per_s={rate:.0f} overhead_ms={overhead_ms:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, unit="items", default=10_000)
    args = parser.parse_args(argv)
    bench(args.items, args.workers, args.concurrency, args.chunk_size)


if __name__ == "__main__":
    main()
