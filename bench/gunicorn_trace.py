"""gunicorn settings for the benches: production's (config/gunicorn.conf.py) plus tracing hooks.

    gunicorn config.wsgi:application -c bench/gunicorn_trace.py

Production's layout and start-up hooks stay as they are; two environment variables add traces
that bench/annotate_load.py reads:

- ``CONCORD_GC_TRACE=PATH``: every collection's generation, objects collected and pause, to PATH.<pid>.
- ``CONCORD_REQUEST_TRACE=PATH``: per request, its finish time, wall ms, the thread's CPU ms and ms
  waiting for a core, to PATH.<pid>.
"""

from __future__ import annotations

import gc
import os
import runpy
import threading
import time
from pathlib import Path

_production = runpy.run_path(str(Path(__file__).resolve().parent.parent / "config" / "gunicorn.conf.py"))
worker_class = _production["worker_class"]
workers = _production["workers"]
threads = _production["threads"]


def _trace_collections(path: str) -> None:
    """Append every collection's generation, objects collected and pause to ``path``.<pid>."""
    started: dict[str, float] = {}
    sink = open(f"{path}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - open for the process's life

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started["at"] = time.perf_counter()
            return
        pause_ms = (time.perf_counter() - started.get("at", time.perf_counter())) * 1000
        sink.write(f"{time.time():.3f} gen={info['generation']} collected={info['collected']} ms={pause_ms:.2f}\n")

    gc.callbacks.append(record)


def _thread_waited_ns() -> int:
    """Nanoseconds this thread has spent runnable but waiting for a core (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


_request_trace: dict[str, object] = {}


def _open_request_trace(path: str) -> None:
    """Per request, append: finish time, wall ms, this thread's CPU ms, ms waiting for a core.

    What is left of the wall time is waiting on something else: the database, or the GIL while
    another thread of the process runs Python.
    """
    _request_trace["sink"] = open(f"{path}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - for the process's life
    _request_trace["lock"] = threading.Lock()
    _request_trace["started"] = threading.local()


def pre_request(worker, req) -> None:
    if started := _request_trace.get("started"):
        started.at = (time.perf_counter(), time.thread_time(), _thread_waited_ns())


def post_request(worker, req, environ, resp) -> None:
    started = _request_trace.get("started")
    if started is None or not hasattr(started, "at"):
        return
    wall, cpu, waited = started.at
    line = (
        f"{time.time():.3f} {(time.perf_counter() - wall) * 1000:.2f} {(time.thread_time() - cpu) * 1000:.2f} "
        f"{(_thread_waited_ns() - waited) / 1e6:.2f}\n"
    )
    with _request_trace["lock"]:
        _request_trace["sink"].write(line)


def post_worker_init(worker) -> None:
    """Production's start-up (gc.freeze and the rest), then the traces the environment asks for."""
    _production["post_worker_init"](worker)
    if trace := os.environ.get("CONCORD_GC_TRACE"):
        _trace_collections(trace)
    if trace := os.environ.get("CONCORD_REQUEST_TRACE"):
        _open_request_trace(trace)
